"""Chen and Zhou's recursive mechanism, as Wu et al. use it: a private truncation threshold τ.

Chen and Zhou (SIGMOD 2013, "Recursive Mechanism") answer a *monotone* query q over a set P of
participants (``q(P') ≤ q(P)`` for ``P' ⊆ P``) in two parts.

1. **The threshold Δ̂.**  With ``LS(P') = max_{p ∈ P'} (q(P') − q(P' ∖ {p}))`` the sensitivity of q
   at P', the sequence ``G(j) = min_{P' ⊆ P, |P'| = j} LS(P')`` is the least sensitivity left
   after removing ``|P| − j`` participants.  For a parameter β > 0 the index
   ``i* = min{i ≥ 0 : ln G(|P| − i) < β·i}`` (the fewest removals after which the sensitivity is
   below ``e^{β i}``) is released with Laplace noise and turned into
   ``Δ̂ = exp(β·(i* + noise) + shift)``.
2. **The answer.**  ``X(P) = min_{P' ⊆ P} q(P') + |P ∖ P'|·Δ̂`` (the sequence H of the lowest q
   over subsets of each size, each removal charged Δ̂) has sensitivity Δ̂ and is released with
   noise of scale Δ̂/ε.

Wu et al. (Appendix A.5) show that for a sum query ``q(P') = Σ_{p ∈ P'} w_p`` (``w_p ≥ 0``) part 2
*is* truncation at τ = Δ̂ — the minimum keeps every ``w_p ≤ Δ̂`` and charges Δ̂ for the others, so
``X = Σ_p min(w_p, Δ̂)`` (:func:`lower_sum`, checked against the subset definition by brute force)
— and so they use part 1 alone to choose τ.  That is what :func:`recursive_tau` does.

**For a sum query the sequence G is the sorted weights.**  ``LS(P') = max_{p ∈ P'} w_p``, and the
least maximum over subsets of size ``|P| − i`` removes the i largest: with the weights sorted
``v_1 ≥ v_2 ≥ … ≥ v_n ≥ 0`` and ``v_{n+1} = 0``, ``G(n − i) = v_{i+1}`` and

    i* = min{ i ∈ {0, …, n} : v_{i+1} < e^{β i} }        (:func:`recursive_index`).

A *record* is one group, its weight the group's size (Wu's tuple); our histogram ``h[s]`` counts
the records of weight s.

**Privacy.**  i* moves by at most one between neighbours under either relation, so
``ĩ = i* + X`` with X double-geometric of scale 1/ε is ε-DP (our exact integer form of the
Laplace noise on i*), and τ, a function of ĩ and public parameters, is too.

* *Records* (Wu's: one group added or removed).  Adding a record of weight x to P inserts x into
  the sorted list: ``v'_k ≥ v_k`` and ``v'_{k+1} ≤ v_k`` for every k.  For ``i < i*(P)``,
  ``v'_{i+1} ≥ v_{i+1} ≥ e^{β i}``, so ``i*(P') ≥ i*(P)``; and
  ``v'_{i*+2} ≤ v_{i*+1} < e^{β i*} < e^{β(i*+1)}``, so ``i*(P') ≤ i*(P) + 1``.
* *Persons* (ours: one group's size ± 1, the groups public).  Moving the last (first) weight of a
  run of equal weights down (up) by one changes the sorted list at one position k only and keeps
  it sorted.  The predicate ``A(i): v_{i+1} < e^{β i}`` is monotone in i (``v`` falls, ``e^{β i}``
  rises) before and after, and only ``A(k − 1)`` can change; if it does, both first-true indices
  lie in ``{k − 1, k}``.  So ``|i*(P') − i*(P)| ≤ 1``.

:func:`recursive_tau_pmf` gives τ's exact law, which the tests use to check the ratio ``≤ e^ε`` on
every neighbour of small data under both relations, and the sampler against.

The threshold's ε counts: whatever is measured with τ spends its own budget on top.

The parameters (β = 0.1, shift = 1) are ours: the copy of Wu's paper we hold has lost its
symbols.  The shift follows the threshold step of the R2T authors' implementation of the
mechanism (it lifts Δ̂ above the sensitivity after i* removals); β sets the grid ``e^{β i}`` and
so the trade between truncation (small Δ̂) and noise (large Δ̂).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cocoviz.core.memory import check_cells
from cocoviz.errors import ParameterError
from cocoviz.privacy.budget import PERSONS, Charge
from cocoviz.privacy.noise import check_epsilon

__all__ = [
    "RecursiveChoice",
    "recursive_index",
    "recursive_grid",
    "recursive_tau",
    "recursive_tau_pmf",
    "lower_sum",
    "RELATIONS",
]

#: The neighbour relations τ is private under (its index moves by at most one under each).
RELATIONS = {
    "record": "records: one group (record) added or removed",
    "person": PERSONS,
}


@dataclass(frozen=True)
class RecursiveChoice:
    """A private threshold: ``tau``, the noisy index ĩ it came from, Δ̂ before rounding, and the charge."""

    tau: int
    index: int
    delta: float
    charges: tuple[Charge, ...]


def _weights(h: object) -> np.ndarray:
    h = np.asarray(h)
    if h.ndim != 1 or h.dtype.kind not in "iu" or np.any(h < 0):
        raise ParameterError("h must be a 1-D histogram of whole numbers ≥ 0 (h[s] records of weight s)")
    return h.astype(np.int64)


def _check(beta: float, shift: float, ceiling: int) -> None:
    if not (isinstance(beta, (int, float)) and 0 < beta < math.inf):
        raise ParameterError(f"the recursive mechanism needs β > 0, got {beta!r}")
    if not (isinstance(shift, (int, float)) and math.isfinite(shift)):
        raise ParameterError(f"the shift must be a finite number, got {shift!r}")
    if isinstance(ceiling, bool) or not isinstance(ceiling, (int, np.integer)) or ceiling < 1:
        raise ParameterError(f"the ceiling must be a whole number ≥ 1, got {ceiling!r}")


def recursive_index(h: object, beta: float = 0.1) -> int:
    """``i* = min{i : v_{i+1} < e^{β i}}`` over the weights sorted down (``v_{n+1} = 0``).

    Only the i largest weights matter, and ``v_{i+1} ≥ e^{β i}`` needs ``e^{β i}`` at most the
    largest weight, so the scan stops after ``ln(max)/β + 1`` steps.

    >>> recursive_index(np.bincount([1, 1, 2, 9, 40]), beta=1.0)    # 40 ≥ e⁰, 9 ≥ e¹, 2 < e²
    2
    >>> recursive_index(np.zeros(3, np.int64)), recursive_index(np.array([0, 4]))
    (0, 1)
    """
    h = _weights(h)
    _check(beta, 0.0, 1)
    sizes = np.flatnonzero(h)
    if sizes.size == 0 or sizes[-1] == 0:
        return 0
    steps = int(math.log(float(sizes[-1])) / beta) + 2
    top = np.repeat(sizes[::-1], np.minimum(h[sizes[::-1]], steps))[:steps]  # v_1 ≥ v_2 ≥ … (the largest few)
    i = np.arange(top.size)
    below = np.flatnonzero(top < np.exp(beta * i))
    return int(below[0]) if below.size else int(top.size)


def _tau_of(index: np.ndarray, beta: float, shift: float, ceiling: int) -> np.ndarray:
    """τ = ⌊exp(β·ĩ + shift)⌋ clipped to 1..ceiling (a public function of ĩ)."""
    x = np.minimum(beta * np.asarray(index, np.float64) + shift, math.log(ceiling) + 1.0)
    return np.clip(np.floor(np.exp(x)), 1, ceiling).astype(np.int64)


def _span(beta: float, shift: float, ceiling: int) -> tuple[int, int]:
    """Indices ĩ ≤ lo all give τ = 1 and ĩ ≥ hi all give the ceiling."""
    lo = math.floor(-shift / beta) - 1
    hi = math.ceil((math.log(ceiling) + 1 - shift) / beta) + 1
    check_cells(hi - lo + 1, "the recursive mechanism's grid of thresholds", "give a larger β")
    return lo, hi


def recursive_grid(beta: float = 0.1, shift: float = 1.0, ceiling: int = 1 << 16) -> np.ndarray:
    """Every value τ can take (public: it depends on the parameters only), increasing.

    >>> recursive_grid(1.0, 1.0, 20).tolist()
    [1, 2, 7, 20]
    """
    _check(beta, shift, ceiling)
    lo, hi = _span(beta, shift, ceiling)
    return np.unique(_tau_of(np.arange(lo, hi + 1), beta, shift, ceiling))


def recursive_tau(
    h: object,
    epsilon: float,
    sampler,
    *,
    beta: float = 0.1,
    shift: float = 1.0,
    ceiling: int = 1 << 16,
    neighbours: str = "record",
    key: Sequence[int] = (0,),
    level: int = 0,
    node: tuple = (),
) -> RecursiveChoice:
    """Chen and Zhou's threshold Δ̂ as Wu's truncation τ: ``⌊exp(β·(i* + X) + shift)⌋``, X ~ DG(1/ε).

    Parameters
    ----------
    h : the histogram of record weights (h[s] records — groups — of weight s)
    epsilon : the threshold's budget (ε-DP under ``neighbours``)
    sampler : a :class:`~cocoviz.privacy.noise.FastSampler` or ``SecureSampler``
    beta, shift : the grid ``e^{β i}`` and the lift of Δ̂ (see the module)
    ceiling : the largest τ (public)
    neighbours : ``"record"`` (Wu's) or ``"person"`` (ours); i* moves by at most one under either
    key : the noise stream's key

    Returns
    -------
    RecursiveChoice, with one charge (sensitivity 1 of i*, its ε, the relation)

    Examples
    --------
    >>> from cocoviz.privacy.noise import FastSampler
    >>> h = np.bincount([1] * 60 + [2] * 30 + [5] * 9 + [40])
    >>> recursive_index(h, 0.5), recursive_tau(h, 1e6, FastSampler(0), beta=0.5).tau   # ε huge: ⌊e^{0.5·4 + 1}⌋
    (4, 20)
    """
    h = _weights(h)
    epsilon = check_epsilon(epsilon)
    _check(beta, shift, ceiling)
    if neighbours not in RELATIONS:
        raise ParameterError(f"neighbours must be one of {sorted(RELATIONS)}, got {neighbours!r}")
    i_star = recursive_index(h, beta)
    noisy = int(sampler.draw(np.array([i_star]), 1.0 / epsilon, tuple(key))[0])
    delta = math.exp(min(beta * noisy + shift, 700.0))
    charge = Charge(
        level,
        node,
        "recursive mechanism: removals i* to bring the largest record below e^{βi}",
        1,
        1,
        epsilon,
        relation=RELATIONS[neighbours],
    )
    return RecursiveChoice(int(_tau_of(np.array([noisy]), beta, shift, ceiling)[0]), noisy, delta, (charge,))


def recursive_tau_pmf(
    h: object,
    epsilon: float,
    *,
    beta: float = 0.1,
    shift: float = 1.0,
    ceiling: int = 1 << 16,
) -> np.ndarray:
    """The exact law of :func:`recursive_tau`'s τ over :func:`recursive_grid` (the same parameters).

    ĩ − i* is double-geometric with ``P(X ≤ k) = 1 − α^{k+1}/(1+α)`` (k ≥ 0), ``α^{|k|}/(1+α)`` (k < 0),
    ``α = e^{−ε}``; the tails beyond the grid's ends go to τ = 1 and to the ceiling exactly.

    >>> p = recursive_tau_pmf(np.bincount([1, 1, 2, 9, 40]), 1.0, beta=1.0, ceiling=20)
    >>> round(float(p.sum()), 12), int(p.argmax())         # i* = 2: τ = ⌊e³⌋ capped at 20, grid [1, 2, 7, 20]
    (1.0, 3)
    """
    h = _weights(h)
    epsilon = check_epsilon(epsilon)
    _check(beta, shift, ceiling)
    lo, hi = _span(beta, shift, ceiling)
    i_star = recursive_index(h, beta)
    alpha = math.exp(-epsilon)
    k = np.arange(lo, hi + 1) - i_star  # noise values that land on ĩ = lo..hi

    def cdf(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.float64)
        return np.where(x >= 0, 1 - alpha ** (np.abs(x) + 1) / (1 + alpha), alpha ** np.abs(x) / (1 + alpha))

    mass = cdf(k) - cdf(k - 1)
    mass[0] = cdf(k[:1])[0]  # ĩ ≤ lo
    mass[-1] = 1 - cdf(k[-1:] - 1)[0]  # ĩ ≥ hi
    grid = recursive_grid(beta, shift, ceiling)
    taus = _tau_of(np.arange(lo, hi + 1), beta, shift, ceiling)
    return np.bincount(np.searchsorted(grid, taus), weights=mass, minlength=grid.size)


def lower_sum(weights: object, delta: float) -> float:
    """Part 2's ``min_{P' ⊆ P} Σ_{p ∈ P'} w_p + |P ∖ P'|·Δ`` for a sum: ``Σ_p min(w_p, Δ)`` (Wu's A.5).

    >>> lower_sum([1, 3, 10], 4)
    8.0
    """
    w = np.asarray(weights, np.float64)
    if w.ndim != 1 or np.any(w < 0) or not delta >= 0:
        raise ParameterError("lower_sum needs weights ≥ 0 in one dimension and Δ ≥ 0")
    return float(np.minimum(w, delta).sum())
