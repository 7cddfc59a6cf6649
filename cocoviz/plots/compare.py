"""Figures of two releases compared: each node's error under one against its error under the other."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from cocoviz.plots.style import REFERENCE_COLOR, SERIES_COLORS

__all__ = ["error_against_error_figure"]


def error_against_error_figure(
    errors: pd.DataFrame,
    *,
    names: tuple[str, str] = ("A", "B"),
    level_names: list[str] | None = None,
    max_points: int | None = None,
) -> go.Figure:
    """Each node's emd under release A (x) against release B (y), one colour per level, on log axes, with the
    diagonal: a node below it is better under B.

    ``errors``: one row per node with ``level``, ``node``, ``emd_a`` and ``emd_b``.  A level of more than
    ``max_points`` nodes is drawn as its percentiles instead (the p-th percentile of A's emd against B's,
    p = 0..100: a quantile-quantile line), so the figure does not grow with millions of nodes.

    >>> frame = pd.DataFrame({"level": [0, 1], "node": ["(root)", "a"], "emd_a": [4, 2], "emd_b": [3, 5]})
    >>> [t.name for t in error_against_error_figure(frame).data]
    ['level 0', 'level 1', 'same error']
    """
    fig = go.Figure()
    for k, (level, rows) in enumerate(errors.groupby("level", sort=True)):
        label = level_names[int(level)] if level_names is not None else f"level {level}"
        color = SERIES_COLORS[k % len(SERIES_COLORS)]
        if max_points is not None and len(rows) > max_points:
            fig.add_trace(_percentiles_trace(rows, f"{label}: percentiles of {len(rows):,} nodes", names, color))
            continue
        # emd 0 has no place on a log axis: drawn at 0.5, and said in the hover.
        fig.add_trace(
            go.Scatter(
                x=np.maximum(rows["emd_a"], 0.5),
                y=np.maximum(rows["emd_b"], 0.5),
                mode="markers",
                name=label,
                text=rows["node"],
                customdata=np.stack([rows["emd_a"], rows["emd_b"]], axis=1),
                hovertemplate="%{text}<br>emd "
                + names[0]
                + " %{customdata[0]:,}<br>emd "
                + names[1]
                + " %{customdata[1]:,}<extra></extra>",
                marker={"color": color, "size": 7, "opacity": 0.8},
            )
        )
    top = float(max(errors["emd_a"].max(), errors["emd_b"].max(), 1))
    fig.add_trace(
        go.Scatter(
            x=[0.5, top], y=[0.5, top], mode="lines", name="same error", line={"color": REFERENCE_COLOR, "dash": "dash"}
        )
    )
    # Ticks at the decades only, in plain numbers: plotly's own log ticks read "5 1 2 5 10 2 5".
    decades = {"type": "log", "dtick": 1, "tickformat": ","}
    fig.update_xaxes(title=f"emd under {names[0]} (persons misplaced)", **decades)
    fig.update_yaxes(title=f"emd under {names[1]}", **decades)
    fig.update_layout(title="Error against error, node by node (below the diagonal: better under B)", height=460)
    return fig


def _percentiles_trace(rows: pd.DataFrame, name: str, names: tuple[str, str], color: str) -> go.Scatter:
    percent = np.arange(101)
    x, y = (np.quantile(rows[c].to_numpy(np.float64), percent / 100) for c in ("emd_a", "emd_b"))
    return go.Scatter(
        x=np.maximum(x, 0.5),
        y=np.maximum(y, 0.5),
        mode="lines+markers",
        name=name,
        customdata=np.stack([percent, x, y], axis=1),
        hovertemplate="p%{customdata[0]}: emd " + names[0] + " %{customdata[1]:,.3g}, " + names[1]
        + " %{customdata[2]:,.3g}<extra></extra>",
        line={"color": color, "dash": "dot"},
        marker={"color": color, "size": 5},
    )  # fmt: skip
