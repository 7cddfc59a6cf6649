"""A sweep's journal: every finished release is recorded as it finishes, so a killed sweep resumes.

A :class:`Journal` is an append-only file in a folder, named by a fingerprint of the sweep (the task
function, every task, the dataset keys and the content of every tree), so a rerun with the same
arguments finds it and a different sweep never does.  Each record holds one task's result (a
DataFrame as Parquet, an array as ``.npy``, or a tuple of them) behind its length and SHA-256; it is
written out before the sweep goes on.  A record cut by a kill is detected and dropped with whatever
follows it, and that task runs again.  Nothing is unpickled: a record is data, never code.  Every
task is deterministic (its noise is keyed by seed and trial), so the resumed frame equals the
uninterrupted one.

>>> import pathlib, tempfile, numpy as np
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> journal = Journal(folder, "key")
>>> journal.record(3, np.arange(4))
>>> Journal(folder, "key").load()
{3: array([0, 1, 2, 3])}
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["Journal", "NoJournal", "sweep_key", "loop_key"]

_MAGIC = b"CVJ1"
_HEAD = struct.Struct("<4sQQ32s")  # magic, task index, payload length, SHA-256 of index and payload
_FRAME, _ARRAY, _TUPLE = b"D", b"A", b"T"
_PART = struct.Struct("<Q")


def _tree_digest(tree) -> bytes:
    """SHA-256 of what a release of ``tree`` depends on: levels, leaf paths, leaf runs, public G."""
    h = hashlib.sha256()
    h.update(repr((tree.levels, tree.public_groups)).encode())
    h.update(repr(tree.nodes(tree.depth)).encode())
    runs = tree.runs(tree.depth)
    for a in (runs.ptr, runs.sizes, runs.counts):
        h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
    return h.digest()


def sweep_key(fn, tasks: Sequence, trees: Sequence, keys: Sequence[str]) -> str:
    """The fingerprint of a sweep: equal for the same task function, tasks, dataset keys and trees."""
    h = hashlib.sha256()
    h.update(repr((fn.__module__, fn.__qualname__, list(tasks), list(keys))).encode())
    for tree in trees:
        h.update(_tree_digest(tree))
    return h.hexdigest()[:32]


def loop_key(*parts) -> str:
    """The fingerprint of an experiment's own loop: its name, parameters (JSON-able) and trees."""
    h = hashlib.sha256()
    for part in parts:
        if hasattr(part, "runs") and hasattr(part, "levels"):  # a Hierarchy: its content, not its identity
            h.update(_tree_digest(part))
        else:
            h.update(json.dumps(part, sort_keys=True, default=str).encode())
    return h.hexdigest()[:32]


def _encode(result) -> bytes:
    buf = io.BytesIO()
    if isinstance(result, pd.DataFrame):
        buf.write(_FRAME)
        result.to_parquet(buf, index=True)
    elif isinstance(result, np.ndarray):
        buf.write(_ARRAY)
        np.save(buf, result, allow_pickle=False)
    elif isinstance(result, tuple):
        buf.write(_TUPLE)
        for part in map(_encode, result):
            buf.write(_PART.pack(len(part)) + part)
    else:
        raise TypeError(f"a journal records DataFrames, arrays and tuples of them, not {type(result).__name__}")
    return buf.getvalue()


def _read_frame(body) -> pd.DataFrame:
    """A journalled frame with its dtypes: Arrow text columns (node labels, ``evaluate``'s) come back as
    Arrow text, not pandas' own string type, so a resumed sweep's frame equals an uninterrupted one's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(body)
    frame = table.to_pandas()
    for column in (table.schema.pandas_metadata or {}).get("columns", []):
        if column.get("numpy_type") == "string[pyarrow]" and column["name"] in frame:
            frame[column["name"]] = frame[column["name"]].astype(pd.ArrowDtype(pa.string()))
    return frame


def _decode(payload: bytes):
    kind, body = payload[:1], io.BytesIO(payload[1:])
    if kind == _FRAME:
        return _read_frame(body)
    if kind == _ARRAY:
        return np.load(body, allow_pickle=False)
    if kind == _TUPLE:
        parts, rest = [], payload[1:]
        while rest:
            (length,) = _PART.unpack_from(rest)
            parts.append(_decode(rest[_PART.size : _PART.size + length]))
            rest = rest[_PART.size + length :]
        return tuple(parts)
    raise ValueError(f"unknown record kind {kind!r}")


def _digest(index: int, payload: bytes) -> bytes:
    return hashlib.sha256(struct.pack("<Q", index) + payload).digest()


class Journal:
    """The finished tasks of one sweep, in ``folder/<key>.journal`` (see the module's docstring)."""

    def __init__(self, folder: str | os.PathLike, key: str):
        self.path = Path(folder) / f"{key}.journal"
        self._loaded: dict[int, object] | None = None

    def resumable(self, index: int, compute):
        """The recorded result of step ``index``, else ``compute()`` recorded (for loops outside a sweep)."""
        if self._loaded is None:
            self._loaded = self.load()
        if index in self._loaded:
            return self._loaded[index]
        result = compute()
        self.record(index, result)
        return result

    def load(self) -> dict[int, object]:
        """Every complete record, by task index; a torn or corrupt tail is cut off the file."""
        if not self.path.is_file():
            return {}
        data = self.path.read_bytes()
        done: dict[int, object] = {}
        at = 0
        while at + _HEAD.size <= len(data):
            magic, index, length, digest = _HEAD.unpack_from(data, at)
            payload = data[at + _HEAD.size : at + _HEAD.size + length]
            if magic != _MAGIC or len(payload) != length or _digest(index, payload) != digest:
                break
            try:
                done[int(index)] = _decode(payload)
            except Exception:  # a record that checks but does not decode: run the task again
                break
            at += _HEAD.size + length
        if at != len(data):
            with open(self.path, "r+b") as f:  # appends must follow the last good record
                f.truncate(at)
        return done

    def record(self, index: int, result) -> None:
        """Append ``result`` of task ``index``, handed to the kernel before returning.

        Not fsynced: a killed process loses nothing the kernel has accepted, and the tail a power cut
        may lose is detected by its checksum and computed again (an fsync per release would double the
        cost of a sweep of small releases)."""
        payload = _encode(result)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as f:
            f.write(_HEAD.pack(_MAGIC, index, len(payload), _digest(index, payload)) + payload)


class NoJournal:
    """A loop without a journal: every step is computed."""

    def resumable(self, index: int, compute):
        return compute()
