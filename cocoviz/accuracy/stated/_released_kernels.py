"""Numba kernel of :mod:`cocoviz.accuracy.stated.released` (imported lazily: ``import cocoviz`` does not load numba)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def codes_within_blocks(block, key, width):  # pragma: no cover - compiled
    """Codes 0..g−1 of the distinct ``(block, key)`` pairs, ``block`` non-decreasing, ``0 ≤ key < width``.

    Numbered by block, then by each key's first appearance in its block (so in ``(block, key)`` order when the
    keys are sorted within each block).  One pass with a scratch table of ``width`` entries, reset after each
    block at the entries it touched: cost grows with the runs, not with ``width`` × blocks."""
    n = len(block)
    out = np.empty(n, np.int64)
    scratch = np.full(width, -1, np.int64)
    code = 0
    start = 0
    for i in range(n):
        if i > 0 and block[i] != block[i - 1]:
            for j in range(start, i):
                scratch[key[j]] = -1
            start = i
        c = scratch[key[i]]
        if c < 0:
            c = code
            scratch[key[i]] = c
            code += 1
        out[i] = c
    return out


@numba.njit(cache=True)
def union_stated_runs(node, up, sizes, counts, stated, unit, out):  # pragma: no cover - compiled
    """:func:`cocoviz.accuracy.stated.released.union_stated` in one pass per ancestor block (``up`` non-decreasing,
    ``node`` non-decreasing within it), written to ``out``: scratch tables by size, reset at the entries each
    block touched, so nothing of the runs' length is allocated beside ``out``."""
    n = len(sizes)
    width = 1
    for i in range(n):
        width = max(width, sizes[i] + 1)
    groups = np.zeros(width)
    linear = np.zeros(width)
    quadrature = np.zeros(width)
    own = np.zeros(width)
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and up[stop] == up[start]:
            stop += 1
        first = start  # the current node's first run
        for i in range(start, stop + 1):
            if i == stop or node[i] != node[first]:
                for j in range(first, i):  # flush the node: one count error per size
                    s = sizes[j]
                    if own[s] != 0.0 or stated[j] < unit:
                        quadrature[s] += own[s] * own[s]
                        own[s] = 0.0
                first = i
            if i == stop:
                break
            s = sizes[i]
            groups[s] += counts[i]
            misplaced = counts[i] * stated[i]
            if stated[i] < unit:
                own[s] += misplaced
            else:
                linear[s] += misplaced
        for i in range(start, stop):
            s = sizes[i]
            total = groups[s] if groups[s] > 0 else 1.0
            out[i] = (np.sqrt(quadrature[s]) + linear[s]) / total
        for i in range(start, stop):
            s = sizes[i]
            groups[s] = 0.0
            linear[s] = 0.0
            quadrature[s] = 0.0
        start = stop
