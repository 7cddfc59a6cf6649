"""Intervals you can publish: simultaneous bands on a node's histogram from its noisy measurement alone.

Everything here reads the plan (public) and the noisy answers (differentially private outputs), never
the data: it is post-processing and costs no ε — except :func:`truth_covered` and :func:`covered_nodes`,
which check a band against the truth for tests and benchmarks (exploration only).

**The band.**  A Hc or Hg node measures ``y = t + Z`` over ``n`` cells (Hc: ``Hc[0..K-1]``, n = K;
Hg: the G sorted sizes, n = G), ``t`` the true vector, non-decreasing, and ``Z`` i.i.d. noise of the
plan's law: double-geometric of scale Δ/ε under pure ε, the discrete Gaussian N_ℤ(0, σ²) under ρ-zCDP
(:meth:`~cocoviz.plan.Plan.level_noise`).  Each cell gets whole tolerances ``o_i`` (how far ``y_i`` may lie
above ``t_i``) and ``u_i`` (below), chosen from the cell count, the law and the confidence only
(:func:`half_widths`), never from the noisy values, so that the event

    E = {-u_i ≤ y_i - t_i ≤ o_i for every i}

has ``P(E) = Π_i P(-u_i ≤ Z ≤ o_i) ≥ c``, the smallest such product the scheme reaches, computed from
the exact law (a closed form for the double-geometric, exact sums of the Gaussian's pmf).  The scheme:
``a`` = :func:`half_width`, the smallest whole ``a`` with ``P(|Z| ≤ a)^n ≥ c``, overshoots ``c`` by its
granularity (0.905–0.961 at 90%, and more under zCDP's light tails); so every cell gets ``± (a - 1)`` and
the fewest one-sided widenings by 1 that reach ``c``: ``o_i = a`` on the top cells, ``u_i = a`` on the bottom
ones (:class:`Widths`), so ``o`` is non-decreasing and ``u`` non-increasing in ``i``.  The published band is

    low_j = max_{i ≤ j} (y_i - o_i),    high_j = min_{i ≥ j} (y_i + u_i)

**Proof that it covers.**  Under E, for i ≤ j: ``t_j ≥ t_i ≥ y_i - o_i``, so ``t_j ≥ low_j``; for
i ≥ j: ``t_j ≤ t_i ≤ y_i + u_i``, so ``t_j ≤ high_j``.  Conversely ``t_j ∈ [low_j, high_j]`` for all j
gives ``-u_j ≤ y_j - t_j ≤ o_j`` (take i = j): the band holds the truth exactly when E holds, so its
simultaneous coverage is P(E) ≥ c, not more — for any tolerances, monotone or not.  Clipping to what
is public (Hc in [0, G]; sizes ≥ 0) and, where E failed so badly that low > high, swapping the two (the
min and max of two non-decreasing vectors are non-decreasing) keep every band that E makes true; the
clip forgives some misses (a cell whose truth is 0 or G fails one way only), so coverage is at least P(E).

**Exact from the envelopes.**  A release keeps only the running max of ``y`` from the left and the running
min from the right (:class:`LevelBands`), not ``y``.  That suffices because the tolerances are monotone
and take two values ``b, b + 1``: ``low_j = M_j - o_q`` with ``M_j = max_{i ≤ j} y_i`` and ``q`` the *first*
cell attaining it (an up step's start): for ``i < q``, ``y_i ≤ M_j - 1`` and ``o_i ≥ o_q - 1``; for
``q < i ≤ j``, ``y_i ≤ M_j`` and ``o_i ≥ o_q``.  Likewise ``high_j = m_j + u_p``, ``p`` the *last* cell
attaining ``m_j = min_{i ≥ j} y_i`` (the cell before the next down step), as ``u`` is non-increasing.
(Widening the top cells on both sides would need the first cell attaining the min, which the envelopes
do not keep.)

**The isotonic fit stays inside.**  Let ``x`` be any minimiser of ``Σ |x_i - y_i|^p`` (p = 1 or 2)
over non-decreasing ``x`` in ``[lower, upper]`` — the Hc and Hg fits, the bounded one being the clipped
unconstrained fit — and ``t`` non-decreasing in the same box with E.  Then ``t - u ≤ x ≤ t + o`` cellwise:
``t - u`` is non-decreasing (``u`` non-increasing), so were ``x_j < t_j - u_j`` somewhere,
``x' = max(x, t - u)`` is feasible and strictly cheaper at those cells (``t_i - u_i ≤ y_i`` there) and
equal elsewhere — a contradiction; the other side likewise with ``min(x, t + o)``, ``t + o``
non-decreasing.  (With tolerances not monotone this way ``t - u`` need not be monotone, and only
``|x - t| ≤ max_i max(o_i, u_i)`` would remain.)  In particular ``|x - t| ≤ a``, the widest tolerance.
The same exchange with ``max_{i ≤ j} y_i`` shows ``min_{i ≥ j} y_i ≤ x_j ≤ max_{i ≤ j} y_i``, so the band
lies within ``[x - a, x + a]``: never wider than the fit's own ``± a`` (cellwise ``[x - o, x + u]`` no longer
holds: ``low_j`` may take its tolerance from a narrower cell).  Rounding (``|rint(x) - x| ≤ ½``, whole
bounds) keeps ``t - u ≤ rint(x) ≤ t + o`` for whole ``t``.  (Isotonic regression is monotone in its input
and commutes with shifts; the exchange argument proves it for every minimiser, the L1 fit's ties
included.)  Tested in ``tests/test_intervals.py``.

**From the band to what is published.**  Hc bounds give, simultaneously for every range, the count
of groups of sizes ``lo..hi`` (``Hc[hi] - Hc[lo-1]``), the persons in groups of size ≤ j
(``P(j) = Σ_{s<j} (Hc[j] - Hc[s])``, summation by parts, each term ≥ 0) and the node's emd to any
histogram ``r`` (``Σ_j |Hc[j] - r_c[j]| ≤ Σ_j max(|low_j - r_c[j]|, |high_j - r_c[j]|)``).  Hg bands
bound the sorted sizes ``s_i ∈ [L_i, U_i]``, so ``#{i: U_i ≤ j} ≤ Hc[j] ≤ #{i: L_i ≤ j}``.

**Which histogram.**  A band is about the truth, from the node's *own* measurement.  Under top-down
consistency the released histogram is the matched-and-merged one, not the node's own fit; the band
still holds the truth, and the released histogram may stray outside it.  A level the plan does not
measure (bottom-up's upper levels) has no band (refused, named).  The measured Hc is of the histogram
with groups larger than K counted at K: so is its band.  An Hcp level measures Hc at a public grid of sizes
below K: the same band at the grid, bounded between grid points by monotonicity (of the untruncated
histogram).  A naive level measures H itself: :mod:`cocoviz.accuracy.intervals.counts` sums per-size bounds.

>>> from cocoviz.plan import Plan, Shape
>>> plan = Plan.build(Shape((), (((),),), ((),), ((4,),)), epsilons=[1.0], methods=["Hc"], max_size=4)
>>> bands = LevelBands.of("Hc", np.array([1, 0, 3, 4]), np.array([0, 4]))
>>> low, high = cumulative_bounds(bands, 0, groups=4, a=1)
>>> low.tolist(), high.tolist()
([0, 0, 2, 3, 4], [1, 1, 4, 4, 4])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cocoviz.accuracy.intervals.counts import LevelCounts, counts_cumulative_bounds, narrow
from cocoviz.accuracy.intervals.derived import band_frame
from cocoviz.accuracy.intervals.widths import Widths, check_confidence, half_width, half_widths, tail_probability
from cocoviz.errors import ParameterError
from cocoviz.methods.hcp import hcp_grid

if TYPE_CHECKING:
    pass

__all__ = [
    "BAND_METHODS",
    "LevelBands",
    "tail_probability",
    "half_width",
    "half_widths",
    "Widths",
    "check_confidence",
    "measurement_bands",
    "cumulative_bounds",
    "node_intervals",
    "band_refusal",
    "truth_covered",
    "covered_nodes",
    "level_cumulative_bounds",
    "HG_SCALE",
    "HG_SCALE_NOTE",
]

_NO_CEILING = 2**62  # sizes have no public upper bound

#: Methods whose cells are cumulative counts (in [0, G]), not sizes.
_CUMULATIVE = ("Hc", "Hcp")

#: The Hcp grid's points in order: a node's ``c`` cells are its first ``c`` (the grid below any K is a prefix).
_HCP_POINTS = hcp_grid(2**40)

#: The methods whose measurement gives a band (a non-decreasing vector with i.i.d. noise per cell).
BAND_METHODS = ("Hc", "Hg", "Hcp", "naive")

#: What an Hg band is meaningful for (``attrs["meaningful_for"]`` of an Hg node's frame).
HG_SCALE = "sorted sizes and cumulative counts (groups of size ≤ j)"

#: The sentence an Hg band's note ends with.  An Hg node measures its sorted sizes, so its band places a run
#: of equal sizes only to within its ends' tolerance: the bounds on the sorted sizes and on the groups of size
#: ≤ j are as tight as the measurement allows, while a single size's count is the difference of two cumulative
#: bounds and can be far wider than the error of the released count (measured in
#: ``benchmarks/intervals.py --only runs``; the figures are on the performance page).
HG_SCALE_NOTE = (
    "On this Hg level the bounds are meaningful for the sorted sizes and for cumulative counts (groups of size "
    "≤ j); the count of a single size (count_low..count_high) is the difference of two cumulative bounds and can "
    "be many times wider than the released count's actual error."
)

#: Where each method widens first (:func:`half_widths`).  Hc's top cells are flat at G, where the upper
#: bound is clipped to G and the width is all the lower bound's, set by ``o``: widening ``o`` there costs
#: most, so Hc widens ``u`` on its bottom cells first.  Hg's bottom ranks are the smallest sizes, where the
#: lower bound is clipped to 0 and the width is all ``u``'s: so Hg widens ``o`` on its top ranks first.
#: ``benchmarks/intervals.py --only sides`` prints each choice against its opposite on the bundled datasets.
WIDER_FIRST = {"Hc": "bottom", "Hg": "top", "Hcp": "bottom", "naive": "even"}


@dataclass(frozen=True, eq=False)
class LevelBands:
    """The envelopes of one level's noisy answers, all a band needs (post-processing of DP outputs).

    Node ``k`` measured ``cells[k]`` cells; its running max from the left takes ``up_value[r]`` from
    its cell ``up_at[r]`` on (``r`` in ``up_ptr[k]:up_ptr[k+1]``), its running min from the right
    likewise (``down_*``).  Both are step functions with few steps where the truth is flat.  Each array is
    held in the narrowest of int32 and int64 that holds it exactly (:func:`~cocoviz.accuracy.intervals.counts.narrow`):
    a release keeps its bands for its lifetime, and cells, steps and noisy counts of a node rarely pass 2³¹.
    """

    method: str
    cells: np.ndarray
    up_ptr: np.ndarray
    up_at: np.ndarray
    up_value: np.ndarray
    down_ptr: np.ndarray
    down_at: np.ndarray
    down_value: np.ndarray

    @classmethod
    def of(cls, method: str, values: np.ndarray, ptr: np.ndarray) -> LevelBands:
        """The envelopes of the noisy answers ``values`` (node ``k``'s are ``values[ptr[k]:ptr[k+1]]``); a naive
        level's counts whole (:class:`~cocoviz.accuracy.intervals.counts.LevelCounts`: its bounds need every cell)."""
        from cocoviz.accuracy.intervals._kernels import segment_envelopes

        if method == "naive":
            return LevelCounts.of(method, values, ptr)

        ptr = np.asarray(ptr, np.int64)
        return cls(method, *map(narrow, (np.diff(ptr), *segment_envelopes(values, ptr))))

    @classmethod
    def concat(cls, parts: Sequence[LevelBands]) -> LevelBands:
        """The bands of consecutive runs of nodes, joined in order."""
        if len(parts) == 1:
            return parts[0]
        if isinstance(parts[0], LevelCounts):
            return LevelCounts.concat(parts)

        def ptr(name: str) -> np.ndarray:
            ptrs = [getattr(p, name) for p in parts]
            bases = np.cumsum([0] + [int(q[-1]) for q in ptrs[:-1]])
            return narrow(np.concatenate([[0]] + [q[1:] + b for q, b in zip(ptrs, bases)]))

        def cat(name: str) -> np.ndarray:
            return narrow(np.concatenate([getattr(p, name).astype(np.int64, copy=False) for p in parts]))

        return cls(
            parts[0].method,
            cat("cells"),
            ptr("up_ptr"),
            cat("up_at"),
            cat("up_value"),
            ptr("down_ptr"),
            cat("down_at"),
            cat("down_value"),
        )

    @classmethod
    def of_chunks(cls, method: str, chunks: Sequence[tuple[int, LevelBands]]) -> LevelBands:
        """One node's bands from the bands of its consecutive chunks ``(first cell, bands)`` (any order):
        a streamed node never holds its noisy answers at once, so its envelopes are joined here."""
        chunks = sorted(chunks, key=lambda c: c[0])
        ups, downs = [], []
        running = None
        for offset, b in chunks:
            value = b.up_value if running is None else np.maximum(b.up_value, running)
            ups.append((b.up_at.astype(np.int64) + offset, value))
            running = value[-1] if value.size else running
        running = None
        for offset, b in reversed(chunks):
            value = b.down_value if running is None else np.minimum(b.down_value, running)
            downs.append((b.down_at.astype(np.int64) + offset, value))
            running = value[0] if value.size else running
        up_at, up_value = _steps(*(np.concatenate(x) for x in zip(*ups)))
        down_at, down_value = _steps(*(np.concatenate(x) for x in zip(*downs[::-1])))
        cells = np.array([sum(int(b.cells.sum()) for _, b in chunks)], np.int64)
        parts = (cells, np.array([0, up_at.size]), up_at, up_value, np.array([0, down_at.size]), down_at, down_value)
        return cls(method, *map(narrow, parts))

    def nodes(self, start: int, stop: int) -> LevelBands:
        """The bands of nodes ``start..stop-1`` alone (their steps, pointers from 0)."""
        u, d = self.up_ptr[start : stop + 1], self.down_ptr[start : stop + 1]
        return LevelBands(
            self.method,
            self.cells[start:stop],
            u - u[0],
            self.up_at[u[0] : u[-1]],
            self.up_value[u[0] : u[-1]],
            d - d[0],
            self.down_at[d[0] : d[-1]],
            self.down_value[d[0] : d[-1]],
        )

    def node(self, k: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Node ``k``'s cells and its steps: ``(cells, up_at, up_value, down_at, down_value)``."""
        u, d = slice(self.up_ptr[k], self.up_ptr[k + 1]), slice(self.down_ptr[k], self.down_ptr[k + 1])
        return int(self.cells[k]), self.up_at[u], self.up_value[u], self.down_at[d], self.down_value[d]


def _steps(at: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Steps with equal neighbours merged (the first start kept)."""
    keep = np.concatenate([[True], value[1:] != value[:-1]]) if value.size else np.zeros(0, bool)
    return at[keep], value[keep]


def measurement_bands(measured) -> LevelBands | None:
    """The bands of one level's measurement (a :class:`~cocoviz.measure.measurements.LevelMeasurement`), or None
    for a level not measured or measured with a method without bands (:data:`BAND_METHODS`)."""
    if measured is None or measured.method not in BAND_METHODS:
        return None
    return LevelBands.of(measured.method, measured.values, measured.ptr)


def _at(breaks: np.ndarray, at: np.ndarray, value: np.ndarray) -> np.ndarray:
    """A step function (steps ``at``/``value``) evaluated at the cells ``breaks``."""
    return value[np.searchsorted(at, breaks, side="right") - 1]


def _entry_bounds(bands: LevelBands, k: int, widths: Widths, floor: int, ceiling: float) -> tuple[np.ndarray, ...]:
    """Node ``k``'s band on its measured entries as steps: ``(starts, low, high, cells)``, clipped to
    ``[floor, ceiling]`` and never crossing (module docstring)."""
    cells, up_at, up_value, down_at, down_value = bands.node(k)
    starts = np.union1d(up_at, down_at)
    # max_{i≤j} (y_i - over_i) is the running max less ``over`` at its first cell (an up step's start);
    # min_{i≥j} (y_i + under_i) the running min plus ``under`` at its last cell (the cell before the next step).
    low_steps = up_value - widths.over(up_at)
    high_steps = down_value + widths.under(np.append(down_at[1:], cells) - 1)
    low = np.clip(_at(starts, up_at, low_steps), floor, ceiling)
    high = np.clip(_at(starts, down_at, high_steps), floor, ceiling)
    return starts, np.minimum(low, high).astype(np.int64), np.maximum(low, high).astype(np.int64), cells


def cumulative_bounds(bands: LevelBands, k: int, *, groups: int, a: int | Widths) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on node ``k``'s Hc[0..J] (groups of size ≤ j), simultaneous, given the tolerances ``a``
    (:class:`Widths`, or a whole ``a`` for ``± a`` on every cell).

    Hc levels: J = K, ``Hc[K] = G`` exact.  Hg levels: the sorted sizes' band turned into counts;
    J is the largest size the band allows, where both bounds reach G.  Hcp levels: the band on Hc at the
    public grid (:func:`cocoviz.methods.hcp.hcp_grid`), spread between grid points by monotonicity; J = g_m + 1.
    """
    widths = a if isinstance(a, Widths) else Widths(int(bands.cells[k]), int(a))
    if isinstance(bands, LevelCounts):
        return counts_cumulative_bounds(bands.node(k), widths, groups)
    capped = bands.method in _CUMULATIVE
    starts, low, high, cells = _entry_bounds(bands, k, widths, 0, groups if capped else _NO_CEILING)
    if cells == 0:
        return np.array([groups], np.int64), np.array([groups], np.int64)
    lengths = np.diff(np.append(starts, cells))
    if bands.method == "Hc":
        return (
            np.append(np.repeat(low, lengths), groups).astype(np.int64),
            np.append(np.repeat(high, lengths), groups).astype(np.int64),
        )
    if bands.method == "Hcp":
        # Hc at the grid points g_0 = 0 < ... < g_m; between them Hc is monotone:
        # Hc[g_i] ≤ Hc[j] ≤ Hc[g_(i+1)] for g_i ≤ j ≤ g_(i+1), and ≤ G past g_m (truncation at K only
        # changes Hc at sizes ≥ K > g_m, so these bound the untruncated histogram).
        grid = _HCP_POINTS[:cells]
        low, high = np.repeat(low, lengths), np.repeat(high, lengths)
        sizes = np.arange(int(grid[-1]) + 2)
        above = np.searchsorted(grid, sizes, side="left")
        return (
            low[np.searchsorted(grid, sizes, side="right") - 1].astype(np.int64),
            np.where(above < cells, high[np.minimum(above, cells - 1)], groups).astype(np.int64),
        )
    sizes = np.arange(int(high[-1]) + 1)
    before = np.concatenate([[0], np.cumsum(lengths)])
    # Hc[j] ≥ #{i: U_i ≤ j} and ≤ #{i: L_i ≤ j}; both bounds are non-decreasing in the rank i.
    return before[np.searchsorted(high, sizes, side="right")], before[np.searchsorted(low, sizes, side="right")]


def band_refusal(plan, bands: Sequence[LevelBands | None], level: int) -> str | None:
    """Why node bands of ``level`` cannot be given, or None."""
    if level not in plan.measured_levels():
        return (
            f"level {level} is not measured by this plan ({plan.consistency}): its histograms are sums of the "
            "leaves', with no measurement of their own to bound them"
        )
    method = plan.methods[level]
    if method not in BAND_METHODS:
        return f"level {level} is measured with {method}: bands are given for {', '.join(BAND_METHODS)} levels only"
    if level >= len(bands) or bands[level] is None:
        return (
            f"this release does not carry its level-{level} measurement's envelopes (a release read from a file "
            "saved without them — save(bands=False) or an earlier version — computed on a cluster, "
            "chosen by select_mix, or whose cached level lost them): save it again from cocoviz.estimate, or "
            "post_process its noisy-measurement file "
            "(post_process(plan, cocoviz.load_measurements(path)) gives the same release with its bands)"
        )
    return None


def node_intervals(
    plan, bands: Sequence[LevelBands | None], level: int, k: int, sizes: np.ndarray, counts: np.ndarray, confidence
):
    """The frame of :meth:`cocoviz.Release.intervals` for node ``k`` of ``level``, released runs ``sizes``/``counts``.

    Columns: ``size``; ``cumulative_low``/``cumulative_high`` (Hc[j], groups of size ≤ j) and the released
    ``cumulative``; ``count_low``/``count_high``/``count`` (H[j]); ``persons_low``/``persons_high``/``persons``
    (P(j), persons in groups of size ≤ j).  All bounds hold together with probability ≥ ``confidence``.
    ``attrs`` hold the confidence (and the ``exact_confidence`` P(E) the whole tolerances give), the
    ``half_width`` (the widest tolerance) and ``widths`` (:class:`Widths` as a dict), the cells, the method,
    ``emd_bound`` (on the released histogram's emd to the truth) and a ``note`` saying what the band is about.
    """

    confidence = check_confidence(confidence)
    why = band_refusal(plan, bands, level)
    if why is not None:
        raise ParameterError(f"no intervals for this node: {why}")
    level_bands = bands[level]
    groups = int(plan.shape.group_counts(level)[k])
    cells = int(level_bands.cells[k])
    noise = plan.level_noise(level)
    widths = half_widths(noise, cells, confidence, first=WIDER_FIRST[level_bands.method])
    low, high = cumulative_bounds(level_bands, k, groups=groups, a=widths)
    frame, emd = band_frame(low, high, sizes, counts)
    truncated = {
        "Hc": " (groups larger than K counted at K, as measured)",
        "Hcp": " (measured at the public grid's sizes, bounded between them as Hc is monotone)",
        "naive": " (groups larger than K counted at K; summed from per-size bounds, so wider at larger sizes)",
    }.get(level_bands.method, "")
    frame.attrs.update(
        confidence=confidence,
        # What the whole tolerances really give: at or just above ``confidence`` (the law's discreteness).
        exact_confidence=widths.confidence(noise),
        half_width=widths.widest,
        widths=dict(base=widths.base, wider_top=widths.top, wider_bottom=widths.bottom),
        cells=cells,
        method=level_bands.method,
        level=level,
        emd_bound=emd,
        note=(
            f"Simultaneous {confidence:.0%} bounds on the true histogram{truncated}, from this node's own "
            f"{level_bands.method} measurement ({_widths_words(widths)}) and public facts only: "
            "post-processing, no ε. The released histogram (after consistency) may lie outside them."
            + (" " + HG_SCALE_NOTE if level_bands.method == "Hg" else "")
        ),
        meaningful_for=HG_SCALE if level_bands.method == "Hg" else "cumulative counts, counts and persons",
    )
    return frame


def _widths_words(widths: Widths) -> str:
    """The tolerances in words: ``± a`` on every cell, or ``± base`` with some cells widened by 1 on one side."""
    words = f"± {widths.base} on each of its {widths.cells:,} noisy cells"
    if widths.top:
        words += f", {widths.base + 1} above on its top {widths.top:,}"
    if widths.bottom:
        words += f", {widths.base + 1} below on its bottom {widths.bottom:,}"
    return words


def truth_covered(frame, sizes: np.ndarray, counts: np.ndarray) -> bool:
    """Whether a node's true groups (runs ``sizes``/``counts``) lie inside its :func:`node_intervals` band.

    Reads the truth: for tests, benchmarks and exploration only, never for a release.  A Hc band is about
    the measured histogram, groups larger than K counted at K (K = its cells).
    """
    sizes = np.asarray(sizes, np.int64)
    if frame.attrs["method"] in ("Hc", "naive"):  # K cells (Hc) or K + 1 (naive)
        sizes = np.minimum(sizes, frame.attrs["cells"] - (frame.attrs["method"] == "naive"))
    before = np.concatenate([[0], np.cumsum(counts)])
    truth = before[np.searchsorted(sizes, frame["size"].to_numpy(), side="right")]
    return bool(((frame["cumulative_low"] <= truth) & (truth <= frame["cumulative_high"])).all())


def _dense(ptr: np.ndarray, at: np.ndarray, value: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """Every node's step function written out cell by cell (each non-empty node has a step at its cell 0)."""
    base = np.concatenate([[0], np.cumsum(cells)])
    starts = base[np.repeat(np.arange(len(cells)), np.diff(ptr))] + at
    return np.repeat(value, np.diff(np.append(starts, base[-1])))


def _dense_band(bands: LevelBands, widths: Sequence[Widths], groups: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every node's band on its measured cells, cell by cell: ``(node of each cell, low, high)``, clipped to
    ``[0, G]`` (Hc, Hcp) or ``[0, ∞)`` and never crossing — :func:`_entry_bounds` for all nodes at once."""
    cells = bands.cells.astype(np.int64)
    base, top, bottom = (np.array([getattr(w, f) for w in widths], np.int64) for f in ("base", "top", "bottom"))
    node = np.repeat(np.arange(len(cells)), cells)
    up_at, down_at = bands.up_at.astype(np.int64), bands.down_at.astype(np.int64)
    up_node = np.repeat(np.arange(len(cells)), np.diff(bands.up_ptr))
    low_steps = bands.up_value - base[up_node] - (up_at >= cells[up_node] - top[up_node])
    down_node = np.repeat(np.arange(len(cells)), np.diff(bands.down_ptr))
    last = np.append(down_at[1:], 0) - 1  # the cell before the next step, or the node's last cell
    ends = bands.down_ptr[1:][cells > 0] - 1
    last[ends] = cells[cells > 0] - 1
    high_steps = bands.down_value + base[down_node] + (last < bottom[down_node])
    ceiling = np.asarray(groups, np.int64)[node] if bands.method in _CUMULATIVE else _NO_CEILING
    low = np.clip(_dense(bands.up_ptr, up_at, low_steps, cells), 0, ceiling)
    high = np.clip(_dense(bands.down_ptr, down_at, high_steps, cells), 0, ceiling)
    return node, np.minimum(low, high).astype(np.int64), np.maximum(low, high).astype(np.int64)


def level_cumulative_bounds(
    bands: LevelBands, widths: Sequence[Widths], groups: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`cumulative_bounds` of every node of an Hc or Hg level (``bands``, node k's tolerances
    ``widths[k]`` and its G ``groups[k]``), the band built for all nodes at once (:func:`_dense_band`).

    Equal to the node-by-node bounds (``tests/unit/accuracy/test_level_frame.py``).  Its memory is the
    level's cells: pass a slice of the nodes (:meth:`LevelBands.nodes`) for a large level.
    """
    if bands.method not in ("Hc", "Hg"):
        raise ParameterError(f"bounds for a whole level are given for Hc and Hg levels, not {bands.method}")
    groups = np.asarray(groups, np.int64)
    _, low, high = _dense_band(bands, widths, groups)
    ptr = np.concatenate([[0], np.cumsum(bands.cells, dtype=np.int64)])
    out = []
    for k in range(len(bands.cells)):
        a, b = ptr[k], ptr[k + 1]
        g = np.array([groups[k]], np.int64)
        if a == b:
            out.append((g, g.copy()))
        elif bands.method == "Hc":
            out.append((np.append(low[a:b], g), np.append(high[a:b], g)))
        else:  # Hc[j] ≥ #{i: U_i ≤ j} and ≤ #{i: L_i ≤ j}; both bounds are non-decreasing in the rank i
            sizes = np.arange(int(high[b - 1]) + 1)
            out.append((np.searchsorted(high[a:b], sizes, "right"), np.searchsorted(low[a:b], sizes, "right")))
    return out


def covered_nodes(bands: LevelBands, truth: np.ndarray, widths: Sequence[Widths], groups: np.ndarray) -> np.ndarray:
    """Per node of a level, whether its published band holds its true measured vector (all nodes at once).

    ``truth`` is the level's true query (Hc[0..K-1] or the sorted sizes, node by node as the bands'
    cells), ``widths`` the :class:`Widths` per node, ``groups`` G per node.  The same answer as
    :func:`truth_covered` on every node's frame (for an Hg band: the sizes inside their rank band exactly
    when the counts are inside theirs), vectorised for benchmarks.  Reads the truth: never for a release.
    """
    node, low, high = _dense_band(bands, widths, groups)
    outside = (low > truth) | (truth > high)
    return np.bincount(node[outside], minlength=len(bands.cells)) == 0
