"""Partially synthetic housing: households by state and county (the paper's housing data).

A 2010-like national household-size profile, tilted per state to the
state's 2010 average household size, with a binomial tail past size 7 and
50 outlier groups (group quarters) per state.  Scaling thins the households
(the bulk) and keeps the outliers whole: at every scale up to 1 each state
has the full-size data's 50 outliers, with the same sizes and counties.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from cocoviz.datasets.common import (
    PAPER_FIGURES,
    Runs,
    aggregate_leaves,
    check_scale,
    check_seed,
    rng_stream,
    split_at_least_one,
    states_frame,
)
from cocoviz.datasets.geography import State, county_weights, states
from cocoviz.errors import ParameterError

__all__ = ["generate_housing", "housing_state", "RECIPE", "OUTLIERS", "OUTLIERS_PER_STATE"]

# A 2010-like national household-size profile for sizes 1..7.  SF1 stops at
# "7 or more"; about half of those are taken as exactly 7, which sets the
# tail's 7/6 ratio near 0.5 and keeps the national mean where the paper's is.
_HOUSEHOLD_PROFILE = np.array([0.267, 0.336, 0.158, 0.132, 0.062, 0.025, 0.012])
#: Outlier groups (group quarters) per state in the full-size data, as the paper's recipe.
OUTLIERS_PER_STATE = 50
_OUTLIER_MAX = 10_000
#: How a scale below 1 treats the outliers: "full" keeps all of them (the bundled files), "scaled"
#: keeps the first ``scale`` share of them (the earlier recipe, kept for comparison).
OUTLIERS = ("full", "scaled")

#: How the housing data is made, for its data card.
RECIPE = (
    "Per state (50 states, DC, Puerto Rico): households of sizes 1-7 drawn from the state's household-size "
    "profile (a 2010-like national profile tilted to the state's 2010 average household size, with one national "
    "factor so the totals are the paper's); past 7 a tail drawn by binomial sampling, n[j+1] ~ Binomial(n[j], r) "
    "with the state's r = n[7]/n[6]; 50 outlier groups (group quarters) of size uniform on 1..10,000; every group "
    "assigned to a county in proportion to the county's size. Scaling thins the households only: at any scale up to "
    "1 each state keeps the full-size data's 50 outliers (same sizes, same counties), so the tail is the paper's "
    "while the bulk is scaled. Groups per "
    "state follow 2010 households. State and county names are real (2010 county list from the addfips package); "
    "county sizes are synthetic (a fixed lognormal draw), as no offline package carries county populations. "
    "State figures are rounded 2010 Census figures (cocoviz/datasets/geography.py)."
)


def _tilted_profile(theta: float) -> np.ndarray:
    """The national profile of sizes 1..7 tilted by ``exp(theta * size)``, normalised."""
    p = _HOUSEHOLD_PROFILE * np.exp(theta * np.arange(1, 8))
    return p / p.sum()


def _profile_moments(theta: float) -> tuple[float, float]:
    """Expected (groups, persons) per base household, tail included, for tilt ``theta``."""
    p = _tilted_profile(theta)
    r = p[6] / p[5]
    tail_groups = p[6] * r / (1 - r)
    tail_persons = p[6] * (7 * r / (1 - r) + r / (1 - r) ** 2)
    return 1 + tail_groups, float(np.dot(np.arange(1, 8), p)) + tail_persons


def _solve_tilt(mean: float) -> float:
    """The tilt whose profile (tail included) has the given mean group size."""
    lo, hi = -3.0, 0.6
    for _ in range(100):
        mid = (lo + hi) / 2
        g, p = _profile_moments(mid)
        lo, hi = (mid, hi) if p / g < mean else (lo, mid)
    return (lo + hi) / 2


@lru_cache(maxsize=1)
def _housing_plan() -> tuple[np.ndarray, np.ndarray]:
    """Per state: share of the national groups and profile tilt (not counting outliers).

    Groups follow 2010 households (population / household size).  The mean
    group size of each state is its 2010 household size times one national
    factor chosen so that the persons total is the paper's.
    """
    all_states = states()
    households = np.array([s.population / s.household_size for s in all_states])
    share = households / households.sum()
    groups, persons, _ = PAPER_FIGURES["housing"]
    n_out = OUTLIERS_PER_STATE * len(all_states)
    base_groups = (groups - n_out) * share
    base_persons = persons - n_out * (1 + _OUTLIER_MAX) / 2
    hh = np.array([s.household_size for s in all_states])
    factor = base_persons / np.dot(base_groups, hh)
    tilts = np.array([_solve_tilt(factor * h) for h in hh])
    return share, tilts


def _outliers(k: int, n_counties: int, w: np.ndarray, scale: float, seed: int, outliers: str) -> Runs:
    """County index and size of one state's outliers (group quarters), from their own stream.

    Their own stream makes them the same at every scale: ``"full"`` keeps all
    :data:`OUTLIERS_PER_STATE` of the full-size data up to scale 1 (more above
    it, in proportion); ``"scaled"`` keeps the first ``scale`` share of them
    (randomly rounded).
    """
    rng = rng_stream(seed, 1, k, 1)
    expected = OUTLIERS_PER_STATE * scale
    n_full = max(OUTLIERS_PER_STATE, int(round(expected)))
    sizes = rng.integers(1, _OUTLIER_MAX + 1, n_full)
    county = rng.choice(n_counties, n_full, p=w)
    if outliers == "full" or scale >= 1:
        n_out = n_full
    else:
        n_out = min(n_full, int(expected) + int(rng.random() < expected - int(expected)))
    return county[:n_out], sizes[:n_out], np.ones(n_out, np.int64)


def housing_state(k: int, state: State, scale: float, seed: int, outliers: str = "full") -> Runs:
    """County index, size and count of one state's households, tail and outliers."""
    rng = rng_stream(seed, 1, k)
    share, tilts = _housing_plan()
    p = _tilted_profile(tilts[k])
    w = county_weights(state.postal)
    n_counties = len(w)
    n_out_paper = OUTLIERS_PER_STATE * len(states())
    target = (PAPER_FIGURES["housing"][0] - n_out_paper) * scale * share[k]
    base = int(round(target / _profile_moments(tilts[k])[0]))
    # Households of sizes 1..7: county totals first, then sizes within each county
    # (the same law as assigning each household to a county in proportion to its size).
    per_county = split_at_least_one(rng, base, w)
    by_size = rng.multinomial(per_county, p)  # counties x 7
    # The tail past 7 keeps the state's 7/6 ratio between neighbouring sizes.
    ratio = p[6] / p[5]
    tail, n = [], int(by_size[:, 6].sum())
    while n > 0:
        n = int(rng.binomial(n, ratio))
        tail.append(n)
    tail = np.array([t for t in tail if t > 0], np.int64)
    tail_by_county = rng.multinomial(tail, w) if len(tail) else np.zeros((0, n_counties), np.int64)
    out_county, out_sizes, out_counts = _outliers(k, n_counties, w, scale, seed, outliers)

    county = np.concatenate(
        [np.repeat(np.arange(n_counties), 7), np.tile(np.arange(n_counties), len(tail)), out_county]
    )
    sizes = np.concatenate(
        [np.tile(np.arange(1, 8), n_counties), np.repeat(np.arange(8, 8 + len(tail)), n_counties), out_sizes]
    )
    counts = np.concatenate([by_size.ravel(), tail_by_county.ravel(), out_counts])
    return aggregate_leaves(county, sizes, counts)


def generate_housing(
    scale: float = 1.0, seed: int = 0, *, only_states: Sequence[str] | None = None, outliers: str = "full"
) -> pd.DataFrame:
    """Partially synthetic housing: households by state and county, per-leaf counts.

    The paper's recipe (§6.1), per state: household sizes 1–7 from the
    state's household-size profile; past 7 a tail drawn by binomial
    sampling, ``n[j+1] ~ Binomial(n[j], r)`` with the state's
    ``r = n[7] / n[6]``; 50 outlier groups of size uniform on 1..10,000;
    every group assigned to a county with probability proportional to the
    county's size.  A scale below 1 thins the households and, by default,
    keeps every outlier: they are the same groups (sizes and counties) as
    in the full-size data for the same seed.

    Parameters
    ----------
    scale : float
        Fraction of the paper's households (1.0 = the full 240.9 million
        groups).  Up to 1 it scales the households only; above 1 the
        outliers grow in proportion too.
    seed : int
        Seed of the draw.
    only_states : sequence of str, optional
        Postal codes to generate (default: all 52); each state's draw does
        not depend on which other states are generated.
    outliers : {"full", "scaled"}
        ``"full"`` (default): every state keeps its 50 outliers at any scale
        up to 1.  ``"scaled"``: only the first ``scale`` share of them
        (randomly rounded; the earlier recipe of the bundled files).

    Returns
    -------
    DataFrame
        Columns ``state``, ``county``, ``size``, ``count``.

    Examples
    --------
    >>> table = generate_housing(0.001, 0, only_states=["DC"])
    >>> list(table.columns), set(table["state"])
    (['state', 'county', 'size', 'count'], {'DC'})
    """
    scale, seed = check_scale(scale), check_seed(seed)
    if outliers not in OUTLIERS:
        raise ParameterError(f"outliers must be one of {OUTLIERS}, got {outliers!r}")
    return states_frame(lambda k, state: housing_state(k, state, scale, seed, outliers), only_states)
