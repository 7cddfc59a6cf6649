"""US states and counties for the synthetic stand-ins: real names, public weights.

Names and FIPS codes come from the ``addfips`` package, which ships the
Census Bureau's 2010 county list offline: 3,221 counties in the 50 states,
the District of Columbia and Puerto Rico (the paper's 52 "states").

The per-state figures below are rounded 2010 Census figures (population,
average household size, share of persons who are White alone, persons who
are Native Hawaiian or Pacific Islander alone), typed from public tables and
used only as weights for synthetic data.  County sizes are **not** shipped by
any offline package, so they are synthetic: a fixed lognormal draw per
county (the same for every seed), which gives the skew of real county
populations (a few large counties, many small ones) but not their values.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.resources import files

import numpy as np

__all__ = ["State", "states", "WEST_COAST", "county_weights"]

#: The paper's 3-level cut, West Coast / state / county.  The paper does not list its states;
#: we take the Census Bureau's Pacific division, which adds Alaska and Hawaii to CA, OR and WA
#: (and so keeps Hawaii, where the Hawaiian data is concentrated).
WEST_COAST = ("AK", "CA", "HI", "OR", "WA")

# postal: (2010 population, average household size, White-alone share, NHPI-alone persons or None).
# NHPI counts are given for the states where they are concentrated; the rest
# share the remainder of the national total in proportion to population.
_STATE_FIGURES: dict[str, tuple[int, float, float, int | None]] = {
    "AL": (4_779_736, 2.48, 0.685, None),
    "AK": (710_231, 2.65, 0.667, 7_409),
    "AZ": (6_392_017, 2.63, 0.730, 13_415),
    "AR": (2_915_918, 2.47, 0.770, 5_863),
    "CA": (37_253_956, 2.90, 0.576, 144_386),
    "CO": (5_029_196, 2.49, 0.813, 6_623),
    "CT": (3_574_097, 2.52, 0.776, None),
    "DE": (897_934, 2.55, 0.689, None),
    "DC": (601_723, 2.11, 0.385, None),
    "FL": (18_801_310, 2.48, 0.750, 12_286),
    "GA": (9_687_653, 2.63, 0.597, 6_799),
    "HI": (1_360_301, 2.89, 0.247, 135_422),
    "ID": (1_567_582, 2.66, 0.891, None),
    "IL": (12_830_632, 2.59, 0.715, 4_470),
    "IN": (6_483_802, 2.52, 0.843, None),
    "IA": (3_046_355, 2.41, 0.913, None),
    "KS": (2_853_118, 2.49, 0.838, None),
    "KY": (4_339_367, 2.45, 0.878, None),
    "LA": (4_533_372, 2.55, 0.626, None),
    "ME": (1_328_361, 2.32, 0.952, None),
    "MD": (5_773_552, 2.61, 0.582, None),
    "MA": (6_547_629, 2.48, 0.804, None),
    "MI": (9_883_640, 2.49, 0.789, None),
    "MN": (5_303_925, 2.48, 0.853, None),
    "MS": (2_967_297, 2.58, 0.591, None),
    "MO": (5_988_927, 2.45, 0.828, 6_185),
    "MT": (989_415, 2.35, 0.894, None),
    "NE": (1_826_341, 2.46, 0.861, None),
    "NV": (2_700_551, 2.65, 0.662, 16_871),
    "NH": (1_316_470, 2.46, 0.939, None),
    "NJ": (8_791_894, 2.68, 0.686, None),
    "NM": (2_059_179, 2.55, 0.684, None),
    "NY": (19_378_102, 2.57, 0.657, 8_766),
    "NC": (9_535_483, 2.48, 0.685, 6_604),
    "ND": (672_591, 2.30, 0.900, None),
    "OH": (11_536_504, 2.44, 0.827, None),
    "OK": (3_751_351, 2.49, 0.722, 4_913),
    "OR": (3_831_074, 2.47, 0.836, 13_404),
    "PA": (12_702_379, 2.45, 0.819, None),
    "RI": (1_052_567, 2.44, 0.814, None),
    "SC": (4_625_364, 2.49, 0.662, None),
    "SD": (814_180, 2.42, 0.859, None),
    "TN": (6_346_105, 2.48, 0.776, None),
    "TX": (25_145_561, 2.75, 0.704, 21_656),
    "UT": (2_763_885, 3.10, 0.861, 24_957),
    "VT": (625_741, 2.34, 0.953, None),
    "VA": (8_001_024, 2.54, 0.686, 5_980),
    "WA": (6_724_540, 2.51, 0.773, 40_475),
    "WV": (1_852_994, 2.36, 0.939, None),
    "WI": (5_686_986, 2.43, 0.862, None),
    "WY": (563_626, 2.42, 0.907, None),
    "PR": (3_725_789, 2.68, 0.758, 370),
}

#: NHPI-alone persons in the 2010 Census, 50 states + DC + Puerto Rico.
NHPI_TOTAL = 540_383

# Two names for one county in the package's list: keep the official one.
_NAME_FIXES = {("11", "001"): "District of Columbia", ("72", "091"): "Manatí Municipio"}

# County sizes: fixed, so the geography is the same whatever the data seed.
_COUNTY_SEED = 2010
_COUNTY_SIGMA = 1.4


@dataclass(frozen=True)
class State:
    """One of the 52 "states" with its counties and 2010 weights."""

    postal: str
    fips: str
    name: str
    population: int
    household_size: float
    white_share: float
    nhpi: float
    counties: tuple[str, ...]


@lru_cache(maxsize=1)
def states() -> tuple[State, ...]:
    """The 50 states, DC and Puerto Rico, sorted by postal code, with their counties."""
    data = files("addfips") / "data"
    with (data / "states.csv").open(encoding="utf-8") as f:
        # The list has aliases ("D.C."); the first name of a postal code is the official one.
        names: dict[str, tuple[str, str]] = {}
        for row in csv.DictReader(f):
            names.setdefault(row["postal"], (row["fips"], row["name"]))
    counties: dict[str, dict[str, str]] = {}
    with (data / "counties_2010.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            key = (row["statefp"], row["countyfp"])
            counties.setdefault(row["statefp"], {}).setdefault(row["countyfp"], _NAME_FIXES.get(key, row["name"]))
    named = sum(v[3] for v in _STATE_FIGURES.values() if v[3] is not None)
    rest = sum(v[0] for v in _STATE_FIGURES.values() if v[3] is None)
    out = []
    for postal in sorted(_STATE_FIGURES):
        pop, hh, white, nhpi = _STATE_FIGURES[postal]
        fips, name = names[postal]
        by_code = counties[fips]
        out.append(
            State(
                postal,
                fips,
                name,
                pop,
                hh,
                white,
                float(nhpi) if nhpi is not None else (NHPI_TOTAL - named) * pop / rest,
                tuple(by_code[c] for c in sorted(by_code)),
            )
        )
    return tuple(out)


@cache
def county_weights(postal: str) -> np.ndarray:
    """Synthetic relative sizes of a state's counties (sum 1), fixed for all seeds.

    Lognormal with sigma 1.4, about the spread of real county populations
    within a state; drawn from a stream keyed by the state's FIPS code so
    that adding or removing states never changes another state's counties.
    """
    state = next(s for s in states() if s.postal == postal)
    rng = np.random.default_rng(np.random.SeedSequence(_COUNTY_SEED, spawn_key=(int(state.fips),)))
    w = rng.lognormal(0.0, _COUNTY_SIGMA, len(state.counties))
    w /= w.sum()
    w.setflags(write=False)
    return w
