"""Every source form (frames, Parquet / CSV files, globs, partitioned folders, SQL) gives the hierarchy
the same rows give as a pandas frame, and every bad input is refused from every form, rows named.

The PostgreSQL cases need the server scripts/test.sh starts (COCOVIZ_TEST_POSTGRES); without it they skip.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cocoviz.hierarchy import Hierarchy, tables
from cocoviz.hierarchy.ingest import aggregate, leaf_key, sql
from cocoviz.hierarchy.tables import TableProblems
from tests.support.engine import assert_same_hierarchy as assert_same

POSTGRES = os.environ.get("COCOVIZ_TEST_POSTGRES")
needs_postgres = pytest.mark.skipif(
    POSTGRES is None, reason="no PostgreSQL: COCOVIZ_TEST_POSTGRES is set by scripts/test.sh, which starts one"
)
LEVELS = ["state", "county"]
_names = itertools.count()


def forms(frame: pd.DataFrame, folder: Path, postgres: bool = True) -> dict[str, object]:
    """The same rows in every source form."""
    k = next(_names)
    out: dict[str, object] = {
        "polars": pl.from_pandas(frame),
        "arrow": pa.Table.from_pandas(frame, preserve_index=False),
    }
    one = folder / f"t{k}.parquet"
    frame.to_parquet(one, index=False)
    out["parquet"] = str(one)
    parts = folder / f"glob{k}"
    parts.mkdir()
    half = len(frame) // 2
    frame.iloc[:half].to_parquet(parts / "a.parquet", index=False)
    frame.iloc[half:].to_parquet(parts / "b.parquet", index=False)
    out["glob"] = str(parts / "*.parquet")
    if frame["state"].notna().all():
        hive = folder / f"hive{k}"
        frame.to_parquet(hive, partition_cols=["state"], index=False)
        out["partitioned"] = hive
    csv = folder / f"t{k}.csv"
    frame.to_csv(csv, index=False)
    out["csv"] = str(csv)
    con = duckdb.connect()
    con.register("rows", frame)
    con.execute(f"CREATE TABLE t{k} AS SELECT * FROM rows")
    out["duckdb sql"] = sql(con, f"t{k}")
    if postgres and POSTGRES is not None:
        out["postgresql"] = sql(POSTGRES, _to_postgres(frame, f"t{k}"))
    return out


def _to_postgres(frame: pd.DataFrame, name: str) -> str:
    import psycopg

    types = {c: "bigint" if pd.api.types.is_integer_dtype(frame[c].dtype) else "text" for c in frame.columns}
    with psycopg.connect(POSTGRES, autocommit=True) as con:
        con.execute(f"DROP TABLE IF EXISTS {name}")
        con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {t}' for c, t in types.items())})")
        with con.cursor().copy(f"COPY {name} FROM STDIN") as copy:
            for row in frame.itertuples(index=False):
                copy.write_row([None if pd.isna(v) else v for v in row])
    return name


@st.composite
def persons_tables(draw) -> pd.DataFrame:
    """A valid persons table: every group in one county of one state; integer or text labels."""
    n_groups = draw(st.integers(1, 8))
    county = draw(st.lists(st.integers(0, 4), min_size=n_groups, max_size=n_groups))
    sizes = draw(st.lists(st.integers(1, 4), min_size=n_groups, max_size=n_groups))
    hh = np.repeat(np.arange(n_groups) * 7 + 3, sizes)
    c = np.repeat(county, sizes)
    frame = pd.DataFrame({"hh": hh, "state": c // 2, "county": c})
    if draw(st.booleans()):
        frame["state"] = "s" + frame["state"].astype(str)
    return frame.sample(frac=1, random_state=draw(st.integers(0, 9))).reset_index(drop=True)


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frame=persons_tables())
def test_every_source_gives_the_frames_hierarchy(frame, tmp_path_factory):
    expected = Hierarchy.from_persons(frame, group="hh", levels=LEVELS)
    for name, source in forms(frame, tmp_path_factory.mktemp("src")).items():
        got = Hierarchy.from_persons(source, group="hh", levels=LEVELS)
        assert_same(got, expected), name


@pytest.mark.slow
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frame=persons_tables(), extra=st.integers(0, 3))
def test_public_groups_from_any_source(frame, extra, tmp_path_factory):
    listed = frame.drop_duplicates("hh")[["hh", *LEVELS]]
    empty = pd.DataFrame({"hh": 1000 + np.arange(extra), "county": np.arange(extra)})
    empty["state"] = listed["state"].iloc[0]
    listed = pd.concat([listed, empty[["hh", *LEVELS]]], ignore_index=True)
    expected = Hierarchy.from_persons(frame, group="hh", levels=LEVELS, groups=listed)
    folder = tmp_path_factory.mktemp("pub")
    people, public = forms(frame, folder), forms(listed, folder)
    for name in people:
        got = Hierarchy.from_persons(people[name], group="hh", levels=LEVELS, groups=public[name])
        assert_same(got, expected), name
    # The groups table from another place than the persons: a CSV file, or a pandas frame.
    for name in people:
        got = Hierarchy.from_persons(people[name], group="hh", levels=LEVELS, groups=public["csv"])
        assert_same(got, expected), name
        got = Hierarchy.from_persons(people[name], group="hh", levels=LEVELS, groups=listed)
        assert_same(got, expected), name


def test_groups_and_counts_from_files(tmp_path):
    groups = pd.DataFrame({"state": ["a", "a", "b", "b"], "size": [4, 1, 2, 0]})
    counts = pd.DataFrame({"state": ["a", "a", "b", "b"], "size": [4, 1, 2, 2], "n": [3, 2, 1, 0]})
    for frame, build in [
        (groups, lambda s: Hierarchy.from_groups(s, size="size", levels=["state"])),
        (counts, lambda s: Hierarchy.from_counts(s, size="size", count="n", levels=["state"])),
    ]:
        expected = build(frame)
        for name, source in forms(frame, tmp_path, postgres=False).items():
            if name != "partitioned":
                assert_same(build(source), expected), name


GOOD = pd.DataFrame({"hh": [1, 1, 2, 3, 3, 3], "state": ["a", "a", "a", "b", "b", "b"], "county": [1, 1, 2, 3, 3, 3]})
BAD = {
    "split": (GOOD.assign(county=[1, 2, 2, 3, 3, 3]), None, r"group\(s\) appear in more than one region.*hh='?1"),
    "null": (GOOD.assign(state=["a", None, "a", "b", "b", "b"]), None, r"missing region label.*state=null"),
    "size": (GOOD, None, r"group size too large in 1 groups"),
    "unknown": (GOOD, GOOD.iloc[[0, 2]], r"not in the groups table.*hh='?3"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_refused_from_every_source(case, tmp_path, monkeypatch):
    frame, listed, pattern = BAD[case]
    if case == "size":
        monkeypatch.setattr(tables, "MAX_GROUP_SIZE", 2)
    people = forms(frame, tmp_path)
    public = forms(listed, tmp_path) if listed is not None else {}
    for name, source in people.items():
        with pytest.raises(TableProblems, match=re.compile(pattern, re.S)):
            Hierarchy.from_persons(source, group="hh", levels=LEVELS, groups=public.get(name))


def test_a_label_column_of_another_type_is_refused():
    frame = pa.table({"hh": [1, 2], "state": [True, False]})
    with pytest.raises(TableProblems, match="region label must be text or a number, not BOOLEAN"):
        Hierarchy.from_persons(frame, group="hh", levels=["state"])


def test_missing_file_and_bad_source():
    with pytest.raises(ValueError, match="no such file"):
        Hierarchy.from_persons("/nonexistent/persons.parquet", group="hh", levels=[])
    with pytest.raises(ValueError, match="postgresql:// URL"):
        sql("mysql://x", "t")


@pytest.mark.postgres
@needs_postgres
def test_postgres_query_and_error_named():
    name = _to_postgres(GOOD, "persons_query")
    persons = sql(POSTGRES, query=f"SELECT * FROM {name} WHERE state = 'a'")
    tree = Hierarchy.from_persons(persons, group="hh", levels=LEVELS)
    assert tree.groups(()) == 2
    with pytest.raises(ValueError, match="nosuchtable"):
        Hierarchy.from_persons(sql(POSTGRES, "nosuchtable"), group="hh", levels=LEVELS)


def test_a_label_of_two_types_is_refused(tmp_path):
    """1 and "1": in one pandas column, or in two files of a glob or folder (DuckDB would unite them)."""
    with pytest.raises(TableProblems, match="print as the same region label"):
        Hierarchy.from_persons(pd.DataFrame({"hh": [1, 2], "county": [1, "1"]}), group="hh", levels=["county"])
    pd.DataFrame({"hh": [1, 2], "county": [1, 2]}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"hh": [3, 4], "county": ["1", "x"]}).to_parquet(tmp_path / "b.parquet")
    for source in [str(tmp_path / "*.parquet"), tmp_path]:
        with pytest.raises(TableProblems, match=r"column 'county': a column must have one type in every file.*INT64"):
            Hierarchy.from_persons(source, group="hh", levels=["county"])


def test_a_database_url_alone_says_how_to_name_its_table():
    with pytest.raises(ValueError, match=r"cocoviz.sql\(url, table\) or give cocoviz.sql\(url, query=...\)"):
        Hierarchy.from_persons("postgresql://me@/census", group="hh", levels=[])


def test_bad_groups_and_counts_tables_are_refused_from_files(tmp_path, monkeypatch):
    groups = pd.DataFrame({"state": ["a", None, " ", "b"], "size": ["1", "-2", "abc", "2.5"]})
    groups.to_csv(tmp_path / "g.csv", index=False)
    with pytest.raises(TableProblems) as refused:
        Hierarchy.from_groups(str(tmp_path / "g.csv"), size="size", levels=["state"])
    for pattern in ["missing region label", "not a number, in 1 rows: .*'abc'", "negative group size", "fractional"]:
        assert re.search(pattern, str(refused.value)), pattern
    assert "empty region label" in str(refused.value)
    counts = pa.table({"state": ["a", "b"], "size": [1, 3], "n": [2, -1]})
    with pytest.raises(TableProblems, match=r"negative number of groups, in 1 rows: \(state='b', size=3, n=-1\)"):
        Hierarchy.from_counts(counts, size="size", count="n", levels=["state"])
    monkeypatch.setattr(tables, "MAX_GROUP_SIZE", 2)
    with pytest.raises(TableProblems, match="group size too large"):
        Hierarchy.from_counts(
            counts.slice(0, 1).set_column(1, "size", pa.array([3])), size="size", count="n", levels=["state"]
        )


# Integer labels take the one-key path (cocoviz/io/leaf_key.py): every check again, from every source.
CODED = GOOD.assign(state=[1, 1, 1, 2, 2, 2])
LISTED = CODED.drop_duplicates("hh")
BAD_CODES = {
    "split": (CODED.assign(county=[1, 2, 2, 3, 3, 3]), None, r"1 group\(s\) appear in more than one region, in 2 rows"),
    "null": (
        CODED.assign(state=pd.array([1, None, 1, 2, 2, 2], dtype="Int64")),
        None,
        r"column 'state': missing region label, in 1 rows: \(hh='?1'?, state=null, county='?1'?\)",
    ),
    "null group": (
        CODED.assign(hh=pd.array([1, 1, None, 3, 3, 3], dtype="Int64")),
        None,
        r"column 'hh': missing group id, in 1 rows: \(hh=null, state='?1'?, county='?2'?\)",
    ),
    "size": (CODED, None, r"group size too large in 1 groups \(largest 3\)"),
    "unknown": (CODED, LISTED.iloc[[0, 1]], r"group\(s\) not in the groups table, in 3 rows: \(hh='?3'?"),
    "moved": (
        CODED,
        LISTED.assign(county=[1, 2, 4]),
        r"persons placed in another region than their group's in the groups table, in 3 rows: \(hh='?3'?",
    ),
    "listed twice": (CODED, pd.concat([LISTED, LISTED.iloc[[1]]]), r"1 group id\(s\) listed more than once, in 2 rows"),
    # A missing label makes the first query's key a sentinel; the group's other checks must still be counted.
    "null and split": (
        CODED.assign(state=pd.array([1, 1, 1, 2, None, 2], dtype="Int64"), county=[1, 1, 2, 3, 3, 4]),
        None,
        r"column 'state': missing region label, in 1 rows: \(hh='?3'?, state=null.*"
        r"1 group\(s\) appear in more than one region, in 3 rows",
    ),
    "null and moved": (
        CODED.assign(state=pd.array([1, 1, 1, 2, None, 2], dtype="Int64")),
        LISTED.assign(county=[1, 2, 4]),
        r"column 'state': missing region label, in 1 rows.*"
        r"persons placed in another region than their group's in the groups table, in 3 rows: \(hh='?3'?",
    ),
    "listed null": (
        CODED,
        LISTED.assign(county=pd.array([1, None, 3], dtype="Int64")),
        r"groups table, column 'county': missing region label, in 1 rows: \(hh='?2'?, state='?1'?, county=null\)",
    ),
}


@pytest.mark.parametrize("case", list(BAD_CODES))
def test_bad_input_with_integer_labels_is_refused_from_every_source(case, tmp_path, monkeypatch):
    frame, listed, pattern = BAD_CODES[case]
    if case == "size":
        monkeypatch.setattr(tables, "MAX_GROUP_SIZE", 2)
    keyed = []
    of = aggregate.LeafKey.of
    monkeypatch.setattr(aggregate.LeafKey, "of", lambda *a: keyed.append(of(*a)) or keyed[-1])
    people = forms(frame, tmp_path)
    public = forms(listed, tmp_path) if listed is not None else {}
    for name, source in people.items():
        keyed.clear()
        with pytest.raises(TableProblems, match=re.compile(pattern, re.S)):
            Hierarchy.from_persons(source, group="hh", levels=LEVELS, groups=public.get(name))
        # Integer labels take one key; CSV values and a folder's partition values are text.
        assert keyed[0] is not None if name not in {"csv", "partitioned"} else not keyed, name


@pytest.mark.parametrize("span, low", [(7, -5), (2**40, -(2**20)), (2**61, -(2**62)), (2**63 - 1, 0)])
def test_negative_and_wide_integer_labels(span, low, tmp_path):
    """Labels too wide for one BIGINT key take the per-level path; both give the frame's hierarchy."""
    frame = CODED.assign(state=[0, 0, 0, span, span, span], county=[low, low, 2**40, -low, -low, -low])
    for groups in [None, frame.drop_duplicates("hh")]:
        expected = Hierarchy.from_persons(frame, group="hh", levels=LEVELS, groups=groups)
        for name, source in forms(frame, tmp_path, postgres=False).items():
            if name != "csv":
                got = Hierarchy.from_persons(source, group="hh", levels=LEVELS, groups=groups)
                assert_same(got, expected), name


def test_sizes_past_the_small_columns_and_empty_groups_on_the_keyed_path(tmp_path):
    """Sizes 0 .. 7 are counted in columns per leaf, larger ones in rows of their own: both come back whole."""
    sizes = np.array([1, 7, 8, 9, 20, 3, 8, 1])
    hh = np.repeat(np.arange(len(sizes)), sizes)
    county = np.repeat([1, 1, 1, 2, 2, 3, 3, 3], sizes)
    frame = pd.DataFrame({"hh": hh, "state": county // 2, "county": county})
    listed = frame.drop_duplicates("hh")
    listed = pd.concat([listed, pd.DataFrame({"hh": [50, 51], "state": [0, 1], "county": [1, 2]})], ignore_index=True)
    for groups in [None, listed]:
        expected = Hierarchy.from_persons(frame, group="hh", levels=LEVELS, groups=groups)
        got = Hierarchy.from_persons(pa.Table.from_pandas(frame), group="hh", levels=LEVELS, groups=groups)
        assert_same(got, expected)
    np.testing.assert_array_equal(got.histogram((0, 1)), [1, 1, 0, 0, 0, 0, 0, 1, 1])
    assert got.histogram((1, 2))[[0, 9, 20]].tolist() == [1, 1, 1]


@pytest.mark.parametrize("listed", [None, LISTED])
def test_a_missing_integer_label_is_not_also_a_group_in_two_leaves(listed):
    """The first query keys a missing label with a sentinel; the group's other rows are in one leaf, so the
    refusal names the missing label alone (the exact second query), not also a split or moved group."""
    frame = CODED.assign(state=pd.array([1, None, 1, 2, 2, 2], dtype="Int64"))
    with pytest.raises(TableProblems) as caught:
        Hierarchy.from_persons(pa.Table.from_pandas(frame), group="hh", levels=LEVELS, groups=listed)
    assert "missing region label" in str(caught.value)
    assert "more than one region" not in str(caught.value)
    assert "another region" not in str(caught.value)


# Large tables with integer group ids are grouped in passes, each over a range of ids.
def _messages(source, listed) -> str:
    with pytest.raises(TableProblems) as caught:
        Hierarchy.from_persons(source, group="hh", levels=LEVELS, groups=listed)
    return str(caught.value)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(BAD_CODES))
def test_passes_refuse_as_one_pass_does(case, tmp_path, monkeypatch):
    """Every check counted in passes gives the same message, counts and example rows as in one pass."""
    frame, listed, _ = BAD_CODES[case]
    if case == "size":
        monkeypatch.setattr(tables, "MAX_GROUP_SIZE", 2)
    public = {} if listed is None else forms(listed, tmp_path, postgres=False)
    monkeypatch.setattr(leaf_key, "_read_once", lambda *args: True)  # passes in every form, read in order or not
    for name, source in forms(frame, tmp_path, postgres=False).items():
        monkeypatch.setattr(leaf_key, "PASS_ROWS", 10**9)
        expected = _messages(source, public.get(name))
        monkeypatch.setattr(leaf_key, "PASS_ROWS", 2)
        assert _messages(source, public.get(name)) == expected, name


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frame=persons_tables(), listed=st.booleans(), rows=st.integers(1, 7))
def test_passes_give_the_one_pass_hierarchy(frame, listed, rows, tmp_path_factory, monkeypatch):
    frame["state"] = frame["state"].astype(str).str.lstrip("s").astype(int)  # integer labels: the keyed path
    groups = frame.drop_duplicates("hh") if listed else None
    monkeypatch.setattr(leaf_key, "PASS_ROWS", 10**9)
    expected = Hierarchy.from_persons(frame, group="hh", levels=LEVELS, groups=groups)
    monkeypatch.setattr(leaf_key, "PASS_ROWS", rows)
    monkeypatch.setattr(leaf_key, "_read_once", lambda *args: True)  # passes in every form, read in order or not
    for name, source in forms(frame, tmp_path_factory.mktemp("passes"), postgres=False).items():
        assert_same(Hierarchy.from_persons(source, group="hh", levels=LEVELS, groups=groups), expected), name


def test_passes_are_taken_only_where_the_parquet_footers_show_group_order(tmp_path, monkeypatch):
    """Each pass rescans what its range cannot skip: a file out of group order or a frame takes one pass
    (passes there would read every row once per pass); a file in group order takes several.  (A CSV file's
    labels are text, which never take the keyed path at all.)"""
    import pyarrow.parquet as pq

    hh = np.repeat(np.arange(200), 2)
    frame = pd.DataFrame({"hh": hh, "state": hh // 50, "county": hh // 10})
    shuffled = frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "ordered.parquet", row_group_size=20)
    pq.write_table(pa.Table.from_pandas(shuffled, preserve_index=False), tmp_path / "mixed.parquet", row_group_size=20)
    monkeypatch.setattr(leaf_key, "PASS_ROWS", 50)  # 400 rows: 8 passes where they pay
    taken = []
    parts = leaf_key._parts
    monkeypatch.setattr(leaf_key, "_parts", lambda *args: taken.append(len(parts(*args))) or parts(*args))
    expected = Hierarchy.from_persons(frame, group="hh", levels=LEVELS)
    arrow = pa.Table.from_pandas(frame, preserve_index=False)  # a frame in group order: scanned whole per pass
    for source in (tmp_path / "ordered.parquet", tmp_path / "mixed.parquet", arrow):
        assert_same(Hierarchy.from_persons(source, group="hh", levels=LEVELS), expected)
    assert taken[0] > 1 and taken[1:] == [1, 1]
