"""Numba kernel of :mod:`cocoviz.released_stated` (imported lazily: ``import cocoviz`` does not load numba)."""

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
