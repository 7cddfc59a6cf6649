"""Figures of the size × tenure tables (:mod:`cocoviz.joint`): one region's table, errors, priors compared.

>>> import numpy as np
>>> fig = joint_table_figure(np.array([[3, 1], [2, 2]]), np.array([[2, 2], [3, 1]]), ["1", "2+"])
>>> [t.name for t in fig.data]
['true', 'private', 'true', 'private']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from cocoviz.plots.levels import padded_range
from cocoviz.plots.style import PRIVATE_COLOR, SERIES_COLORS, TRUE_COLOR, log_ticks

__all__ = ["joint_table_figure", "joint_errors_figure", "prior_comparison_figure"]

#: The errors of :func:`cocoviz.joint.evaluate_joint`, with readable names.
ERROR_NAMES = {
    "joint_l1": "joint ‖T̂/G − T/G‖₁ (Tao)",
    "size_l1": "size margin ‖n̂ − n‖₁/G",
    "tenure_l1": "tenure margin 2|Ô − O|/G",
}


def joint_table_figure(
    estimate: np.ndarray,
    truth: np.ndarray | None,
    class_labels: Sequence[str],
    *,
    tenures: Sequence[str] = ("owners", "renters"),
    title: str | None = None,
    log_y: bool | None = None,
) -> go.Figure:
    """One region's ``(classes, 2)`` table as grouped bars, a panel per tenure: true (if given) and private.

    ``log_y``: a log count axis, labelled in plain numbers (:func:`~cocoviz.plots.style.log_ticks`); ``None``
    chooses it when the non-zero counts span more than two decades. The count axis is padded above the
    tallest bar (no bar or its outline is clipped) and the panels sit close, with little blank space.

    >>> fig = joint_table_figure(np.array([[5000, 3], [20, 1]]), None, ["1", "2+"])
    >>> fig.layout.yaxis.type, list(fig.layout.yaxis.ticktext)
    ('log', ['1', '10', '100', '1,000'])
    """
    estimate = np.asarray(estimate)
    drawn = np.concatenate([np.asarray(t, dtype=float).ravel() for t in (estimate, truth) if t is not None])
    positive = drawn[drawn > 0]
    if log_y is None:
        log_y = bool(positive.size) and positive.max() / positive.min() > 100
    fig = make_subplots(rows=1, cols=2, subplot_titles=list(tenures), shared_yaxes=True, horizontal_spacing=0.05)
    labels = [str(c) for c in class_labels]
    for col in range(2):
        series = ([("true", truth, TRUE_COLOR)] if truth is not None else []) + [("private", estimate, PRIVATE_COLOR)]
        for name, table, color in series:
            fig.add_trace(
                go.Bar(
                    x=labels,
                    y=np.asarray(table)[:, col],
                    name=name,
                    marker_color=color,
                    legendgroup=name,
                    showlegend=col == 0,
                    hovertemplate=f"{tenures[col]}, size %{{x}}: {name} %{{y:,}}<extra></extra>",
                ),
                row=1,
                col=col + 1,
            )
    fig.update_layout(
        barmode="group",
        bargap=0.15,
        bargroupgap=0.05,
        title=title,
        height=420,
        legend={"orientation": "h", "y": -0.22},
        margin={"t": 70 if title else 40, "b": 40, "l": 60, "r": 20},
    )
    # The classes are labels ("≤1", "7+"): typed as numbers, plotly would silently drop the non-numeric ones.
    fig.update_xaxes(title_text="household size", type="category", categoryorder="array", categoryarray=labels)
    fig.update_yaxes(title_text="households", row=1, col=1)
    if log_y:
        fig.update_yaxes(type="log", **log_ticks(positive), range=padded_range(positive, log=True))
    else:
        fig.update_yaxes(range=padded_range(drawn, log=False))
    return fig


def joint_errors_figure(errors: pd.DataFrame, *, series: str = "config", title: str | None = None) -> go.Figure:
    """Grouped bars of the three errors (columns of :data:`ERROR_NAMES`), one bar per row of ``errors``."""
    fig = go.Figure()
    for k, (_, row) in enumerate(errors.iterrows()):
        fig.add_trace(
            go.Bar(
                x=list(ERROR_NAMES.values()),
                y=[row[m] for m in ERROR_NAMES],
                name=str(row[series]),
                marker_color=SERIES_COLORS[k % len(SERIES_COLORS)],
                hovertemplate=f"{row[series]}: %{{x}} = %{{y:.4g}}<extra></extra>",
            )
        )
    fig.update_layout(barmode="group", title=title, legend={"orientation": "h", "y": -0.25})
    fig.update_yaxes(title_text="L1 distance (0 … 2)")
    return fig


def prior_comparison_figure(
    summary: pd.DataFrame, level_names: Sequence[str], *, metric: str = "joint_l1", title: str | None = None
) -> go.Figure:
    """Mean ``metric`` per level (x) and configuration (bars); ``summary`` has level, config and the metric."""
    fig = go.Figure()
    for k, config in enumerate(dict.fromkeys(summary["config"])):
        part = summary[summary["config"] == config]
        fig.add_trace(
            go.Bar(
                x=[level_names[int(v)] for v in part["level"]],
                y=part[metric],
                name=str(config),
                marker_color=SERIES_COLORS[k % len(SERIES_COLORS)],
                hovertemplate=f"{config}: %{{x}}, mean %{{y:.4g}}<extra></extra>",
            )
        )
    fig.update_layout(barmode="group", title=title, legend={"orientation": "h", "y": -0.25})
    fig.update_yaxes(title_text=f"mean {ERROR_NAMES.get(metric, metric)}", type="log")
    return fig
