"""node_tables on integer codes equals its first, row-by-row form."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz.joint.domain import SIZE_EDGES, node_tables, size_classes


def _per_row_tables(table: pd.DataFrame, levels, edges=SIZE_EDGES) -> dict:
    """node_tables as first written: one Python tuple per row and level (the reference)."""
    n = len(edges)
    cls = size_classes(table["size"].to_numpy(), edges)
    values = table[["owners", "renters"]].to_numpy()
    labels = [table[c].astype(str).to_numpy() for c in levels]
    out = {}
    for depth in range(len(levels) + 1):
        keys = list(zip(*labels[:depth])) if depth else [()] * len(table)
        uniq = sorted(set(keys))
        index = {k: i for i, k in enumerate(uniq)}
        rows = np.fromiter((index[k] for k in keys), np.int64, len(keys))
        acc = np.zeros((len(uniq), n, 2), values.dtype)
        np.add.at(acc, (rows, cls), values)
        out.update({tuple(k): acc[i] for i, k in enumerate(uniq)})
    return out


def _assert_same(got: dict, expected: dict) -> None:
    assert list(got) == list(expected)
    for key, t in expected.items():
        assert got[key].dtype == t.dtype and np.array_equal(got[key], t)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["b", "a", "É", "a/b"]), st.integers(0, 3), st.integers(0, 12), st.integers(0, 5)),
        min_size=1,
        max_size=30,
    ),
    st.booleans(),
)
def test_node_tables_equal_the_per_row_form(rows, floats):
    table = pd.DataFrame(rows, columns=["state", "county", "size", "owners"])
    table["renters"] = table["owners"] * 2 + 1
    if floats:
        table[["owners", "renters"]] = table[["owners", "renters"]] * 0.5
        table["county"] = table["county"].astype("category")
    for levels in ([], ["state"], ["state", "county"], ["county", "state"]):
        _assert_same(node_tables(table, levels), _per_row_tables(table, levels))


@pytest.mark.parametrize("levels", [[], ["state"]])
def test_node_tables_of_an_empty_table(levels):
    table = pd.DataFrame({"state": pd.Series([], dtype=str), "size": [], "owners": [], "renters": []})
    _assert_same(node_tables(table, levels), _per_row_tables(table, levels))
