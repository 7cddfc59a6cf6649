"""What a band's confidence is about: one node (``scope="node"``) or every node of its level at once
(``scope="level"``), and the whole release's bands as one publishable frame (:func:`accuracy_frame`).

**Per node.**  :func:`~cocoviz.accuracy.intervals.bands.node_intervals` gives node ``k`` the event ``E_k`` (its
noisy cells within their whole tolerances) with ``P(E_k) ≥ c``; all of the node's bounds hold on ``E_k``.  That
is a statement about one node: over the ``n`` nodes of a level, some fail together in far more than ``1 - c``
of the draws (``P(∩ E_k) ≈ c^n``).

**Per level, exactly.**  The nodes of a level are disjoint sets of groups measured with independent noise
(parallel composition draws each node's cells from its own stream), so the events ``E_1, …, E_n`` are
independent.  Choosing every node's tolerances for the confidence ``c_node = c^(1/n)`` gives

    P(E_1 ∩ … ∩ E_n) = Π_k P(E_k) ≥ Π_k c^(1/n) = c,

so every bound of every node of the level holds at once with probability at least ``c``.  ``n`` counts all the
level's nodes; a node with no groups has no noisy cell (``P(E_k) = 1``), so counting it only raises the
guarantee.  The tolerances read ``n``, ``c`` and the law only (public facts), never the noisy values.

>>> round(node_confidence(0.9, "level", 58), 6), node_confidence(0.9, "node", 58)
(0.998185, 0.9)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.accuracy.intervals import level_frame
from cocoviz.accuracy.intervals.bands import (
    HG_SCALE,
    HG_SCALE_NOTE,
    WIDER_FIRST,
    band_refusal,
    cumulative_bounds,
    half_widths,
    level_cumulative_bounds,
    node_intervals,
)
from cocoviz.accuracy.intervals.derived import band_frame
from cocoviz.accuracy.intervals.level_frame import level_rows
from cocoviz.accuracy.intervals.multiscale import (
    multiscale_cumulative,
    multiscale_rank_bounds,
    multiscale_widths,
    rank_counts,
)
from cocoviz.accuracy.intervals.widths import SCOPES, check_confidence, check_scope, node_confidence
from cocoviz.hierarchy.tree import node_label

__all__ = [
    "SCOPES",
    "check_scope",
    "node_confidence",
    "scoped_intervals",
    "runs_intervals",
    "accuracy_frame",
    "ACCURACY_COLUMNS",
]

#: The columns of :func:`accuracy_frame`, in order.
ACCURACY_COLUMNS = (
    "level",
    "node",
    "size",
    "size_to",
    "cumulative_low",
    "cumulative_high",
    "cumulative",
    "count_low",
    "count_high",
    "count",
    "persons_low",
    "persons_high",
    "persons",
)


def _uses_runs(measurements, level: int) -> bool:
    """Whether ``level``'s band is the multiscale one: an Hg level whose noisy answers are at hand."""
    if measurements is None or level >= len(measurements.levels):
        return False
    measured = measurements.levels[level]
    return measured is not None and measured.method == "Hg"


def runs_intervals(plan, measurements, level: int, k: int, sizes, counts, confidence: float, *, grain: int = 1):
    """The frame of :func:`~cocoviz.accuracy.intervals.bands.node_intervals` (same columns) for node ``k`` of an Hg
    level, from the multiscale band (:mod:`cocoviz.accuracy.intervals.multiscale`) at the node's own
    ``confidence``: its bounds use the runs of equal sizes.  ``attrs["band"] = "runs"``, ``attrs["guarantee"]``
    the proven lower bound on the node's coverage (``exact_confidence`` is None: a union bound, not exact)."""
    low, high, widths, _, _ = multiscale_cumulative(measurements, level, k, confidence, grain=grain)
    frame, emd = band_frame(low, high, sizes, counts)
    frame.attrs.update(
        confidence=confidence,
        exact_confidence=None,
        guarantee=widths.guarantee,
        half_width=widths.single,
        cells=widths.cells,
        method="Hg",
        band="runs",
        level=level,
        emd_bound=emd,
        note=(
            f"Simultaneous {confidence:.0%} bounds on the true histogram, from this node's own Hg measurement "
            f"averaged over intervals of ranks ({len(widths.scales)} scales; a run of equal sizes pins its size) "
            "and public facts only: post-processing, no ε. The released histogram (after consistency) may lie "
            "outside them. " + HG_SCALE_NOTE
        ),
        meaningful_for=HG_SCALE,
    )
    return frame


def scoped_intervals(
    plan, bands, level: int, k: int, sizes, counts, confidence: float = 0.9, scope: str = "node", measurements=None
):
    """:func:`~cocoviz.accuracy.intervals.bands.node_intervals` at the scope's per-node confidence; with
    ``measurements`` (the release's noisy answers), an Hg level's band is the multiscale one
    (:func:`runs_intervals`).

    ``attrs`` then say what the bounds are about: ``confidence`` (the statement's), ``scope``, ``level_nodes``
    (the nodes it holds over together: 1 for ``"node"``), ``node_confidence`` (what each node's tolerances
    were chosen for) and ``exact_confidence`` (the guarantee the whole tolerances give for the scope:
    the node's ``P(E)``, or the product over the level's nodes when every node has as many cells as this one —
    otherwise at least ``confidence``).  The note says it in words.
    """
    confidence = check_confidence(confidence)
    scope = check_scope(scope)
    nodes = int(len(plan.shape.group_counts(level))) if scope == "level" else 1
    per_node = node_confidence(confidence, scope, nodes)
    if _uses_runs(measurements, level):
        frame = runs_intervals(plan, measurements, level, k, sizes, counts, per_node)
    else:
        frame = node_intervals(plan, bands, level, k, np.asarray(sizes), np.asarray(counts), per_node)
        frame.attrs["band"] = "cells"
    node_exact = frame.attrs["exact_confidence"]
    frame.attrs.update(confidence=confidence, scope=scope, level_nodes=nodes, node_confidence=per_node)
    if scope == "level":
        frame.attrs["node_exact_confidence"] = node_exact
        frame.attrs["exact_confidence"] = None
        frame.attrs["note"] = frame.attrs["note"].replace(
            f"Simultaneous {per_node:.0%} bounds",
            f"Simultaneous {confidence:.0%} bounds, holding for all {nodes:,} nodes of level {level} at once "
            f"(each node's band at {per_node:.4%}; the nodes' noises are independent)",
            1,
        )
    else:
        frame.attrs["note"] = frame.attrs["note"] + f" The {confidence:.0%} is per node, not for all nodes at once."
    return frame


def _level_nodes(release, level: int, confidence: float, measurements, runs_band: bool):
    """``(low, high, sizes, counts)`` per node of ``level``: its cumulative bounds at ``confidence`` (the per-cell
    band of :func:`~cocoviz.accuracy.intervals.bands.node_intervals` or the runs band of :func:`runs_intervals`)
    and its released runs.  The tolerances depend on a node's cell count only, so each count's are found once."""
    plan, runs = release.plan, release.runs(level)
    groups = plan.shape.group_counts(level)
    widths: dict[int, object] = {}
    if runs_band:
        measured = measurements.levels[level]
        noise = measurements.plan.level_noise(level)
        for k in range(runs.n_nodes):
            values = measured.node(k)
            if values.size not in widths:
                widths[values.size] = multiscale_widths(noise, values.size, confidence)
            low, high = rank_counts(*multiscale_rank_bounds(values, widths[values.size]))
            yield (low, high, *runs.node(k))
        return
    bands = release.bands[level]
    noise, first = plan.level_noise(level), WIDER_FIRST[bands.method]

    def tolerances(k: int):
        cells = int(bands.cells[k])
        if cells not in widths:
            widths[cells] = half_widths(noise, cells, confidence, first=first)
        return widths[cells]

    if bands.method not in ("Hc", "Hg"):  # Hcp and naive: node by node
        for k in range(runs.n_nodes):
            low, high = cumulative_bounds(bands, k, groups=int(groups[k]), a=tolerances(k))
            yield (low, high, *runs.node(k))
        return
    # Hc and Hg: the band of a run of nodes at once, the runs cut at about level_frame.CHUNK_CELLS cells
    ends = np.cumsum(bands.cells, dtype=np.int64)
    start = 0
    while start < runs.n_nodes:
        before = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, before + level_frame.CHUNK_CELLS, side="right")), start + 1)
        chunk = [tolerances(k) for k in range(start, stop)]
        bounds = level_cumulative_bounds(bands.nodes(start, stop), chunk, groups[start:stop])
        for k, (low, high) in zip(range(start, stop), bounds):
            yield (low, high, *runs.node(k))
        start = stop


def accuracy_frame(release, confidence: float = 0.9, scope: str = "node", measurements=None) -> pd.DataFrame:
    """Every node's band of a release, as one publishable frame (post-processing: no ε).

    One row per node and *stretch* of sizes: a row starts wherever the node's released count is positive or
    its cumulative bounds or released cumulative change, and covers sizes ``size`` to ``size_to``.  Columns
    (:data:`ACCURACY_COLUMNS`): ``level``, ``node`` (its label), then the columns of
    :meth:`cocoviz.Release.intervals` at the row's first size.  Sizes inside a stretch after its first keep
    that row's cumulative bounds and released cumulative, released count 0 and count bounds
    ``[0, cumulative_high - cumulative_low]``; the persons bounds are at the row's first size.

    ``scope="node"``: each node's bounds hold together with probability ≥ ``confidence``; ``"level"``: all the
    bounds of all the nodes of a level at once (:mod:`cocoviz.accuracy.intervals.scope`).  Levels without a
    band (not measured, a method without bands, a release without its envelopes) have no rows; ``attrs``
    name them under ``skipped`` with the reason, and hold ``confidence``, ``scope`` and per level its
    ``node_confidence``.  With ``measurements`` (the release's noisy answers, publishable), Hg levels get the
    multiscale band that uses runs of equal sizes (:func:`runs_intervals`); ``attrs["band"]`` names each
    level's band (``"cells"`` or ``"runs"``).

    A level's rows are computed for its nodes at once (:mod:`cocoviz.accuracy.intervals.level_frame`), equal to
    each node's :meth:`~cocoviz.Release.intervals` frame at its stretches.

    Examples
    --------
    >>> import numpy as np
    >>> from cocoviz.core.runs import LevelRuns
    >>> from cocoviz.plan import Plan, Shape
    >>> from cocoviz.release.post_process import post_process
    >>> from cocoviz.measure.measurements import measure
    >>> from cocoviz.hierarchy import Hierarchy
    >>> import pandas as pd
    >>> tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}),
    ...                              size="size", levels=["region"])
    >>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=8)
    >>> release = post_process(plan, measure(plan, tree, seed=0))
    >>> frame = accuracy_frame(release, confidence=0.9, scope="level")
    >>> sorted(frame["node"].unique()), frame.attrs["scope"]
    (['(root)', 'a', 'b'], 'level')
    """
    confidence = check_confidence(confidence)
    scope = check_scope(scope)
    plan = release.plan
    parts, skipped, per_level, kinds = [], {}, {}, {}
    for level in range(plan.shape.depth + 1):
        runs_band = _uses_runs(measurements, level)
        why = None if runs_band else band_refusal(plan, release.bands, level)
        if why is not None:
            skipped[level] = why
            continue
        nodes = release.nodes(level)
        per_level[level] = node_confidence(confidence, scope, len(nodes))
        kinds[level] = "runs" if runs_band else "cells"
        labels = np.array([node_label(path) for path in nodes], dtype=object)
        for rows in level_rows(_level_nodes(release, level, per_level[level], measurements, runs_band)):
            segment = rows.pop("segment")
            rows["level"] = np.full(segment.size, level, np.int64)
            rows["node"] = labels[segment]
            parts.append(rows)
    out = pd.DataFrame(
        {
            c: np.concatenate([p[c] for p in parts]) if parts else np.zeros(0, object if c == "node" else np.int64)
            for c in ACCURACY_COLUMNS
        }
    )
    out.attrs.update(
        confidence=confidence,
        scope=scope,
        node_confidence=per_level,
        band=kinds,
        skipped=skipped,
        note=(
            f"Simultaneous {confidence:.0%} bounds on every node's true histogram, "
            + ("per node" if scope == "node" else "for all nodes of a level at once")
            + ", from each node's own noisy measurement and public facts only: post-processing, no ε."
            + (
                " On Hg levels the bounds are meaningful for the sorted sizes and for cumulative counts; a single "
                "size's count bounds can be many times wider than its actual error."
                if any(plan.methods[level] == "Hg" for level in kinds)
                else ""
            )
        ),
        hg_levels=[level for level in kinds if plan.methods[level] == "Hg"],
    )
    return out
