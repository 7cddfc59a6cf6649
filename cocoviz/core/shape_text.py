"""A shape's JSON text made from its integer arrays: no Python object per node.

:meth:`Shape.to_dict <cocoviz.core.shape.Shape.to_dict>` makes a list per node path, and ``json.dumps`` of it
at national scale (8M blocks) takes seconds and gigabytes.  :func:`shape_json` writes the same text level by
level with numpy byte-string operations: a node's path text is its parent's open path text, a separator and
its own label's JSON text, so every level costs a few array operations over its nodes.

Contract: ``shape_json(shape, canonical)`` is, byte for byte, the UTF-8 encoding of

* ``json.dumps(shape.to_dict(), ensure_ascii=False)`` (``canonical=False``: the default separators ``", "``
  and ``": "``, keys in ``to_dict``'s order), or
* ``json.dumps(shape.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))``
  (``canonical=True``: the text :meth:`Shape.digest <cocoviz.core.shape.Shape.digest>` hashes),

yielded as a sequence of ``bytes`` pieces (hash them one by one or join them).  JSON escapes every control
character, so no piece holds a NUL byte; that lets numpy's NUL-padded fixed-width byte strings be packed by
dropping their zero bytes.

>>> import json
>>> from cocoviz.core.shape import Shape
>>> shape = Shape(("state",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)), public_groups=True)
>>> text = b"".join(shape_json(shape, canonical=False)).decode()
>>> text[:55]
'{"levels": ["state"], "paths": [[[]], [["a"], ["b"]]], '
>>> text == json.dumps(shape.to_dict(), ensure_ascii=False)
True
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np

__all__ = ["shape_json"]


def _packed(texts: np.ndarray, sep: bytes) -> bytes:
    """``b"[" + sep.join(texts) + b"]"`` for a fixed-width byte-string array (no NUL inside any text)."""
    if texts.size == 0:
        return b"[]"
    joined = np.strings.add(texts, sep) if sep else texts
    raw = np.frombuffer(joined.tobytes(), np.uint8)
    body = raw[raw != 0].tobytes()
    return b"[" + (body[: -len(sep)] if sep else body) + b"]"


def _numbers(values: np.ndarray, sep: bytes) -> bytes:
    """A JSON list of integers (``values.tolist()``'s text)."""
    values = np.asarray(values)
    return _packed(values.astype(np.int64).astype(np.bytes_), sep) if values.size else b"[]"


def _level_paths(nodes, sep: bytes) -> Iterator[bytes]:
    """Per level, the JSON list of its nodes' paths (each a list of label strings)."""
    open_text = np.array([b"["], dtype=np.bytes_)  # the root's path, not yet closed
    yield _packed(np.strings.add(open_text, b"]"), sep)
    for level in range(1, nodes.depth + 1):
        labels = np.array(
            [json.dumps(str(x), ensure_ascii=False).encode("utf-8") for x in nodes.labels[level]], dtype=np.bytes_
        )
        parent = open_text[nodes.parents[level]]
        if level > 1:
            parent = np.strings.add(parent, sep)
        open_text = np.strings.add(parent, labels[nodes.codes[level]])
        del parent
        yield _packed(np.strings.add(open_text, b"]"), sep)


def _lists(parts: Iterator[bytes], sep: bytes) -> Iterator[bytes]:
    """``[part, part, ...]`` with ``sep`` between the parts, as pieces."""
    yield b"["
    for i, part in enumerate(parts):
        if i:
            yield sep
        yield part
    yield b"]"


def shape_json(shape, canonical: bool = False) -> Iterator[bytes]:
    """The JSON text of ``shape.to_dict()`` as UTF-8 pieces (see the module for the two forms).

    Parameters
    ----------
    shape : Shape
        The shape to write.
    canonical : bool
        Sorted keys and no spaces (the digest's form) instead of ``json.dumps``'s default form.

    Returns
    -------
    Iterator[bytes]
        Pieces whose concatenation is the text; one level's paths are made only when reached.

    Examples
    --------
    >>> from cocoviz.core.shape import Shape
    >>> shape = Shape(("state",), (((),), (("a",),)), ((), (0,)), ((4,), (4,)))
    >>> b"".join(shape_json(shape, canonical=True)).decode()
    '{"groups":[[4],[4]],"levels":["state"],"parents":[[],[0]],"paths":[[[]],[["a"]]],"public_groups":false}'
    """
    sep, colon = (b",", b":") if canonical else (b", ", b": ")
    nodes = shape.node_codes
    depth = nodes.depth

    def levels() -> Iterator[bytes]:
        yield json.dumps(list(shape.levels), ensure_ascii=False, separators=(sep.decode(), colon.decode())).encode()

    def paths() -> Iterator[bytes]:
        yield from _lists(_level_paths(nodes, sep), sep)

    def parents() -> Iterator[bytes]:
        yield from _lists((_numbers(nodes.parents[lvl], sep) for lvl in range(depth + 1)), sep)

    def groups() -> Iterator[bytes]:
        yield from _lists((_numbers(shape.group_counts(lvl), sep) for lvl in range(depth + 1)), sep)

    def public() -> Iterator[bytes]:
        yield b"true" if shape.public_groups else b"false"

    fields = {"levels": levels, "paths": paths, "parents": parents, "groups": groups, "public_groups": public}
    yield b"{"
    for i, key in enumerate(sorted(fields) if canonical else fields):
        yield (sep if i else b"") + b'"' + key.encode() + b'"' + colon
        yield from fields[key]()
    yield b"}"
