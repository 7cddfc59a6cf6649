"""The compiled loop of the secure sampler (numba): Canonne, Kamath and Steinke's discrete Laplace.

Imported on first use by :mod:`cocoviz.privacy.noise._discrete_laplace`, which holds the algorithm's
statement, the proof that every decision here is exact, and the exact paths for the
cases this loop hands back.  Everything is integer arithmetic except one floating-point
comparison (the fast path of Bernoulli(exp(-U/t))), whose undecided cases are handed back.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["UNITS_PER_ATTEMPT", "PENDING_D", "PENDING_V", "X_LIMIT", "discrete_laplace_kernel"]

#: 32-bit units one attempt may read: U (one, or two when t >= 2**32), W for D, W for V, sign bits.
UNITS_PER_ATTEMPT = 5
#: Kinds of pending cells: Bernoulli(exp(-U/t)) undecided; V undecided (or U + tV too large for int64).
PENDING_D, PENDING_V = 1, 2

_MASK32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_TWO_M32 = 2.0**-32
#: U + tV must stay below this, so that it and Y = X // s (s capped to it) are exact in int64.
X_LIMIT = 2**62


@numba.njit(cache=True, inline="always")
def _mul128(a, b):  # pragma: no cover - compiled
    """(high, low) 64-bit halves of the 128-bit product of two uint64."""
    a_lo, a_hi = a & _MASK32, a >> _S32
    b_lo, b_hi = b & _MASK32, b >> _S32
    p0, p1, p2, p3 = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    mid = (p0 >> _S32) + (p1 & _MASK32) + (p2 & _MASK32)
    return p3 + (p1 >> _S32) + (p2 >> _S32) + (mid >> _S32), (p0 & _MASK32) | (mid << _S32)


@numba.njit(cache=True, nogil=True)
def discrete_laplace_kernel(
    values,
    out,
    start,
    t,
    s,
    s_shift,
    v_safe,
    lemire,
    p_table,
    thresholds,
    margin,
    v_slack,
    units,
    pos,
    bits,
    nbits,
    pending,
    npending,
):  # pragma: no cover - compiled
    """``out[i] = values[i] + Z`` for cells ``i = start, ...`` until the units or the pending slots run out.

    ``units`` are uniform 32-bit words.  An attempt reads at most :data:`UNITS_PER_ATTEMPT`
    of them and starts only when they are there, so an attempt is never cut short: cell
    ``i`` resumes, with the next buffer, at a new attempt, which is what the rejection loop
    does anyway.  Undecided cells are written to ``pending`` (cell, kind, U, the unit or V)
    and skipped.  ``p_table[u]`` is the float exp(-u/t) when t is small (else empty: computed
    here, as exp(-(u * (1/t)))).  ``Y = X >> s_shift`` when s is a power of two (``s_shift >= 0``), else
    ``X // s``; ``V <= v_safe`` guarantees ``U + tV < X_LIMIT``.  Returns
    ``(next cell, pos, bits, nbits, npending)``.
    """
    n = values.shape[0]
    nunits = units.shape[0]
    t_int = np.int64(t)
    inv_t = 1.0 / float(t_int)
    tabled = p_table.shape[0] > 0
    wide = t > _MASK32
    i = start
    while i < n:
        if pos + UNITS_PER_ATTEMPT > nunits or npending == pending.shape[0]:
            break
        # U uniform on {0, ..., t-1} by Lemire's multiply-shift: the high half of x*t for a
        # uniform x of 32 (or 64) bits, the low halves below 2**bits mod t rejected.
        if t == _ONE:
            u = _ZERO
        elif not wide:
            product = np.uint64(units[pos]) * t
            pos += 1
            if (product & _MASK32) < lemire:
                continue  # rejected: a new attempt draws U again, as Lemire's loop would
            u = product >> _S32
        else:
            hi, lo = _mul128((np.uint64(units[pos]) << _S32) | np.uint64(units[pos + 1]), t)
            pos += 2
            if lo < lemire:
                continue
            u = hi
        u_int = np.int64(u)
        # D ~ Bernoulli(exp(-U/t)) as [W < exp(-U/t)], W uniform with first 32 bits r.
        if u_int != 0:
            r = units[pos]
            pos += 1
            w = float(r) * _TWO_M32
            if tabled:
                p_lo = p_hi = p_table[u_int]
            else:  # the series' partial sums bracket exp(-γ): all but about 1 in 100 draws skip the exp
                gamma = float(u_int) * inv_t
                g2 = gamma * gamma
                p_lo = 1.0 - gamma + g2 * (0.5 - gamma * (1.0 / 6.0))
                p_hi = p_lo + g2 * g2 * (1.0 / 24.0)
                if p_lo - margin <= w < p_hi + margin:
                    p_lo = p_hi = math.exp(-gamma)
            if w >= p_hi + margin:
                continue  # D = 0: restart
            if not w < p_lo - margin:
                pending[npending, 0] = i
                pending[npending, 1] = PENDING_D
                pending[npending, 2] = u_int
                pending[npending, 3] = np.int64(r)
                npending += 1
                i += 1
                continue
        # V geometric, P(V >= k) = exp(-k), by inversion: V = #{k >= 1 : W < exp(-k)} with the
        # thresholds T_k = floor(exp(-k) 2**32): R < T_k means W < exp(-k), R > T_k means not.
        r = units[pos]
        pos += 1
        v = 0
        while r < thresholds[v]:
            v += 1
        if r - thresholds[v] <= v_slack or v > v_safe:  # R == T_{v+1} (or forced), or X too large
            pending[npending, 0] = i
            pending[npending, 1] = PENDING_V
            pending[npending, 2] = u_int
            pending[npending, 3] = np.int64(r)
            npending += 1
            i += 1
            continue
        x = u_int + t_int * v
        y = x >> s_shift if s_shift >= 0 else x // s
        if nbits == 0:
            bits = np.int64(units[pos])
            pos += 1
            nbits = 32
        b = bits & 1
        bits >>= 1
        nbits -= 1
        if b == 1:
            if y == 0:
                continue  # -0 is rejected, so that 0 is not counted twice
            y = -y
        out[i] = values[i] + y
        i += 1
    return i, pos, bits, nbits, npending
