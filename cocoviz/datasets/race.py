"""Persons of one race per census block (the paper's White and Hawaiian data).

Every 2010 census block is a group; White and Native Hawaiian and Pacific
Islander share the same blocks for a given seed and differ in how
concentrated the race is within blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from cocoviz.datasets.common import (
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

__all__ = ["generate_race", "RACES", "recipe"]

#: The races :func:`generate_race` knows.
RACES = ("white", "hawaiian")

# 2010 Census blocks (50 states, DC, Puerto Rico) and the share with nobody living there.
_BLOCKS = 11_155_486
_EMPTY_BLOCK_SHARE = 0.437
# Rural states have more, smaller blocks per person: blocks follow population^0.8.
_BLOCK_EXPONENT = 0.8
# Populated blocks: 1 + a lognormal number of persons (heavy tail of large blocks).
_BLOCK_SIGMA = 1.13
# Share of a race within a populated block ~ Beta(κ·m, κ·(1 − m)) around the state's share m.
_WHITE_CONCENTRATION = 1.5
_NHPI_CONCENTRATION = 4.0
_CONCENTRATION = {"white": _WHITE_CONCENTRATION, "hawaiian": _NHPI_CONCENTRATION}

_RECIPE = (
    "Every census block is a group (size 0 allowed): 11,155,486 blocks at scale 1, spread over states in "
    "proportion to population^0.8 and over counties in proportion to county size; 43.7% of blocks are empty "
    "(as in 2010) and a populated block holds 1 + a lognormal number of persons (sigma {sigma}) with the state's "
    "2010 mean. Persons of the race in a block are binomial with a block-level share drawn from "
    "Beta(k*m, k*(1-m)) around the state's 2010 share m, k = {k}. White and Hawaiian share the same blocks for "
    "a given seed. State figures (population, White share, NHPI persons) are rounded 2010 Census figures "
    "(cocoviz/datasets/geography.py); county sizes are synthetic."
)


def _check_race(race: str) -> str:
    if race not in RACES:
        raise ParameterError(f"race must be 'white' or 'hawaiian', got {race!r}")
    return race


def recipe(race: str) -> str:
    """How the data of ``race`` is made, for its data card.

    Examples
    --------
    >>> "k = 4.0" in recipe("hawaiian")
    True
    """
    return _RECIPE.format(sigma=_BLOCK_SIGMA, k=_CONCENTRATION[_check_race(race)])


@lru_cache(maxsize=1)
def _block_plan() -> tuple[np.ndarray, np.ndarray]:
    """Per state: share of the blocks, and log-mean of persons per populated block."""
    pops = np.array([s.population for s in states()], float)
    share = pops**_BLOCK_EXPONENT
    share /= share.sum()
    populated = _BLOCKS * share * (1 - _EMPTY_BLOCK_SHARE)
    # E[1 + floor(X)] ~ 0.5 + E[X] for a lognormal X: solve its mu for the state's persons.
    mean = pops / populated
    mu = np.log(mean - 0.5) - _BLOCK_SIGMA**2 / 2
    return share, mu


def _blocks_state(k: int, state: State, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """County index and number of persons of every block of one state (shared by both races)."""
    rng = rng_stream(seed, 2, k)
    share, mu = _block_plan()
    w = county_weights(state.postal)
    per_county = split_at_least_one(rng, int(round(_BLOCKS * scale * share[k])), w)
    county = np.repeat(np.arange(len(w)), per_county)
    persons = np.zeros(len(county), np.int64)
    populated = rng.random(len(county)) >= _EMPTY_BLOCK_SHARE
    persons[populated] = 1 + np.floor(rng.lognormal(mu[k], _BLOCK_SIGMA, int(populated.sum()))).astype(np.int64)
    return county, persons


def _race_state(k: int, state: State, scale: float, seed: int, race: str) -> Runs:
    """County index, size and count of one state's blocks for ``race``."""
    county, persons = _blocks_state(k, state, scale, seed)
    rng = rng_stream(seed, 3 if race == "white" else 4, k)
    if race == "white":
        mean = state.white_share
    else:
        mean = state.nhpi / state.population
    kappa = _CONCENTRATION[race]
    share = rng.beta(kappa * mean, kappa * (1 - mean), len(persons))
    return aggregate_leaves(county, rng.binomial(persons, share))


def generate_race(
    race: str, scale: float = 1.0, seed: int = 0, *, only_states: Sequence[str] | None = None
) -> pd.DataFrame:
    """Persons of one race per census block, by state and county, per-leaf counts.

    Every block is a group (size 0 allowed).  Blocks are spread over states
    (population^0.8) and counties (county size); 43.7% are empty, as in 2010,
    and a populated block holds 1 + lognormal persons with the state's mean.
    The block's persons of the race are binomial with a block-level share
    drawn from a Beta around the state's 2010 share: moderately spread for
    White (dense: sizes from 0 to a few thousand), extremely concentrated
    for Native Hawaiian and Pacific Islander (sparse: most blocks 0, a few
    with many).  Both races share the same blocks for a given seed.

    Parameters
    ----------
    race : {"white", "hawaiian"}
    scale : float
        Fraction of the 11.16 million blocks.
    seed : int
    only_states : sequence of str, optional
        Postal codes to generate (default: all 52).

    Returns
    -------
    DataFrame
        Columns ``state``, ``county``, ``size``, ``count``.

    Examples
    --------
    >>> table = generate_race("hawaiian", 0.001, 0, only_states=["HI"])
    >>> list(table.columns), int(table["size"].min())
    (['state', 'county', 'size', 'count'], 0)
    """
    race = _check_race(race)
    scale, seed = check_scale(scale), check_seed(seed)
    return states_frame(lambda k, state: _race_state(k, state, scale, seed, race), only_states)
