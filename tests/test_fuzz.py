"""Fuzzing the table side: random and adversarial tables through the three builders and the upload loaders.

Every input is either refused with a :class:`~cocoviz.errors.CocovizError` whose message names the
problem's column, or gives a valid tree (G >= 1 in every leaf, every parent the sum of its children)
whose release is consistent.  Parameters (ε, p, K, seed) are fuzzed elsewhere.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cocoviz
from cocoviz.errors import CocovizError
from cocoviz.hierarchy import Hierarchy, aggregate_runs
from cocoviz.io import read_table, table_to_hierarchy

LEVELS = ["L1", "L2"]
#: Messages that are about the whole table rather than one column.
_TABLE_WIDE = ("empty region(s) with no groups", "table is empty")

_adversarial_numbers = st.sampled_from(
    [
        0,
        1,
        2,
        3,
        -1,
        -(2**31),
        2**31,
        2**40,
        2**40 + 1,
        2**62,
        2**63 - 1,
        math.nan,
        math.inf,
        -math.inf,
        1.5,
        -0.0,
        True,
        False,
        None,
        "3",
        " 4",
        "x",
        "",
        "1e3",
        "0x10",
        1 + 2j,
        [1],
    ]
)
numbers = st.one_of(st.integers(0, 6), st.integers(0, 6), _adversarial_numbers)
labels = st.one_of(
    st.sampled_from(["a", "b", "é", "東京", "a b", "1"]),
    st.sampled_from(["", " ", None, math.nan, 1, 0, -1, 1.0, True, ["a"], "🙂"]),
)
# CSV cells are text: the same adversarial values as they come out of a file.
cells = st.one_of(
    st.sampled_from(["a", "b", "é", "東京", "0", "1", "2", "3"]),
    st.sampled_from(
        [
            "",
            " ",
            "-1",
            "2147483648",
            "4611686018427387904",
            "1099511627777",
            "nan",
            "inf",
            "1.5",
            "True",
            "x,y",
            '"q"',
            "🙂",
            "1e3",
        ]
    ),
)


def _column(values: list) -> pd.Series:
    """A column as pandas would hold it: typed when the values share a type, object otherwise."""
    try:
        return pd.Series(values)
    except (TypeError, ValueError):
        return pd.Series(values, dtype=object)


@st.composite
def tables(draw, value_columns: tuple[str, ...], value_cells=numbers, label_cells=labels, max_rows: int = 8):
    depth = draw(st.integers(0, len(LEVELS)))
    n = draw(st.integers(0, max_rows))
    data = {c: _column([draw(label_cells) for _ in range(n)]) for c in LEVELS[:depth]}
    for c in value_columns:
        data[c] = _column([draw(value_cells) for _ in range(n)])
    return pd.DataFrame(data), LEVELS[:depth]


def check_refusal(exc: CocovizError, columns: list[str]) -> None:
    message = str(exc)
    assert message.strip()
    assert any(f"'{c}'" in message for c in columns) or any(w in message for w in _TABLE_WIDE), message


def check_tree(tree: Hierarchy, methods: list[str]) -> None:
    leaves = tree.runs(tree.depth)
    assert (leaves.groups() >= 1).all()
    for level in range(tree.depth, 0, -1):
        below, above = tree.runs(level), tree.runs(level - 1)
        summed = aggregate_runs(tree.parents(level)[below.node_ids()], below.sizes, below.counts, above.n_nodes)
        np.testing.assert_array_equal(summed.ptr, above.ptr)
        np.testing.assert_array_equal(summed.sizes, above.sizes)
        np.testing.assert_array_equal(summed.counts, above.counts)
    # A release only where it stays small: Hg expands every group, Hc is as long as K.
    if tree.max_size <= 64 and tree.groups(()) <= 5_000:
        release = cocoviz.estimate(
            tree,
            epsilons=[1.0] * (tree.depth + 1),
            methods=methods[: tree.depth + 1],
            max_size=max(tree.max_size, 1),
            seed=0,
        )
        assert release.is_consistent()


methods = st.lists(st.sampled_from(["Hc", "Hg"]), min_size=len(LEVELS) + 1, max_size=len(LEVELS) + 1)


@settings(max_examples=120)
@given(tables(("size", "count")), methods)
def test_from_counts(table, mix):
    df, levels = table
    try:
        tree = Hierarchy.from_counts(df, size="size", count="count", levels=levels)
    except CocovizError as exc:
        check_refusal(exc, [*levels, "size", "count"])
        return
    assert tree.public_groups
    check_tree(tree, mix)


@settings(max_examples=120)
@given(tables(("size",)), methods)
def test_from_groups(table, mix):
    df, levels = table
    try:
        tree = Hierarchy.from_groups(df, size="size", levels=levels)
    except CocovizError as exc:
        check_refusal(exc, [*levels, "size"])
        return
    assert tree.groups(()) == len(df)
    check_tree(tree, mix)


group_ids = st.one_of(st.integers(0, 4), st.sampled_from(["1", "g", "", None, math.nan, True, 1.0, ["x"], "é"]))


@settings(max_examples=120)
@given(tables(("gid",), value_cells=group_ids), st.booleans(), methods)
def test_from_persons(table, with_groups, mix):
    df, levels = table
    groups = None
    if with_groups and len(df):
        # A public groups table from the persons' own (group, region) pairs, with one extra empty group and,
        # sometimes, repeated ids: whatever the persons table holds.
        groups = df[["gid", *levels]].drop_duplicates(subset=["gid"]) if df["gid"].map(_hashable).all() else df
        groups = pd.concat([groups, groups.iloc[:1].assign(gid="extra")], ignore_index=True)
    try:
        tree = Hierarchy.from_persons(df, group="gid", levels=levels, groups=groups)
    except CocovizError as exc:
        check_refusal(exc, [*levels, "gid"])
        return
    assert tree.public_groups == (groups is not None)
    assert tree.persons(()) == len(df)
    check_tree(tree, mix)


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


@settings(max_examples=120)
@given(
    tables(("size", "count", "gid"), value_cells=cells, label_cells=cells),
    st.sampled_from(["persons", "groups", "counts"]),
    methods,
)
def test_csv_uploads(table, form, mix):
    df, levels = table
    data = df.to_csv(index=False).encode()
    try:
        frame = read_table(data, filename="fuzz.csv")
    except CocovizError as exc:
        assert str(exc).startswith("fuzz.csv")
        return
    try:
        tree = table_to_hierarchy(frame, form=form, levels=levels, group="gid", name="fuzz.csv")
    except CocovizError as exc:
        assert str(exc).startswith("fuzz.csv")
        check_refusal(exc, [*levels, *{"persons": ["gid"], "groups": ["size"], "counts": ["size", "count"]}[form]])
        return
    check_tree(tree, mix)


@pytest.mark.parametrize("value", [True, 1 + 1j, [3], math.nan, math.inf, 2**62])
def test_one_bad_count_is_named(value):
    df = pd.DataFrame({"L1": ["a", "b"], "size": [1, 2], "count": pd.Series([1, value], dtype=object)})
    with pytest.raises(CocovizError, match=r"column 'count'.*rows 1"):
        Hierarchy.from_counts(df, size="size", count="count", levels=["L1"])
