r"""The secure sampler's law and its exact, vectorised sampler (Canonne, Kamath and Steinke 2020).

The discrete Laplace law of scale ``t/s`` (whole t, s >= 1) is

    P(Z = z) = (1 - α) / (1 + α) · α^|z|,   α = exp(-s/t),

the geometric mechanism's noise at scale Δ/ε.  A float ε (or scale) is a dyadic rational,
converted exactly (:func:`scale_ratio`), so the law sampled is exactly the one of the
float's value.  Algorithm 2 of Canonne, Kamath and Steinke ("The Discrete Gaussian for
Differential Privacy", NeurIPS 2020) samples it with integers only; one *attempt* is

1. U uniform on {0, ..., t-1};
2. D ~ Bernoulli(exp(-U/t)); if D = 0, restart;
3. V geometric with P(V >= k) = exp(-k); X = U + tV (then P(X = x) ∝ exp(-x/t));
4. Y = floor(X / s) (then P(Y = y) ∝ α^y);
5. B ~ Bernoulli(1/2); if B = 1 and Y = 0, restart; else return Z = (1 - 2B) Y.

Attempts are independent, so the result does not depend on where a batch of random bits
ends: the compiled loop (:mod:`cocoviz.privacy.noise._discrete_laplace_kernel`) reads uniform 32-bit
units, starts an attempt only when the buffer holds the 5 units an attempt may read, and
cell i resumes, with the next buffer, at a new attempt.

**Every decision is exact.**  Each Bernoulli is ``[W < p]`` for a uniform real W in [0, 1)
read from fresh units, which is 1 with probability exactly p; a decision is taken from W's
first 32 bits only when they settle it, else the cell is *pending* and is finished by the
exact integer path (:mod:`cocoviz.privacy.noise._exact_exp`: more bits of W, rigorous bounds of p).

* U: Lemire's multiply-shift, ``U = (x t) >> b`` for a uniform x of b = 32 bits (64 when
  t >= 2**32), with x rejected when ``(x t) mod 2**b < 2**b mod t``: each value of U keeps
  exactly ``floor(2**b / t)`` values of x.  A rejected x starts a new attempt, which is a
  redraw of U (nothing else was drawn yet).
* V: ``P(V >= k) = exp(-k)``, so ``V = #{k >= 1 : W < exp(-k)}``.  With the integers
  ``T_k = floor(exp(-k) 2**32)`` (computed exactly, :func:`cocoviz.privacy.noise._exact_exp.thresholds`) and
  R the unit (W in [R, R+1) / 2**32): ``R < T_k`` gives ``W < (R+1)/2**32 <= T_k/2**32 <= exp(-k)``;
  ``R > T_k`` gives ``W >= R/2**32 >= (T_k+1)/2**32 > exp(-k)`` (exp(-k) 2**32 is irrational).
  Only ``R = T_k`` is undecided (pending; probability 2**-32 per attempt).
* D, the one floating-point step: w = R 2**-32 (exact) and W in [w, w + 2**-32).  The loop
  takes floats ``p_lo`` and ``p_hi`` each within 2**-39 of a true lower and upper bound of
  p = exp(-γ), γ = u/t < 1: either both the float exp(-γ) (from a table of ``exp(-(u/t))``
  when t <= 4096, else libm's ``exp(-(u * (1/t)))`` when the next two bounds cannot settle
  the draw), or the series' partial sums ``1 - γ + γ²/2 - γ³/6 <= p <= that + γ⁴/24`` (its terms
  shrink for γ <= 1, so the sums alternate around p).  Errors: converting u and t and the
  arithmetic err by at most four roundings of 2**-53 relatively, below 2**-51 in γ, so below
  2**-51 in exp(-γ) and in the partial sums (their slopes are at most 1 in size), plus a few
  roundings of 2**-53 for the sums; and we assume only that exp (libm's, or numpy's for the
  table) errs by less than 2**-40 relatively (glibc and numpy document a few ulp, 2**-52 each).
  With the margin δ = 2**-30 and each float sum ``p_lo - δ``, ``p_hi + δ`` rounded by at most 2**-53:

  - ``w < p_lo - δ`` (computed) gives
    ``W < w + 2**-32 < p_lo - δ + 2**-53 + 2**-32 < p + 2**-39 - 2**-30 + 2**-53 + 2**-32 < p``: D = 1;
  - ``w >= p_hi + δ`` gives ``W >= w >= p_hi + δ - 2**-53 > p - 2**-39 + 2**-30 - 2**-53 > p``: D = 0;
  - otherwise (with ``p_lo = p_hi`` the float exp: probability below 2δ + 2**-32 < 2**-28 per
    attempt) the cell is pending, and the exact path compares W, extended by more bits, with
    integer bounds of exp(-u/t).

  So D = [W < p] in every case, whatever the floats' rounding, and P(D = 1) = p exactly.
  Tests force the pending path with a large margin and check the law still holds.
* B: one fresh bit.  When V > ``v_safe`` (U + tV could pass 2**62: astronomically rare unless
  t is huge) the cell is pending too and is finished with Python integers; a sum beyond
  int64 is refused.

>>> import randomgen
>>> out = add_noise(np.zeros(5, np.int64), 2.0, randomgen.AESCounter(seed=0))
>>> out.dtype, out.shape
(dtype('int64'), (5,))
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from cocoviz.errors import BudgetError, ParameterError
from cocoviz.privacy.noise._discrete_laplace_kernel import (
    PENDING_D,
    PENDING_V,
    UNITS_PER_ATTEMPT,
    X_LIMIT,
    discrete_laplace_kernel,
)
from cocoviz.privacy.noise._exact_exp import LazyUniform, thresholds, uniform_below

__all__ = ["MARGIN", "scale_ratio", "add_noise", "exact_sample"]

#: The fast path's margin δ around the float exp(-u/t) (see the proof above).
MARGIN = 2.0**-30
_THRESHOLDS = np.array(thresholds(32, bits=32), np.uint32)  # T_1 .. T_32; zero from T_23 on, ending the scan
_CHUNK_WORDS = 1 << 17  # 1 MiB of random words per refill: memory stays bounded whatever the cells
_PENDING_SLOTS = 256
_TABLE = 1 << 12  # for t up to this, the floats exp(-u/t) are a table


def scale_ratio(scale: float | numbers.Rational) -> tuple[int, int]:
    """``(t, s)`` with ``t / s`` exactly the scale's value (a float is a dyadic rational).

    >>> scale_ratio(0.5), scale_ratio(1000.0), scale_ratio(Fraction(2, 3))
    ((1, 2), (1000, 1), (2, 3))
    """
    if isinstance(scale, bool):
        raise ParameterError(f"noise scale must be a positive number, got {scale!r}")
    if isinstance(scale, numbers.Rational):
        ratio = Fraction(int(scale.numerator), int(scale.denominator))
    elif isinstance(scale, numbers.Real) and np.isfinite(float(scale)):
        ratio = Fraction(float(scale))  # exact: every float is a dyadic rational
    else:
        raise ParameterError(f"noise scale must be a positive finite number, got {scale!r}")
    if ratio <= 0:
        raise ParameterError(f"noise scale must be > 0, got {scale!r}")
    if ratio.numerator >= X_LIMIT:
        raise BudgetError(f"noise of scale {float(ratio):g} is too large to add exactly")
    return ratio.numerator, ratio.denominator


def _words(bitgen) -> Callable[[], int]:
    return lambda: int(bitgen.random_raw())


def _geometric(w: LazyUniform, k: int) -> int:
    """V = #{j >= 1 : W < exp(-j)} given that it is at least ``k - 1``: the exact inversion."""
    while w.below_exp(Fraction(k)):
        k += 1
    return k - 1


def _sign_and_finish(t: int, s: int, u: int, v: int, more: Callable[[], int]) -> int | None:
    """Steps 4-5 with Python integers; None when the attempt is rejected (B = 1, Y = 0)."""
    y = (u + t * v) // s
    if more() & 1:
        return None if y == 0 else -y
    return y


def _from_v(t: int, s: int, u: int, r: int, more: Callable[[], int]) -> int | None:
    """Steps 3-5 given U = u and V's first word r (the compiled loop's scan, then exactly)."""
    v = int(np.count_nonzero(r < _THRESHOLDS.astype(np.int64)))  # sure: R < T_k means W < exp(-k)
    v = _geometric(LazyUniform(more, r, 32), v + 1)
    return _sign_and_finish(t, s, u, v, more)


def exact_sample(t: int, s: int, more: Callable[[], int]) -> int:
    """One draw of the discrete Laplace of scale t/s by the exact integer path alone (slow)."""
    while True:
        u = uniform_below(t, more)
        if u and not LazyUniform(more).below_exp(Fraction(u, t)):
            continue
        z = _sign_and_finish(t, s, u, _geometric(LazyUniform(more), 1), more)
        if z is not None:
            return z


def _finish_pending(t: int, s: int, kind: int, u: int, word: int, more: Callable[[], int]) -> int:
    """The noise of a cell the compiled loop left undecided, continued exactly from where it stopped."""
    if kind == PENDING_D:
        z = _from_v(t, s, u, more() >> 32, more) if LazyUniform(more, word, 32).below_exp(Fraction(u, t)) else None
    elif kind == PENDING_V:
        z = _from_v(t, s, u, word, more)
    else:  # pragma: no cover - the kernel writes only these kinds
        raise AssertionError(kind)
    return exact_sample(t, s, more) if z is None else z  # a rejected attempt: a new one


def add_noise(
    values: np.ndarray,
    scale: float | numbers.Rational,
    bitgen,
    out: np.ndarray | None = None,
    *,
    margin: float = MARGIN,
    v_slack: int = 0,
) -> np.ndarray:
    """``values`` plus discrete Laplace noise of ``scale``, exactly, from the words of ``bitgen``.

    Parameters
    ----------
    values : whole numbers below 2**62 in magnitude (converted to int64)
    scale : t/s, a float (taken at its exact value) or a rational
    bitgen : a randomgen / numpy bit generator with ``random_raw``; the caller keys it
    out : an int64 buffer of ``values``' size to write into (a new one if None)
    margin, v_slack : widen the undecided zones of the fast paths (tests force the exact path
        with them; any value gives the same law, only slower)

    Returns
    -------
    int64 array of ``values``' shape.
    """
    t, s = scale_ratio(scale)
    values = np.asarray(values)
    shape = values.shape
    flat = np.ascontiguousarray(values, np.int64).ravel()
    if flat.size and not -X_LIMIT < int(flat.min()) <= int(flat.max()) < X_LIMIT:  # no temporary array
        raise ParameterError("values to add noise to must be below 2**62 in magnitude")
    result = np.empty(flat.size, np.int64) if out is None else out.reshape(-1)
    if result.dtype != np.int64 or result.size != flat.size or not result.flags.c_contiguous:
        raise ParameterError(f"out must be a contiguous int64 buffer of {flat.size} cells")
    lemire = np.uint64((2 ** (32 if t < 2**32 else 64) - t) % t)
    s_capped = min(s, X_LIMIT)  # X < 2**62 <= s gives Y = 0 either way
    s_shift = s_capped.bit_length() - 1 if s_capped & (s_capped - 1) == 0 else -1
    more = _words(bitgen)
    pending = np.empty((_PENDING_SLOTS, 4), np.int64)
    units = np.empty(0, np.uint32)
    i, pos, bits, nbits = 0, 0, 0, 0
    v_safe = (X_LIMIT - t) // t  # V <= v_safe keeps U + tV below 2**62
    p_table = np.exp(-(np.arange(t) / t)) if t <= _TABLE else np.empty(0)
    while i < flat.size:
        if pos + UNITS_PER_ATTEMPT > units.size:
            units, pos = bitgen.random_raw(_CHUNK_WORDS).view(np.uint32), 0  # unread units are simply dropped
        i, pos, bits, nbits, npending = discrete_laplace_kernel(
            flat, result, i, np.uint64(t), s_capped, s_shift, v_safe, lemire, p_table, _THRESHOLDS, float(margin),
            np.uint32(v_slack), units, pos, bits, nbits, pending, 0,
        )  # fmt: skip
        for cell, kind, u, word in pending[:npending].tolist():
            total = int(flat[cell]) + _finish_pending(t, s, kind, u, word, more)
            if not -(2**63) <= total < 2**63:
                raise BudgetError(f"noise of scale {float(Fraction(t, s)):g} is too large to add exactly")
            result[cell] = total
    return result.reshape(shape)
