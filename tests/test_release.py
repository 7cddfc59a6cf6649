"""The published object: consistency check, private-only table, save / load round trip."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_support import random_trees, release_options
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cocoviz import Budget, InputError, Plan, Release, estimate, load_release
from cocoviz.hierarchy import LevelRuns


def level(*nodes):
    """LevelRuns from one ``{size: count}`` dict per node."""
    ptr = np.cumsum([0] + [len(n) for n in nodes])
    return LevelRuns(
        ptr,
        np.array([s for n in nodes for s in sorted(n)], np.int64),
        np.array([n[s] for n in nodes for s in sorted(n)], np.int64),
    )


@pytest.mark.parametrize(
    "root, a, b, consistent",
    [
        ({1: 2, 2: 2}, {1: 1, 2: 1}, {1: 1, 2: 1}, True),
        ({1: 3, 2: 1}, {1: 1, 2: 1}, {1: 1, 2: 1}, False),  # same sizes, counts differ from the children's sum
        ({1: 2, 3: 2}, {1: 1, 2: 1}, {1: 1, 2: 1}, False),  # sizes differ
        ({1: 2, 2: 2}, {1: 1, 2: 1}, {1: 3, 2: -1}, False),  # a negative count (G still 2)
        ({1: 3, 2: 2}, {1: 2, 2: 1}, {1: 1, 2: 1}, False),  # sums agree but G is not kept
    ],
)
def test_is_consistent_on_crafted_releases(toy_public_tree, root, a, b, consistent):
    plan = Plan.build(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=10)
    release = Release(plan, [level(root), level(a, b)], Budget())
    assert release.is_consistent() == consistent


def test_a_release_holds_no_private_data(toy_public_tree):
    release = estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0)
    assert not hasattr(release, "tree")
    assert not any(type(v).__name__ == "Hierarchy" for v in vars(release).values())
    frame = release.to_frame()
    assert list(frame.columns) == ["level", "node", "size", "count"]
    assert not any("true" in c for c in frame.columns)
    assert frame.groupby("level")["count"].sum().tolist() == [4, 4]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_save_and_load_round_trip_exactly(tmp_path, data):
    rt = data.draw(random_trees())
    release = estimate(rt.tree, **data.draw(release_options(rt.tree.depth + 1, rt.tree.max_size)))
    path = tmp_path / "release.parquet"
    release.save(path)
    again = load_release(path)
    pd.testing.assert_frame_equal(again.to_frame(), release.to_frame())
    for lvl in range(rt.tree.depth + 1):
        for name in ("ptr", "sizes", "counts"):
            np.testing.assert_array_equal(getattr(again.runs(lvl), name), getattr(release.runs(lvl), name))
    assert again.plan == release.plan
    assert again.budget == release.budget and again.budget.total == release.budget.total
    assert again.parameters() == release.parameters()
    assert again.is_consistent() == release.is_consistent()


def test_load_refuses_what_is_not_a_release(tmp_path):
    path = tmp_path / "other.parquet"
    pd.DataFrame({"x": [1]}).to_parquet(path)
    with pytest.raises(InputError, match="not a saved cocoviz release"):
        load_release(path)
    with pytest.raises(InputError, match="not a saved cocoviz release"):
        load_release(tmp_path / "missing.parquet")


def test_histogram_and_children_sum(toy_public_tree):
    release = estimate(toy_public_tree, epsilons=[1e6, 1e6], methods=["Hc", "Hg"], max_size=10, seed=0)
    np.testing.assert_array_equal(release.histogram(()), [0, 2, 1, 0, 1])
    np.testing.assert_array_equal(release.children_sum(()), [0, 2, 1, 0, 1])
    assert release.children_sum(("a",)) is None
    with pytest.raises(KeyError):
        release.histogram(("zz",))
    assert "ε spent 2e+06" in repr(release)


def test_children_sum_is_the_sum_of_the_childrens_histograms_also_when_inconsistent():
    from cocoviz.datasets import load_dataset

    tree = load_dataset("taxi")
    release = estimate(tree, epsilons=[0.5] * 3, methods=["Hg"] * 3, consistency="none", seed=1)
    for level in range(tree.depth):
        for node in tree.nodes(level):
            hists = [release.histogram(c) for c in tree.children(node)]
            expected = np.zeros(max(len(release.histogram(node)), *map(len, hists)), np.int64)
            for h in hists:
                expected[: len(h)] += h
            np.testing.assert_array_equal(release.children_sum(node), expected)
