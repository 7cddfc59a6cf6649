"""The compiled check that every parent's runs are the sum of its children's (numba), for :mod:`cocoviz.release.verify`.

One pass over the children's runs, each finding its parent's run of its size by bisection within the
parent's few runs: no sort of the children's runs (29M at the blocks) and no (node, size) key that could
overflow.  Imported on first use, so ``import cocoviz`` does not load numba.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["sums_children"]


@numba.njit(cache=True, nogil=True)
def sums_children(above_ptr, above_sizes, above_counts, below_ptr, below_sizes, below_counts, parent):  # noqa: E501  # pragma: no cover
    """Whether every run of the parent level (sizes strictly increasing within a node, counts > 0) is the sum
    of its node's children's counts of that size, and no child has a count > 0 at a size its parent lacks.

    Sums wrap as int64 sums do, like :func:`~cocoviz.core.runs.aggregate_runs`'s; callers bound counts first.
    """
    acc = np.zeros(above_sizes.size, np.int64)
    for c in range(below_ptr.size - 1):
        p = parent[c]
        lo, hi = above_ptr[p], above_ptr[p + 1]
        for r in range(below_ptr[c], below_ptr[c + 1]):
            count = below_counts[r]
            if count == 0:
                continue
            size = below_sizes[r]
            a, b = lo, hi
            while a < b:
                m = (a + b) >> 1
                if above_sizes[m] < size:
                    a = m + 1
                else:
                    b = m
            if a == hi or above_sizes[a] != size:
                return False
            acc[a] += count
    for i in range(acc.size):
        if acc[i] != above_counts[i]:
            return False
    return True
