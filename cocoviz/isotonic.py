"""Isotonic regression under the L1 and L2 losses, with bounds and blocks.

``min sum_i |x_i - y_i|^p  subject to  lower <= x_1 <= ... <= x_n <= upper``

For p = 2 SciPy's pool-adjacent-violators (:func:`scipy.optimize.isotonic_regression`)
gives block means.  For p = 1 there is no SciPy function; :func:`isotonic_l1`
solves it exactly in O(n log n) with the "slope trick": a max-heap holds the
breakpoints of the optimal cost as a function of the last value, and a
backward pass recovers an optimal solution made of block medians (values of
``y`` itself, so integral data gives an integral fit).

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
    x = np.empty(n, np.float64)
    if n:
        x[n - 1] = top[n - 1]
        for i in range(n - 2, -1, -1):
            x[i] = top[i] if top[i] < x[i + 1] else x[i + 1]
    return x


def isotonic_l1(y: np.ndarray) -> np.ndarray:
    """Non-decreasing ``x`` minimising ``sum |x_i - y_i|`` (exact, O(n log n)).

    The minimiser is not unique when a block has an even number of points;
    this returns one whose values are all taken from ``y``.
    """
    return _slope_trick(np.ascontiguousarray(y, dtype=np.float64))


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
        raise ValueError(f"p must be 1 or 2, got {p!r}")
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
