"""Whole per-cell tolerances of a noisy measurement, chosen from public facts only
(:mod:`cocoviz.accuracy.intervals.bands`).

:func:`half_width` is the smallest uniform ``a`` with ``P(|Z| ≤ a)^n ≥ c`` over ``n`` i.i.d. cells, from
the exact law (double-geometric under pure ε, discrete Gaussian under zCDP); :func:`half_widths` narrows
it to ``± (a - 1)`` with the fewest one-sided widenings by 1 that reach ``c`` (:class:`Widths`), so the
band's exact simultaneous confidence ``P(E)`` is the smallest such product at or above ``c``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cocoviz.errors import ParameterError
from cocoviz.privacy.noise import GaussianNoise

__all__ = [
    "SCOPES",
    "check_confidence",
    "check_scope",
    "node_confidence",
    "tail_probability",
    "half_width",
    "Widths",
    "half_widths",
]

#: What a band's confidence can be about (:mod:`cocoviz.accuracy.intervals.scope`).
SCOPES = ("node", "level")


def check_confidence(confidence: object) -> float:
    """``confidence`` as a float strictly between 0 and 1 (refused otherwise, named)."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating, np.integer)):
        raise ParameterError(f"confidence must be a number between 0 and 1, got {confidence!r}")
    value = float(confidence)
    if not 0 < value < 1:
        raise ParameterError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return value


def check_scope(scope: object) -> str:
    """``scope`` if it is one of :data:`SCOPES` (refused otherwise, named)."""
    if scope not in SCOPES:
        raise ParameterError(f"scope must be one of {', '.join(map(repr, SCOPES))}, got {scope!r}")
    return str(scope)


def node_confidence(confidence: float, scope: str, nodes: int) -> float:
    """The confidence each node's band is built for so that the statement holds at ``confidence`` over ``scope``:
    ``confidence`` itself per node, ``confidence^(1/nodes)`` for a level of ``nodes`` independent nodes.

    >>> node_confidence(0.81, "level", 2)
    0.9
    """
    confidence = check_confidence(confidence)
    if check_scope(scope) == "node" or nodes <= 1:
        return confidence
    return math.exp(math.log(confidence) / nodes)


def _gaussian_tails(sigma2: float, span: int) -> np.ndarray:
    """``P(|Z| > m)`` for m = 0..span of N_ℤ(0, σ²), summed from the small end (no cancellation)."""
    k = np.arange(span + 2, dtype=np.float64)
    w = np.exp(-(k * k) / (2 * sigma2))
    above = np.cumsum(w[::-1])[::-1]  # above[m] = Σ_{k ≥ m} w_k
    norm = w[0] + 2 * above[1]
    return 2 * above[1:] / norm


def _gaussian_span(sigma2: float, target: float) -> int:
    """A span past which the discrete Gaussian's tail is far below ``target`` (and the normaliser exact)."""
    sigma = math.sqrt(sigma2)
    return int(math.ceil(sigma * (math.sqrt(2 * math.log(4 / target)) + 4))) + 10


def tail_probability(noise: float | GaussianNoise, m: int | np.ndarray) -> np.ndarray | float:
    """``P(|Z| > m)`` of the noise: double-geometric of scale ``noise``, or a :class:`GaussianNoise`.

    Double-geometric: ``P(Z > m) = α^(m+1)/(1+α)`` summed from the pmf, α = exp(-1/scale).

    >>> round(float(tail_probability(1.0, 0)), 6), round(float(tail_probability(GaussianNoise(1.0), 0)), 4)
    (0.537883, 0.6011)
    """
    m = np.asarray(m, np.int64)
    if isinstance(noise, GaussianNoise):
        sigma2 = float(noise.sigma2)
        tails = _gaussian_tails(sigma2, max(int(m.max(initial=0)), _gaussian_span(sigma2, 1e-300)))
        return tails[m]
    log_alpha = -1.0 / float(noise)
    return np.exp(math.log(2) + (m + 1) * log_alpha - math.log1p(math.exp(log_alpha)))


def half_width(noise: float | GaussianNoise, cells: int, confidence: float) -> int:
    """The smallest whole ``a`` with ``P(|Z| ≤ a)^cells ≥ confidence``: all ``cells`` i.i.d. draws within ±a.

    >>> half_width(1.0, 100, 0.9), half_width(1.0, 1, 0.9)
    (7, 2)
    """
    confidence = check_confidence(confidence)
    if cells <= 0:
        return 0
    target = -math.expm1(math.log(confidence) / cells)  # the largest per-cell tail allowed

    def covers(a: int) -> bool:
        return cells * math.log1p(-float(tail_probability(noise, a))) >= math.log(confidence)

    if isinstance(noise, GaussianNoise):
        sigma2 = float(noise.sigma2)
        tails = _gaussian_tails(sigma2, _gaussian_span(sigma2, target))
        a = int(np.flatnonzero(tails <= target)[0])
    else:
        log_alpha = -1.0 / float(noise)
        # α^(a+1) ≤ target (1+α)/2, solved in logs, then checked against the exact law either side.
        a = max(int(math.ceil((math.log(target) + math.log1p(math.exp(log_alpha)) - math.log(2)) / log_alpha)) - 1, 0)
    while not covers(a):
        a += 1
    while a > 0 and covers(a - 1):
        a -= 1
    return a


@dataclass(frozen=True)
class Widths:
    """Whole per-cell tolerances of a node's ``cells`` noisy cells, chosen from public facts only.

    Cell ``i`` may be ``over[i] = base + (i ≥ cells - top)`` above the truth and ``under[i] = base +
    (i < bottom)`` below it: ``over`` non-decreasing and ``under`` non-increasing in ``i`` (module
    docstring: what keeps the band exact from the envelopes and the isotonic fit inside cell by cell).
    """

    cells: int
    base: int
    top: int = 0
    bottom: int = 0

    def over(self, i: np.ndarray) -> np.ndarray:
        """How far cell(s) ``i`` may lie above the truth (subtracted in the lower bound)."""
        return self.base + (np.asarray(i) >= self.cells - self.top)

    def under(self, i: np.ndarray) -> np.ndarray:
        """How far cell(s) ``i`` may lie below the truth (added in the upper bound)."""
        return self.base + (np.asarray(i) < self.bottom)

    @property
    def widest(self) -> int:
        """The largest tolerance of any cell, either side."""
        return self.base + (self.top > 0 or self.bottom > 0)

    def log_confidence(self, noise: float | GaussianNoise) -> float:
        """``log P(-under[i] ≤ Z_i ≤ over[i] for every i)``, from the exact law (cells independent)."""
        return _log_confidence(noise, self.cells, self.base, self.top + self.bottom)

    def confidence(self, noise: float | GaussianNoise) -> float:
        """``P(-under[i] ≤ Z_i ≤ over[i] for every i)``: the band's exact simultaneous coverage before clipping."""
        return math.exp(self.log_confidence(noise))


def _log_confidence(noise, cells: int, base: int, steps: int) -> float:
    """``log P(E)`` with ``steps`` one-sided widenings by 1 beyond ``±base``, on as few cells twice as
    possible: a cell widened on one side covers ``P(|Z| ≤ base) + P(Z = base + 1)``, on both ``P(|Z| ≤ base + 1)``
    (symmetric law), and ``(p₀ + q)² > p₀ (p₀ + 2q)``, so spreading the widenings is the better product."""
    t0, t1 = (float(v) for v in tail_probability(noise, np.array([base, base + 1])))
    one = math.log1p(-(t0 + t1) / 2)
    if steps <= cells:
        return (cells - steps) * math.log1p(-t0) + steps * one
    return (2 * cells - steps) * one + (steps - cells) * math.log1p(-t1)


def half_widths(noise: float | GaussianNoise, cells: int, confidence: float, *, first: str = "top") -> Widths:
    """The narrowest whole tolerances, from public facts only, with ``P(E) ≥ confidence``.

    ``a`` = :func:`half_width` is the smallest uniform one; its granularity overshoots (``P(E)`` of ``± a``
    is 0.9521 below against 0.90 asked).  So ``base = a - 1`` and the fewest one-sided
    widenings by 1 that bring ``P(E)`` to ``confidence``, each adding ``P(Z = a)`` to one cell's probability:
    on the ``over`` side of the top cells (``first="top"``) or the ``under`` side of the bottom cells
    (``"bottom"``), then the other.  The choice reads the cell count, the law and the confidence, never the
    noisy values, so ``P(E)`` is computed before the noise is drawn.

    >>> half_widths(1.0, 100, 0.9), half_width(1.0, 100, 0.9)
    (Widths(cells=100, base=6, top=67, bottom=0), 7)
    >>> round(half_widths(1.0, 100, 0.9).confidence(1.0), 4), round((1 - float(tail_probability(1.0, 7))) ** 100, 4)
    (0.9002, 0.9521)
    """
    if first not in ("top", "bottom", "even"):
        raise ValueError(f"first must be 'top', 'bottom' or 'even', got {first!r}")
    a = half_width(noise, cells, confidence)
    if a == 0:
        return Widths(max(cells, 0), 0)
    goal = math.log(confidence)
    lo, hi = 0, 2 * cells  # hi: every cell ± a, which covers by the choice of a
    while lo < hi:
        mid = (lo + hi) // 2
        if _log_confidence(noise, cells, a - 1, mid) >= goal:
            hi = mid
        else:
            lo = mid + 1
    if first == "even":
        return Widths(cells, a - 1, (lo + 1) // 2, lo // 2)
    one, both = min(lo, cells), max(lo - cells, 0)
    top, bottom = (one, both) if first == "top" else (both, one)
    return Widths(cells, a - 1, top, bottom)
