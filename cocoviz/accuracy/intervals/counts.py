"""Bands for a naive level (:mod:`cocoviz.accuracy.intervals.bands`): its noisy counts H[0..K] kept whole, bounds
from cell sums.

A naive node measures ``y = H + Z`` over ``n = K + 1`` cells (groups larger than K counted at K), ``Z``
i.i.d. of the plan's law at Δ = 2.  With whole tolerances (:func:`~cocoviz.accuracy.intervals.widths.half_widths`),
the event ``E = {-u_s ≤ y_s - H_s ≤ o_s for every s}`` has ``P(E) ≥ c`` exactly as for Hc.  Under E each
count lies in ``[max(0, y_s - o_s), min(G, y_s + u_s)] = [l_s, h_s]``, and since ``Σ_s H_s = G`` (public),

    Hc[j] = Σ_{s ≤ j} H_s  ∈  [max(Σ_{s≤j} l_s, G - Σ_{s>j} h_s),  min(Σ_{s≤j} h_s, G - Σ_{s>j} l_s)],

clipped to [0, G]; Hc is non-decreasing, so the running max of the lower bounds from the left and the
running min of the upper ones from the right hold too (crossed bounds, possible only off E, are swapped).
Unlike Hc's band, this one may hold the truth when E fails (it is not "exactly when"), so its coverage is
``P(E)`` or more; its width grows with j (a sum of per-cell widths), the price of measuring H, not Hc.

Kept whole because the bounds need every cell's value at a confidence chosen later: as much memory as
the level's measurement (int32 where it fits).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cocoviz.accuracy.intervals.widths import Widths

__all__ = ["LevelCounts", "counts_cumulative_bounds", "narrow"]


def narrow(values: np.ndarray) -> np.ndarray:
    """``values`` as int32 when every one fits, else int64: exact either way.

    >>> narrow(np.array([0, 2**31 - 1])).dtype, narrow(np.array([-(2**31) - 1])).dtype
    (dtype('int32'), dtype('int64'))
    """
    values = np.asarray(values)
    info = np.iinfo(np.int32)
    if values.size == 0 or (int(values.min()) >= info.min and int(values.max()) <= info.max):
        return values.astype(np.int32, copy=False)
    return values.astype(np.int64, copy=False)


@dataclass(frozen=True, eq=False)
class LevelCounts:
    """A naive level's noisy counts (DP outputs): node ``k``'s are ``values[ptr[k]:ptr[k+1]]``."""

    method: str
    cells: np.ndarray
    ptr: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, method: str, values: np.ndarray, ptr: np.ndarray) -> LevelCounts:
        ptr = np.asarray(ptr, np.int64)
        return cls(method, narrow(np.diff(ptr)), narrow(ptr), narrow(np.array(values, copy=True)))

    @classmethod
    def concat(cls, parts: Sequence[LevelCounts]) -> LevelCounts:
        """The counts of consecutive runs of nodes, joined in order."""
        if len(parts) == 1:
            return parts[0]
        bases = np.cumsum([0] + [int(p.ptr[-1]) for p in parts[:-1]])
        ptr = np.concatenate([[0]] + [p.ptr[1:].astype(np.int64) + b for p, b in zip(parts, bases)])
        values = np.concatenate([p.values.astype(np.int64, copy=False) for p in parts])
        return cls(parts[0].method, narrow(np.diff(ptr)), narrow(ptr), narrow(values))

    def node(self, k: int) -> np.ndarray:
        return self.values[self.ptr[k] : self.ptr[k + 1]]


def counts_cumulative_bounds(values: np.ndarray, widths: Widths, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on Hc[0..K] from one node's noisy H[0..K] (module docstring).

    >>> [v.tolist() for v in counts_cumulative_bounds(np.array([0, 3, 1]), Widths(3, 1), groups=4)]
    [[0, 2, 4], [1, 4, 4]]
    """
    i = np.arange(len(values))
    values = np.asarray(values, np.int64)
    cell_low = np.clip(values - widths.over(i), 0, groups)
    cell_high = np.clip(values + widths.under(i), 0, groups)
    below_low, below_high = np.cumsum(cell_low), np.cumsum(cell_high)
    above_low, above_high = below_low[-1] - below_low, below_high[-1] - below_high
    low = np.clip(np.maximum(below_low, groups - above_high), 0, groups)
    high = np.clip(np.minimum(below_high, groups - above_low), 0, groups)
    low, high = np.maximum.accumulate(low), np.minimum.accumulate(high[::-1])[::-1]
    return np.minimum(low, high), np.maximum(low, high)
