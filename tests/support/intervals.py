"""The node-by-node accuracy frame: every node's :meth:`Release.intervals` frame cut to its stretches.

The reference :func:`cocoviz.accuracy.intervals.scope.accuracy_frame` (which computes a level's nodes at once)
is tested against, and the baseline ``benchmarks/intervals.py --only frame`` times it against.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.accuracy.intervals.bands import band_refusal, node_intervals
from cocoviz.accuracy.intervals.scope import ACCURACY_COLUMNS, node_confidence, runs_intervals
from cocoviz.hierarchy.tree import node_label


def _uses_runs(measurements, level: int) -> bool:
    if measurements is None or level >= len(measurements.levels):
        return False
    measured = measurements.levels[level]
    return measured is not None and measured.method == "Hg"


def stretches(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    columns = {c: frame[c].to_numpy() for c in ACCURACY_COLUMNS[2:] if c != "size_to"}
    low, high, released = columns["cumulative_low"], columns["cumulative_high"], columns["cumulative"]
    keep = np.ones(low.size, bool)
    keep[1:] = (low[1:] != low[:-1]) | (high[1:] != high[:-1]) | (released[1:] != released[:-1])
    kept = {c: v[keep] for c, v in columns.items()}
    starts = kept["size"]
    kept["size_to"] = np.append(starts[1:] - 1, columns["size"][-1]).astype(np.int64)
    return kept


def node_by_node_frame(release, confidence: float = 0.9, scope: str = "node", measurements=None) -> pd.DataFrame:
    """The accuracy frame's rows, one node's full frame at a time (no attrs)."""
    plan = release.plan
    parts = []
    for level in range(plan.shape.depth + 1):
        runs_band = _uses_runs(measurements, level)
        if not runs_band and band_refusal(plan, release.bands, level) is not None:
            continue
        nodes = release.nodes(level)
        per_node = node_confidence(confidence, scope, len(nodes))
        runs = release.runs(level)
        for k, path in enumerate(nodes):
            if runs_band:
                frame = runs_intervals(plan, measurements, level, k, *runs.node(k), per_node)
            else:
                frame = node_intervals(plan, release.bands, level, k, *runs.node(k), per_node)
            frame.attrs = {}
            kept = stretches(frame)
            kept["level"] = np.full(kept["size"].size, level, np.int64)
            kept["node"] = np.full(kept["size"].size, node_label(path), dtype=object)
            parts.append(kept)
    return pd.DataFrame(
        {
            c: np.concatenate([p[c] for p in parts]) if parts else np.zeros(0, object if c == "node" else np.int64)
            for c in ACCURACY_COLUMNS
        }
    )
