"""Uploads: the three forms from CSV and Parquet, and every malformed file refused with its message."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cocoviz.datasets import toy_persons
from cocoviz.errors import InputError, ParameterError
from cocoviz.hierarchy import Hierarchy
from cocoviz.hierarchy.ingest import load_upload, read_table, table_to_hierarchy
from cocoviz.hierarchy.tables import MAX_PROBLEMS, TableProblems

GROUPS_CSV = b"state,county,size\nCA,Alameda,3\nCA,Marin,1\nOR,Lane,0\nOR,Lane,3\n"
COUNTS_CSV = b"state,county,size,count\nCA,Alameda,3,1\nCA,Marin,1,1\nOR,Lane,0,1\nOR,Lane,3,1\n"


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def csv_bytes(frame: pd.DataFrame, encoding: str = "utf-8") -> bytes:
    return frame.to_csv(index=False).encode(encoding)


# -------------------------------------------------------------- good uploads
def test_groups_and_counts_forms_agree():
    groups = load_upload(GROUPS_CSV, form="groups", levels=["state", "county"], filename="g.csv")
    counts = load_upload(COUNTS_CSV, form="counts", levels=["state", "county"], filename="c.csv")
    assert groups.histogram(()).tolist() == counts.histogram(()).tolist() == [1, 1, 0, 2]
    assert groups.histogram(("OR", "Lane")).tolist() == [1, 0, 0, 1]


def test_persons_form_is_the_toy_example():
    tree = load_upload(csv_bytes(toy_persons()), form="persons", group="group", levels=["region"])
    assert tree.histogram(()).tolist() == [0, 2, 1, 0, 1]


@pytest.mark.parametrize(
    "form, frame, roles",
    [
        ("persons", toy_persons(), {"group": "group", "levels": ["region"]}),
        ("groups", pd.DataFrame({"st": ["a", "a", "b"], "n": [4, 1, 0]}), {"size": "n", "levels": ["st"]}),
        (
            "counts",
            pd.DataFrame({"st": ["a", "b"], "n": [2, 0], "k": [3, 5]}),
            {"size": "n", "count": "k", "levels": ["st"]},
        ),
    ],
)
def test_parquet_and_csv_give_the_same_tree(form, frame, roles):
    from_parquet = load_upload(parquet_bytes(frame), form=form, columns=roles, filename="x.parquet")
    from_csv = load_upload(csv_bytes(frame), form=form, columns=roles, filename="x.csv")
    assert from_parquet.summary() == from_csv.summary()
    assert from_parquet.histogram(()).tolist() == from_csv.histogram(()).tolist()


def test_sources_path_file_object_and_uploaded_file(tmp_path):
    path = tmp_path / "groups.csv"
    path.write_bytes(GROUPS_CSV)
    expected = load_upload(GROUPS_CSV, levels=["state", "county"]).summary()
    assert load_upload(path, levels=["state", "county"]).summary() == expected
    assert load_upload(str(path), levels="state, county").summary() == expected
    with open(path, "rb") as handle:
        assert load_upload(handle, levels=["state", "county"]).summary() == expected

    class UploadedFile(io.BytesIO):  # what Streamlit hands over: getvalue() and a name
        name = "from-browser.csv"

    assert load_upload(UploadedFile(GROUPS_CSV), levels=["state", "county"]).summary() == expected


def test_dashboard_call_style_with_kind():
    tree = load_upload(COUNTS_CSV, filename="c.csv", kind="counts", levels=["state"], size="size", count="count")
    assert tree.levels == ("state",) and tree.groups(()) == 4


def test_text_details_are_tolerated():
    bom = "\ufeffstate,size\n CA, 3\nCA,2.0\n".encode("utf-8")  # BOM, spaces, integral float
    assert load_upload(bom, levels=["state"]).histogram(()).tolist() == [0, 0, 1, 1]
    latin = "région,size\nÎle,1\n".encode("latin-1")
    assert load_upload(latin, levels=["région"], encoding="latin-1").nodes(1) == [("Île",)]
    codes = b"fips,size\n01,1\n1,2\n"  # codes keep leading zeros
    assert load_upload(codes, levels=["fips"]).nodes(1) == [("01",), ("1",)]


def test_no_levels_is_a_single_region():
    tree = load_upload(b"size\n1\n2\n2\n", form="groups")
    assert tree.depth == 0 and tree.histogram(()).tolist() == [0, 1, 2]


def test_read_table_numbers_rows_from_one():
    frame = read_table(GROUPS_CSV)
    assert frame.index[0] == 1 and list(frame.columns) == ["state", "county", "size"]


# --------------------------------------------------------- malformed uploads
BAD = [
    # (name, bytes, options, message pattern)
    ("wrong column", GROUPS_CSV, {"size": "persons", "levels": ["state"]}, r"no column 'persons' \(size\)"),
    ("wrong level column", GROUPS_CSV, {"levels": ["province"]}, r"no column 'province' \(level\)"),
    (
        "persons without group column",
        b"name,region\nAl,a\n",
        {"form": "persons", "levels": ["region"]},
        r"no column 'group' \(group\)",
    ),
    ("text in numbers", b"state,size\nCA,3\nCA,three\nOR,x\n", {"levels": ["state"]}, r"not a number in rows 2, 3"),
    ("negative size", b"state,size\nCA,3\nCA,1\nOR,-2\n", {"levels": ["state"]}, r"negative group size in rows 3"),
    ("fractional size", b"state,size\nCA,2.5\n", {"levels": ["state"]}, r"fractional group size in rows 1"),
    ("missing size", b"state,size\nCA,\nCA,2\n", {"levels": ["state"]}, r"missing group size in rows 1"),
    (
        "negative count",
        b"state,size,count\nCA,2,-1\n",
        {"form": "counts", "levels": ["state"]},
        r"negative number of groups",
    ),
    (
        "group in two regions",
        b"group,region\n1,a\n1,a\n1,b\n2,b\n",
        {"form": "persons", "levels": ["region"]},
        r"group\(s\) 1 appear in more than one region \(group 1 in rows 1, 2, 3\)",
    ),
    ("missing region label", b"state,size\nCA,1\n,2\n", {"levels": ["state"]}, r"missing region label in rows 2"),
    (
        "missing group id",
        b"group,region\n1,a\n,a\n",
        {"form": "persons", "levels": ["region"]},
        r"missing group id in rows 2",
    ),
    ("empty file", b"", {}, r"empty \(0 bytes\)"),
    ("blank file", b"  \n\n", {}, r"is empty"),
    ("header only", b"state,size\n", {"levels": ["state"]}, r"the table is empty"),
    (
        "wrong encoding",
        "state,size\nQuébec,1\n".encode("latin-1"),
        {"levels": ["state"]},
        r"not valid utf-8 text: byte 0xe9 on line 2",
    ),
    ("utf-16", "state,size\nCA,1\n".encode("utf-16"), {"levels": ["state"]}, r"not valid utf-8 text"),
    ("ragged rows", b"state,size\nCA,1\nCA,2,7,9\n", {"levels": ["state"]}, r"not a well-formed CSV"),
    ("unclosed quote", b'state,size\n"CA,1\nOR,2\n', {"levels": ["state"]}, r"not a well-formed CSV"),
    ("binary junk", bytes(range(256)) * 4, {}, r"not valid utf-8 text|NUL bytes"),
    ("spreadsheet", b"PK\x03\x04" + b"\x00" * 64, {}, r"NUL bytes"),
    ("fake parquet", b"state,size\nCA,1\n", {"filename": "data.parquet"}, r"not one \(no Parquet signature\)"),
    ("truncated parquet", b"PAR1" + b"\x00" * 40, {"filename": "data.parquet"}, r"not a readable Parquet file"),
    ("empty header name", b"state,,size\nCA,1,2\n", {"levels": ["state"]}, r"empty column name"),
    ("duplicate header", b"state,size,size\nCA,1,2\n", {"levels": ["state"]}, r"appear more than once|size"),
    ("level is also size", GROUPS_CSV, {"levels": ["state", "size"]}, r"cannot be both a level and the size"),
    ("unknown form", GROUPS_CSV, {"form": "households"}, r"unknown form 'households'"),
    ("unknown role", GROUPS_CSV, {"columns": {"weight": "size"}}, r"unknown column role"),
    ("form and kind disagree", GROUPS_CSV, {"form": "groups", "kind": "counts"}, r"disagree"),
]


@pytest.mark.parametrize("name, data, options, pattern", BAD, ids=[b[0] for b in BAD])
def test_malformed_upload_is_refused_with_its_message(name, data, options, pattern):
    options = {"filename": "upload.csv", **options}
    with pytest.raises(ValueError, match=pattern) as info:
        load_upload(data, **options)
    message = str(info.value)
    assert "Traceback" not in message and message.strip()


def test_message_names_the_file_and_how_rows_are_counted():
    with pytest.raises(ValueError) as info:
        load_upload(b"state,size\nCA,1\nCA,-4\n", levels=["state"], filename="mine.csv")
    assert str(info.value).startswith("mine.csv: column 'size': negative group size in rows 2")
    assert "counted from 1 at the first row below the header" in str(info.value)


def test_parquet_with_bad_values_is_refused():
    frame = pd.DataFrame({"state": ["CA", "OR", None], "size": [1, -3, 2]})
    with pytest.raises(ValueError, match="missing region label in rows 3"):
        load_upload(parquet_bytes(frame), levels=["state"], filename="x.parquet")
    nested = pd.DataFrame({"state": ["CA"], "size": [[1, 2]]})
    with pytest.raises(ValueError):
        load_upload(parquet_bytes(nested), levels=["state"], filename="x.parquet")


def test_size_limits():
    big = b"state,size\n" + b"CA,1\n" * 1000
    with pytest.raises(ValueError, match=r"uploads are limited to .* MB: aggregate it to the per-leaf counts form"):
        load_upload(big, levels=["state"], max_bytes=1000)
    with pytest.raises(ValueError, match=r"more than 999 rows; uploads are limited to 999 rows"):
        load_upload(big, levels=["state"], max_rows=999)
    frame = pd.DataFrame({"state": ["CA"] * 1000, "size": 1})
    with pytest.raises(ValueError, match=r"has 1,000 rows; uploads are limited to 10 rows"):
        load_upload(parquet_bytes(frame), levels=["state"], max_rows=10)
    leaves = b"state,size\n" + b"".join(f"s{i},1\n".encode() for i in range(30))
    with pytest.raises(ValueError, match=r"30 leaf regions; uploads are limited to 20"):
        load_upload(leaves, levels=["state"], max_leaves=20)


def test_missing_path_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="cannot open"):
        load_upload(tmp_path / "nowhere.csv")


def test_table_to_hierarchy_direct():
    frame = pd.DataFrame({"r": ["a", "b"], "size": [1, 2]})
    assert isinstance(table_to_hierarchy(frame, form="groups", levels=["r"]), Hierarchy)


# ------------------------------------------------------------ never a crash
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_arbitrary_bytes_load_or_are_refused(data):
    try:
        tree = load_upload(data, form="groups", levels=["state"], filename="fuzz.csv")
    except ValueError as exc:
        assert str(exc)
    else:
        assert tree.groups(()) > 0


_cell = st.one_of(st.integers(-5, 50).map(str), st.sampled_from(["", "x", "1.5", "nan", "inf", "CA", "OR", " "]))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_cell, _cell, _cell), max_size=12), st.sampled_from(["persons", "groups", "counts"]))
def test_arbitrary_tables_load_whole_or_are_refused(rows, form):
    text = "state,size,count\n" + "".join(",".join(r) + "\n" for r in rows)
    options = {"persons": {"group": "size"}, "groups": {}, "counts": {}}[form]
    try:
        tree = load_upload(text.encode(), form=form, levels=["state"], **options)
    except ValueError as exc:
        assert str(exc)
        return
    # Loaded: every row is accounted for.
    frame = pd.read_csv(io.StringIO(text), dtype=str)
    if form == "groups":
        assert tree.groups(()) == len(frame)
    elif form == "counts":
        assert tree.groups(()) == int(np.rint(pd.to_numeric(frame["count"]).sum()))
    else:
        assert tree.persons(()) == len(frame)


# ------------------------------------------------------------ persons form with a public groups table
PERSONS_CSV = b"name,group,region\nAlice,1,a\nBob,1,a\nEve,2,b\n"


def test_persons_form_with_a_public_groups_table(tmp_path):
    groups_csv = b"group,region\n1,a\n2,b\n3,b\n"
    without = load_upload(PERSONS_CSV, form="persons", levels=["region"])
    assert not without.public_groups and without.groups(("b",)) == 1
    tree = load_upload(PERSONS_CSV, form="persons", levels=["region"], groups=groups_csv)
    assert tree.public_groups and tree.histogram(("b",)).tolist() == [1, 1]
    path = tmp_path / "groups.csv"
    path.write_bytes(groups_csv)
    same = load_upload(PERSONS_CSV, form="persons", levels=["region"], groups=path)
    assert same.histogram(()).tolist() == tree.histogram(()).tolist()
    direct = table_to_hierarchy(
        read_table(PERSONS_CSV), form="persons", levels=["region"], groups=read_table(groups_csv)
    )
    assert direct.public_groups and direct.groups(()) == 3


@pytest.mark.parametrize(
    "groups_csv, pattern",
    [
        (b"group,region\n1,a\n1,b\n2,b\n", r"^groups\.csv: column 'group': group id\(s\) 1 listed more than once"),
        (
            b"group,region\n1,b\n2,b\n",
            r"^p\.csv: column 'group': group 1 lies in region b in groups\.csv but persons in "
            r"rows 1, 2 place it in a",
        ),
        (b"group,region\n1,a\n", r"^p\.csv: column 'group': group\(s\) 2 in rows 3 are not in groups\.csv"),
        (b"group\n1\n", r"^groups\.csv: no column 'region'"),
    ],
)
def test_groups_table_problems_name_the_right_file(tmp_path, groups_csv, pattern):
    path = tmp_path / "groups.csv"
    path.write_bytes(groups_csv)
    with pytest.raises(InputError, match=pattern):
        load_upload(PERSONS_CSV, form="persons", levels=["region"], groups=path, filename="p.csv")


def test_groups_table_only_with_the_persons_form():
    with pytest.raises(ParameterError, match="persons form only"):
        load_upload(GROUPS_CSV, form="groups", levels=["state"], groups=b"group,state\n1,CA\n")


# ------------------------------------------------------------- every problem at once
def test_every_problem_of_a_bad_upload_is_listed_with_its_rows():
    csv = b"state,county,size\nCA,Alameda,1\nCA,Marin,-2\nOR,Lane,abc\n,Lane,2.5\nOR,,x\n"
    with pytest.raises(TableProblems) as info:
        load_upload(csv, levels=["state", "county"], filename="bad.csv")
    assert info.value.problems == (
        "column 'state': missing region label in rows 4",
        "column 'county': missing region label in rows 5",
        "column 'size': group size must be a number; not a number in rows 3, 5 ('abc', 'x')",
        "column 'size': negative group size in rows 2",
        "column 'size': fractional group size in rows 4",
    )
    message = str(info.value)
    assert message.startswith("bad.csv: 5 problems (rows are counted from 1 at the first row below the header):\n- ")
    assert all(f"\n- {p}" in message for p in info.value.problems)
    assert isinstance(info.value, InputError)


def test_problems_of_both_tables_are_listed_each_with_its_file():
    persons = b"person,group,region\nA,1,a\nB,,a\nC,2,\n"
    groups = b"group,region\n1,a\n2,\n"
    with pytest.raises(TableProblems) as info:
        load_upload(persons, form="persons", levels=["region"], groups=groups, filename="p.csv")
    problems = info.value.problems
    assert problems == (
        "column 'region': missing region label in rows 3",
        "column 'group': missing group id in rows 2",
        "the groups table: column 'region': missing region label in rows 2",
    )


def test_relational_problems_are_listed_together():
    persons = b"person,group,region\nA,1,a\nB,9,a\nC,2,a\n"
    groups = b"group,region\n1,a\n2,b\n"
    with pytest.raises(TableProblems) as info:
        load_upload(persons, form="persons", levels=["region"], groups=groups, filename="p.csv")
    assert len(info.value.problems) == 2
    assert "group(s) 9 in rows 2 are not in the groups table" in info.value.problems[0]
    assert "group 2 lies in region b in the groups table but persons in rows 3 place it in a" in info.value.problems[1]


def test_a_long_list_of_problems_is_cut_with_a_count():
    bad = ["", "x", "inf", "-1", "1.5", str(2**41)]
    csv = "r,size,count\n" + "".join(f"a,{s},{c}\n" for s, c in zip(bad, bad))
    with pytest.raises(TableProblems) as info:
        load_upload(csv.encode(), form="counts", levels=["r"], filename="c.csv")
    assert len(info.value.problems) == 12  # six kinds in each of two columns
    message = str(info.value)
    assert message.count("\n- ") == MAX_PROBLEMS + 1 and message.endswith("\n- and 2 more")


# ------------------------------------------------ issue 27: wide headers and text a float would round
def test_a_4000_column_one_row_upload_is_refused_by_its_width_before_pandas_parses_it(monkeypatch):
    from cocoviz.hierarchy.ingest import files

    header = ",".join(f"c{i}" for i in range(4000)).encode()
    parsed = []
    monkeypatch.setattr(files.pd, "read_csv", lambda *a, **k: parsed.append(1))
    with pytest.raises(InputError, match=r"^wide\.csv has 4,000 columns; uploads are limited to 1,000"):
        read_table(header + b"\n" + b",".join([b"1"] * 4000) + b"\n", filename="wide.csv")
    assert not parsed
    frame = pd.DataFrame({f"c{i}": [1] for i in range(files.MAX_UPLOAD_COLUMNS + 1)})
    with pytest.raises(InputError, match="1,001 columns"):
        read_table(parquet_bytes(frame), filename="wide.parquet")


def test_the_duplicate_column_check_looks_at_each_name_once(monkeypatch):
    from collections import Counter

    from cocoviz.hierarchy.ingest import files

    looked = []

    def counting(names):
        names = list(names)
        looked.append(len(names))
        return Counter(names)

    monkeypatch.setattr(files, "Counter", counting)
    n = files.MAX_UPLOAD_COLUMNS
    header = ",".join([f"c{i}" for i in range(n - 2)] + ["size", "size"])
    with pytest.raises(InputError, match=r"\['size'\] appear more than once"):
        read_table(f"{header}\n{','.join(['1'] * n)}\n".encode(), filename="dup.csv")
    assert looked == [n]  # one pass over the header (7589f31: list.count per column, n² steps)


@pytest.mark.parametrize(
    "csv, form, match",
    [
        (b"size\n2.0000000000000001\n", "groups", r"'size': fractional group size in rows 1 \('2\.0000000000000001'"),
        (b"size,count\n1,3.00000000000000001\n", "counts", r"column 'count': fractional number of groups in rows 1"),
        (b"size\n1\n9.9999999999999999e0\n", "groups", r"column 'size': fractional group size in rows 2"),
    ],
)
def test_text_numbers_that_a_float_would_round_to_whole_are_refused(csv, form, match):
    with pytest.raises(InputError, match=match):
        load_upload(csv, form=form)


@pytest.mark.parametrize("cell", ["2.0", "2e0", "2.000", " 2"])
def test_exactly_whole_text_numbers_are_still_accepted(cell):
    assert load_upload(f"size\n{cell}\n".encode()).histogram(()).tolist() == [0, 0, 1]
