"""Synthetic stand-ins for the paper's datasets, the slides' toy example, and loading.

The paper (Kuo et al., §6.1) evaluates on four datasets that cannot be
downloaded here.  Each generator below imitates one of them and, at
``scale=1.0``, matches the paper's number of groups, persons and distinct
group sizes within 5% (``benchmarks/datasets_scale.py`` checks this).  A
smaller ``scale`` draws proportionally fewer groups of the same kind, so
groups and persons scale linearly while the number of distinct sizes drops
(rare large sizes are the first to go).

Generators return the compact per-leaf counts form (level columns, ``size``,
``count``) and never one row per group, so the 240 million households of the
full housing data take seconds and little memory.  Every generator is a pure
function of ``(scale, seed)``; each state draws from its own stream, so a
regional cut (the paper's West Coast) equals the same states of the national
data for the same seed and scale.

>>> tree = load_dataset("toy")
>>> tree.histogram(())
array([0, 2, 1, 0, 1])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from cocoviz.geography import WEST_COAST, State, county_weights, states
from cocoviz.hierarchy import Hierarchy

__all__ = [
    "DATA_DIR", "DEFAULT_DATASET", "BUNDLE_SEED", "PAPER_FIGURES", "PAPER_MAX_SIZE", "Dataset",
    "dataset_names", "dataset", "load_dataset", "generate", "generate_housing", "generate_race",
    "generate_taxi", "dataset_card", "card_markdown", "summary_line", "toy_persons", "write_bundle",
    "full_scale_figures",
]

#: Where the bundled files live (the repository's ``data/`` folder).
DATA_DIR = Path(__file__).resolve().parent.parent / "data"

#: The dataset the dashboard opens with: ~1M groups over 3 levels, as in the paper's 3-level runs.
DEFAULT_DATASET = "housing-west"

#: The paper's Table 2: groups, persons (trips for taxi) and distinct group sizes.
PAPER_FIGURES: dict[str, tuple[int, int, int]] = {
    "housing": (240_908_081, 605_304_918, 2_352),
    "white": (11_155_486, 226_378_365, 1_916),
    "hawaiian": (11_155_486, 540_383, 224),
    "taxi": (360_872, 130_962_398, 3_128),
}

#: The paper's conservative public bound on group size (K), used for every one of its datasets.
PAPER_MAX_SIZE = 100_000

_MAX_SCALE = 10.0


def _check_scale(scale: float) -> float:
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        raise ValueError(f"scale must be a number, got {scale!r}") from None
    if not (math.isfinite(scale) and 0 < scale <= _MAX_SCALE):
        raise ValueError(f"scale must be in (0, {_MAX_SCALE:g}], got {scale!r}")
    return scale


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _stream(seed: int, dataset_key: int, *key: int) -> np.random.Generator:
    """An independent stream per (seed, dataset, part), so parts can be generated alone."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(dataset_key, *key)))


def _counts_frame(level_values: dict[str, np.ndarray], sizes: np.ndarray, counts: np.ndarray) -> pd.DataFrame:
    """The per-leaf counts table, labels as categoricals (small in memory and in Parquet)."""
    keep = counts > 0
    frame = {k: pd.Categorical(np.asarray(v)[keep]) for k, v in level_values.items()}
    frame["size"] = sizes[keep].astype(np.int64)
    frame["count"] = counts[keep].astype(np.int64)
    return pd.DataFrame(frame)


def _aggregate(leaf: np.ndarray, sizes: np.ndarray, counts: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum counts of equal (leaf, size) pairs: the per-leaf runs."""
    width = int(sizes.max(initial=0)) + 1
    uniq, inverse = np.unique(leaf.astype(np.int64) * width + sizes, return_inverse=True)
    # float64 weights are exact for counts below 2**53.
    total = np.bincount(inverse, weights=counts, minlength=len(uniq))
    return uniq // width, uniq % width, np.rint(total).astype(np.int64)


def _select_states(only: Sequence[str] | None) -> list[tuple[int, State]]:
    chosen = [(k, s) for k, s in enumerate(states()) if only is None or s.postal in only]
    if only is not None and len(chosen) != len(set(only)):
        unknown = sorted(set(only) - {s.postal for _, s in chosen})
        raise ValueError(f"unknown state code(s) {unknown}")
    return chosen


def _split_at_least_one(rng: np.random.Generator, total: int, weights: np.ndarray) -> np.ndarray:
    """``total`` items over bins in proportion to ``weights``, every bin getting at least one.

    The hierarchy is public and a leaf with no groups is not a region of it,
    so every county keeps a group even at tiny scales.
    """
    n = len(weights)
    return 1 + rng.multinomial(max(total - n, 0), weights)


# =================================================================== housing
# A 2010-like national household-size profile for sizes 1..7.  SF1 stops at
# "7 or more"; about half of those are taken as exactly 7, which sets the
# tail's 7/6 ratio near 0.5 and keeps the national mean where the paper's is.
_HOUSEHOLD_PROFILE = np.array([0.267, 0.336, 0.158, 0.132, 0.062, 0.025, 0.012])
_OUTLIERS_PER_STATE = 50
_OUTLIER_MAX = 10_000


def _tilted_profile(theta: float) -> np.ndarray:
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


def _housing_state(k: int, state: State, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    by_size = rng.multinomial(per_county, p)                        # counties x 7
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

    county = np.concatenate([np.repeat(np.arange(n_counties), 7),
                             np.tile(np.arange(n_counties), len(tail)), out_county])
    sizes = np.concatenate([np.tile(np.arange(1, 8), n_counties),
                            np.repeat(np.arange(8, 8 + len(tail)), n_counties), out_sizes])
    counts = np.concatenate([by_size.ravel(), tail_by_county.ravel(), np.ones(n_out, np.int64)])
    return _aggregate(county, sizes, counts)


def generate_housing(scale: float = 1.0, seed: int = 0, *, only_states: Sequence[str] | None = None
                     ) -> pd.DataFrame:
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
    """
    scale, seed = _check_scale(scale), _check_seed(seed)
    parts = []
    for k, state in _select_states(only_states):
        county, sizes, counts = _housing_state(k, state, scale, seed)
        names = np.array(state.counties, dtype=object)
        parts.append((np.full(len(sizes), state.postal, dtype=object), names[county], sizes, counts))
    return _counts_frame({"state": np.concatenate([p[0] for p in parts]),
                          "county": np.concatenate([p[1] for p in parts])},
                         np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]))


# ============================================================ race per block
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


@lru_cache(maxsize=1)
def _block_plan() -> tuple[np.ndarray, np.ndarray]:
    """Per state: share of the blocks, and log-mean of persons per populated block."""
    pops = np.array([s.population for s in states()], float)
    share = pops ** _BLOCK_EXPONENT
    share /= share.sum()
    populated = _BLOCKS * share * (1 - _EMPTY_BLOCK_SHARE)
    # E[1 + floor(X)] ~ 0.5 + E[X] for a lognormal X: solve its mu for the state's persons.
    mean = pops / populated
    mu = np.log(mean - 0.5) - _BLOCK_SIGMA ** 2 / 2
    return share, mu


def _blocks_state(k: int, state: State, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """County index and number of persons of every block of one state (shared by both races)."""
    rng = _stream(seed, 2, k)
    share, mu = _block_plan()
    w = county_weights(state.postal)
    per_county = _split_at_least_one(rng, int(round(_BLOCKS * scale * share[k])), w)
    county = np.repeat(np.arange(len(w)), per_county)
    persons = np.zeros(len(county), np.int64)
    populated = rng.random(len(county)) >= _EMPTY_BLOCK_SHARE
    persons[populated] = 1 + np.floor(rng.lognormal(mu[k], _BLOCK_SIGMA, int(populated.sum()))).astype(np.int64)
    return county, persons


def _race_state(k: int, state: State, scale: float, seed: int, race: str
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    county, persons = _blocks_state(k, state, scale, seed)
    rng = _stream(seed, 3 if race == "white" else 4, k)
    if race == "white":
        mean, kappa = state.white_share, _WHITE_CONCENTRATION
    else:
        mean, kappa = state.nhpi / state.population, _NHPI_CONCENTRATION
    share = rng.beta(kappa * mean, kappa * (1 - mean), len(persons))
    return _aggregate(county, rng.binomial(persons, share))


def generate_race(race: str, scale: float = 1.0, seed: int = 0, *,
                  only_states: Sequence[str] | None = None) -> pd.DataFrame:
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
    """
    if race not in ("white", "hawaiian"):
        raise ValueError(f"race must be 'white' or 'hawaiian', got {race!r}")
    scale, seed = _check_scale(scale), _check_seed(seed)
    parts = []
    for k, state in _select_states(only_states):
        county, sizes, counts = _race_state(k, state, scale, seed, race)
        names = np.array(state.counties, dtype=object)
        parts.append((np.full(len(sizes), state.postal, dtype=object), names[county], sizes, counts))
    return _counts_frame({"state": np.concatenate([p[0] for p in parts]),
                          "county": np.concatenate([p[1] for p in parts])},
                         np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]))


# ====================================================================== taxi
# Manhattan's 28 residential Neighborhood Tabulation Areas, with a rough share of
# yellow-cab pickups (busy Midtown, quiet upper Manhattan), split at 59th Street.
_NEIGHBOURHOODS: tuple[tuple[str, str, float], ...] = (
    ("Lower Manhattan", "Midtown-Midtown South", 14.0),
    ("Lower Manhattan", "Hudson Yards-Chelsea-Flatiron-Union Square", 12.0),
    ("Lower Manhattan", "Turtle Bay-East Midtown", 7.0),
    ("Lower Manhattan", "Murray Hill-Kips Bay", 7.0),
    ("Lower Manhattan", "West Village", 6.0),
    ("Lower Manhattan", "SoHo-TriBeCa-Civic Center-Little Italy", 5.0),
    ("Lower Manhattan", "Clinton", 4.0),
    ("Lower Manhattan", "East Village", 4.0),
    ("Lower Manhattan", "Gramercy", 3.0),
    ("Lower Manhattan", "Battery Park City-Lower Manhattan", 3.0),
    ("Lower Manhattan", "Lower East Side", 1.5),
    ("Lower Manhattan", "Chinatown", 0.7),
    ("Lower Manhattan", "Stuyvesant Town-Cooper Village", 0.5),
    ("Upper Manhattan", "Upper East Side-Carnegie Hill", 8.0),
    ("Upper Manhattan", "Upper West Side", 6.0),
    ("Upper Manhattan", "Lenox Hill-Roosevelt Island", 5.0),
    ("Upper Manhattan", "Lincoln Square", 4.0),
    ("Upper Manhattan", "Yorkville", 2.0),
    ("Upper Manhattan", "Morningside Heights", 0.6),
    ("Upper Manhattan", "East Harlem South", 0.4),
    ("Upper Manhattan", "Central Harlem South", 0.2),
    ("Upper Manhattan", "East Harlem North", 0.06),
    ("Upper Manhattan", "Manhattanville", 0.05),
    ("Upper Manhattan", "Hamilton Heights", 0.04),
    ("Upper Manhattan", "Central Harlem North-Polo Grounds", 0.04),
    ("Upper Manhattan", "Washington Heights South", 0.025),
    ("Upper Manhattan", "Washington Heights North", 0.015),
    ("Upper Manhattan", "Marble Hill-Inwood", 0.01),
)
# Medallions in 2013, and how unevenly they work (Gamma shapes: per medallion,
# and per medallion and neighbourhood for drivers' favourite areas).
_MEDALLIONS = 13_237
_ACTIVITY_SHAPE = 10.0
_AREA_PREFERENCE_SHAPE = 20.0


def generate_taxi(scale: float = 1.0, seed: int = 0) -> pd.DataFrame:
    """Pickups per medallion per Manhattan neighbourhood, per-leaf counts.

    A group is a medallion in a neighbourhood where it had at least one
    pickup; its size is that number of pickups.  Pickups are Poisson with
    mean ``T · activity · share · preference``: the medallion's activity and
    its preference for the area are Gamma with mean 1, the neighbourhood's
    share is fixed (Midtown busiest, Inwood quietest) and ``T`` is set so the
    total is the paper's 131 million trips at scale 1.

    Parameters
    ----------
    scale : float
        Fraction of the 13,237 medallions.
    seed : int

    Returns
    -------
    DataFrame
        Columns ``half``, ``neighbourhood``, ``size``, ``count``.
    """
    scale, seed = _check_scale(scale), _check_seed(seed)
    rng = _stream(seed, 5)
    share = np.array([w for _, _, w in _NEIGHBOURHOODS])
    share /= share.sum()
    medallions = max(1, int(round(_MEDALLIONS * scale)))
    per_medallion = PAPER_FIGURES["taxi"][1] / _MEDALLIONS
    activity = rng.gamma(_ACTIVITY_SHAPE, 1 / _ACTIVITY_SHAPE, medallions)
    preference = rng.gamma(_AREA_PREFERENCE_SHAPE, 1 / _AREA_PREFERENCE_SHAPE, (medallions, len(share)))
    pickups = rng.poisson(per_medallion * activity[:, None] * share[None, :] * preference)
    area = np.broadcast_to(np.arange(len(share)), pickups.shape).ravel()
    pickups = pickups.ravel()
    area, sizes, counts = _aggregate(area[pickups > 0], pickups[pickups > 0])
    halves = np.array([h for h, _, _ in _NEIGHBOURHOODS], dtype=object)
    names = np.array([n for _, n, _ in _NEIGHBOURHOODS], dtype=object)
    return _counts_frame({"half": halves[area], "neighbourhood": names[area]}, sizes, counts)


# ======================================================================= toy
def toy_persons() -> pd.DataFrame:
    """The slides' Persons table: 8 persons in groups 1–4, regions a and b.

    Region a holds group 1 (Alice, Bob, Carol, Dave) and group 3 (Judy);
    region b holds group 2 (Eve, Frank) and group 4 (Nick).  At the root,
    H = [0, 2, 1, 0, 1]: two groups of size 1, one of 2, one of 4.
    """
    return pd.DataFrame({
        "person": ["Alice", "Bob", "Carol", "Dave", "Eve", "Frank", "Judy", "Nick"],
        "group": [1, 1, 1, 1, 2, 2, 3, 4],
        "region": ["a", "a", "a", "a", "b", "b", "a", "b"],
    })


# ================================================================== registry
@dataclass(frozen=True)
class Dataset:
    """What a dataset imitates, how it is made, and where its bundled default lives.

    Attributes
    ----------
    name, title : str
        Identifier (``load_dataset(name)``) and a human title.
    imitates, recipe : str
        The paper's dataset it stands in for, and how it is generated.
    root : str
        What the root of the hierarchy stands for.
    levels : tuple of str
        Level columns below the root, top down.
    paper : str or None
        Key of the paper's figures in :data:`PAPER_FIGURES` (scale 1.0 targets
        of the national data).
    bundle_scale : float or None
        Scale of the bundled default (None: fixed data, no scale).
    regions : tuple of str or None
        States kept, for a regional cut of national data.
    public_max_size : int
        A public bound K on group size, as the paper used.
    """

    name: str
    title: str
    imitates: str
    recipe: str
    root: str
    levels: tuple[str, ...]
    paper: str | None
    bundle_scale: float | None
    regions: tuple[str, ...] | None = None
    public_max_size: int = PAPER_MAX_SIZE

    @property
    def filename(self) -> str:
        return "toy.csv" if self.name == "toy" else f"{self.name}.parquet"

    def generate(self, scale: float, seed: int) -> pd.DataFrame:
        """The per-leaf counts table (the persons table for the toy example)."""
        if self.name == "toy":
            return toy_persons()
        family = self.name.split("-")[0]
        if family == "housing":
            return generate_housing(scale, seed, only_states=self.regions)
        if family in ("white", "hawaiian"):
            return generate_race(family, scale, seed, only_states=self.regions)
        return generate_taxi(scale, seed)

    def build(self, table: pd.DataFrame) -> Hierarchy:
        """The hierarchy of a table made by :meth:`generate` (or read from the bundle)."""
        if self.name == "toy":
            return Hierarchy.from_persons(table, group="group", levels=list(self.levels))
        return Hierarchy.from_counts(table, size="size", count="count", levels=list(self.levels))


_HOUSING_RECIPE = (
    "Per state (50 states, DC, Puerto Rico): households of sizes 1-7 drawn from the state's household-size "
    "profile (a 2010-like national profile tilted to the state's 2010 average household size, with one national "
    "factor so the totals are the paper's); past 7 a tail drawn by binomial sampling, n[j+1] ~ Binomial(n[j], r) "
    "with the state's r = n[7]/n[6]; 50 outlier groups (group quarters) of size uniform on 1..10,000 at scale 1, "
    "proportionally fewer below; every group assigned to a county in proportion to the county's size. Groups per "
    "state follow 2010 households. State and county names are real (2010 county list from the addfips package); "
    "county sizes are synthetic (a fixed lognormal draw), as no offline package carries county populations. "
    "State figures are rounded 2010 Census figures (cocoviz/geography.py)."
)
_RACE_RECIPE = (
    "Every census block is a group (size 0 allowed): 11,155,486 blocks at scale 1, spread over states in "
    "proportion to population^0.8 and over counties in proportion to county size; 43.7% of blocks are empty "
    "(as in 2010) and a populated block holds 1 + a lognormal number of persons (sigma {sigma}) with the state's "
    "2010 mean. Persons of the race in a block are binomial with a block-level share drawn from "
    "Beta(k*m, k*(1-m)) around the state's 2010 share m, k = {k}. White and Hawaiian share the same blocks for "
    "a given seed. State figures (population, White share, NHPI persons) are rounded 2010 Census figures "
    "(cocoviz/geography.py); county sizes are synthetic."
)
_TAXI_RECIPE = (
    "13,237 medallions (2013) at scale 1. Pickups of a medallion in a neighbourhood are Poisson with mean "
    "T * activity * share * preference: activity ~ Gamma(shape {a}) and area preference ~ Gamma(shape {b}), both "
    "of mean 1; the neighbourhood's share of pickups is fixed (Midtown busiest, Inwood quietest, upper Manhattan "
    "small as for 2013 yellow cabs); T makes 131 million trips at scale 1. A group is a medallion in a "
    "neighbourhood where it had at least one pickup. Neighbourhoods are Manhattan's 28 residential NTAs, split "
    "into upper and lower Manhattan at 59th Street."
)
_WEST = (" Cut to the West Coast, as in the paper's 3-level experiments: the Census Bureau's Pacific division "
         "(Alaska, California, Hawaii, Oregon, Washington).")

_DATASETS: tuple[Dataset, ...] = (
    Dataset("toy", "The slides' toy example",
            "the Persons table of the paper's slides (teaching example)",
            "Eight persons (Alice, Bob, Carol, Dave, Eve, Frank, Judy, Nick) in four groups and two regions: "
            "group 1 (Alice, Bob, Carol, Dave) and group 3 (Judy) in region a, group 2 (Eve, Frank) and group 4 "
            "(Nick) in region b. Stored in the persons form.",
            "everyone", ("region",), None, None, public_max_size=10),
    Dataset("housing", "Partially synthetic housing",
            "the paper's partially synthetic housing data (2010 Census SF1 household sizes with a heavy tail)",
            _HOUSING_RECIPE, "national", ("state", "county"), "housing", 0.004),
    Dataset("housing-west", "Partially synthetic housing, West Coast",
            "the paper's housing data as used in its 3-level experiments: West Coast / state / county",
            _HOUSING_RECIPE + _WEST, "West Coast", ("state", "county"), "housing", 0.028, WEST_COAST),
    Dataset("white", "White persons per census block",
            "the paper's White race distribution (2010 SF1): dense, sizes from 0 to a few thousand",
            _RACE_RECIPE.format(sigma=_BLOCK_SIGMA, k=_WHITE_CONCENTRATION), "national", ("state", "county"),
            "white", 0.09),
    Dataset("white-west", "White persons per census block, West Coast",
            "the paper's White race distribution as used in its 3-level experiments: West Coast / state / county",
            _RACE_RECIPE.format(sigma=_BLOCK_SIGMA, k=_WHITE_CONCENTRATION) + _WEST, "West Coast",
            ("state", "county"), "white", 0.66, WEST_COAST),
    Dataset("hawaiian", "Native Hawaiian and Pacific Islander persons per census block",
            "the paper's Hawaiian race distribution (2010 SF1): sparse, most blocks 0, concentrated in Hawaii",
            _RACE_RECIPE.format(sigma=_BLOCK_SIGMA, k=_NHPI_CONCENTRATION), "national", ("state", "county"),
            "hawaiian", 0.09),
    Dataset("hawaiian-west", "Native Hawaiian and Pacific Islander persons per census block, West Coast",
            "the paper's Hawaiian race distribution as used in its 3-level experiments: West Coast / state / county",
            _RACE_RECIPE.format(sigma=_BLOCK_SIGMA, k=_NHPI_CONCENTRATION) + _WEST, "West Coast",
            ("state", "county"), "hawaiian", 0.66, WEST_COAST),
    Dataset("taxi", "NYC taxi pickups per medallion and neighbourhood",
            "the paper's 2013 NYC taxi data: Manhattan / upper, lower / 28 neighbourhoods",
            _TAXI_RECIPE.format(a=_ACTIVITY_SHAPE, b=_AREA_PREFERENCE_SHAPE), "Manhattan",
            ("half", "neighbourhood"), "taxi", 1.0),
)
_BY_NAME = {d.name: d for d in _DATASETS}

#: Seed of the bundled defaults.
BUNDLE_SEED = 0


def dataset_names() -> list[str]:
    """Names accepted by :func:`load_dataset`, the toy example first."""
    return [d.name for d in _DATASETS]


def dataset(name: str) -> Dataset:
    """The description of dataset ``name``."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown dataset {name!r}; choose one of {dataset_names()}") from None


def generate(name: str, *, scale: float | None = None, seed: int = 0) -> pd.DataFrame:
    """The table of dataset ``name``: per-leaf counts (persons for ``toy``).

    ``scale=None`` means the bundled default's scale.
    """
    spec = dataset(name)
    if spec.bundle_scale is None:
        if scale is not None:
            raise ValueError(f"dataset {name!r} is fixed: it has no scale")
        return spec.generate(1.0, 0)
    return spec.generate(spec.bundle_scale if scale is None else _check_scale(scale), _check_seed(seed))


def load_dataset(name: str, *, scale: float | None = None, seed: int = 0,
                 data_dir: str | Path | None = None) -> Hierarchy:
    """A dataset as a :class:`~cocoviz.hierarchy.Hierarchy`.

    Parameters
    ----------
    name : str
        One of :func:`dataset_names`.
    scale : float, optional
        None (default) loads the bundled default from ``data/``; a number
        generates the dataset at that scale (1.0 = the paper's size).
    seed : int
        Seed of the generator.  The bundled files were made with seed 0;
        another seed with ``scale=None`` generates at the bundled scale.
    data_dir : path, optional
        Folder of the bundled files (default :data:`DATA_DIR`).

    Returns
    -------
    Hierarchy
        Shared between calls with the same arguments (it is cached): treat
        it as read-only.

    Examples
    --------
    >>> tree = load_dataset("taxi")
    >>> tree.levels, tree.summary()["nodes_per_level"]
    (('half', 'neighbourhood'), [1, 2, 28])
    """
    spec = dataset(name)
    if spec.bundle_scale is None and scale is not None:
        raise ValueError(f"dataset {name!r} is fixed: it has no scale")
    seed = _check_seed(seed)
    if scale is not None:
        scale = _check_scale(scale)
    folder = Path(data_dir) if data_dir is not None else DATA_DIR
    return _load_cached(name, scale, seed, str(folder))


@lru_cache(maxsize=8)
def _load_cached(name: str, scale: float | None, seed: int, folder: str) -> Hierarchy:
    spec = _BY_NAME[name]
    path = Path(folder) / spec.filename
    if scale is None and seed == BUNDLE_SEED and spec.name != "toy" and path.exists():
        return spec.build(pd.read_parquet(path))
    # The toy table lives in code; a missing bundle is regenerated (same seed, same data).
    return spec.build(generate(name, scale=scale, seed=seed))


# ================================================================ data cards
def _figures(tree: Hierarchy) -> dict:
    s = tree.summary()
    return {"groups": s["groups"], "persons": s["persons"], "distinct_sizes": s["distinct_sizes"],
            "max_size": s["max_size"], "nodes_per_level": s["nodes_per_level"]}


def dataset_card(name: str, *, data_dir: str | Path | None = None) -> dict:
    """The data card of the bundled default of ``name``, for the app and ``data/README.md``.

    Figures (groups, persons, distinct sizes, node counts) are computed from
    the loaded data, not typed.

    Returns
    -------
    dict
        ``name``, ``title``, ``description``, ``imitates``, ``recipe``,
        ``root``, ``levels``, ``level_names`` (root first), ``nodes_per_level``,
        ``groups``, ``persons``, ``distinct_sizes``, ``max_size``, ``scale``,
        ``seed``, ``file``, ``form``, ``public_max_size`` and ``paper``
        (the paper's scale-1.0 groups, persons and distinct sizes, or None).
    """
    spec = dataset(name)
    tree = load_dataset(name, data_dir=data_dir)
    paper = None
    if spec.paper is not None:
        g, p, d = PAPER_FIGURES[spec.paper]
        paper = {"groups": g, "persons": p, "distinct_sizes": d}
    card = {
        "name": spec.name, "title": spec.title,
        "description": f"{spec.title}: imitates {spec.imitates}.",
        "imitates": spec.imitates, "recipe": spec.recipe, "root": spec.root,
        "levels": list(spec.levels), "level_names": [spec.root, *spec.levels],
        **_figures(tree),
        "scale": spec.bundle_scale, "seed": None if spec.bundle_scale is None else BUNDLE_SEED,
        "file": f"data/{spec.filename}", "form": "persons" if spec.name == "toy" else "counts",
        "public_max_size": spec.public_max_size, "paper": paper,
    }
    return card


def summary_line(tree: Hierarchy, paper: str | None = None, scale: float | None = None) -> str:
    """Groups, persons and distinct sizes of ``tree``, against the paper's figures at ``scale``."""
    s = tree.summary()
    parts = []
    for i, (key, label) in enumerate((("groups", "groups"), ("persons", "persons"),
                                      ("distinct_sizes", "distinct sizes"))):
        text = f"{label} {s[key]:,}"
        if paper is not None and scale is not None:
            target = PAPER_FIGURES[paper][i] * (scale if i < 2 else 1.0)
            note = "" if i < 2 else (" at scale 1" if scale != 1.0 else "")
            text += f" (paper{note} {target:,.0f}: {s[key] / target - 1:+.1%})"
        parts.append(text)
    return "; ".join(parts)


def card_markdown(name: str, *, data_dir: str | Path | None = None) -> str:
    """The data card of ``name`` as a Markdown section."""
    c = dataset_card(name, data_dir=data_dir)
    nodes = " / ".join(f"{n:,}" for n in c["nodes_per_level"])
    lines = [
        f"### `{c['name']}`: {c['title']}",
        "",
        f"- **Imitates**: {c['imitates']}.",
        f"- **How it is made**: {c['recipe']}",
        f"- **Levels**: {' / '.join(c['level_names'])}; nodes per level {nodes}.",
        f"- **Bundled file**: `{c['file']}` ({c['form']} form"
        + (f", scale {c['scale']:g}, seed {c['seed']})" if c["scale"] is not None else ")"),
        f"- **Groups** {c['groups']:,}; **persons** {c['persons']:,}; **distinct sizes** {c['distinct_sizes']:,}; "
        f"largest group {c['max_size']:,}; public bound K = {c['public_max_size']:,}.",
    ]
    if c["paper"] is not None:
        p = c["paper"]
        lines.append(f"- **Paper (scale 1.0, national)**: {p['groups']:,} groups, {p['persons']:,} persons, "
                     f"{p['distinct_sizes']:,} distinct sizes.")
    return "\n".join(lines)


# ==================================================================== bundle
_README_HEAD = """\
# Bundled datasets

Synthetic stand-ins for the four datasets of Kuo et al. (§6.1), which cannot be downloaded here,
scaled down so the dashboard stays interactive, plus the slides' toy example. Every figure on this
page was computed by the command that wrote the files:

```bash
python -m cocoviz data --bundle            # rewrites data/*.parquet, data/toy.csv and this README
```

Load them with `cocoviz.load_dataset(name)` (the bundled default) or
`cocoviz.load_dataset(name, scale=1.0, seed=0)` (generated at the paper's size; seconds, not
minutes). Generate one on its own with, e.g., `python -m cocoviz data housing --scale 1 --seed 0
--out housing.parquet`, which prints its groups, persons and distinct sizes next to the paper's.

The Parquet files are in the per-leaf counts form: one row per leaf and group size, columns = the
level columns, `size` and `count` (number of groups of that size in that leaf). `toy.csv` is in
the persons form (one row per person). The same forms, and the groups form (one row per group),
can be uploaded in the dashboard.

**Scale.** `scale` is the fraction of the paper's national data (for the West Coast cuts too, so
`housing-west` at scale 1.0 is the West Coast of the full housing data). Groups and persons scale
linearly; the number of distinct sizes drops below scale 1.0, because rare large sizes are the
first to go (at scale 0.004 housing keeps about 10 of its 2,600 outliers).
"""


def _bytes(n: int) -> str:
    return f"{n:,} B" if n < 1024 else f"{n / 1024:,.0f} KiB" if n < 2**20 else f"{n / 2**20:,.1f} MiB"


def _bundle_table(rows: list[tuple[str, Hierarchy, Dataset, int]]) -> str:
    out = ["| dataset | root / levels | nodes per level | groups | persons | distinct sizes | scale | file |",
           "|---|---|---|---:|---:|---:|---:|---|"]
    for name, tree, spec, size in rows:
        s = tree.summary()
        out.append(f"| `{name}` | {' / '.join([spec.root, *spec.levels])} | "
                   f"{' / '.join(f'{n:,}' for n in s['nodes_per_level'])} | {s['groups']:,} | {s['persons']:,} | "
                   f"{s['distinct_sizes']:,} | {'—' if spec.bundle_scale is None else f'{spec.bundle_scale:g}'} | "
                   f"`{spec.filename}` ({_bytes(size)}) |")
    return "\n".join(out)


def full_scale_figures(seed: int = 0) -> list[dict]:
    """Groups, persons and distinct sizes of every paper dataset at scale 1.0, against the paper's."""
    out = []
    for key, make in (("housing", lambda: generate_housing(1.0, seed)),
                      ("white", lambda: generate_race("white", 1.0, seed)),
                      ("hawaiian", lambda: generate_race("hawaiian", 1.0, seed)),
                      ("taxi", lambda: generate_taxi(1.0, seed))):
        table = make()
        sizes, counts = table["size"].to_numpy(), table["count"].to_numpy()
        got = (int(counts.sum()), int(np.dot(sizes, counts)), int(np.unique(sizes).size))
        out.append({"dataset": key, "seed": seed, "ours": got, "paper": PAPER_FIGURES[key],
                    "relative": tuple(g / p - 1 for g, p in zip(got, PAPER_FIGURES[key]))})
    return out


def _full_scale_table(figures: list[dict]) -> str:
    out = ["| dataset | groups (paper) | persons (paper) | distinct sizes (paper) |", "|---|---:|---:|---:|"]
    for f in figures:
        cells = [f"{o:,} ({p:,}; {r:+.1%})" for o, p, r in zip(f["ours"], f["paper"], f["relative"])]
        out.append(f"| `{f['dataset']}` | " + " | ".join(cells) + " |")
    return "\n".join(out)


def write_bundle(data_dir: str | Path | None = None, *, full_scale: bool = True) -> list[tuple[Path, int]]:
    """Write every bundled default and ``README.md`` (the data cards) into ``data_dir``.

    Parameters
    ----------
    data_dir : path, optional
        Target folder (default :data:`DATA_DIR`).
    full_scale : bool
        Also generate every paper dataset at scale 1.0 and put its figures
        against the paper's in the README (a few seconds).

    Returns
    -------
    list of (Path, int)
        Files written and their sizes in bytes.
    """
    folder = Path(data_dir) if data_dir is not None else DATA_DIR
    folder.mkdir(parents=True, exist_ok=True)
    written, rows = [], []
    for spec in _DATASETS:
        table = generate(spec.name)
        path = folder / spec.filename
        if spec.name == "toy":
            table.to_csv(path, index=False)
        else:
            table = table.sort_values([*spec.levels, "size"], ignore_index=True)
            table.to_parquet(path, index=False, compression="zstd")
        size = path.stat().st_size
        written.append((path, size))
        rows.append((spec.name, spec.build(table), spec, size))
    _load_cached.cache_clear()
    parts = [_README_HEAD, "## The bundled files\n", _bundle_table(rows), ""]
    parts.append(f"The dashboard opens `{DEFAULT_DATASET}`. Each bundled file was generated with seed "
                 f"{BUNDLE_SEED}.\n")
    if full_scale:
        parts += ["## Scale 1.0 against the paper\n",
                  "Generated at `scale=1.0, seed=0` by the same code (also printed by "
                  "`python benchmarks/datasets_scale.py`); the paper's figures in brackets.\n",
                  _full_scale_table(full_scale_figures()), ""]
    parts.append("## Data cards\n")
    parts += [card_markdown(spec.name, data_dir=folder) + "\n" for spec in _DATASETS]
    readme = folder / "README.md"
    readme.write_text("\n".join(parts), encoding="utf-8")
    written.append((readme, readme.stat().st_size))
    return written
