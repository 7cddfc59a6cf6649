"""Top-down consistency (Algorithm 1): every level merged into its children, in slices of whole parents, then
back-substitution; with the stated variances of what each level releases."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from cocoviz.accuracy.stated.released import StepStatements, step_stated, union_stated
from cocoviz.accuracy.stated.variances import hg_merged_stated, pool_by_size
from cocoviz.consistency.level_estimates import LevelEstimates
from cocoviz.consistency.merge import MERGES, merge_estimates, merge_stated
from cocoviz.consistency.orders import _parent_size_order, _run_order
from cocoviz.consistency.sharing import _sharing_within
from cocoviz.core.runs import LevelRuns, sums_up
from cocoviz.errors import ParameterError

__all__ = ["top_down"]


#: Child runs per slice of :func:`_consistent_children`: a level of millions of blocks is matched and merged a
#: slice of whole parents at a time, so its temporaries (a dozen arrays per matched segment, and the matching
#: kernel's buffer of 48 bytes per run) stay bounded instead of growing with the level (issue 26: 9.4 GB).
CONSISTENCY_SLICE_RUNS = 1 << 20


def _consistent_children(
    parents: LevelEstimates,
    children: LevelEstimates,
    parent_of: np.ndarray,
    merge: str,
    runs: bool = False,
    stated_out: list | None = None,
    step_out: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None] | None = None,
) -> LevelEstimates | LevelRuns:
    """Match every parent's groups with its children's, and merge each pair into the child.

    Each parent's matching and merging reads only that parent's runs and its children's, so when the children
    come in parent order (a hierarchy's levels do) the level goes in slices of whole parents
    (:data:`CONSISTENCY_SLICE_RUNS` child runs or so each) and the slices' results, joined, are the whole
    level's bit for bit.  ``runs``: return only the children's released runs (:meth:`LevelEstimates.runs`),
    taken slice by slice, so the leaves' merged estimates are never held whole (their stated variances appended
    to ``stated_out``, slice by slice, with a list: :meth:`LevelEstimates.released`).  ``step_out``: called per
    slice with the step's statement of the union at the parents' level (:func:`_consistent_slice`), its parent
    node indices global.
    """
    n_parents, n_children = len(parents.ptr) - 1, len(children.ptr) - 1
    if len(children.sizes) <= CONSISTENCY_SLICE_RUNS or n_children == 0 or np.any(np.diff(parent_of) < 0):
        whole = _consistent_slice(parents, children, parent_of, merge, step_out)
        return whole.released(stated_out) if runs else whole
    # first_child[k]: the first child of parent k (children are in parent order), and the run it starts at.
    first_child = np.searchsorted(parent_of, np.arange(n_parents + 1))
    first_run = children.ptr[first_child]
    parts, lo = [], 0
    while lo < n_parents:
        hi = int(np.searchsorted(first_run, first_run[lo] + CONSISTENCY_SLICE_RUNS, side="right")) - 1
        hi = min(max(hi, lo + 1), n_parents)
        c_lo, c_hi = int(first_child[lo]), int(first_child[hi])
        part = _consistent_slice(
            _node_slice(parents, lo, hi),
            _node_slice(children, c_lo, c_hi),
            np.asarray(parent_of[c_lo:c_hi], np.int64) - lo,
            merge,
            None if step_out is None else partial(_offset_nodes, step_out, lo),
        )
        parts.append(part.released(stated_out) if runs else part)
        lo = hi
    return _concat_runs(parts) if runs else LevelEstimates.concat(parts)


def _offset_nodes(step_out: Callable, offset: int, node: np.ndarray, *rest: np.ndarray) -> None:
    step_out(node + offset, *rest)


def _concat_runs(parts: Sequence[LevelRuns]) -> LevelRuns:
    """The runs of consecutive ranges of nodes, joined in order."""
    offsets = np.cumsum([0] + [len(p.sizes) for p in parts[:-1]])
    ptr = np.concatenate([[0]] + [p.ptr[1:] + o for p, o in zip(parts, offsets)]).astype(np.int64)
    return LevelRuns(ptr, np.concatenate([p.sizes for p in parts]), np.concatenate([p.counts for p in parts]))


def _node_slice(estimates: LevelEstimates, lo: int, hi: int) -> LevelEstimates:
    """Nodes ``lo..hi-1`` of ``estimates`` (views of its runs)."""
    a, b = int(estimates.ptr[lo]), int(estimates.ptr[hi])
    return LevelEstimates(
        estimates.ptr[lo : hi + 1] - a,
        estimates.sizes[a:b],
        estimates.counts[a:b],
        estimates.variances[a:b],
        estimates.stated[a:b],
        None if estimates._stated_runs is None else estimates._stated_runs[a:b],
    )


def _consistent_slice(
    parents: LevelEstimates,
    children: LevelEstimates,
    parent_of: np.ndarray,
    merge: str,
    step_out: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None] | None = None,
) -> LevelEstimates:
    """:func:`_consistent_children` on all of ``parents`` and ``children`` at once; with ``step_out``, called with
    every matched segment's parent, merged size, groups and the statement at the parents' level of the union of
    the merged children (:func:`cocoviz.accuracy.stated.released.step_stated`: what the parents' released level
    states)."""
    child_of_run = children.node_ids()
    parent_of_run = parent_of[child_of_run]
    # Bottom runs grouped by parent, then by size, child and position.
    order = _parent_size_order(parent_of_run, children.sizes)
    n_parents = len(parents.ptr) - 1
    bot_ptr = np.zeros(n_parents + 1, np.int64)
    np.cumsum(np.bincount(parent_of_run, minlength=n_parents), out=bot_ptr[1:])
    from cocoviz.consistency._matching_kernels import match_level

    sorted_sizes, sorted_child = children.sizes[order], child_of_run[order]
    seg_top, seg_bot, seg_cnt = match_level(
        parents.ptr, parents.sizes, parents.counts, bot_ptr, sorted_sizes, children.counts[order], sorted_child
    )
    bottom = order[seg_bot]
    va, vb = parents.variances[seg_top], children.variances[bottom]
    sa, sb = parents.stated[seg_top], children.stated[bottom]
    size, variance = merge_estimates(parents.sizes[seg_top], va, children.sizes[bottom], vb, merge)
    sharing = _sharing_within(bot_ptr, sorted_sizes, sorted_child, children.stated[order])[seg_bot]
    stated = merge_stated(va, vb, sa, sb, merge, sharing, parents.stated_runs[seg_top])
    if children._stated_runs is not None:  # an Hg child: its variances are its blocks' noise ("Small Hg nodes")
        stated = hg_merged_stated(stated, sa, sb, parents, parent_of_run[bottom], children, bottom, size)
    del sa, sb
    size = np.rint(size).astype(np.int64)
    if step_out is not None:
        union = union_stated(child_of_run, parent_of_run, children.sizes, children.counts, children.stated)
        node = parent_of_run[bottom]
        at_parent = step_stated(parents, children, union, node, seg_top, bottom, va, vb, merge, seg_cnt)
        step_out(node, size, seg_cnt, at_parent)
        del union
    owner = child_of_run[bottom]
    # New runs per child: sort by (child, size, variance) and combine equal ones (the stated variance does not
    # split runs: a combined run states its groups' mean, which keeps the expected sum of z² over its groups).
    order = _run_order(owner, size, variance)
    owner, size, variance, count, stated = owner[order], size[order], variance[order], seg_cnt[order], stated[order]
    if len(order):
        new = np.concatenate(
            [[True], (owner[1:] != owner[:-1]) | (size[1:] != size[:-1]) | (variance[1:] != variance[:-1])]
        )
        starts = np.flatnonzero(new)
        weighted = np.add.reduceat(stated * count, starts)
        owner, size, variance, count = owner[starts], size[starts], variance[starts], np.add.reduceat(count, starts)
        stated = np.divide(weighted, count, out=np.zeros_like(weighted), where=count > 0)
    n_children = len(children.ptr) - 1
    ptr = np.zeros(n_children + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=n_children), out=ptr[1:])
    # A child's runs of one size (split by the weights' variance) state one variance: their mean (issue 24).
    return LevelEstimates(ptr, size, count, variance, pool_by_size(ptr, size, count, stated))


def top_down(
    estimates: Sequence[LevelEstimates],
    parents: Sequence[np.ndarray],
    merge: str = "weighted",
    stated_out: list | None = None,
) -> list[LevelRuns]:
    """Algorithm 1's consistency step on independent per-level estimates.

    Parameters
    ----------
    estimates : one :class:`LevelEstimates` per level, root first
    parents : ``parents[l]`` maps each node of level ``l`` (>= 1) to its parent's index
    merge : ``"weighted"`` or ``"average"``
    stated_out : a list to receive, per level, the stated variance of every released run: the leaves' merged
        groups', and above them the union's (:mod:`cocoviz.accuracy.stated.released`: each step A → A + 1 states the
        union
        at A of the merged children; a released size the step lacks keeps the leaves' pooled up); None for none

    Returns
    -------
    One :class:`LevelRuns` per level: the leaves' merged groups, and above them
    their sums (back-substitution), so every parent equals the sum of its children.
    """
    if merge not in MERGES:
        raise ParameterError(f"merge must be one of {MERGES}, got {merge!r}")
    current, last = estimates[0], len(estimates) - 1
    pieces = None if stated_out is None else []
    steps = None if stated_out is None else StepStatements(last)
    for level in range(1, last + 1):  # the leaves straight to runs: their merged estimates never held whole
        leaves = level == last
        current = _consistent_children(
            current,
            estimates[level],
            parents[level],
            merge,
            runs=leaves,
            stated_out=pieces if leaves else None,
            step_out=None if steps is None else partial(steps.add, level - 1),
        )
    leaves = current if last else current.released(pieces)
    stated = None if pieces is None else np.concatenate(pieces)
    del pieces
    result, means = sums_up(leaves, parents, [len(e.ptr) - 1 for e in estimates], stated)
    if stated_out is not None:
        stated_out.extend([steps.released(a, result[a], means[a]) for a in range(last)] + [means[last]])
    return result
