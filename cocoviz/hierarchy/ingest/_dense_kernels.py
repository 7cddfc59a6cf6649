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

__all__ = ["EMPTY", "list_groups", "count_persons", "leaf_sizes"]

_GOLDEN = -7046029254386353131  # 0x9E3779B97F4A7C15 as an int64: 2**64 / the golden ratio, odd

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
def _slot(table_keys, key, bits):  # pragma: no cover - compiled
    """The slot of ``key`` in the open-addressing table of ``2**bits`` slots (linear probing), or of the empty
    slot it would take.  Fibonacci hashing: the product's high bits, which every bit of the key stirs."""
    mask = table_keys.shape[0] - 1
    h = ((key * _GOLDEN) >> (64 - bits)) & mask
    while table_keys[h] != EMPTY and table_keys[h] != key:
        h = (h + 1) & mask
    return h


@numba.njit(cache=True, nogil=True)
def leaf_sizes(state, small):  # pragma: no cover - compiled
    """Per leaf key of the groups some row set (``state``): its groups of each size below ``small`` (a row of
    ``small`` counts per leaf, leaves in no set order); and the leaf key and size of each larger group.

    Work proportional to the groups, memory to the leaves: a hash table of leaf keys, doubled when half full.
    """
    bits = 12
    capacity = 1 << bits
    table_keys = np.full(capacity, EMPTY, np.int64)
    table_counts = np.zeros((capacity, small), np.int64)
    leaves = 0
    large = 0
    for j in range(state.shape[0]):
        if state[j, 1] != EMPTY and state[j, 0] >= small:
            large += 1
    large_keys = np.empty(large, np.int64)
    large_sizes = np.empty(large, np.int64)
    large = 0
    for j in range(state.shape[0]):
        key = state[j, 1]
        if key == EMPTY:
            continue
        size = state[j, 0]
        if size >= small:
            large_keys[large] = key
            large_sizes[large] = size
            large += 1
            continue
        h = _slot(table_keys, key, bits)
        if table_keys[h] == EMPTY:
            if 2 * (leaves + 1) > capacity:
                old_keys, old_counts = table_keys, table_counts
                bits += 1
                capacity *= 2
                table_keys = np.full(capacity, EMPTY, np.int64)
                table_counts = np.zeros((capacity, small), np.int64)
                for s in range(old_keys.shape[0]):
                    if old_keys[s] != EMPTY:
                        t = _slot(table_keys, old_keys[s], bits)
                        table_keys[t] = old_keys[s]
                        table_counts[t] = old_counts[s]
                h = _slot(table_keys, key, bits)
            table_keys[h] = key
            leaves += 1
        table_counts[h, size] += 1
    keys = np.empty(leaves, np.int64)
    counts = np.empty((leaves, small), np.int64)
    r = 0
    for s in range(capacity):
        if table_keys[s] != EMPTY:
            keys[r] = table_keys[s]
            counts[r] = table_counts[s]
            r += 1
    return keys, counts, large_keys, large_sizes
