"""Compiled whole-level loops (numba): queries from runs, and segmented isotonic fits to runs.

A level's nodes are segments of one array (``ptr``, like :class:`~cocoviz.core.runs.LevelRuns`),
and each loop here runs over all of them in one call, so a level costs one Python
call, not one per node.  The fits are the ones of :mod:`cocoviz.methods.estimators`:

* Hg: isotonic regression with ``x >= 0``; blocks (runs of equal fitted value) give
  runs of ``rint(value)`` with variance ``2Δ² / (|block| ε²)``, adjacent runs of equal
  size and variance combined.  Under L2 the pool-adjacent-violators stack (block sum,
  block length) is the whole state: it can be fed in chunks (:func:`pava_push`), so a
  node of 240M groups never needs its noisy vector in memory at once.
* Hc: isotonic regression into ``[0, G]``, rounding, ``Hc[K] = G``; the histogram's
  non-zero entries give runs with variance ``4Δ² / (Ĥ[s] ε²)``.

Imported on first use, so ``import cocoviz`` does not load numba.
"""

from __future__ import annotations

import numba
import numpy as np

from cocoviz.methods._isotonic_kernels import backward, slope_trick, slope_trick_counts

__all__ = [
    "hc_values",
    "hg_values",
    "pava_push",
    "fit_hg_segments",
    "fit_hc_segments",
    "hg_blocks_to_runs",
]


@numba.njit(cache=True, nogil=True)
def hc_values(sizes, counts, run_ptr, bounds, cell_ptr, out):  # pragma: no cover - compiled
    """Hc[0..K-1] of every node: ``out[cell_ptr[k] + j]`` = groups of node ``k`` of size ≤ j, j < K_k."""
    for k in range(len(bounds)):
        r, stop, acc = run_ptr[k], run_ptr[k + 1], 0
        for j in range(bounds[k]):
            while r < stop and sizes[r] <= j:
                acc += counts[r]
                r += 1
            out[cell_ptr[k] + j] = acc


@numba.njit(cache=True, nogil=True)
def hg_values(sizes, counts, start, stop, out):  # pragma: no cover - compiled
    """Entries ``start..stop-1`` of one node's sorted sizes (runs ``sizes``/``counts``) into ``out``."""
    r, before = 0, 0
    while r < len(counts) and before + counts[r] <= start:
        before += counts[r]
        r += 1
    i = start
    while i < stop:
        take = min(before + counts[r], stop) - i
        out[i - start : i - start + take] = sizes[r]
        i += take
        before += counts[r]
        r += 1


@numba.njit(cache=True, nogil=True)
def pava_push(values, block_sum, block_len, top):  # pragma: no cover - compiled
    """Feed ``values`` to the L2 pool-adjacent-violators stack; return the stack (grown if needed) and its top.

    Blocks are pooled while the previous block's mean is at least the new one's, so
    adjacent blocks always have strictly increasing means.  Means are compared by
    cross-multiplying the exact integer sums and lengths in float64 (no division):
    exact while the products stay below 2**53; beyond, only means equal to 16 digits
    can be misjudged, and pooling them or not moves no fitted size.  The last block
    is kept in registers while values pool into it (most values do, on sorted data).
    """
    if values.size == 0:
        return block_sum, block_len, top
    if top:
        top -= 1
        cs, cn = block_sum[top], block_len[top]
    else:
        cs, cn = np.int64(values[0]), np.int64(0)  # an empty block: the first value starts it
    for v in values:
        v = np.int64(v)
        if cn and np.float64(v) * cn > np.float64(cs):  # above the last block's mean: a new block
            if top == len(block_sum):
                block_sum = np.concatenate((block_sum, np.empty(max(len(block_sum), 1024), block_sum.dtype)))
                block_len = np.concatenate((block_len, np.empty(max(len(block_len), 1024), block_len.dtype)))
            block_sum[top] = cs
            block_len[top] = cn
            top += 1
            cs, cn = v, np.int64(1)
            continue
        if cn == 0:
            cs, cn = v, np.int64(1)
            continue
        cs += v
        cn += 1
        while top > 0 and np.float64(block_sum[top - 1]) * cn >= np.float64(cs) * block_len[top - 1]:
            top -= 1
            cs += block_sum[top]
            cn += block_len[top]
    if top == len(block_sum):
        block_sum = np.concatenate((block_sum, np.empty(max(len(block_sum), 1024), block_sum.dtype)))
        block_len = np.concatenate((block_len, np.empty(max(len(block_len), 1024), block_len.dtype)))
    block_sum[top] = cs
    block_len[top] = cn
    return block_sum, block_len, top + 1


@numba.njit(cache=True, nogil=True)
def _l1_fit(y):  # pragma: no cover - compiled
    """The L1 isotonic fit of whole numbers ``y`` (float64), as :func:`cocoviz.methods.isotonic.isotonic_l1`."""
    if y.size:
        lo, hi = y.min(), y.max()
        if hi - lo < 4 * y.size + 4096:
            top, done = slope_trick_counts(y, lo, int(hi - lo) + 1, 16 * y.size + 4096)
            if done:
                return backward(top)
    return slope_trick(y)


@numba.njit(cache=True, nogil=True)
def _blocks_of(x):  # pragma: no cover - compiled
    """Runs of equal values of ``x``: their values and lengths."""
    values = np.empty(x.size, np.float64)
    lengths = np.empty(x.size, np.int64)
    m = 0
    for i in range(x.size):
        if m and x[i] == values[m - 1]:
            lengths[m - 1] += 1
        else:
            values[m] = x[i]
            lengths[m] = 1
            m += 1
    return values[:m], lengths[:m]


@numba.njit(cache=True, nogil=True)
def hg_blocks_to_runs(values, lengths, numerator, out_sizes, out_counts, out_vars, at):  # pragma: no cover
    """Hg runs from isotonic blocks (``values`` increasing): clip at 0, round, variance ``numerator/|block|``.

    Blocks at or below 0 become one block at 0 (the clipped fit's run); adjacent runs of
    equal size and variance are combined.  Writes from ``out_*[at]``; returns the new end.
    """
    first = 0
    zero = 0
    while first < values.size and values[first] <= 0.0:
        zero += lengths[first]
        first += 1
    start = at
    for b in range(first - 1 if first else 0, values.size):
        if b == first - 1:
            size, length = np.int64(0), zero
        else:
            size, length = np.int64(np.rint(values[b])), lengths[b]
        variance = numerator / length
        if at > start and out_sizes[at - 1] == size and out_vars[at - 1] == variance:
            out_counts[at - 1] += length
        else:
            out_sizes[at], out_counts[at], out_vars[at] = size, length, variance
            at += 1
    return at


@numba.njit(cache=True, nogil=True)
def _pava_fit(noisy):  # pragma: no cover - compiled
    block_sum, block_len, top = pava_push(
        noisy, np.empty(min(noisy.size, 1024), np.int64), np.empty(min(noisy.size, 1024), np.int64), 0
    )
    return block_sum[:top] / block_len[:top], block_len[:top]


@numba.njit(cache=True, nogil=True)
def fit_hg_segments(noisy, ptr, p, numerator):  # pragma: no cover - compiled
    """Hg fits of every segment: ``(run_ptr, sizes, counts, variances)``; ``numerator`` = 2Δ²/ε².

    Under L2 one stack serves every segment (no allocation per node).
    """
    n_nodes = len(ptr) - 1
    out_sizes = np.empty(noisy.size, np.int64)
    out_counts = np.empty(noisy.size, np.int64)
    out_vars = np.empty(noisy.size, np.float64)
    run_ptr = np.zeros(n_nodes + 1, np.int64)
    block_sum = np.empty(1024, np.int64)
    block_len = np.empty(1024, np.int64)
    means = np.empty(1024, np.float64)
    at = 0
    for k in range(n_nodes):
        y = noisy[ptr[k] : ptr[k + 1]]
        if p == 2:
            block_sum, block_len, top = pava_push(y, block_sum, block_len, 0)
            if top > means.size:
                means = np.empty(block_sum.size, np.float64)
            for b in range(top):
                means[b] = block_sum[b] / block_len[b]
            at = hg_blocks_to_runs(means[:top], block_len[:top], numerator, out_sizes, out_counts, out_vars, at)
        else:
            values, lengths = _blocks_of(_l1_fit(y.astype(np.float64)))
            at = hg_blocks_to_runs(values, lengths, numerator, out_sizes, out_counts, out_vars, at)
        run_ptr[k + 1] = at
    return run_ptr, out_sizes[:at].copy(), out_counts[:at].copy(), out_vars[:at].copy()


@numba.njit(cache=True, nogil=True)
def fit_hc_segments(noisy, ptr, groups, p, numerator):  # pragma: no cover - compiled
    """Hc fits of every segment (Hc[0..K-1] of a node with G groups): ``(run_ptr, sizes, counts, variances)``.

    The fit is clipped into [0, G] and rounded (rounding is monotone, so it stays
    non-decreasing); ``Hc[K] = G``; each non-zero Ĥ[s] is a run with variance
    ``numerator / Ĥ[s]`` (``numerator`` = 4Δ²/ε²).
    """
    n_nodes = len(ptr) - 1
    out_sizes = np.empty(noisy.size + n_nodes, np.int64)
    out_counts = np.empty(noisy.size + n_nodes, np.int64)
    out_vars = np.empty(noisy.size + n_nodes, np.float64)
    run_ptr = np.zeros(n_nodes + 1, np.int64)
    at = 0
    for k in range(n_nodes):
        y = noisy[ptr[k] : ptr[k + 1]]
        if p == 2:
            means, lengths = _pava_fit(y)
            x = np.repeat(means, lengths)
        else:
            x = _l1_fit(y.astype(np.float64))
        g = groups[k]
        previous = np.int64(0)
        for s in range(y.size + 1):
            current = g if s == y.size else np.int64(np.rint(min(max(x[s], 0.0), g)))
            if current > previous:
                out_sizes[at], out_counts[at] = s, current - previous
                out_vars[at] = numerator / (current - previous)
                at += 1
            previous = current
        run_ptr[k + 1] = at
    return run_ptr, out_sizes[:at].copy(), out_counts[:at].copy(), out_vars[:at].copy()
