"""The public facts of a hierarchy, :class:`Shape`: levels, nodes, parents and G per node.

Split out of :mod:`cocoviz.plan` (which re-exports it); it never holds a group size.

>>> shape = Shape(("state",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)))
>>> shape.children(()), shape.locate(("b",))
([('a',), ('b',)], (1, 1))
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from cocoviz.errors import ParameterError

__all__ = ["Shape", "Path"]

Path = tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Shape:
    """The public facts of a hierarchy: level names, nodes, parents and G per node.

    ``paths[l]`` lists the nodes of level ``l`` (the root is level 0) in a
    fixed order; ``parents[l][k]`` is the index one level up of node ``k`` of
    level ``l`` (empty for the root); ``groups[l][k]`` is its public G.
    ``public_groups`` is False when G and the node list were taken from
    private rows (a persons table without a public groups table).
    """

    levels: tuple[str, ...]
    paths: tuple[tuple[Path, ...], ...] = field(repr=False)
    parents: tuple[tuple[int, ...], ...] = field(repr=False)
    groups: tuple[tuple[int, ...], ...] = field(repr=False)
    public_groups: bool = True

    def __post_init__(self):
        if len(self.paths) != len(self.levels) + 1 or len(self.groups) != len(self.paths):
            raise ParameterError("a shape needs one list of nodes and of G per level, the root included")
        object.__setattr__(self, "_index", [{p: k for k, p in enumerate(ps)} for ps in self.paths])

    @classmethod
    def of(cls, tree) -> Shape:
        """The public shape of a :class:`~cocoviz.hierarchy.Hierarchy` (never its group sizes).

        Remembered per tree (a tree never changes), so planning, measuring and
        evaluating one tree build it once.
        """
        shape = _SHAPES.get(tree)
        if shape is None:
            shape = _SHAPES[tree] = cls._of(tree)
        return shape

    @classmethod
    def _of(cls, tree) -> Shape:
        depth = tree.depth
        return cls(
            tuple(tree.levels),
            tuple(tuple(tree.nodes(lvl)) for lvl in range(depth + 1)),
            ((),) + tuple(tuple(int(x) for x in tree.parents(lvl)) for lvl in range(1, depth + 1)),
            tuple(tuple(int(g) for g in tree.runs(lvl).groups()) for lvl in range(depth + 1)),
            bool(getattr(tree, "public_groups", True)),
        )

    @property
    def depth(self) -> int:
        return len(self.levels)

    def nodes(self, level: int) -> list[Path]:
        return list(self.paths[level])

    def parent_index(self, level: int) -> np.ndarray:
        """For every node at ``level`` (>= 1), its parent's index one level up."""
        return np.asarray(self.parents[level], np.int64)

    def group_counts(self, level: int) -> np.ndarray:
        return np.asarray(self.groups[level], np.int64)

    def locate(self, node: Sequence[str]) -> tuple[int, int]:
        """Level of ``node`` and its index within that level."""
        path = tuple(str(x) for x in node)
        if len(path) > self.depth or path not in self._index[len(path)]:
            raise KeyError(f"no node {path} in this hierarchy")
        return len(path), self._index[len(path)][path]

    def children(self, node: Sequence[str]) -> list[Path]:
        level, k = self.locate(node)
        if level == self.depth:
            return []
        return [self.paths[level + 1][c] for c in np.flatnonzero(self.parent_index(level + 1) == k)]

    def same_as(self, other: Shape) -> bool:
        return self is other or (self.levels, self.paths, self.parents, self.groups) == (
            other.levels,
            other.paths,
            other.parents,
            other.groups,
        )

    def to_dict(self) -> dict:
        return {
            "levels": list(self.levels),
            "paths": [[list(p) for p in ps] for ps in self.paths],
            "parents": [list(p) for p in self.parents],
            "groups": [list(g) for g in self.groups],
            "public_groups": self.public_groups,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Shape:
        return cls(
            tuple(data["levels"]),
            tuple(tuple(tuple(p) for p in ps) for ps in data["paths"]),
            tuple(tuple(int(x) for x in p) for p in data["parents"]),
            tuple(tuple(int(g) for g in gs) for gs in data["groups"]),
            bool(data["public_groups"]),
        )


_SHAPES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
