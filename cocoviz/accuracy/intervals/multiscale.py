"""Hg bands that use runs of equal sizes: simultaneous bounds from averages over intervals of ranks.

A Hg node measures ``y = t + Z`` over its ``n`` ranks (``t`` the sorted true sizes, non-decreasing whole
numbers ≥ 0; ``Z`` i.i.d. double-geometric of scale b = Δ/ε, or N_ℤ(0, σ²)).  The per-cell band
(:mod:`cocoviz.accuracy.intervals.bands`) bounds each ``t_i`` within about ``b ln(n / (1 - c))``: on a long run
of equal sizes it cannot tell size 1 from size 14, so the count of a size can be anything between 0 and
the run.  The isotonic fit is far better there because it averages: a run of ``m`` equal cells has mean
noise of scale ``~ b / √m``.  This band states that accuracy, with a proof (Dümbgen's multiscale idea,
"Optimal confidence bands for shape-restricted curves", Bernoulli 2003, on a dyadic family).

**The family.**  Scale 0: every single rank.  Scales ``s ≥ 1``: intervals ``I = [a, a + m)`` of length
``m = 2^s ≥ g`` starting at every multiple of ``h = max(g, m / 2)`` with ``a + m ≤ n``, where ``g`` (the
*grain*, a power of two) is public: intervals then start and end at multiples of ``g``, so the band needs
only the prefix sums of ``y`` at multiples of ``g`` and the single cells' envelopes.  ``N_s`` intervals at
scale ``s``; ``S`` scales with at least one.

**The event.**  ``E = E_0 ∩ E_1 ∩ … ∩ E_S`` with ``E_0 = {|Z_i| ≤ w_0 for every i}`` and
``E_s = {|Σ_{i ∈ I} Z_i| ≤ w_s for every interval I of scale s}``.  Error budget ``δ = 1 - c``, half to the
single cells and half shared equally by the scales (with no scale ≥ 1, all to the cells):

* ``w_0`` = :func:`~cocoviz.accuracy.intervals.widths.half_width` at confidence ``1 - δ/2``, so
  ``P(E_0ᶜ) = 1 - (1 - P(|Z| > w_0))^n ≤ δ/2`` exactly (independent cells);
* ``w_s`` the smallest whole ``w`` with ``2 N_s · T_m(w) ≤ δ / (2S)``, where ``T_m(w) ≥ P(Σ_{i<m} Z_i > w)``
  (:func:`sum_tail`: exact for the double-geometric — the sum of ``m`` of them is the difference of two
  i.i.d. negative binomials — and for one discrete Gaussian; for ``m ≥ 2`` discrete Gaussians the
  sub-Gaussian bound ``exp(-w²/(2mσ²))``, valid as ``E e^{λZ} ≤ e^{λ²σ²/2}``, Canonne, Kamath and Steinke
  2020).  The law is symmetric, so the two sides of ``|·|`` each add ``T_m``.

By the union bound over the scales and over the intervals of a scale,
``P(Eᶜ) ≤ P(E_0ᶜ) + Σ_s 2 N_s T_m(w_s) ≤ δ``, so ``P(E) ≥ c``; :attr:`MultiscaleWidths.guarantee` is that
lower bound computed from the chosen ``w`` (at or just above ``c``).  Every ``w`` reads ``n``, ``g``, the law
and ``c`` only — public facts — never the noisy values.

**The band.**  Let ``Y_I = Σ_{i ∈ I} y_i``.  Under E and ``t`` non-decreasing, for ``I = [a, b]`` of length
``m``: ``t_b ≥ mean_I t ≥ (Y_I - w)/m`` and ``t_a ≤ mean_I t ≤ (Y_I + w)/m``; ``t`` is whole, so

    low_j  = max(0, max_{i ≤ j} (y_i - w_0), max_{I: b ≤ j} ⌈(Y_I - w_s)/m⌉)
    high_j = min(min_{i ≥ j} (y_i + w_0), min_{I: a ≥ j} ⌊(Y_I + w_s)/m⌋)

hold for every rank ``j`` at once on E (for ``b ≤ j``: ``t_j ≥ t_b``; for ``a ≥ j``: ``t_j ≤ t_a``).  So
``P(low ≤ t ≤ high everywhere) ≥ P(E) ≥ c``.  Integer arithmetic throughout (floor divisions of whole
sums).  Both bounds are non-decreasing in ``j``; where they cross (only off E) they are swapped, which
keeps every band E makes true.  The counts follow as for the per-cell band:
``#{i: high_i ≤ j} ≤ Hc[j] ≤ #{i: low_i ≤ j}``, simultaneously for every j.

Contains the per-cell band's scale 0 at the stricter ``1 - δ/2``: on a node with no runs it is a little wider
than the per-cell band (``b ln 2`` more per side under ε); on a run of length ``r`` it pins the size inside
to within about ``b √(8 ln(4 S N_s/δ) / r)`` and its ends to within ``~ g`` ranks.

>>> y = np.array([1, 0, 2, 1, 1, 0, 2, 1] * 8 + [5, 4, 6, 5] * 4)
>>> widths = multiscale_widths(1.0, y.size, 0.9)
>>> low, high = multiscale_rank_bounds(y, widths)
>>> int(low[60]), int(high[0]), int(low[-1]), widths.guarantee >= 0.9
(1, 1, 4, True)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from cocoviz.accuracy.intervals.derived import count_bounds, persons_bounds
from cocoviz.accuracy.intervals.widths import check_confidence, half_width, node_confidence, tail_probability
from cocoviz.errors import ParameterError
from cocoviz.privacy.noise import GaussianNoise

__all__ = [
    "sum_tail",
    "MultiscaleWidths",
    "multiscale_widths",
    "multiscale_rank_bounds",
    "rank_counts",
    "multiscale_cumulative",
    "multiscale_frame",
]


def sum_tail(noise: float | GaussianNoise, m: int, w: int) -> float:
    """An upper bound on ``P(Z_1 + … + Z_m > w)`` for ``m`` i.i.d. noises of the law (module docstring).

    Double-geometric (scale ``noise``): exact to 2·10⁻¹⁸ (added), ``Z = A - B`` summed, ``A, B`` i.i.d.
    negative binomial ``NB(m, 1 - α)``, ``P(ΣZ > w) = Σ_k P(B = k) P(A > w + k)`` over the k holding all but
    10⁻¹⁸ of each tail of B.  Discrete Gaussian: exact for ``m = 1``, the
    sub-Gaussian bound ``exp(-w² / (2 m σ²))`` for ``m ≥ 2``.

    >>> round(sum_tail(1.0, 1, 3), 10) == round(float(tail_probability(1.0, 3)) / 2, 10)
    True
    >>> round(sum_tail(1.0, 2, 0), 4)  # P(Z1 + Z2 > 0), the law symmetric: (1 - P(sum = 0)) / 2
    0.3598
    """
    if m <= 0:
        return 0.0 if w >= 0 else 1.0
    if isinstance(noise, GaussianNoise):
        if m == 1:
            return float(tail_probability(noise, max(w, 0))) / 2 if w >= 0 else 1.0
        return 1.0 if w <= 0 else math.exp(-(w * w) / (2 * m * float(noise.sigma2)))
    lo, pmf, sf = _negative_binomial(float(noise), m)
    # P(A > x) for x = w + k: below lo it is at most 1, above hi at most sf(hi) ≤ 10⁻¹⁸ (upper bounds both).
    at = np.arange(pmf.size) + w
    upper = np.where(at < 0, 1.0, sf[np.clip(at, 0, sf.size - 1)])
    return min(1.0, float(pmf @ upper) + 2e-18)


@functools.lru_cache(maxsize=256)
def _negative_binomial(scale: float, m: int) -> tuple[int, np.ndarray, np.ndarray]:
    """``(lo, pmf, sf)`` of ``NB(m, 1 - α)``, α = exp(-1/scale), on ``lo..hi``: all but 10⁻¹⁸ of each tail.
    B's values outside carry at most 2·10⁻¹⁸ together (added whole by :func:`sum_tail`)."""
    from scipy.stats import nbinom

    p = -math.expm1(-1.0 / scale)
    lo, hi = max(int(nbinom.ppf(1e-18, m, p)) - 1, 0), int(nbinom.isf(1e-18, m, p)) + 2
    k = np.arange(lo, hi + 1)
    return lo, nbinom.pmf(k, m, p), nbinom.sf(k, m, p)


def _smallest_width(noise, m: int, tail: float) -> int:
    """The smallest whole ``w ≥ 0`` with ``sum_tail(noise, m, w) ≤ tail`` (the tail is non-increasing in w)."""
    sd = math.sqrt(m * (float(noise.sigma2) if isinstance(noise, GaussianNoise) else 2.0 * float(noise) ** 2))
    hi = max(1, int(sd * math.sqrt(2 * math.log(1 / tail))) + 1)
    while sum_tail(noise, m, hi) > tail:
        hi *= 2
    lo = 0
    while lo < hi:
        mid = (lo + hi) // 2
        if sum_tail(noise, m, mid) <= tail:
            hi = mid
        else:
            lo = mid + 1
    return lo


@dataclass(frozen=True)
class MultiscaleWidths:
    """The multiscale band's public tolerances for a node of ``cells`` ranks (module docstring).

    ``single`` is ``w_0``; ``scales`` holds ``(m, h, count, w)`` per scale ≥ 1 (length, start step, intervals,
    tolerance of the sum); ``guarantee`` the lower bound on ``P(E)`` they give (≥ the confidence asked).
    """

    cells: int
    grain: int
    confidence: float
    single: int
    scales: tuple[tuple[int, int, int, int], ...]
    guarantee: float


def _family(cells: int, grain: int) -> list[tuple[int, int, int]]:
    """``(m, h, count)`` of every scale ≥ 1 with at least one interval."""
    out, m = [], 2
    while m <= cells:
        if m >= grain:
            h = max(grain, m // 2)
            count = (cells - m) // h + 1
            out.append((m, h, count))
        m *= 2
    return out


def multiscale_widths(
    noise: float | GaussianNoise, cells: int, confidence: float = 0.9, *, grain: int = 1
) -> MultiscaleWidths:
    """The tolerances ``w_0, w_1, …`` of a node of ``cells`` ranks, from public facts only (module docstring).

    >>> w = multiscale_widths(1.0, 1000, 0.9)
    >>> w.single, [s[3] for s in w.scales][:3], w.guarantee >= 0.9
    (10, [14, 16, 19], True)
    """
    confidence = check_confidence(confidence)
    if not isinstance(grain, (int, np.integer)) or grain < 1 or grain & (grain - 1):
        raise ParameterError(f"grain must be a power of two ≥ 1, got {grain!r}")
    return _widths(noise if isinstance(noise, GaussianNoise) else float(noise), int(cells), confidence, int(grain))


@functools.lru_cache(maxsize=4096)
def _widths(noise, cells: int, confidence: float, grain: int) -> MultiscaleWidths:
    """:func:`multiscale_widths` for checked arguments (cached: a level's nodes share the scales' laws)."""
    if cells <= 0:
        return MultiscaleWidths(max(cells, 0), grain, confidence, 0, (), 1.0)
    delta = 1.0 - confidence
    family = _family(cells, grain)
    to_cells = delta / 2 if family else delta
    single = half_width(noise, cells, 1.0 - to_cells)
    miss = -math.expm1(cells * math.log1p(-float(tail_probability(noise, single))))
    scales = []
    for m, h, count in family:
        w = _smallest_width(noise, m, delta / (2 * len(family)) / (2 * count))
        scales.append((m, h, count, w))
        miss += 2 * count * sum_tail(noise, m, w)
    return MultiscaleWidths(cells, grain, confidence, single, tuple(scales), 1.0 - miss)


def multiscale_rank_bounds(values: np.ndarray, widths: MultiscaleWidths) -> tuple[np.ndarray, np.ndarray]:
    """Per rank, whole bounds ``(low, high)`` on the true sorted sizes from one node's noisy Hg ``values``.

    Reads the single cells' running max and min and the prefix sums at multiples of the grain only.
    """
    y = np.asarray(values, np.int64)
    n = y.size
    if n != widths.cells:
        raise ParameterError(f"the widths are for {widths.cells} cells, the values have {n}")
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    low = np.maximum.accumulate(y - widths.single)
    high = np.minimum.accumulate((y + widths.single)[::-1])[::-1]
    g = widths.grain
    prefix = np.concatenate([[0], np.cumsum(y)])[::g]  # P at ranks 0, g, 2g, …
    at_end = np.full(n, np.iinfo(np.int64).min)
    at_start = np.full(n, np.iinfo(np.int64).max)
    for m, h, count, w in widths.scales:
        starts = np.arange(count, dtype=np.int64) * h
        sums = prefix[(starts + m) // g] - prefix[starts // g]
        np.maximum.at(at_end, starts + m - 1, -((w - sums) // m))  # ⌈(Y - w)/m⌉
        np.minimum.at(at_start, starts, (sums + w) // m)  # ⌊(Y + w)/m⌋
    low = np.maximum(np.maximum(low, np.maximum.accumulate(at_end)), 0)
    high = np.minimum(high, np.minimum.accumulate(at_start[::-1])[::-1])
    high = np.maximum(high, 0)
    return np.minimum(low, high), np.maximum(low, high)


def rank_counts(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on Hc[0..J] from bounds on the sorted sizes: ``#{i: high_i ≤ j} ≤ Hc[j] ≤ #{i: low_i ≤ j}``,
    J the largest upper bound (where both reach G).

    >>> [v.tolist() for v in rank_counts(np.array([0, 1, 1]), np.array([1, 1, 3]))]
    [[0, 2, 2, 3], [1, 3, 3, 3]]
    """
    sizes = np.arange(int(high[-1]) + 1 if high.size else 1)
    return np.searchsorted(high, sizes, side="right"), np.searchsorted(low, sizes, side="right")


def multiscale_cumulative(measurements, level: int, k: int, confidence: float, *, grain: int = 1):
    """Node ``k`` of Hg ``level``: bounds ``(low, high)`` on Hc[0..J] holding with probability ≥ ``confidence``
    (the node's own), with the :class:`MultiscaleWidths` and the per-rank bounds: ``(low, high, widths,
    rank_low, rank_high)``.  Refused, named, for a level not measured with Hg."""
    measured = measurements.levels[level] if level < len(measurements.levels) else None
    if measured is None or measured.method != "Hg":
        what = "not measured" if measured is None else f"measured with {measured.method}"
        raise ParameterError(f"level {level} is {what}: the multiscale band is for Hg levels")
    values = measured.node(k)
    widths = multiscale_widths(measurements.plan.level_noise(level), values.size, confidence, grain=grain)
    rank_low, rank_high = multiscale_rank_bounds(values, widths)
    low, high = rank_counts(rank_low, rank_high)
    return low, high, widths, rank_low, rank_high


def multiscale_frame(measurements, level: int, k: int, confidence: float = 0.9, scope: str = "node", *, grain: int = 1):
    """Node ``k`` of Hg ``level``: the multiscale band as bounds on its counts, from its noisy measurement.

    ``measurements`` is :class:`~cocoviz.measure.measurements.Measurements` (or a noisy-measurement file read
    back, :func:`cocoviz.load_measurements`): publishable, so the frame is too (post-processing, no ε).  Rows
    per size j: ``cumulative_low``/``cumulative_high`` (Hc[j]), ``count_low``/``count_high`` (H[j]),
    ``persons_low``/``persons_high`` (persons in groups of size ≤ j), all holding together with probability
    ≥ ``confidence`` for the node (``scope="node"``) or with every node of the level at once (``"level"``:
    each node at ``confidence^(1/n)``, :mod:`cocoviz.accuracy.intervals.scope`).  ``attrs``: ``confidence``,
    ``scope``, ``node_confidence``, ``guarantee`` (the proven lower bound on the node's ``P(E)``), ``grain``,
    ``rank_low``/``rank_high`` (the bounds on the sorted sizes themselves, rank by rank) and a ``note``.

    Examples
    --------
    >>> import pandas as pd
    >>> from cocoviz.hierarchy import Hierarchy
    >>> from cocoviz.measure.measurements import measure
    >>> from cocoviz.plan import Plan
    >>> tree = Hierarchy.from_groups(pd.DataFrame({"size": [1] * 300 + [3] * 100}), size="size", levels=[])
    >>> plan = Plan.build(tree, epsilons=[1.0], methods=["Hg"])
    >>> frame = multiscale_frame(measure(plan, tree, seed=0), 0, 0)
    >>> int(frame["count_low"].iat[1]) > 200, int(frame["count_high"].iat[2]) < 100
    (True, True)
    """
    import pandas as pd

    if level >= len(measurements.levels) or measurements.levels[level] is None:
        raise ParameterError(f"level {level} is not measured: the multiscale band is for Hg levels")
    n_nodes = measurements.levels[level].n_nodes
    per_node = node_confidence(confidence, scope, n_nodes)
    low, high, widths, rank_low, rank_high = multiscale_cumulative(measurements, level, k, per_node, grain=grain)
    count_low, count_high = count_bounds(low, high)
    persons_low, persons_high = persons_bounds(low, high)
    frame = pd.DataFrame(
        {
            "size": np.arange(low.size, dtype=np.int64),
            "cumulative_low": low,
            "cumulative_high": high,
            "count_low": count_low,
            "count_high": count_high,
            "persons_low": persons_low,
            "persons_high": persons_high,
        }
    )
    frame.attrs.update(
        confidence=check_confidence(confidence),
        scope=scope,
        node_confidence=per_node,
        guarantee=widths.guarantee,
        grain=grain,
        method="Hg",
        level=level,
        rank_low=rank_low,
        rank_high=rank_high,
        note=(
            f"Simultaneous {confidence:.0%} bounds on the true histogram "
            + ("(per node)" if scope == "node" else f"(all {n_nodes:,} nodes of level {level} at once)")
            + f", from this node's own Hg measurement averaged over {len(widths.scales)} scales of rank intervals "
            "and public facts only: post-processing, no ε."
        ),
    )
    return frame
