"""Compiled kernel of GreedyH's objective: tr(W G⁻¹ Wᵀ) by a Cholesky factorisation, in one thread."""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def trace_inverse_form(gram, wt, floor):  # pragma: no cover - compiled
    """‖L⁻¹ Wᵀ‖²_F with G = L Lᵀ (= tr(W G⁻¹ Wᵀ)); inf when a pivot falls below ``floor`` (singular G)."""
    n = gram.shape[0]
    low = np.zeros((n, n))
    for j in range(n):
        s = gram[j, j]
        for k in range(j):
            s -= low[j, k] * low[j, k]
        if s <= floor * floor:
            return np.inf
        low[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            t = gram[i, j]
            for k in range(j):
                t -= low[i, k] * low[j, k]
            low[i, j] = t / low[j, j]
    total = 0.0
    m = wt.shape[1]
    y = np.zeros(n)
    for c in range(m):
        for i in range(n):
            t = wt[i, c]
            for k in range(i):
                t -= low[i, k] * y[k]
            y[i] = t / low[i, i]
            total += y[i] * y[i]
    return total
