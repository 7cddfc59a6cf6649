"""The stated variance of released upper levels (issue 24, docs/merge-variances.md, "Released upper levels").

Under top-down and bottom-up consistency an upper node's released histogram is the union of its leaves'
final groups (METHOD.md, back-substitution), and its error is scored at that node: the union's groups paired
by rank with the node's true groups.  Pooling the leaves' own statements up per node and size states the
union's error as the sum of the children's, which it is not: a union boundary's count error is the *sum* of
the children's, which partly cancel.  This module states the union instead, from the runs and their stated
variances only (post-processing, no ε, no truth).

**The union of independent fits** (:func:`union_stated`).  In a dense run (stated < 1) a group's error is an
integer, mostly 0 and otherwise one size: a run of n groups with stated v misplaced about ``n v`` groups at its
boundaries (a count error).  In the union of children c holding the size, the boundary is off by ``Σ_c δ_c``,
independent count errors whose spread adds in quadrature (exact for E|·| of Gaussians:
``E|Σ δ_c| = √(Σ E|δ_c|²)``), so the union's n = Σ n_c groups of that size state

    ``√(Σ_c (n_c v_c)²) / n``  (dense runs, v_c < 1),

where pooling them linearly stated ``Σ_c n_c v_c / n``, √m times more for m equal children.  Runs whose
errors are whole sizes (v_c ≥ 1: the sparse tail, lone groups moved by a gap) keep the linear pooling: a lone
group's error is its own wherever its neighbours' errors fall, unless the union's true sizes interleave within
the errors, which the runs cannot tell.  Both parts add: ``(√(Σ_dense (n_c v_c)²) + Σ_sparse n_c v_c) / n``.

**Top-down**: the merge hands each child's group the matched pair's merged size, so the union of the merged
children, at any ancestor A, is the m = 1 merge (:func:`cocoviz.merge_rules.merge_stated` with
``sharing=1``) of two estimates of A's groups: the parent level's merged groups as A sees them (its own
statement when A is the parent, else its statement at A from the step before) and the union of the
children's own fits at A (above).  The parent pins the union's boundary where its side wins the pair
(w > ½); the children's union takes over where theirs does.  So in dense runs the released boundary lies
between the two sides' boundaries, and moves away from either only through the pairs that disagree by a size
and that the other side wins: per parent and size it misplaces at most ``min(max(T_P, T_U), T_P + W, T_U + P)``
groups (:func:`between_boundaries`, under the weighted merge; the m = 1 merge pair by pair charged an Hg
parent's long block with the union's whole step error: housing's Hg root, 7 times the realised).
:mod:`cocoviz.consistency` applies it step by step, carrying per run one statement for every ancestor level
(``LevelEstimates.above``); the released level A states the count-weighted mean of its leaves' statements at A
per node and size (:func:`released_upper`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.merge_rules import UNIT_ERRORS, merge_stated
from cocoviz.runs import LevelRuns
from cocoviz.variances import VARIANCE_FLOOR as FLOOR

__all__ = [
    "ancestor_map",
    "union_stated",
    "union_above",
    "weighted_means",
    "released_upper",
    "merged_above",
    "between_boundaries",
]


def ancestor_map(parents: Sequence[np.ndarray | None], level: int, to: int) -> np.ndarray | None:
    """For every node of ``level``, its ancestor's index at level ``to`` (≤ ``level``); None when equal."""
    if to == level:
        return None
    up = np.asarray(parents[level], np.int64)
    for step in range(level - 1, to, -1):
        up = np.asarray(parents[step], np.int64)[up]
    return up


def _non_decreasing(values: np.ndarray) -> bool:
    return len(values) < 2 or bool(np.all(values[1:] >= values[:-1]))


def _groups(block: np.ndarray, key: np.ndarray, ordered: bool = True) -> np.ndarray:
    """Codes 0..g−1 of the distinct ``(block, key)`` pairs (non-negative int arrays of one length), numbered in
    the pairs' lexicographic order; with ``ordered=False`` in any order (the caller only sums by code).

    Why a compiled pass: a level's runs come by node, sorted by size within it, and nodes by ancestor, so one
    sequential pass with a scratch table of sizes groups them; a hash pass over every run (``pd.factorize``)
    took 4 of the 4.7 s these statements added to a release at the block level (scale 0.1).  Inputs that do not
    come in that order take the hash pass.
    """
    n = len(block)
    if n == 0:
        return np.zeros(0, np.int64)
    block, key = np.asarray(block, np.int64), np.asarray(key, np.int64)
    same = block[1:] == block[:-1]
    if int(key.min()) >= 0 and bool(np.all(block[1:] >= block[:-1])):
        if not ordered or bool(np.all(key[1:][same] >= key[:-1][same])):
            from cocoviz._released_kernels import codes_within_blocks

            return codes_within_blocks(block, key, int(key.max()) + 1)
    width = int(key.max()) + 1
    if int(block.min()) < 0 or int(key.min()) < 0 or int(block.max()) >= (2**62) // width:
        return np.unique(np.stack([block, key]), axis=1, return_inverse=True)[1].ravel()
    codes, uniques = pd.factorize(block * width + key)
    rank = np.empty(len(uniques), np.int64)
    rank[np.argsort(uniques)] = np.arange(len(uniques))
    return rank[codes]


def union_stated(
    node_of_run: np.ndarray,
    up_of_run: np.ndarray,
    sizes: np.ndarray,
    counts: np.ndarray,
    stated: np.ndarray,
    dtype: type = np.float64,
) -> np.ndarray:
    """Per run: the stated variance, at its node's ancestor (``up_of_run``), of the union of every node's groups
    of its size under that ancestor (module docstring: dense runs in quadrature, whole-size errors linearly).

    A node's runs of one size are one count error (their statements summed before squaring).

    Two children with 100 groups of size 2 each stating 0.01 (one misplaced group each): the union's 200 groups
    misplace √2 of them, not 2; with one child stating 4 (whole sizes) it keeps its linear share:

    >>> union_stated(np.array([0, 1]), np.array([0, 0]), np.array([2, 2]), np.array([100, 100]),
    ...              np.array([0.01, 0.01])).round(5).tolist()
    [0.00707, 0.00707]
    >>> union_stated(np.array([0, 1]), np.array([0, 0]), np.array([2, 2]), np.array([100, 100]),
    ...              np.array([0.01, 4.0])).round(5).tolist()
    [2.005, 2.005]
    """
    sizes = np.asarray(sizes, np.int64)
    if len(sizes) == 0:
        return np.zeros(0, dtype)
    counts = np.asarray(counts, np.float64)
    stated = np.asarray(stated, np.float64)
    node_of_run, up_of_run = np.asarray(node_of_run, np.int64), np.asarray(up_of_run, np.int64)
    if _non_decreasing(up_of_run) and _non_decreasing(node_of_run) and int(sizes.min()) >= 0:
        # Runs by node, nodes by ancestor (every level here): one compiled pass, no run-length temporaries
        # (at the block level these statements' temporaries added gigabytes to a release's peak).
        from cocoviz._released_kernels import union_stated_runs

        out = np.empty(len(sizes), dtype)
        union_stated_runs(node_of_run, up_of_run, sizes, counts, stated, UNIT_ERRORS, out)
        return out
    misplaced = counts * stated  # a run's expected squared error, summed over its groups
    dense = stated < UNIT_ERRORS
    own = _groups(node_of_run, sizes, ordered=False)  # one count error per node and size
    own_dense = np.bincount(own, weights=np.where(dense, misplaced, 0.0))
    first = np.zeros(len(own_dense), np.int64)
    first[own[::-1]] = np.arange(len(own))[::-1]  # a run of each (node, size)
    union = _groups(up_of_run, sizes, ordered=False)
    n = np.bincount(union, weights=counts)
    quadrature = np.sqrt(np.bincount(union[first], weights=own_dense**2, minlength=len(n)))
    linear = np.bincount(union, weights=np.where(dense, 0.0, misplaced), minlength=len(n))
    return ((quadrature + linear) / np.where(n > 0, n, 1.0))[union].astype(dtype, copy=False)


def union_above(
    parents: Sequence[np.ndarray | None], level: int, ptr: np.ndarray, sizes: np.ndarray, counts: np.ndarray,
    stated: np.ndarray,
) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Per ancestor level A = 0 … ``level`` − 1, per run of ``level``'s own fits (CSR ``ptr``): :func:`union_stated`
    at A (float32)."""
    node = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    # float32, as the release stores them: one per run and ancestor, held for a whole level
    return tuple(
        union_stated(node, ancestor_map(parents, level, a)[node], sizes, counts, stated, np.float32)
        for a in range(level)
    )


def weighted_means(node_of_run: np.ndarray, sizes: np.ndarray, counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The count-weighted mean of ``values`` per (node, size), in the order of
    :func:`cocoviz.runs.aggregate_runs`'s runs (node, then size), float64."""
    if len(sizes) == 0:
        return np.zeros(0, np.float64)
    from cocoviz._released_kernels import weighted_means_sorted

    node_of_run, sizes = np.asarray(node_of_run, np.int64), np.asarray(sizes, np.int64)
    out = np.empty(len(sizes), np.float64)
    counts, values = np.asarray(counts, np.float64), np.asarray(values, np.float64)
    written = weighted_means_sorted(node_of_run, sizes, counts, values, out)
    if written >= 0:  # runs by node, then size (every level here): one compiled pass
        return out[:written].copy()  # not a view holding every run's slot
    del out
    if _non_decreasing(node_of_run) and int(sizes.min()) >= 0:
        # Leaves' runs under an ancestor (released_upper): by ancestor, not by size within it.  Group them in one
        # compiled pass (codes by first appearance), then put the few distinct (ancestor, size) in order.
        from cocoviz._released_kernels import codes_within_blocks

        codes = codes_within_blocks(node_of_run, sizes, int(sizes.max()) + 1)
        total = np.bincount(codes, weights=counts)
        weighted = np.bincount(codes, weights=values * counts, minlength=len(total))
        first = np.empty(len(total), np.int64)
        first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
        order = np.lexsort((sizes[first], node_of_run[first]))
        order = order[total[order] > 0]
        return weighted[order] / total[order]
    codes = _groups(node_of_run, sizes)  # numbered in (node, size) order
    counts = np.asarray(counts, np.float64)
    keep = counts > 0
    total = np.bincount(codes[keep], weights=counts[keep])
    weighted = np.bincount(codes[keep], weights=(np.asarray(values, np.float64) * counts)[keep], minlength=len(total))
    present = total > 0
    return weighted[present] / total[present]


def released_upper(
    leaves: LevelRuns, parents: Sequence[np.ndarray | None], above: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Per level A above the leaves, root first, the stated variance of every released run (float32; the runs of
    :func:`cocoviz.runs.sums_up`): the count-weighted mean per node and size of the leaves' runs' statements
    at A (``above[A]``, one per leaf run)."""
    node = leaves.node_ids()
    depth = len(parents) - 1
    return [
        weighted_means(ancestor_map(parents, depth, a)[node], leaves.sizes, leaves.counts, above[a]).astype(np.float32)
        for a in range(depth)
    ]


def merged_above(
    parents,
    children,
    seg_top: np.ndarray,
    bottom: np.ndarray,
    va: np.ndarray,
    vb: np.ndarray,
    merge: str,
    counts: np.ndarray,
) -> list[np.ndarray]:
    """Per matched segment (``counts`` groups each) and ancestor level A of the children, the stated variance at A
    of the union of the merged children (this module's top-down step): the m = 1 merge of the parent side's
    statement at A (its own at the parent's level, per run for an Hg parent) and the children's own union's at A,
    its dense pairs bounded per parent and size under the weighted merge (:func:`between_boundaries`; the plain
    average keeps the m = 1 merge pair by pair).  ``parents`` and ``children`` are
    :class:`cocoviz.consistency.LevelEstimates`.  Empty unless the children carry one statement per ancestor
    (``above``) and the parents one fewer."""
    depth = len(children.above)
    if not depth or len(parents.above) != depth - 1:
        return []
    parent_side = [*parents.above, parents.stated]
    # Per parent node and size: the bound's groups (a slice holds whole parents, so they never straddle one).
    node = np.searchsorted(parents.ptr, seg_top, side="right") - 1
    key = _groups(node, parents.sizes[seg_top])
    disagree = parents.sizes[seg_top] != children.sizes[bottom]
    out = []
    for a in range(depth):
        sa, sb = parent_side[a][seg_top], children.above[a][bottom]
        runs = parents.stated_runs[seg_top] if a == depth - 1 else sa
        pair = merge_stated(va, vb, sa, sb, merge, 1, runs)  # whole-size pairs keep the m = 1 merge
        if merge != "weighted":  # measured worse under the plain average (docs: roots 25 -> 21 of 40)
            out.append(pair)
            continue
        dense = np.maximum(sa, sb) < UNIT_ERRORS
        # A lone group is no run: its error is no boundary's count error, and it keeps the m = 1 merge (housing's
        # root of Hg×Hc×Hc, a group of size 8,667 both sides stated exact: the bound stated 10⁻¹¹, mean z² 10⁵).
        dense &= np.bincount(key, weights=counts * dense)[key] > 1
        bounded = between_boundaries(key, counts * dense, _parent_wins(va, vb), disagree, runs, sb)
        out.append(np.where(dense, bounded, pair))
    return out


def _parent_wins(va: np.ndarray, vb: np.ndarray) -> np.ndarray:
    """P(the parent's side) of a dense pair that disagrees by one size, weighted: the larger weight takes it whole."""
    w = vb / (va + vb)
    return np.where(w > 0.5, 1.0, np.where(w == 0.5, 0.5, 0.0))


def between_boundaries(
    key: np.ndarray, counts: np.ndarray, p: np.ndarray, disagree: np.ndarray, parent: np.ndarray, union: np.ndarray
) -> np.ndarray:
    """Per pair, the stated variance of dense pairs (``counts``; 0 for others) grouped by ``key`` (parent node and
    size): the released boundary lies between the parent side's and the children's union's, so per group it
    misplaces at most

        ``min(max(T_P, T_U), T_P + W, T_U + P)``

    groups, with ``T_P = Σ n·parent`` and ``T_U = Σ n·union`` the two sides' misplaced groups, and ``W`` (``P``)
    the groups of the pairs that disagree by a size and that the children (the parent) win: only those move it
    away from the parent's (the union's) boundary.  Placed where they are: the pairs the parent wins state its
    own (per run) statement, shrunk if the bound is below their total; the pairs the children win share the
    rest, at least the group's mean rate.

    1,000 pairs agreeing on one size: the smaller side's 5.9 misplaced groups (not the union's 14.1), the parent's
    long block (900 groups, it wins) stating its run's 0.001 and the 100 pairs the children win the rest:

    >>> got = between_boundaries(np.zeros(2, np.int64), np.array([900.0, 100.0]), np.array([1.0, 0.0]),
    ...                          np.zeros(2, bool), np.array([0.001, 0.05]), np.full(2, 0.0141))
    >>> got.round(4).tolist(), float((got * [900, 100]).sum().round(3))
    ([0.001, 0.05], 5.9)
    """
    if len(key) == 0:
        return np.zeros(0, np.float64)
    n = np.asarray(counts, np.float64)
    parent, union = np.asarray(parent, np.float64), np.asarray(union, np.float64)
    g = int(key.max()) + 1

    def total(x: np.ndarray) -> np.ndarray:
        return np.bincount(key, weights=x, minlength=g)

    t_p, t_u = total(n * parent), total(n * union)
    off = n * disagree
    bound = np.minimum(np.maximum(t_p, t_u), np.minimum(t_p + total(off * (1 - p)), t_u + total(off * p)))
    won, t_won = total(n * (1 - p)), total(n * p * parent)
    shrink = np.divide(bound, t_won, out=np.ones(g), where=t_won > bound)
    mean = np.divide(bound, total(n), out=np.zeros(g), where=total(n) > 0)
    rest = np.divide(np.maximum(bound - t_won, 0.0), won, out=np.zeros(g), where=won > 0)
    children_side = np.maximum(np.maximum(rest, mean)[key], FLOOR)
    return p * parent * shrink[key] + (1 - p) * children_side
