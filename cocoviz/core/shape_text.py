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

import hashlib
import json
from collections.abc import Callable, Iterator

import numpy as np

__all__ = ["digest_and_json", "shape_json"]


_SEP = b"\x01"  # JSON escapes every control character: this byte is never inside a label's text


def _packed(texts: np.ndarray) -> bytes:
    """``b"[" + _SEP.join(texts) + b"]"`` for a fixed-width byte-string array (no NUL inside any text)."""
    if texts.size == 0:
        return b"[]"
    raw = np.frombuffer(np.strings.add(texts, _SEP).tobytes(), np.uint8)
    return b"[" + raw[raw != 0].tobytes()[:-1] + b"]"


def _numbers(values: np.ndarray) -> bytes:
    """A JSON list of integers (``values.tolist()``'s text)."""
    values = np.asarray(values)
    return _packed(values.astype(np.int64).astype(np.bytes_)) if values.size else b"[]"


def _level_paths(nodes) -> Iterator[bytes]:
    """Per level, the JSON list of its nodes' paths (each a list of label strings)."""
    open_text = np.array([b"["], dtype=np.bytes_)  # the root's path, not yet closed
    yield _packed(np.strings.add(open_text, b"]"))
    for level in range(1, nodes.depth + 1):
        labels = np.array(
            [json.dumps(str(x), ensure_ascii=False).encode("utf-8") for x in nodes.labels[level]], dtype=np.bytes_
        )
        parent = open_text[nodes.parents[level]]
        if level > 1:
            parent = np.strings.add(parent, _SEP)
        open_text = np.strings.add(parent, labels[nodes.codes[level]])
        del parent
        yield _packed(np.strings.add(open_text, b"]"))


def _list(parts: Iterator[bytes]) -> bytes:
    return b"[" + _SEP.join(parts) + b"]"


def _fields(shape) -> dict[str, Callable[[], bytes]]:
    """Each field of ``shape.to_dict()`` (in its order) as a maker of its JSON text, ``_SEP`` between items."""
    nodes, depth = shape.node_codes, shape.node_codes.depth
    return {
        "levels": lambda: _list(json.dumps(x, ensure_ascii=False).encode("utf-8") for x in shape.levels),
        "paths": lambda: _list(_level_paths(nodes)),
        "parents": lambda: _list(_numbers(nodes.parents[lvl]) for lvl in range(depth + 1)),
        "groups": lambda: _list(_numbers(shape.group_counts(lvl)) for lvl in range(depth + 1)),
        "public_groups": lambda: b"true" if shape.public_groups else b"false",
    }


def _written(fields: dict, canonical: bool) -> Iterator[bytes]:
    """The object's pieces: ``fields`` maps each key to its text (bytes) or a maker of it (made when reached)."""
    sep, colon = (b",", b":") if canonical else (b", ", b": ")
    yield b"{"
    for i, key in enumerate(sorted(fields) if canonical else fields):
        text = fields[key]
        yield (sep if i else b"") + b'"' + key.encode() + b'"' + colon
        yield (text if isinstance(text, bytes) else text()).replace(_SEP, sep)
    yield b"}"


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
        Pieces whose concatenation is the text; one field is made only when reached.

    Examples
    --------
    >>> from cocoviz.core.shape import Shape
    >>> shape = Shape(("state",), (((),), (("a",),)), ((), (0,)), ((4,), (4,)))
    >>> b"".join(shape_json(shape, canonical=True)).decode()
    '{"groups":[[4],[4]],"levels":["state"],"parents":[[],[0]],"paths":[[[]],[["a"]]],"public_groups":false}'
    """
    return _written(_fields(shape), canonical)


def digest_and_json(shape) -> tuple[str, bytes]:
    """SHA-256 (hex) of the canonical form and the whole default form, from one pass over the node arrays.

    Parameters
    ----------
    shape : Shape
        The shape to write.

    Returns
    -------
    tuple[str, bytes]
        ``hashlib.sha256(b"".join(shape_json(shape, True))).hexdigest()`` and ``b"".join(shape_json(shape))``.

    Examples
    --------
    >>> from cocoviz.core.shape import Shape
    >>> shape = Shape((), (((),),), ((),), ((4,),), public_groups=True)
    >>> digest, text = digest_and_json(shape)
    >>> digest[:12], text.decode()
    ('844835dc42f3', '{"levels": [], "paths": [[[]]], "parents": [[]], "groups": [[4]], "public_groups": true}')
    """
    texts = {key: make() for key, make in _fields(shape).items()}
    h = hashlib.sha256()
    for piece in _written(texts, canonical=True):
        h.update(piece)
    return h.hexdigest(), b"".join(_written(texts, canonical=False))
