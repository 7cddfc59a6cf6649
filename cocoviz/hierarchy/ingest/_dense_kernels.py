"""The compiled loops of :mod:`cocoviz.hierarchy.ingest.dense` (numba): rows into a table indexed by group id.

``state`` has one row per group id of the pass (``id - low``): column 0 its persons, column 1 its leaf key
(:data:`EMPTY` until a row sets it).  Both columns of a group share a cache line, so a row in a shuffled file
costs one scattered access.  Each loop returns False at the first row that is not a clean count (an id out of
the pass's range, a negative key, a group listed twice, a person whose group is not listed or lies in another
leaf, a group in two leaves): the caller then counts everything again in SQL, where each problem is named
with its rows.  Imported on first use, so ``import cocoviz`` does not load numba.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["EMPTY", "list_groups", "count_persons", "compact"]

#: The key of a group no row has set yet: below every leaf key (keys are mixed-radix digits, >= 0).
EMPTY = -1


@numba.njit(cache=True, nogil=True)
def list_groups(ids, keys, low, state):  # pragma: no cover - compiled
    """The public groups table's rows: each group's leaf key; False if an id is listed twice or is off range."""
    n = state.shape[0]
    for i in range(ids.shape[0]):
        j = ids[i] - low
        k = keys[i]
        if j < 0 or j >= n or k < 0 or state[j, 1] != EMPTY:
            return False
        state[j, 1] = k
    return True


@numba.njit(cache=True, nogil=True)
def count_persons(ids, keys, low, state, listed):  # pragma: no cover - compiled
    """The persons' rows: each group's count, and its leaf key set by its first row (``listed``: by the groups
    table, which every person must then match); False at a row that breaks that or is off range."""
    n = state.shape[0]
    for i in range(ids.shape[0]):
        j = ids[i] - low
        k = keys[i]
        if j < 0 or j >= n or k < 0:
            return False
        if state[j, 1] != k:
            if listed or state[j, 1] != EMPTY:
                return False
            state[j, 1] = k
        state[j, 0] += 1
    return True


@numba.njit(cache=True, nogil=True)
def compact(state):  # pragma: no cover - compiled
    """The leaf key and size of every group some row set, as two contiguous arrays, in id order."""
    used = 0
    for j in range(state.shape[0]):
        if state[j, 1] != EMPTY:
            used += 1
    keys = np.empty(used, np.int64)
    sizes = np.empty(used, np.int64)
    r = 0
    for j in range(state.shape[0]):
        if state[j, 1] != EMPTY:
            keys[r] = state[j, 1]
            sizes[r] = state[j, 0]
            r += 1
    return keys, sizes
