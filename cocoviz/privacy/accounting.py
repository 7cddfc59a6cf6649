"""Privacy accounting: pure ε-DP or ρ-zCDP, and the conversions between them.

A release is accounted either in pure ε (double-geometric noise, ε adds across levels) or in
ρ-zero-concentrated DP (discrete Gaussian noise, ρ adds across levels), as the 2020 Census
does.  The facts used (METHOD.md, each tested):

* the discrete Gaussian N_ℤ(0, σ²) on a query of L2 sensitivity Δ₂ is ρ-zCDP with
  ρ = Δ₂² / (2σ²) (Canonne, Kamath and Steinke 2020, Theorem 4), so σ² = Δ₂² / (2ρ);
* a pure ε-DP step (a noisy max, a selection) is (ε²/2)-zCDP (Bun and Steinke 2016, Prop. 1.4);
* ρ-zCDP gives (ε, δ)-DP for every δ > 0 with the ε of :func:`zcdp_epsilon`: Canonne, Kamath
  and Steinke's conversion (2020, Corollary 13), tighter than Bun and Steinke's
  ρ + 2√(ρ ln(1/δ)) (:func:`bun_steinke_epsilon`).

>>> round(zcdp_epsilon(0.5, 1e-10), 4), round(bun_steinke_epsilon(0.5, 1e-10), 4)
(6.8393, 7.2861)
>>> gaussian_sigma2(0.5, 1)  # σ² = Δ₂²/(2ρ), exactly
Fraction(1, 1)
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

from cocoviz.errors import BudgetError

__all__ = [
    "ACCOUNTING",
    "DEFAULT_DELTA",
    "RHO_RANGE",
    "check_rho",
    "check_delta",
    "rho_of_epsilon",
    "gaussian_sigma2",
    "zcdp_delta",
    "zcdp_epsilon",
    "zcdp_rho",
    "bun_steinke_epsilon",
]

#: The two accountings a plan may use.
ACCOUNTING = ("pure-ε", "zCDP")
#: The δ the (ε, δ) reading of a zCDP budget uses unless told otherwise: the 2020 Census's.
DEFAULT_DELTA = 1e-10
#: The ρ a single level may spend: below, the noise (σ up to ~700) protects nothing useful more; above, σ < 0.001.
RHO_RANGE = (1e-6, 1e6)


def check_rho(rho: float, what: str = "ρ") -> float:
    """``rho`` as a float, refusing anything but a real number in :data:`RHO_RANGE`.

    >>> check_rho(0.25)
    0.25
    """
    if isinstance(rho, bool) or not isinstance(rho, numbers.Real):
        raise BudgetError(f"{what} must be a real number, got {rho!r}")
    value = float(rho)
    lo, hi = RHO_RANGE
    if not (math.isfinite(value) and lo <= value <= hi):
        raise BudgetError(
            f"{what} must be between {lo:g} and {hi:g}, got {rho!r}" + (" (ρ must be > 0)" if not value > 0 else "")
        )
    return value


def check_delta(delta: float) -> float:
    """δ as a float in (0, 1)."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < float(delta) < 1:
        raise BudgetError(f"δ must be a number strictly between 0 and 1, got {delta!r}")
    return float(delta)


def rho_of_epsilon(epsilon: float) -> float:
    """ρ = ε²/2: the zCDP cost of a pure ε-DP step (Bun and Steinke 2016, Proposition 1.4)."""
    return epsilon * epsilon / 2


def gaussian_sigma2(rho: float, l2_sensitivity_squared: int) -> Fraction:
    """σ² = Δ₂² / (2ρ) as an exact rational (ρ a float is a dyadic rational): the noise is then exactly ρ-zCDP.

    ``l2_sensitivity_squared`` is Δ₂², a whole number for integer queries (1 for Hc and Hg, 2 for naive H).
    """
    return Fraction(int(l2_sensitivity_squared)) / (2 * Fraction(float(rho)))


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The smallest δ for which ρ-zCDP gives (ε, δ)-DP by Canonne, Kamath and Steinke's Corollary 13:

    δ = inf over α > 1 of exp((α-1)(αρ - ε)) / (α-1) · (1 - 1/α)^α,

    the infimum found by bisection on the derivative of its logarithm, which is increasing in α.
    """
    if epsilon < 0:
        raise BudgetError(f"ε must be >= 0, got {epsilon!r}")
    if rho == 0:
        return 0.0
    lo, hi = 1.0 + 1e-9, max((epsilon + 1) / (2 * rho) + 2, 2.0)
    for _ in range(200):
        alpha = (lo + hi) / 2
        derivative = (2 * alpha - 1) * rho - epsilon + math.log1p(-1 / alpha)
        was = lo, hi
        if derivative < 0:
            lo = alpha
        else:
            hi = alpha
        if (lo, hi) == was:  # a fixed point: the remaining steps would change nothing
            break
    alpha = (lo + hi) / 2
    log_delta = (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1 / alpha) - math.log(alpha - 1)
    return min(math.exp(log_delta), 1.0)


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The (ε, δ)-DP that ρ-zCDP gives at ``delta``, by the tightest standard conversion (CKS 2020, Corollary 13).

    The smallest ε with :func:`zcdp_delta` ``(ρ, ε) <= δ`` (bisection, returning the side that holds).
    """
    delta = check_delta(delta)
    if zcdp_delta(rho, 0.0) <= delta:
        return 0.0
    return _bisect(lambda eps: zcdp_delta(rho, eps) > delta, 0.0, bun_steinke_epsilon(rho, delta), 200)[1]


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ρ whose (ε, δ) reading (:func:`zcdp_epsilon`) is at most ``epsilon`` at ``delta`` (bisection).

    >>> rho = zcdp_rho(3.0, 1e-10)
    >>> zcdp_epsilon(rho, 1e-10) <= 3.0 < zcdp_epsilon(rho * 1.001, 1e-10)
    True
    """
    delta = check_delta(delta)
    hi = max(epsilon, 1.0)
    while zcdp_epsilon(hi, delta) <= epsilon:
        hi *= 2
    return _bisect(lambda rho: zcdp_epsilon(rho, delta) <= epsilon, 0.0, hi, 100)[0]


def _bisect(below, lo: float, hi: float, steps: int) -> tuple[float, float]:
    """``(lo, hi)`` narrowed ``steps`` times around the point where ``below`` turns from true to false.

    Stops early at a fixed point (``lo`` and ``hi`` adjacent floats, neither moving), where the remaining
    steps would change nothing: the result is the same as after all ``steps``.

    >>> _bisect(lambda x: x * x < 2, 1.0, 2.0, 1000)[0] == 2**0.5 - 2**-52
    True
    """
    for _ in range(steps):
        mid = (lo + hi) / 2
        was = lo, hi
        if below(mid):
            lo = mid
        else:
            hi = mid
        if (lo, hi) == was:
            break
    return lo, hi


def bun_steinke_epsilon(rho: float, delta: float) -> float:
    """ρ + 2√(ρ ln(1/δ)): Bun and Steinke's conversion (2016, Proposition 1.3), looser than :func:`zcdp_epsilon`."""
    return rho + 2 * math.sqrt(rho * math.log(1 / check_delta(delta)))
