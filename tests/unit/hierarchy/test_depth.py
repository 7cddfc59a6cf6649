"""Any number of levels below the root, and nodes of G = 0, end to end (issue 26).

Build → plan → measure → post_process → a consistent release → save / load → evaluate, for 1 to 7
levels below the root, on small trees where some leaves (and so some inner nodes) hold no group.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cocoviz
from cocoviz.hierarchy import Hierarchy
from cocoviz.plan import Plan, Shape

DEPTHS = range(1, 8)


def deep_table(depth: int, seed: int = 0) -> pd.DataFrame:
    """A counts table of ``depth`` levels, two labels per level, where about a quarter of the rows count 0."""
    rng = np.random.default_rng(seed)
    n = 12 * depth
    table = pd.DataFrame({f"l{k}": rng.choice(["a", "b/x", "c"], n) for k in range(depth)})
    table["size"] = rng.integers(0, 7, n)
    table["count"] = rng.integers(0, 3, n) * (rng.random(n) > 0.25)
    # One leaf listed with no group at all: a region of G = 0 (an empty census block).
    table.loc[n] = ["z"] * depth + [3, 0]
    return table


def deep_tree(depth: int) -> Hierarchy:
    table = deep_table(depth)
    return Hierarchy.from_counts(table, size="size", count="count", levels=[c for c in table if c.startswith("l")])


@pytest.mark.parametrize("depth", DEPTHS)
def test_tree_of_any_depth_keeps_its_empty_leaves(depth):
    tree = deep_tree(depth)
    assert tree.depth == depth
    leaves = tree.runs(depth).groups()
    assert (leaves == 0).any()
    assert tree.groups(("z",) * depth) == 0 and tree.groups(("z",)) == 0
    for level in range(1, depth + 1):
        g = tree.runs(level).groups()
        assert np.array_equal(
            np.bincount(tree.parents(level), weights=g, minlength=len(tree.nodes(level - 1))),
            tree.runs(level - 1).groups(),
        )


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("method", ["Hg", "Hc"])
def test_end_to_end_at_any_depth(depth, method, tmp_path):
    tree = deep_tree(depth)
    plan = Plan.build(Shape.of(tree), epsilons=[1.0] * (depth + 1), methods=[method] * (depth + 1), max_size=8)
    assert [c.level for c in plan.cost().charges] == list(range(depth + 1))
    release = cocoviz.post_process(plan, cocoviz.measure(plan, tree, seed=depth))
    assert release.is_consistent()
    for level in range(depth + 1):
        assert np.array_equal(release.runs(level).groups(), tree.runs(level).groups())
    # G = 0 nodes are released empty.
    empty = tree.runs(depth).groups() == 0
    assert np.all(np.diff(release.runs(depth).ptr)[empty] == 0)
    path = tmp_path / "release.parquet"
    release.save(path)
    loaded = cocoviz.load_release(path)
    for level in range(depth + 1):
        a, b = release.runs(level), loaded.runs(level)
        assert np.array_equal(a.ptr, b.ptr) and np.array_equal(a.sizes, b.sizes) and np.array_equal(a.counts, b.counts)
    evaluation = cocoviz.evaluate(tree, loaded)
    assert len(evaluation) == sum(len(tree.nodes(level)) for level in range(depth + 1))
    none = evaluation["groups"] == 0
    assert none.any()
    assert (evaluation.loc[none, "emd"] == 0).all() and (evaluation.loc[none, "emd_per_group"] == 0).all()
    assert (evaluation.loc[none, "exact_share"] == 1).all() and evaluation.loc[none, "ratio"].isna().all()
    assert np.isfinite(evaluation.loc[~none, ["emd_per_group", "exact_share", "ratio"]].to_numpy()).all()
    summary = cocoviz.level_summary(evaluation)
    assert summary["level"].tolist() == list(range(depth + 1))


@pytest.mark.parametrize("depth", [1, 4, 7])
def test_one_call_estimate_and_private_k_at_any_depth(depth):
    tree = deep_tree(depth)
    release = cocoviz.estimate(
        tree,
        epsilons=[1.0] * (depth + 1),
        methods=["Hc"] * (depth + 1),
        k_select="noisy-max-per-node",
        k_epsilon=0.5,
        max_size=16,
        seed=0,
    )
    assert release.is_consistent()
    assert all(b is not None and len(b) == len(tree.nodes(level)) for level, b in enumerate(release.bounds))


def test_engine_path_keeps_leaves_of_no_groups_as_pandas_does():
    table = deep_table(3)
    levels = ["l0", "l1", "l2"]
    pandas_tree = Hierarchy.from_counts(table, size="size", count="count", levels=levels)
    arrow_tree = Hierarchy.from_counts(pa_table(table), size="size", count="count", levels=levels)
    assert Shape.of(pandas_tree).same_as(Shape.of(arrow_tree))


def pa_table(table: pd.DataFrame):
    import pyarrow as pa

    return pa.Table.from_pandas(table, preserve_index=False)


def test_level_names_of_a_deep_tree_in_figures():
    from cocoviz.plots import budget_figure, level_error_figure

    tree = deep_tree(7)
    names = ["(root)", *tree.levels]
    release = cocoviz.estimate(tree, epsilons=[1.0] * 8, methods=["Hg"] * 8, max_size=8, seed=0)
    figure = level_error_figure(cocoviz.level_summary(cocoviz.evaluate(tree, release)), level_names=names)
    assert list(figure.data[0].x) == names
    bars = budget_figure(dict(enumerate([1.0] * 8)), level_names=names)
    assert len(bars.data) == 8 and len({bar.marker.color for bar in bars.data}) >= 6


def test_upload_of_six_levels_with_an_empty_region():
    from cocoviz.hierarchy.ingest import load_upload

    csv = b"a,b,c,d,e,f,size,count\n1,2,3,4,5,6,2,3\n1,2,3,4,5,7,1,0\n"
    tree = load_upload(csv, form="counts", levels=list("abcdef"), filename="blocks.csv")
    assert tree.depth == 6 and tree.groups(tuple("123457")) == 0 and tree.groups(()) == 3


def test_a_table_of_no_groups_at_all_is_refused():
    table = pd.DataFrame({"r": ["a", "b"], "size": [1, 2], "count": [0, 0]})
    with pytest.raises(cocoviz.InputError, match="table holds no groups"):
        Hierarchy.from_counts(table, size="size", count="count", levels=["r"])


def test_a_private_k_per_node_spends_no_cells_on_nodes_of_g_0():
    """G = 0 is public: such a node's K is 1 (one noisy cell), not a K̂ of ln(1/β)/ε_K cells; the others' K̂
    and noise are those of a tree where the node were absent from the K draw (keyed per node)."""
    tree = deep_tree(3)
    plan = Plan.build(
        tree, epsilons=[1.0] * 4, methods=["Hc"] * 4, k_select="noisy-max-per-node", k_epsilon=0.1, max_size=64
    )
    measured = cocoviz.measure(plan, tree, seed=0)
    for level in range(4):
        empty = plan.shape.group_counts(level) == 0
        bounds = measured.levels[level].bounds
        assert (bounds[empty] == 1).all() and (bounds[~empty] > 1).all()
        assert (np.diff(measured.levels[level].ptr)[empty] == 1).all()
    release = cocoviz.post_process(plan, measured)
    assert release.is_consistent()
    assert all((release.runs(level).groups() == tree.runs(level).groups()).all() for level in range(4))


@pytest.mark.parametrize("consistency", ["top-down", "bottom-up", "none"])
def test_every_method_on_nodes_of_g_0(consistency):
    tree = deep_tree(5)
    for method in cocoviz.METHODS:
        release = cocoviz.estimate(
            tree, epsilons=[1.0] * 6, methods=[method] * 6, max_size=8, seed=1, consistency=consistency
        )
        for level in range(6):
            assert np.array_equal(release.runs(level).groups(), tree.runs(level).groups()), (method, level)
        assert release.is_consistent() == (consistency != "none") or consistency == "none"


def test_nodes_are_held_in_narrow_integer_arrays_and_labelled_without_python_strings():
    from cocoviz.hierarchy import node_label, node_labels

    tree = deep_tree(6)
    nodes = tree.node_codes
    for level in range(1, 7):
        assert nodes.codes[level].dtype == np.int8 and nodes.parents[level].dtype == np.int8
        labels = node_labels(nodes, level)
        assert labels.dtype != object  # Arrow text, not a Python object per node
        assert labels.tolist() == [node_label(p) for p in tree.nodes(level)]
    release = cocoviz.estimate(tree, epsilons=[1.0] * 7, methods=["Hc"] * 7, max_size=8, seed=0)
    evaluation = cocoviz.evaluate(tree, release)
    assert evaluation["node"].tolist() == [node_label(p) for level in range(7) for p in tree.nodes(level)]
    frame = release.to_frame()
    assert set(frame["node"]) <= set(evaluation["node"])
