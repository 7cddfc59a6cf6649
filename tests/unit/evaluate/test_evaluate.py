"""Where truth meets a release: emd per node, error by size, the omniscient yardstick D/ε."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cocoviz import Hierarchy, InputError, emd, estimate, evaluate, level_summary, size_errors
from cocoviz.evaluate.against_truth import RATIO_READINGS, exact_share, plain_reading, ratio_reading


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
        "exact_share",
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
    from cocoviz.evaluate.against_truth import compare_histograms

    release = estimate(toy_public_tree, epsilons=[0.3, 0.3], methods=["Hc", "Hg"], max_size=10, seed=1)
    table = compare_histograms(toy_public_tree, release)
    assert list(table.columns) == ["level", "node", "size", "private_count", "true_count"]
    for (_lvl, node), part in table.groupby(["level", "node"]):
        path = () if node == "(root)" else (node,)
        truth = toy_public_tree.histogram(path)
        assert part["true_count"].sum() == part["private_count"].sum() == toy_public_tree.groups(path)
        for size, count in zip(part["size"], part["true_count"]):
            assert count == (truth[size] if size < len(truth) else 0)


# ------------------------------------------------------------ accuracy in plain words
def test_exact_share_by_hand():
    # True sizes 1, 1, 2, 3 (H = [0, 2, 1, 1]); released 1, 1, 1, 3: three groups of the right size.
    assert exact_share(np.array([0, 2, 1, 1]), np.array([0, 3, 0, 1])) == 0.75
    # Released 0, 2, 2, 4 (longer histogram): only the 2 matches.
    assert exact_share(np.array([0, 2, 1, 1]), np.array([1, 0, 2, 0, 1])) == 0.25
    assert exact_share(np.array([0, 2, 1, 1]), np.array([0, 2, 1, 1])) == 1.0
    with pytest.raises(InputError, match="G must be the same"):
        exact_share(np.array([0, 2]), np.array([0, 3]))


def test_exact_share_of_every_node_and_its_invariants():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"r": rng.choice(list("abcd"), 300), "size": rng.geometric(0.3, 300)})
    tree = Hierarchy.from_groups(frame, size="size", levels=["r"])
    seen = set()
    for seed, eps in enumerate([0.05, 0.3, 1.0, 5.0, 1e5]):
        release = estimate(tree, epsilons=[eps, eps], methods=["Hc", "Hg"], max_size=60, seed=seed)
        ev = evaluate(tree, release)
        for row in ev.itertuples(index=False):
            path = () if row.node == "(root)" else (row.node,)
            h, e = tree.histogram(path), release.histogram(path)
            assert row.exact_share == pytest.approx(exact_share(h, e))  # the level-wise sum is the dense one
            assert 0.0 <= row.exact_share <= 1.0
            assert (row.exact_share == 1.0) == (row.emd == 0)  # 1 exactly when the histograms are equal
            seen.add(row.exact_share == 1.0)
    assert seen == {True, False}  # both cases met
    assert level_summary(ev)["exact_share"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "ratio, words",
    [
        (0.1, "better than knowing which sizes exist"),
        (0.5, "better than knowing which sizes exist"),
        (0.9, "about as good as knowing which sizes exist"),
        (2.0, "about as good as knowing which sizes exist"),
        (4.13, "a few times worse than knowing which sizes exist"),
        (40.0, "about ten times worse than knowing which sizes exist, or more"),
        (24_000.0, "orders of magnitude worse than knowing which sizes exist"),
    ],
)
def test_ratio_reading_is_graded(ratio, words):
    assert ratio_reading(ratio) == words
    bounds = [b for b, _ in RATIO_READINGS]
    assert bounds == sorted(bounds)


def test_plain_reading_of_a_row():
    row = {"emd": 41, "emd_per_group": 0.041, "exact_share": 0.9712, "ratio": 1.37}
    assert plain_reading(row) == (
        "On average 0.041 persons misplaced per group; 97% of groups have exactly the right size; "
        "error 1.4× the omniscient yardstick D/ε: about as good as knowing which sizes exist."
    )
    assert plain_reading({**row, "emd_per_group": 1.0}).startswith("On average 1 person misplaced per group;")
    exact = {"emd": 0, "emd_per_group": 0.0, "exact_share": 1.0, "ratio": 0.0}
    assert plain_reading(exact) == "Exact: every group has exactly the right size (0 persons misplaced)."


def test_shares_read_0_or_100_percent_only_when_exact():
    from cocoviz.evaluate.against_truth import share_percent

    assert share_percent(0.9996) == "99.96%" and share_percent(0.999) == "99.9%" and share_percent(0.5) == "50%"
    assert share_percent(4e-5) == "0.004%" and share_percent(0.0) == "0%" and share_percent(1.0) == "100%"
    assert plain_reading({"emd": 3, "emd_per_group": 0.0014, "exact_share": 0.9996, "ratio": 1.2}).count("99.96%") == 1


def test_plain_reading_has_no_scientific_notation():
    # "1.5e-05 persons" and "3e+03×" read as noise to the people the sentence is for (issue 25, item 7).
    text = plain_reading({"emd": 3, "emd_per_group": 1.5e-05, "exact_share": 0.5, "ratio": 3012.0})
    assert "e-0" not in text and "e+0" not in text
    assert "0.000015 persons" in text and "3,000×" in text


def test_labels_with_slashes_name_two_nodes_apart_everywhere():
    """Issue 27, item 8: states "a" and "a/b", counties "b/c" and "c" made two leaves named "a/b/c"."""
    from cocoviz.evaluate.against_truth import compare_histograms, evaluation_row
    from cocoviz.hierarchy import node_path

    groups = pd.DataFrame({"state": ["a", "a/b", "a/b"], "county": ["b/c", "c", "c"], "size": [1, 2, 3]})
    tree = Hierarchy.from_groups(groups, size="size", levels=["state", "county"])
    release = estimate(tree, epsilons=[1.0] * 3, methods=["Hc"] * 3, max_size=5, seed=0)
    ev = evaluate(tree, release)
    leaves = ev[ev["level"] == 2]
    assert leaves["node"].is_unique and len(leaves) == 2
    assert {node_path(n) for n in leaves["node"]} == {("a", "b/c"), ("a/b", "c")}
    for node, g in [(("a", "b/c"), 1), (("a/b", "c"), 2)]:
        assert evaluation_row(ev, tree, node)["groups"] == g  # Explore's row: this node's G, not the other's
    frame = release.to_frame()
    assert {node_path(n) for n in frame.loc[frame["level"] == 2, "node"]} == {("a", "b/c"), ("a/b", "c")}
    for node_name, part in frame[frame["level"] == 2].groupby("node"):
        assert part["count"].sum() == tree.groups(node_path(node_name))
    compared = compare_histograms(tree, release)
    for node_name, part in compared[compared["level"] == 2].groupby("node"):
        assert part["true_count"].sum() == tree.groups(node_path(node_name))
