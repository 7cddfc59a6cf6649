"""Reading and rewriting a format-2 file (a release's or a noisy-measurement file's) as tests edit it.

A small test file holds one row per level, so ``rows[field][level]`` is the level's whole array (a list,
or None where the level has none); :func:`write` puts the rows back as they are, the metadata too
(signature included), without any check: what the loaders must refuse.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

from cocoviz.release.verify import sampler_names

META = b"cocoviz"


def same_release(a, b) -> bool:
    """Whether two releases hold the same plan, budget, selection, K per node and runs."""
    return (
        a.plan == b.plan
        and a.budget == b.budget
        and a.selection == b.selection
        and a.chosen_bounds() == b.chosen_bounds()
        and a.to_frame().equals(b.to_frame())
    )


def read(path) -> tuple[dict, dict]:
    """``(rows, meta)``: every column as a list over the rows, and the JSON metadata."""
    table = pq.read_table(path)
    rows = table.to_pydict()
    assert rows["level"] == list(range(len(rows["level"]))), "one row per level (a test file is small)"
    return rows, json.loads(table.schema.metadata[META])


def _type(name: str):
    if name == "level":
        return pa.int32()
    return pa.large_list(pa.string() if name == "labels" else pa.float32() if name == "stated" else pa.int64())


def write(path, rows: dict, meta: dict, types: dict | None = None) -> None:
    """Write ``rows`` (columns as lists over the rows) with ``meta``; ``types`` overrides a column's type."""
    types = types or {}
    arrays = [pa.array(values, types.get(name, _type(name))) for name, values in rows.items()]
    out = pa.Table.from_arrays(arrays, names=list(rows)).replace_schema_metadata({META: json.dumps(meta).encode()})
    pq.write_table(out, path)


def edit_file(src, dst, change) -> None:
    """Rewrite ``src`` to ``dst`` after ``change(rows, meta)``."""
    rows, meta = read(src)
    change(rows, meta)
    write(dst, rows, meta)


# ------------------------------------------------------------ any edit of a stored field
def _fields(value, path=()):
    """Every stored field of the metadata: (path, value) for every dict member, list element and scalar."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _fields(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _fields(v, (*path, i))


def _new_value(old):
    near = []
    if isinstance(old, (int, float)) and not isinstance(old, bool):
        near = [st.sampled_from([old + 1, old - 1, -old, old * 1000, old / 2, float(old)])]
    return st.one_of(
        *near,
        st.none(),
        st.booleans(),
        st.integers(-(2**64), 2**64),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=4),
        st.sampled_from(sorted(sampler_names())),
        st.lists(st.integers(-1, 3), max_size=3),
        st.just({}),
    )


NODE_FIELDS = ("label", "parent", "groups", "K")


@st.composite
def edits(draw, meta: dict, rows: dict, run_fields: tuple[str, ...]):
    """One edit of a stored field: a metadata field set or deleted; one value of a column at one level changed
    (a label's text too); a run (one value of each of ``run_fields``) or a node (label, parent, G, K) dropped or
    repeated."""
    if draw(st.booleans()):
        fields = [(p, v) for p, v in _fields(meta) if p]  # the signature too
        path, old = draw(st.sampled_from(fields))
        if draw(st.integers(0, 4)) == 0:
            return ("delete", path, None)
        return ("set", path, draw(_new_value(old)))
    cells = [(c, lvl) for c in rows if c != "level" for lvl, v in enumerate(rows[c]) if v]
    column, level = draw(st.sampled_from(cells))
    at = draw(st.integers(0, len(rows[column][level]) - 1))
    if draw(st.integers(0, 3)) == 0:
        what = "run" if column in run_fields else "node"
        return (draw(st.sampled_from([f"drop {what}", f"repeat {what}"])), column, (level, at))
    if column == "labels":
        return ("cell", column, (level, at, draw(st.text(max_size=3))))
    return ("cell", column, (level, at, draw(st.integers(-3, 3))))


def apply_edit(src, dst, edit, run_fields: tuple[str, ...]) -> None:
    """Rewrite ``src`` to ``dst`` with the edit drawn by :func:`edits`."""

    def change(rows, meta):
        kind, where, what = edit
        if kind == "cell":
            level, at, new = what
            values = rows[where][level]
            values[at] = new if where == "labels" else values[at] + new
        elif kind != "set" and kind != "delete":
            level, at = what
            for column in run_fields if kind.endswith("run") else NODE_FIELDS:
                values = rows[column][level]
                if values is not None and at < len(values):
                    values.insert(at, values[at]) if kind.startswith("repeat") else values.pop(at)
        else:
            *up, last = where
            holder = meta
            for k in up:
                holder = holder[k]
            if kind == "delete":
                del holder[last]
            else:
                holder[last] = what

    edit_file(src, dst, change)
