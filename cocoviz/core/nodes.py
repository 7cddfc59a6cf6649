"""The nodes of a region hierarchy as flat integer arrays; node paths as tuples only on demand.

A hierarchy of ``depth`` levels below the root keeps, for every level ``l >= 1``,
two integer arrays over its nodes: ``codes[l]``, the node's own label as an index
into the sorted distinct labels of level ``l``, and ``parents[l]``, the index of
its parent one level up.  A node's path, ``("CA", "Alameda")``, is made from
these only when asked for (labels, the dashboard), so building, comparing and
planning a tree of hundreds of thousands of nodes touches no Python object per
node.

:class:`LabelColumns` is the input form: the labels of a list of items (leaves,
table rows) per level, as codes into per-level label arrays.
:meth:`NodeCodes.build` sorts the items' paths and returns every level's nodes
in sorted path order -- the order every seeded release depends on.

>>> columns = LabelColumns.from_paths([("b", "x"), ("a", "y"), ("a", "x")], 2)
>>> nodes, leaf = NodeCodes.build(columns)
>>> list(nodes.paths(2)), leaf.tolist(), nodes.parents[2].tolist()
([('a', 'x'), ('a', 'y'), ('b', 'x')], [2, 1, 0], [0, 0, 1])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from cocoviz.errors import ParameterError, UnknownNode

__all__ = ["LabelColumns", "NodeCodes", "LevelPaths", "Path"]

Path = tuple[str, ...]


def _frozen(a: np.ndarray, dtype=np.int64) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=dtype)
    a.setflags(write=False)
    return a


def narrowest(top: int) -> type[np.signedinteger]:
    """The narrowest signed integer type that holds every index below ``top`` exactly.

    >>> narrowest(100), narrowest(40_000), narrowest(8_000_000)
    (<class 'numpy.int8'>, <class 'numpy.int32'>, <class 'numpy.int32'>)
    """
    for dtype in (np.int8, np.int16, np.int32):
        if top <= np.iinfo(dtype).max + 1:
            return dtype
    return np.int64


def _index(a: np.ndarray, top: int) -> np.ndarray:
    """``a``, indices below ``top``, read-only in :func:`narrowest` type: a node's label code and its parent cost
    1 to 4 bytes each, not 8 (six levels to 8M blocks: 64 MB saved per array)."""
    return _frozen(a, narrowest(top))


def _text(values: np.ndarray) -> np.ndarray:
    """``values`` as an object array of Python ``str``."""
    return np.asarray([str(v) for v in values], dtype=object) if len(values) else np.zeros(0, object)


def _string_order(labels: np.ndarray) -> np.ndarray:
    """A stable argsort of ``labels`` (str) in Python's order (by code point).

    NumPy's fixed-width unicode arrays compare code point by code point, as
    Python does, and sort in C; they only drop trailing NUL characters, so
    labels ending in one are sorted by Python instead.
    """
    if len(labels) < 2:
        return np.arange(len(labels))
    fixed = labels.astype(str)
    if not np.all(fixed == labels):
        return np.array(sorted(range(len(labels)), key=labels.__getitem__), np.int64)
    return np.argsort(fixed, kind="stable")


def _rank_order(ranks: list[np.ndarray], cardinalities: list[int], n: int) -> np.ndarray:
    """The order of items sorted by their ranks, first level first (ties in any order: they are one node)."""
    if not ranks:
        return np.arange(n)
    if float(np.prod([max(c, 1) for c in cardinalities], dtype=np.float64)) < 2.0**62:
        # One mixed-radix key and one sort instead of one sort per level.
        key = np.zeros(n, np.int64)
        for r, c in zip(ranks, cardinalities):
            key = key * max(c, 1) + r
        return np.argsort(key)
    return np.lexsort(ranks[::-1])


@dataclass(frozen=True, eq=False)
class LabelColumns:
    """The paths of ``n`` items per level: item ``i``'s label at level ``j + 1`` is ``labels[j][codes[j][i]]``.

    ``labels[j]`` holds Python strings (object array); it may hold a label
    twice or one no item uses.
    """

    codes: tuple[np.ndarray, ...]
    labels: tuple[np.ndarray, ...]
    n: int

    @classmethod
    def from_paths(cls, paths: Sequence[Sequence[str]], depth: int) -> LabelColumns:
        """From a list of paths, each of ``depth`` labels (converted to ``str``)."""
        codes, labels = [], []
        for j in range(depth):
            c, u = pd.factorize(np.array([str(p[j]) for p in paths], dtype=object))
            codes.append(np.asarray(c, np.int64))
            labels.append(np.asarray(u, dtype=object))
        return cls(tuple(codes), tuple(labels), len(paths))

    @classmethod
    def from_frame(cls, df: pd.DataFrame, columns: Sequence[str]) -> LabelColumns:
        """From the level columns of a table, every value as its ``str`` (one item per row).

        A categorical column costs one ``str`` per category, not per row;
        integer columns one per distinct value; other columns (text, floats,
        mixed) are converted value by value, so that values which are equal
        but print differently (``1`` and ``1.0``, ``0.0`` and ``-0.0``) stay
        different labels.
        """
        codes, labels = [], []
        for col in columns:
            s = df[col]
            if isinstance(s.dtype, pd.CategoricalDtype):
                c, u = s.cat.codes.to_numpy(np.int64), _text(s.cat.categories.to_numpy(dtype=object))
            elif pd.api.types.is_integer_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
                c, u = pd.factorize(s.to_numpy())
                u = _text(np.asarray(u, dtype=object))
            else:
                c, u = pd.factorize(s.astype(str).to_numpy(dtype=object))
                u = np.asarray(u, dtype=object)
            codes.append(np.asarray(c, np.int64))
            labels.append(u)
        return cls(tuple(codes), tuple(labels), len(df))

    def take(self, rows: np.ndarray) -> LabelColumns:
        """The items ``rows``, in that order."""
        return LabelColumns(tuple(c[rows] for c in self.codes), self.labels, len(rows))

    def distinct(self) -> tuple[np.ndarray, LabelColumns]:
        """For every item, the index of its path among the distinct paths; and those paths."""
        # The same text may sit at two codes: merge them first.
        merged = [np.asarray(pd.factorize(lab)[0], np.int64) for lab in self.labels]
        bases = [max(len(lab), 1) for lab in self.labels]
        key = np.zeros(self.n, np.int64)
        if float(np.prod(bases, dtype=np.float64)) < 2.0**62:
            # One mixed-radix key and one hash pass instead of one per level (deep trees: six levels to blocks).
            for c, same, base in zip(self.codes, merged, bases):
                key *= base
                # Distinct labels (categories, as generated tables have) need no merging: the codes as they are.
                key += c if np.array_equal(same, np.arange(len(same))) else same[c]
            key = np.asarray(pd.factorize(key)[0], np.int64)
        else:
            for c, same, base in zip(self.codes, merged, bases):
                key = np.asarray(pd.factorize(key * base + same[c])[0], np.int64)
        # Codes come first seen first: an item holds a new one exactly where the running maximum grows.
        top = np.maximum.accumulate(key) if self.n else key
        first = np.flatnonzero(np.concatenate([[True], top[1:] != top[:-1]])) if self.n else key
        return key, self.take(first)


@dataclass(frozen=True, eq=False)
class NodeCodes:
    """Every level's nodes as integer codes (see the module docstring).

    ``labels[l]`` are the sorted distinct labels of level ``l`` (``labels[0]``
    is empty: the root has no label); ``codes[l][k]`` indexes the label of node
    ``k`` of level ``l``; ``parents[l][k]`` is its parent's index (``parents[0]``
    is empty).  All arrays are read-only.
    """

    labels: tuple[np.ndarray, ...]
    codes: tuple[np.ndarray, ...]
    parents: tuple[np.ndarray, ...]

    @property
    def depth(self) -> int:
        return len(self.codes) - 1

    def size(self, level: int) -> int:
        """Number of nodes at ``level``."""
        return len(self.codes[level])

    # ---------------------------------------------------------------- building
    @classmethod
    def build(cls, items: LabelColumns) -> tuple[NodeCodes, np.ndarray]:
        """The nodes of every level, sorted by path, and the leaf of every item.

        Nodes of level ``l`` are the distinct ``l``-label prefixes of the
        items' paths in sorted order (Python's order of tuples of ``str``), so
        the result does not depend on the items' order.  Works on integer
        arrays only: each level's labels are ranked once, then the items are
        sorted by their ranks.
        """
        depth, n = len(items.codes), items.n
        if n == 0:
            raise ValueError("a hierarchy needs at least one leaf")
        labels, ranks = [np.zeros(0, object)], []
        for c, lab in zip(items.codes, items.labels):
            order = _string_order(lab)
            ordered = lab[order]
            new = np.ones(len(ordered), bool)
            new[1:] = ordered[1:] != ordered[:-1]
            rank = np.empty(len(lab), np.int64)
            rank[order] = np.cumsum(new) - 1
            labels.append(_frozen(ordered[new], object))
            ranks.append(rank[c])
        order = _rank_order(ranks, [len(lab) for lab in labels[1:]], n)
        codes, parents = [_frozen(np.zeros(1))], [_frozen(np.zeros(0))]
        # A sorted item starts a new node of level l when one of its first l ranks changes.
        change = np.zeros(n, bool)
        change[0] = True
        node = np.zeros(n, np.int64)
        for lvl in range(1, depth + 1):
            r = ranks[lvl - 1][order]
            change[1:] |= r[1:] != r[:-1]
            starts = np.flatnonzero(change)
            codes.append(_index(r[starts], len(labels[lvl])))
            parents.append(_index(node[starts], len(codes[lvl - 1])))
            node = np.cumsum(change) - 1
        leaf = np.empty(n, np.int64)
        leaf[order] = node
        return cls(tuple(labels), tuple(codes), tuple(parents)), leaf

    @classmethod
    def from_paths(cls, paths: Sequence[Sequence[Path]], parents: Sequence[Sequence[int]]) -> NodeCodes:
        """From explicit per-level paths and parents, in the order given.

        Raises ValueError unless every node's path is its parent's path and one label.
        """
        depth = len(paths) - 1
        labels, codes, par = [np.zeros(0, object)], [_frozen(np.zeros(len(paths[0])))], [_frozen(np.zeros(0))]
        for lvl in range(1, depth + 1):
            own = [str(p[-1]) if len(p) else "" for p in paths[lvl]]
            distinct = np.array(sorted(set(own)), dtype=object)
            labels.append(_frozen(distinct, object))
            codes.append(_index(np.searchsorted(distinct, np.array(own, dtype=object)) if own else [], len(distinct)))
            given = np.asarray(parents[lvl], np.int64).reshape(-1)
            # Out-of-range parents are refused below: kept in int64 until then, never wrapped by a narrow type.
            fits = not len(given) or (given.min() >= 0 and given.max() < len(paths[lvl - 1]))
            par.append(_index(given, len(paths[lvl - 1])) if fits else _frozen(given))
        nodes = cls(tuple(labels), tuple(codes), tuple(par))
        for lvl in range(depth + 1):
            given = [tuple(str(x) for x in p) for p in paths[lvl]]
            if lvl and len(par[lvl]) != len(given):
                raise ValueError(f"level {lvl} has {len(given)} nodes but {len(par[lvl])} parents")
            if lvl and len(given) and (par[lvl].min() < 0 or par[lvl].max() >= len(paths[lvl - 1])):
                raise ValueError(f"a parent index of level {lvl} is out of range")
            if given != list(nodes.paths(lvl)):
                raise ValueError(f"the paths of level {lvl} do not extend their parents' paths by one label")
        return nodes

    # ----------------------------------------------------------------- queries
    def label_columns(self, level: int, rows: np.ndarray | None = None) -> list[np.ndarray]:
        """For nodes ``rows`` of ``level`` (default all), the label of each ancestor level 1..level (object arrays)."""
        k = np.arange(self.size(level)) if rows is None else np.asarray(rows, np.int64)
        columns = []
        for lvl in range(level, 0, -1):
            columns.append(self.labels[lvl][self.codes[lvl][k]])
            k = self.parents[lvl][k]
        return columns[::-1]

    def ancestors(self, level: int, up_to: int) -> np.ndarray:
        """For every node of ``level``, the index of its ancestor at level ``up_to`` (<= level)."""
        k = np.arange(self.size(level))
        for lvl in range(level, up_to, -1):
            k = self.parents[lvl][k]
        return k

    def path(self, level: int, k: int) -> Path:
        out = []
        for lvl in range(level, 0, -1):
            out.append(str(self.labels[lvl][self.codes[lvl][k]]))
            k = self.parents[lvl][k]
        return tuple(out[::-1])

    def paths(self, level: int) -> LevelPaths:
        """The paths of ``level``'s nodes, a sequence that makes its tuples on demand."""
        return LevelPaths(self, level)

    def children(self, level: int, k: int) -> np.ndarray:
        """Indices at ``level + 1`` of the children of node ``k`` of ``level``."""
        lo, hi = self._child_range(level + 1, k)
        if self._sorted(level + 1):
            return np.arange(lo, hi)
        return np.sort(self._order(level + 1)[lo:hi])

    def find(self, node: Sequence[str]) -> tuple[int, int]:
        """Level of ``node`` (a sequence of labels, root ``()``) and its index within that level.

        A ``node`` that is not a sequence of labels is refused by name (:class:`~cocoviz.errors.ParameterError`),
        one not in the tree as :class:`~cocoviz.errors.UnknownNode` (:meth:`locate`).
        """
        try:
            path = tuple(str(x) for x in node)
        except TypeError:
            raise ParameterError(f"a node is a sequence of labels such as ('CA', 'Alameda'), got {node!r}") from None
        return len(path), self.locate(path)

    def child_paths(self, node: Sequence[str]) -> list[Path]:
        """Paths of the children of ``node`` (empty for a leaf), in level order."""
        level, k = self.find(node)
        if level == self.depth:
            return []
        paths = self.paths(level + 1)
        return [paths[c] for c in self.children(level, k)]

    def locate(self, path: Path) -> int:
        """Index of the node at ``path`` within its level (``len(path)``); KeyError if there is none.

        Costs a binary search per level, not a pass over the level's nodes: a tree's
        levels are ordered by (parent, label) as :meth:`build` makes them, and a
        level that is not gets its order sorted once, on first use.
        """
        if len(path) > self.depth:
            raise UnknownNode(f"no node {path} in this hierarchy")
        k = 0
        for lvl, label in enumerate(path, start=1):
            lab = self.labels[lvl]
            code = int(np.searchsorted(lab, label)) if len(lab) else 0
            if code >= len(lab) or lab[code] != label:
                raise UnknownNode(f"no node {path} in this hierarchy")
            lo, hi = self._child_range(lvl, k)
            codes = self.codes[lvl] if self._sorted(lvl) else self._lookup[lvl][2]
            at = lo + _span(codes[lo:hi], code)
            if at >= hi or codes[at] != code:
                raise UnknownNode(f"no node {path} in this hierarchy")
            k = at if self._sorted(lvl) else int(self._order(lvl)[at])
        return k

    @cached_property
    def _lookup(self) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
        """Per level, once asked: None when its nodes are ordered by (parent, code) (every tree :meth:`build`
        makes), else the (parent, code) order with parents and codes in it (stable: the first of equal
        nodes first).  Kept on the object, which is immutable."""
        return {}

    def _sorted(self, level: int) -> bool:
        if level not in self._lookup:
            p, c = self.parents[level], self.codes[level]
            ordered = bool(np.all((p[1:] > p[:-1]) | ((p[1:] == p[:-1]) & (c[1:] >= c[:-1]))))
            if ordered:
                self._lookup[level] = None
            else:
                order = np.lexsort((c, p))
                self._lookup[level] = (order, p[order], c[order])
        return self._lookup[level] is None

    def _order(self, level: int) -> np.ndarray:
        return self._lookup[level][0]

    def _child_range(self, level: int, k: int) -> tuple[int, int]:
        """Where the children of node ``k`` of ``level - 1`` sit in ``level``'s (parent, code) order."""
        parents = self.parents[level] if self._sorted(level) else self._lookup[level][1]
        return _span(parents, k), _span(parents, k + 1)

    def same(self, other: NodeCodes) -> bool:
        """Whether both hold the same nodes with the same paths and parents, in the same order."""
        if self is other:
            return True
        if self.depth != other.depth or any(not np.array_equal(a, b) for a, b in zip(self.parents, other.parents)):
            return False
        return all(
            np.array_equal(self.labels[lvl][self.codes[lvl]], other.labels[lvl][other.codes[lvl]])
            for lvl in range(1, self.depth + 1)
        ) and self.size(0) == other.size(0)

    def nbytes(self) -> int:
        """Bytes held by the arrays (labels counted as their pointers)."""
        return sum(a.nbytes for part in (self.labels, self.codes, self.parents) for a in part)


def _span(ascending: np.ndarray, value: int) -> int:
    """How many of ``ascending`` are below ``value``, searched in the array's own type (a key of another type
    would make numpy convert the whole array on every call)."""
    if value > np.iinfo(ascending.dtype).max:
        return len(ascending)
    return int(np.searchsorted(ascending, np.asarray(value, ascending.dtype)))


class LevelPaths(Sequence):
    """The paths of one level's nodes, made on demand; equal to any sequence of the same tuples."""

    __slots__ = ("_nodes", "_level", "_tuples")

    def __init__(self, nodes: NodeCodes, level: int):
        self._nodes, self._level, self._tuples = nodes, level, None

    def __len__(self) -> int:
        return self._nodes.size(self._level)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return self._all()[k]
        n = len(self)
        k = int(k)
        if not -n <= k < n:
            raise IndexError(f"node index {k} out of range for {n} nodes")
        if self._tuples is not None:
            return self._tuples[k]
        return self._nodes.path(self._level, k % n)

    def _all(self) -> list[Path]:
        if self._tuples is None:
            if self._level == 0:
                self._tuples = [()] * len(self)
            else:
                self._tuples = list(zip(*(c.tolist() for c in self._nodes.label_columns(self._level))))
        return self._tuples

    def __iter__(self) -> Iterator[Path]:
        return iter(self._all())

    def __eq__(self, other) -> bool:
        if isinstance(other, LevelPaths):
            return len(self) == len(other) and list(self) == list(other)
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(self) == len(other) and all(a == tuple(b) for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        shown = ", ".join(repr(p) for p in self[: min(3, len(self))])
        return f"LevelPaths(level={self._level}, n={len(self)}: {shown}{', ...' if len(self) > 3 else ''})"
