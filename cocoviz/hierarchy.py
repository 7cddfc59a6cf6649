"""Region hierarchies and their true count-of-counts histograms.

A :class:`Hierarchy` holds, for every leaf region, the groups it contains as
runs of ``(size, count)``: ``count`` groups have exactly ``size`` members.
Equal-sized groups are interchangeable for every quantity the method needs, so
this compact form is all that is kept; memory grows with the number of
distinct sizes per leaf, not with the number of groups.

Nodes are addressed by their path from the root: ``()`` is the root,
``("CA",)`` a state, ``("CA", "Alameda")`` a county.  Level labels are
stored as strings.

Examples
--------
>>> import pandas as pd
>>> persons = pd.DataFrame({"group": [1, 1, 1, 1, 2, 2, 3, 4],
...                         "region": list("aaaabbab")})
>>> tree = Hierarchy.from_persons(persons, group="group", levels=["region"])
>>> tree.histogram(())
array([0, 2, 1, 0, 1])
>>> tree.histogram(("a",))
array([0, 1, 0, 0, 1])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["Hierarchy", "LevelRuns", "MAX_DEPTH", "aggregate_runs", "node_label"]

Path = tuple[str, ...]

#: Levels below the root that a hierarchy may have.
MAX_DEPTH = 4

_SHOWN_ROWS = 5


@dataclass(frozen=True)
class LevelRuns:
    """The groups of every node of one level, as sorted ``(size, count)`` runs.

    Node ``k`` owns ``sizes[ptr[k]:ptr[k + 1]]`` and the matching ``counts``
    (compressed sparse rows); sizes are strictly increasing within a node and
    every count is positive.
    """

    ptr: np.ndarray
    sizes: np.ndarray
    counts: np.ndarray

    def node(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Sizes and counts of node ``k``."""
        lo, hi = self.ptr[k], self.ptr[k + 1]
        return self.sizes[lo:hi], self.counts[lo:hi]

    @property
    def n_nodes(self) -> int:
        return len(self.ptr) - 1

    def groups(self) -> np.ndarray:
        """Number of groups G of every node."""
        # Not np.add.reduceat: it returns a run's count, not 0, for a node with no runs.
        total = np.concatenate([np.zeros(1, np.int64), np.cumsum(self.counts, dtype=np.int64)])
        return total[self.ptr[1:]] - total[self.ptr[:-1]]

    def node_ids(self) -> np.ndarray:
        """For every run, the index of the node that owns it."""
        return np.repeat(np.arange(self.n_nodes), np.diff(self.ptr))


def aggregate_runs(node_of_run: np.ndarray, sizes: np.ndarray, counts: np.ndarray,
                    n_nodes: int) -> LevelRuns:
    """Sum counts of equal (node, size) pairs and return them as sorted CSR runs."""
    order = np.lexsort((sizes, node_of_run))
    node_sorted, size_sorted, count_sorted = node_of_run[order], sizes[order], counts[order]
    if len(order):
        new_run = np.empty(len(order), bool)
        new_run[0] = True
        new_run[1:] = (node_sorted[1:] != node_sorted[:-1]) | (size_sorted[1:] != size_sorted[:-1])
        starts = np.flatnonzero(new_run)
        node_sorted = node_sorted[starts]
        size_sorted = size_sorted[starts]
        count_sorted = np.add.reduceat(count_sorted, starts)
    keep = count_sorted > 0
    node_sorted, size_sorted, count_sorted = node_sorted[keep], size_sorted[keep], count_sorted[keep]
    ptr = np.zeros(n_nodes + 1, np.int64)
    np.cumsum(np.bincount(node_sorted, minlength=n_nodes), out=ptr[1:])
    return LevelRuns(ptr, size_sorted.astype(np.int64), count_sorted.astype(np.int64))


def node_label(path: Sequence[str]) -> str:
    """Readable name of a node: ``"(root)"`` or its labels joined by ``/``."""
    return "/".join(path) if len(path) else "(root)"


def _rows(mask: np.ndarray, index: pd.Index) -> str:
    """The first offending row labels, for error messages."""
    labels = [str(x) for x in index[np.asarray(mask)][:_SHOWN_ROWS]]
    more = int(np.count_nonzero(mask)) - len(labels)
    return ", ".join(labels) + (f" (and {more} more)" if more > 0 else "")


def _require_columns(df: pd.DataFrame, columns: Sequence[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"missing column(s) {missing}; the table has {list(df.columns)}")
    if len(columns) != len(set(columns)):
        raise ValueError(f"a column is given two roles: {list(columns)}")
    if len(df) == 0:
        raise ValueError("the table is empty: it has no rows")


def _check_levels(df: pd.DataFrame, levels: Sequence[str]) -> list[str]:
    levels = list(levels)
    if len(levels) > MAX_DEPTH:
        raise ValueError(f"at most {MAX_DEPTH} levels below the root are supported, got {len(levels)}: {levels}")
    for col in levels:
        missing = df[col].isna().to_numpy()
        if missing.any():
            raise ValueError(f"column '{col}': missing region label in rows {_rows(missing, df.index)}")
        blank = df[col].astype(str).str.strip().eq("").to_numpy()
        if blank.any():
            raise ValueError(f"column '{col}': empty region label in rows {_rows(blank, df.index)}")
    return levels


def _nonnegative_integers(df: pd.DataFrame, col: str, what: str) -> np.ndarray:
    """Column ``col`` as int64, refusing missing, non-numeric, fractional or negative entries."""
    raw = df[col]
    values = pd.to_numeric(raw, errors="coerce")
    bad = values.isna().to_numpy() & raw.notna().to_numpy()
    if bad.any():
        raise ValueError(f"column '{col}': {what} must be a number; not a number in rows {_rows(bad, df.index)}")
    missing = values.isna().to_numpy()
    if missing.any():
        raise ValueError(f"column '{col}': missing {what} in rows {_rows(missing, df.index)}")
    as_float = values.to_numpy(dtype=np.float64)
    infinite = ~np.isfinite(as_float)
    if infinite.any():
        raise ValueError(f"column '{col}': infinite {what} in rows {_rows(infinite, df.index)}")
    negative = as_float < 0
    if negative.any():
        raise ValueError(f"column '{col}': negative {what} in rows {_rows(negative, df.index)}")
    fractional = as_float != np.floor(as_float)
    if fractional.any():
        raise ValueError(f"column '{col}': fractional {what} in rows {_rows(fractional, df.index)}")
    if (as_float > 2**62).any():
        raise ValueError(f"column '{col}': {what} too large in rows {_rows(as_float > 2**62, df.index)}")
    return values.to_numpy().astype(np.int64)


class Hierarchy:
    """A public region hierarchy with the private group sizes of its leaves.

    Build one with :meth:`from_persons`, :meth:`from_groups` or
    :meth:`from_counts`; the constructor itself takes already-validated leaf
    runs and is not meant to be called directly.

    Parameters
    ----------
    levels : sequence of str
        Names of the levels below the root, top down (may be empty).
    leaf_paths : list of tuple of str
        Path of every leaf, in a fixed order.
    leaf_runs : LevelRuns
        Runs of the leaves, aligned with ``leaf_paths``.
    """

    def __init__(self, levels: Sequence[str], leaf_paths: list[Path], leaf_runs: LevelRuns):
        self.levels: tuple[str, ...] = tuple(levels)
        depth = len(self.levels)
        # Nodes of each level, in sorted order so that every release is
        # reproducible whatever the row order of the input.
        self._paths: list[list[Path]] = [sorted({p[:lvl] for p in leaf_paths}) for lvl in range(depth + 1)]
        self._index: list[dict[Path, int]] = [{p: k for k, p in enumerate(ps)} for ps in self._paths]
        leaf_order = np.array([self._index[depth][p] for p in leaf_paths], np.int64)
        self._parent: list[np.ndarray] = [np.zeros(0, np.int64)] + [
            np.array([self._index[lvl - 1][p[:-1]] for p in self._paths[lvl]], np.int64)
            for lvl in range(1, depth + 1)
        ]
        # Runs of every level from the leaves up.
        leaf_of_run = leaf_order[leaf_runs.node_ids()]
        runs = [None] * (depth + 1)
        runs[depth] = aggregate_runs(leaf_of_run, leaf_runs.sizes, leaf_runs.counts, len(self._paths[depth]))
        for lvl in range(depth, 0, -1):
            below = runs[lvl]
            runs[lvl - 1] = aggregate_runs(self._parent[lvl][below.node_ids()], below.sizes, below.counts,
                                            len(self._paths[lvl - 1]))
        self._runs: list[LevelRuns] = runs
        empty = np.flatnonzero(runs[depth].groups() == 0)
        if len(empty):
            names = ", ".join(node_label(self._paths[depth][k]) for k in empty[:_SHOWN_ROWS])
            raise ValueError(f"empty region(s) with no groups: {names}")

    # ----------------------------------------------------------------- building
    @classmethod
    def from_counts(cls, df: pd.DataFrame, *, size: str, count: str, levels: Sequence[str]) -> Hierarchy:
        """Build from per-leaf counts: one row per leaf and size with its number of groups.

        Parameters
        ----------
        df : DataFrame
            One row per (leaf, size); rows repeating a (leaf, size) pair add up.
        size, count : str
            Columns holding the group size and the number of groups of that size.
        levels : sequence of str
            Level columns, top down (root excluded).

        Raises
        ------
        ValueError
            Naming the column and the first offending rows for missing,
            non-numeric, negative or fractional sizes or counts, missing region
            labels, an empty table, or a leaf with no groups.
        """
        _require_columns(df, [*levels, size, count])
        levels = _check_levels(df, levels)
        sizes = _nonnegative_integers(df, size, "group size")
        counts = _nonnegative_integers(df, count, "number of groups")
        return cls._from_arrays(df, levels, sizes, counts)

    @classmethod
    def from_groups(cls, df: pd.DataFrame, *, size: str, levels: Sequence[str]) -> Hierarchy:
        """Build from a groups table: one row per group with its region and size (0 allowed).

        >>> groups = pd.DataFrame({"state": ["a", "a", "b"], "size": [4, 1, 2]})
        >>> Hierarchy.from_groups(groups, size="size", levels=["state"]).groups(())
        3
        """
        _require_columns(df, [*levels, size])
        levels = _check_levels(df, levels)
        sizes = _nonnegative_integers(df, size, "group size")
        return cls._from_arrays(df, levels, sizes, np.ones(len(sizes), np.int64))

    @classmethod
    def from_persons(cls, df: pd.DataFrame, *, group: str, levels: Sequence[str]) -> Hierarchy:
        """Build from a persons table: one row per person with its group id and region.

        A group's size is its number of rows; a group must lie in one leaf.
        """
        _require_columns(df, [*levels, group])
        levels = _check_levels(df, levels)
        missing = df[group].isna().to_numpy()
        if missing.any():
            raise ValueError(f"column '{group}': missing group id in rows {_rows(missing, df.index)}")
        keys = df[[group, *levels]].astype(str) if levels else df[[group]].astype(str)
        if levels:
            places = keys.groupby(group, sort=False)[levels].nunique()
            split = places.index[(places > 1).any(axis=1).to_numpy()]
            if len(split):
                bad = keys[group].isin(split[:1]).to_numpy()
                shown = ", ".join(str(g) for g in split[:_SHOWN_ROWS])
                raise ValueError(f"column '{group}': group(s) {shown} appear in more than one region "
                                 f"(group {split[0]} in rows {_rows(bad, df.index)}); a group must lie in one leaf")
        groups = keys.groupby([group, *levels], sort=False).size().reset_index(name="__size")
        return cls._from_arrays(groups, levels, groups["__size"].to_numpy(np.int64),
                                np.ones(len(groups), np.int64))

    @classmethod
    def _from_arrays(cls, df: pd.DataFrame, levels: list[str], sizes: np.ndarray,
                     counts: np.ndarray) -> Hierarchy:
        if levels:
            labels = df[levels].astype(str)
            codes, uniques = pd.MultiIndex.from_frame(labels).factorize()
            leaf_paths = [tuple(p) for p in uniques]
        else:
            codes = np.zeros(len(df), np.int64)
            leaf_paths = [()]
        codes = np.asarray(codes, np.int64)
        leaf_runs = aggregate_runs(codes, sizes, counts, len(leaf_paths))
        return cls(levels, leaf_paths, leaf_runs)

    # ------------------------------------------------------------------ queries
    @property
    def depth(self) -> int:
        """Number of levels below the root."""
        return len(self.levels)

    def nodes(self, level: int) -> list[Path]:
        """Paths of the nodes at ``level`` (0 = root), in a fixed sorted order."""
        self._check_level(level)
        return list(self._paths[level])

    def children(self, node: Sequence[str]) -> list[Path]:
        """Paths of the children of ``node`` (empty for a leaf)."""
        level, _ = self.locate(node)
        if level == self.depth:
            return []
        k = self._index[level][tuple(node)]
        return [self._paths[level + 1][c] for c in np.flatnonzero(self._parent[level + 1] == k)]

    def locate(self, node: Sequence[str]) -> tuple[int, int]:
        """Level of ``node`` and its index within that level."""
        path = tuple(str(x) for x in node)
        if len(path) > self.depth or path not in self._index[len(path)]:
            raise KeyError(f"no node {path} in this hierarchy")
        return len(path), self._index[len(path)][path]

    def runs(self, level: int) -> LevelRuns:
        """The true ``(size, count)`` runs of every node at ``level``."""
        self._check_level(level)
        return self._runs[level]

    def parents(self, level: int) -> np.ndarray:
        """For every node at ``level`` (>= 1), the index of its parent one level up."""
        if not 1 <= level <= self.depth:
            raise ValueError(f"level must be between 1 and {self.depth}, got {level}")
        return self._parent[level]

    def node_runs(self, node: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Sizes and counts of the groups of ``node``."""
        level, k = self.locate(node)
        return self._runs[level].node(k)

    def histogram(self, node: Sequence[str]) -> np.ndarray:
        """True count-of-counts histogram H of ``node``: ``H[j]`` groups of size ``j``.

        The array runs from size 0 to the node's largest group size.
        """
        sizes, counts = self.node_runs(node)
        h = np.zeros(int(sizes[-1]) + 1, np.int64)
        h[sizes] = counts
        return h

    def groups(self, node: Sequence[str]) -> int:
        """Public number of groups G of ``node``."""
        return int(self.node_runs(node)[1].sum())

    def persons(self, node: Sequence[str] = ()) -> int:
        """Number of persons in ``node`` (private; for data cards and checks)."""
        sizes, counts = self.node_runs(node)
        return int(np.dot(sizes, counts))

    @property
    def max_size(self) -> int:
        """Largest group size anywhere (private: a public bound K must not be derived from it)."""
        return int(self._runs[0].sizes[-1])

    def summary(self) -> dict:
        """Groups, persons, distinct sizes, levels and node counts, for data cards."""
        root = self._runs[0]
        return {
            "groups": int(root.counts.sum()),
            "persons": int(np.dot(root.sizes, root.counts)),
            "distinct_sizes": int(len(root.sizes)),
            "max_size": self.max_size,
            "levels": list(self.levels),
            "nodes_per_level": [len(p) for p in self._paths],
        }

    # ----------------------------------------------------------- restructuring
    def keep_levels(self, levels: Sequence[str]) -> Hierarchy:
        """A coarser hierarchy with only the named levels (in their original order).

        Dropping the lowest levels makes the deepest kept level the leaves;
        dropping a middle level attaches its children to their grandparent.

        >>> persons = pd.DataFrame({"group": [1, 2], "s": ["a", "b"], "c": ["x", "y"]})
        >>> Hierarchy.from_persons(persons, group="group", levels=["s", "c"]).keep_levels(["s"]).depth
        1
        """
        unknown = [x for x in levels if x not in self.levels]
        if unknown:
            raise ValueError(f"unknown level(s) {unknown}; this hierarchy has {list(self.levels)}")
        keep = [i for i, name in enumerate(self.levels) if name in set(levels)]
        leaves = self._runs[self.depth]
        new_paths = [tuple(p[i] for i in keep) for p in self._paths[self.depth]]
        distinct = sorted(set(new_paths))
        index = {p: k for k, p in enumerate(distinct)}
        leaf_map = np.array([index[p] for p in new_paths], np.int64)
        runs = aggregate_runs(leaf_map[leaves.node_ids()], leaves.sizes, leaves.counts, len(distinct))
        return Hierarchy([self.levels[i] for i in keep], distinct, runs)

    def subtree(self, node: Sequence[str]) -> Hierarchy:
        """The part of the hierarchy below ``node``, with ``node`` as its root.

        Used for regional cuts such as the paper's West Coast: build a
        hierarchy whose first level is the region, then take its subtree.
        """
        level, k = self.locate(node)
        leaves = self._runs[self.depth]
        ancestors = np.arange(len(self._paths[self.depth]))
        for lvl in range(self.depth, level, -1):
            ancestors = self._parent[lvl][ancestors]
        # Leaves whose ancestor at `level` is the chosen node.
        inside = np.flatnonzero(ancestors == k)
        paths = [self._paths[self.depth][i][level:] for i in inside]
        sizes, counts, ptr = [], [], [0]
        for i in inside:
            s, c = leaves.node(i)
            sizes.append(s)
            counts.append(c)
            ptr.append(ptr[-1] + len(s))
        runs = LevelRuns(np.array(ptr, np.int64), np.concatenate(sizes), np.concatenate(counts))
        return Hierarchy(self.levels[level:], paths, runs)

    def _check_level(self, level: int) -> None:
        if not 0 <= level <= self.depth:
            raise ValueError(f"level must be between 0 and {self.depth}, got {level}")

    def __repr__(self) -> str:
        s = self.summary()
        return (f"Hierarchy(levels={list(self.levels)}, nodes={s['nodes_per_level']}, "
                f"groups={s['groups']:,}, distinct_sizes={s['distinct_sizes']:,})")
