"""Sort orders of a level's runs for the matching and the merge: one int64 key and one stable sort where it
fits, instead of multi-key lexsorts (most of the consistency step's time on a level of millions of blocks)."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["parent_size_order", "joint_key", "run_order"]


def parent_size_order(parent_of_run: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The order of runs by (parent, size, child, position).

    Runs come in child order (``node_ids``), so a stable sort by (parent, size) alone keeps equal pairs in
    (child, position) order: one int64 key and one stable sort when it fits, instead of a four-key lexsort
    (most of the consistency step's time on a level of millions of blocks).
    """
    if len(sizes) == 0:
        return np.zeros(0, np.int64)
    width = int(sizes.max()) + 1
    if int(sizes.min()) >= 0 and int(parent_of_run.max()) < (2**62) // width:
        return np.argsort(parent_of_run.astype(np.int64) * width + sizes, kind="stable")
    return np.lexsort((np.arange(len(sizes)), sizes, parent_of_run))


def joint_key(major: np.ndarray, minor: np.ndarray) -> tuple[np.ndarray, ...]:
    """Sort keys, least significant first, ordering by (major, minor): one int64 key when it fits (a lexsort
    pass fewer), else the two."""
    if len(minor) and int(minor.min()) >= 0:
        width = int(minor.max()) + 1
        if int(major.max()) < (2**62) // width:
            return (major.astype(np.int64) * width + minor,)
    return (minor, major)


def run_order(owner: np.ndarray, size: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """The stable order by (owner, size, variance) of ``np.lexsort((variance, size, owner))``, with the variances
    ranked by one hash pass (a level holds few distinct ones) instead of a float sort of every run, and the
    three keys joined into one int64 when they fit."""
    codes, uniques = pd.factorize(variance, use_na_sentinel=False)
    rank = np.empty(len(uniques), np.int64)
    rank[np.argsort(uniques, kind="stable")] = np.arange(len(uniques))
    keys = (rank[codes], *joint_key(owner, size))
    if len(keys) == 2:
        keys = joint_key(keys[1], keys[0])
    return np.argsort(keys[0], kind="stable") if len(keys) == 1 else np.lexsort(keys)
