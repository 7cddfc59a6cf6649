"""Census-scale housing: households by state, county, census tract, block group and block.

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

The block level (about 8.1 million blocks at scale 1, the 2020 Census's
count) splits every block group's runs once more, over its blocks.  About
a third of the blocks hold no household at all (parks, water, industry, as
in the census); they are listed with a row of 0 groups, so that each is a
region of G = 0, and most of the others hold a handful of households.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

from cocoviz.datasets import housing
from cocoviz.datasets.common import PAPER_FIGURES, check_scale, check_seed, rng_stream, select_states
from cocoviz.datasets.geography import county_weights, states
from cocoviz.errors import ParameterError

__all__ = ["generate_census", "CENSUS_LEVELS", "RECIPE", "TRACTS", "BLOCK_GROUPS", "BLOCKS", "households"]

#: Level columns, top down, of the block table (the block group table stops at ``blockgroup``, the tract
#: table at ``tract``).
CENSUS_LEVELS = ("state", "county", "tract", "blockgroup", "block")
#: 2020 Census tracts, block groups and blocks (50 states, DC, Puerto Rico), rounded: the targets at scale 1.
TRACTS = 85_000
BLOCK_GROUPS = 242_000
BLOCKS = 8_130_000
#: Share of blocks with no household (a fixed draw per block; the first block of a block group always has some).
EMPTY_BLOCKS = 0.3
# Spread of the populated blocks' sizes within their block group (log scale): wide, as real blocks are.
_BLOCK_SIGMA = 1.0
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
    "persons over those figures (at least one), with lognormal weights (sigma 0.35). Blocks (about 8.1 million, the "
    "2020 count) split each block group's runs once more: a block group's blocks number its expected persons over "
    "37 (at least one), 30% of them (never the first) hold no household and are listed with 0 groups, the others "
    "have lognormal weights (sigma 1.0), so most hold a handful of households. Scale multiplies households and "
    "the number of tracts, block groups and blocks alike; tracts are labelled 000100, 000200, ... within their "
    "county, block groups 1, 2, ... within their tract and blocks 0001, 0002, ... within their block group. "
    "Housing recipe: " + housing.RECIPE
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


@lru_cache(maxsize=8)
def _blocks(k: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Blocks of state ``k`` at ``scale``, fixed for every data seed: ``block_ptr`` (block group ``b`` owns blocks
    ``block_ptr[b]:block_ptr[b + 1]``) and each block's share of its block group (0 for an empty block).

    Drawn from a stream of their own, so the tracts and block groups are those of the shallower tables.
    """
    all_states = states()
    state = all_states[k]
    tract_ptr, tract_weight, bg_ptr, bg_weight = _geography(k, scale)
    county_persons = scale * state.population * county_weights(state.postal)
    tract_persons = np.repeat(county_persons, np.diff(tract_ptr)) * tract_weight
    bg_persons = np.repeat(tract_persons, np.diff(bg_ptr)) * bg_weight
    per_block = sum(s.population for s in all_states) / BLOCKS
    n_blocks = np.maximum(1, np.rint(bg_persons / per_block).astype(np.int64))
    block_ptr = np.concatenate([[0], np.cumsum(n_blocks)])
    rng = np.random.default_rng(np.random.SeedSequence(_GEOGRAPHY_SEED, spawn_key=(int(state.fips), 1)))
    populated = rng.random(block_ptr[-1]) >= EMPTY_BLOCKS
    populated[block_ptr[:-1]] = True
    block_weight = _shares(rng.lognormal(0.0, _BLOCK_SIGMA, block_ptr[-1]) * populated, block_ptr)
    for a in (block_ptr, block_weight):
        a.setflags(write=False)
    return block_ptr, block_weight


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


def _census_state(k: int, scale: float, seed: int, depth: int) -> tuple[np.ndarray, ...]:
    """County, tract, block group and block (within the state; None below ``depth``, 3 to 5) with size and count
    of state ``k``'s runs.  Every block is listed: an empty block by one run of 0 groups (of size 1)."""
    county, sizes, counts = housing.housing_state(k, states()[k], _housing_scale(scale), seed)
    tract_ptr, tract_weight, bg_ptr, bg_weight = _geography(k, scale)
    # Separate streams for the splits: each table equals the deeper one summed.
    item, tract, counts = split_runs(rng_stream(seed, _DATASET_KEY, k, 0), counts, tract_ptr, tract_weight, county)
    county, sizes = county[item], sizes[item]
    if depth == 3:
        return county, tract, None, None, sizes, counts
    item, bg, counts = split_runs(rng_stream(seed, _DATASET_KEY, k, 1), counts, bg_ptr, bg_weight, tract)
    county, tract, sizes = county[item], tract[item], sizes[item]
    if depth == 4:
        return county, tract, bg, None, sizes, counts
    block_ptr, block_weight = _blocks(k, scale)
    item, block, counts = split_runs(rng_stream(seed, _DATASET_KEY, k, 2), counts, block_ptr, block_weight, bg)
    county, tract, bg, sizes = county[item], tract[item], bg[item], sizes[item]
    empty = np.flatnonzero(np.bincount(block, minlength=block_ptr[-1]) == 0)
    if len(empty):
        owner = np.searchsorted(block_ptr, empty, side="right") - 1  # the empty blocks' block groups
        tract_of_bg = np.repeat(np.arange(len(bg_ptr) - 1), np.diff(bg_ptr))
        county_of_tract = np.repeat(np.arange(len(tract_ptr) - 1), np.diff(tract_ptr))
        county = np.concatenate([county, county_of_tract[tract_of_bg[owner]]])
        tract = np.concatenate([tract, tract_of_bg[owner]])
        bg = np.concatenate([bg, owner])
        block = np.concatenate([block, empty])
        sizes = np.concatenate([sizes, np.ones(len(empty), sizes.dtype)])
        counts = np.concatenate([counts, np.zeros(len(empty), counts.dtype)])
    return county, tract, bg, block, sizes, counts


def _codes(values: np.ndarray, ptr: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Position of each value within its owner's segment (a tract's number within its county)."""
    return values - ptr[owner]


def generate_census(
    scale: float = 1.0, seed: int = 0, *, level: str = "blockgroup", only_states: Sequence[str] | None = None
) -> pd.DataFrame:
    """Census-scale housing: households per block group (or tract, or block), per-leaf counts.

    Parameters
    ----------
    scale : float
        Fraction of the 2010 households (1.0: about 121 million); the numbers
        of tracts, block groups and blocks scale with it (at least one per
        county, per tract and per block group).
    seed : int
        Seed of the draw (the geography is the same for every seed).
    level : {"blockgroup", "tract", "block"}
        The leaves.  The tract table is the block group table summed over
        block groups, and the block group table the block table summed over
        blocks (same seed, same scale).  The block table lists every block,
        an empty one with a row of 0 groups.
    only_states : sequence of str, optional
        Postal codes to generate (default: all 52); each state's draw does
        not depend on which other states are generated.

    Returns
    -------
    DataFrame
        Columns ``state``, ``county``, ``tract``, (``blockgroup``, ``block``),
        ``size``, ``count``; labels are categoricals.

    Examples
    --------
    >>> table = generate_census(0.001, 0, only_states=["DC"])
    >>> list(table.columns), table["tract"].iloc[0], table["blockgroup"].iloc[0]
    (['state', 'county', 'tract', 'blockgroup', 'size', 'count'], '000100', '1')
    """
    scale, seed = check_scale(scale), check_seed(seed)
    if level not in CENSUS_LEVELS[2:]:
        raise ParameterError(f"level must be 'tract', 'blockgroup' or 'block', got {level!r}")
    depth = CENSUS_LEVELS.index(level) + 1
    chosen = select_states(only_states)
    county_names = sorted({c for _, s in chosen for c in s.counties})
    county_code = {c: i for i, c in enumerate(county_names)}
    parts = {name: [] for name in (*CENSUS_LEVELS, "size", "count")}
    widest = {"tract": 1, "blockgroup": 1, "block": 1}
    for i, (k, state) in enumerate(chosen):
        county, tract, bg, block, sizes, counts = _census_state(k, scale, seed, depth)
        tract_ptr, _, bg_ptr, _ = _geography(k, scale)
        names = np.array([county_code[c] for c in state.counties], np.int64)
        parts["state"].append(np.full(len(sizes), i, np.int64))
        parts["county"].append(names[county])
        parts["tract"].append(_codes(tract, tract_ptr, county))
        widest["tract"] = max(widest["tract"], int(np.diff(tract_ptr).max()))
        if bg is not None:
            parts["blockgroup"].append(_codes(bg, bg_ptr, tract))
            widest["blockgroup"] = max(widest["blockgroup"], int(np.diff(bg_ptr).max()))
        if block is not None:
            block_ptr = _blocks(k, scale)[0]
            parts["block"].append(_codes(block, block_ptr, bg))
            widest["block"] = max(widest["block"], int(np.diff(block_ptr).max()))
        parts["size"].append(sizes)
        parts["count"].append(counts)
    join = {name: np.concatenate(v) if v else None for name, v in parts.items()}
    categories = {
        "state": [s.postal for _, s in chosen],
        "county": county_names,
        "tract": [f"{100 * (t + 1):06d}" for t in range(widest["tract"])],
        "blockgroup": [str(b + 1) for b in range(widest["blockgroup"])],
        "block": [f"{b + 1:04d}" for b in range(widest["block"])],
    }
    frame = {
        name: pd.Categorical.from_codes(join[name], categories[name])
        for name in CENSUS_LEVELS
        if join[name] is not None
    }
    frame["size"] = join["size"].astype(np.int64)
    frame["count"] = join["count"].astype(np.int64)
    return pd.DataFrame(frame)
