"""Compiled envelopes of noisy answers (numba): per node, the running maximum from the left and the
running minimum from the right, as steps (first cell of each new value, the value).

Both are non-decreasing step functions of the cell index, with few steps wherever the truth is flat
(a running maximum of noise over a flat stretch of m cells changes about ln m times), so a level's
envelopes are small beside its noisy answers.  Imported on first use (:mod:`cocoviz.accuracy.intervals.bands`).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["segment_envelopes"]


@numba.njit(cache=True, nogil=True)
def _envelopes(values, ptr, up_ptr, up_at, up_value, down_ptr, down_at, down_value, write):  # pragma: no cover
    """One pass over every segment; with ``write`` False it only counts the steps (to size the outputs)."""
    u = 0
    d = 0
    for k in range(len(ptr) - 1):
        lo, hi = ptr[k], ptr[k + 1]
        if hi > lo:
            run = values[lo]
            if write:
                up_at[u] = 0
                up_value[u] = run
            u += 1
            for i in range(lo + 1, hi):
                if values[i] > run:
                    run = values[i]
                    if write:
                        up_at[u] = i - lo
                        up_value[u] = run
                    u += 1
            first = d
            run = values[hi - 1]
            for i in range(hi - 2, lo - 1, -1):
                if values[i] < run:  # min over cells > i is ``run``: its step starts at i + 1
                    if write:
                        down_at[d] = i + 1 - lo
                        down_value[d] = run
                    d += 1
                    run = values[i]
            if write:
                down_at[d] = 0
                down_value[d] = run
            d += 1
            if write:
                down_at[first:d] = down_at[first:d][::-1].copy()
                down_value[first:d] = down_value[first:d][::-1].copy()
        up_ptr[k + 1] = u
        down_ptr[k + 1] = d
    return u, d


def segment_envelopes(values: np.ndarray, ptr: np.ndarray) -> tuple[np.ndarray, ...]:
    """Steps of every segment's running max from the left and running min from the right.

    Returns ``(up_ptr, up_at, up_value, down_ptr, down_at, down_value)``: node ``k``'s running max
    takes the value ``up_value[r]`` from its cell ``up_at[r]`` on, for ``r`` in ``up_ptr[k]:up_ptr[k+1]``.
    Two passes (count, then write), so the outputs take only the steps' memory, not the cells'.
    """
    values = np.ascontiguousarray(values, np.int64)
    ptr = np.ascontiguousarray(ptr, np.int64)
    nodes = len(ptr) - 1
    up_ptr, down_ptr = np.zeros(nodes + 1, np.int64), np.zeros(nodes + 1, np.int64)
    none = np.zeros(0, np.int64)
    u, d = _envelopes(values, ptr, up_ptr, none, none, down_ptr, none, none, False)
    up_at, up_value, down_at, down_value = (np.empty(n, np.int64) for n in (u, u, d, d))
    _envelopes(values, ptr, up_ptr, up_at, up_value, down_ptr, down_at, down_value, True)
    return up_ptr, up_at, up_value, down_ptr, down_at, down_value
