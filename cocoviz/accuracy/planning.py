"""Plan by accuracy: the smallest ε (or ρ) at a level whose bands reach a target width, before any noise.

A level's publishable bounds (:meth:`cocoviz.Release.intervals`) are ``± a`` on each of a node's noisy cells,
with ``a`` the smallest whole tolerance whose simultaneous coverage of the node's ``n`` cells reaches the
confidence ``c`` under the exact noise law (:func:`~cocoviz.accuracy.intervals.widths.half_widths`).  Only
public facts enter: the method's sensitivity, the level's cells per node (K per node for Hc, G per node for
Hg) and the noise law of the budget.  The width shrinks as the budget grows (the law's tails do), so the
smallest budget ``b`` with ``a(b) ≤ X`` on the node of the level with the most cells — the widest band —
is found by bisection on ``log b``; every node of the level then has ``a ≤ X``.

Under pure ε the level's noise is double-geometric of scale Δ/ε; under zCDP the discrete Gaussian of
σ² = Δ₂²/(2ρ).  The other levels keep their budgets: the plan's total is theirs plus the one found.

Examples
--------
>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> from cocoviz.plan import Plan
>>> tree = Hierarchy.from_counts(pd.DataFrame({"leaf": ["a", "b"], "size": [1, 2], "count": [30, 40]}),
...                              size="size", count="count", levels=["leaf"])
>>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=50)
>>> found = budget_for_half_width(plan, level=1, half_width=3, confidence=0.9)
>>> found.half_width <= 3 and found.budget < 5
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cocoviz.accuracy.intervals.bands import WIDER_FIRST
from cocoviz.accuracy.intervals.widths import check_confidence, half_widths
from cocoviz.errors import ParameterError
from cocoviz.privacy.noise import GaussianNoise

__all__ = ["LevelTarget", "budget_for_half_width", "half_width_at"]

#: The budgets searched: from this small one ...
LOWEST = 1e-4
#: ... to this large one (a target not met there is refused as out of reach).
HIGHEST = 1e4


@dataclass(frozen=True)
class LevelTarget:
    """The smallest budget of ``level`` meeting a band half-width, and what it gives.

    ``budget`` is ε (``kind == "ε"``) or ρ (``kind == "ρ"``); ``half_width`` the widest node's band at that
    budget (≤ the target); ``cells`` that node's cells; ``epsilons`` (or ``rhos``) the plan's per-level budgets
    with this level's replaced, and ``total`` their sum.
    """

    level: int
    kind: str
    budget: float
    half_width: int
    cells: int
    confidence: float
    budgets: tuple[float, ...]

    @property
    def total(self) -> float:
        return float(sum(self.budgets))


def _cells(plan, level: int) -> int:
    cells = plan.level_method(level).cells(plan.shape.group_counts(level), plan.max_size)
    return int(np.max(cells)) if np.size(cells) else 0


def _noise_at(plan, level: int, budget: float):
    """The level's noise law were its budget ``budget`` instead (the same method and sensitivity)."""
    noise = plan.level_noise(level)
    if plan.rhos is None:
        return float(noise) * plan.level_epsilon(level) / budget
    return GaussianNoise(float(noise.sigma2) * plan.level_rho(level) / budget)


def half_width_at(plan, level: int, budget: float, confidence: float = 0.9) -> int:
    """The widest node's band half-width of ``level`` with budget ``budget`` (ε, or ρ for a zCDP plan).

    >>> import pandas as pd
    >>> from cocoviz.hierarchy import Hierarchy
    >>> from cocoviz.plan import Plan
    >>> tree = Hierarchy.from_counts(pd.DataFrame({"leaf": ["a"], "size": [1], "count": [5]}),
    ...                              size="size", count="count", levels=["leaf"])
    >>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=100)
    >>> half_width_at(plan, 1, 1.0) >= half_width_at(plan, 1, 4.0)
    True
    """
    cells = _cells(plan, level)
    if cells == 0:
        return 0
    method = plan.methods[level]
    return half_widths(_noise_at(plan, level, budget), cells, confidence, first=WIDER_FIRST.get(method, "even")).widest


def budget_for_half_width(plan, *, level: int, half_width: int, confidence: float = 0.9) -> LevelTarget:
    """The smallest budget of ``level`` (to a relative 0.1%) whose widest node's band is ``± half_width``.

    Refuses (:class:`~cocoviz.errors.ParameterError`, naming why) a level out of range, a target below 1, or
    a target no budget up to :data:`HIGHEST` meets.
    """
    confidence = check_confidence(confidence)
    if not 0 <= level < len(plan.methods):
        raise ParameterError(f"level must be between 0 and {len(plan.methods) - 1}, got {level}")
    if not isinstance(half_width, (int, np.integer)) or half_width < 1:
        raise ParameterError(f"the target half-width must be a whole number of at least 1, got {half_width!r}")
    if half_width_at(plan, level, HIGHEST, confidence) > half_width:
        raise ParameterError(
            f"no budget up to {HIGHEST:g} gives ± {half_width} at level {level}: ask for a wider band or fewer cells"
        )
    low, high = math.log(LOWEST), math.log(HIGHEST)
    if half_width_at(plan, level, LOWEST, confidence) <= half_width:
        high = low
    while high - low > 1e-3:
        mid = (low + high) / 2
        if half_width_at(plan, level, math.exp(mid), confidence) <= half_width:
            high = mid
        else:
            low = mid
    budget = float(f"{math.exp(high):.4g}")
    if half_width_at(plan, level, budget, confidence) > half_width:  # rounded down past the edge: step back up
        budget = math.exp(high)
    budgets = list(plan.epsilons if plan.rhos is None else plan.rhos)
    budgets[level] = budget
    return LevelTarget(
        level=level,
        kind="ε" if plan.rhos is None else "ρ",
        budget=budget,
        half_width=half_width_at(plan, level, budget, confidence),
        cells=_cells(plan, level),
        confidence=confidence,
        budgets=tuple(float(b) for b in budgets),
    )
