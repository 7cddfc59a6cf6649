"""Top-down consistency (Algorithm 1): every level merged into its children, in slices of whole parents, then
back-substitution.

Each slice's matching and merge is handed, as a :class:`MatchedPairs`, to an optional ``on_pairs`` callback: what
the merge matched and used, for readers in later stages.  Nothing here depends on a reader: the release is the
same with or without one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cocoviz.consistency.merge import merge_estimates
from cocoviz.consistency.orders import parent_size_order, run_order
from cocoviz.core.runs import LevelRuns, sums_up
from cocoviz.errors import ParameterError
from cocoviz.methods.level_estimates import LevelEstimates
from cocoviz.methods.registry import MERGES

__all__ = ["top_down", "merge_children", "MatchedPairs", "consistent_children", "consistent_slice"]


#: Child runs per slice of :func:`consistent_children`: a level of millions of blocks is matched and merged a
#: slice of whole parents at a time, so its temporaries (a dozen arrays per matched segment, and the matching
#: kernel's buffer of 48 bytes per run) stay bounded instead of growing with the level.
CONSISTENCY_SLICE_RUNS = 1 << 20


@dataclass(frozen=True)
class MatchedPairs:
    """One slice's matching (Algorithm 2) and merge: parents ``parent_lo..`` of a level and all their children.

    Attributes
    ----------
    parents, children : the slice's :class:`LevelEstimates` (the parents already merged with theirs); their runs
        start at run ``parent_run_lo`` / ``child_run_lo`` and their nodes at ``parent_lo`` / ``child_lo`` of the
        whole level
    child_of_run, parent_of_run : per child run, its child and its parent (slice indices)
    order : the child runs by (parent, size, child, position), as the matching reads them; ``bot_ptr`` each
        parent's first run in that order
    top, bottom, counts : per matched pair (segment): the parent run, the child run, and its groups
    merged : per pair, the merged size before rounding (:func:`merge_estimates` of the two sides' sizes and
        ``variances``)
    pair_order, run_starts : the pairs sorted by (child, rounded size, variance), and where each merged run of
        ``result`` starts in that order (its groups: the pairs combined into it)
    result : the merged children, the runs handed down to the next level
    """

    parents: LevelEstimates
    children: LevelEstimates
    parent_lo: int
    child_lo: int
    parent_run_lo: int
    child_run_lo: int
    child_of_run: np.ndarray
    parent_of_run: np.ndarray
    order: np.ndarray
    bot_ptr: np.ndarray
    top: np.ndarray
    bottom: np.ndarray
    counts: np.ndarray
    merged: np.ndarray
    pair_order: np.ndarray
    run_starts: np.ndarray
    result: LevelEstimates


def consistent_children(
    parents: LevelEstimates,
    children: LevelEstimates,
    parent_of: np.ndarray,
    merge: str,
    runs: bool = False,
    on_pairs: Callable[[MatchedPairs], None] | None = None,
) -> LevelEstimates | LevelRuns:
    """Match every parent's groups with its children's, and merge each pair into the child.

    Each parent's matching and merging reads only that parent's runs and its children's, so when the children
    come in parent order (a hierarchy's levels do) the level goes in slices of whole parents
    (:data:`CONSISTENCY_SLICE_RUNS` child runs or so each) and the slices' results, joined, are the whole
    level's bit for bit.  ``runs``: return only the children's released runs (:meth:`LevelEstimates.runs`),
    taken slice by slice, so the leaves' merged estimates are never held whole.  ``on_pairs``: called with each
    slice's :class:`MatchedPairs`, in order.
    """
    n_parents, n_children = len(parents.ptr) - 1, len(children.ptr) - 1
    if len(children.sizes) <= CONSISTENCY_SLICE_RUNS or n_children == 0 or np.any(np.diff(parent_of) < 0):
        whole = consistent_slice(parents, children, parent_of, merge, on_pairs)
        return whole.runs() if runs else whole
    # first_child[k]: the first child of parent k (children are in parent order), and the run it starts at.
    first_child = np.searchsorted(parent_of, np.arange(n_parents + 1))
    first_run = children.ptr[first_child]
    parts, lo = [], 0
    while lo < n_parents:
        hi = int(np.searchsorted(first_run, first_run[lo] + CONSISTENCY_SLICE_RUNS, side="right")) - 1
        hi = min(max(hi, lo + 1), n_parents)
        c_lo, c_hi = int(first_child[lo]), int(first_child[hi])
        part = consistent_slice(
            _node_slice(parents, lo, hi),
            _node_slice(children, c_lo, c_hi),
            np.asarray(parent_of[c_lo:c_hi], np.int64) - lo,
            merge,
            on_pairs,
            (lo, c_lo, int(parents.ptr[lo]), int(children.ptr[c_lo])),
        )
        parts.append(part.runs() if runs else part)
        lo = hi
    return _concat_runs(parts) if runs else LevelEstimates.concat(parts)


def merge_children(
    parents: LevelEstimates,
    children: LevelEstimates,
    parent_of: np.ndarray,
    merge: str = "weighted",
    on_pairs: Callable[[MatchedPairs], None] | None = None,
) -> LevelEstimates:
    """One step of Algorithm 1: every parent's groups matched with its children's (``parent_of``: each child's
    parent), each pair merged into the child; the merged children, whose runs the next step matches.
    ``on_pairs``: called with each slice's :class:`MatchedPairs`, in order.

    >>> root = LevelEstimates(np.array([0, 1]), np.array([2]), np.array([2]), np.array([1.0]))
    >>> kids = LevelEstimates(np.array([0, 1, 2]), np.array([1, 4]), np.array([1, 1]), np.array([1.0, 1.0]))
    >>> merge_children(root, kids, np.array([0, 0])).sizes.tolist()
    [2, 3]
    """
    if merge not in MERGES:
        raise ParameterError(f"merge must be one of {MERGES}, got {merge!r}")
    return consistent_children(parents, children, parent_of, merge, on_pairs=on_pairs)


def _concat_runs(parts: Sequence[LevelRuns]) -> LevelRuns:
    """The runs of consecutive ranges of nodes, joined in order."""
    offsets = np.cumsum([0] + [len(p.sizes) for p in parts[:-1]])
    ptr = np.concatenate([[0]] + [p.ptr[1:] + o for p, o in zip(parts, offsets)]).astype(np.int64)
    return LevelRuns(ptr, np.concatenate([p.sizes for p in parts]), np.concatenate([p.counts for p in parts]))


def _node_slice(estimates: LevelEstimates, lo: int, hi: int) -> LevelEstimates:
    """Nodes ``lo..hi-1`` of ``estimates`` (views of its runs)."""
    a, b = int(estimates.ptr[lo]), int(estimates.ptr[hi])
    return LevelEstimates(
        estimates.ptr[lo : hi + 1] - a, estimates.sizes[a:b], estimates.counts[a:b], estimates.variances[a:b]
    )


def consistent_slice(
    parents: LevelEstimates,
    children: LevelEstimates,
    parent_of: np.ndarray,
    merge: str,
    on_pairs: Callable[[MatchedPairs], None] | None = None,
    offsets: tuple[int, int, int, int] = (0, 0, 0, 0),
) -> LevelEstimates:
    """:func:`consistent_children` on all of ``parents`` and ``children`` at once: match (Algorithm 2), merge each
    pair into the child (:func:`~cocoviz.consistency.merge.merge_estimates`), round, and combine each child's
    pairs of equal merged size and variance into runs.  ``on_pairs`` receives the :class:`MatchedPairs`
    (``offsets``: the slice's first parent, child, parent run and child run in the whole level)."""
    child_of_run = children.node_ids()
    parent_of_run = parent_of[child_of_run]
    # Bottom runs grouped by parent, then by size, child and position.
    order = parent_size_order(parent_of_run, children.sizes)
    n_parents = len(parents.ptr) - 1
    bot_ptr = np.zeros(n_parents + 1, np.int64)
    np.cumsum(np.bincount(parent_of_run, minlength=n_parents), out=bot_ptr[1:])
    from cocoviz.consistency._matching_kernels import match_level

    seg_top, seg_bot, seg_cnt = match_level(
        parents.ptr, parents.sizes, parents.counts, bot_ptr, children.sizes[order], children.counts[order],
        child_of_run[order],
    )  # fmt: skip
    bottom = order[seg_bot]
    merged, variance = merge_estimates(
        parents.sizes[seg_top], parents.variances[seg_top], children.sizes[bottom], children.variances[bottom], merge
    )
    size = np.rint(merged).astype(np.int64)
    owner = child_of_run[bottom]
    # New runs per child: sort by (child, size, variance) and combine equal ones.
    pair_order = run_order(owner, size, variance)
    owner, size, variance, count = owner[pair_order], size[pair_order], variance[pair_order], seg_cnt[pair_order]
    starts = np.zeros(0, np.int64)
    if len(pair_order):
        new = np.concatenate(
            [[True], (owner[1:] != owner[:-1]) | (size[1:] != size[:-1]) | (variance[1:] != variance[:-1])]
        )
        starts = np.flatnonzero(new)
        owner, size, variance, count = owner[starts], size[starts], variance[starts], np.add.reduceat(count, starts)
    n_children = len(children.ptr) - 1
    ptr = np.zeros(n_children + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=n_children), out=ptr[1:])
    result = LevelEstimates(ptr, size, count, variance)
    if on_pairs is not None:
        on_pairs(
            MatchedPairs(
                parents, children, *offsets, child_of_run, parent_of_run, order, bot_ptr, seg_top, bottom, seg_cnt,
                merged, pair_order, starts, result,
            )
        )  # fmt: skip
    return result


def top_down(
    estimates: Sequence[LevelEstimates],
    parents: Sequence[np.ndarray],
    merge: str = "weighted",
    on_pairs: Callable[[int, MatchedPairs], None] | None = None,
) -> list[LevelRuns]:
    """Algorithm 1's consistency step on independent per-level estimates.

    Parameters
    ----------
    estimates : one :class:`LevelEstimates` per level, root first
    parents : ``parents[l]`` maps each node of level ``l`` (>= 1) to its parent's index
    merge : ``"weighted"`` or ``"average"``
    on_pairs : called as ``on_pairs(level, pairs)`` for every slice of every step ``level - 1`` → ``level``, in
        order, with the :class:`MatchedPairs` the step matched and merged (what it used); None for none.  It
        never changes the result.

    Returns
    -------
    One :class:`LevelRuns` per level: the leaves' merged groups, and above them
    their sums (back-substitution), so every parent equals the sum of its children.

    Examples
    --------
    A root with four groups over two leaves: the leaves' merged groups, and the root their union.

    >>> root = LevelEstimates(np.array([0, 2]), np.array([1, 3]), np.array([2, 2]), np.array([1.0, 1.0]))
    >>> leaves = LevelEstimates(np.array([0, 1, 2]), np.array([1, 3]), np.array([2, 2]), np.array([1.0, 1.0]))
    >>> released = top_down([root, leaves], [None, np.array([0, 0])])
    >>> released[0].sizes.tolist(), released[0].counts.tolist(), released[1].ptr.tolist()
    ([1, 3], [2, 2], [0, 1, 2])
    """
    if merge not in MERGES:
        raise ParameterError(f"merge must be one of {MERGES}, got {merge!r}")
    current, last = estimates[0], len(estimates) - 1
    for level in range(1, last + 1):  # the leaves straight to runs: their merged estimates never held whole
        current = consistent_children(
            current,
            estimates[level],
            parents[level],
            merge,
            runs=level == last,
            on_pairs=None if on_pairs is None else _at_level(on_pairs, level),
        )
    leaves = current if last else current.runs()
    return sums_up(leaves, parents, [len(e.ptr) - 1 for e in estimates])[0]


def _at_level(on_pairs: Callable[[int, MatchedPairs], None], level: int) -> Callable[[MatchedPairs], None]:
    return lambda pairs: on_pairs(level, pairs)
