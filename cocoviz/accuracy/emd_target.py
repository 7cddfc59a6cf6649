"""Plan by accuracy, emd target: the smallest ε (or ρ) at a level whose estimates are within an emd per group.

Only public facts enter — a node's noised cells ``n`` (K for Hc, G for Hg), its groups ``G``, the level's
method and p, and the noise law of the budget — never the data's values, so the claim holds whatever the data.

**The claim.**  For every node of the level, the node's own estimate (the level's post-processing of its
noisy measurement: bounded isotonic regression, then rounding) is within ``emd / G ≤ X`` of the truth with
probability at least ``c``.  Proof, for one node with true non-decreasing whole vector ``t`` (the sorted
sizes for Hg, the cumulative counts Hc[0..K-1] for Hc), noisy ``y = t + Z`` (``Z`` i.i.d.), fit ``x`` (the
isotonic regression under the L``p`` loss on the set ``C`` of non-decreasing vectors within the method's
bounds, which holds ``t``) and released ``r = round(x)``:

* the emd of two histograms of the same ``G`` groups is ``Σ |r_i - t_i|`` (sorted sizes, or cumulative
  counts): ``emd = ‖r - t‖₁``;
* rounding: ``t_i`` is whole, so ``|round(x_i) - t_i|`` is 0 when ``|x_i - t_i| < 1/2`` and at most
  ``|x_i - t_i| + 1/2 ≤ 2 |x_i - t_i|`` otherwise: ``emd ≤ 2 ‖x - t‖₁``;
* ``p = 2``: ``x`` is the Euclidean projection of ``y`` on the convex ``C ∋ t``, which is non-expansive:
  ``‖x - t‖₂ ≤ ‖y - t‖₂ = ‖Z‖₂``, so ``emd ≤ 2 √n ‖Z‖₂`` (Cauchy–Schwarz);
* ``p = 1``: ``x`` minimises ``‖x - y‖₁`` over ``C ∋ t``, so ``‖x - y‖₁ ≤ ‖Z‖₁`` and
  ``‖x - t‖₁ ≤ ‖x - y‖₁ + ‖y - t‖₁ ≤ 2 ‖Z‖₁``: ``emd ≤ 4 ‖Z‖₁``;
* the sums: ``S = ‖Z‖₁`` (``p = 1``) or ``‖Z‖₂²`` (``p = 2``) is a sum of ``n`` i.i.d. terms of mean ``μ`` and
  variance ``v`` (exact moments of the law, :func:`noise_moments`); Cantelli's inequality
  ``P(S ≥ nμ + s) ≤ n v / (n v + s²)`` gives ``P(S ≤ q) ≥ c`` for ``q = nμ + √(n v c / (1 - c))``.

So ``emd / G ≤ 4 q / G`` (``p = 1``) or ``2 √(n q) / G`` (``p = 2``) with probability ≥ ``c`` for the node.
The bound is for the worst data (a node with no runs of equal sizes, where the fit cannot average); runs
make realised errors far smaller.  Top-down consistency then matches and merges the levels' estimates: the
claim is about the level's own estimate, before that step (the tests also measure the consistent release).

Under pure ε the noise is double-geometric of scale Δ/ε; under zCDP the discrete Gaussian of σ² = Δ₂²/(2ρ).
The other levels keep their budgets: the plan's total is theirs plus the one found.

Examples
--------
>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> from cocoviz.plan import Plan
>>> tree = Hierarchy.from_counts(pd.DataFrame({"leaf": ["a", "b"], "size": [1, 2], "count": [300, 400]}),
...                              size="size", count="count", levels=["leaf"])
>>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hg"], max_size=50)
>>> found = budget_for_emd(plan, level=1, emd_per_group=1.0, confidence=0.9)
>>> found.emd_per_group <= 1.0 and emd_per_group_at(plan, 1, found.budget * 0.99, 0.9) > 1.0
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cocoviz.accuracy.intervals.widths import check_confidence
from cocoviz.errors import ParameterError
from cocoviz.privacy.noise import GaussianNoise

__all__ = ["EmdTarget", "noise_moments", "node_emd_bound", "emd_per_group_at", "budget_for_emd"]

#: The budgets searched: from this small one ...
LOWEST = 1e-4
#: ... to this large one (a target not met there is refused as out of reach).
HIGHEST = 1e4
#: The methods whose post-processing the proof covers (bounded isotonic regression, then rounding).
METHODS = ("Hc", "Hg")


@dataclass(frozen=True)
class EmdTarget:
    """The smallest budget of ``level`` whose every node's estimate is within an emd per group, and what it
    gives: ``budget`` is ε (``kind == "ε"``) or ρ (``kind == "ρ"``); ``emd_per_group`` the worst node's bound at
    that budget (≤ the target); ``cells`` and ``groups`` that node's; ``budgets`` the plan's per-level budgets
    with this level's replaced, ``total`` their sum."""

    level: int
    kind: str
    budget: float
    emd_per_group: float
    cells: int
    groups: int
    confidence: float
    budgets: tuple[float, ...]

    @property
    def total(self) -> float:
        return float(sum(self.budgets))


def noise_moments(noise: float | GaussianNoise) -> tuple[float, float, float]:
    """``(E|Z|, E Z², E Z⁴)`` of one noise draw: double-geometric of scale ``b`` (``P(k) ∝ α^|k|``,
    ``α = e^(-1/b)``: ``2α/(1-α²)``, ``2α/(1-α)²``, ``2α(1+10α+α²)/(1-α)⁴``) or the discrete Gaussian
    (summed exactly over ``|k| ≤ 12σ + 12``, beyond which the mass is below double precision).

    >>> [round(m, 6) for m in noise_moments(1.0)]
    [0.850918, 1.841347, 22.184704]
    """
    if isinstance(noise, GaussianNoise):
        sigma2 = float(noise.sigma2)
        reach = int(math.ceil(12 * math.sqrt(sigma2))) + 12
        k = np.arange(-reach, reach + 1, dtype=np.float64)
        w = np.exp(-(k**2) / (2 * sigma2))
        w /= w.sum()
        a = np.abs(k)
        return float(w @ a), float(w @ a**2), float(w @ a**4)
    alpha = math.exp(-1.0 / float(noise))
    one_minus = -math.expm1(-1.0 / float(noise))  # 1 - α without cancellation
    m1 = 2 * alpha / (one_minus * (1 + alpha))
    m2 = 2 * alpha / one_minus**2
    m4 = 2 * alpha * (1 + 10 * alpha + alpha**2) / one_minus**4
    return m1, m2, m4


def _quantile(n: int, mean: float, variance: float, confidence: float) -> float:
    """Cantelli: a sum of ``n`` i.i.d. terms of this mean and variance is at most this with probability ≥ c."""
    return n * mean + math.sqrt(max(n * variance, 0.0) * confidence / (1 - confidence))


def node_emd_bound(noise: float | GaussianNoise, cells: int, groups: int, p: int, confidence: float) -> float:
    """The bound on one node's ``emd / G`` holding with probability ≥ ``confidence`` (the module's proof).

    >>> node_emd_bound(1.0, cells=1000, groups=1000, p=2, confidence=0.9) < node_emd_bound(
    ...     1.0, cells=1000, groups=1000, p=1, confidence=0.9)
    True
    """
    if groups <= 0 or cells <= 0:
        return 0.0
    m1, m2, m4 = noise_moments(noise)
    if p == 1:
        return 4 * _quantile(cells, m1, m2 - m1**2, confidence) / groups
    return 2 * math.sqrt(cells * _quantile(cells, m2, m4 - m2**2, confidence)) / groups


def _noise_at(plan, level: int, budget: float) -> float | GaussianNoise:
    """The level's noise law were its budget ``budget`` instead (the same method and sensitivity)."""
    noise = plan.level_noise(level)
    if plan.rhos is None:
        return float(noise) * plan.level_epsilon(level) / budget
    return GaussianNoise(float(noise.sigma2) * plan.level_rho(level) / budget)


def _worst(plan, level: int, budget: float, confidence: float) -> tuple[float, int, int]:
    """The largest node bound of ``level`` at ``budget``, with that node's cells and groups."""
    groups = np.asarray(plan.shape.group_counts(level), np.int64)
    cells = np.broadcast_to(np.asarray(plan.level_method(level).cells(groups, plan.max_size), np.int64), groups.shape)
    noise, p = _noise_at(plan, level, budget), int(plan.ps[level])
    best = (0.0, 0, 0)
    # Nodes of one (cells, groups) have one bound: each pair once.
    for n, g in {(int(n), int(g)) for n, g in zip(cells, groups)}:
        bound = node_emd_bound(noise, n, g, p, confidence)
        if bound > best[0]:
            best = (bound, n, g)
    return best


def _check(plan, level: int) -> None:
    if not 0 <= level < len(plan.methods):
        raise ParameterError(f"level must be between 0 and {len(plan.methods) - 1}, got {level}")
    method = plan.methods[level]
    if method not in METHODS:
        raise ParameterError(
            f"the emd target is proven for {' and '.join(METHODS)} (isotonic fits), not for level {level}'s {method}"
        )
    if plan.consistency == "bottom-up":
        raise ParameterError("the emd target is for a top-down or independent plan: bottom-up measures only its leaves")
    if plan.k_select != "public" and method == "Hc":
        raise ParameterError("the emd target needs a public K: a private K's cells are known only after noise")


def emd_per_group_at(plan, level: int, budget: float, confidence: float = 0.9) -> float:
    """The worst node's bound on ``emd / G`` at ``level`` were its budget ``budget`` (ε, or ρ for zCDP)."""
    _check(plan, level)
    return _worst(plan, level, budget, check_confidence(confidence))[0]


def budget_for_emd(plan, *, level: int, emd_per_group: float, confidence: float = 0.9) -> EmdTarget:
    """The smallest budget of ``level`` (to a relative 0.1%) whose every node's estimate has ``emd / G`` at
    most ``emd_per_group`` with probability ≥ ``confidence``.

    Refuses (:class:`~cocoviz.errors.ParameterError`, naming why) a level out of range or of another method, a
    target that is not a positive number, or one no budget up to :data:`HIGHEST` meets.
    """
    confidence = check_confidence(confidence)
    _check(plan, level)
    if not isinstance(emd_per_group, (int, float, np.number)) or not emd_per_group > 0:
        raise ParameterError(f"the target emd per group must be a positive number, got {emd_per_group!r}")
    target = float(emd_per_group)

    def meets(budget: float) -> bool:
        return _worst(plan, level, budget, confidence)[0] <= target

    if not meets(HIGHEST):
        raise ParameterError(
            f"no budget up to {HIGHEST:g} gives an emd per group of {target:g} at level {level}: ask for a larger one"
        )
    low, high = math.log(LOWEST), math.log(HIGHEST)
    if meets(LOWEST):
        high = low
    while high - low > 1e-3:
        mid = (low + high) / 2
        if meets(math.exp(mid)):
            high = mid
        else:
            low = mid
    budget = float(f"{math.exp(high):.4g}")
    if not meets(budget):  # rounded down past the edge: step back up
        budget = math.exp(high)
    bound, cells, groups = _worst(plan, level, budget, confidence)
    budgets = list(plan.epsilons if plan.rhos is None else plan.rhos)
    budgets[level] = budget
    return EmdTarget(
        level=level,
        kind="ε" if plan.rhos is None else "ρ",
        budget=budget,
        emd_per_group=bound,
        cells=cells,
        groups=groups,
        confidence=confidence,
        budgets=tuple(float(b) for b in budgets),
    )
