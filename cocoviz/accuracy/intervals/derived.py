"""What a band on Hc says beyond Hc itself: bounds on the counts H[j], on any range of sizes, on the persons in
groups up to each size, on the emd of the release, and the frame that states them all for one node.

Each is a function of the cumulative bounds ``low ≤ Hc ≤ high`` alone (and of the released values), so each holds
whenever the band does, simultaneously over all sizes: the band's event implies every bound here.  Used by the
per-cell bands (:mod:`cocoviz.accuracy.intervals.bands`) and the bands over runs
(:mod:`cocoviz.accuracy.intervals.multiscale`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["count_bounds", "range_bounds", "persons_bounds", "emd_bound", "band_frame"]


def count_bounds(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on H[j] (groups of size exactly j) from bounds on Hc, for every j."""
    return range_bounds(low, high, np.arange(len(low)), np.arange(len(low)))


def range_bounds(low: np.ndarray, high: np.ndarray, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on the groups of sizes ``lo..hi`` (``Hc[hi] - Hc[lo-1]``), simultaneous over all ranges.

    >>> [int(v) for v in range_bounds(np.array([0, 2, 4]), np.array([1, 3, 4]), 1, 2)]
    [3, 4]
    """
    lo, hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)
    below_low = np.where(lo > 0, low[np.maximum(lo - 1, 0)], 0)
    below_high = np.where(lo > 0, high[np.maximum(lo - 1, 0)], 0)
    return np.maximum(low[hi] - below_high, 0), high[hi] - below_low


def persons_bounds(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on P(j), the persons in groups of size ≤ j, for every j: ``P(j) = Σ_{s<j} (Hc[j] - Hc[s])``.

    >>> persons_bounds(np.array([0, 2, 3, 4]), np.array([0, 2, 3, 4]))  # exact Hc: H = [0, 2, 1, 1]
    (array([0, 2, 4, 7]), array([0, 2, 4, 7]))
    """
    j = np.arange(len(low), dtype=np.int64)
    prefix_low = np.concatenate([[0], np.cumsum(low, dtype=np.int64)])
    prefix_high = np.concatenate([[0], np.cumsum(high, dtype=np.int64)])
    # Each term Hc[j] - Hc[s] is ≥ max(0, low_j - high_s); high is non-decreasing, so those s < j with
    # high_s < low_j are the first t of them.
    t = np.minimum(np.searchsorted(high, low, side="left"), j)
    # P is non-decreasing in j: so are its bounds' envelopes.
    lower = np.maximum.accumulate(t * low - prefix_high[t])
    upper = np.minimum.accumulate((j * high - prefix_low[j])[::-1])[::-1]
    return lower, upper


def emd_bound(low: np.ndarray, high: np.ndarray, released: np.ndarray) -> int:
    """A bound on ``emd(truth, released) = Σ_j |Hc[j] - released_c[j]|`` from the band on Hc.

    ``released`` is the released Hc; the shorter vector is padded with its last value (G).
    """
    n = max(len(low), len(released))
    low, high, released = (np.pad(v, (0, n - len(v)), mode="edge") for v in (low, high, released))
    return int(np.maximum(np.abs(low - released), np.abs(high - released)).sum())


def band_frame(low: np.ndarray, high: np.ndarray, sizes: np.ndarray, counts: np.ndarray) -> tuple[pd.DataFrame, int]:
    """The frame of a node's band (cumulative, count and persons bounds per size, beside the released values) from
    its cumulative bounds ``low``/``high`` and its released runs, and the band's bound on the emd.

    Examples
    --------
    >>> frame, emd = band_frame(np.array([0, 1]), np.array([2, 3]), np.array([0, 1]), np.array([1, 2]))
    >>> frame[["size", "count_low", "count", "count_high"]].to_numpy().tolist(), int(emd)
    ([[0, 0, 1, 2], [1, 0, 2, 3]], 3)
    """
    import pandas as pd  # imported when used: import cocoviz does not load pandas

    sizes, counts = np.asarray(sizes, np.int64), np.asarray(counts, np.int64)
    released_h = np.zeros(max(len(low), int(sizes[-1]) + 1 if sizes.size else 1), np.int64)
    released_h[sizes] = counts
    released = np.cumsum(released_h)
    emd = emd_bound(low, high, released)
    n = len(released)
    low, high = (np.pad(v, (0, n - len(v)), mode="edge") for v in (low, high))
    count_low, count_high = count_bounds(low, high)
    persons_low, persons_high = persons_bounds(low, high)
    size = np.arange(n, dtype=np.int64)
    frame = pd.DataFrame(
        {
            "size": size,
            "cumulative_low": low,
            "cumulative_high": high,
            "cumulative": released,
            "count_low": count_low,
            "count_high": count_high,
            "count": released_h,
            "persons_low": persons_low,
            "persons_high": persons_high,
            "persons": np.cumsum(size * released_h),
        }
    )
    return frame, emd
