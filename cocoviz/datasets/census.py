"""Census-scale housing: households by state, county, census tract and block group.

The housing generator (:mod:`cocoviz.datasets.housing`) draws each state's
households per county; this module splits every county's ``(size, count)``
runs further, over the county's tracts and each tract's block groups, with
exact multinomial draws made as a few vectorised binomial halvings -- never
one row per household -- so the whole country (about 121 million households,
300 million persons) is generated in seconds.

The geography imitates the 2020 Census: about 85,000 tracts (1,200–8,000
persons, 4,000 typical) and 242,000 block groups (600–3,000 persons).  No
offline package carries tract or block group populations, so the geography
is synthetic but fixed: a county's tracts follow its (synthetic, fixed)
size, with a lognormal spread, from a stream that does not depend on the
data seed.  ``scale`` scales households and regions together: the number of
tracts and block groups is proportional to ``scale`` (at least one per
county and per tract), so persons per tract stay census-like until, at small
scales, every county is one tract.

Block level (8 million blocks) is not generated: a hierarchy holds at most
four levels below the root, which the nation's state / county / tract /
block group already fill.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from cocoviz.datasets import housing
from cocoviz.datasets.common import PAPER_FIGURES, _check_scale, _check_seed, _select_states, _stream
from cocoviz.datasets.geography import county_weights, states
from cocoviz.errors import ParameterError

__all__ = ["generate_census", "CENSUS_LEVELS", "RECIPE", "TRACTS", "BLOCK_GROUPS", "households"]

#: Level columns, top down, of the block group table (the tract table stops at ``tract``).
CENSUS_LEVELS = ("state", "county", "tract", "blockgroup")
#: 2020 Census tracts and block groups (50 states, DC, Puerto Rico), rounded: the targets at scale 1.
TRACTS = 85_000
BLOCK_GROUPS = 242_000
# Spread of tract and block group populations around their county's or tract's mean (log scale):
# most tracts then hold 1,200-8,000 persons and most block groups 600-3,000.
_SIGMA = 0.35
# The geography's own stream, the same for every data seed (as the counties' sizes).
_GEOGRAPHY_SEED = 2020
_DATASET_KEY = 6

RECIPE = (
    "The housing recipe (below) per state and county, scaled to the 2010 households of the 50 states, DC and Puerto "
    "Rico (about 121 million households and 300 million persons at scale 1); then every county's (size, count) runs "
    "split over its census tracts and every tract's over its block groups by exact multinomial draws. The geography "
    "imitates the 2020 Census (about 85,000 tracts of about 3,600 persons and 242,000 block groups of about 1,300) "
    "and is synthetic but fixed for every seed: a county's tracts and a tract's block groups number its expected "
    "persons over those figures (at least one), with lognormal weights (sigma 0.35). Scale multiplies households and "
    "the number of tracts and block groups alike; tracts are labelled 000100, 000200, ... within their county and "
    "block groups 1, 2, ... within their tract, as census codes are. Housing recipe: " + housing.RECIPE
)


def households() -> float:
    """Households of the 50 states, DC and Puerto Rico at scale 1 (2010 population over household size)."""
    return float(sum(s.population / s.household_size for s in states()))


def _housing_scale(scale: float) -> float:
    """The housing generator's scale that gives ``scale`` times the census households."""
    return scale * households() / PAPER_FIGURES["housing"][0]


@lru_cache(maxsize=8)
def _geography(k: int, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Tracts and block groups of state ``k`` at ``scale``: fixed for every data seed.

    Returns
    -------
    tract_ptr : int64 array
        County ``c`` owns tracts ``tract_ptr[c]:tract_ptr[c + 1]`` (numbered within the state).
    tract_weight : float64 array
        Each tract's share of its county.
    bg_ptr, bg_weight
        The same for block groups within tracts.
    """
    all_states = states()
    state = all_states[k]
    persons = sum(s.population for s in all_states)
    per_tract, per_bg = persons / TRACTS, persons / BLOCK_GROUPS
    rng = np.random.default_rng(np.random.SeedSequence(_GEOGRAPHY_SEED, spawn_key=(int(state.fips),)))
    expected = scale * state.population * county_weights(state.postal)
    n_tracts = np.maximum(1, np.rint(expected / per_tract).astype(np.int64))
    tract_ptr = np.concatenate([[0], np.cumsum(n_tracts)])
    tract_weight = _shares(rng.lognormal(0.0, _SIGMA, tract_ptr[-1]), tract_ptr)
    tract_persons = np.repeat(expected, n_tracts) * tract_weight
    n_bgs = np.maximum(1, np.rint(tract_persons / per_bg).astype(np.int64))
    bg_ptr = np.concatenate([[0], np.cumsum(n_bgs)])
    bg_weight = _shares(rng.lognormal(0.0, _SIGMA, bg_ptr[-1]), bg_ptr)
    for a in (tract_ptr, tract_weight, bg_ptr, bg_weight):
        a.setflags(write=False)
    return tract_ptr, tract_weight, bg_ptr, bg_weight


def _shares(w: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """``w`` divided by its sum within each segment ``ptr[i]:ptr[i + 1]``."""
    total = np.add.reduceat(w, ptr[:-1])
    return w / np.repeat(total, np.diff(ptr))


def split_runs(
    rng: np.random.Generator, counts: np.ndarray, ptr: np.ndarray, weights: np.ndarray, segment: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split every ``counts[i]`` over the bins of segment ``segment[i]`` by a multinomial draw.

    Segment ``s`` owns bins ``ptr[s]:ptr[s + 1]`` with probabilities
    ``weights`` (summing to 1 within the segment).  A multinomial is a chain
    of binomials: every range of bins is halved and its count split by one
    binomial draw with the left half's share, all ranges at once, so the work
    is about ``log2(bins per segment)`` vectorised draws over the non-empty
    cells.

    Returns
    -------
    item, bin, count : int64 arrays
        One entry per non-empty cell: the input index, the bin and its count.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> item, bin_, count = split_runs(rng, np.array([10, 5]), np.array([0, 3]), np.full(3, 1 / 3), np.array([0, 0]))
    >>> [int(count[item == i].sum()) for i in (0, 1)], bool(np.all(bin_ < 3))
    ([10, 5], True)
    """
    cum = np.concatenate([[0.0], np.cumsum(weights)])
    item = np.arange(len(counts))
    lo, hi, n = ptr[segment], ptr[np.asarray(segment) + 1], np.asarray(counts, np.int64)
    done_item, done_bin, done_n = [], [], []
    while len(item):
        keep = n > 0
        item, lo, hi, n = item[keep], lo[keep], hi[keep], n[keep]
        single = hi - lo == 1
        done_item.append(item[single])
        done_bin.append(lo[single])
        done_n.append(n[single])
        item, lo, hi, n = item[~single], lo[~single], hi[~single], n[~single]
        mid = (lo + hi) // 2
        p = (cum[mid] - cum[lo]) / (cum[hi] - cum[lo])
        left = rng.binomial(n, np.clip(p, 0.0, 1.0))
        item, lo, hi, n = (
            np.concatenate([item, item]),
            np.concatenate([lo, mid]),
            np.concatenate([mid, hi]),
            np.concatenate([left, n - left]),
        )
    return np.concatenate(done_item), np.concatenate(done_bin), np.concatenate(done_n)


def _census_state(k: int, scale: float, seed: int, blockgroups: bool) -> tuple[np.ndarray, ...]:
    """County, tract and block group (within the state) with size and count of state ``k``'s runs."""
    county, sizes, counts = housing._housing_state(k, states()[k], _housing_scale(scale), seed)
    tract_ptr, tract_weight, bg_ptr, bg_weight = _geography(k, scale)
    # Separate streams for the two splits: the tract table equals the block group table summed.
    item, tract, counts = split_runs(_stream(seed, _DATASET_KEY, k, 0), counts, tract_ptr, tract_weight, county)
    county, sizes = county[item], sizes[item]
    if not blockgroups:
        return county, tract, None, sizes, counts
    item, bg, counts = split_runs(_stream(seed, _DATASET_KEY, k, 1), counts, bg_ptr, bg_weight, tract)
    return county[item], tract[item], bg, sizes[item], counts


def _codes(values: np.ndarray, ptr: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Position of each value within its owner's segment (a tract's number within its county)."""
    return values - ptr[owner]


def generate_census(
    scale: float = 1.0, seed: int = 0, *, level: str = "blockgroup", only_states: Sequence[str] | None = None
) -> pd.DataFrame:
    """Census-scale housing: households per block group (or tract), per-leaf counts.

    Parameters
    ----------
    scale : float
        Fraction of the 2010 households (1.0: about 121 million); the numbers
        of tracts and block groups scale with it (at least one per county and
        per tract).
    seed : int
        Seed of the draw (the geography is the same for every seed).
    level : {"blockgroup", "tract"}
        The leaves.  The tract table is the block group table summed over
        block groups (same seed, same scale).
    only_states : sequence of str, optional
        Postal codes to generate (default: all 52); each state's draw does
        not depend on which other states are generated.

    Returns
    -------
    DataFrame
        Columns ``state``, ``county``, ``tract``, (``blockgroup``), ``size``,
        ``count``; labels are categoricals.

    Examples
    --------
    >>> table = generate_census(0.001, 0, only_states=["DC"])
    >>> list(table.columns), table["tract"].iloc[0], table["blockgroup"].iloc[0]
    (['state', 'county', 'tract', 'blockgroup', 'size', 'count'], '000100', '1')
    """
    scale, seed = _check_scale(scale), _check_seed(seed)
    if level not in ("blockgroup", "tract"):
        raise ParameterError(f"level must be 'blockgroup' or 'tract', got {level!r}")
    blockgroups = level == "blockgroup"
    chosen = _select_states(only_states)
    county_names = sorted({c for _, s in chosen for c in s.counties})
    county_code = {c: i for i, c in enumerate(county_names)}
    parts = {name: [] for name in ("state", "county", "tract", "blockgroup", "size", "count")}
    widest_tract = widest_bg = 1
    for i, (k, state) in enumerate(chosen):
        county, tract, bg, sizes, counts = _census_state(k, scale, seed, blockgroups)
        tract_ptr, _, bg_ptr, _ = _geography(k, scale)
        names = np.array([county_code[c] for c in state.counties], np.int64)
        parts["state"].append(np.full(len(sizes), i, np.int64))
        parts["county"].append(names[county])
        parts["tract"].append(_codes(tract, tract_ptr, county))
        widest_tract = max(widest_tract, int(np.diff(tract_ptr).max()))
        if blockgroups:
            parts["blockgroup"].append(_codes(bg, bg_ptr, tract))
            widest_bg = max(widest_bg, int(np.diff(bg_ptr).max()))
        parts["size"].append(sizes)
        parts["count"].append(counts)
    join = {name: np.concatenate(v) if v else None for name, v in parts.items()}
    categories = {
        "state": [s.postal for _, s in chosen],
        "county": county_names,
        "tract": [f"{100 * (t + 1):06d}" for t in range(widest_tract)],
        "blockgroup": [str(b + 1) for b in range(widest_bg)],
    }
    frame = {
        name: pd.Categorical.from_codes(join[name], categories[name])
        for name in CENSUS_LEVELS
        if join[name] is not None
    }
    frame["size"] = join["size"].astype(np.int64)
    frame["count"] = join["count"].astype(np.int64)
    return pd.DataFrame(frame)
