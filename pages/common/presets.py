"""The sidebar's presets: a total budget split over the levels, and one method for every level.

Pure functions (no Streamlit): the sidebar stores a total ε and a split name,
and the per-level ε follow from them until a level's ε is set by hand
("custom"); :func:`detect_split` names the split that given per-level values
follow (for values set elsewhere: a link, a test, an older session).  The shares are
``Plan.build(total_epsilon=..., split=...)``'s (:mod:`cocoviz.plan.split`): a private K's ε_K is
taken out of the total, and the release spends the total exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cocoviz.errors import CocovizError
from cocoviz.plan import Plan, Shape

#: Split presets, by stored name: what the sidebar shows.
SPLITS = {"equal": "equal", "leaves": "more to the leaves", "custom": "custom"}
#: Decimals kept of each level's share (the last level takes the remainder, so the shares add up to the total).
DECIMALS = 6


def _levels_only(n_levels: int) -> Shape:
    """A hierarchy of ``n_levels`` levels, one node each: the shares of a total depend on the levels, the
    methods and how K is chosen, never on the nodes or their G (each level costs its ε once)."""
    paths = tuple(((("x",) * k),) for k in range(n_levels))
    return Shape(
        tuple(f"level {k}" for k in range(1, n_levels)), paths, ((),) + ((0,),) * (n_levels - 1), ((1,),) * n_levels
    )


def split_budget(
    total: float,
    split: str,
    n_levels: int,
    *,
    methods: Sequence[str] | None = None,
    k_select: str = "public",
    k_epsilon: float | None = None,
    consistency: str = "top-down",
) -> list[float]:
    """``total`` shared over ``n_levels`` levels by the preset ``split`` (``"equal"``, or ``"leaves"``: 1 : 2 : … : n),
    after a private K's ε_K; a plan of these ε spends exactly ``total``.

    >>> split_budget(3.0, "equal", 3), split_budget(3.0, "leaves", 2)
    ([1.0, 1.0, 1.0], [1.0, 2.0])
    >>> split_budget(2.0, "equal", 2, methods=["Hc", "Hc"], k_select="noisy-max", k_epsilon=0.1)
    [0.95, 0.95]
    """
    plan = Plan.build(
        _levels_only(n_levels),
        total_epsilon=total,
        split=split,
        methods=list(methods) if methods is not None else ["Hc"] * n_levels,
        k_select=k_select,
        k_epsilon=k_epsilon if k_select != "public" else None,
        consistency=consistency,
    )
    return list(plan.epsilons)


def detect_split(epsilons: list[float]) -> str:
    """The preset that ``epsilons`` (root first) follow, else "custom".

    >>> detect_split([1.0, 1.0]), detect_split([0.5, 1.0, 1.5]), detect_split([0.5, 1.0, 2.0])
    ('equal', 'leaves', 'custom')
    """
    total = sum(epsilons)
    for split in ("equal", "leaves"):
        try:
            expected = split_budget(total, split, len(epsilons))
        except CocovizError:  # a total past the largest ε a plan takes: no preset gives it
            return "custom"
        if all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) for a, b in zip(epsilons, expected)):
            return split
    return "custom"


def rescale(epsilons: list[float], total: float) -> list[float]:
    """Per-level ε scaled to add up to ``total``, keeping their proportions (a custom split under a new total).

    >>> rescale([0.5, 1.5], 4.0)
    [1.0, 3.0]
    """
    old = sum(epsilons)
    return [round(e * total / old, DECIMALS + 4) for e in epsilons]
