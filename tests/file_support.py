"""Reading and rewriting a format-2 file (a release's or a noisy-measurement file's) as tests edit it.

A small test file holds one row per level, so ``rows[field][level]`` is the level's whole array (a list,
or None where the level has none); :func:`write` puts the rows back as they are, the metadata too
(signature included), without any check: what the loaders must refuse.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

META = b"cocoviz"


def read(path) -> tuple[dict, dict]:
    """``(rows, meta)``: every column as a list over the rows, and the JSON metadata."""
    table = pq.read_table(path)
    rows = table.to_pydict()
    assert rows["level"] == list(range(len(rows["level"]))), "one row per level (a test file is small)"
    return rows, json.loads(table.schema.metadata[META])


def _type(name: str):
    if name == "level":
        return pa.int32()
    return pa.large_list(pa.string() if name == "labels" else pa.int64())


def write(path, rows: dict, meta: dict, types: dict | None = None) -> None:
    """Write ``rows`` (columns as lists over the rows) with ``meta``; ``types`` overrides a column's type."""
    types = types or {}
    arrays = [pa.array(values, types.get(name, _type(name))) for name, values in rows.items()]
    out = pa.Table.from_arrays(arrays, names=list(rows)).replace_schema_metadata({META: json.dumps(meta).encode()})
    pq.write_table(out, path)


def edit(src, dst, change) -> None:
    """Rewrite ``src`` to ``dst`` after ``change(rows, meta)``."""
    rows, meta = read(src)
    change(rows, meta)
    write(dst, rows, meta)
