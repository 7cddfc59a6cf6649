r"""The discrete Gaussian: its law and the secure sampler's exact, vectorised draw (Canonne, Kamath and Steinke 2020).

The discrete Gaussian of variance parameter σ² (a positive rational; a float is taken at its
exact value) is

    P(X = x) = exp(-x² / (2σ²)) / Σ_y exp(-y² / (2σ²)),   x ∈ ℤ.

Adding it to every cell of an integer query of L2 sensitivity Δ₂ is ρ-zCDP with
ρ = Δ₂² / (2σ²) (their Theorem 4).  Their Algorithm 3 draws it by rejection: with
t = ⌊σ⌋ + 1, one *attempt* is

1. Y from the discrete Laplace of scale t (``P(Y = y) ∝ exp(-|y|/t)``);
2. C ~ Bernoulli(exp(-γ)), γ = (|Y| - σ²/t)² / (2σ²); return Y if C = 1, else a new attempt.

Attempts are independent and identically distributed, so they can be run for many cells at
once: :func:`add_noise` draws step 1 for every unfinished cell with the exact discrete
Laplace sampler (:func:`cocoviz.privacy.noise._discrete_laplace.add_noise`, integer arithmetic, its
own proof), then step 2 for all of them, and repeats for the cells whose attempt was
rejected (about a third or fewer).  Every attempt reads fresh random words.

**Step 2 is exact.**  C = [W < exp(-γ)] for a uniform real W in [0, 1) whose first 32 bits
are a fresh unit R (W ∈ [w, w + 2**-32), w = R 2**-32), which is 1 with probability exactly
exp(-γ).  The float p = exp(-γ_f) is computed from floats: |Y| (exact below 2**53, else one
rounding), c = σ²/t and h = 1/(2σ²) (each correctly rounded from the exact rationals), then
d = |Y| - c, γ_f = d · d · h.  With u = 2**-53, |Y| ≤ |d| + c and c < σ (t > σ), the absolute
error of d is at most 3u(|d| + 2c) and that of γ_f at most 4uγ + 3.1u(2γ + 2√(2γ)) < 2**-47 (1 + γ);
so |exp(-γ_f) - exp(-γ)| < 2**-46 · sup (1 + γ) exp(-γ) < 2**-45, and with exp's own error
(assumed below 2**-40 relatively, as in the Laplace sampler) p is within 2**-39 of exp(-γ).
With the margin δ = 2**-30, ``w < p - δ`` gives W < w + 2**-32 < exp(-γ) (C = 1) and
``w >= p + δ`` gives W >= exp(-γ) (C = 0); anything else (probability below 2**-28 per attempt)
is decided exactly: W is extended by more bits and compared with integer bounds of exp(-γ),
γ the exact rational (:class:`cocoviz.privacy.noise._exact_exp.LazyUniform`).

>>> import randomgen
>>> out = add_noise(np.zeros(5, np.int64), 4.0, randomgen.AESCounter(seed=0))
>>> out.dtype, out.shape
(dtype('int64'), (5,))
>>> sigma2_ratio(0.5), scale_of(Fraction(9, 4))  # σ² = 1/2 exactly; σ² = 9/4 gives t = ⌊3/2⌋ + 1
((1, 2), 2)
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from cocoviz.errors import BudgetError, ParameterError
from cocoviz.privacy.noise import _discrete_laplace
from cocoviz.privacy.noise._discrete_laplace import MARGIN
from cocoviz.privacy.noise._discrete_laplace_kernel import X_LIMIT
from cocoviz.privacy.noise._exact_exp import LazyUniform

__all__ = [
    "sigma2_ratio",
    "scale_of",
    "add_noise",
    "exact_sample",
]

_CHUNK = 1 << 18  # cells per round of attempts: the temporaries stay a few MiB whatever the cells
_TWO_M32 = 2.0**-32


def sigma2_ratio(sigma2: float | numbers.Rational) -> tuple[int, int]:
    """``(p, q)`` with ``p / q`` exactly σ² (a float is a dyadic rational).

    >>> sigma2_ratio(2.0), sigma2_ratio(Fraction(1, 3))
    ((2, 1), (1, 3))
    """
    if isinstance(sigma2, bool):
        raise ParameterError(f"σ² must be a positive number, got {sigma2!r}")
    if isinstance(sigma2, numbers.Rational):
        ratio = Fraction(int(sigma2.numerator), int(sigma2.denominator))
    elif isinstance(sigma2, numbers.Real) and math.isfinite(float(sigma2)):
        ratio = Fraction(float(sigma2))
    else:
        raise ParameterError(f"σ² must be a positive finite number, got {sigma2!r}")
    if ratio <= 0:
        raise ParameterError(f"σ² must be > 0, got {sigma2!r}")
    if ratio >= Fraction(X_LIMIT) ** 2 // 64:
        raise ParameterError(f"σ² = {float(ratio):g} is too large to add noise exactly")
    return ratio.numerator, ratio.denominator


def scale_of(sigma2: float | numbers.Rational) -> int:
    """t = ⌊σ⌋ + 1, the discrete Laplace scale of the rejection sampler (``isqrt`` of ⌊σ²⌋ is ⌊σ⌋)."""
    p, q = sigma2_ratio(sigma2)
    return math.isqrt(p // q) + 1


def _gamma(y: int, p: int, q: int, t: int) -> Fraction:
    """γ = (|y| - σ²/t)² / (2σ²), exactly."""
    sigma2 = Fraction(p, q)
    return (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)


def exact_sample(sigma2: float | numbers.Rational, more) -> int:
    """One draw of the discrete Gaussian by the exact integer path alone (slow): ``more()`` gives 64 bits."""
    p, q = sigma2_ratio(sigma2)
    t = math.isqrt(p // q) + 1
    while True:
        y = _discrete_laplace.exact_sample(t, 1, more)
        if LazyUniform(more).below_exp(_gamma(y, p, q, t)):
            return y


def add_noise(
    values: np.ndarray,
    sigma2: float | numbers.Rational,
    bitgen,
    out: np.ndarray | None = None,
    *,
    margin: float = MARGIN,
) -> np.ndarray:
    """``values`` plus discrete Gaussian noise of variance parameter ``sigma2``, exactly, from ``bitgen``'s words.

    Parameters
    ----------
    values : whole numbers below 2**62 in magnitude (converted to int64)
    sigma2 : σ², a float (taken at its exact value) or a rational
    bitgen : a randomgen / numpy bit generator with ``random_raw``; the caller keys it
    out : an int64 buffer of ``values``' size to write into (a new one if None)
    margin : widens the undecided zone of step 2 (tests force the exact path with it; any
        value gives the same law, only slower)
    """
    p, q = sigma2_ratio(sigma2)
    t = math.isqrt(p // q) + 1
    c = float(Fraction(p, q * t))  # σ²/t, correctly rounded
    h = float(Fraction(q, 2 * p))  # 1/(2σ²), correctly rounded
    values = np.asarray(values)
    shape = values.shape
    flat = np.ascontiguousarray(values, np.int64).ravel()
    if flat.size and not -X_LIMIT < int(flat.min()) <= int(flat.max()) < X_LIMIT:
        raise ParameterError("values to add noise to must be below 2**62 in magnitude")
    result = np.empty(flat.size, np.int64) if out is None else out.reshape(-1)
    if result.dtype != np.int64 or result.size != flat.size or not result.flags.c_contiguous:
        raise ParameterError(f"out must be a contiguous int64 buffer of {flat.size} cells")

    def more() -> int:
        return int(bitgen.random_raw())

    for start in range(0, flat.size, _CHUNK):
        todo = np.arange(start, min(start + _CHUNK, flat.size))
        while todo.size:
            y = _discrete_laplace.add_noise(np.zeros(todo.size, np.int64), t, bitgen)
            if int(np.abs(y).max()) >= X_LIMIT:
                raise BudgetError(f"noise of σ² = {float(Fraction(p, q)):g} is too large to add exactly")
            units = bitgen.random_raw((todo.size + 1) // 2).view(np.uint32)[: todo.size]
            w = units * _TWO_M32
            d = np.abs(y).astype(np.float64) - c
            prob = np.exp(-(d * d * h))
            accept = w < prob - margin
            undecided = np.flatnonzero(~accept & ~(w >= prob + margin))
            for k in undecided.tolist():
                gamma = _gamma(int(y[k]), p, q, t)
                accept[k] = LazyUniform(more, int(units[k]), 32).below_exp(gamma)
            done = todo[accept]
            result[done] = flat[done] + y[accept]  # both below 2**62 in magnitude: no overflow
            todo = todo[~accept]
    return result.reshape(shape)
