"""The columnar file of a release and of a noisy-measurement file (format 2).

Format 2 keeps every per-node and per-run array as a column and only small facts as JSON (the plan
without its nodes, the budget, the selection, the signature); a file of another format tag (format 1 kept
the shape and K as JSON) is refused, naming its format.

**Layout.**  One Parquet file, one row per *chunk of a level*: column ``level`` and one list column
per field.  A level's array of a field is cut into chunks of :data:`CHUNK` values, the ``i``-th chunk
in the level's ``i``-th row (an empty list once the array is done, a null where the level has no such
array, e.g. no K); every row is a row group of its own, so writing and reading go chunk by chunk
and Parquet reads row groups in parallel.  The shape's fields, shared by both files:

* ``labels`` -- the level's sorted distinct labels (text; the root's is empty);
* ``label`` -- every node's label as an index into ``labels`` (the root: one node, ``[0]``);
* ``parent`` -- every node's parent index one level up (the root: empty);
* ``groups`` -- every node's public G;
* ``K`` -- every node's K where a method needed one (null elsewhere);

then a release's runs (``node``, ``size``, ``count``: one value per run) or a noisy-measurement file's
``value`` (every measured node's noisy cells in node order; how many per node follows from the plan
and K); a release file may add its interval bands (optional columns, :mod:`cocoviz.release.files.band_columns`).
Integers are stored in the narrowest of int32 / int64 that holds the file's values.

Nothing read is trusted: :func:`level_arrays` refuses a malformed table and :func:`stored_shape`
a shape that is not a tree's; the HMAC signature (:func:`cocoviz.release.verify.signature`) covers the JSON
and every array of every level (:func:`signed_names`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

import numpy as np

from cocoviz.core.atomic import atomic_path
from cocoviz.core.nodes import NodeCodes, narrowest
from cocoviz.errors import InputError, ParameterError
from cocoviz.plan import Plan, Shape
from cocoviz.release import verify

__all__ = [
    "CHUNK",
    "SHAPE_FIELDS",
    "META_KEY",
    "shape_entry",
    "shape_arrays",
    "write",
    "read_stored",
    "level_arrays",
    "stored_levels",
    "stored_shape",
    "stored_plan",
    "signed_names",
    "target_name",
]

#: Values per chunk (one row, one row group) of a level's array.
CHUNK = 1 << 20
#: The shape's fields (module docstring), then K per node.
SHAPE_FIELDS = ("labels", "label", "parent", "groups", "K")
META_KEY = b"cocoviz"
_TEXT = "labels"
#: The one field of real numbers: a release's stated variance per run (float32, :mod:`cocoviz.release.release`).
FLOAT_FIELD = "stated"


# ------------------------------------------------------------------ writing
def shape_entry(shape: Shape) -> dict:
    """What the JSON keeps of a shape: its level names and whether G is public (the rest is in columns)."""
    return {"levels": list(shape.levels), "public_groups": shape.public_groups}


def shape_arrays(shape: Shape, bounds: Sequence[np.ndarray | None]) -> list[dict[str, np.ndarray | None]]:
    """Per level, the shape's fields and K per node (``bounds``, None where none) as arrays."""
    nodes = shape.node_codes
    return [
        {
            "labels": nodes.labels[level],
            "label": nodes.codes[level],
            "parent": nodes.parents[level],
            "groups": shape.group_counts(level),
            "K": bounds[level],
        }
        for level in range(shape.depth + 1)
    ]


def signed_names(n_levels: int, fields: Sequence[str]) -> list[str]:
    """The names, in order, under which the signature reads every array of a format-2 file."""
    return [f"{field}/{level}" for level in range(n_levels) for field in fields]


def _flat(levels: Sequence[Mapping[str, np.ndarray | None]], fields: Sequence[str]) -> dict:
    return {f"{field}/{level}": arrays.get(field) for level, arrays in enumerate(levels) for field in fields}


def _int_type(levels: Sequence[Mapping], field: str):
    import pyarrow as pa

    present = [a for arrays in levels if (a := arrays.get(field)) is not None and len(a)]
    small = all(a.min() >= -(2**31) and a.max() < 2**31 for a in present)
    return pa.int32() if small else pa.int64()


def write(
    path,
    meta: dict,
    levels: Sequence[Mapping[str, np.ndarray | None]],
    fields: Sequence[str],
    signing: bytes | None,
) -> None:
    """Write ``levels`` (per level, an array or None for each of ``fields``) with ``meta`` as a format-2 file.

    With ``signing`` (a key), ``meta`` gets the signature of itself and every array.  Written level by
    level and renamed in whole (:func:`~cocoviz.core.atomic.atomic_path`): a failed write leaves the
    previous file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if signing is not None:
        meta["signature"] = {
            "algorithm": verify.SIGNATURE_ALGORITHM,
            "value": verify.signature(signing, meta, _flat(levels, fields), signed_names(len(levels), fields)),
        }
    types = {
        f: pa.string() if f == _TEXT else pa.float32() if f == FLOAT_FIELD else _int_type(levels, f) for f in fields
    }
    schema = pa.schema(
        [pa.field("level", pa.int32()), *(pa.field(f, pa.large_list(types[f])) for f in fields)],
        metadata={META_KEY: json.dumps(meta).encode()},
    )
    with atomic_path(path) as tmp, pq.ParquetWriter(tmp, schema) as writer:
        for level, arrays in enumerate(levels):
            lengths = [len(a) for f in fields if (a := arrays.get(f)) is not None]
            n_rows = max(1, -(-max(lengths, default=0) // CHUNK))
            columns = [pa.array(np.full(n_rows, level, np.int32))]
            for f in fields:
                a = arrays.get(f)
                if a is None:
                    columns.append(pa.nulls(n_rows, pa.large_list(types[f])))
                    continue
                offsets = np.minimum(np.arange(n_rows + 1, dtype=np.int64) * CHUNK, len(a))
                values = pa.array(a, types[f]) if f == _TEXT else pa.array(np.asarray(a), types[f])
                columns.append(pa.LargeListArray.from_arrays(pa.array(offsets), values))
            writer.write_table(pa.Table.from_arrays(columns, schema=schema), row_group_size=1)


# ------------------------------------------------------------------ reading
def read_stored(path, name: str, formats: Sequence[str], what: str) -> tuple[object, dict]:
    """The Parquet table at ``path`` and its cocoviz metadata, whose format tag must be one of ``formats``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
        meta = json.loads((table.schema.metadata or {})[META_KEY])
    except (OSError, KeyError, ValueError, TypeError, pa.ArrowException) as exc:
        raise InputError(f"{name} is not a saved cocoviz {what} ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") not in formats:
        found = meta.get("format") if isinstance(meta, dict) else None
        expected = " or ".join(repr(f) for f in formats)
        raise InputError(f"{name} has format {found!r}, expected {expected}")
    return table, meta


def _whole(values, what: str, wide: bool = True) -> np.ndarray:
    """A stored integer array as int64 (or, not ``wide``, as int32 when so stored), or a refusal naming ``what``."""
    import pyarrow as pa

    if not pa.types.is_integer(values.type) or values.null_count:
        raise InputError(f"{what} is not whole numbers ({values.type}, {values.null_count} missing)")
    out = values.to_numpy(zero_copy_only=False)
    if not wide and out.dtype == np.int32:
        return out
    if out.dtype == np.uint64 and out.size and out.max() > np.iinfo(np.int64).max:
        raise InputError(f"{what} holds numbers too large (beyond 2**63)")
    return out.astype(np.int64, copy=False)


def level_arrays(
    table, n_levels: int, fields: Sequence[str], narrow: Sequence[str] = ()
) -> list[dict[str, np.ndarray | None]]:
    """Per level, the arrays of ``fields`` in a format-2 table (None where the level has none), checked for form.

    Integers come as int64, but those of the ``narrow`` fields stored as int32 stay so (no widening copy).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    missing = [c for c in ("level", *fields) if c not in table.column_names]
    if missing:
        raise InputError(f"it lacks the column(s) {', '.join(missing)}")
    level = _whole(table.column("level").combine_chunks(), "its column 'level'")
    if (level[1:] < level[:-1]).any() or not np.array_equal(np.unique(level), np.arange(n_levels)):
        raise InputError(f"its rows are not levels 0 to {n_levels - 1} in order")
    starts = np.searchsorted(level, np.arange(n_levels + 1))
    out = []
    for lvl in range(n_levels):
        arrays: dict[str, np.ndarray | None] = {}
        for f in fields:
            column = table.column(f)
            if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
                raise InputError(f"its column {f!r} is not a list per level ({column.type})")
            rows = column.slice(int(starts[lvl]), int(starts[lvl + 1] - starts[lvl]))
            if rows.null_count == len(rows):
                arrays[f] = None
                continue
            if rows.null_count:
                raise InputError(f"its column {f!r} of level {lvl} is missing in part")
            values = pc.list_flatten(rows).combine_chunks()
            what = f"its column {f!r} of level {lvl}"
            if f == FLOAT_FIELD:
                if not pa.types.is_floating(values.type) or values.null_count:
                    raise InputError(f"{what} is not real numbers ({values.type}, {values.null_count} missing)")
                arrays[f] = values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
            elif f == _TEXT:
                if not pa.types.is_string(values.type) and not pa.types.is_large_string(values.type):
                    raise InputError(f"{what} is not text ({values.type})")
                if values.null_count:
                    raise InputError(f"{what} has a missing label")
                arrays[f] = values.to_numpy(zero_copy_only=False).astype(object)
            else:
                arrays[f] = _whole(values, what, wide=f not in narrow)
        out.append(arrays)
    return out


def stored_levels(
    table, meta: dict, parts: Sequence[str], fields: Sequence[str], signing: bytes | None, narrow: Sequence[str] = ()
) -> list[dict[str, np.ndarray | None]]:
    """Per level, the arrays of a format-2 file, after checking that its metadata holds ``parts`` (the plan with
    its shape's level names among them) and, with ``signing``, the signature over the metadata and every array
    (``narrow``: :func:`level_arrays`)."""
    for part in parts:
        if part not in meta:
            raise InputError(f"its metadata lacks the {part}")
    entry = meta["plan"].get("shape") if isinstance(meta["plan"], dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("levels"), list):
        raise InputError("its plan's shape does not name its levels")
    n_levels = len(entry["levels"]) + 1
    levels = level_arrays(table, n_levels, fields, narrow)
    if signing is not None:
        verify.check_signature(signing, meta, _flat(levels, fields), signed_names(n_levels, fields))
    return levels


def _checked_entry(entry: object) -> tuple[tuple[str, ...], bool]:
    if not isinstance(entry, Mapping):
        raise InputError(f"its plan's shape must be a mapping, got {type(entry).__name__}")
    missing = [k for k in ("levels", "public_groups") if k not in entry]
    if missing:
        raise InputError(f"the stored shape lacks {', '.join(missing)}")
    levels = entry["levels"]
    if not isinstance(levels, list) or not all(isinstance(v, str) for v in levels):
        raise InputError("the stored shape's levels must be a list of text")
    if not isinstance(entry["public_groups"], bool):
        raise InputError(f"the stored shape's public_groups must be true or false, got {entry['public_groups']!r}")
    return tuple(levels), entry["public_groups"]


def stored_shape(entry: object, levels: Sequence[Mapping[str, np.ndarray | None]]) -> Shape:
    """The shape whose level names are in ``entry`` (JSON) and whose nodes are in ``levels`` (the columns).

    Refused: labels not sorted and distinct, a label or parent index out of range, two nodes with one
    path, G below 0 or not summing up, a level's fields of different lengths.
    """
    names, public = _checked_entry(entry)
    if len(levels) != len(names) + 1:
        raise InputError(f"its shape names {len(names)} levels below the root, its columns hold {len(levels) - 1}")
    labels, codes, parents, groups = [], [], [], []
    for lvl, arrays in enumerate(levels):
        lab, code, parent, g = (arrays[f] for f in SHAPE_FIELDS[:4])
        if lab is None or code is None or parent is None or g is None:
            raise InputError(f"its shape lacks the labels, label, parent or groups of level {lvl}")
        n = len(code)
        if lvl == 0:
            if len(lab) or not np.array_equal(code, [0]) or len(parent) or len(g) != 1:
                raise InputError("its root is not one node without label or parent")
        else:
            if len(parent) != n or len(g) != n:
                raise InputError(f"its level {lvl} has {n} labels, {len(parent)} parents and {len(g)} G")
            if len(lab) > 1 and not (lab[1:] > lab[:-1]).all():
                raise InputError(f"its labels of level {lvl} are not sorted and distinct")
            if n and (code.min() < 0 or code.max() >= len(lab) or parent.min() < 0 or parent.max() >= len(codes[-1])):
                raise InputError(f"its level {lvl} has a label or parent index out of range")
            key = parent * max(len(lab), 1) + code
            # Trees keep their nodes in path order: one pass; any other order is sorted first.
            if n > 1 and not (key[1:] > key[:-1]).all() and np.unique(key).size != n:
                raise InputError(f"its level {lvl} holds two nodes with one path")
        labels.append(np.asarray(lab, object))
        codes.append(code.astype(narrowest(max(len(lab), 1))))
        parents.append(parent.astype(narrowest(len(codes[-2]) if lvl else 1)))
        groups.append(g)
    for a in (*labels, *codes, *parents):
        a.setflags(write=False)
    try:
        return Shape._from_codes(names, NodeCodes(tuple(labels), tuple(codes), tuple(parents)), groups, public)
    except ParameterError as exc:
        raise InputError(f"the stored shape is not a hierarchy's: {exc}") from None


def stored_plan(meta: dict, parts: Sequence[str], levels: Sequence[Mapping] | None = None) -> Plan:
    """The plan in a stored file's metadata, after checking that it holds ``parts``; a refusal names why.

    ``levels``: a format-2 file's arrays, which hold the plan's shape (its JSON only the level names).
    """
    for part in parts:
        if part not in meta:
            raise InputError(f"its metadata lacks the {part}")
    data = meta["plan"]
    if not isinstance(data, dict):
        raise InputError(f"its plan is not a mapping, got {type(data).__name__}")
    if levels is not None and "shape" not in data:
        raise InputError("its plan lacks 'shape'")
    shape = None if levels is None else stored_shape(data["shape"], levels)
    try:
        return Plan.from_dict(data, shape=shape)
    except KeyError as exc:
        raise InputError(f"its plan lacks {exc.args[0]!r}") from None
    except (TypeError, ValueError, AttributeError, IndexError, OverflowError, ParameterError) as exc:
        raise InputError(f"its plan is not a valid plan: {exc}") from None


def target_name(path: object, what: str, method: str) -> str:
    """The file's name for messages, after refusing what is neither a non-empty path nor a binary file object."""
    if isinstance(path, (str, os.PathLike)):
        if not os.fspath(path):
            raise ParameterError(f"{what}, got an empty path")
        return repr(os.fspath(path))
    if not callable(getattr(path, method, None)):
        raise ParameterError(f"{what}, got {type(path).__name__}")
    return "this file"
