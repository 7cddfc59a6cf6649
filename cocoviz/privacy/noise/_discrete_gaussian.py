r"""The discrete Gaussian: its law and the secure sampler's exact, vectorised draw (Canonne, Kamath and Steinke 2020).

Sampled by rejection from the exact discrete Laplace over the same random words; each acceptance
exp(-(|Y| - σ²/t)² / (2σ²)) is decided exactly (a float with a 2**-30 margin, else integer bounds).
σ² is taken as an exact rational. The proof is in the documentation, ``docs/proofs/samplers.md``
("The exact samplers").

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
