"""Neighbouring histograms for brute-force privacy checks: ``h[s]`` is the number of groups of size ``s``.

>>> [g.tolist() for g in record_neighbours(np.array([0, 1]), 1)]
[[1, 1], [0, 2], [0, 0]]
>>> [g.tolist() for g in person_neighbours(np.array([0, 1]))]
[[0, 0, 1], [1, 0, 0]]
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def record_neighbours(h: np.ndarray, largest: int) -> Iterator[np.ndarray]:
    """Every histogram one group away: add a group of any size 0..largest, or remove any existing group."""
    h = np.append(h, np.zeros(max(0, largest + 1 - len(h)), np.int64))
    for s in range(largest + 1):
        out = h.copy()
        out[s] += 1
        yield out
        if h[s]:
            out = h.copy()
            out[s] -= 1
            yield out


def person_neighbours(h: np.ndarray) -> Iterator[np.ndarray]:
    """Every histogram one person away: a person joins any group, or leaves any non-empty group."""
    h = np.append(h, 0)
    for s in np.flatnonzero(h):
        for step in (1, -1) if s > 0 else (1,):
            out = h.copy()
            out[s] -= 1
            out[s + step] += 1
            yield out
