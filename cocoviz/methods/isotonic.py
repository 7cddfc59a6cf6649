"""Isotonic regression under the L1 and L2 losses, with bounds and blocks.

``min sum_i |x_i - y_i|^p  subject to  lower <= x_1 <= ... <= x_n <= upper``

p = 2: SciPy's pool-adjacent-violators (:func:`scipy.optimize.isotonic_regression`), block means.
p = 1: :func:`isotonic_l1`, exact in O(n log n) by the "slope trick" (a multiset of the optimal cost's
breakpoints; a backward pass gives block medians, values of ``y`` itself, so integral data gives an integral
fit), with a count-per-value fast path for integer inputs that falls back to the heap. Clipping the
unconstrained fit to ``[lower, upper]`` solves the bounded problem for any separable convex loss. The
argument is in the documentation, ``docs/proofs/l1-slope-trick.md`` ("The L1 slope trick").
"""

from __future__ import annotations

import numpy as np

from cocoviz.errors import ParameterError

__all__ = ["isotonic", "isotonic_l1", "isotonic_l2", "block_sizes"]


def isotonic_l1(y: np.ndarray) -> np.ndarray:
    """Non-decreasing ``x`` minimising ``sum |x_i - y_i|`` (exact, O(n log n)).

    The minimiser is not unique when a block has an even number of points;
    this returns one whose values are all taken from ``y``.
    """
    from cocoviz.methods._isotonic_kernels import backward, integer_span, slope_trick, slope_trick_counts

    integer_typed = np.issubdtype(np.asarray(y).dtype, np.integer)  # the engine's noisy counts: no scan needed
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.size:
        lo, hi, whole = (y.min(), y.max(), True) if integer_typed else integer_span(y)
        if whole and hi - lo < 4 * y.size + 4096:
            top, done = slope_trick_counts(y, lo, int(hi - lo) + 1, 16 * y.size + 4096)
            if done:
                return backward(top)
    return slope_trick(y)


def isotonic_l2(y: np.ndarray) -> np.ndarray:
    """Non-decreasing ``x`` minimising ``sum (x_i - y_i)^2`` (block means)."""
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:
        return y.copy()
    from scipy.optimize import isotonic_regression  # deferred: SciPy's import is the heavy part of cocoviz's

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
