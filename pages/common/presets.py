"""The sidebar's presets: a total budget split over the levels, and one method for every level.

Pure functions (no Streamlit): the sidebar stores a total ε and a split name,
and the per-level ε follow from them until a level's ε is set by hand
("custom"); :func:`detect_split` names the split that given per-level values
follow (for values set elsewhere: a link, a test, an older session).
"""

from __future__ import annotations

import math

#: Split presets, by stored name: what the sidebar shows.
SPLITS = {"equal": "equal", "leaves": "more to the leaves", "custom": "custom"}
#: Decimals kept of each level's share (the last level takes the remainder, so the shares add up to the total).
DECIMALS = 6


def split_weights(split: str, n_levels: int) -> list[float]:
    """Relative weight of each level (root first): equal, or 1, 2, …, n (the leaves hold most nodes and most
    groups per unit of error, and a top-down release passes their accuracy up by merging).

    >>> split_weights("equal", 3), split_weights("leaves", 3)
    ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    """
    if split == "equal":
        return [1.0] * n_levels
    if split == "leaves":
        return [float(k + 1) for k in range(n_levels)]
    raise ValueError(f"no weights for split {split!r}")


def split_budget(total: float, split: str, n_levels: int) -> list[float]:
    """``total`` shared over ``n_levels`` levels by the preset ``split``; the shares add up to ``total``.

    >>> split_budget(3.0, "equal", 3), split_budget(1.0, "equal", 3)
    ([1.0, 1.0, 1.0], [0.333333, 0.333333, 0.333334])
    >>> split_budget(3.0, "leaves", 2)
    [1.0, 2.0]
    """
    weights = split_weights(split, n_levels)
    scale = total / sum(weights)
    shares = [round(w * scale, DECIMALS) for w in weights[:-1]]
    return [*shares, round(total - sum(shares), DECIMALS + 4)]


def detect_split(epsilons: list[float]) -> str:
    """The preset that ``epsilons`` (root first) follow, else "custom".

    >>> detect_split([1.0, 1.0]), detect_split([0.5, 1.0, 1.5]), detect_split([0.5, 1.0, 2.0])
    ('equal', 'leaves', 'custom')
    """
    total = sum(epsilons)
    for split in ("equal", "leaves"):
        expected = split_budget(total, split, len(epsilons))
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
