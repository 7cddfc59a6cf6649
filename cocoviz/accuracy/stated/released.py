"""The stated variance of released upper levels (experimental; docs/notes/merge-variances.md, "Released upper levels").

Under top-down and bottom-up consistency an upper node's released histogram is the union of its leaves' final
groups (METHOD.md, back-substitution), and its error is scored at that node: the union's groups paired by rank
with the node's true groups.  Pooling the leaves' own statements up per node and size states the union's error
as the sum of the children's, which it is not: a union boundary's count error is the *sum* of the children's,
which partly cancel.  This module states the union instead, from the runs and their stated variances only
(post-processing, no ε, no truth).

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
Under bottom-up that is the whole rule, and it composes level by level: a node's dense count errors' squares
and its whole-size errors are sums over its children (:func:`union_levels`, one pass per level over the level's
released runs, identical to summing the leaves' straight into every ancestor).

**Top-down, one step per level** (:func:`step_stated`). The merge hands each child's group the matched pair's
merged size, so the union at A of the merged children of the step A → A + 1 is the m = 1 merge
(:func:`cocoviz.accuracy.stated.merged.merge_stated` with ``sharing=1``) of two estimates of A's groups: A's merged
groups (their own statement, an Hg parent's per run) and the union at A of the children's own fits (above). The parent
pins the union's boundary where its side wins the pair (w > ½); the children's union takes over where theirs does.
So in dense runs a released boundary is off by exactly the parent side's error plus the disagreeing pairs the
children win, toward the union's boundary; each boundary states its expected error given those pairs
(:func:`between_boundaries`, :func:`boundary_error`, under the weighted merge; the m = 1 merge pair by pair would
charge an Hg parent's long block with the union's whole step error); a dense pair
two or more sizes apart at least its winner's variance plus the known move (:func:`given_both_sizes`). The released
level A states, per node and size, the count-weighted mean of that step's statements (:class:`StepStatements`):
exactly the union of A's merged children, which is A's released histogram when A + 1 is the leaves; higher up the
steps below move a few groups of A's union by a size more, and a released (node, size) the step's union lacks keeps
the leaves' statement pooled up (an overstatement). Carrying every ancestor's statement through every deeper step
instead would cost depth × runs; at depth 1 the two are the same rule.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.accuracy.stated.merged import UNIT_ERRORS, merge_stated
from cocoviz.accuracy.stated.variances import VARIANCE_FLOOR as FLOOR
from cocoviz.consistency.merge import merge_estimates
from cocoviz.core.runs import LevelRuns

__all__ = [
    "union_stated",
    "step_stated",
    "StepStatements",
    "union_levels",
    "between_boundaries",
    "boundary_error",
    "given_both_sizes",
]


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
            from cocoviz.accuracy.stated._released_kernels import codes_within_blocks

            return codes_within_blocks(block, *_table_keys(key))
    width = int(key.max()) + 1
    if int(block.min()) < 0 or int(key.min()) < 0 or int(block.max()) >= (2**62) // width:
        return np.unique(np.stack([block, key]), axis=1, return_inverse=True)[1].ravel()
    codes, uniques = pd.factorize(block * width + key)
    rank = np.empty(len(uniques), np.int64)
    rank[np.argsort(uniques)] = np.arange(len(uniques))
    return rank[codes]


def _table_keys(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """``keys`` (non-negative) as indices of a scratch table, and the table's width: the keys themselves, or,
    where the largest is far beyond the runs' count (a household of 2⁴⁰ members), their ranks among the distinct
    keys, which keep their order.  So the compiled passes' tables grow with the runs, never with a size's value."""
    width = int(keys.max()) + 1
    if width <= max(1 << 20, 4 * len(keys)):
        return keys, width
    ranks = np.unique(keys, return_inverse=True)[1].ravel().astype(np.int64)
    return ranks, int(ranks.max()) + 1


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
        from cocoviz.accuracy.stated._released_kernels import union_stated_runs

        out = np.empty(len(sizes), dtype)
        union_stated_runs(node_of_run, up_of_run, _table_keys(sizes)[0], counts, stated, UNIT_ERRORS, out)
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


#: Matched segments per pass of :func:`step_stated` (whole parents each): its dozen temporaries stay small
#: beside a consistency slice's (the block level's peak memory).
STEP_SEGMENTS = 1 << 18


def step_stated(
    parents,
    children,
    union: np.ndarray,
    node: np.ndarray,
    seg_top: np.ndarray,
    bottom: np.ndarray,
    va: np.ndarray,
    vb: np.ndarray,
    merge: str,
    counts: np.ndarray,
) -> np.ndarray:
    """Per matched segment of one step (``counts`` groups each, under parent ``node``), the stated variance at the
    parent's level of the union of the merged children (module docstring): the m = 1 merge of the parent's
    statement (per run for an Hg parent) and the children's own union's at the parent (``union``, one per child
    run: :func:`union_stated`), its dense pairs bounded per parent and size under the weighted merge
    (:func:`between_boundaries`; the plain average keeps the m = 1 merge pair by pair).  ``parents`` and
    ``children`` are :class:`cocoviz.consistency.LevelEstimates` of one consistency slice; ``node``
    non-decreasing lets it go in passes of whole parents (:data:`STEP_SEGMENTS` segments or so each), the same
    numbers, since every pair's bound is its parent's and size's."""
    n = len(seg_top)
    if n <= STEP_SEGMENTS or not _non_decreasing(node):
        return _step_stated(parents, children, union, node, seg_top, bottom, va, vb, merge, counts)
    starts = np.flatnonzero(node[1:] != node[:-1]) + 1  # where each parent's segments begin
    if len(starts) == 0:
        return _step_stated(parents, children, union, node, seg_top, bottom, va, vb, merge, counts)
    at = np.minimum(np.searchsorted(starts, np.arange(STEP_SEGMENTS, n, STEP_SEGMENTS)), len(starts) - 1)
    cuts = np.unique(np.concatenate([[0], starts[at], [n]]))
    out = np.empty(n, np.float64)
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        part = slice(int(lo), int(hi))
        args = (node[part], seg_top[part], bottom[part], va[part], vb[part], merge, counts[part])
        out[part] = _step_stated(parents, children, union, *args)
    return out


def _step_stated(parents, children, union, node, seg_top, bottom, va, vb, merge, counts) -> np.ndarray:
    """:func:`step_stated` on one pass of whole parents."""
    sa, sb, runs = parents.stated[seg_top], union[bottom], parents.stated_runs[seg_top]
    if merge != "weighted":  # measured worse under the plain average (docs: roots 25 -> 21 of 40)
        return merge_stated(va, vb, sa, sb, merge, 1, runs)
    top, bot = parents.sizes[seg_top], children.sizes[bottom]
    key = _groups(node, top)  # per parent node and size (a slice holds whole parents)
    # Dense: misplaced groups one size off, the pair taken whole by its winner; sides two or more sizes apart merge
    # between them (a size 6 stated exact and 8 merged to 7: stated 10⁻¹², z² 10¹²), stated given both sizes.
    dense = (np.maximum(sa, sb) < UNIT_ERRORS) & (np.abs(bot - top) < 2)
    # A lone group is no run: its error is no boundary's count error, and it keeps the m = 1 merge (housing's
    # root of Hg×Hc×Hc, a group of size 8,667 both sides stated exact: the bound stated 10⁻¹¹, mean z² 10⁵).
    dense &= np.bincount(key, weights=counts * dense)[key] > 1
    out = between_boundaries(key, counts * dense, _parent_wins(va, vb), np.sign(bot - top), runs, sb, node)
    rest = np.flatnonzero(~dense)  # elementwise below: merged only where used
    out[rest] = merge_stated(va[rest], vb[rest], sa[rest], sb[rest], merge, 1, runs[rest])
    # Dense pairs two or more sizes apart: the dense winner moved by a known k, at least that.
    moved = rest[(np.maximum(sa[rest], sb[rest]) < UNIT_ERRORS) & (np.abs(bot - top)[rest] >= 2)]
    given = given_both_sizes(va[moved], vb[moved], sa[moved], sb[moved], top[moved], bot[moved])
    out[moved] = np.maximum(out[moved], given)
    return out


def given_both_sizes(
    va: np.ndarray, vb: np.ndarray, sa: np.ndarray, sb: np.ndarray, a: np.ndarray, b: np.ndarray
) -> np.ndarray:
    """The winner's stated variance plus its known move, squared: a pair's merged size (weighted, m = 1) given both
    sides' sizes ``a`` (the parent's) and ``b`` (the children's union's), stated ``sa`` and ``sb``.

    The release merges to ``rint(w a + (1 − w) b)``, ``w = vb/(va + vb)``: the winner's size (the side with the
    larger weight) moved by a known ``k`` sizes, so the error is the winner's own plus k: ``s_winner + k²``, their
    cross term dropped.  :func:`step_stated` states a dense pair whose sides are two or more sizes apart at least
    this: the dense rule takes such a pair whole from its winner, where the merge can land between the two (a
    12-region Hg root's size 6, stated exact, met children at 8 and released 4 groups at 7: stated 10⁻¹², z² 10¹²).

    Tried and not kept (docs/merge-variances.md, "Given what the runs show"): every whole-size pair whose winner is
    dense stating this in place of the m = 1 merge (white's Hc root over Hg states at ε = 0.1 0.49 → 0.77 over 10
    trials, but over 100 Hawaiian's Hg root over Hc states at ε = 0.1 0.79 → 13.8: the Hg root's zero block wins
    pairs its per-group rate does not describe).

    A parent's size 5 stating 0.01 (the smaller weights' variance, 1 against 9: w = 0.9) against its children's
    stating 100: agreeing, a size above and two above (5.2) keep the parent's; six above (5.6 → 6) moves it by one:

    >>> given_both_sizes(np.ones(4), np.full(4, 9.0), np.full(4, 0.01), np.full(4, 100.0), np.full(4, 5),
    ...                  np.array([5, 6, 7, 11])).tolist()
    [0.01, 0.01, 0.01, 1.01]
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    merged = np.rint(merge_estimates(a, va, b, vb, "weighted")[0])  # what the release merges them to
    parent = vb >= va  # the side with the larger weight
    own = np.where(parent, sa, sb)
    moved = merged - np.where(parent, a, b)
    return np.maximum(own + moved * moved, FLOOR)


def _by_node_size(
    node: np.ndarray, sizes: np.ndarray, counts: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct ``(node, size)`` of positive count, in that order: the node, the size, Σ counts and
    Σ counts · values (float64)."""
    node, sizes = np.asarray(node, np.int64), np.asarray(sizes, np.int64)
    if len(sizes) == 0:
        return node, sizes, np.zeros(0), np.zeros(0)
    if _non_decreasing(node) and int(sizes.min()) >= 0:
        # Segments come by parent, merged sizes unsorted within it: one compiled pass, codes by first appearance.
        from cocoviz.accuracy.stated._released_kernels import codes_within_blocks

        codes = codes_within_blocks(node, *_table_keys(sizes))
    else:
        codes = _groups(node, sizes, ordered=False)
    counts = np.asarray(counts, np.float64)
    total = np.bincount(codes, weights=counts)
    weighted = np.bincount(codes, weights=np.asarray(values, np.float64) * counts, minlength=len(total))
    first = np.empty(len(total), np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    order = np.lexsort((sizes[first], node[first]))
    order = order[total[order] > 0]
    return node[first][order], sizes[first][order], total[order], weighted[order]


#: A (node, size) pair as one int64 key, node-major: sizes stay below 2³¹ (K is public and far smaller).
_SIZE_SPAN = 1 << 31
#: Released runs looked up per pass of :meth:`StepStatements.released` (its temporaries stay bounded).
_LOOKUP_RUNS = 1 << 20


class StepStatements:
    """Per level A above the leaves, the statements of the step A → A + 1 (:func:`step_stated`), as one rate per
    node of A and merged size, kept as the consistency slices go (a slice holds whole parents, so each pair is
    whole in one slice), and read as the released level's statement (:meth:`released`)."""

    def __init__(self, depth: int):
        self._pieces: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(depth)]

    def add(self, level: int, node: np.ndarray, sizes: np.ndarray, counts: np.ndarray, values: np.ndarray) -> None:
        """One slice's segments of the step ``level`` → ``level + 1``: their parent (``level``'s node index),
        merged size, groups and statement; kept as a sorted int64 key and a float32 rate per pair (12 bytes)."""
        node, sizes, total, weighted = _by_node_size(node, sizes, counts, values)
        self._pieces[level].append((node * _SIZE_SPAN + sizes, (weighted / total).astype(np.float32)))

    def released(self, level: int, runs: LevelRuns, fallback: np.ndarray) -> np.ndarray:
        """Per released run of ``level`` (``runs``, by node then size), the count-weighted mean of the step's
        statements of its node and size (float32); ``fallback``'s where the step's union has no such groups.
        The level's pairs are freed.

        >>> steps = StepStatements(1)
        >>> steps.add(0, np.array([0, 0, 0]), np.array([2, 1, 2]), np.array([10, 5, 30]), np.array([0.4, 0.1, 0.0]))
        >>> runs = LevelRuns(np.array([0, 3]), np.array([1, 2, 3]), np.array([5, 40, 1]))
        >>> steps.released(0, runs, np.full(3, 9.0)).tolist()
        [0.10000000149011612, 0.10000000149011612, 9.0]
        """
        pieces, self._pieces[level] = self._pieces[level], []
        key = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros(0, np.int64)
        rate = np.concatenate([p[1] for p in pieces]) if pieces else np.zeros(0, np.float32)
        del pieces
        if not _non_decreasing(key):  # slices come in parent order, each sorted: only a whole-level fallback
            order = np.argsort(key, kind="stable")
            key, rate = key[order], rate[order]
        out = np.asarray(fallback, np.float32).copy()
        if len(key) == 0:
            return out
        step = max(1, _LOOKUP_RUNS * runs.n_nodes // max(1, len(runs.sizes)))  # nodes per pass
        for lo in range(0, runs.n_nodes, step):
            hi = min(lo + step, runs.n_nodes)
            a, b = int(runs.ptr[lo]), int(runs.ptr[hi])
            node = np.repeat(np.arange(lo, hi, dtype=np.int64), np.diff(runs.ptr[lo : hi + 1]))
            run_key = node * _SIZE_SPAN + np.asarray(runs.sizes[a:b], np.int64)
            at = np.minimum(np.searchsorted(key, run_key), len(key) - 1)
            found = key[at] == run_key
            out[a:b][found] = rate[at[found]]
        return out


def union_levels(leaves, parents, n_nodes) -> tuple[list[LevelRuns], list[np.ndarray]]:
    """Bottom-up: every level's runs summed up from the leaves' (``leaves``, their own fits'
    :class:`cocoviz.consistency.LevelEstimates`; :func:`cocoviz.core.runs.sums_up`), and every level's statement
    (float32, root first): the leaves' own (pooled per node and size), above them
    the union's (:func:`union_stated` at every ancestor), summed level by level: a node's dense misplaced groups
    of a size (Σ n v over its runs stating v < 1: one count error) squared, and its whole-size ones (v ≥ 1), are
    each a sum over the nodes below."""
    from cocoviz.core.runs import aggregate_weighted, sums_up

    v = leaves.stated
    dense = v < UNIT_ERRORS
    rows = np.stack([v, np.where(dense, v, 0.0), np.where(dense, 0.0, v)])
    runs, (own, dense_rate, linear) = aggregate_weighted(
        leaves.node_ids(), leaves.sizes, leaves.counts, len(leaves.ptr) - 1, rows, np.float64
    )
    # Carried up as count-weighted means (sums_up's form): a leaf's (Σ_dense n v)² / n and its Σ_sparse n v / n.
    n = runs.counts.astype(np.float64)
    levels, means = sums_up(runs, parents, n_nodes, np.stack([dense_rate * dense_rate * n, linear]), np.float64)
    out = []
    for level in range(len(levels) - 1):
        n = levels[level].counts.astype(np.float64)
        squares, sparse = means[level] * n
        out.append(((np.sqrt(squares) + sparse) / n).astype(np.float32))
    return levels, out + [own.astype(np.float32)]


def _parent_wins(va: np.ndarray, vb: np.ndarray) -> np.ndarray:
    """P(the parent's side) of a dense pair that disagrees by one size, weighted: the larger weight takes it whole."""
    w = vb / (va + vb)
    return np.where(w > 0.5, 1.0, np.where(w == 0.5, 0.5, 0.0))


def between_boundaries(
    key: np.ndarray,
    counts: np.ndarray,
    p: np.ndarray,
    direction: np.ndarray,
    parent: np.ndarray,
    union: np.ndarray,
    node: np.ndarray | None = None,
) -> np.ndarray:
    """Per pair, the stated variance of dense pairs (``counts``; 0 for others) grouped by ``key`` (parent node and
    size, numbered in that order; ``node`` per pair, None: each key its own node), given where the two sides
    disagree (``direction``: the sign of the children's size minus the parent's) and who wins (``p``).

    **Per boundary.**  The boundary between a node's consecutive sizes s < s' is the count of groups ≤ s; the
    parent side's is off by δ_P, the children's union's by δ_U.  The pairs between the two boundaries disagree by a
    size, all the same way (``direction``): D = |δ_U − δ_P| of them, W won by the children and P by the parent.
    Each pair takes its winner's size, so the released boundary is off by exactly ``δ_R = δ_P + sign(δ_U − δ_P) W``,
    and both W, P and the sign are in the runs.  With independent errors δ_P ~ N(0, σ_P²), δ_U ~ N(0, σ_U²)
    (``σ = T √(π/2)``: a side's stated misplaced groups T are E|δ|), the observed δ_U − δ_P leaves
    ``δ_P ~ N(−λ (δ_U − δ_P), τ²)``, ``λ = T_P²/(T_P² + T_U²)``, ``τ² = σ_P² σ_U²/(σ_P² + σ_U²)``, so δ_R is
    normal with mean ``μ = ±(W − λ D) = ±(T_U² W − T_P² P)/(T_P² + T_U²)`` and variance τ²:

        ``E|δ_R| = τ √(2/π) exp(−μ²/2τ²) + |μ| erf(|μ|/(τ √2))``  (:func:`boundary_error`).

    W = P = 0 (the sides agree) gives ``T_P T_U/√(T_P² + T_U²)``, the m = 1 merge of two count errors; the parent
    winning every disagreeing pair (W = 0) with the union far off (T_U ≫ T_P) gives T_P.  A boundary's sides
    state the mean of its two sizes' ``T_P = Σ n·parent`` and ``T_U = Σ n·union`` (a size's misplaced groups are
    those of its two boundaries, half each); a node's lowest and highest size have one outer boundary each, stated
    by that size alone.  A size states the mean of its two boundaries' E|δ_R|.  The worst case of
    the same δ_R (W all away from the truth), ``min(max(T_P, T_U), T_P + W, T_U + P)`` per size, is not used: it
    mixes the two boundaries' pairs of a size.

    Placed where the errors are: the pairs the parent wins state its own (per run) statement, scaled to the total
    where it is below their sum or where they are all the size's pairs; the pairs the children win share the rest,
    at least the group's mean rate.

    1,000 pairs agreeing on one size: the parent's long block (900 groups, it wins) stating its run's 0.001, the
    union's 0.0141 a group; the size states √(5.9² + 14.1²)⁻¹ 5.9 · 14.1 = 5.44 misplaced groups, 0.9 on the long
    block and the rest on the 100 pairs the children win:

    >>> got = between_boundaries(np.zeros(2, np.int64), np.array([900.0, 100.0]), np.array([1.0, 0.0]),
    ...                          np.zeros(2), np.array([0.001, 0.05]), np.full(2, 0.0141))
    >>> got.round(4).tolist(), float((got * [900, 100]).sum().round(2))
    ([0.001, 0.0454], 5.44)
    """
    if len(key) == 0:
        return np.zeros(0, np.float64)
    n = np.asarray(counts, np.float64)
    parent, union = np.asarray(parent, np.float64), np.asarray(union, np.float64)
    g = int(key.max()) + 1

    def total(x: np.ndarray) -> np.ndarray:
        return np.bincount(key, weights=x, minlength=g)

    t_p, t_u = total(n * parent), total(n * union)
    node_of_key = np.arange(g)
    if node is not None:
        node_of_key[key] = node
    inner = node_of_key[1:] == node_of_key[:-1]  # sizes k and k + 1 of one node: boundary slot k + 1
    below = np.arange(g)  # the boundary below size k; above a node's highest size k: slot g + k
    above = np.where(np.append(inner, False), np.arange(1, g + 1), g + np.arange(g))
    direction = np.asarray(direction)
    slot = np.where(direction < 0, below[key], above[key])
    off = n * (direction != 0)
    won_off = np.bincount(slot, weights=off * (1 - p), minlength=2 * g)
    lost_off = np.bincount(slot, weights=off * p, minlength=2 * g)

    def sides(t: np.ndarray) -> np.ndarray:  # per slot: the mean of its two sizes', one size's at a node's ends
        lower = t.copy()
        lower[1:] = np.where(inner, (t[1:] + t[:-1]) / 2, t[1:])
        return np.concatenate([lower, t])

    released = boundary_error(sides(t_p), sides(t_u), won_off, lost_off)
    bound = (released[below] + released[above]) / 2
    won, t_won = total(n * (1 - p)), total(n * p * parent)
    # The parent's pairs scaled to the total where it is below their sum, or where they are all the size's pairs.
    shrink = np.divide(bound, t_won, out=np.ones(g), where=(t_won > bound) | ((won == 0) & (t_won > 0)))
    groups = total(n)
    mean = np.divide(bound, groups, out=np.zeros(g), where=groups > 0)
    rest = np.divide(np.maximum(bound - t_won, 0.0), won, out=np.zeros(g), where=won > 0)
    children_side = np.maximum(np.maximum(rest, mean)[key], FLOOR)
    return np.maximum(p * parent * shrink[key], FLOOR * p) + (1 - p) * children_side


def boundary_error(t_p: np.ndarray, t_u: np.ndarray, w: np.ndarray, p: np.ndarray) -> np.ndarray:
    """E|δ_R| of a released boundary (:func:`between_boundaries`) from the two sides' stated misplaced groups
    ``t_p``, ``t_u`` and the disagreeing pairs the children (``w``) and the parent (``p``) win.

    >>> boundary_error(np.array([6.0, 6.0, 6.0, 0.0]), np.array([6.0, 1e9, 1e9, 5.0]), np.array([0.0, 0.0, 9.0, 3.0]),
    ...                np.array([0.0, 0.0, 9.0, 0.0])).round(3).tolist()
    [4.243, 6.0, 9.849, 3.0]
    """
    from scipy.special import erf  # deferred: SciPy's import is the heavy part of cocoviz's

    sp, su = np.square(np.asarray(t_p, np.float64)), np.square(np.asarray(t_u, np.float64))
    both = sp + su
    safe = np.where(both > 0, both, 1.0)
    mu = np.abs(np.where(both > 0, (su * w - sp * p) / safe, (np.asarray(w) - p) / 2))
    tau = np.sqrt(np.pi / 2 * sp * su / safe)
    x = np.divide(mu, tau * np.sqrt(2), out=np.full(len(mu), np.inf), where=tau > 0)
    spread = tau * np.sqrt(2 / np.pi) * np.exp(-np.minimum(x * x, 700.0))
    return spread + mu * np.where(np.isfinite(x), erf(np.where(np.isfinite(x), x, 0.0)), 1.0)
