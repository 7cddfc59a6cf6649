"""The compiled loop of Algorithm 2 (numba): optimal matching of parent runs to child runs, per level.

Imported on first use by :mod:`cocoviz.consistency`, so ``import cocoviz`` does not load numba.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["match_level", "share"]

#: Products of group counts below this are formed directly; larger ones bit by bit (:func:`share`).
_PRODUCT_LIMIT = 2**62


@numba.njit(cache=True, nogil=True)
def _append(seg, n_seg, top, bottom, count):  # pragma: no cover - compiled
    """Store segment ``n_seg``, doubling the buffer when it is full."""
    if n_seg == seg.shape[1]:
        bigger = np.empty((3, 2 * seg.shape[1]), np.int64)
        bigger[:, :n_seg] = seg[:, :n_seg]
        seg = bigger
    seg[0, n_seg] = top
    seg[1, n_seg] = bottom
    seg[2, n_seg] = count
    return seg


@numba.njit(cache=True, nogil=True)
def share(n_top, need, n_bot):  # pragma: no cover - compiled
    """``(n_top * need) // n_bot`` and ``(n_top * need) % n_bot`` without forming the product.

    Exact for ``n_top, need >= 0`` and ``0 < n_bot <= 2**62`` whenever the
    quotient fits in int64.  Numba has no 128-bit integers, so when the product
    could pass 2**62 it is built from the bits of ``need`` (double and add),
    keeping a quotient and a remainder ``< n_bot``: no intermediate overflows.
    """
    if need == 0 or n_top <= _PRODUCT_LIMIT // need:
        product = n_top * need
        return product // n_bot, product % n_bot
    whole, part = n_top // n_bot, n_top % n_bot  # n_top = whole * n_bot + part
    quotient, remainder = 0, 0  # part * (bits of need so far)
    for bit in range(62, -1, -1):
        quotient *= 2
        remainder *= 2  # < 2 n_bot <= 2**63 - 2**62
        if remainder >= n_bot:
            remainder -= n_bot
            quotient += 1
        if (need >> bit) & 1:
            remainder += part  # < 2 n_bot
            if remainder >= n_bot:
                remainder -= n_bot
                quotient += 1
    return whole * need + quotient, remainder


@numba.njit(cache=True, nogil=True)
def match_level(
    top_ptr, top_sizes, top_counts, bot_ptr, bot_sizes, bot_counts, bot_child
):  # pragma: no cover - compiled
    """Algorithm 2 for every parent of a level at once.

    Parent k owns top runs ``top_ptr[k]:top_ptr[k+1]`` (sorted by size) and
    bottom runs ``bot_ptr[k]:bot_ptr[k+1]`` (its children's runs sorted by
    size, then child).  Returns segments ``(top run, bottom run, count)``.
    """
    seg = np.empty((3, 2 * (top_sizes.shape[0] + bot_sizes.shape[0]) + 16), np.int64)
    n_seg = 0
    trem = top_counts.copy()
    brem = bot_counts.copy()
    for k in range(top_ptr.shape[0] - 1):
        i, i_stop = top_ptr[k], top_ptr[k + 1]
        j, j_stop = bot_ptr[k], bot_ptr[k + 1]
        while True:
            while i < i_stop and trem[i] == 0:
                i += 1
            while j < j_stop and brem[j] == 0:
                j += 1
            if i == i_stop or j == j_stop:
                break
            # T: unmatched top groups of the smallest size; B: same at the bottom.
            t_size = top_sizes[i]
            i_end = i
            n_top = 0
            while i_end < i_stop and top_sizes[i_end] == t_size:
                n_top += trem[i_end]
                i_end += 1
            b_size = bot_sizes[j]
            j_end = j
            n_bot = 0
            while j_end < j_stop and bot_sizes[j_end] == b_size:
                n_bot += brem[j_end]
                j_end += 1
            if n_bot <= n_top:
                # Every group of B is matched now, to the first |B| groups of T.
                for jj in range(j, j_end):
                    while brem[jj] > 0:
                        while trem[i] == 0:
                            i += 1
                        m = min(brem[jj], trem[i])
                        seg = _append(seg, n_seg, i, jj, m)
                        n_seg += 1
                        brem[jj] -= m
                        trem[i] -= m
            else:
                # All of T is matched now; child c gets |T| n_c / |B| of it,
                # integerised by largest remainders (ties to the earlier child).
                # Within B the runs of one child are contiguous.
                kids_need = np.zeros(j_end - j, np.int64)
                n_kids = 0
                prev = -1
                for jj in range(j, j_end):
                    if brem[jj] == 0:
                        continue
                    if bot_child[jj] != prev:
                        prev = bot_child[jj]
                        n_kids += 1
                    kids_need[n_kids - 1] += brem[jj]
                kids_need = kids_need[:n_kids]
                # n_top * kids_need can pass 2**63 (billions of groups of one size): never form it.
                kids_share = np.empty(n_kids, np.int64)
                remainder = np.empty(n_kids, np.int64)
                for q in range(n_kids):
                    kids_share[q], remainder[q] = share(n_top, kids_need[q], n_bot)
                order = np.argsort(-remainder, kind="mergesort")
                for q in range(n_top - kids_share.sum()):
                    kids_share[order[q]] += 1
                q = -1
                prev = -1
                for jj in range(j, j_end):
                    if brem[jj] == 0:
                        continue
                    if bot_child[jj] != prev:
                        prev = bot_child[jj]
                        q += 1
                    while kids_share[q] > 0 and brem[jj] > 0:
                        while trem[i] == 0:
                            i += 1
                        m = min(kids_share[q], brem[jj], trem[i])
                        seg = _append(seg, n_seg, i, jj, m)
                        n_seg += 1
                        kids_share[q] -= m
                        brem[jj] -= m
                        trem[i] -= m
    return seg[0, :n_seg], seg[1, :n_seg], seg[2, :n_seg]
