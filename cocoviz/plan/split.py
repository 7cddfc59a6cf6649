"""A fixed total budget shared over the levels: ``Plan.build(tree, total_epsilon=..., split=...)``.

The total is what the data holder decides first; the levels get shares of what is left once a
private K's ε_K is taken out of it (ε_K once per K measurement: one for ``"noisy-max"`` and
``"svt"``, one per level that needs K for ``"noisy-max-per-node"``; under zCDP each counts ρ =
ε_K²/2).  Splits, root first:

* ``"equal"``: weights 1, 1, …, 1;
* ``"leaves"``: weights 1, 2, …, n — level ℓ gets ℓ + 1 parts, so the leaves get the most: they
  hold the most nodes and the fewest groups per node, and a top-down release passes their accuracy
  up by merging (the dashboard's "more to the leaves");
* a list of weights, one > 0 per level (only their ratios matter).

The total is exact: every level but the last gets its share rounded as floats round, and the last
gets what makes ``plan.cost().total`` (``total_rho`` under zCDP) equal, as a float, to the total
asked — found by stepping the last share one float at a time from ``total − Σ others``; where
rounding to even skips the total's float, the smallest share then moves by a float or two
(:func:`exact_last`).  Every share stays within a few floats of its weight's part.

>>> split_weights("leaves", 3), split_weights([2, 1], 2)
([1.0, 2.0, 3.0], [2.0, 1.0])
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence

from cocoviz.errors import BudgetError, ParameterError

__all__ = ["SPLITS", "split_weights", "shares", "exact_last"]

#: The named splits of a total budget.
SPLITS = ("equal", "leaves")
#: Steps tried on the last level's share before giving up on an exact total (never reached in tests).
_MAX_STEPS = 4096


def split_weights(split: str | Sequence[float], n_levels: int) -> list[float]:
    """The weight of each level, root first: ``"equal"``, ``"leaves"`` (1, 2, …, n) or one weight > 0 per level."""
    if isinstance(split, str):
        if split == "equal":
            return [1.0] * n_levels
        if split == "leaves":
            return [float(k + 1) for k in range(n_levels)]
        raise ParameterError(f"split must be one of {SPLITS} or one weight per level, got {split!r}")
    if not isinstance(split, Sequence) or len(split) != n_levels:
        raise ParameterError(f"split as weights needs one weight per level ({n_levels}), got {split!r}")
    weights = []
    for k, w in enumerate(split):
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not (math.isfinite(w) and w > 0):
            raise ParameterError(f"the split's weight of level {k} must be a number > 0, got {w!r}")
        weights.append(float(w))
    return weights


def shares(total: float, weights: Sequence[float]) -> list[float]:
    """``total`` in proportion to ``weights``; the last share is the total minus the others."""
    whole = math.fsum(weights)
    first = [total * w / whole for w in weights[:-1]]
    return [*first, total - math.fsum(first)]


def exact_last(values: list[float], spent: Callable[[list[float]], float], target: float, what: str) -> list[float]:
    """``values`` moved, one float at a time, until ``spent(values) == target`` exactly.

    The last value moves first (the coarse step: a float of it moves the sum by about a float of the total).
    A step can land the exact sum halfway between two floats of the total, and rounding to even then skips
    every other float; so when the last value's steps cross the target without hitting it, the values of
    finer floats (the smallest first) take over, each within a float or two of the total.
    """
    values = list(values)
    order = [len(values) - 1, *sorted(range(len(values) - 1), key=lambda k: abs(values[k]))]
    steps = 0
    for k in order:
        side = None
        while steps < _MAX_STEPS:
            got = spent(values)
            if got == target:
                return values
            now = got > target
            if side is not None and now != side:
                break  # crossed the target: a finer value takes over
            side, steps = now, steps + 1
            step = math.nextafter(values[k], -math.inf if now else math.inf)
            if not step > 0:
                break
            values[k] = step
    raise BudgetError(f"no shares of the levels make the {what} exactly {target!r} (got {spent(values)!r})")
