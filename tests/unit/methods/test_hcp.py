"""Method Hcp (Hc at a public grid, buckets shared by a public prior) and the plan's priors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import Hierarchy, estimate
from cocoviz.errors import ParameterError, PrivacyError
from cocoviz.experiments.hcp_coverage import coverage
from cocoviz.measure.measurements import measure
from cocoviz.methods.hcp import bucket_variances, fit_hcp, hcp_buckets, hcp_grid, query_hcp
from cocoviz.methods.hcp_prior import Prior
from cocoviz.methods.isotonic import isotonic
from cocoviz.plan import METHODS, Plan
from cocoviz.release.post_process import post_process
from tests.support.engine import random_trees


def small_tree(seed: int = 0) -> Hierarchy:
    rng = np.random.default_rng(seed)
    rows = []
    for state in ("A", "B"):
        for county in range(3):
            sizes = np.concatenate([rng.geometric(0.4, 300), rng.integers(9, 60, 8)])
            s, n = np.unique(sizes, return_counts=True)
            rows.append(pd.DataFrame({"state": state, "county": f"{state}{county}", "size": s, "count": n}))
    return Hierarchy.from_counts(pd.concat(rows), size="size", count="count", levels=["state", "county"])


# ------------------------------------------------------------------ grid and sensitivity
def test_grid_comes_from_k_alone_and_has_tens_of_cells():
    grid = hcp_grid(100_000)
    assert len(grid) == 63 and grid[:9].tolist() == list(range(9)) and grid[-1] < 100_000
    assert np.all(np.diff(grid) > 0)
    assert hcp_grid(1).tolist() == [0] and METHODS["Hcp"].cells(np.array([5]), 100_000).tolist() == [63]
    first, last = hcp_buckets(100_000)
    assert first[0] == 0 and last[-1] == 100_000 and np.all(first[1:] == last[:-1] + 1)


@pytest.mark.parametrize("max_size", [1, 3, 9, 14, 40])
def test_sensitivity_is_one_over_every_one_person_change(max_size):
    """Brute force: every node with up to 4 groups of sizes 0..K+2, every person added or removed."""
    rng = np.random.default_rng(max_size)
    for _ in range(150):
        groups = rng.integers(0, max_size + 3, rng.integers(1, 5))
        for g in range(len(groups)):
            for step in (-1, 1):
                if groups[g] + step < 0:
                    continue
                other = groups.copy()
                other[g] += step
                a = query_hcp(*np.unique(groups, return_counts=True), max_size)
                b = query_hcp(*np.unique(other, return_counts=True), max_size)
                assert np.abs(a - b).sum() <= METHODS["Hcp"].sensitivity == 1


# ------------------------------------------------------------------ the fit
def test_tao_share_buckets_example_holds_through_the_fit():
    prior = (np.arange(8), np.array([0, 0.4, 0.2, 0.2, 0.1, 0.1, 0, 0]))
    # buckets {0}, {1}, {2, 3}, {4..7}; Hc at 0, 1, 3 = 1, 4, 8 gives bucket counts [1, 3, 4, 2], G = 10
    est = fit_hcp(np.array([1, 4, 8]), groups=10, epsilon=1e6, max_size=7, prior=prior, grid=np.array([0, 1, 3]))
    h = np.zeros(8, np.int64)
    h[est.sizes] = est.counts
    assert h.tolist() == [1, 3, 2, 2, 1, 1, 0, 0]


def test_unit_buckets_get_the_hc_variance_rule():
    v = bucket_variances(np.array([2, 4, 5]), np.ones(3), 2, 0.5)
    np.testing.assert_allclose(v[1], 4 / (0.25 * 4))  # METHOD.md's Hc rule, 4 / (ε² Ĥ[s])


@pytest.mark.parametrize("prior", ["uniform", "parent", "array", "table"])
def test_release_keeps_g_and_bucket_totals_at_the_measured_level(prior):
    tree = small_tree()
    value = {"array": np.r_[0.0, np.ones(30)], "table": pd.DataFrame({"size": [1, 2, 50], "count": [5, 3, 1]})}
    plan = Plan.build(
        tree,
        epsilons=[1.0] * 3,
        methods=["Hc", "Hcp", "Hcp"],
        max_size=64,
        consistency="none",
        prior=value.get(prior, prior),
    )
    measured = measure(plan, tree, seed=3)
    release = post_process(plan, measured)
    first, last = hcp_buckets(64)
    for level in (1, 2):
        for k, node in enumerate(tree.nodes(level)):
            groups = tree.groups(node)
            hc = np.append(np.rint(isotonic(measured.levels[level].node(k), p=1, lower=0, upper=groups)), groups)
            h = release.histogram(node)
            h = np.pad(h, (0, 65 - len(h)))
            totals = np.add.reduceat(h, first)
            assert h.dtype.kind == "i" and (h >= 0).all() and h.sum() == groups
            np.testing.assert_array_equal(totals, np.diff(hc, prepend=0))


@settings(max_examples=40, deadline=None)
@given(
    random_trees(),
    st.sampled_from(["uniform", "parent", "array"]),
    st.sampled_from(["top-down", "none"]),
    st.integers(0, 2**32 - 1),
)
def test_hcp_releases_are_integral_keep_g_and_are_consistent(rt, prior, consistency, seed):
    tree = rt.tree
    n = tree.depth + 1
    value = np.ones(9) if prior == "array" else prior
    release = estimate(
        tree, epsilons=[0.5] * n, methods=["Hcp"] * n, max_size=8, consistency=consistency, prior=value, seed=seed
    )
    for node in rt.all_nodes():
        h = release.histogram(node)
        assert h.dtype.kind == "i" and (h >= 0).all() and h.sum() == tree.groups(node)
    if consistency == "top-down":
        assert release.is_consistent()
    assert release.budget.total == Plan.build(tree, epsilons=[0.5] * n, methods=["Hcp"] * n, max_size=8).cost().total


# ------------------------------------------------------------------ priors in the plan
def test_budget_is_the_plan_cost_with_every_prior():
    tree = small_tree()
    base = Plan.build(tree, epsilons=[1.0, 0.5, 0.5], methods=["Hc", "Hcp", "Hcp"], max_size=64).cost()
    priors = [
        "uniform",
        "parent",
        np.ones(65),
        pd.DataFrame({"size": [1, 2], "count": [1, 1]}),
        {("A",): np.ones(3), ("B", "B1"): np.ones(2)},
    ]
    for prior in priors:
        plan = Plan.build(tree, epsilons=[1.0, 0.5, 0.5], methods=["Hc", "Hcp", "Hcp"], max_size=64, prior=prior)
        release = post_process(plan, measure(plan, tree, seed=0))
        assert plan.cost() == base and release.budget.total == base.total == 2.0


def test_prior_is_part_of_the_public_dict_and_round_trips():
    tree = small_tree()
    for prior in [
        "uniform",
        "parent",
        np.arange(5.0),
        pd.DataFrame({"size": [1, 70], "count": [2, 1]}),
        {(): np.ones(3), ("A", "A0"): pd.DataFrame({"size": [3], "count": [1]})},
    ]:
        plan = Plan.build(tree, epsilons=[1.0] * 3, methods=["Hcp"] * 3, max_size=64, prior=prior)
        data = json.loads(json.dumps(plan.to_dict()))
        assert Plan.from_dict(data) == plan and "prior" in data
    old = plan.to_dict()
    del old["prior"]  # a plan saved before priors: uniform
    assert Plan.from_dict(old).prior == Prior()


def test_prior_validation():
    tree = small_tree()

    def build(prior, **kw):
        opts = {"epsilons": [1.0] * 3, "methods": ["Hcp"] * 3, "max_size": 64, **kw}
        return Plan.build(tree, prior=prior, **opts)

    with pytest.raises(PrivacyError, match="Hierarchy"):
        build(tree)
    with pytest.raises(PrivacyError, match="'size' and 'count'"):
        build(pd.DataFrame({"state": ["A"], "size": [1], "count": [3]}))
    with pytest.raises(PrivacyError):
        build(object())
    with pytest.raises(ParameterError, match="non-negative"):
        build(np.array([1.0, -1.0]))
    with pytest.raises(ParameterError, match="covers sizes 0..K"):
        build(np.ones(66))
    with pytest.raises(ParameterError, match="one of"):
        build("earlier")
    with pytest.raises(ParameterError, match="not in this hierarchy"):
        build({("Z",): np.ones(2)})
    with pytest.raises(ParameterError, match="bottom-up"):
        build("parent", consistency="bottom-up")
    with pytest.raises(ParameterError, match="Hcp levels only"):
        build("parent", methods=["Hc"] * 3)


def test_level_cache_keys_the_prior():
    tree = small_tree()
    opts = {"epsilons": [1.0] * 3, "methods": ["Hc", "Hcp", "Hcp"], "max_size": 64, "seed": 5}
    cache: dict = {}
    for prior in ["uniform", "parent", np.ones(65)]:
        for merge in ("weighted", "average"):
            cached = estimate(tree, prior=prior, merge=merge, level_cache=cache, **opts)
            fresh = estimate(tree, prior=prior, merge=merge, **opts)
            pd.testing.assert_frame_equal(cached.to_frame(), fresh.to_frame())


def test_parent_prior_uses_the_released_parent():
    """With a noiseless parent (ε huge) the parent prior puts a child's groups at the parent's sizes."""
    tree = small_tree()
    release = estimate(
        tree,
        epsilons=[1e5, 1e5, 1e5],
        methods=["Hc", "Hcp", "Hcp"],
        max_size=64,
        prior="parent",
        consistency="none",
        seed=0,
    )
    for node in tree.nodes(1):
        h = release.histogram(node)
        parent = release.histogram(())
        assert set(np.flatnonzero(h)) <= set(np.flatnonzero(parent)) | set(range(9))


def test_variance_coverage_is_reported_and_sane():
    tree = small_tree()
    plan = Plan.build(tree, epsilons=[1.0] * 3, methods=["Hc", "Hcp", "Hcp"], max_size=64, prior="parent")
    with_rule = coverage(tree, plan, 0)
    without = coverage(tree, plan, 0, parent_correction=False)
    assert with_rule["groups"] == without["groups"] > 0
    assert 0 < without["covered"] <= with_rule["covered"] <= 1
    assert with_rule["z2"] <= without["z2"]  # the rule only widens the child's variances
