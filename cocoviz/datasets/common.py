"""What the generators share: the paper's figures, argument checks, random streams, frame helpers.

Every generator is a pure function of ``(scale, seed)``: each part (a
state, the taxi fleet) draws from its own stream, keyed by the seed, the
dataset and the part, so a part can be generated alone and a regional cut
equals the same states of the national data for the same seed and scale.

Generators return the compact per-leaf counts form (level columns,
``size``, ``count``) and never one row per group.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from cocoviz.datasets.geography import State, states
from cocoviz.errors import ParameterError

#: Beside the paper's figures, the steps the dataset generators share.
__all__ = [
    "PAPER_FIGURES",
    "PAPER_MAX_SIZE",
    "check_scale",
    "check_seed",
    "rng_stream",
    "counts_frame",
    "aggregate_leaves",
    "select_states",
    "split_at_least_one",
    "states_frame",
]

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
#: The smallest scale: below it the paper's datasets keep less than a group or so per region, and the
#: comparison with the paper's figures divides by almost nothing.
_MIN_SCALE = 1e-6

#: One part of a national table: county index, size and count of its per-leaf runs.
Runs = tuple[np.ndarray, np.ndarray, np.ndarray]


def check_scale(scale: float) -> float:
    """``scale`` as a float in [1e-6, 10] (bools and text refused).

    Examples
    --------
    >>> check_scale(0.5)
    0.5
    >>> check_scale(0)
    Traceback (most recent call last):
    ...
    cocoviz.errors.ParameterError: scale must be in [1e-06, 10], got 0.0
    """
    # True would pass as 1.0 (the full scale) and "0.1" as a number: a scale is a number, never a flag or text.
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, (int, float, np.integer, np.floating)):
        raise ParameterError(f"scale must be a number, got {scale!r}")
    try:
        scale = float(scale)
    except OverflowError:
        raise ParameterError(f"scale must be in [{_MIN_SCALE:g}, {_MAX_SCALE:g}], got {scale!r}") from None
    if not (math.isfinite(scale) and _MIN_SCALE <= scale <= _MAX_SCALE):
        raise ParameterError(
            f"scale must be in [{_MIN_SCALE:g}, {_MAX_SCALE:g}], got {scale!r}"
            + (" (a smaller scale leaves less than one group of the paper's data)" if 0 < scale < _MIN_SCALE else "")
        )
    return scale


def check_seed(seed: int) -> int:
    """``seed`` as a non-negative int (bools refused)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def rng_stream(seed: int, dataset_key: int, *key: int) -> np.random.Generator:
    """An independent stream per (seed, dataset, part), so parts can be generated alone."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(dataset_key, *key)))


def counts_frame(level_values: dict[str, np.ndarray], sizes: np.ndarray, counts: np.ndarray) -> pd.DataFrame:
    """The per-leaf counts table, labels as categoricals (small in memory and in Parquet)."""
    keep = counts > 0
    frame = {k: pd.Categorical(np.asarray(v)[keep]) for k, v in level_values.items()}
    frame["size"] = sizes[keep].astype(np.int64)
    frame["count"] = counts[keep].astype(np.int64)
    return pd.DataFrame(frame)


def aggregate_leaves(leaf: np.ndarray, sizes: np.ndarray, counts: np.ndarray | None = None) -> Runs:
    """Sum counts of equal (leaf, size) pairs: the per-leaf runs.

    Examples
    --------
    >>> leaf, size, count = aggregate_leaves(np.array([1, 0, 1]), np.array([2, 5, 2]))
    >>> leaf.tolist(), size.tolist(), count.tolist()
    ([0, 1], [5, 2], [1, 2])
    """
    width = int(sizes.max(initial=0)) + 1
    uniq, inverse = np.unique(leaf.astype(np.int64) * width + sizes, return_inverse=True)
    # float64 weights are exact for counts below 2**53.
    total = np.bincount(inverse, weights=counts, minlength=len(uniq))
    return uniq // width, uniq % width, np.rint(total).astype(np.int64)


def select_states(only: Sequence[str] | None) -> list[tuple[int, State]]:
    """(index, state) of the states named by postal code, in national order (all of them for None)."""
    chosen = [(k, s) for k, s in enumerate(states()) if only is None or s.postal in only]
    if only is not None and len(chosen) != len(set(only)):
        unknown = sorted(set(only) - {s.postal for _, s in chosen})
        raise ParameterError(f"unknown state code(s) {unknown}")
    return chosen


def split_at_least_one(rng: np.random.Generator, total: int, weights: np.ndarray) -> np.ndarray:
    """``total`` items over bins in proportion to ``weights``, every bin getting at least one.

    A county of no households would not look like the data (a region of G = 0
    is allowed, but counties have households), so every county keeps a group
    even at tiny scales.
    """
    n = len(weights)
    return 1 + rng.multinomial(max(total - n, 0), weights)


def states_frame(per_state: Callable[[int, State], Runs], only_states: Sequence[str] | None) -> pd.DataFrame:
    """The ``state``, ``county``, ``size``, ``count`` table of the chosen states.

    Parameters
    ----------
    per_state : callable
        ``per_state(k, state)`` → county index, size and count of the runs of
        state number ``k`` (its index among all 52).
    only_states : sequence of str or None
        Postal codes to generate (None: all 52).
    """
    parts = []
    for k, state in select_states(only_states):
        county, sizes, counts = per_state(k, state)
        names = np.array(state.counties, dtype=object)
        parts.append((np.full(len(sizes), state.postal, dtype=object), names[county], sizes, counts))
    return counts_frame(
        {"state": np.concatenate([p[0] for p in parts]), "county": np.concatenate([p[1] for p in parts])},
        np.concatenate([p[2] for p in parts]),
        np.concatenate([p[3] for p in parts]),
    )
