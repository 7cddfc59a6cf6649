"""The compiled loops of L1 isotonic regression (numba): the slope trick and its backward pass.

Imported on first use by :mod:`cocoviz.methods.isotonic`, so ``import cocoviz`` does not load numba.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["slope_trick", "integer_span", "backward", "slope_trick_counts"]


@numba.njit(cache=True, nogil=True)
def slope_trick(y: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
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
    return backward(top)


@numba.njit(cache=True, nogil=True)
def integer_span(y: np.ndarray) -> tuple[float, float, bool]:  # pragma: no cover - compiled
    """Minimum, maximum and whether every entry is a whole number."""
    lo, hi, whole = np.inf, -np.inf, True
    for v in y:
        if v != np.floor(v):
            whole = False
        lo = min(lo, v)
        hi = max(hi, v)
    return lo, hi, whole


@numba.njit(cache=True, nogil=True)
def backward(top: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """The optimal fit from the running maxima: ``x[i] = min(top[i], x[i+1])``."""
    n = top.shape[0]
    x = np.empty(n, np.float64)
    if n:
        x[n - 1] = top[n - 1]
        for i in range(n - 2, -1, -1):
            x[i] = top[i] if top[i] < x[i + 1] else x[i + 1]
    return x


@numba.njit(cache=True, nogil=True)
def slope_trick_counts(
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
