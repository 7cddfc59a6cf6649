"""The public facts of a hierarchy, :class:`Shape`: levels, nodes, parents and G per node.

Split out of :mod:`cocoviz.plan` (which re-exports it); it never holds a group size.

>>> shape = Shape(("state",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)), public_groups=True)
>>> shape.children(()), shape.locate(("b",))
([('a',), ('b',)], (1, 1))

``public_groups`` defaults to False: a shape claims public G only when its maker says so (a
tree built from a public groups table does), and :meth:`Shape.same_as` compares it, so a plan
whose shape claims public G never passes for a tree whose G came from private rows.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Sequence

import numpy as np

from cocoviz.core.nodes import LevelPaths, NodeCodes
from cocoviz.core.shape_text import digest_and_json, shape_json
from cocoviz.errors import InputError, ParameterError

__all__ = ["Shape", "Path"]

Path = tuple[str, ...]


class Shape:
    """The public facts of a hierarchy: level names, nodes, parents and G per node.

    ``paths[l]`` lists the nodes of level ``l`` (the root is level 0) in a
    fixed order; ``parents[l][k]`` is the index one level up of node ``k`` of
    level ``l`` (empty for the root); ``groups[l][k]`` is its public G.
    ``public_groups`` says that G and the node list come from a public
    groups table; it is False (the default) when they were taken from
    private rows (a persons table without a public groups table) or when
    the shape's maker does not say.

    Held as integer arrays (:class:`~cocoviz.core.nodes.NodeCodes` and G per
    level): :meth:`parent_index` and :meth:`group_counts` return them
    read-only; ``paths`` makes its tuples on demand, and ``parents`` and
    ``groups`` as tuples are made on first use.  Read-only; compared by
    :meth:`same_as`.
    """

    levels: tuple[str, ...]
    public_groups: bool

    def __init__(
        self,
        levels: Sequence[str],
        paths: Sequence[Sequence[Path]],
        parents: Sequence[Sequence[int]],
        groups: Sequence[Sequence[int]],
        public_groups: bool = False,
    ):
        if len(paths) != len(levels) + 1 or len(groups) != len(paths) or len(parents) != len(paths):
            raise ParameterError("a shape needs one list of nodes, of parents and of G per level, the root included")
        try:
            nodes = NodeCodes.from_paths(paths, parents)
        except ValueError as exc:
            raise ParameterError(f"not the shape of a tree: {exc}") from None
        self._set(tuple(levels), nodes, groups, public_groups)

    @classmethod
    def _from_codes(cls, levels: Sequence[str], nodes: NodeCodes, groups, public_groups: bool) -> Shape:
        shape = cls.__new__(cls)
        shape._set(tuple(levels), nodes, groups, public_groups)
        return shape

    def _set(self, levels: tuple[str, ...], nodes: NodeCodes, groups, public_groups: bool) -> None:
        if not isinstance(public_groups, (bool, np.bool_)):
            raise ParameterError(f"public_groups must be True or False, got {public_groups!r}")
        g = tuple(np.asarray(x, np.int64).reshape(-1) for x in groups)
        if any(len(x) != nodes.size(lvl) for lvl, x in enumerate(g)):
            raise ParameterError("a shape needs one G per node of every level")
        for lvl, x in enumerate(g):
            if (x < 0).any():
                raise ParameterError(f"a shape's G must be >= 0: level {lvl} has {int(x.min())}")
            if lvl and not np.array_equal(
                np.bincount(nodes.parents[lvl], weights=x, minlength=g[lvl - 1].size), g[lvl - 1]
            ):
                raise ParameterError(f"a shape's G of every node of level {lvl - 1} must be the sum of its children's")
            x.setflags(write=False)
        put = object.__setattr__
        put(self, "levels", levels)
        put(self, "public_groups", bool(public_groups))
        put(self, "_nodes", nodes)
        put(self, "_groups", g)
        put(self, "_cache", {})

    def __setattr__(self, name, value):
        raise AttributeError(f"a Shape is read-only: cannot set {name!r}")

    def __repr__(self) -> str:
        return f"Shape(levels={self.levels!r}, public_groups={self.public_groups!r})"

    @classmethod
    def of(cls, tree) -> Shape:
        """The public shape of a :class:`~cocoviz.hierarchy.Hierarchy` (never its group sizes).

        Remembered per tree (a tree never changes), so planning, measuring and
        evaluating one tree build it once.
        """
        if not all(hasattr(tree, a) for a in ("levels", "depth", "runs", "node_codes")):
            raise ParameterError(f"expected a Hierarchy (the tree of regions), got {type(tree).__name__}")
        shape = _SHAPES.get(tree)
        if shape is None:
            shape = _SHAPES[tree] = cls._of(tree)
        return shape

    @classmethod
    def _of(cls, tree) -> Shape:
        groups = [tree.runs(lvl).groups() for lvl in range(tree.depth + 1)]
        # Asked of the tree itself: a tree that does not say its G is public is taken as not public.
        return cls._from_codes(tree.levels, tree.node_codes, groups, getattr(tree, "public_groups", False) is True)

    # ------------------------------------------------------------ as tuples
    def _cached(self, key: str, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def paths(self) -> tuple[LevelPaths, ...]:
        """Per level, the nodes' paths (sequences that make their tuples on demand)."""
        return self._cached("paths", lambda: tuple(self._nodes.paths(lvl) for lvl in range(self.depth + 1)))

    @property
    def parents(self) -> tuple[tuple[int, ...], ...]:
        """Per level, every node's parent index as a tuple (the root's is empty); see :meth:`parent_index`."""
        return self._cached("parents", lambda: tuple(tuple(p.tolist()) for p in self._nodes.parents))

    @property
    def groups(self) -> tuple[tuple[int, ...], ...]:
        """Per level, every node's G as a tuple; see :meth:`group_counts`."""
        return self._cached("groups", lambda: tuple(tuple(g.tolist()) for g in self._groups))

    # ------------------------------------------------------------- queries
    @property
    def depth(self) -> int:
        return len(self.levels)

    @property
    def node_codes(self) -> NodeCodes:
        """The nodes as read-only integer arrays."""
        return self._nodes

    def n_nodes(self, level: int) -> int:
        """Number of nodes at ``level``."""
        return self._nodes.size(level)

    def nodes(self, level: int) -> list[Path]:
        return list(self.paths[level])

    def parent_index(self, level: int) -> np.ndarray:
        """For every node at ``level`` (>= 1), its parent's index one level up (read-only)."""
        return self._nodes.parents[level]

    def group_counts(self, level: int) -> np.ndarray:
        """Every node's G at ``level`` (read-only)."""
        return self._groups[level]

    def locate(self, node: Sequence[str]) -> tuple[int, int]:
        """Level of ``node`` and its index within that level (:meth:`~cocoviz.core.nodes.NodeCodes.find`)."""
        return self._nodes.find(node)

    def children(self, node: Sequence[str]) -> list[Path]:
        """Paths of the children of ``node`` (empty for a leaf)."""
        return self._nodes.child_paths(node)

    def same_as(self, other: Shape) -> bool:
        """Whether ``other`` is the same shape in full: levels, nodes, parents, G and ``public_groups``."""
        return self.difference(other) is None

    def difference(self, other: Shape) -> str | None:
        """What first differs between this shape and ``other`` (None when they are the same in full).

        >>> a = Shape((), (((),),), ((),), ((3,),), public_groups=True)
        >>> a.difference(Shape((), (((),),), ((),), ((3,),)))
        'G is public in one and taken from private rows in the other (public_groups True vs False)'
        """
        if self is other:
            return None
        if not isinstance(other, Shape):
            return f"not a Shape: {type(other).__name__}"
        if self.levels != other.levels:
            return f"levels {list(self.levels)} vs {list(other.levels)}"
        if not self._nodes.same(other._nodes):
            return "their nodes or parents differ"
        if not all(np.array_equal(a, b) for a, b in zip(self._groups, other._groups)):
            return "their G per node differ"
        if self.public_groups != other.public_groups:
            return (
                "G is public in one and taken from private rows in the other "
                f"(public_groups {self.public_groups} vs {other.public_groups})"
            )
        return None

    def to_dict(self) -> dict:
        return {
            "levels": list(self.levels),
            "paths": [[list(p) for p in ps] for ps in self.paths],
            "parents": [p.tolist() for p in self._nodes.parents],
            "groups": [g.tolist() for g in self._groups],
            "public_groups": self.public_groups,
        }

    def digest(self) -> str:
        """SHA-256 of :meth:`to_dict` as canonical JSON (sorted keys, no spaces, UTF-8): the shape's identity,
        computed once (a shape never changes).  The text is hashed piece by piece as
        :func:`~cocoviz.core.shape_text.shape_json` writes it from the node arrays, never held whole."""

        def make() -> str:
            h = hashlib.sha256()
            for piece in shape_json(self, canonical=True):
                h.update(piece)
            return h.hexdigest()

        return self._cached("digest", make)

    def json_bytes(self) -> bytes:
        """``json.dumps(self.to_dict(), ensure_ascii=False)`` in UTF-8, written from the node arrays
        (:mod:`cocoviz.core.shape_text`); the :meth:`digest` is made in the same pass when not made yet.

        >>> Shape((), (((),),), ((),), ((4,),)).json_bytes()[:30]
        b'{"levels": [], "paths": [[[]]]'
        """
        if "digest" in self._cache:
            return b"".join(shape_json(self))
        digest, text = digest_and_json(self)
        self._cache["digest"] = digest
        return text

    @classmethod
    def from_dict(cls, data: dict) -> Shape:
        """The shape :meth:`to_dict` wrote; anything else is refused with an :class:`InputError` naming why."""
        if not isinstance(data, dict):
            raise InputError(f"a stored shape must be a mapping, got {type(data).__name__}")
        missing = [k for k in ("levels", "paths", "parents", "groups", "public_groups") if k not in data]
        if missing:
            raise InputError(f"the stored shape lacks {', '.join(missing)}")
        levels, paths, parents, groups = (data[k] for k in ("levels", "paths", "parents", "groups"))
        if not isinstance(data["public_groups"], bool):
            raise InputError(f"the stored shape's public_groups must be true or false, got {data['public_groups']!r}")
        if (
            not _strings(levels)
            or not isinstance(paths, list)
            or not all(isinstance(ps, list) and all(_strings(p) for p in ps) for ps in paths)
        ):
            raise InputError("the stored shape's levels and node paths must be lists of text")
        for name, rows in (("parents", parents), ("groups", groups)):
            if not isinstance(rows, list) or not all(_whole_numbers(r) for r in rows):
                raise InputError(f"the stored shape's {name} must be lists of whole numbers")
        if any(g < 0 for r in groups for g in r):
            raise InputError("the stored shape has a negative G")
        try:
            return cls(tuple(levels), [[tuple(p) for p in ps] for ps in paths], parents, groups, data["public_groups"])
        except (ParameterError, ValueError, OverflowError) as exc:
            raise InputError(f"the stored shape is not a hierarchy's: {exc}") from None


def _strings(values) -> bool:
    return isinstance(values, list) and all(isinstance(v, str) for v in values)


def _whole_numbers(values) -> bool:
    return isinstance(values, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in values)


_SHAPES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
