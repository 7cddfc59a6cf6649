"""Partially synthetic housing: households by state and county (the paper's housing data).

A 2010-like national household-size profile, tilted per state to the
state's 2010 average household size, with a binomial tail past size 7 and
50 outlier groups (group quarters) per state at scale 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from cocoviz.datasets.common import (
    PAPER_FIGURES,
    Runs,
    _aggregate,
    _check_scale,
    _check_seed,
    _split_at_least_one,
    _states_frame,
    _stream,
)
from cocoviz.datasets.geography import State, county_weights, states

__all__ = ["generate_housing", "RECIPE"]

# A 2010-like national household-size profile for sizes 1..7.  SF1 stops at
# "7 or more"; about half of those are taken as exactly 7, which sets the
# tail's 7/6 ratio near 0.5 and keeps the national mean where the paper's is.
_HOUSEHOLD_PROFILE = np.array([0.267, 0.336, 0.158, 0.132, 0.062, 0.025, 0.012])
_OUTLIERS_PER_STATE = 50
_OUTLIER_MAX = 10_000

#: How the housing data is made, for its data card.
RECIPE = (
    "Per state (50 states, DC, Puerto Rico): households of sizes 1-7 drawn from the state's household-size "
    "profile (a 2010-like national profile tilted to the state's 2010 average household size, with one national "
    "factor so the totals are the paper's); past 7 a tail drawn by binomial sampling, n[j+1] ~ Binomial(n[j], r) "
    "with the state's r = n[7]/n[6]; 50 outlier groups (group quarters) of size uniform on 1..10,000 at scale 1, "
    "proportionally fewer below; every group assigned to a county in proportion to the county's size. Groups per "
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
    n_out = _OUTLIERS_PER_STATE * len(all_states)
    base_groups = (groups - n_out) * share
    base_persons = persons - n_out * (1 + _OUTLIER_MAX) / 2
    hh = np.array([s.household_size for s in all_states])
    factor = base_persons / np.dot(base_groups, hh)
    tilts = np.array([_solve_tilt(factor * h) for h in hh])
    return share, tilts


def _housing_state(k: int, state: State, scale: float, seed: int) -> Runs:
    """County index, size and count of one state's households, tail and outliers."""
    rng = _stream(seed, 1, k)
    share, tilts = _housing_plan()
    p = _tilted_profile(tilts[k])
    w = county_weights(state.postal)
    n_counties = len(w)
    n_out_paper = _OUTLIERS_PER_STATE * len(states())
    target = (PAPER_FIGURES["housing"][0] - n_out_paper) * scale * share[k]
    base = int(round(target / _profile_moments(tilts[k])[0]))
    # Households of sizes 1..7: county totals first, then sizes within each county
    # (the same law as assigning each household to a county in proportion to its size).
    per_county = _split_at_least_one(rng, base, w)
    by_size = rng.multinomial(per_county, p)  # counties x 7
    # The tail past 7 keeps the state's 7/6 ratio between neighbouring sizes.
    ratio = p[6] / p[5]
    tail, n = [], int(by_size[:, 6].sum())
    while n > 0:
        n = int(rng.binomial(n, ratio))
        tail.append(n)
    tail = np.array([t for t in tail if t > 0], np.int64)
    tail_by_county = rng.multinomial(tail, w) if len(tail) else np.zeros((0, n_counties), np.int64)
    # Outliers (group quarters): 50 per state at scale 1, proportionally fewer below.
    expected = _OUTLIERS_PER_STATE * scale
    n_out = int(expected) + int(rng.random() < expected - int(expected))
    out_sizes = rng.integers(1, _OUTLIER_MAX + 1, n_out)
    out_county = rng.choice(n_counties, n_out, p=w)

    county = np.concatenate(
        [np.repeat(np.arange(n_counties), 7), np.tile(np.arange(n_counties), len(tail)), out_county]
    )
    sizes = np.concatenate(
        [np.tile(np.arange(1, 8), n_counties), np.repeat(np.arange(8, 8 + len(tail)), n_counties), out_sizes]
    )
    counts = np.concatenate([by_size.ravel(), tail_by_county.ravel(), np.ones(n_out, np.int64)])
    return _aggregate(county, sizes, counts)


def generate_housing(scale: float = 1.0, seed: int = 0, *, only_states: Sequence[str] | None = None) -> pd.DataFrame:
    """Partially synthetic housing: households by state and county, per-leaf counts.

    The paper's recipe (§6.1), per state: household sizes 1–7 from the
    state's household-size profile; past 7 a tail drawn by binomial
    sampling, ``n[j+1] ~ Binomial(n[j], r)`` with the state's
    ``r = n[7] / n[6]``; 50 outlier groups of size uniform on 1..10,000;
    every group assigned to a county with probability proportional to the
    county's size.

    Parameters
    ----------
    scale : float
        Fraction of the paper's 240.9 million groups (1.0 = full size).
    seed : int
        Seed of the draw.
    only_states : sequence of str, optional
        Postal codes to generate (default: all 52); each state's draw does
        not depend on which other states are generated.

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
    scale, seed = _check_scale(scale), _check_seed(seed)
    return _states_frame(lambda k, state: _housing_state(k, state, scale, seed), only_states)
