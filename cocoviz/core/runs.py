"""Runs of equal-sized groups: the one compact form of a level's groups.

Equal-sized groups are interchangeable for every quantity the method needs, so
a node's groups are kept as ``(size, count)`` runs: ``count`` groups have
exactly ``size`` members.  :class:`LevelRuns` holds the runs of every node of
one level (compressed sparse rows); :func:`aggregate_runs` builds one from
unsorted ``(node, size, count)`` triples.

>>> runs = aggregate_runs(np.array([1, 0, 1]), np.array([3, 2, 3]), np.array([1, 1, 4]), 2)
>>> runs.node(1)
(array([3]), array([5]))
>>> runs.groups()
array([1, 5])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["LevelRuns", "aggregate_runs", "aggregate_weighted", "sums_up"]


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


def _node_size_order(node_of_run: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The stable order of runs by (node, size).

    One int64 key and a stable sort when ``node * (max size + 1) + size``
    fits: the sort then finds the runs of equal nodes that its input already
    has (a level's runs come node by node, sizes sorted within each child),
    several times faster than sorting the two keys one after the other.
    """
    if len(sizes) == 0:
        return np.zeros(0, np.int64)
    width = int(sizes.max()) + 1
    if int(node_of_run.max()) < (2**62) // width and int(sizes.min()) >= 0 and int(node_of_run.min()) >= 0:
        return np.argsort(node_of_run.astype(np.int64) * width + sizes, kind="stable")
    return np.lexsort((sizes, node_of_run))


def aggregate_runs(node_of_run: np.ndarray, sizes: np.ndarray, counts: np.ndarray, n_nodes: int) -> LevelRuns:
    """Sum counts of equal (node, size) pairs and return them as sorted CSR runs."""
    return aggregate_weighted(node_of_run, sizes, counts, n_nodes)[0]


def aggregate_weighted(
    node_of_run: np.ndarray,
    sizes: np.ndarray,
    counts: np.ndarray,
    n_nodes: int,
    values: np.ndarray | None = None,
    dtype: type = np.float32,
) -> tuple[LevelRuns, np.ndarray | None]:
    """:func:`aggregate_runs`, and with ``values`` (one per run, or rows of them) the count-weighted mean of the
    values of the runs summed into each output run (float32 by default: a stated variance, shown, never computed
    on; ``dtype`` for sums carried further, :func:`cocoviz.accuracy.stated.released.union_levels`).

    >>> runs, mean = aggregate_weighted(np.array([0, 0]), np.array([2, 2]), np.array([1, 3]), 1, np.array([4.0, 0.0]))
    >>> runs.counts.tolist(), mean.tolist()
    ([4], [1.0])
    """
    order = _node_size_order(node_of_run, sizes)
    node_sorted, size_sorted, count_sorted = node_of_run[order], sizes[order], counts[order]
    weighted = None if values is None else (values[..., order] * count_sorted).astype(np.float64)
    if len(order):
        new_run = np.empty(len(order), bool)
        new_run[0] = True
        new_run[1:] = (node_sorted[1:] != node_sorted[:-1]) | (size_sorted[1:] != size_sorted[:-1])
        starts = np.flatnonzero(new_run)
        node_sorted = node_sorted[starts]
        size_sorted = size_sorted[starts]
        count_sorted = np.add.reduceat(count_sorted, starts)
        weighted = None if weighted is None else np.add.reduceat(weighted, starts, axis=-1)
    keep = count_sorted > 0
    node_sorted, size_sorted, count_sorted = node_sorted[keep], size_sorted[keep], count_sorted[keep]
    ptr = np.zeros(n_nodes + 1, np.int64)
    np.cumsum(np.bincount(node_sorted, minlength=n_nodes), out=ptr[1:])
    mean = None if weighted is None else (weighted[..., keep] / count_sorted).astype(dtype)
    return LevelRuns(ptr, size_sorted.astype(np.int64), count_sorted.astype(np.int64)), mean


def sums_up(
    leaves: LevelRuns,
    parents: Sequence[np.ndarray | None],
    n_nodes: Sequence[int],
    values: np.ndarray | None = None,
    dtype: type = np.float32,
) -> tuple[list[LevelRuns], list[np.ndarray] | None]:
    """Every level's runs as sums of the leaves' (back-substitution), root first: level ``l - 1`` aggregates
    level ``l``'s runs by ``parents[l]`` (``n_nodes[l - 1]`` nodes).  With ``values`` (one per leaf run, or rows
    of them), also every level's count-weighted means of them (:func:`aggregate_weighted`, as ``dtype``), else None.
    """
    levels, means = [leaves], [values]
    for level in range(len(parents) - 1, 0, -1):
        below = levels[0]
        runs, mean = aggregate_weighted(
            parents[level][below.node_ids()], below.sizes, below.counts, n_nodes[level - 1], means[0], dtype
        )
        levels.insert(0, runs)
        means.insert(0, mean)
    return levels, (None if values is None else means)
