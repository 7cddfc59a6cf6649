"""Where truth meets a release: emd per node, error by size, the omniscient yardstick D/ε."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cocoviz import Hierarchy, InputError, emd, estimate, evaluate, level_summary, size_errors


def test_evaluate_columns_and_yardstick(toy_public_tree):
    release = estimate(toy_public_tree, epsilons=[0.5, 2.0], methods=["Hc", "Hg"], max_size=10, seed=3)
    ev = evaluate(toy_public_tree, release)
    assert list(ev.columns) == [
        "level",
        "node",
        "groups",
        "sizes",
        "emd",
        "epsilon",
        "omniscient",
        "emd_per_group",
        "ratio",
        "bound",
        "truncation",
    ]
    assert ev["bound"].tolist() == [10, 0, 0] and ev["truncation"].tolist() == [0, 0, 0]  # Hc root, Hg regions
    # Root: sizes {1, 2, 4} -> D = 3 at ε = 0.5; a: {1, 4}, b: {1, 2} at ε = 2.
    assert ev["sizes"].tolist() == [3, 2, 2]
    np.testing.assert_allclose(ev["omniscient"], [6.0, 1.0, 1.0])
    for row in ev.itertuples(index=False):
        path = () if row.node == "(root)" else (row.node,)
        assert row.emd == emd(toy_public_tree.histogram(path), release.histogram(path))
        assert row.emd_per_group == pytest.approx(row.emd / row.groups)
        assert row.ratio == pytest.approx(row.emd / row.omniscient)


def test_bottom_up_yardstick_uses_the_whole_budget(toy_public_tree):
    release = estimate(
        toy_public_tree, epsilons=[0.5, 1.5], methods=["Hc", "Hc"], max_size=10, seed=3, consistency="bottom-up"
    )
    assert evaluate(toy_public_tree, release)["epsilon"].tolist() == [2.0, 2.0, 2.0]


def test_size_errors_sum_to_the_emd(toy_public_tree):
    release = estimate(toy_public_tree, epsilons=[0.3, 0.3], methods=["Hc", "Hg"], max_size=10, seed=1)
    for node in [(), ("a",), ("b",)]:
        err = size_errors(toy_public_tree, release, node)
        assert err.sum() == emd(toy_public_tree.histogram(node), release.histogram(node))


def test_level_summary(toy_public_tree):
    release = estimate(toy_public_tree, epsilons=[0.3, 0.3], methods=["Hc", "Hg"], max_size=10, seed=1)
    ev = evaluate(toy_public_tree, release)
    summary = level_summary(ev)
    assert summary["nodes"].tolist() == [1, 2]
    assert summary["max_emd"].tolist() == ev.groupby("level")["emd"].max().tolist()


def test_evaluate_refuses_another_tree(toy_public_tree):
    release = estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=1)
    other = Hierarchy.from_groups(pd.DataFrame({"r": ["a", "b"], "size": [1, 2]}), size="size", levels=["r"])
    with pytest.raises(InputError, match="another hierarchy"):
        evaluate(other, release)


def test_yardstick_is_near_the_best_method_on_many_groups():
    """With many groups the best method's error is of the order of D/ε (METHOD.md), not G/ε."""
    rng = np.random.default_rng(0)
    sizes = rng.geometric(0.4, 20_000)
    tree = Hierarchy.from_groups(pd.DataFrame({"size": sizes}), size="size", levels=[])
    best = min(
        evaluate(tree, estimate(tree, epsilons=[1.0], methods=[m], max_size=100, seed=2))["ratio"].iloc[0]
        for m in ("Hc", "Hg")
    )
    assert 0.2 < best < 5


def test_compare_histograms_holds_both_counts(toy_public_tree):
    from cocoviz.evaluate import compare_histograms

    release = estimate(toy_public_tree, epsilons=[0.3, 0.3], methods=["Hc", "Hg"], max_size=10, seed=1)
    table = compare_histograms(toy_public_tree, release)
    assert list(table.columns) == ["level", "node", "size", "private_count", "true_count"]
    for (_lvl, node), part in table.groupby(["level", "node"]):
        path = () if node == "(root)" else (node,)
        truth = toy_public_tree.histogram(path)
        assert part["true_count"].sum() == part["private_count"].sum() == toy_public_tree.groups(path)
        for size, count in zip(part["size"], part["true_count"]):
            assert count == (truth[size] if size < len(truth) else 0)
