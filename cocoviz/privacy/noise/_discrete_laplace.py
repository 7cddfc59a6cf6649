r"""The secure sampler's law and its exact, vectorised sampler (Canonne, Kamath and Steinke 2020).

The discrete Laplace law of scale ``t/s`` (whole t, s >= 1), P(Z = z) = (1 - α) / (1 + α) · α^|z| with
α = exp(-s/t): the geometric mechanism's noise at scale Δ/ε, the float ε taken at its exact rational value.
Algorithm 2 of Canonne, Kamath and Steinke, compiled over a whole array of uniform 32-bit units; every
Bernoulli decision is exact (a float comparison with a margin of 2**-30 where it settles the draw, else the
exact integer path of :mod:`cocoviz.privacy.noise._exact_exp`). The proof is in the documentation,
``docs/proofs/samplers.md`` ("The exact samplers").

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

#: The fast path's margin δ around the float exp(-u/t) (the proof: docs/proofs/samplers.md).
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
