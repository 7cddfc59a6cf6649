"""Microdata in any row order: passes that spread the groups by id give the one-pass hierarchy and refusals.

A Parquet file out of group order cannot be cut into ranges of ids read once each; its groups are spread
over passes by their id instead (:func:`cocoviz.hierarchy.ingest.leaf_key._parts`).  Every check and
refusal must be exactly that of one pass, on a shuffled file and on a sorted one.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cocoviz.hierarchy import Hierarchy, tables
from cocoviz.hierarchy.ingest import leaf_key
from cocoviz.hierarchy.tables import TableProblems
from tests.support.engine import assert_same_hierarchy as assert_same

LEVELS = ["state", "county"]


def orders(frame: pd.DataFrame, folder: Path, name: str) -> dict[str, str]:
    """The rows as a Parquet file sorted by group id and as one in a random row order (small row groups)."""
    out = {}
    for order, rows in [
        ("sorted", frame.sort_values("hh", kind="stable", na_position="first")),
        ("shuffled", frame.sample(frac=1.0, random_state=1)),
    ]:
        path = folder / f"{name}_{order}.parquet"
        pq.write_table(pa.Table.from_pandas(rows.reset_index(drop=True), preserve_index=False), path, row_group_size=2)
        out[order] = str(path)
    return out


def _messages(source, listed) -> str:
    """The refusal, each problem's example rows sorted: the engine returns them in no set order (it does not
    keep the rows' order, so as not to hold them), and at most 10 are shown, here all of them."""
    with pytest.raises(TableProblems) as caught:
        Hierarchy.from_persons(source, group="hh", levels=LEVELS, groups=listed)
    return re.sub(
        r"\([^()]*=[^()]*\)(?:, \([^()]*=[^()]*\))*",
        lambda m: ", ".join(sorted(re.findall(r"\([^()]*\)", m.group(0)))),
        str(caught.value),
    )


CODED = pd.DataFrame({"hh": [1, 1, 2, 3, 3, 3], "state": [1, 1, 1, 2, 2, 2], "county": [1, 1, 2, 3, 3, 3]})
LISTED = CODED.drop_duplicates("hh")
BAD = {
    "split": (CODED.assign(county=[1, 2, 2, 3, 3, 3]), None),
    "null": (CODED.assign(state=pd.array([1, None, 1, 2, 2, 2], dtype="Int64")), None),
    "null group": (CODED.assign(hh=pd.array([1, 1, None, 3, 3, 3], dtype="Int64")), None),
    "null group listed": (CODED.assign(hh=pd.array([1, 1, None, 3, 3, 3], dtype="Int64")), LISTED),
    "size": (CODED, None),
    "unknown": (CODED, LISTED.iloc[[0, 1]]),
    "moved": (CODED, LISTED.assign(county=[1, 2, 4])),
    "listed twice": (CODED, pd.concat([LISTED, LISTED.iloc[[1]]])),
    "null and split": (
        CODED.assign(state=pd.array([1, 1, 1, 2, None, 2], dtype="Int64"), county=[1, 1, 2, 3, 3, 4]),
        None,
    ),
    "negative ids": (CODED.assign(hh=[-7, -7, 2, -3, -3, 3]), LISTED.assign(hh=[-7, 2, -3])),
    "text ids": (CODED.assign(hh=["a", "a", "b", "c", "c", "d"], county=[1, 2, 2, 3, 3, 3]), None),
    "text ids listed": (
        CODED.assign(hh=["a", "a", "b", "c", "c", "d"]),
        LISTED.assign(hh=["a", "b", "c"], county=[1, 2, 4]),
    ),
}


def _spread_everywhere(monkeypatch, rows: int) -> None:
    """Passes of ``rows`` rows, spread by id in every form (as a file out of group order takes them)."""
    monkeypatch.setattr(leaf_key, "PASS_ROWS", rows)
    monkeypatch.setattr(leaf_key, "SPREAD_PASS_ROWS", rows)
    monkeypatch.setattr(leaf_key, "_read_once", lambda *args: False)


@pytest.mark.parametrize("case", list(BAD))
def test_spread_passes_refuse_as_one_pass_does(case, tmp_path, monkeypatch):
    """The same message, counts and example rows in spread passes as in one, on a sorted and a shuffled file."""
    frame, listed = BAD[case]
    if case == "size":
        monkeypatch.setattr(tables, "MAX_GROUP_SIZE", 2)
    public = None if listed is None else orders(listed, tmp_path, "listed")
    sources = orders(frame, tmp_path, "persons")
    sources["arrow"] = pa.Table.from_pandas(frame, preserve_index=False)
    for order, source in sources.items():
        groups = None if public is None else public.get(order, listed)
        monkeypatch.setattr(leaf_key, "PASS_ROWS", 10**9)
        monkeypatch.setattr(leaf_key, "SPREAD_PASS_ROWS", 10**9)
        expected = _messages(source, groups)
        _spread_everywhere(monkeypatch, 2)
        assert _messages(source, groups) == expected, order


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n_groups=st.integers(1, 12),
    seed=st.integers(0, 99),
    listed=st.booleans(),
    rows=st.integers(1, 9),
    text=st.booleans(),
)
def test_spread_passes_give_the_one_pass_hierarchy(n_groups, seed, listed, rows, text, tmp_path_factory, monkeypatch):
    rng = np.random.default_rng(seed)
    hh = np.repeat(rng.choice(np.arange(-50, 50), n_groups, replace=False), rng.integers(1, 5, n_groups))
    county = (hh * 7) % 5
    frame = pd.DataFrame({"hh": hh.astype(str) if text else hh, "state": county // 2, "county": county})
    groups = frame.drop_duplicates("hh") if listed else None
    monkeypatch.setattr(leaf_key, "PASS_ROWS", 10**9)
    expected = Hierarchy.from_persons(frame, group="hh", levels=LEVELS, groups=groups)
    _spread_everywhere(monkeypatch, rows)
    folder = tmp_path_factory.mktemp("order")
    public = None if groups is None else orders(groups, folder, "listed")
    for order, source in orders(frame, folder, "persons").items():
        listed_file = None if public is None else public[order]
        assert_same(Hierarchy.from_persons(source, group="hh", levels=LEVELS, groups=listed_file), expected)


@pytest.mark.parametrize("integer", [True, False])
def test_spread_puts_every_id_in_exactly_one_pass(integer):
    """Each id, in any integer type, as text, or missing, meets exactly one of the conditions."""
    con = duckdb.connect()
    values = "(NULL), (-9), (-1), (0), (1), (5), (12), (9223372036854775807)"
    con.execute(f"CREATE TABLE t AS SELECT * FROM (VALUES {values}) AS v(x)")
    kinds = ["BIGINT", "INTEGER", "HUGEINT"] if integer else ["VARCHAR"]
    for n in [2, 3, 7]:
        parts = leaf_key._spread('p."x"', n, integer)
        assert len(parts) == n
        for kind in kinds:
            rel = f"(SELECT CAST(x AS {kind}) AS x FROM t WHERE x IS NULL OR x BETWEEN -2147483648 AND 2147483647"
            rel += " OR " + ("TRUE" if kind != "INTEGER" else "FALSE") + ")"
            hits = " + ".join(f"CAST(COALESCE({c}, FALSE) AS INTEGER)" for c in parts)
            counts = con.execute(f"SELECT {hits} AS k FROM {rel} AS p").fetchnumpy()["k"]
            assert (counts == 1).all(), (n, kind)
    assert leaf_key._spread('p."x"', 1, integer) == ["TRUE"]


def test_passes_follow_the_row_order(tmp_path, monkeypatch):
    """A file in group order takes ranges of ids, one in any other order (or a frame) spread passes, each
    giving the one-pass hierarchy; below the pass sizes, one pass."""
    hh = np.repeat(np.arange(200), 2)
    frame = pd.DataFrame({"hh": hh, "state": hh // 50, "county": hh // 10})
    files = orders(frame, tmp_path, "p")
    expected = Hierarchy.from_persons(frame, group="hh", levels=LEVELS)
    monkeypatch.setattr(leaf_key, "PASS_ROWS", 50)  # 400 rows: 8 ranges where they pay
    monkeypatch.setattr(leaf_key, "SPREAD_PASS_ROWS", 150)  # else 3 spread passes
    taken = []
    parts = leaf_key._parts
    monkeypatch.setattr(leaf_key, "_parts", lambda *args: taken.append(parts(*args)) or parts(*args))
    for source in (files["sorted"], files["shuffled"], pa.Table.from_pandas(frame, preserve_index=False)):
        assert_same(Hierarchy.from_persons(source, group="hh", levels=LEVELS), expected)
    assert len(taken[0]) == 8 and ">=" in taken[0][1]
    assert [len(p) for p in taken[1:]] == [3, 3] and all("%" in p[1] for p in taken[1:])
    monkeypatch.setattr(leaf_key, "SPREAD_PASS_ROWS", 10**9)
    taken.clear()
    assert_same(Hierarchy.from_persons(files["shuffled"], group="hh", levels=LEVELS), expected)
    assert taken == [["TRUE"]]
