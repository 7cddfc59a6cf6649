"""Algorithm 2: the optimal matching of a parent's groups to its children's, on runs of equal-sized groups
(cost grows with distinct sizes per node, not with G)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cocoviz.errors import InputError

__all__ = ["match_groups", "match_runs"]


def match_runs(
    top_sizes: np.ndarray, top_counts: np.ndarray, child_sizes: Sequence[np.ndarray], child_counts: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Optimal matching of one parent's runs to its children's runs.

    Parameters
    ----------
    top_sizes, top_counts : arrays
        The parent's runs, sorted by size.
    child_sizes, child_counts : sequences of arrays
        Each child's runs, sorted by size.

    Returns
    -------
    top_run, child, child_run, count : int arrays
        ``count`` parent groups of run ``top_run`` are matched with groups of
        run ``child_run`` of child ``child``.
    """
    top_sizes = np.asarray(top_sizes, np.int64)
    top_counts = np.asarray(top_counts, np.int64)
    n_per_child = np.array([len(s) for s in child_sizes], np.int64)
    sizes = (
        np.concatenate([np.asarray(s, np.int64) for s in child_sizes]) if len(child_sizes) else np.zeros(0, np.int64)
    )
    counts = (
        np.concatenate([np.asarray(c, np.int64) for c in child_counts]) if len(child_counts) else np.zeros(0, np.int64)
    )
    child = np.repeat(np.arange(len(child_sizes)), n_per_child)
    position = np.arange(len(sizes)) - np.repeat(np.cumsum(n_per_child) - n_per_child, n_per_child)
    if int(top_counts.sum()) != int(counts.sum()):
        raise InputError(f"the parent has {int(top_counts.sum())} groups but its children have {int(counts.sum())}")
    order = np.lexsort((position, child, sizes))
    from cocoviz.consistency._matching_kernels import match_level

    seg_top, seg_bot, seg_cnt = match_level(
        np.array([0, len(top_sizes)], np.int64),
        top_sizes,
        top_counts,
        np.array([0, len(sizes)], np.int64),
        sizes[order],
        counts[order],
        child[order],
    )
    return seg_top, child[order][seg_bot], position[order][seg_bot], seg_cnt


def match_groups(parent_sizes: np.ndarray, children_sizes: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Optimal least-cost matching of a parent's groups to its children's groups (Algorithm 2).

    Parameters
    ----------
    parent_sizes : array of int
        Estimated size of each parent group, in any order.
    children_sizes : sequence of arrays of int
        Estimated sizes of each child's groups; together as many as the parent's.

    Returns
    -------
    child, index : int arrays aligned with ``parent_sizes``
        Parent group ``i`` is matched with group ``index[i]`` of child ``child[i]``.
        The total cost ``sum |parent - child|`` is the minimum, the sorted pairing's.

    Examples
    --------
    >>> child, index = match_groups(np.array([9, 1, 3]), [np.array([2, 8]), np.array([4])])
    >>> child.tolist(), index.tolist()
    ([0, 0, 1], [1, 0, 0])
    """
    parent_sizes = np.asarray(parent_sizes, np.int64)
    children_sizes = [np.asarray(c, np.int64) for c in children_sizes]
    if parent_sizes.size and parent_sizes.min() < 0 or any(c.size and c.min() < 0 for c in children_sizes):
        raise InputError("group sizes must be non-negative")
    parent_order = np.argsort(parent_sizes, kind="stable")
    top_sizes, top_counts = np.unique(parent_sizes, return_counts=True)
    child_orders = [np.argsort(c, kind="stable") for c in children_sizes]
    child_runs = [np.unique(c, return_counts=True) for c in children_sizes]
    top_run, child, child_run, count = match_runs(
        top_sizes, top_counts, [r[0] for r in child_runs], [r[1] for r in child_runs]
    )
    # Expand segments to single groups: segments come in parent order, and
    # within a child in that child's sorted order.
    seg_child = np.repeat(child, count)
    # Rank of each matched group inside its child's sorted array.
    rank = np.empty(len(seg_child), np.int64)
    for c in range(len(children_sizes)):
        mine = np.flatnonzero(seg_child == c)
        rank[mine] = np.arange(len(mine))
    matched_child = np.empty(len(parent_sizes), np.int64)
    matched_index = np.empty(len(parent_sizes), np.int64)
    matched_child[parent_order] = seg_child
    matched_index[parent_order] = [child_orders[c][r] for c, r in zip(seg_child, rank)]
    return matched_child, matched_index
