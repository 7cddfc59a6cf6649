"""The compiled pass of :func:`cocoviz.accuracy.stated.sharing.sharing_within` (numba): how many children of a
parent hold a run within a radius of a run's size.

Imported on first use by :mod:`cocoviz.accuracy.stated.sharing`, so ``import cocoviz`` does not load numba.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["children_within"]


@numba.njit(cache=True, nogil=True)
def children_within(bot_ptr, sizes, child, radius, n_children, cap):  # pragma: no cover - compiled
    """Per run (runs grouped by parent as ``bot_ptr`` says, sorted by size within a parent): the number of
    distinct children of its parent holding a run whose size is within ``radius`` of its own, at most ``cap``;
    0 where the radius is 0 (the caller counts those by size alone, in one linear pass).

    A window of runs is scanned once per run, stopping at ``cap`` children or all of the parent's: cost grows
    with runs times the runs within a radius, which is small where the radius is (the sparse tail).
    """
    n = sizes.shape[0]
    out = np.zeros(n, np.int64)
    stamp = np.full(n_children, -1, np.int64)
    for p in range(bot_ptr.shape[0] - 1):
        a, b = bot_ptr[p], bot_ptr[p + 1]
        if b - a < 2:
            continue
        # The parent's children, counted once: a window holding all of them is done (block groups: 2-4 blocks).
        children = 0
        for j in range(a, b):
            if stamp[child[j]] != -2 - p:
                stamp[child[j]] = -2 - p
                children += 1
        most = min(cap, children)
        for i in range(a, b):
            s, r = sizes[i], radius[i]
            if r <= 0:
                continue
            lo = a + np.searchsorted(sizes[a:b], s - r)
            count = 0
            j = lo
            while j < b and sizes[j] <= s + r and count < most:
                c = child[j]
                if stamp[c] != i:
                    stamp[c] = i
                    count += 1
                j += 1
            out[i] = max(count, 1)
    return out
