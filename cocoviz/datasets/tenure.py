"""Tenure (owner / renter) of every household of the housing stand-in, and of its previous census.

A group characteristic for size × characteristic tables (Tao et al.'s setting, Kuo et al.'s
future work).  The housing generator (:mod:`cocoviz.datasets.housing`) is not touched: tenure is
drawn afterwards, per leaf (county) and size, from the groups it made.

**Owner rate.**  A household of size s owns its home with probability

    r_c(s) = expit(logit(OWNER_RATE[min(max(s, 1), 7)]) + u_c + v_c)

with :data:`OWNER_RATE` a 2010-like US rate by size (1: 56 %, 2: 72 %, 3: 64 %, 4: 67 %,
5: 65 %, 6: 61 %, 7 or more: 57 %; about 65 % overall; size 0 takes size 1's rate, and the
housing data's outliers, sizes past 7, take the 7+ rate).  ``u_c`` ~ N(0, :data:`PLACE_SD` =
0.35) is the county's lasting **place effect**: keyed by the county's path alone, the same in
every census; ``v_c`` ~ N(0, :data:`CENSUS_SD` = 0.1) is the census's own, keyed by
``(seed, path)``.  The owners of a (county, size) cell are ``Binomial(count, r_c(s))`` from the
stream ``SeedSequence(seed, spawn_key=(TENURE_KEY, crc32(path)))``: deterministic from the seed,
and a county's tenure does not depend on which other counties are drawn (a regional cut agrees
with the national data).

**Previous census** (:func:`previous_tenure_table`, :func:`previous_census_tenure`): the
households of :func:`cocoviz.datasets.previous.previous_census_table` (another draw, seed 1,
households +0.05 persons larger) with **more owners**: the logit shifted by :data:`OWNER_DRIFT` =
+0.2 (about +4 points, as US home-ownership fell from 2000 to 2010 in the other direction of
time) and that census's own ``v_c`` (seed 1).  Its owners are the expected values
``count · r(s)`` (floats): it is a public prior, not data.  The place effect is shared, so the
previous census knows each county's lean, stale by the drift.

>>> import pandas as pd
>>> counts = pd.DataFrame({"state": ["a", "a", "b"], "county": ["x", "x", "y"], "size": [1, 2, 3],
...                        "count": [40, 30, 20]})
>>> table = tenure_table(counts, seed=0)
>>> list(table.columns), (table["owners"] + table["renters"]).tolist()
(['state', 'county', 'size', 'owners', 'renters'], [40, 30, 20])
>>> bool(table.equals(tenure_table(counts, seed=0)))
True
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from cocoviz.datasets.previous import DRIFT, PREVIOUS_SEED, previous_census_table
from cocoviz.errors import InputError, ParameterError
from cocoviz.hierarchy import Hierarchy

__all__ = [
    "OWNER_RATE",
    "PLACE_SD",
    "CENSUS_SD",
    "OWNER_DRIFT",
    "TENURE_KEY",
    "owner_rate",
    "tenure_table",
    "previous_tenure_table",
    "previous_census_tenure",
    "README_SECTION",
]

#: Owner rate by household size 1..7 (7 = 7 or more): 2010-like US figures.
OWNER_RATE = np.array([0.56, 0.72, 0.64, 0.67, 0.65, 0.61, 0.57])
#: Standard deviation of a county's lasting place effect on the logit scale.
PLACE_SD = 0.35
#: Standard deviation of one census's own county effect on the logit scale.
CENSUS_SD = 0.1
#: How many more owners the previous census had, on the logit scale.
OWNER_DRIFT = 0.2
#: Dataset key of the tenure streams (the generators use 1, 2, ...).
TENURE_KEY = 17
# Entropy of the place effects: not a seed, the places are the same in every census.
_PLACE_ENTROPY = 20_100_401

#: The paragraph ``data/README.md`` carries about tenure (written by :func:`cocoviz.datasets.write_bundle`).
README_SECTION = """\
## Tenure: a group characteristic of the housing data

`cocoviz.datasets.tenure.tenure_table(groups, seed)` gives every household of a housing table (or
`Hierarchy`) a tenure, owner or renter, per county and size: owners ~ Binomial(count, r), with
r = expit(logit(rate by size) + county effect). The rate by size is 2010-like (1 person 56 %,
2: 72 %, 3: 64 %, 4: 67 %, 5: 65 %, 6: 61 %, 7 or more 57 %; about 65 % overall); the county
effect is a lasting place effect, N(0, 0.35) on the logit scale and the same in every census, plus
the census's own, N(0, 0.1). Deterministic from the seed; a county's draw does not depend on which
other counties are drawn. Its **previous census**
(`previous_census_tenure("housing-west")`) is the previous-census households (seed 1, households
+0.05 persons larger) with more owners (logit +0.2, about +4 points) and expected, not drawn,
counts: a public prior. Not stored in the bundle: it is drawn when needed (a fifth of a second
for `housing-west`). Used by `cocoviz.joint` (size × tenure tables) and experiment `tao-e7`.
"""


def _path_key(path: Sequence[str]) -> int:
    return zlib.crc32("\x1f".join(str(p) for p in path).encode("utf-8"))


def owner_rate(sizes: np.ndarray, shift: float = 0.0) -> np.ndarray:
    """r(s) = expit(logit(OWNER_RATE[min(max(s, 1), 7)]) + shift), elementwise.

    >>> owner_rate(np.array([0, 1, 2, 9])).round(2).tolist()
    [0.56, 0.56, 0.72, 0.57]
    """
    index = np.clip(np.asarray(sizes, np.int64), 1, 7) - 1
    return expit(logit(OWNER_RATE[index]) + shift)


def _county_shift(path: tuple[str, ...], seed: int) -> tuple[float, np.random.Generator]:
    """The county's place effect plus this census's effect, and the census's stream for the path."""
    key = (TENURE_KEY, _path_key(path))
    place = np.random.default_rng(np.random.SeedSequence(_PLACE_ENTROPY, spawn_key=key)).normal(0.0, PLACE_SD)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))
    return float(place + rng.normal(0.0, CENSUS_SD)), rng


def _leaf_frame(groups: Hierarchy | pd.DataFrame, levels: Sequence[str] | None) -> tuple[pd.DataFrame, list[str]]:
    """Level columns, ``size`` and ``count`` of every leaf, sorted (from a Hierarchy or a counts table)."""
    if isinstance(groups, Hierarchy):
        levels = list(groups.levels)
        rows = []
        for path in groups.nodes(groups.depth):
            sizes, counts = groups.node_runs(path)
            rows.append(pd.DataFrame({**dict(zip(levels, path)), "size": sizes, "count": counts}))
        frame = pd.concat(rows, ignore_index=True)
    elif isinstance(groups, pd.DataFrame):
        levels = [c for c in groups.columns if c not in ("size", "count")] if levels is None else list(levels)
        missing = [c for c in [*levels, "size", "count"] if c not in groups.columns]
        if missing:
            raise InputError(f"the groups table has no column(s) {missing}")
        frame = groups[[*levels, "size", "count"]].copy()
        for c in levels:
            frame[c] = frame[c].astype(str)
    else:
        raise ParameterError(f"groups must be a Hierarchy or a counts table, got {type(groups).__name__}")
    frame = frame[frame["count"] > 0]
    return frame.sort_values([*levels, "size"], kind="stable").reset_index(drop=True), levels


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"seed must be a whole number ≥ 0, got {seed!r}")
    return int(seed)


def _by_leaf(frame: pd.DataFrame, levels: list[str]):
    if not levels:
        yield (), frame.index.to_numpy()
        return
    for key, rows in frame.groupby(levels, sort=True, observed=True).indices.items():
        yield tuple(str(k) for k in (key if isinstance(key, tuple) else (key,))), rows


def tenure_table(
    groups: Hierarchy | pd.DataFrame, seed: int = 0, *, levels: Sequence[str] | None = None
) -> pd.DataFrame:
    """Owners and renters per leaf and size, drawn from the module's recipe (private data, like the sizes).

    Parameters
    ----------
    groups : a :class:`~cocoviz.hierarchy.Hierarchy` (its leaves' runs) or a counts table with the
        level columns, ``size`` and ``count`` (e.g. :func:`cocoviz.datasets.generate_housing`)
    seed : the census's seed (the bundled data is seed 0)
    levels : the level columns of a counts table (default: every column but ``size`` and ``count``)

    Returns
    -------
    DataFrame with the level columns (as text), ``size``, ``owners`` and ``renters`` (int64), one
    row per leaf and size, sorted; ``owners + renters`` is the leaf's count of that size.
    """
    seed = _check_seed(seed)
    frame, levels = _leaf_frame(groups, levels)
    sizes, counts = frame["size"].to_numpy(np.int64), frame["count"].to_numpy()
    if np.any(counts != np.round(counts)):
        raise InputError("tenure is drawn per household: counts must be whole numbers")
    owners = np.zeros(len(frame), np.int64)
    for path, rows in _by_leaf(frame, levels):
        shift, rng = _county_shift(path, seed)
        owners[rows] = rng.binomial(counts[rows].astype(np.int64), owner_rate(sizes[rows], shift))
    return frame[levels].assign(size=sizes, owners=owners, renters=counts.astype(np.int64) - owners)


def previous_tenure_table(
    groups: Hierarchy | pd.DataFrame,
    seed: int = PREVIOUS_SEED,
    *,
    owner_drift: float = OWNER_DRIFT,
    levels: Sequence[str] | None = None,
) -> pd.DataFrame:
    """A previous census's expected owners and renters (floats) per leaf and size: a public prior.

    ``groups`` is the previous census's households (e.g. :func:`previous_census_table`, whose
    counts may be fractional); the owner rate's logit is shifted by ``owner_drift`` and the
    census's own county effect is drawn with ``seed``.
    """
    seed = _check_seed(seed)
    frame, levels = _leaf_frame(groups, levels)
    sizes, counts = frame["size"].to_numpy(np.int64), frame["count"].to_numpy(np.float64)
    owners = np.zeros(len(frame))
    for path, rows in _by_leaf(frame, levels):
        shift, _ = _county_shift(path, seed)
        owners[rows] = counts[rows] * owner_rate(sizes[rows], shift + owner_drift)
    return frame[levels].assign(size=sizes, owners=owners, renters=counts - owners)


def previous_census_tenure(
    name: str = "housing-west",
    *,
    scale: float | None = None,
    seed: int = PREVIOUS_SEED,
    drift: float = DRIFT,
    owner_drift: float = OWNER_DRIFT,
) -> pd.DataFrame:
    """The previous census of a bundled housing dataset with tenure: sizes drifted, more owners (module)."""
    if not str(name).startswith("housing"):
        raise ParameterError(f"tenure is defined for the housing datasets only, got {name!r}")
    households = previous_census_table(name, scale=scale, seed=seed, drift=drift)
    return previous_tenure_table(households, seed, owner_drift=owner_drift)
