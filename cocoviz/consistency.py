"""Top-down consistency: optimal matching of parent to child groups, merging, back-substitution.

Everything here runs on runs of equal-sized groups (Algorithm 2 only ever
looks at "all unmatched groups of the smallest size"), so its cost grows with
the number of distinct (size, variance) runs per node, not with G.

Also here: Hay et al.'s mean-consistency on noisy Hc, the real-valued
baseline that shows why the matching approach exists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import pandas as pd

from cocoviz.errors import InputError, ParameterError
from cocoviz.estimators import GroupEstimate
from cocoviz.merge_rules import MERGES, UNIT_ERRORS, merge_estimates, merge_stated
from cocoviz.released_stated import StepStatements, step_stated, union_stated
from cocoviz.runs import LevelRuns, aggregate_runs, aggregate_weighted, sums_up
from cocoviz.variances import pool_by_size

__all__ = [
    "match_groups",
    "match_runs",
    "top_down",
    "LevelEstimates",
    "mean_consistency",
]


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
    from cocoviz._matching_kernels import match_level

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


def _sharing(bot_ptr: np.ndarray, sizes: np.ndarray, child: np.ndarray) -> np.ndarray:
    """Per child run, in the order of :func:`_parent_size_order` (runs grouped by parent as ``bot_ptr`` says,
    then by size and child; ``sizes`` and ``child`` in that order): how many children of its parent hold a run
    of its size.  One linear pass.
    """
    n = len(sizes)
    if not n:
        return np.zeros(0, np.int64)
    new_pair = np.empty(n, bool)
    new_pair[0] = True
    np.not_equal(sizes[1:], sizes[:-1], out=new_pair[1:])
    first = bot_ptr[:-1]
    new_pair[first[first < n]] = True
    new_child = new_pair.copy()
    new_child[1:] |= child[1:] != child[:-1]
    children_so_far = np.cumsum(new_child)
    starts = np.flatnonzero(new_pair)
    ends = np.append(starts[1:], n)
    return np.repeat(children_so_far[ends - 1] - children_so_far[starts] + 1, ends - starts)


#: Children counted within a run's error radius stop here: the child keeps ``1 − 1/m`` of its own variance,
#: 98% at this many.
SHARING_CAP = 64


def _sharing_within(bot_ptr: np.ndarray, sizes: np.ndarray, child: np.ndarray, stated: np.ndarray) -> np.ndarray:
    """:func:`_sharing`, counting for a run of size errors (stated ≥ 1 size²) the children holding a run within
    one standard deviation of its size, not of its size exactly.

    Why: the parent's groups are matched to the union of its children's by rank, and a child's group whose own
    size is off by ``√stated`` takes the rank of whichever union groups lie there.  The parent's correction at
    that rank is shared among the children holding them, so a sparse tail, where each size is held by one
    child, is not corrected as if the pair were the same group (housing's counties at ε = 0.1, Hc: realised
    error unchanged by the merge beyond size 100, stated 20× smaller).  Dense runs (stated < 1) are counted by
    size, as before.
    """
    from cocoviz._sharing_kernels import children_within

    exact = _sharing(bot_ptr, sizes, child)
    radius = np.where(stated >= UNIT_ERRORS, np.floor(np.sqrt(np.maximum(stated, 0.0))), 0.0).astype(np.int64)
    if not radius.any():
        return exact
    n_children = int(child.max()) + 1 if len(child) else 0
    within = children_within(bot_ptr, sizes.astype(np.int64), child.astype(np.int64), radius, n_children, SHARING_CAP)
    return np.maximum(exact, within)


class LevelEstimates:
    """The estimated runs of every node of one level (CSR, like :class:`LevelRuns`), with variances.

    ``variances``: the paper's model, which the top-down merge weighs by and orders runs by; ``stated``:
    the calibrated variance of each run's group sizes (issue 24, docs/merge-variances.md), stated to
    users and never used by the merge's arithmetic, so releases do not depend on it.  Without a better
    model ``stated`` is ``variances`` itself.  ``stated_runs``: the stated variance of each run before it was
    pooled per node and size (an Hg fit's block rule, run by run), read only by
    :func:`~cocoviz.merge_rules.merge_stated` for a parent's part; without one, ``stated``.
    """

    def __init__(
        self,
        ptr: np.ndarray,
        sizes: np.ndarray,
        counts: np.ndarray,
        variances: np.ndarray,
        stated: np.ndarray | None = None,
        stated_runs: np.ndarray | None = None,
    ):
        self.ptr, self.sizes, self.counts, self.variances = ptr, sizes, counts, variances
        # Shared, not copied, when there is no better model: neither array is ever written in place.
        self.stated = np.asarray(variances, np.float64) if stated is None else stated
        self._stated_runs = stated_runs

    @property
    def stated_runs(self) -> np.ndarray:
        return self.stated if self._stated_runs is None else self._stated_runs

    @classmethod
    def from_nodes(cls, estimates: Sequence[GroupEstimate]) -> LevelEstimates:
        ptr = np.zeros(len(estimates) + 1, np.int64)
        np.cumsum([len(e.sizes) for e in estimates], out=ptr[1:])

        def cat(name, dtype):
            return (
                np.concatenate([getattr(e, name) for e in estimates]).astype(dtype) if estimates else np.zeros(0, dtype)
            )

        stated = (
            np.concatenate([e.variances if e.stated is None else e.stated for e in estimates]).astype(np.float64)
            if estimates
            else np.zeros(0, np.float64)
        )
        runs = None  # before pooling (Hg): only where some node has it
        if any(e.stated_runs is not None for e in estimates):
            runs = np.concatenate(
                [next(a for a in (e.stated_runs, e.stated, e.variances) if a is not None) for e in estimates]
            ).astype(np.float64)
        return cls(ptr, cat("sizes", np.int64), cat("counts", np.int64), cat("variances", np.float64), stated, runs)

    @classmethod
    def concat(cls, parts: Sequence[LevelEstimates]) -> LevelEstimates:
        """The estimates of consecutive runs of nodes, joined in order."""
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls(np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64))
        offsets = np.cumsum([0] + [len(p.sizes) for p in parts[:-1]])
        ptr = np.concatenate([[0]] + [p.ptr[1:] + o for p, o in zip(parts, offsets)]).astype(np.int64)
        return cls(
            ptr,
            *(np.concatenate([getattr(p, name) for p in parts]) for name in ("sizes", "counts", "variances", "stated")),
            None if all(p._stated_runs is None for p in parts) else np.concatenate([p.stated_runs for p in parts]),
        )

    def node_ids(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.ptr) - 1), np.diff(self.ptr))

    def runs(self) -> LevelRuns:
        """Sizes and counts only, equal sizes of a node combined."""
        return aggregate_runs(self.node_ids(), self.sizes, self.counts, len(self.ptr) - 1)

    def released(self, stated_out: list | None) -> LevelRuns:
        """:meth:`runs`; with ``stated_out`` (a list) the stated variance of every run's groups appended to it."""
        if stated_out is None:
            return self.runs()
        runs, stated = aggregate_weighted(self.node_ids(), self.sizes, self.counts, len(self.ptr) - 1, self.stated)
        stated_out.append(stated)
        return runs


def _parent_size_order(parent_of_run: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The order of runs by (parent, size, child, position).

    Runs come in child order (``node_ids``), so a stable sort by (parent, size) alone keeps equal pairs in
    (child, position) order: one int64 key and one stable sort when it fits, instead of a four-key lexsort
    (most of the consistency step's time on a level of millions of blocks).
    """
    if len(sizes) == 0:
        return np.zeros(0, np.int64)
    width = int(sizes.max()) + 1
    if int(sizes.min()) >= 0 and int(parent_of_run.max()) < (2**62) // width:
        return np.argsort(parent_of_run.astype(np.int64) * width + sizes, kind="stable")
    return np.lexsort((np.arange(len(sizes)), sizes, parent_of_run))


def _joint_key(major: np.ndarray, minor: np.ndarray) -> tuple[np.ndarray, ...]:
    """Sort keys, least significant first, ordering by (major, minor): one int64 key when it fits (a lexsort
    pass fewer), else the two."""
    if len(minor) and int(minor.min()) >= 0:
        width = int(minor.max()) + 1
        if int(major.max()) < (2**62) // width:
            return (major.astype(np.int64) * width + minor,)
    return (minor, major)


def _run_order(owner: np.ndarray, size: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """The stable order by (owner, size, variance) of ``np.lexsort((variance, size, owner))``, with the variances
    ranked by one hash pass (a level holds few distinct ones) instead of a float sort of every run, and the
    three keys joined into one int64 when they fit."""
    codes, uniques = pd.factorize(variance, use_na_sentinel=False)
    rank = np.empty(len(uniques), np.int64)
    rank[np.argsort(uniques, kind="stable")] = np.arange(len(uniques))
    keys = (rank[codes], *_joint_key(owner, size))
    if len(keys) == 2:
        keys = _joint_key(keys[1], keys[0])
    return np.argsort(keys[0], kind="stable") if len(keys) == 1 else np.lexsort(keys)


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
    the merged children (:func:`cocoviz.released_stated.step_stated`: what the parents' released level states)."""
    child_of_run = children.node_ids()
    parent_of_run = parent_of[child_of_run]
    # Bottom runs grouped by parent, then by size, child and position.
    order = _parent_size_order(parent_of_run, children.sizes)
    n_parents = len(parents.ptr) - 1
    bot_ptr = np.zeros(n_parents + 1, np.int64)
    np.cumsum(np.bincount(parent_of_run, minlength=n_parents), out=bot_ptr[1:])
    from cocoviz._matching_kernels import match_level

    sorted_sizes, sorted_child = children.sizes[order], child_of_run[order]
    seg_top, seg_bot, seg_cnt = match_level(
        parents.ptr, parents.sizes, parents.counts, bot_ptr, sorted_sizes, children.counts[order], sorted_child
    )
    bottom = order[seg_bot]
    va, vb = parents.variances[seg_top], children.variances[bottom]
    size, variance = merge_estimates(parents.sizes[seg_top], va, children.sizes[bottom], vb, merge)
    stated = merge_stated(
        va,
        vb,
        parents.stated[seg_top],
        children.stated[bottom],
        merge,
        _sharing_within(bot_ptr, sorted_sizes, sorted_child, children.stated[order])[seg_bot],
        parents.stated_runs[seg_top],
    )
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
        groups', and above them the union's (:mod:`cocoviz.released_stated`: each step A → A + 1 states the union
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


def mean_consistency(
    noisy: Sequence[np.ndarray], variances: Sequence[float], parents: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Hay et al.'s mean-consistency (weighted least squares on a tree) of noisy Hc arrays.

    Parameters
    ----------
    noisy : per level, a ``(nodes, cells)`` array of noisy Hc values
    variances : per level, the noise variance of one cell
    parents : ``parents[l]`` maps nodes of level ``l`` (>= 1) to their parent

    Returns
    -------
    Per level, the consistent real-valued Hc estimates: children sum to their
    parent exactly, but differencing them back to H can give negative,
    fractional counts.  That is why the matching approach exists.

    Notes
    -----
    Bottom-up pass: ``z_v`` combines a node's own measurement with the sum of
    its children's ``z`` by inverse variance.  Top-down pass: the parent's
    final value minus the children's sum is shared out in proportion to each
    child's variance.
    """
    depth = len(noisy) - 1
    z = [np.asarray(x, np.float64).copy() for x in noisy]
    var_z = [np.full(len(x), float(v)) for x, v in zip(noisy, variances)]
    for level in range(depth, 0, -1):
        n_up = len(z[level - 1])
        kids_sum = np.zeros_like(z[level - 1])
        np.add.at(kids_sum, parents[level], z[level])
        kids_var = np.bincount(parents[level], weights=var_z[level], minlength=n_up)
        own_var = var_z[level - 1]
        w_own = kids_var / (own_var + kids_var)
        z[level - 1] = w_own[:, None] * z[level - 1] + (1 - w_own)[:, None] * kids_sum
        var_z[level - 1] = own_var * kids_var / (own_var + kids_var)
    final = [z[0]]
    for level in range(1, depth + 1):
        up = parents[level]
        kids_sum = np.zeros_like(final[-1])
        np.add.at(kids_sum, up, z[level])
        kids_var = np.bincount(up, weights=var_z[level], minlength=len(final[-1]))
        gap = final[-1] - kids_sum
        final.append(z[level] + gap[up] * (var_z[level] / kids_var[up])[:, None])
    return final
