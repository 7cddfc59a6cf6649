"""What a shipped finding says about one release's settings: is another method mix better on this data?

Explore asks it for the release it shows: when the shipped method-selection
finding was made on the same data (same dataset, levels and K) at the same ε
per level, :func:`preferred_series` names the series that has the lowest mean
error at the most levels, if that is not the release's own.  Findings use the
fast sampler and the true data: advice for the data holder's exploration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from cocoviz.experiments.data import mix_label

__all__ = ["Preference", "series_label", "preferred_series"]


@dataclass(frozen=True)
class Preference:
    """The series a finding prefers at one ε per level, at how many of its levels it is best, and the levels."""

    series: str
    wins: int
    levels: int
    epsilon: float


def series_label(methods: Sequence[str], consistency: str, merge: str) -> str | None:
    """The finding's name of a release's settings (None: a setting the method finding does not run).

    >>> series_label(("Hc", "Hg"), "top-down", "weighted"), series_label(("Hc", "Hc"), "bottom-up", "weighted")
    ('Hc×Hg', 'bottom-up (Hc leaves)')
    >>> series_label(("Hc", "Hg"), "none", "weighted") is None
    True
    """
    if consistency == "top-down" and merge == "weighted":
        return mix_label(methods)
    if consistency == "bottom-up" and len(set(methods)) == 1:
        return f"bottom-up ({methods[-1]} leaves)"
    return None


def preferred_series(summary: pd.DataFrame, epsilon: float, current: str | None) -> Preference | None:
    """The series of ``summary`` best (lowest mean) at the most levels at ``epsilon`` per level, when it is not
    ``current``; None when ``current`` is best, or the finding has no point at this ε or no such series.

    Ties in wins go to the lower mean rank over the levels.

    >>> rows = [("A", 0, 1.0, 5.0), ("B", 0, 1.0, 3.0), ("A", 1, 1.0, 2.0), ("B", 1, 1.0, 1.0)]
    >>> s = pd.DataFrame(rows, columns=["series", "level", "epsilon", "mean"])
    >>> preferred_series(s, 1.0, "A")
    Preference(series='B', wins=2, levels=2, epsilon=1.0)
    >>> preferred_series(s, 1.0, "B") is None, preferred_series(s, 0.5, "A") is None
    (True, True)
    """
    at = summary[(summary["epsilon"] - epsilon).abs() < 1e-9]
    if at.empty or current is None or current not in set(at["series"]):
        return None
    best = at.loc[at.groupby("level")["mean"].idxmin(), "series"]
    wins = best.value_counts()
    ranks = at.assign(rank=at.groupby("level")["mean"].rank()).groupby("series")["rank"].mean()
    order = sorted(wins.index, key=lambda s: (-wins[s], ranks[s]))
    top = order[0]
    if top == current:
        return None
    return Preference(str(top), int(wins[top]), int(at["level"].nunique()), float(epsilon))
