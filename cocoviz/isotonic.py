"""Isotonic regression under the L1 and L2 losses, with bounds and blocks.

``min sum_i |x_i - y_i|^p  subject to  lower <= x_1 <= ... <= x_n <= upper``

For p = 2 SciPy's pool-adjacent-violators (:func:`scipy.optimize.isotonic_regression`)
gives block means.  For p = 1 there is no SciPy function; :func:`isotonic_l1`
solves it exactly in O(n log n) with the "slope trick": a multiset holds the
breakpoints of the optimal cost as a function of the last value (each step
adds ``y_i`` and, on a violation, trades its maximum for ``y_i``), and a
backward pass recovers an optimal solution made of block medians (values of
``y`` itself, so integral data gives an integral fit).

The multiset is a max-heap in general.  The engine's inputs (noisy Hc and Hg)
are integers spanning a range not much larger than n, and for those a count
per value with a pointer at the maximum does the same work without the heap's
O(log n) sifts (about ten times faster on Hc with K = 100,000).  Its
downward scans are bounded by a step budget; an input that exhausts it
(e.g. values alternating between the ends of the range) falls back to the
heap.  Both track the same multiset, so the result is the same to the bit.

For any separable convex loss, clipping the unconstrained fit to
``[lower, upper]`` solves the bounded problem, so bounds cost nothing extra.

>>> isotonic(np.array([3., 1., 2., 5., 4.]), p=2)
array([2. , 2. , 2. , 4.5, 4.5])
>>> isotonic(np.array([3., 1., 2., 5., 4.]), p=1)  # one of several optima: [2, 2, 2, 4, 4] costs 3 too
array([1., 1., 2., 4., 4.])
"""

from __future__ import annotations

import numba
import numpy as np
from scipy.optimize import isotonic_regression

from cocoviz.errors import ParameterError

__all__ = ["isotonic", "isotonic_l1", "isotonic_l2", "block_sizes"]


@numba.njit(cache=True, nogil=True)
def _slope_trick(y: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    n = y.shape[0]
    heap = np.empty(n, np.float64)  # max-heap
    top = np.empty(n, np.float64)
    size = 0
    for i in range(n):
        v = y[i]
        # push v
        j = size
        size += 1
        while j > 0:
            parent = (j - 1) >> 1
            if heap[parent] >= v:
                break
            heap[j] = heap[parent]
            j = parent
        heap[j] = v
        # A violation: the best last value so far exceeds v, so the cheapest
        # fix moves that breakpoint down to v (replace the maximum by v).
        if heap[0] > v:
            j = 0
            while True:
                child = 2 * j + 1
                if child >= size:
                    break
                if child + 1 < size and heap[child + 1] > heap[child]:
                    child += 1
                if heap[child] <= v:
                    break
                heap[j] = heap[child]
                j = child
            heap[j] = v
        top[i] = heap[0]
    return _backward(top)


@numba.njit(cache=True, nogil=True)
def _integer_span(y: np.ndarray) -> tuple[float, float, bool]:  # pragma: no cover - compiled
    """Minimum, maximum and whether every entry is a whole number."""
    lo, hi, whole = np.inf, -np.inf, True
    for v in y:
        if v != np.floor(v):
            whole = False
        lo = min(lo, v)
        hi = max(hi, v)
    return lo, hi, whole


@numba.njit(cache=True, nogil=True)
def _backward(top: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """The optimal fit from the running maxima: ``x[i] = min(top[i], x[i+1])``."""
    n = top.shape[0]
    x = np.empty(n, np.float64)
    if n:
        x[n - 1] = top[n - 1]
        for i in range(n - 2, -1, -1):
            x[i] = top[i] if top[i] < x[i + 1] else x[i + 1]
    return x


@numba.njit(cache=True, nogil=True)
def _slope_trick_counts(
    y: np.ndarray, lo: float, width: int, max_steps: int
) -> tuple[np.ndarray, bool]:  # pragma: no cover - compiled
    """The slope trick on whole numbers in ``[lo, lo + width)``: a count per value and a pointer at the maximum.

    Returns ``(top, True)``, the running maxima, or ``(_, False)`` once the
    pointer's downward scans exceed ``max_steps`` in total.
    """
    n = y.shape[0]
    count = np.zeros(width, np.int64)
    top = np.empty(n, np.float64)
    peak = -1
    steps = 0
    for i in range(n):
        v = int(y[i] - lo)
        count[v] += 1
        if v > peak:
            peak = v
        elif v < peak:
            # A violation: trade one copy of the maximum for v.
            count[peak] -= 1
            count[v] += 1
            while count[peak] == 0:
                peak -= 1
                steps += 1
            if steps > max_steps:
                return top, False
        top[i] = peak + lo
    return top, True


def isotonic_l1(y: np.ndarray) -> np.ndarray:
    """Non-decreasing ``x`` minimising ``sum |x_i - y_i|`` (exact, O(n log n)).

    The minimiser is not unique when a block has an even number of points;
    this returns one whose values are all taken from ``y``.
    """
    integer_typed = np.issubdtype(np.asarray(y).dtype, np.integer)  # the engine's noisy counts: no scan needed
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.size:
        lo, hi, whole = (y.min(), y.max(), True) if integer_typed else _integer_span(y)
        if whole and hi - lo < 4 * y.size + 4096:
            top, done = _slope_trick_counts(y, lo, int(hi - lo) + 1, 16 * y.size + 4096)
            if done:
                return _backward(top)
    return _slope_trick(y)


def isotonic_l2(y: np.ndarray) -> np.ndarray:
    """Non-decreasing ``x`` minimising ``sum (x_i - y_i)^2`` (block means)."""
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:
        return y.copy()
    return isotonic_regression(y, increasing=True).x


def isotonic(y: np.ndarray, *, p: int, lower: float | None = None, upper: float | None = None) -> np.ndarray:
    """Bounded isotonic regression under the L``p`` loss, ``p`` in {1, 2}."""
    if p == 1:
        x = isotonic_l1(y)
    elif p == 2:
        x = isotonic_l2(y)
    else:
        raise ParameterError(f"p must be 1 or 2, got {p!r}")
    if lower is not None or upper is not None:
        np.clip(x, lower, upper, out=x)
    return x


def block_sizes(fit: np.ndarray) -> np.ndarray:
    """For every entry, the length of the run of equal fitted values holding it.

    These runs are the blocks (partitions) of the isotonic solution; their
    lengths |S_i| set the variance of a ranked estimate (METHOD.md).

    >>> block_sizes(np.array([1., 1., 2., 3., 3., 3.]))
    array([2, 2, 1, 3, 3, 3])
    """
    fit = np.asarray(fit)
    if fit.size == 0:
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate([[True], fit[1:] != fit[:-1]]))
    lengths = np.diff(np.append(starts, fit.size))
    return np.repeat(lengths, lengths)
