"""Representations of a count-of-counts histogram: H, Hc, Hg and (size, count) runs.

``H[j]`` is the number of groups of size ``j``; ``Hc`` its cumulative sum;
``Hg`` the group sizes sorted ascending (the ranked or unattributed
histogram).  Runs ``(sizes, counts)`` are the sparse form of H used
everywhere in the engine.

Examples
--------
>>> h = np.array([0, 2, 1, 0, 1])
>>> cumulative(h)
array([0, 2, 3, 3, 4])
>>> ranked(h)
array([1, 1, 2, 4])
>>> from_ranked(np.array([1, 1, 2, 4]))
array([0, 2, 1, 0, 1])
"""

from __future__ import annotations

import numpy as np

from cocoviz.errors import InputError

__all__ = ["cumulative", "from_cumulative", "ranked", "from_ranked", "to_runs", "from_runs", "pad"]


def cumulative(h: np.ndarray) -> np.ndarray:
    """Hc from H: ``Hc[j]`` = number of groups of size at most ``j``."""
    return np.cumsum(np.asarray(h))


def from_cumulative(hc: np.ndarray) -> np.ndarray:
    """H from Hc (inverse of :func:`cumulative`)."""
    hc = np.asarray(hc)
    return np.diff(hc, prepend=np.zeros(1, hc.dtype))


def ranked(h: np.ndarray) -> np.ndarray:
    """Hg from H: the group sizes, sorted ascending (length G)."""
    h = np.asarray(h)
    return np.repeat(np.arange(len(h)), h)


def from_ranked(hg: np.ndarray, length: int | None = None) -> np.ndarray:
    """H from Hg (group sizes in any order); ``length`` pads with empty sizes."""
    hg = np.asarray(hg, np.int64)
    if hg.size and hg.min() < 0:
        raise InputError("group sizes must be non-negative")
    return np.bincount(hg, minlength=length or 0)


def to_runs(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The non-empty sizes of H and their counts."""
    h = np.asarray(h)
    sizes = np.flatnonzero(h)
    return sizes.astype(np.int64), h[sizes]


def from_runs(sizes: np.ndarray, counts: np.ndarray, length: int | None = None) -> np.ndarray:
    """Dense H from runs; sizes may repeat (their counts add up)."""
    sizes = np.asarray(sizes, np.int64)
    n = max(int(sizes.max()) + 1 if sizes.size else 1, length or 0)
    return np.bincount(sizes, weights=counts, minlength=n).astype(np.int64)


def pad(h: np.ndarray, length: int) -> np.ndarray:
    """H extended with empty sizes up to ``length`` cells."""
    h = np.asarray(h)
    if len(h) >= length:
        return h
    return np.concatenate([h, np.zeros(length - len(h), h.dtype)])
