"""Uploads: CSV or Parquet files in any of the three table forms, validated whole.

(Tables too large to upload are read where they live, by the builders themselves:
``Hierarchy.from_persons("persons/*.parquet", ...)`` or
``Hierarchy.from_persons(cocoviz.hierarchy.ingest.sql(url, "persons"), ...)``; see
:mod:`cocoviz.hierarchy.ingest.sources` and :mod:`cocoviz.hierarchy.ingest.aggregate`.)

The three forms are those of :class:`~cocoviz.hierarchy.Hierarchy`:

``persons``
    one row per person: a group id column and the level columns; optionally
    with a second, public groups table (the group id and level columns, one
    row per group).  **Without that table each region's number of groups G,
    and the list of regions, are taken from the private rows and are not
    protected by the release** (a person added in a new group changes G);
    with it they come from the public table (``Hierarchy.public_groups``);
``groups``
    one row per group: a size column (0 allowed) and the level columns;
``counts``
    one row per leaf and size: a size column, a count column (number of
    groups of that size in that leaf) and the level columns.

A file is read, then handed to the hierarchy's own validation; either the
whole file becomes a :class:`Hierarchy` or an :class:`~cocoviz.errors.InputError`
(a :class:`ValueError`) says what is wrong and where: every problem of the
table at once (up to :data:`~cocoviz.hierarchy.tables.MAX_PROBLEMS`), each
with its first offending rows, counted from 1 at the first row below the
header.  Nothing is ever half loaded.

>>> csv = b"state,county,size\\nCA,Alameda,3\\nCA,Marin,1\\nOR,Lane,0\\n"
>>> load_upload(csv, form="groups", levels=["state", "county"], filename="households.csv")
Hierarchy(levels=['state', 'county'], nodes=[1, 2, 3], groups=3, distinct_sizes=3)
>>> load_upload(b"state,size\\nCA,-2\\nOR,abc\\n", form="groups", levels=["state"], filename="bad.csv")
Traceback (most recent call last):
...
cocoviz.hierarchy.tables.TableProblems: bad.csv: 2 problems (rows are counted from 1 at the first row below the header):
- column 'size': group size must be a number; not a number in rows 2 ('abc')
- column 'size': negative group size in rows 1
"""

from cocoviz.hierarchy.ingest.database import SqlSource, sql
from cocoviz.hierarchy.ingest.files import MAX_UPLOAD_BYTES, MAX_UPLOAD_ROWS, read_table
from cocoviz.hierarchy.ingest.uploads import FORMS, MAX_UPLOAD_LEAVES, load_upload, table_to_hierarchy

__all__ = [
    "FORMS",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_ROWS",
    "MAX_UPLOAD_LEAVES",
    "read_table",
    "load_upload",
    "table_to_hierarchy",
    "SqlSource",
    "sql",
]
