"""Joint size × tenure tables consistent cell by cell: property-tested over random hierarchies."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cocoviz
from cocoviz.datasets.tenure import tenure_table
from cocoviz.errors import ParameterError
from cocoviz.joint import class_counts, consistent_owners, estimate_joint, measure_tenure, node_tables
from tests.support.engine import random_trees


def _joint(rt, eps: float, seed: int, prior, **kw):
    tree = rt.tree
    n = tree.depth + 1
    release = cocoviz.estimate(tree, epsilons=[eps] * n, methods=["Hc"] * n, max_size=12, seed=seed)
    table = tenure_table(tree, seed=seed)
    noisy = measure_tenure(release.plan.shape, table, [eps] * n, seed=seed)
    return release, noisy, table, estimate_joint(release, noisy, prior, **kw)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(random_trees(max_depth=3, max_size=12), st.sampled_from([0.1, 1.0, 10.0]), st.integers(0, 9))
def test_children_cells_add_up_whole_non_negative_with_the_margins_kept(rt, eps, seed):
    release, noisy, _, joint = _joint(rt, eps, seed, "independent")
    shape = release.plan.shape
    owners = consistent_owners(noisy)
    assert joint.cells == "sum of children"
    for level in range(shape.depth + 1):
        runs = release.runs(level)
        for k, path in enumerate(shape.paths[level]):
            t = joint.table(path)
            assert t.dtype == np.int64 and (t >= 0).all()
            assert np.array_equal(t.sum(axis=1), class_counts(*runs.node(k)))  # the released size margin
            assert int(t[:, 0].sum()) == owners[level][k]  # the consistent tenure margin
            kids = shape.children(path)
            if kids:
                assert np.array_equal(sum(joint.table(c) for c in kids), t)  # cell by cell


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(random_trees(max_depth=2, max_size=12), st.integers(0, 9))
def test_a_truth_prior_at_huge_epsilon_gives_the_truth_at_every_level(rt, seed):
    tree = rt.tree
    table = tenure_table(tree, seed=seed)
    levels = list(rt.levels)
    truth = {p: t.astype(float) for p, t in node_tables(table, levels).items()}
    release, noisy, _, joint = _joint(rt, 1e6, seed, truth)
    for path, t in node_tables(table, levels).items():
        assert np.array_equal(joint.table(path), t)


def test_per_region_tables_do_not_add_up_and_sum_of_children_needs_top_down():
    rng = np.random.default_rng(3)
    rows = [
        (state, f"{state}{c}", size, int(rng.integers(1, 30)))
        for state in "abc"
        for c in range(3)
        for size in rng.choice(np.arange(1, 10), 5, replace=False)
    ]
    frame = pd.DataFrame(rows, columns=["state", "county", "size", "count"])
    counts = cocoviz.Hierarchy.from_counts(frame, size="size", count="count", levels=["state", "county"])
    n = counts.depth + 1
    release = cocoviz.estimate(counts, epsilons=[0.5] * n, methods=["Hc"] * n, max_size=20, seed=1)
    table = tenure_table(counts, seed=1)
    noisy = measure_tenure(release.plan.shape, table, [0.5] * n, seed=1)
    prior = {p: np.outer(np.arange(1, 8), [1.0, 2.0]) for lv in range(n) for p in release.plan.shape.paths[lv]}
    loose = estimate_joint(release, noisy, prior, cells="per region")
    tight = estimate_joint(release, noisy, prior)
    shape = release.plan.shape
    parents = [p for lv in range(n - 1) for p in shape.paths[lv]]
    assert all(np.array_equal(sum(tight.table(c) for c in shape.children(p)), tight.table(p)) for p in parents)
    assert any(not np.array_equal(sum(loose.table(c) for c in shape.children(p)), loose.table(p)) for p in parents)
    assert estimate_joint(release, noisy, "independent", consistency="none").cells == "per region"
    with pytest.raises(ParameterError, match="needs the tenure margin"):
        estimate_joint(release, noisy, "independent", consistency="none", cells="sum of children")
    with pytest.raises(ParameterError, match="cells must be"):
        estimate_joint(release, noisy, "independent", cells="bottom-up")
