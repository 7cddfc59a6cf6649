"""Persons counted in an array indexed by the group id: the SQL path's hierarchy, and its refusals, exactly.

:mod:`cocoviz.hierarchy.ingest.dense` counts clean tables only and hands anything else to the SQL path, so
each bad table of ``test_row_order.BAD`` must be refused with the same message, counts and rows whichever
path saw it first, on a sorted file, a shuffled one and an Arrow frame; and a clean table must give the
same tree, in one pass or several, with or without the public groups table.
"""

from __future__ import annotations

from types import SimpleNamespace

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cocoviz.hierarchy import Hierarchy, tables
from cocoviz.hierarchy.ingest import _dense_kernels, dense, leaf_key
from cocoviz.hierarchy.tables import TableProblems
from tests.support.engine import assert_same_hierarchy as assert_same
from tests.unit.hierarchy.ingest.test_row_order import BAD, LEVELS, orders

OFF = 10**15  # MIN_ROWS past any table: the SQL path only


def refusal(source, listed) -> str:
    with pytest.raises(TableProblems) as caught:
        Hierarchy.from_persons(source, group="hh", levels=LEVELS, groups=listed)
    return str(caught.value)


@pytest.fixture
def taken(monkeypatch):
    """The results of every ``dense_runs`` call (None: handed to the SQL path)."""
    seen = []
    original = dense.dense_runs

    def spy(*args):
        seen.append(original(*args))
        return seen[-1]

    monkeypatch.setattr("cocoviz.hierarchy.ingest.aggregate.dense_runs", spy)
    return seen


@pytest.mark.parametrize("case", list(BAD))
@pytest.mark.parametrize("pass_ids", [10**9, 2])
def test_refusals_are_the_sql_paths(case, pass_ids, tmp_path, monkeypatch, taken):
    """The same message, counts and example rows with the array path on (in one pass or several) as off."""
    frame, listed = BAD[case]
    if case == "size":
        monkeypatch.setattr(tables, "MAX_GROUP_SIZE", 2)
    public = None if listed is None else orders(listed, tmp_path, "listed")
    sources = orders(frame, tmp_path, "persons")
    sources["arrow"] = pa.Table.from_pandas(frame, preserve_index=False)
    monkeypatch.setattr(dense, "PASS_IDS", pass_ids)
    for order, source in sources.items():
        groups = None if public is None else public.get(order, listed)
        monkeypatch.setattr(dense, "MIN_ROWS", OFF)
        expected = refusal(source, groups)
        monkeypatch.setattr(dense, "MIN_ROWS", 0)
        taken.clear()
        assert refusal(source, groups) == expected, order
        # The array path gave the table up (or never applied); a size over the limit is refused from its runs.
        assert taken in ([None], []) or (case == "size" and taken[0] is not None), order


def test_clean_tables_take_the_array_path(tmp_path, monkeypatch, taken):
    hh = np.concatenate([np.repeat(np.arange(100, 160), 3)[:-1], [150] * 9, [151] * 10])  # sizes 2, 3, 12, 13
    frame = pd.DataFrame({"hh": hh, "state": hh // 20, "county": hh // 5})
    listed = frame.drop_duplicates("hh")
    listed = pd.concat([listed, pd.DataFrame({"hh": [170], "state": [8], "county": [34]})])  # a group of 0
    monkeypatch.setattr(dense, "MIN_ROWS", OFF)
    expected = [Hierarchy.from_persons(frame, group="hh", levels=LEVELS, groups=g) for g in (None, listed)]
    monkeypatch.setattr(dense, "MIN_ROWS", 0)
    public = orders(listed, tmp_path, "listed")
    for order, source in orders(frame, tmp_path, "persons").items():
        for g, want in zip((None, public[order]), expected):
            taken.clear()
            assert_same(Hierarchy.from_persons(source, group="hh", levels=LEVELS, groups=g), want)
            assert len(taken) == 1 and taken[0] is not None, order
    assert expected[1].histogram((8, 34)).tolist() == [1]
    assert expected[0].histogram((7, 30)).tolist()[12:] == [1, 1]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n_groups=st.integers(1, 12),
    seed=st.integers(0, 99),
    listed=st.booleans(),
    pass_ids=st.integers(1, 40),
    spread=st.sampled_from([1, 4, 100]),
    extra=st.integers(0, 3),
)
def test_any_passes_give_the_sql_paths_hierarchy(
    n_groups, seed, listed, pass_ids, spread, extra, tmp_path_factory, monkeypatch
):
    """Random ids (negative too) and regions, groups listed with no person: the SQL path's tree, whether the
    ids are dense enough for the array path or not, in any number of passes."""
    rng = np.random.default_rng(seed)
    ids = rng.choice(np.arange(-30, 30), n_groups + extra, replace=False)
    hh = np.repeat(ids[:n_groups], rng.integers(1, 5, n_groups))
    county = (ids * 7) % 5
    frame = pd.DataFrame({"hh": hh, "state": (hh * 7) % 5 // 2, "county": (hh * 7) % 5})
    groups = pd.DataFrame({"hh": ids, "state": county // 2, "county": county}) if listed else None
    monkeypatch.setattr(dense, "MIN_ROWS", OFF)
    expected = Hierarchy.from_persons(frame, group="hh", levels=LEVELS, groups=groups)
    monkeypatch.setattr(dense, "MIN_ROWS", 0)
    monkeypatch.setattr(dense, "PASS_IDS", pass_ids)
    monkeypatch.setattr(dense, "SPREAD", spread)
    folder = tmp_path_factory.mktemp("dense")
    public = None if groups is None else orders(groups, folder, "listed")
    for order, source in orders(frame, folder, "persons").items():
        listed_file = None if public is None else public[order]
        assert_same(Hierarchy.from_persons(source, group="hh", levels=LEVELS, groups=listed_file), expected)


def test_missing_id_in_a_later_range_is_seen(tmp_path, monkeypatch):
    """In passes, a missing id is read by the first one (no range holds it) and refused as in one pass."""
    frame = pd.DataFrame(
        {"hh": pd.array([1, 1, 5, 9, None, 9], dtype="Int64"), "state": [1, 1, 1, 2, 2, 2], "county": 1}
    )
    source = orders(frame, tmp_path, "p")["shuffled"]
    monkeypatch.setattr(dense, "MIN_ROWS", OFF)
    expected = refusal(source, None)
    monkeypatch.setattr(dense, "MIN_ROWS", 0)
    monkeypatch.setattr(dense, "PASS_IDS", 3)
    assert "missing group id" in expected and refusal(source, None) == expected


def test_kernels_stop_at_the_first_unclean_row():
    empty = _dense_kernels.EMPTY
    state = np.array([[0, empty]] * 3, np.int64)
    ids, keys = np.array([10, 12, 10]), np.array([4, 5, 4])
    assert _dense_kernels.count_persons(ids, keys, 10, state, False)
    assert state.tolist() == [[2, 4], [0, empty], [1, 5]]
    assert not _dense_kernels.count_persons(np.array([12]), np.array([6]), 10, state, False)  # in two leaves
    assert not _dense_kernels.count_persons(np.array([13]), np.array([6]), 10, state, False)  # off range
    assert not _dense_kernels.count_persons(np.array([11]), np.array([6]), 10, state, True)  # not listed
    assert not _dense_kernels.list_groups(np.array([10]), np.array([4]), 10, state)  # listed twice


@pytest.mark.parametrize("seed", [0, 1])
def test_leaf_sizes_count_each_leafs_groups_of_each_size(seed):
    """Against pandas: thousands of leaves (the table grows from 4,096 slots), keys alike in their low bits."""
    rng = np.random.default_rng(seed)
    leaves = rng.choice(2**40, 5_000, replace=False) << 12
    state = np.stack([rng.integers(0, 14, 20_000), rng.choice(leaves, 20_000)], axis=1)
    state[rng.random(20_000) < 0.2, 1] = _dense_kernels.EMPTY
    keys, counts, large_keys, large_sizes = _dense_kernels.leaf_sizes(state, 8)
    used = pd.DataFrame(state[state[:, 1] != _dense_kernels.EMPTY], columns=["n", "k"])
    expected = used.groupby(["k", "n"]).size()
    small = pd.DataFrame(counts, index=keys).stack()
    small = small[small > 0]
    found = pd.concat([small, pd.Series(1, pd.MultiIndex.from_arrays([large_keys, large_sizes]))])
    found = found.groupby(level=[0, 1]).sum().sort_index()
    assert found.index.tolist() == expected.index.tolist() and found.tolist() == expected.tolist()
    assert len(keys) == len(set(keys)) == used.loc[used["n"] < 8, "k"].nunique()


def test_the_path_applies_to_integer_ids_in_a_dense_range(monkeypatch):
    key = leaf_key.LeafKey(["state"], [0], [3], rows=10, ids=(0, 39))
    monkeypatch.setattr(dense, "MIN_ROWS", 0)
    elsewhere = SimpleNamespace(db=SimpleNamespace(connection=object()))
    assert dense.dense_runs(elsewhere, None, "hh", key) is None  # not an embedded DuckDB
    table = SimpleNamespace(db=SimpleNamespace(connection=duckdb.connect()))
    for ids in [None, (0, 40), (-(2**62), 0)]:  # text ids, ids sparser than SPREAD x rows, beyond BIGINT math
        sparse = leaf_key.LeafKey(["state"], [0], [3], rows=10, ids=ids)
        assert dense.dense_runs(table, None, "hh", sparse) is None
