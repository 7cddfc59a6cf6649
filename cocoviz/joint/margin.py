"""The tenure margin made consistent across the hierarchy: post-processing of the noisy owner counts.

**Top-down** (the default): first the least-squares estimate of O at every node from all the
noisy counts (Hay et al.'s two passes on a tree: bottom up, each node's own count combined with
its children's sum by inverse variance; top down, each parent's difference shared among its
children in proportion to their variances), then integers top-down: the root's O rounded into
[0, G]; every parent's O split over its children within ``0 ≤ O_c ≤ G_c`` (a shift of the
least-squares values found by bisection, then largest remainders).  Every O is then a whole
number in [0, G], renters = G − O ≥ 0, and children sum to their parent at every level.

**None**: each node's noisy count rounded into [0, G] on its own (levels disagree).

Both read only the measurements and the public G.

>>> split_total(5, np.array([1.2, 2.9, 0.4]), np.array([3, 2, 4])).tolist()
[2, 2, 1]
"""

from __future__ import annotations

import numpy as np

from cocoviz.errors import ParameterError
from cocoviz.joint.measure import TenureMeasurements

__all__ = ["CONSISTENCY", "split_total", "least_squares_owners", "consistent_owners"]

#: How the tenure margin may be post-processed.
CONSISTENCY = ("top-down", "none")
_VARIANCE_FLOOR = 1e-12


def _shift_into(total: float, values: np.ndarray, caps: np.ndarray) -> np.ndarray:
    """``clip(values − τ, 0, caps)`` with τ such that the sum is ``total`` (0 ≤ total ≤ Σ caps)."""
    lo, hi = float(np.min(values - caps, initial=0.0)) - 1.0, float(np.max(values, initial=0.0)) + 1.0
    for _ in range(64):  # the sum decreases in τ; 64 halvings of a range below 2**62 reach 1e-7
        mid = (lo + hi) / 2
        if np.clip(values - mid, 0, caps).sum() > total:
            lo = mid
        else:
            hi = mid
    return np.clip(values - (lo + hi) / 2, 0, caps)


def split_total(total: int, values: np.ndarray, caps: np.ndarray) -> np.ndarray:
    """Whole numbers ``0 ≤ x ≤ caps`` summing to ``total``, close to ``values`` (shift, then largest remainders)."""
    caps = np.asarray(caps, np.int64)
    total = int(total)
    if not 0 <= total <= int(caps.sum()):
        raise ParameterError(f"cannot split {total} within caps summing to {int(caps.sum())}")
    real = _shift_into(total, np.asarray(values, np.float64), caps.astype(np.float64))
    base = np.minimum(np.floor(real + 1e-9).astype(np.int64), caps)
    extra = total - int(base.sum())
    room = np.flatnonzero(base < caps)
    if extra > 0:
        order = room[np.argsort(-(real[room] - base[room]), kind="stable")]
        base[order[:extra]] += 1
    elif extra < 0:  # only from the 1e-9 guard: take back from the smallest fractions
        order = np.flatnonzero(base > 0)[np.argsort(real[base > 0] - base[base > 0], kind="stable")]
        base[order[:-extra]] -= 1
    return base


def least_squares_owners(meas: TenureMeasurements) -> list[np.ndarray]:
    """The least-squares O of every node given every noisy count (two passes; real numbers)."""
    shape = meas.shape
    depth = shape.depth
    # A floor: at ε near 1e6 the noise variance underflows to 0, and the weights 1/V must stay finite.
    var = [np.full(len(shape.paths[lv]), max(meas.variance(lv), _VARIANCE_FLOOR)) for lv in range(depth + 1)]
    z = [meas.owners[lv].astype(np.float64) for lv in range(depth + 1)]
    zv = [v.copy() for v in var]
    for level in range(depth, 0, -1):  # bottom up: combine each parent with its children's sum
        parent = shape.parent_index(level)
        n_up = len(shape.paths[level - 1])
        child_sum = np.bincount(parent, weights=z[level], minlength=n_up)
        child_var = np.bincount(parent, weights=zv[level], minlength=n_up)
        w_own, w_kids = 1.0 / var[level - 1], 1.0 / child_var
        z[level - 1] = (z[level - 1] * w_own + child_sum * w_kids) / (w_own + w_kids)
        zv[level - 1] = 1.0 / (w_own + w_kids)
    out = [z[0]]
    for level in range(1, depth + 1):  # top down: share each parent's difference by variance
        parent = shape.parent_index(level)
        n_up = len(shape.paths[level - 1])
        gap = out[level - 1] - np.bincount(parent, weights=z[level], minlength=n_up)
        share = zv[level] / np.bincount(parent, weights=zv[level], minlength=n_up)[parent]
        out.append(z[level] + share * gap[parent])
    return out


def consistent_owners(meas: TenureMeasurements, consistency: str = "top-down") -> list[np.ndarray]:
    """Whole-number O of every node in [0, G], level by level (module docstring)."""
    if not isinstance(meas, TenureMeasurements):
        raise ParameterError(f"need TenureMeasurements (noisy owner counts), got {type(meas).__name__}")
    if consistency not in CONSISTENCY:
        raise ParameterError(f"consistency must be one of {CONSISTENCY}, got {consistency!r}")
    shape = meas.shape
    groups = [shape.group_counts(level) for level in range(shape.depth + 1)]
    if consistency == "none":
        return [np.clip(meas.owners[level], 0, groups[level]).astype(np.int64) for level in range(shape.depth + 1)]
    ls = least_squares_owners(meas)
    out = [np.clip(np.rint(ls[0]), 0, groups[0]).astype(np.int64)]
    for level in range(1, shape.depth + 1):
        parent = shape.parent_index(level)
        owners = np.zeros(len(parent), np.int64)
        for k, total in enumerate(out[level - 1]):
            kids = np.flatnonzero(parent == k)
            owners[kids] = split_total(int(total), ls[level][kids], groups[level][kids])
        out.append(owners)
    return out
