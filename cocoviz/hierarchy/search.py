r"""Find nodes by name among millions: a label, a label's beginning, or a path such as ``"Texas / Harris"``.

The dashboard's node picker cannot list a level of eight million blocks; it
asks :func:`find_nodes` instead.  Matching works on every level's *distinct*
labels (:class:`~cocoviz.core.nodes.NodeCodes` keeps them sorted, and codes point
into them), so a query costs one vectorised string pass over the distinct
labels and one integer gather per level over the nodes -- no Python object per
node.

A query is a label or a path of labels joined by ``/`` (spaces around a ``/``
are ignored; ``\/`` is a ``/`` inside a label, as in
:func:`~cocoviz.hierarchy.node_label`).  A path of ``m`` parts matches a node
whose ``m`` last labels (its own and its ancestors') match the parts in order,
case-insensitively.  Each part matches a label exactly, as its beginning
(a *prefix*: a name typed half-way, a code's leading digits) or inside it (a
*substring*); a node ranks by its worst part.  Results come best first: exact
matches, then prefix, then substring; within each, shallower levels first,
then in the tree's order.  At most ``limit`` are returned, with the number of
all matches.

>>> from cocoviz.core.nodes import LabelColumns, NodeCodes
>>> paths = [("Texas", "Harris"), ("Texas", "Travis"), ("Harrison", "Ames"), ("Ohio", "Harris")]
>>> nodes, _ = NodeCodes.build(LabelColumns.from_paths(paths, 2))
>>> hits = find_nodes(nodes, "harris")
>>> [nodes.path(lvl, k) for lvl, k in zip(hits.levels, hits.indices)], hits.kinds.tolist()
([('Ohio', 'Harris'), ('Texas', 'Harris'), ('Harrison',)], [0, 0, 1])
>>> hits = find_nodes(nodes, "tex / har")
>>> [nodes.path(lvl, k) for lvl, k in zip(hits.levels, hits.indices)], hits.total
([('Texas', 'Harris')], 1)
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cocoviz.core.nodes import NodeCodes
from cocoviz.hierarchy.tree import node_path

__all__ = [
    "EXACT",
    "PREFIX",
    "SUBSTRING",
    "KIND_NAMES",
    "Hits",
    "LabelIndex",
    "child_labels",
    "find_nodes",
    "parse_query",
]

#: How a node matched, best first (the values of :attr:`Hits.kinds`).
EXACT, PREFIX, SUBSTRING = 0, 1, 2
KIND_NAMES = ("exact", "prefix", "substring")
_NONE = 3  # no match: above every kind, so that the worst part decides


@dataclass(frozen=True)
class Hits:
    """The nodes found, best first: node ``i`` is node ``indices[i]`` of level ``levels[i]``, matched as
    ``kinds[i]`` (:data:`EXACT`, :data:`PREFIX` or :data:`SUBSTRING`); ``total`` counts every match, also
    those beyond the limit."""

    levels: np.ndarray
    indices: np.ndarray
    kinds: np.ndarray
    total: int

    def __len__(self) -> int:
        return len(self.indices)


@dataclass(frozen=True, eq=False)
class LabelIndex:
    """Every level's distinct labels folded to lower case, as fixed-width numpy strings (level 0: none): bytes
    where a level's labels are all ASCII, else unicode.

    Built once per hierarchy (:meth:`of` remembers it per :class:`~cocoviz.core.nodes.NodeCodes`); its arrays
    stand beside ``nodes.labels``, so label code ``c`` of level ``l`` is ``folded[l][c]``.
    """

    nodes: NodeCodes
    folded: tuple[np.ndarray, ...]

    @classmethod
    def build(cls, nodes: NodeCodes) -> LabelIndex:
        return cls(nodes, (np.zeros(0, str), *(_fold(nodes.labels[lvl]) for lvl in range(1, nodes.depth + 1))))

    @classmethod
    def built(cls, nodes: NodeCodes) -> bool:
        """Whether the index of ``nodes`` is built already (:meth:`of` returns at once): a page shows a
        spinner otherwise, since 8M GEOIDs take a second or two."""
        return nodes in _INDEXES

    @classmethod
    def of(cls, nodes: NodeCodes) -> LabelIndex:
        """The index of ``nodes``, built on first use and kept as long as ``nodes`` lives."""
        index = _INDEXES.get(nodes)
        if index is None:
            index = _INDEXES[nodes] = cls.build(nodes)
        return index

    def label_kinds(self, level: int, part: str) -> np.ndarray:
        """For every distinct label of ``level``, how it matches ``part`` (already folded): a kind, or none (3)."""
        labels = self.folded[level]
        if labels.dtype.kind == "S":  # ASCII labels, held as bytes: a query beyond ASCII matches none of them
            try:
                part = part.encode("ascii")
            except UnicodeEncodeError:
                return np.full(len(labels), _NONE, np.uint8)
        where = np.strings.find(labels, part)
        kinds = np.full(len(labels), _NONE, np.uint8)
        kinds[where >= 0] = SUBSTRING
        prefix = np.flatnonzero(where == 0)
        kinds[prefix] = PREFIX
        kinds[prefix[np.strings.str_len(labels[prefix]) == len(part)]] = EXACT
        return kinds


_INDEXES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _fold(labels: np.ndarray) -> np.ndarray:
    """A level's labels (Python ``str``) folded to lower case, as fixed-width numpy strings: one byte per
    character when every label is ASCII (a quarter of numpy's 4-byte characters: 8M GEOIDs take 120 MB, not
    480 MB), else unicode.

    ASCII labels go straight to bytes and are folded there, byte by byte (``A``-``Z`` to ``a``-``z``, what
    :func:`numpy.strings.lower` does to them), without the 4-byte unicode copy in between.
    """
    if not len(labels):
        return np.zeros(0, str)
    try:
        folded = labels.astype(np.bytes_)
    except UnicodeEncodeError:
        text = labels.astype(str)
        # Codes (GEOIDs, "000100") have no case: folding only the other labels spares most of the work.
        cased = ~np.strings.isdigit(text)
        if cased.any():
            text[cased] = np.strings.lower(text[cased])
        try:  # folding may have made them ASCII
            return text.astype(np.bytes_)
        except UnicodeEncodeError:
            return text
    if folded.itemsize:
        chars = folded.view(np.uint8)
        for lo in range(0, chars.size, 1 << 24):  # in slices: the masks stay small
            part = chars[lo : lo + (1 << 24)]
            np.add(part, 32, out=part, where=(part >= ord("A")) & (part <= ord("Z")))
    return folded


def parse_query(query: str) -> list[str]:
    r"""The parts of a query, folded to lower case: a path split at ``/`` (``\/`` kept), spaces trimmed.

    >>> parse_query(" Texas / Harris "), parse_query("a\\/b"), parse_query("  ")
    (['texas', 'harris'], ['a/b'], [])
    """
    text = query.strip()
    if not text:
        return []
    # Folded as the labels are (numpy's lower case), so that a query and a label fold alike.
    return [str(np.strings.lower(part.strip())) for part in node_path(text)]


def find_nodes(nodes: NodeCodes | LabelIndex, query: str, limit: int = 50) -> Hits:
    """The nodes below the root that ``query`` names, best first, at most ``limit`` (see the module docstring).

    ``nodes`` is a hierarchy's :class:`~cocoviz.core.nodes.NodeCodes` (its :class:`LabelIndex` is built once and
    remembered) or the index itself.  An empty query finds nothing.
    """
    index = nodes if isinstance(nodes, LabelIndex) else LabelIndex.of(nodes)
    codes = index.nodes
    parts = parse_query(query)
    empty = np.zeros(0, np.int64)
    if not parts or limit < 0:
        return Hits(empty, empty, np.zeros(0, np.uint8), 0)
    m = len(parts)
    # Per level, how each distinct label matches each part that can fall on it.
    label_kinds: dict[tuple[int, int], np.ndarray] = {}
    per_level: list[tuple[int, np.ndarray]] = []  # (level, kind of every node of it)
    for level in range(m, codes.depth + 1):
        start = level - m + 1
        kinds = None
        for j, part in enumerate(parts):
            lvl = start + j
            if (lvl, j) not in label_kinds:
                label_kinds[lvl, j] = index.label_kinds(lvl, part)
            table = label_kinds[lvl, j]
            if table.min(initial=_NONE) == _NONE:
                kinds = None  # no label of this level matches the part: no node of ``level`` can
                break
            own = table[codes.codes[lvl]]
            kinds = own if kinds is None else np.maximum(own, kinds[codes.parents[lvl]])
        if kinds is not None:
            per_level.append((level, kinds))
    found_levels, found_indices, found_kinds, total = [], [], [], 0
    room = limit
    for kind in (EXACT, PREFIX, SUBSTRING):
        for level, kinds in per_level:
            hit = np.flatnonzero(kinds == kind)
            total += len(hit)
            take = hit[:room]
            if len(take):
                found_levels.append(np.full(len(take), level, np.int64))
                found_indices.append(take.astype(np.int64))
                found_kinds.append(np.full(len(take), kind, np.uint8))
                room -= len(take)
    if not found_indices:
        return Hits(empty, empty, np.zeros(0, np.uint8), total)
    return Hits(np.concatenate(found_levels), np.concatenate(found_indices), np.concatenate(found_kinds), total)


def child_labels(nodes: NodeCodes, path: Sequence[str]) -> np.ndarray:
    """The own labels of the children of the node at ``path``, in the tree's order (an object array; empty
    for a leaf), with no tuple per child: a drill-down list shows a few of them, whatever their number.

    Raises :class:`~cocoviz.errors.UnknownNode` when there is no node at ``path``.

    >>> from cocoviz.core.nodes import LabelColumns
    >>> nodes, _ = NodeCodes.build(LabelColumns.from_paths([("b", "x"), ("a", "y"), ("a", "x")], 2))
    >>> child_labels(nodes, ()).tolist(), child_labels(nodes, ("a",)).tolist(), child_labels(nodes, ("a", "x"))
    (['a', 'b'], ['x', 'y'], array([], dtype=object))
    """
    level = len(path)
    k = nodes.locate(tuple(str(p) for p in path))
    if level >= nodes.depth:
        return np.zeros(0, object)
    kids = nodes.children(level, k)
    return nodes.labels[level + 1][nodes.codes[level + 1][kids]]
