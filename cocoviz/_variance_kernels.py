"""Numba kernel of :mod:`cocoviz.variances` (imported lazily: ``import cocoviz`` does not load numba)."""

from __future__ import annotations

import numba
import numpy as np

#: Ranks farther than this many Laplace scales contribute less than e^-40 of their gap².
WINDOW = 40.0


@numba.njit(cache=True, inline="always")
def _tail(x, b):  # pragma: no cover - compiled
    """∫ₓ^∞ P(δ > t) dt for x ≥ 0 (Laplace of scale b): (b/2) e^(−x/b); 0 at infinity."""
    return 0.5 * b * np.exp(-x / b)


@numba.njit(cache=True)
def hc_size_variances(ptr, sizes, counts, scale, floor):  # pragma: no cover - compiled
    """Per run, the plug-in mean squared size error under a rank shift of Laplace(``scale``) noise.

    ``ptr`` delimits each node's runs (sorted by size); ``floor`` is added to every variance.
    Two virtual runs take the ranks outside ``[0, G)``: size 0 below (the smallest size there is)
    and, above, the last size plus the last gap (its size for a node of one run; at least 1), so a node
    whose fit put all its groups at one size still states its doubt.
    """
    out = np.empty(sizes.size, np.float64)
    b = scale
    for node in range(ptr.size - 1):
        r0, r1 = ptr[node], ptr[node + 1]
        n = r1 - r0
        if n == 0:
            continue
        lo = np.empty(n + 2, np.float64)
        hi = np.empty(n + 2, np.float64)
        size = np.empty(n + 2, np.float64)
        acc = 0.0
        lo[0], hi[0], size[0] = -np.inf, 0.0, 0.0
        for j in range(n):
            lo[j + 1] = acc
            acc += counts[r0 + j]
            hi[j + 1] = acc
            size[j + 1] = sizes[r0 + j]
        last = size[n]
        lo[n + 1], hi[n + 1] = acc, np.inf
        size[n + 1] = last + max(last - size[n - 1] if n > 1 else last, 1.0)
        for j in range(1, n + 1):
            h = hi[j] - lo[j]
            total = 0.0
            # Runs above: P(r + δ ∈ [lo_k, hi_k)) averaged over r ∈ [lo_j, hi_j).
            for k in range(j + 1, n + 2):
                if lo[k] - hi[j] > WINDOW * b:
                    break
                upper = 0.0 if k == n + 1 else _tail(hi[k] - hi[j], b) - _tail(hi[k] - lo[j], b)
                p = (_tail(lo[k] - hi[j], b) - _tail(lo[k] - lo[j], b) - upper) / h
                d = size[k] - size[j]
                total += max(p, 0.0) * d * d
            for k in range(j - 1, -1, -1):
                if lo[j] - hi[k] > WINDOW * b:
                    break
                lower = 0.0 if k == 0 else _tail(lo[j] - lo[k], b) - _tail(hi[j] - lo[k], b)
                p = (_tail(lo[j] - hi[k], b) - _tail(hi[j] - hi[k], b) - lower) / h
                d = size[k] - size[j]
                total += max(p, 0.0) * d * d
            out[r0 + j - 1] = total + floor
    return out
