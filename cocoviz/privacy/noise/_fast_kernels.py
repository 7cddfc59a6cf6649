"""The fast sampler's compiled core: keyed, counter-based double-geometric noise (numba).

Cell ``j`` of node ``node`` of measurement ``(level, query)`` draws its noise from
Philox4x32-10 (Salmon et al. 2011, "Parallel random numbers: as easy as 1, 2, 3",
the counter-based generator numpy ships as ``Philox``) at counter
``(j mod 2**32, node, level, query + 256 * (j // 2**32))`` under a 64-bit key
derived from the seed.  A cell's noise is therefore a pure function of (seed,
level, node, query, j): the same whether a node is drawn alone, within its whole
level, in chunks, on any number of threads or on another machine.

The word gives a uniform ``u`` in (0, 1) (its top 53 bits).  ``X = 0`` when
``u < P(X = 0) = (1-α)/(1+α)``; otherwise ``v = (u - P(0)) / (1 - P(0))`` is uniform on
[0, 1): its lower half gives a negative sign, its upper half a positive one, and the
half rescaled, ``w``, gives ``|X| - 1 = floor(-ln(w) · scale)``, geometric with
``P(≥ k) = exp(-k / scale) = α^k``.  So ``P(X = ±k) = (1-α)/(1+α) · α^k`` for k ≥ 1 (each
sign has half of ``1 - P(0) = 2α/(1+α)``, times ``(1-α) α^(k-1)``): the double-geometric
law, to the resolution of the word's bits, with one logarithm for the non-zero cells
only.  ``w`` is kept above 2**-53, so ``-ln(w)`` is at most 53 ln 2 < 36.8 and every
draw is an exact integer in float64 while ``37 · scale < 2**52`` (checked by the caller).

Imported on first use, so ``import cocoviz`` does not load numba.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["add_noise", "add_gaussian_noise", "add_gaussian_table_noise", "philox4x32"]

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = np.uint64(0x9E3779B9)
_W1 = np.uint64(0xBB67AE85)
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)
_UNIT = 2.0**-53


@numba.njit(cache=True, nogil=True)
def philox4x32(c0, c1, c2, c3, k0, k1):  # pragma: no cover - compiled
    """Philox4x32-10: four 32-bit words (held in uint64) from a 128-bit counter and a 64-bit key."""
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = ((p1 >> _SHIFT) ^ c1 ^ k0) & _LOW, p1 & _LOW, ((p0 >> _SHIFT) ^ c3 ^ k1) & _LOW, p0 & _LOW
        k0 = (k0 + _W0) & _LOW
        k1 = (k1 + _W1) & _LOW
    return c0, c1, c2, c3


@numba.njit(cache=True, nogil=True)
def _word_pair(pair, node, level, query, k0, k1):  # pragma: no cover - compiled
    """The 64-bit words of cells ``2 pair`` and ``2 pair + 1`` of a node: one Philox block."""
    x0, x1, x2, x3 = philox4x32(
        np.uint64(pair) & _LOW,
        np.uint64(node),
        np.uint64(level),
        np.uint64(query) + (np.uint64(pair) >> _SHIFT) * np.uint64(256),
        k0,
        k1,
    )
    return (x0 << _SHIFT) | x1, (x2 << _SHIFT) | x3


@numba.njit(cache=True, nogil=True)
def _noise_of(word, scale, p_zero, rest):  # pragma: no cover - compiled
    """Double-geometric noise from one uniform 64-bit word (see the module's docstring)."""
    u = (np.float64(np.int64(word >> np.uint64(11))) + 0.5) * _UNIT
    if u < p_zero:
        return np.int64(0)
    v = (u - p_zero) / rest  # uniform on [0, 1) given X != 0: its halves give the sign, then |X|
    w = 2.0 * v if v < 0.5 else 2.0 * v - 1.0
    magnitude = np.int64(1) + np.int64(np.floor(-np.log(max(w, _UNIT)) * scale))
    return -magnitude if v < 0.5 else magnitude


@numba.njit(cache=True, nogil=True)
def add_noise(values, ptr, first_node, offset, level, query, k0, k1, scale, lo, hi, out):  # pragma: no cover
    """``out[i] = values[i] + noise`` for cells ``lo <= i < hi`` of a run of segments.

    Segment ``s`` holds cells ``ptr[s]:ptr[s + 1]`` of node ``first_node + s``; the
    first segment's cells are that node's cells ``offset, offset + 1, ...`` (a node
    drawn in chunks), every other segment starts at the node's cell 0.
    """
    alpha = np.exp(-1.0 / scale)
    p_zero = (1.0 - alpha) / (1.0 + alpha)
    rest = 1.0 - p_zero
    seg = np.searchsorted(ptr, lo, side="right") - 1
    while seg < len(ptr) - 1 and ptr[seg] < hi:
        base = ptr[seg] - (offset if seg == 0 else 0)  # cell i is the node's cell i - base
        node = first_node + seg
        start = max(lo, ptr[seg])
        even = odd = np.uint64(0)
        for i in range(start, min(hi, ptr[seg + 1])):
            j = i - base
            if i == start or j % 2 == 0:
                even, odd = _word_pair(j // 2, node, level, query, k0, k1)
            out[i] = values[i] + _noise_of(odd if j % 2 else even, scale, p_zero, rest)
        seg += 1


_GAUSS = np.uint64(1) << np.uint64(31)  # the flag bit of the discrete Gaussian's counters
_ATTEMPT_SHIFT = np.uint64(12)
_ATTEMPT_MASK = np.uint64((1 << 19) - 1)


@numba.njit(cache=True, nogil=True)
def _gaussian_of(j, node, level, query, k0, k1, t, p_zero, rest, c, h):  # pragma: no cover - compiled
    """Discrete Gaussian noise of cell ``j``: Canonne-Kamath-Steinke's rejection, one Philox block per attempt.

    Attempt ``a`` reads the block at counter ``(j mod 2**32, node, level, query + 256 (j // 2**32)
    + 2**12 a + 2**31)``: its first word gives Y, discrete Laplace of scale t (as :func:`_noise_of`),
    its second a uniform V, and the attempt returns Y when ``V < exp(-(|Y| - c)² h)``, c = σ²/t,
    h = 1/(2σ²).  The flag 2**31 keeps these counters apart from the Laplace streams'.
    """
    high = (np.uint64(j) >> _SHIFT) * np.uint64(256)
    attempt = np.uint64(0)
    while True:
        x0, x1, x2, x3 = philox4x32(
            np.uint64(j) & _LOW,
            np.uint64(node),
            np.uint64(level),
            np.uint64(query) + high + ((attempt & _ATTEMPT_MASK) << _ATTEMPT_SHIFT) + _GAUSS,
            k0,
            k1,
        )
        y = _noise_of((x0 << _SHIFT) | x1, t, p_zero, rest)
        v = (np.float64(np.int64(((x2 << _SHIFT) | x3) >> np.uint64(11))) + 0.5) * _UNIT
        d = abs(np.float64(y)) - c
        if v < np.exp(-(d * d * h)):
            return y
        attempt += np.uint64(1)


@numba.njit(cache=True, nogil=True)
def add_gaussian_table_noise(
    values, ptr, first_node, offset, level, query, k0, k1, cdf, lo, hi, out
):  # pragma: no cover
    """As :func:`add_noise`, with discrete Gaussian noise by inversion of a table: ``cdf[m] = P(|X| <= m)``
    (its last entry above 1).

    Cells ``2p`` and ``2p + 1`` share the Philox block at counter ``(p, node, level, query + 2**31)``
    (the flag keeps it apart from the Laplace streams): a word's top 53 bits give u and |X| is the
    smallest m with ``cdf[m] > u``; its lowest bit, independent of u, gives the sign.
    """
    n = cdf.shape[0]
    flagged = np.uint64(query) + _GAUSS
    seg = np.searchsorted(ptr, lo, side="right") - 1
    while seg < len(ptr) - 1 and ptr[seg] < hi:
        base = ptr[seg] - (offset if seg == 0 else 0)
        node = first_node + seg
        start = max(lo, ptr[seg])
        even = odd = np.uint64(0)
        for i in range(start, min(hi, ptr[seg + 1])):
            j = i - base
            if i == start or j % 2 == 0:
                even, odd = _word_pair(j // 2, node, level, flagged, k0, k1)
            word = odd if j % 2 else even
            u = (np.float64(np.int64(word >> np.uint64(11))) + 0.5) * _UNIT
            a, b = 0, n - 1
            while a < b:
                mid = (a + b) >> 1
                if cdf[mid] > u:
                    b = mid
                else:
                    a = mid + 1
            out[i] = values[i] + (-a if word & np.uint64(1) else a)
        seg += 1


@numba.njit(cache=True, nogil=True)
def add_gaussian_noise(values, ptr, first_node, offset, level, query, k0, k1, sigma2, lo, hi, out):  # pragma: no cover
    """As :func:`add_noise`, with discrete Gaussian noise of variance parameter ``sigma2`` by rejection
    (for σ too large for :func:`add_gaussian_table_noise`'s table)."""
    t = np.floor(np.sqrt(sigma2)) + 1.0
    alpha = np.exp(-1.0 / t)
    p_zero = (1.0 - alpha) / (1.0 + alpha)
    rest = 1.0 - p_zero
    c = sigma2 / t
    h = 0.5 / sigma2
    seg = np.searchsorted(ptr, lo, side="right") - 1
    while seg < len(ptr) - 1 and ptr[seg] < hi:
        base = ptr[seg] - (offset if seg == 0 else 0)
        node = first_node + seg
        for i in range(max(lo, ptr[seg]), min(hi, ptr[seg + 1])):
            out[i] = values[i] + _gaussian_of(i - base, node, level, query, k0, k1, t, p_zero, rest, c, h)
        seg += 1
