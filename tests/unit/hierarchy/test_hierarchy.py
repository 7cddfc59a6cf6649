"""Hierarchy: building from the three table shapes, queries, restructuring, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

from cocoviz.errors import InputError, ParameterError
from cocoviz.hierarchy import Hierarchy, LevelRuns, aggregate_runs, node_label
from tests.support.engine import padded, random_trees


# ------------------------------------------------------------------ the slides' example
def test_slides_persons_table(toy_tree):
    # Groups 1..4 have 4, 2, 1, 1 persons; groups 1 and 3 lie in a, 2 and 4 in b.
    assert toy_tree.depth == 1
    assert toy_tree.levels == ("region",)
    assert toy_tree.nodes(0) == [()]
    assert toy_tree.nodes(1) == [("a",), ("b",)]
    assert toy_tree.children(()) == [("a",), ("b",)]
    assert toy_tree.children(("a",)) == []
    np.testing.assert_array_equal(toy_tree.histogram(()), [0, 2, 1, 0, 1])
    np.testing.assert_array_equal(toy_tree.histogram(("a",)), [0, 1, 0, 0, 1])
    np.testing.assert_array_equal(toy_tree.histogram(("b",)), [0, 1, 1])
    assert toy_tree.groups(()) == 4
    assert toy_tree.groups(("a",)) == 2
    assert toy_tree.groups(("b",)) == 2
    assert toy_tree.persons(()) == 8
    assert toy_tree.persons(("a",)) == 5
    assert toy_tree.max_size == 4
    assert toy_tree.summary() == {
        "groups": 4,
        "persons": 8,
        "distinct_sizes": 3,
        "max_size": 4,
        "levels": ["region"],
        "nodes_per_level": [1, 2],
    }


def test_three_table_shapes_agree(toy_persons):
    by_persons = Hierarchy.from_persons(toy_persons, group="group", levels=["region"])
    groups = pd.DataFrame({"region": ["a", "b", "a", "b"], "size": [4, 2, 1, 1]})
    by_groups = Hierarchy.from_groups(groups, size="size", levels=["region"])
    counts = pd.DataFrame({"region": ["a", "a", "b", "b"], "size": [1, 4, 1, 2], "n": [1, 1, 1, 1]})
    by_counts = Hierarchy.from_counts(counts, size="size", count="n", levels=["region"])
    for tree in (by_groups, by_counts):
        for node in [(), ("a",), ("b",)]:
            np.testing.assert_array_equal(tree.histogram(node), by_persons.histogram(node))


def test_row_order_does_not_matter(toy_persons):
    a = Hierarchy.from_persons(toy_persons, group="group", levels=["region"])
    b = Hierarchy.from_persons(
        toy_persons.sample(frac=1.0, random_state=3).reset_index(drop=True), group="group", levels=["region"]
    )
    assert a.nodes(1) == b.nodes(1)
    for node in a.nodes(1) + [()]:
        np.testing.assert_array_equal(a.histogram(node), b.histogram(node))


def test_root_only_hierarchy(toy_persons):
    tree = Hierarchy.from_persons(toy_persons, group="group", levels=[])
    assert tree.depth == 0
    assert tree.nodes(0) == [()]
    assert tree.children(()) == []
    np.testing.assert_array_equal(tree.histogram(()), [0, 2, 1, 0, 1])


def test_size_zero_is_a_real_size():
    groups = pd.DataFrame({"r": ["a", "a", "b"], "size": [0, 0, 3]})
    tree = Hierarchy.from_groups(groups, size="size", levels=["r"])
    np.testing.assert_array_equal(tree.histogram(()), [2, 0, 0, 1])
    np.testing.assert_array_equal(tree.histogram(("a",)), [2])
    assert tree.groups(("a",)) == 2
    assert tree.persons(("a",)) == 0


def test_from_counts_adds_repeated_rows_and_ignores_zero_counts():
    counts = pd.DataFrame({"r": ["a", "a", "a", "b"], "size": [2, 2, 5, 1], "n": [1, 3, 0, 2]})
    tree = Hierarchy.from_counts(counts, size="size", count="n", levels=["r"])
    np.testing.assert_array_equal(tree.histogram(("a",)), [0, 0, 4])
    np.testing.assert_array_equal(tree.histogram(()), [0, 2, 4])


def test_labels_are_strings_and_lookup_converts():
    groups = pd.DataFrame({"state": [1, 1, 2], "size": [1, 2, 3]})
    tree = Hierarchy.from_groups(groups, size="size", levels=["state"])
    assert tree.nodes(1) == [("1",), ("2",)]
    np.testing.assert_array_equal(tree.histogram((1,)), tree.histogram(("1",)))
    assert node_label(()) == "(root)"
    assert node_label(("CA", "Alameda")) == "CA/Alameda"


def test_unknown_node_raises_key_error(toy_tree):
    for call in (toy_tree.histogram, toy_tree.groups, toy_tree.children, toy_tree.locate, toy_tree.subtree):
        with pytest.raises(KeyError):
            call(("zz",))
    with pytest.raises(KeyError):
        toy_tree.histogram(("a", "deeper"))


def test_bad_level_number(toy_tree):
    with pytest.raises(ValueError, match="level must be between 0 and 1"):
        toy_tree.nodes(2)
    with pytest.raises(ValueError, match="level must be between 1 and 1"):
        toy_tree.parents(0)


# ------------------------------------------------------------------ restructuring
def _two_level() -> Hierarchy:
    groups = pd.DataFrame(
        {
            "state": ["s", "s", "s", "t", "t", "t"],
            "county": ["x", "x", "y", "z", "z", "w"],
            "size": [1, 3, 2, 5, 1, 0],
        }
    )
    return Hierarchy.from_groups(groups, size="size", levels=["state", "county"])


def test_children_and_nodes_of_two_levels():
    tree = _two_level()
    assert tree.depth == 2
    assert tree.nodes(1) == [("s",), ("t",)]
    assert tree.nodes(2) == [("s", "x"), ("s", "y"), ("t", "w"), ("t", "z")]
    assert tree.children(("t",)) == [("t", "w"), ("t", "z")]
    np.testing.assert_array_equal(tree.histogram(("s", "x")), [0, 1, 0, 1])
    np.testing.assert_array_equal(tree.histogram(("t",)), [1, 1, 0, 0, 0, 1])
    np.testing.assert_array_equal(tree.parents(2), [0, 0, 1, 1])


def test_keep_levels_drop_bottom():
    tree = _two_level()
    states = tree.keep_levels(["state"])
    assert states.depth == 1 and states.levels == ("state",)
    for node in [(), ("s",), ("t",)]:
        np.testing.assert_array_equal(states.histogram(node), tree.histogram(node))


def test_keep_levels_drop_middle_attaches_to_grandparent():
    tree = _two_level()
    counties = tree.keep_levels(["county"])
    assert counties.levels == ("county",)
    assert counties.nodes(1) == [("w",), ("x",), ("y",), ("z",)]
    np.testing.assert_array_equal(counties.histogram(("x",)), tree.histogram(("s", "x")))
    np.testing.assert_array_equal(counties.histogram(()), tree.histogram(()))
    root_only = tree.keep_levels([])
    assert root_only.depth == 0
    np.testing.assert_array_equal(root_only.histogram(()), tree.histogram(()))
    with pytest.raises(ValueError, match="unknown level"):
        tree.keep_levels(["city"])


def test_keep_levels_of_three():
    groups = pd.DataFrame(
        {"s": ["p", "p", "p", "q"], "c": ["x", "x", "y", "z"], "t": ["1", "2", "3", "4"], "size": [1, 2, 3, 4]}
    )
    tree = Hierarchy.from_groups(groups, size="size", levels=["s", "c", "t"])
    same = tree.keep_levels(["s", "c", "t"])
    assert same.levels == tree.levels and same.nodes(3) == tree.nodes(3)
    no_county = tree.keep_levels(["t", "s"])  # order of the argument does not matter
    assert no_county.levels == ("s", "t")
    assert no_county.nodes(2) == [("p", "1"), ("p", "2"), ("p", "3"), ("q", "4")]
    assert no_county.children(("p",)) == [("p", "1"), ("p", "2"), ("p", "3")]
    np.testing.assert_array_equal(no_county.histogram(("p",)), tree.histogram(("p",)))
    np.testing.assert_array_equal(no_county.histogram(("p", "3")), tree.histogram(("p", "y", "3")))


def test_keep_levels_merges_leaves_with_the_same_kept_label():
    groups = pd.DataFrame({"state": ["s", "t"], "county": ["x", "x"], "size": [1, 2]})
    tree = Hierarchy.from_groups(groups, size="size", levels=["state", "county"])
    merged = tree.keep_levels(["county"])
    assert merged.nodes(1) == [("x",)]
    np.testing.assert_array_equal(merged.histogram(("x",)), [0, 1, 1])


def test_subtree():
    tree = _two_level()
    sub = tree.subtree(("t",))
    assert sub.levels == ("county",)
    assert sub.nodes(1) == [("w",), ("z",)]
    np.testing.assert_array_equal(sub.histogram(()), tree.histogram(("t",)))
    np.testing.assert_array_equal(sub.histogram(("z",)), tree.histogram(("t", "z")))
    leaf = tree.subtree(("s", "y"))
    assert leaf.depth == 0
    np.testing.assert_array_equal(leaf.histogram(()), tree.histogram(("s", "y")))
    whole = tree.subtree(())
    for node in tree.nodes(2):
        np.testing.assert_array_equal(whole.histogram(node), tree.histogram(node))


# ------------------------------------------------------------------ random hierarchies
@settings(max_examples=60)
@given(random_trees())
def test_random_tree_matches_independent_truth(rt):
    tree = rt.tree
    assert tree.depth == len(rt.levels)
    assert sorted(tree.nodes(tree.depth)) == sorted(rt.leaves)
    for node in rt.all_nodes():
        truth = rt.truth(node)
        np.testing.assert_array_equal(tree.histogram(node), truth)
        assert tree.groups(node) == truth.sum()
        assert tree.persons(node) == int(np.dot(np.arange(len(truth)), truth))
        kids = tree.children(node)
        assert kids == sorted(kids)
        if len(node) == tree.depth:
            assert kids == []
        else:
            assert kids and all(k[:-1] == node and len(k) == len(node) + 1 for k in kids)
            n = len(truth)
            np.testing.assert_array_equal(sum(padded(tree.histogram(k), n) for k in kids), truth)
    # Every node of a level is the child of exactly one node of the level above.
    for level in range(1, tree.depth + 1):
        below = [k for node in tree.nodes(level - 1) for k in tree.children(node)]
        assert sorted(below) == tree.nodes(level)
        assert len(below) == len(set(below))
        assert all(len(p) == level for p in tree.nodes(level))


@settings(max_examples=30)
@given(random_trees(max_depth=3))
def test_random_subtree_and_keep_levels(rt):
    tree = rt.tree
    if tree.depth == 0:
        return
    first = tree.nodes(1)[0]
    sub = tree.subtree(first)
    assert sub.depth == tree.depth - 1
    for node in sub.nodes(sub.depth):
        np.testing.assert_array_equal(sub.histogram(node), rt.truth(first + node))
    top = tree.keep_levels(rt.levels[:1])
    assert top.depth == 1
    for node in tree.nodes(1):
        np.testing.assert_array_equal(top.histogram(node), rt.truth(node))


@settings(max_examples=30)
@given(random_trees())
def test_input_frame_is_not_mutated(rt):
    before = rt.frame.copy(deep=True)
    Hierarchy.from_counts(rt.frame, size="size", count="count", levels=rt.levels)
    pd.testing.assert_frame_equal(rt.frame, before)


def test_persons_frame_is_not_mutated(toy_persons):
    before = toy_persons.copy(deep=True)
    Hierarchy.from_persons(toy_persons, group="group", levels=["region"])
    pd.testing.assert_frame_equal(toy_persons, before)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "sizes, problem",
    [
        ([1, -2, 3], "negative group size"),
        ([1, 2.5, 3], "fractional group size"),
        ([1, None, 3], "missing group size"),
        ([1, float("nan"), 3], "missing group size"),
        (["1", "two", "3"], "must be a number"),
        ([1, float("inf"), 3], "infinite group size"),
    ],
)
def test_bad_group_sizes(sizes, problem):
    groups = pd.DataFrame({"r": ["a", "a", "b"], "size": sizes})
    with pytest.raises(ValueError, match=problem):
        Hierarchy.from_groups(groups, size="size", levels=["r"])


def test_bad_size_error_names_the_row():
    groups = pd.DataFrame({"r": ["a", "a", "b"], "size": [1, -2, 3]}, index=[10, 11, 12])
    with pytest.raises(ValueError, match=r"column 'size'.*rows 11"):
        Hierarchy.from_groups(groups, size="size", levels=["r"])


def test_group_in_two_leaves(toy_persons):
    toy_persons.loc[7, "group"] = 1  # Nick (region b) joins group 1 (region a)
    with pytest.raises(ValueError, match="more than one region"):
        Hierarchy.from_persons(toy_persons, group="group", levels=["region"])


def test_missing_group_id(toy_persons):
    toy_persons["group"] = toy_persons["group"].astype(object)
    toy_persons.loc[2, "group"] = None
    with pytest.raises(ValueError, match="missing group id"):
        Hierarchy.from_persons(toy_persons, group="group", levels=["region"])


@pytest.mark.parametrize("label, problem", [(None, "missing region label"), ("  ", "empty region label")])
def test_missing_level_values(toy_persons, label, problem):
    toy_persons.loc[4, "region"] = label
    with pytest.raises(ValueError, match=problem):
        Hierarchy.from_persons(toy_persons, group="group", levels=["region"])


def test_empty_table():
    with pytest.raises(ValueError, match="table is empty"):
        Hierarchy.from_persons(pd.DataFrame({"group": [], "region": []}), group="group", levels=["region"])
    with pytest.raises(ValueError, match="table is empty"):
        Hierarchy.from_counts(pd.DataFrame({"r": [], "size": [], "n": []}), size="size", count="n", levels=["r"])


def test_missing_column(toy_persons):
    with pytest.raises(ValueError, match="missing column"):
        Hierarchy.from_persons(toy_persons, group="household", levels=["region"])
    with pytest.raises(ValueError, match="expected a pandas DataFrame"):
        Hierarchy.from_groups({"size": [1]}, size="size", levels=[])


def test_negative_count():
    counts = pd.DataFrame({"r": ["a", "b"], "size": [1, 2], "n": [3, -1]})
    with pytest.raises(ValueError, match="negative number of groups"):
        Hierarchy.from_counts(counts, size="size", count="n", levels=["r"])


@pytest.mark.parametrize("empty", ["a", "b", "c"])  # first, middle and last leaf
def test_region_of_no_groups_is_a_node_of_g_0(empty):
    counts = pd.DataFrame({"r": ["a", "a", "b", "c"], "size": [1, 2, 3, 4], "n": [3, 1, 2, 5]})
    counts.loc[counts["r"] == empty, "n"] = 0
    tree = Hierarchy.from_counts(counts, size="size", count="n", levels=["r"])
    assert tree.nodes(1) == [("a",), ("b",), ("c",)]
    assert tree.groups((empty,)) == 0 and tree.node_runs((empty,))[0].size == 0
    assert tree.groups(()) == sum(tree.groups(p) for p in tree.nodes(1))


def test_level_runs_groups_with_empty_nodes():
    # Nodes 0 and 2 own no runs; node 1 owns two, node 3 one.
    runs = LevelRuns(np.array([0, 0, 2, 2, 3]), np.array([1, 4, 2]), np.array([5, 6, 7]))
    np.testing.assert_array_equal(runs.groups(), [0, 11, 0, 7])
    np.testing.assert_array_equal(runs.node_ids(), [1, 1, 3])
    sizes, counts = runs.node(2)
    assert sizes.size == 0 and counts.size == 0
    np.testing.assert_array_equal(
        LevelRuns(np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)).groups(), []
    )


def test_aggregate_runs_sums_and_sorts():
    runs = aggregate_runs(np.array([1, 0, 1, 1, 0]), np.array([3, 2, 1, 3, 2]), np.array([1, 1, 4, 2, 0]), 3)
    np.testing.assert_array_equal(runs.ptr, [0, 1, 3, 3])
    np.testing.assert_array_equal(runs.sizes, [2, 1, 3])
    np.testing.assert_array_equal(runs.counts, [1, 4, 3])


def test_any_number_of_levels():
    cols = {f"l{k}": ["x", "y"] for k in range(9)}
    tree = Hierarchy.from_groups(pd.DataFrame({**cols, "size": [1, 2]}), size="size", levels=list(cols))
    assert tree.depth == 9 and tree.summary()["nodes_per_level"] == [1] + [2] * 9


# ------------------------------------------------------------------ the public groups table (persons form)
TOY_GROUPS = pd.DataFrame({"group": [1, 2, 3, 4], "region": ["a", "b", "a", "b"]})


def test_public_groups_flag(toy_persons, toy_tree):
    assert toy_tree.public_groups is False
    assert Hierarchy.from_persons(toy_persons, group="group", levels=["region"], groups=TOY_GROUPS).public_groups
    groups = pd.DataFrame({"region": ["a", "b"], "size": [4, 2]})
    assert Hierarchy.from_groups(groups, size="size", levels=["region"]).public_groups
    counts = groups.assign(n=1)
    tree = Hierarchy.from_counts(counts, size="size", count="n", levels=["region"])
    assert tree.public_groups and tree.subtree(("a",)).public_groups and tree.keep_levels([]).public_groups
    assert not toy_tree.subtree(("a",)).public_groups and not toy_tree.keep_levels([]).public_groups
    with pytest.raises(AttributeError):
        toy_tree.public_groups = True


def test_toy_persons_with_and_without_a_groups_table(toy_persons, toy_tree):
    with_table = Hierarchy.from_persons(toy_persons, group="group", levels=["region"], groups=TOY_GROUPS)
    for node in [(), ("a",), ("b",)]:
        np.testing.assert_array_equal(with_table.histogram(node), toy_tree.histogram(node))
    # A listed group with nobody in it is a group of size 0; a listed region with only such groups is kept.
    listed = pd.concat([TOY_GROUPS, pd.DataFrame({"group": [5, 6], "region": ["b", "c"]})], ignore_index=True)
    tree = Hierarchy.from_persons(toy_persons, group="group", levels=["region"], groups=listed)
    assert tree.nodes(1) == [("a",), ("b",), ("c",)]
    np.testing.assert_array_equal(tree.histogram(("b",)), [1, 1, 1])
    np.testing.assert_array_equal(tree.histogram(("c",)), [1])
    assert tree.groups(()) == 6 and tree.persons(()) == 8


def test_neighbouring_persons_tables_and_public_g(toy_persons):
    # The neighbour adds one person in a NEW group 9 (region b).
    neighbour = pd.concat(
        [toy_persons, pd.DataFrame({"person": ["Zed"], "group": [9], "region": ["b"]})], ignore_index=True
    )
    plain = [Hierarchy.from_persons(t, group="group", levels=["region"]) for t in (toy_persons, neighbour)]
    assert plain[0].groups(("b",)) != plain[1].groups(("b",))  # G leaks the new person
    listed = pd.concat([TOY_GROUPS, pd.DataFrame({"group": [9], "region": ["b"]})], ignore_index=True)
    public = [
        Hierarchy.from_persons(t, group="group", levels=["region"], groups=listed) for t in (toy_persons, neighbour)
    ]
    for node in [(), ("a",), ("b",)]:
        assert public[0].groups(node) == public[1].groups(node)
    np.testing.assert_array_equal(public[0].histogram(("b",)), [1, 1, 1])  # group 9 has size 0
    np.testing.assert_array_equal(public[1].histogram(("b",)), [0, 2, 1])  # ... and size 1 next door


def test_groups_table_refusals(toy_persons):
    twice = pd.DataFrame({"group": [1, 2, 3, 4, 2], "region": ["a", "b", "a", "b", "a"]})
    with pytest.raises(
        InputError,
        match=r"groups table, column 'group': group id\(s\) 2 listed more than once"
        r".*rows 1, 4",
    ):
        Hierarchy.from_persons(toy_persons, group="group", levels=["region"], groups=twice)
    moved = TOY_GROUPS.assign(region=["a", "a", "a", "b"])  # group 2 listed in a, its persons are in b
    with pytest.raises(
        InputError,
        match=r"column 'group': group 2 lies in region a in the groups table but persons "
        r"in rows 4, 5 place it in b",
    ):
        Hierarchy.from_persons(toy_persons, group="group", levels=["region"], groups=moved)
    with pytest.raises(InputError, match=r"column 'group': group\(s\) 4 in rows 7 are not in the groups table"):
        Hierarchy.from_persons(toy_persons, group="group", levels=["region"], groups=TOY_GROUPS.iloc[:3])
    with pytest.raises(InputError, match=r"groups table: missing column\(s\) \['region'\]"):
        Hierarchy.from_persons(toy_persons, group="group", levels=["region"], groups=TOY_GROUPS[["group"]])
    with pytest.raises(InputError, match="groups table, column 'region': missing region label in rows 1"):
        Hierarchy.from_persons(
            toy_persons, group="group", levels=["region"], groups=TOY_GROUPS.assign(region=["a", None, "a", "b"])
        )


def test_group_in_two_regions_with_a_groups_table(toy_persons):
    toy_persons.loc[7, "group"] = 1  # Nick (region b) joins group 1 (listed in region a)
    with pytest.raises(
        InputError,
        match=r"group 1 lies in region a in the groups table but persons in rows 7 "
        r"place it in b",
    ):
        Hierarchy.from_persons(toy_persons, group="group", levels=["region"], groups=TOY_GROUPS)


# ------------------------------------------------------------------ types are checked, not coerced; limits
@pytest.mark.parametrize(
    "sizes, problem",
    [
        ([True, False, True], r"column 'size': group size must be a whole number, not true/false"),
        ([1, True, 2], r"column 'size': group size must be a whole number, not bool, in rows 1"),
        ([1 + 0j, 2, 3], r"column 'size': group size must be a whole number, not complex128"),
        ([1, [2], 3], r"column 'size': group size must be a whole number, not list, in rows 1"),
        ([1, float("nan"), 3], r"column 'size': missing group size in rows 1"),
        ([1, float("-inf"), 3], r"column 'size': infinite group size in rows 1"),
        ([1, 2**40 + 1, 3], r"column 'size': group size too large in rows 1; at most 2\*\*40"),
    ],
)
def test_sizes_are_checked_not_coerced(sizes, problem):
    groups = pd.DataFrame({"r": ["a", "a", "b"], "size": pd.Series(sizes, dtype=None)})
    with pytest.raises(InputError, match=problem):
        Hierarchy.from_groups(groups, size="size", levels=["r"])


@pytest.mark.parametrize(
    "labels, problem",
    [
        ([["a"], "b", "b"], r"column 'r': a region label must be text or a number, not list, in rows 0"),
        ([True, False, True], r"column 'r': a region label must be text or a number, not true/false"),
        (
            [1, "1", "b"],
            r"column 'r': values 1, '1' are different but print as the same region label '1' \(rows 0, 1\)",
        ),
        (["a", "", "b"], r"column 'r': empty region label in rows 1"),
    ],
)
def test_region_labels_are_text(labels, problem):
    groups = pd.DataFrame({"r": labels, "size": [1, 2, 3]})
    with pytest.raises(InputError, match=problem):
        Hierarchy.from_groups(groups, size="size", levels=["r"])


def test_group_ids_that_print_alike_or_are_lists(toy_persons):
    toy_persons["group"] = toy_persons["group"].astype(object)
    toy_persons.loc[7, "group"] = "1"  # Nick in group "1", Alice in group 1: not one group
    with pytest.raises(InputError, match=r"column 'group': values 1, '1' are different but print as the same group id"):
        Hierarchy.from_persons(toy_persons, group="group", levels=["region"])
    toy_persons.loc[7, "group"] = [4]
    with pytest.raises(InputError, match=r"column 'group': a group id must be text or a number, not list, in rows 7"):
        Hierarchy.from_persons(toy_persons, group="group", levels=["region"])


def test_totals_are_limited():
    from cocoviz.hierarchy import MAX_GROUPS, MAX_PERSONS

    assert MAX_GROUPS == 2**40 and MAX_PERSONS == 2**62
    # Each row within the limit, the sum not: once capped per row only.
    counts = pd.DataFrame({"r": ["a", "b"], "size": [1, 2], "n": [2**39, 2**39 + 1]})
    with pytest.raises(InputError, match=r"column 'n': 1,099,511,627,777 groups in all \(rows 0, 1\); at most 2\*\*40"):
        Hierarchy.from_counts(counts, size="size", count="n", levels=["r"])
    counts = pd.DataFrame({"r": ["a", "b"], "size": [2**40, 2**40], "n": [2**30, 2**30]})
    with pytest.raises(InputError, match=r"columns 'size' and 'n': more than 2\*\*62 = .* persons"):
        Hierarchy.from_counts(counts, size="size", count="n", levels=["r"])
    at_limit = pd.DataFrame({"r": ["a", "b"], "size": [1, 3], "n": [2**39, 2**39]})
    assert Hierarchy.from_counts(at_limit, size="size", count="n", levels=["r"]).groups(()) == 2**40


def test_every_error_is_in_the_family(toy_tree, toy_persons):
    with pytest.raises(ParameterError, match="levels must be a list"):
        Hierarchy.from_persons(toy_persons, group="group", levels="region")
    with pytest.raises(ParameterError, match="must be a column name"):
        Hierarchy.from_persons(toy_persons, group=["group"], levels=["region"])
    with pytest.raises(ParameterError, match="level must be between"):
        toy_tree.nodes("1")
    with pytest.raises(ParameterError, match="unknown level"):
        toy_tree.keep_levels(["nope"])
    with pytest.raises(ParameterError, match="a node is a sequence of labels"):
        toy_tree.histogram(5)
    with pytest.raises(InputError, match=r"column\(s\) \['size'\] appear more than once"):
        Hierarchy.from_groups(pd.DataFrame([[1, 2]], columns=["size", "size"]), size="size", levels=[])


# ------------------------------------------------- integer codes against the tuple reference
from hypothesis import strategies as st  # noqa: E402

from cocoviz.core.nodes import LabelColumns, NodeCodes  # noqa: E402
from cocoviz.core.shape import Shape  # noqa: E402

# Labels that sort differently as text and as numbers, non-ASCII ones and one ending in NUL.
_LABELS = st.sampled_from(["a", "b", "B", "10", "9", "1", "é", "a\x00", "z" * 3, "Ω", " x"])


def _reference(depth: int, leaf_paths: list[tuple], leaf_sizes: list[dict]) -> tuple[list, list, list]:
    """The tree as it was built from Python tuples, sets and dicts: nodes, parents and runs per level."""
    paths = [sorted({p[:lvl] for p in leaf_paths}) for lvl in range(depth + 1)]
    index = [{p: k for k, p in enumerate(ps)} for ps in paths]
    parents = [[]] + [[index[lvl - 1][p[:-1]] for p in paths[lvl]] for lvl in range(1, depth + 1)]
    runs = [[{} for _ in ps] for ps in paths]
    for p, sizes in zip(leaf_paths, leaf_sizes):
        for lvl in range(depth + 1):
            node = runs[lvl][index[lvl][p[:lvl]]]
            for size, count in sizes.items():
                node[size] = node.get(size, 0) + count
    return paths, parents, [[sorted((s, c) for s, c in node.items() if c) for node in level] for level in runs]


@st.composite
def _leaves(draw):
    depth = draw(st.integers(0, 4))
    paths = draw(st.lists(st.tuples(*[_LABELS] * depth), min_size=1, max_size=40))
    sizes = [draw(st.dictionaries(st.integers(0, 30), st.integers(1, 5), min_size=1, max_size=4)) for _ in paths]
    return depth, paths, sizes


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_leaves(), st.randoms(use_true_random=False))
def test_integer_codes_match_the_tuple_reference(leaves, rnd):
    depth, paths, sizes = leaves
    order = list(range(len(paths)))
    rnd.shuffle(order)
    # One row per (leaf, size), in a shuffled order and with repeated leaves.
    rows = [(paths[i], s, c) for i in order for s, c in sizes[i].items()]
    frame = pd.DataFrame(
        {
            **{f"l{j}": [r[0][j] for r in rows] for j in range(depth)},
            "size": [r[1] for r in rows],
            "count": [r[2] for r in rows],
        }
    )
    levels = [f"l{j}" for j in range(depth)]
    expected_paths, expected_parents, expected_runs = _reference(depth, paths, sizes)
    built = [Hierarchy.from_counts(frame, size="size", count="count", levels=levels)]
    if depth:
        categorical = frame.astype({c: "category" for c in levels})
        built.append(Hierarchy.from_counts(categorical, size="size", count="count", levels=levels))
    for tree in built:
        shape = Shape.of(tree)
        for lvl in range(depth + 1):
            assert tree.nodes(lvl) == expected_paths[lvl] == list(shape.paths[lvl])
            if lvl:
                assert tree.parents(lvl).tolist() == expected_parents[lvl] == list(shape.parents[lvl])
            runs = tree.runs(lvl)
            got = [list(zip(*(a.tolist() for a in runs.node(k)))) for k in range(runs.n_nodes)]
            assert got == expected_runs[lvl]
            assert shape.group_counts(lvl).tolist() == [sum(c for _, c in node) for node in expected_runs[lvl]]
            for k, path in enumerate(expected_paths[lvl]):
                assert tree.locate(path) == shape.locate(path) == (lvl, k)
                assert shape.paths[lvl][k] == path
                kids = [p for p in expected_paths[lvl + 1] if p[:-1] == path] if lvl < depth else []
                assert tree.children(path) == shape.children(path) == kids
        # The tuple form and back, and the shape as tuples, are the same shape.
        again = Shape.from_dict(shape.to_dict())
        assert again.same_as(shape) and shape.same_as(again)
        assert Shape(shape.levels, shape.paths, shape.parents, shape.groups, shape.public_groups).same_as(shape)
    if depth:
        with pytest.raises(KeyError):
            built[0].locate(("nowhere",))


def test_node_codes_refuse_paths_that_are_not_a_tree():
    with pytest.raises(ValueError, match="extend"):
        NodeCodes.from_paths([[()], [("a",)], [("b", "x")]], [[], [0], [0]])
    with pytest.raises(ParameterError, match="not the shape of a tree"):
        Shape(("s",), (((),), (("a",),)), ((), (1,)), ((1,), (1,)))


def test_label_columns_keep_equal_values_that_print_differently():
    frame = pd.DataFrame({"r": pd.Series([1, 1.0, "1"], dtype=object), "c": [0.0, -0.0, 2.5]})
    columns = LabelColumns.from_frame(frame, ["r", "c"])
    text = [tuple(str(columns.labels[j][columns.codes[j][i]]) for j in range(2)) for i in range(3)]
    assert text == [("1", "0.0"), ("1.0", "-0.0"), ("1", "2.5")]
    leaf, distinct = columns.distinct()
    assert leaf.tolist() == [0, 1, 2] and distinct.n == 3


def test_keep_levels_and_subtree_match_building_from_the_cut_table():
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame(
        {
            "s": rng.choice(["x", "y", "z"], n),
            "c": rng.choice(["1", "2", "10"], n),
            "t": rng.choice(["p", "q"], n),
            "size": rng.integers(0, 9, n),
            "count": rng.integers(1, 4, n),
        }
    )
    tree = Hierarchy.from_counts(frame, size="size", count="count", levels=["s", "c", "t"])
    for keep in (["s"], ["s", "t"], ["c"], ["c", "t"], []):
        direct = Hierarchy.from_counts(frame, size="size", count="count", levels=keep)
        cut = tree.keep_levels(keep)
        assert [cut.nodes(lvl) for lvl in range(cut.depth + 1)] == [
            direct.nodes(lvl) for lvl in range(direct.depth + 1)
        ]
        for lvl in range(cut.depth + 1):
            for a, b in zip((cut.runs(lvl).ptr, cut.runs(lvl).sizes), (direct.runs(lvl).ptr, direct.runs(lvl).sizes)):
                np.testing.assert_array_equal(a, b)
    part = tree.subtree(("y", "10"))
    rows = frame[(frame["s"] == "y") & (frame["c"] == "10")]
    direct = Hierarchy.from_counts(rows, size="size", count="count", levels=["t"])
    assert part.nodes(1) == direct.nodes(1)
    np.testing.assert_array_equal(part.runs(1).counts, direct.runs(1).counts)
    np.testing.assert_array_equal(part.histogram(()), direct.histogram(()))


@pytest.mark.parametrize(
    "labels",
    [["a", " ", "b", None], ["a", "", "b", "c"], ["a", None, " ", "b"], [1, "1", "b", "c"], ["a", True, "b", "c"]],
)
def test_categorical_label_columns_are_checked_like_text(labels):
    """Text categories are checked once per category; the refusal reads as for the same column as text."""
    messages = []
    for as_category in (False, True):
        df = pd.DataFrame({"state": pd.Series(labels, dtype=object), "size": [1, 2, 3, 4], "count": [1] * 4})
        if as_category:
            df["state"] = df["state"].astype("category")
        with pytest.raises(InputError) as err:
            Hierarchy.from_counts(df, size="size", count="count", levels=["state"])
        messages.append(str(err.value))
    assert messages[0] == messages[1]


# ------------------------------------------------------------------ names of nodes (issue 27, item 8)
_labels = st.lists(st.text(alphabet="ab/\\()rot", max_size=6), max_size=4)


@settings(max_examples=200, deadline=None)
@given(_labels, _labels)
def test_node_names_are_one_to_one_with_paths(a, b):
    from cocoviz.hierarchy import node_path

    assert node_path(node_label(a)) == tuple(a)
    assert (node_label(a) == node_label(b)) == (tuple(a) == tuple(b))


def test_a_label_with_the_separator_is_escaped():
    assert node_label(("a", "b/c")) == "a/b\\/c" != node_label(("a/b", "c")) == "a\\/b/c"
    assert node_label(("(root)",)) != node_label(())
