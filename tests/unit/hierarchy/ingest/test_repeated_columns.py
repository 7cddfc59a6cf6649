"""A column named twice in any file source (CSV, Parquet, a glob of them, an Arrow table, an upload) is refused
by name; a text-mode upload is refused by name, not a TypeError."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cocoviz.errors import InputError, ParameterError
from cocoviz.hierarchy import Hierarchy
from cocoviz.hierarchy.ingest import read_table


def test_a_repeated_csv_header_is_refused(tmp_path):
    (tmp_path / "p.csv").write_text("hh,s,s\n1,a,b\n2,a,c\n")
    with pytest.raises(InputError, match=r"p.csv: column name\(s\) \['s'\] appear more than once"):
        Hierarchy.from_persons(str(tmp_path / "p.csv"), group="hh", levels=["s"])
    (tmp_path / "q.csv").write_text("hh,s\n3,a\n")
    with pytest.raises(InputError, match="appear more than once"):
        Hierarchy.from_persons(str(tmp_path / "*.csv"), group="hh", levels=["s"])
    with pytest.raises(InputError, match="appear more than once"):
        read_table((tmp_path / "p.csv").read_bytes())


def test_a_repeated_parquet_or_arrow_column_is_refused(tmp_path):
    table = pa.Table.from_arrays([pa.array([1, 2]), pa.array(["a", "b"]), pa.array(["c", "d"])], ["hh", "s", "s"])
    pq.write_table(table, tmp_path / "p.parquet")
    with pytest.raises(InputError, match=r"column name\(s\) \['s'\] appear more than once"):
        Hierarchy.from_persons(str(tmp_path / "p.parquet"), group="hh", levels=["s"])
    with pytest.raises(InputError, match=r"\['s'\] appear more than once"):
        Hierarchy.from_persons(table, group="hh", levels=["s"])


def test_a_text_mode_upload_is_refused_by_name():
    with pytest.raises(ParameterError, match="an upload is bytes: got text"):
        read_table(io.StringIO("hh,s\n1,a\n"))
