"""Exact comparisons of a uniform real with exp(-γ), in integer arithmetic only.

The secure sampler's decisions are all of the form "is W < exp(-γ)?" for a uniform real
W in [0, 1) and a rational γ >= 0: a Bernoulli(exp(-γ)) draw.  W is never held whole: it
is its binary expansion, read 64 bits at a time from a bit source only while its known
prefix cannot settle the comparison (a *lazy* uniform).  exp(-γ) is bracketed by integer
bounds from its alternating Taylor series, tightened as the prefix grows.  As W = exp(-γ)
has probability 0, the loop ends with probability 1, and its answer is exactly [W < exp(-γ)].

These are the slow, exact paths: the compiled sampler decides almost every comparison
from 32 random bits and hands the rest here (see :mod:`cocoviz.privacy.noise._discrete_laplace`).

>>> lo, hi = exp_neg_bounds(Fraction(1), 40)  # exp(-1) * 2**40 lies in [lo, hi]
>>> hi - lo, abs(lo / 2**40 - math.exp(-1)) < 1e-12
(1, True)
>>> thresholds(3)  # floor(exp(-k) * 2**64) for k = 1, 2, 3
[6786177901268885274, 2496495334008788799, 918409308362266468]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

__all__ = ["exp_neg_bounds", "thresholds", "LazyUniform", "uniform_below"]


def _exp_neg_unit(num: int, den: int, bits: int) -> tuple[int, int]:
    """Integers ``lo <= exp(-num/den) * 2**bits <= hi`` for ``0 <= num/den <= 1``.

    The series Σ (-x)^k / k! has terms decreasing in size when x <= 1, so its partial sums
    alternate around exp(-x): a sum ending on an odd term is below it, and adding the next
    term (at most that odd term in size) goes above it.  Term k, ``a_k = x^k / k! * 2**bits``,
    is carried in fixed point rounded down, ``t_k = floor(t_{k-1} * x / k)``, and stays in
    ``(a_k - 2, a_k]``: true for k <= 1, and if ``t_{k-1} > a_{k-1} - 2`` then
    ``t_{k-1} x / k > a_k - 2x/k >= a_k - 1`` for k >= 2, minus less than 1 for the floor.
    So ``t_k`` is a lower bound of the term and ``t_k + 2`` an upper bound.
    """
    one = 1 << bits
    lo = hi = one  # the partial sum's bounds; k = 0 is exact
    term = one
    k = 0
    while True:
        k += 1
        term = term * num // (den * k)
        if k % 2:  # odd terms are subtracted
            lo -= term + 2
            hi -= term
            if term <= 2:  # exp(-x) lies between this partial sum and it plus a_{k+1} <= a_k < term + 2
                return max(lo, 0), min(hi + term + 2, one)
        else:
            lo += term
            hi += term + 2


def exp_neg_bounds(gamma: Fraction, bits: int) -> tuple[int, int]:
    """Integers ``lo <= exp(-γ) * 2**bits <= hi`` for a rational γ >= 0, with ``hi - lo`` small.

    γ = n + f with n whole and f in [0, 1): exp(-γ) = exp(-1)^n · exp(-f), each factor
    bracketed by :func:`_exp_neg_unit` and the product rounded outwards (down for the
    lower bound, up for the upper), with ``n.bit_length() + 16`` guard bits so that the
    width stays a few units of 2**-bits.
    """
    if gamma < 0:
        raise ValueError(f"γ must be >= 0, got {gamma}")
    n = math.floor(gamma)
    f = gamma - n
    if n > bits:  # exp(-γ) < 2**-1.44n: below one unit
        return 0, 1
    guard = n.bit_length() + 16
    work = bits + guard
    lo, hi = _exp_neg_unit(f.numerator, f.denominator, work)
    if n:
        one_lo, one_hi = _exp_neg_unit(1, 1, work)
        p_lo, p_hi = 1 << work, 1 << work
        for _ in range(n):
            p_lo = p_lo * one_lo >> work
            p_hi = -(-p_hi * one_hi >> work)
        lo = lo * p_lo >> work
        hi = -(-hi * p_hi >> work)
    return lo >> guard, -(-hi >> guard)


def thresholds(count: int, bits: int = 64) -> list[int]:
    """``floor(exp(-k) * 2**bits)`` for k = 1 .. count, exactly (bounds tightened until the floors agree)."""
    out = []
    for k in range(1, count + 1):
        extra = 8
        while True:
            lo, hi = exp_neg_bounds(Fraction(k), bits + extra)
            if lo >> extra == hi >> extra:
                out.append(lo >> extra)
                break
            extra *= 2
    return out


class LazyUniform:
    """A uniform real W in [0, 1) known by its first ``nbits`` binary digits ``prefix``.

    ``more()`` must return 64 fresh uniform bits as an int; they are appended to the prefix
    only when a comparison needs them.  The same W serves any number of comparisons, which
    is what inversion (one W against exp(-1), exp(-2), ...) needs.
    """

    def __init__(self, more: Callable[[], int], prefix: int = 0, nbits: int = 0):
        self.more = more
        self.prefix = prefix
        self.nbits = nbits

    def below_exp(self, gamma: Fraction) -> bool:
        """Exactly ``[W < exp(-γ)]``; reads more bits of W until the answer is certain."""
        while True:
            bits = self.nbits + 24
            lo, hi = exp_neg_bounds(gamma, bits)
            w_lo = self.prefix << 24  # W * 2**bits lies in [w_lo, w_lo + 2**24)
            if w_lo + (1 << 24) <= lo:
                return True
            if w_lo >= hi:
                return False
            self.prefix = self.prefix << 64 | self.more()
            self.nbits += 64


def uniform_below(t: int, more: Callable[[], int]) -> int:
    """A uniform integer in [0, t) by rejection: ``t.bit_length()`` fresh bits, redrawn when >= t."""
    k = t.bit_length()
    while True:
        x, got = 0, 0
        while got < k:
            x = x << 64 | more()
            got += 64
        x >>= got - k
        if x < t:
            return x
