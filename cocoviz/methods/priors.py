"""Prior-aware distribution estimation (Tao, Bater & Machanavajjhala, "IDE") as exact post-processing.

Given noisy answers ỹ of a workload of disjoint-block queries and a **public** prior p, IDE looks
for the distribution q whose answers Wq are L1-closest to ỹ and, among those, closest to p in
relative entropy KL(q‖p).  Everything here reads only released numbers and the public prior, so
it is post-processing: it costs no privacy budget.

* :func:`simplex_l1_fit` — stage 1 of the paper for one partial workload: the L1 fit of noisy
  answers onto ``{x ≥ 0, Σx = total}`` (or ``Σx ≤ total``).  The Euclidean simplex projection
  is always one of the L1 minimisers, and it is the one returned.
* :func:`update` — the distribution update f(p; W_s, y_s) of Definition 3.1, all four cases.
  By Theorem 3.1 it is the KL projection of p onto ``{q : W_s q = y_s, Σq = 1}``.
* :func:`ide` — the two stages: the paper's stage-1 linear program over all partitions at once
  (or Algorithm 1's per-partition fits), then updates over the partitions in a fixed cyclic
  order for T updates, with a per-update report of ‖Wq − ỹ‖₁ and KL(q‖p).
* :func:`share_buckets` — integer counts of groups shared out from coarse buckets by the prior
  (largest remainders), keeping every bucket total and G exactly.

A *partition* (the paper's partial workload with L1 norm 1) is a list of disjoint *blocks*,
each a list of cell indices; cells in no block form the implicit rest.

**The prior.**  Plain public numbers only: a 1-D numpy array, a list or tuple of real numbers,
or a mapping {cell index: number} (missing cells are 0).  A :class:`cocoviz.Hierarchy`, a data
frame or any other object is refused with :class:`~cocoviz.errors.PrivacyError`: a prior taken
from the data being protected would break the privacy claim.  This guard catches the objects
that hold true data; it cannot tell where a plain array came from, so passing one asserts that
it is public.  Negative or non-finite values raise :class:`~cocoviz.errors.ParameterError`; a
prior that does not sum to 1 is **normalised** (counts from a public table work as they are).

>>> q, report = ide([0.25, 0.25, 0.25, 0.25], [[[0, 1], [2, 3]], [[0, 2], [1, 3]]],
...                 [[0.6, 0.4], [0.5, 0.5]], iterations=2)      # consistent targets: both stages agree
>>> q.round(3).tolist(), round(float(report["kl"].iloc[-1]), 7)
([0.3, 0.3, 0.2, 0.2], 0.0201355)
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from cocoviz.core.memory import check_cells
from cocoviz.errors import ParameterError, PrivacyError
from cocoviz.methods.ide_lp import block_matrix, stage1_lp

__all__ = [
    "simplex_l1_fit",
    "update",
    "ide",
    "share_buckets",
    "marginal_blocks",
    "kl_divergence",
    "as_prior",
    "is_real_number",
]

#: Tolerance on target sums (they come out of floating-point fits).
TOL = 1e-9

Blocks = Sequence[Sequence[int]]


def is_real_number(v: object) -> bool:
    """Whether ``v`` is a real number, not a bool.

    >>> is_real_number(0.5), is_real_number(True)
    (True, False)
    """
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def as_prior(prior: object, min_size: int = 0) -> np.ndarray:
    """The prior as a float array summing to 1 (see the module's docstring for what is accepted)."""
    from cocoviz.hierarchy import Hierarchy

    if isinstance(prior, Hierarchy):
        raise PrivacyError(
            "a Hierarchy holds the true data: a prior must be public numbers (a published "
            "release, a public survey), never the data being protected"
        )
    plain = "a prior must be a plain 1-D array, list, tuple or mapping {cell: number} of public numbers"
    if isinstance(prior, np.ndarray) and prior.dtype.kind in "iuf":
        values = prior.astype(float)
    elif isinstance(prior, (list, tuple)) and all(is_real_number(v) for v in prior):
        values = np.asarray(prior, dtype=float)
    elif isinstance(prior, Mapping) and all(
        isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= 0 and is_real_number(v)
        for k, v in prior.items()
    ):
        cells = max([min_size, *(int(k) + 1 for k in prior)])
        check_cells(cells, f"a prior over sizes 0..{cells - 1:,}", "give only sizes up to the bound K")
        values = np.zeros(cells)
        for k, v in prior.items():
            values[int(k)] = float(v)
    else:
        raise PrivacyError(
            f"{plain}, got {type(prior).__name__}; if it holds public numbers, pass them as a numpy array"
        )
    if values.ndim != 1 or values.size == 0:
        raise ParameterError(f"a prior must be 1-D and non-empty, got shape {values.shape}")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ParameterError("a prior must be finite and non-negative")
    total = values.sum()
    if total <= 0:
        raise ParameterError("a prior must have positive total mass")
    return values / total


def _labels(blocks: Blocks, size: int, what: str = "block") -> np.ndarray:
    """Block id of every cell (-1 for cells in no block); the blocks must be non-empty and disjoint."""
    labels = np.full(size, -1, dtype=np.int64)
    for b, block in enumerate(blocks):
        cells = np.asarray(block)
        if cells.ndim != 1 or cells.size == 0 or cells.dtype.kind not in "iu":
            raise ParameterError(f"{what} {b} must be a non-empty list of cell indices")
        if cells.min() < 0 or cells.max() >= size:
            raise ParameterError(f"{what} {b} has a cell outside 0..{size - 1}")
        if np.any(labels[cells] >= 0) or np.unique(cells).size != cells.size:
            raise ParameterError(f"{what} {b} overlaps another {what} of its partition (or repeats a cell)")
        labels[cells] = b
    return labels


def _check_partition(blocks: object, what: str = "a partition") -> None:
    """Refuse what is not a list of blocks, each a list (or 1-D array) of whole cell indices."""
    if isinstance(blocks, (str, bytes)) or not isinstance(blocks, (Sequence, np.ndarray)):
        raise ParameterError(f"{what} must be a list of blocks (lists of cell indices), got {type(blocks).__name__}")
    for b, block in enumerate(blocks):
        try:
            cells = np.asarray(block)
        except (TypeError, ValueError):
            cells = np.asarray([None])
        if cells.ndim != 1 or (cells.size and cells.dtype.kind not in "iu"):  # an empty block: _labels says so
            raise ParameterError(f"block {b} of {what} must be a list of whole cell indices, got {block!r}")


def _max_cell(*partitions: Blocks) -> int:
    for s, part in enumerate(partitions):
        _check_partition(part, f"partition {s}")
    cells = [int(np.max(b)) for part in partitions for b in part if np.size(b)]
    return max(cells, default=-1) + 1


def _floats(values: object, what: str) -> np.ndarray:
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(f"{what} must be numbers, got {values!r}") from None


def _as_targets(targets: object, n: int, what: str = "targets") -> np.ndarray:
    y = _floats(targets, what)
    if y.shape != (n,) or not np.all(np.isfinite(y)):
        raise ParameterError(f"{what} must be {n} finite numbers, one per block, got shape {y.shape}")
    return y


def simplex_l1_fit(y: object, total: float = 1.0, *, at_most: bool = False) -> np.ndarray:
    """The L1-closest point to ``y`` with ``x ≥ 0`` and ``Σx = total`` (``Σx ≤ total`` with ``at_most``).

    The Euclidean projection onto the simplex is returned: it is always an L1 minimiser.  Proof:
    for any feasible x, ``‖x − y‖₁ ≥ N + |total − S|`` with N the sum of the negative parts of y
    and S the sum of its positive parts.  The projection ``max(y − τ, 0)`` moves every entry in
    one direction (down when S ≥ total, τ ≥ 0; up otherwise), so it attains the bound.  With
    ``at_most`` the bound is ``N + max(S − total, 0)``: clipping attains it when S ≤ total, the
    projection onto ``Σx = total`` otherwise.

    Parameters
    ----------
    y : 1-D finite numbers (noisy answers of a partial workload)
    total : the mass to fit (≥ 0)
    at_most : fit onto ``Σx ≤ total`` (a partition that does not cover the domain, Algorithm 1)

    Returns
    -------
    numpy.ndarray of floats, same length as ``y``

    Examples
    --------
    >>> simplex_l1_fit([0.7, -0.1, 0.6]).round(3).tolist()
    [0.55, 0.0, 0.45]
    >>> simplex_l1_fit([0.2, -0.1, 0.3], at_most=True).tolist()
    [0.2, 0.0, 0.3]
    """
    v = _floats(y, "y")
    if v.ndim != 1 or not np.all(np.isfinite(v)):
        raise ParameterError("y must be a 1-D array of finite numbers")
    if not (is_real_number(total) and np.isfinite(total) and total >= 0):
        raise ParameterError(f"total must be finite and ≥ 0, got {total}")
    if at_most and np.clip(v, 0, None).sum() <= total:
        return np.clip(v, 0, None)
    if total == 0:
        return np.zeros_like(v)
    if v.size == 0:
        raise ParameterError("no cells to hold a positive total")
    u = np.sort(v)[::-1]
    excess = np.cumsum(u) - total
    active = np.flatnonzero(u - excess / np.arange(1, v.size + 1) > 0)
    rho = active[-1] if active.size else 0  # none only when total underflows against u[0]
    return np.maximum(v - excess[rho] / (rho + 1), 0.0)


def _update(p: np.ndarray, labels: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Definition 3.1 on checked arrays (``labels`` from :func:`_labels`, ``y`` one target per block)."""
    covered = labels >= 0
    lab = labels[covered]
    mass = np.bincount(lab, weights=p[covered], minlength=y.size).astype(np.float64)  # int64 when no block
    width = np.bincount(lab, minlength=y.size)
    q = np.empty_like(p)
    m = mass[lab]
    share = np.divide(p[covered], m, out=np.zeros_like(m), where=m > 0)  # ≤ 1: no overflow on tiny masses
    q[covered] = np.where(
        m > 0,
        share * y[lab],  # case 1
        y[lab] / np.maximum(width[lab], 1),
    )  # case 2: uniform
    rest = max(1.0 - float(y.sum()), 0.0)
    free = ~covered
    if free.any():
        free_mass = float(p[free].sum())
        q[free] = p[free] / free_mass * rest if free_mass > 0 else rest / free.sum()  # cases 3, 4
    return q


def update(prior: object, blocks: Blocks, targets: object) -> np.ndarray:
    """The distribution update f(p; W_s, y_s) of Definition 3.1: the least-KL distribution with the targets.

    For a cell j in block i with prior block mass m_i: ``q[j] = p[j] y_i / m_i`` if m_i > 0 (case 1),
    else ``y_i / |block i|`` (case 2: the target spread uniformly).  The cells in no block share the
    remaining mass ``1 − Σy`` in proportion to the prior (case 3), or uniformly when the prior has no
    mass there (case 4).  A zero target zeroes its cells.  When the prior is positive wherever q is,
    q is the KL projection of p onto ``{W_s q = y_s, Σq = 1}`` (Theorem 3.1); cases 2 and 4 put mass
    where the prior has none, so KL(q‖p) is infinite there and the uniform spread is the
    maximum-entropy choice.

    Parameters
    ----------
    prior : public numbers (see the module); normalised to sum to 1
    blocks : disjoint lists of cell indices (one partition)
    targets : one mass per block, ≥ 0, summing to ≤ 1 (to 1 when the blocks cover every cell);
        fit noisy answers with :func:`simplex_l1_fit` first

    Returns
    -------
    numpy.ndarray, the updated distribution (sums to 1)

    Examples
    --------
    >>> update([0.5, 0.3, 0.2], [[0]], [0.2]).round(12).tolist()          # cases 1 and 3
    [0.2, 0.48, 0.32]
    >>> update([1, 0, 0], [[0]], [0.4]).round(12).tolist()                # case 4
    [0.4, 0.3, 0.3]
    >>> update([0.9, 0.1, 0.0, 0.0], [[0, 1], [2, 3]], [0.5, 0.5]).round(12).tolist()   # case 2
    [0.45, 0.05, 0.25, 0.25]
    """
    p = as_prior(prior, _max_cell(blocks))
    labels = _labels(blocks, p.size)
    y = _as_targets(targets, len(blocks))
    if np.any(y < 0) or y.sum() > 1 + TOL:
        raise ParameterError(
            f"targets must be ≥ 0 with sum ≤ 1, got sum {y.sum():.6g}; fit noisy answers with simplex_l1_fit first"
        )
    if np.all(labels >= 0) and abs(y.sum() - 1) > TOL:
        raise ParameterError(f"the blocks cover every cell, so the targets must sum to 1, got {y.sum():.6g}")
    return _update(p, labels, y)


def kl_divergence(q: object, p: object) -> float:
    """KL(q‖p) = Σ q log(q/p) in nats (0 log 0 = 0; infinite where q > 0 = p).

    >>> round(kl_divergence([0.3, 0.3, 0.2, 0.2], [0.25] * 4), 7)
    0.0201355
    """
    from scipy.special import rel_entr  # deferred: SciPy costs a fifth of a second at `import cocoviz`

    return float(rel_entr(np.asarray(q, dtype=float), np.asarray(p, dtype=float)).sum())


def marginal_blocks(shape: Sequence[int], axes: Sequence[int]) -> list[np.ndarray]:
    """The partition of a row-major (C order) domain of ``shape`` that answers its marginal on ``axes``.

    One block per cell of the marginal, in row-major order of the marginal.

    >>> [b.tolist() for b in marginal_blocks((2, 2), [0])], [b.tolist() for b in marginal_blocks((2, 2), [1])]
    ([[0, 1], [2, 3]], [[0, 2], [1, 3]])
    """
    shape = tuple(int(s) for s in shape)
    axes = [int(a) for a in axes]
    if not shape or min(shape) < 1 or len(set(axes)) != len(axes) or not all(0 <= a < len(shape) for a in axes):
        raise ParameterError(f"bad marginal: shape {shape}, axes {axes}")
    coords = np.indices(shape).reshape(len(shape), -1)
    key = (
        np.ravel_multi_index(tuple(coords[axes]), [shape[a] for a in axes])
        if axes
        else np.zeros(coords.shape[1], dtype=np.int64)
    )
    n = int(np.prod([shape[a] for a in axes]))
    return [np.flatnonzero(key == k) for k in range(n)]


def _answers(q: np.ndarray, labels: np.ndarray, n: int) -> np.ndarray:
    covered = labels >= 0
    return np.bincount(labels[covered], weights=q[covered], minlength=n)


def ide(
    prior: object,
    partitions: Sequence[Blocks],
    targets: Sequence[object],
    iterations: int,
    *,
    stage1: str = "lp",
    reduce_domain: bool = False,
) -> tuple[np.ndarray, pd.DataFrame]:
    """Tao et al.'s two-stage estimator: an L1 fit of the noisy answers, then the least-KL distribution.

    **Stage 1.** ``stage1="lp"`` (the paper's eq. 2): one linear program over all partitions at once,
    ``y* = W z*`` with z* a distribution minimising ``Σ_s ‖W_s z − ỹ_s‖₁``
    (:func:`cocoviz.methods.ide_lp.stage1_lp`, HiGHS), so the targets are the answers of one
    distribution and the L1 misfit is the least any distribution has; among the optima, the one
    nearest (L1) to the per-partition fits below (so a single partition's fit is kept as it is).  ``stage1="partition"``
    (Algorithm 1's fit): each partition's targets are fit alone by :func:`simplex_l1_fit` (to sum 1
    if the partition covers the domain, to at most 1 otherwise); on overlapping partitions the fits
    may contradict one another and the updates then cycle above the optimum.

    **Stage 2.** Update t (t = 1..T) uses partition ``(t − 1) mod len(partitions)`` and
    :func:`update`: iterative proportional fitting from the prior toward the targets.  With the LP's
    targets (consistent and feasible) it converges to the I-projection of the prior onto
    ``{q : W q = y*}`` (Csiszár) when the prior is positive on the domain: the misfit tends to the
    LP optimum and KL(q‖p) to its least value there.  The paper picks partitions at random; here the
    order is fixed and T is the caller's.

    Parameters
    ----------
    prior : public numbers (see the module); normalised to sum to 1
    partitions : a list of partitions, each a list of disjoint blocks of cell indices
    targets : per partition, one (noisy) mass per block
    iterations : T, the number of updates (not of cycles)
    stage1 : ``"lp"`` (default, the paper's linear program) or ``"partition"`` (per-partition fits)
    reduce_domain : work on the prior's support only (the paper's §3.2 speed-up, and eq. 2 restricted
        to the support): cells the prior gives 0 stay 0, so **sizes or categories the prior never saw
        become impossible**, whatever the measurements say; blocks outside the support get target 0.
        Off by default.

    Returns
    -------
    q : numpy.ndarray, the estimated distribution
    report : DataFrame with one row per update (and row 0 for the prior): ``iteration``,
        ``partition`` (``<NA>`` at 0), ``l1`` = Σ over all partitions of ‖W_s q − ỹ_s‖₁ against the
        targets as given, ``kl`` = KL(q‖prior) in nats; with ``stage1="lp"``,
        ``report.attrs["stage1_optimum"]`` is the LP's least misfit

    Examples
    --------
    >>> parts = [[[0, 1], [2, 3]], [[0, 2], [1, 3]]]
    >>> q, report = ide([0.25] * 4, parts, [[0.6, 0.4], [0.7, 0.3]], 2, stage1="partition")
    >>> q.round(12).tolist(), report["l1"].round(12).tolist()
    ([0.42, 0.18, 0.28, 0.12], [0.6, 0.4, 0.0])
    >>> q, report = ide([0.25] * 4, parts, [[0.9, 0.4], [0.7, 0.3]], 20)   # overlapping, inconsistent
    >>> round(report.attrs["stage1_optimum"], 9), round(float(report["l1"].iloc[-1]), 9)
    (0.3, 0.3)
    """
    if isinstance(iterations, bool) or not isinstance(iterations, numbers.Integral) or iterations < 0:
        raise ParameterError(f"iterations must be a whole number ≥ 0, got {iterations!r}")
    if stage1 not in ("lp", "partition"):
        raise ParameterError(f"stage1 must be 'lp' (the paper's linear program) or 'partition', got {stage1!r}")
    if not all(isinstance(v, (Sequence, np.ndarray)) and not isinstance(v, str) for v in (partitions, targets)):
        raise ParameterError("partitions and targets must be lists (one target vector per partition)")
    if len(partitions) != len(targets) or not len(partitions):
        raise ParameterError(
            f"one target vector per partition: {len(partitions)} partitions, {len(targets)} target vectors"
        )
    p = as_prior(prior, _max_cell(*partitions))
    keep = np.flatnonzero(p > 0) if reduce_domain else np.arange(p.size)
    labels, given, fitted = [], [], []
    for s, (blocks, raw) in enumerate(zip(partitions, targets)):
        lab = _labels(blocks, p.size)
        y = _as_targets(raw, len(blocks), f"targets of partition {s}")
        sub = lab[keep]
        alive = np.bincount(sub[sub >= 0], minlength=len(blocks)) > 0  # blocks with cells in the domain
        fit = np.zeros_like(y)
        fit[alive] = simplex_l1_fit(y[alive], 1.0, at_most=bool(np.any(sub < 0)))
        labels.append(lab)
        given.append(y)
        fitted.append(fit)
    attrs = {}
    if stage1 == "lp":
        w = block_matrix(partitions, keep)
        z, attrs["stage1_optimum"] = stage1_lp(w, np.concatenate(given), prefer=np.concatenate(fitted))
        answers = np.clip(w @ z, 0.0, None)
        if np.abs(answers - np.concatenate(fitted)).sum() > 1e-8:  # else the fits are one distribution's: keep them
            fitted = np.split(answers, np.cumsum([y.size for y in given])[:-1])
    q_sub = p[keep].copy()
    q = np.zeros_like(p)
    rows = []
    for t in range(int(iterations) + 1):
        if t:
            s = (t - 1) % len(labels)
            q_sub = _update(q_sub, labels[s][keep], fitted[s])
        q[keep] = q_sub
        l1 = sum(float(np.abs(_answers(q, lab, y.size) - y).sum()) for lab, y in zip(labels, given))
        rows.append((t, (t - 1) % len(labels) if t else pd.NA, l1, kl_divergence(q, p)))
    report = pd.DataFrame(rows, columns=["iteration", "partition", "l1", "kl"])
    report["partition"] = report["partition"].astype("Int64")
    report.attrs.update(attrs)
    return q.copy(), report


def share_buckets(prior: object, buckets: Blocks, counts: object, groups: int) -> np.ndarray:
    """Integer group counts per cell: each bucket's count shared across its cells in proportion to the prior.

    Within a bucket the shares are ``count · p[j] / Σ_bucket p`` (uniform where the prior is zero on
    the whole bucket, Definition 3.1 case 2), rounded down, and the remainder goes one by one to the
    largest fractional parts (ties to the lower cell index).  Every bucket keeps its count exactly,
    so the total is G; cells in no bucket get 0.

    Parameters
    ----------
    prior : public numbers (see the module), one per cell (e.g. per group size)
    buckets : disjoint lists of cell indices
    counts : whole numbers ≥ 0, one per bucket (a released coarse histogram)
    groups : G, the public number of groups; must equal the sum of ``counts``

    Returns
    -------
    numpy.ndarray of int64 counts per cell

    Examples
    --------
    >>> share_buckets([0, .4, .2, .2, .1, .1, 0, 0], [[0], [1], [2, 3], [4, 5, 6, 7]], [1, 3, 4, 2], 10).tolist()
    [1, 3, 2, 2, 1, 1, 0, 0]
    """
    p = as_prior(prior, _max_cell(buckets))
    labels = _labels(buckets, p.size, "bucket")
    c = np.asarray(counts)
    if (
        c.shape != (len(buckets),)
        or c.dtype.kind not in "iuf"
        or not np.all(np.isfinite(c))
        or np.any(c < 0)
        or np.any(c != np.round(c))
    ):
        raise ParameterError(f"counts must be {len(buckets)} whole numbers ≥ 0, one per bucket")
    c = c.astype(np.int64)
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or int(c.sum()) != groups:
        raise ParameterError(f"the bucket counts sum to {int(c.sum())}, not to G = {groups!r}")
    out = np.zeros(p.size, dtype=np.int64)
    for b, count in enumerate(c):
        cells = np.flatnonzero(labels == b)
        w = p[cells]
        share = count * (w / w.sum()) if w.sum() > 0 else np.full(cells.size, count / cells.size)
        base = np.floor(share)
        extra = max(int(count - base.sum()), 0)
        base[np.argsort(-(share - base), kind="stable")[:extra]] += 1
        out[cells] = base.astype(np.int64)
    return out
