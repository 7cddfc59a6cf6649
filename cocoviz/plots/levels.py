"""Figures across levels and runs: error per level, the budget, sweeps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from cocoviz.plots.style import (
    PRIVATE_COLOR,
    REFERENCE_COLOR,
    SERIES_COLORS,
    log_ticks,
    plain_ticks,
)

__all__ = ["level_error_figure", "budget_figure", "sweep_figure"]


def level_error_figure(
    level_errors: pd.DataFrame,
    *,
    level_names: Sequence[str] | None = None,
    log_y: bool = True,
    title: str | None = None,
) -> go.Figure:
    """Mean emd per level as bars, with the omniscient yardstick D/ε as markers.

    ``level_errors`` has the columns of :meth:`cocoviz.Release.level_errors`
    (level, nodes, mean_emd, max_emd, omniscient).
    """
    levels = level_errors["level"].to_numpy()
    names = [level_names[int(k)] if level_names is not None else f"level {int(k)}" for k in levels]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=names,
            y=level_errors["mean_emd"],
            name="mean emd (release)",
            marker_color=PRIVATE_COLOR,
            customdata=np.c_[level_errors["nodes"], level_errors["max_emd"]],
            hovertemplate="%{x}: mean emd %{y:,.1f} over %{customdata[0]} node(s), "
            "max %{customdata[1]:,}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=names,
            y=level_errors["omniscient"],
            name="omniscient yardstick D/ε",
            mode="markers",
            marker={
                "color": REFERENCE_COLOR,
                "symbol": "line-ew-open",
                "size": 28,
                "line": {"width": 3, "color": REFERENCE_COLOR},
            },
            hovertemplate="%{x}: omniscient D/ε = %{y:,.1f}<extra></extra>",
        )
    )
    fig.update_layout(title=title, legend={"orientation": "h", "y": -0.2}, margin={"t": 60 if title else 30})
    fig.update_yaxes(title_text="emd (persons)", type="log" if log_y else "linear")
    drawn = np.asarray(np.r_[level_errors["mean_emd"], level_errors["omniscient"]], dtype=float)
    if log_y:
        fig.update_yaxes(**log_ticks(drawn))
    fig.update_yaxes(range=padded_range(drawn, log=log_y))
    return fig


def padded_range(values, *, log: bool, share: float = 0.12) -> list[float] | None:
    """An axis range around ``values`` with ``share`` of its span free at each end, so no marker is clipped.

    On a log axis the range is in decades (plotly's convention) and non-positive values are left out; a
    linear range starts at 0 when every value is ≥ 0. ``None`` (plotly's own range) when nothing is drawn.

    >>> padded_range([10.0, 1000.0], log=True)
    [0.76, 3.24]
    >>> padded_range([0.0, 50.0], log=False)
    [0, 56.0]
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v) & (v > 0)] if log else v[np.isfinite(v)]
    if not v.size:
        return None
    if log:
        lo, hi = np.log10(v.min()), np.log10(v.max())
        margin = max(hi - lo, 1.0) * share
        return [round(float(lo - margin), 6), round(float(hi + margin), 6)]
    lo, hi = float(v.min()), float(v.max())
    margin = max(hi - lo, abs(hi), 1.0) * share
    return [0 if lo >= 0 else lo - margin, hi + margin]


def budget_figure(
    per_level: Mapping[int, float],
    *,
    level_names: Sequence[str] | None = None,
    extra: Mapping[str, float] | None = None,
    title: str | None = None,
    unit: str = "ε",
) -> go.Figure:
    """The privacy budget as one horizontal stacked bar: ε of every level (and extra spending).

    Levels compose sequentially, so the bar's length is the total ε; ``unit="ρ"`` draws a zCDP budget,
    whose ρ add up the same way.
    """
    fig = go.Figure()
    items = [(level_names[k] if level_names is not None else f"level {k}", eps) for k, eps in per_level.items()]
    items += list((extra or {}).items())
    for k, (name, eps) in enumerate(items):
        fig.add_trace(
            go.Bar(
                y=[unit],
                x=[eps],
                name=f"{name}: {unit} = {eps:g}",
                orientation="h",
                marker_color=SERIES_COLORS[k % len(SERIES_COLORS)],
                text=[f"{eps:g}"],
                textposition="inside",
                hovertemplate=f"{name}: {unit} = {eps:g}<extra></extra>",
            )
        )
    total = float(sum(eps for _, eps in items))
    fig.update_layout(
        barmode="stack",
        title=title or f"total {unit} = {total:g}",
        height=170,
        legend={"orientation": "h", "y": -0.5},
        margin={"t": 40, "b": 10, "l": 10, "r": 10},
    )
    fig.update_xaxes(title_text=None, range=[0, total * 1.001 if total else 1])
    fig.update_yaxes(showticklabels=False)
    return fig


def sweep_figure(
    summary: pd.DataFrame,
    *,
    x: str = "epsilon",
    y: str = "mean",
    error: str | None = "se",
    series: str = "series",
    facet: str = "level",
    facet_names: Sequence[str] | None = None,
    log_x: bool = True,
    log_y: bool = True,
    title: str | None = None,
    x_title: str = "ε per level",
    y_title: str = "mean emd per node",
) -> go.Figure:
    """Error against budget: one panel per ``facet`` (level), one line per ``series``, ± ``error`` bars.

    ``summary`` is tidy: one row per (facet, series, x) with the mean and its
    standard error (e.g. over trials).
    """
    facets = sorted(summary[facet].unique()) if len(summary) else [0]
    names = [
        facet_names[int(f)] if facet_names is not None and int(f) < len(facet_names) else f"level {f}" for f in facets
    ]
    fig = make_subplots(rows=1, cols=len(facets), subplot_titles=names, horizontal_spacing=0.06)
    series_names = list(dict.fromkeys(summary[series])) if len(summary) else []
    for col, f in enumerate(facets, start=1):
        part = summary[summary[facet] == f]
        if log_y:
            spread = part[error].fillna(0).to_numpy() if error is not None and error in part else 0
            fig.update_yaxes(**log_ticks(np.r_[part[y] - spread, part[y] + spread]), row=1, col=col)
        for k, name in enumerate(series_names):
            s = part[part[series] == name].sort_values(x)
            if s.empty:
                continue
            color = SERIES_COLORS[k % len(SERIES_COLORS)]
            err = None
            if error is not None and error in s:
                err = {"type": "data", "array": s[error].fillna(0).to_numpy(), "visible": True, "color": color}
            fig.add_trace(
                go.Scatter(
                    x=s[x],
                    y=s[y],
                    error_y=err,
                    mode="lines+markers",
                    name=str(name),
                    legendgroup=str(name),
                    showlegend=col == 1,
                    line={"color": color},
                    marker={"color": color},
                    hovertemplate=f"{name}<br>{x_title} %{{x:g}}: %{{y:,.1f}}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_xaxes(title_text=x_title, type="log" if log_x else "linear")
    if log_x and len(summary):
        fig.update_xaxes(**plain_ticks(summary[x]))
    fig.update_yaxes(type="log" if log_y else "linear")
    fig.update_yaxes(title_text=y_title, col=1)
    fig.update_layout(title=title, legend={"orientation": "h", "y": -0.25}, margin={"t": 60 if title else 40})
    return fig


# --------------------------------------------------------------------------- teaching
