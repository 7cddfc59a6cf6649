"""Figures of one node's histograms: true vs. private, error by size, consistency, representations."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from cocoviz.errors import ParameterError
from cocoviz.plots.style import (
    BAR_LIMIT,
    PRIVATE_COLOR,
    REFERENCE_COLOR,
    SERIES_COLORS,
    TRUE_COLOR,
    as_int_array,
    axis_types,
    note_log_zero,
    pad,
    sparse_points,
    step_points,
)

__all__ = [
    "histogram_figure",
    "error_by_size_figure",
    "consistency_figure",
    "representations_figure",
    "prefix_sums_figure",
]


def histogram_figure(
    h_true,
    h_private,
    *,
    view: str = "H",
    layout: str = "overlay",
    log_x: bool = False,
    log_y: bool = False,
    title: str | None = None,
    names: tuple[str, str] = ("true", "private"),
) -> go.Figure:
    """True against private count-of-counts histogram of one node.

    Parameters
    ----------
    h_true, h_private : H arrays (``H[j]`` = groups of size j), any lengths
    view : ``"H"`` (groups per size) or ``"cumulative"`` (Hc: groups of size at most j)
    layout : ``"overlay"`` (one panel) or ``"side"`` (two panels, shared y axis)
    log_x, log_y : logarithmic axes (size 0 and empty cells are then left out)
    names : trace names of the two histograms

    H is drawn as bars up to :data:`BAR_LIMIT` sizes, beyond that as markers at
    the sizes that hold groups; Hc as a step line through its change points.
    """
    if view not in ("H", "cumulative"):
        raise ParameterError(f"view must be 'H' or 'cumulative', got {view!r}")
    if layout not in ("overlay", "side"):
        raise ParameterError(f"layout must be 'overlay' or 'side', got {layout!r}")
    h_true, h_private = as_int_array(h_true), as_int_array(h_private)
    n = max(len(h_true), len(h_private), 1)
    h_true, h_private = pad(h_true, n), pad(h_private, n)
    side = layout == "side"
    fig = (
        make_subplots(rows=1, cols=2, shared_yaxes=True, subplot_titles=names, horizontal_spacing=0.04)
        if side
        else go.Figure()
    )
    colors = (TRUE_COLOR, PRIVATE_COLOR)
    has_zero = bool(h_true[0] or h_private[0])
    for k, (h, name, color) in enumerate(zip((h_true, h_private), names, colors)):
        if view == "cumulative":
            x, y = step_points(np.cumsum(h))
            if log_x:
                keep = x > 0
                x, y = x[keep], y[keep]
            trace = go.Scatter(
                x=x,
                y=y,
                name=name,
                mode="lines",
                line={"shape": "hv", "color": color, "width": 2},
                hovertemplate="size ≤ %{x}: %{y:,} groups<extra>" + name + "</extra>",
            )
        elif n <= BAR_LIMIT and not log_x:
            # Overlaid, the true bars are wide, pale and outlined, the private ones narrower and solid: where
            # they overlap both still read (two colours at one opacity would blend into a third).
            overlay_style = (
                {"opacity": 0.45, "width": 0.9, "marker_line": {"color": color, "width": 1.5}}
                if k == 0
                else {"opacity": 0.85, "width": 0.5, "marker_line": {"color": "#8A5A00", "width": 1}}
            )
            trace = go.Bar(
                x=np.arange(n),
                y=h,
                name=name,
                marker_color=color,
                **({"opacity": 0.9} if side else overlay_style),
                hovertemplate="size %{x}: %{y:,} groups<extra>" + name + "</extra>",
            )
        else:
            x, y = sparse_points(h, drop_zero_size=log_x)
            # The true histogram as open rings, the private one as small filled diamonds, so both stay
            # visible where they coincide.
            marker = (
                {"color": color, "size": 11, "symbol": "circle-open", "line": {"width": 2}}
                if k == 0
                else {"color": color, "size": 6, "symbol": "diamond"}
            )
            trace = go.Scatter(
                x=x,
                y=y,
                name=name,
                mode="markers",
                marker=marker,
                hovertemplate="size %{x}: %{y:,} groups<extra>" + name + "</extra>",
            )
        if side:
            fig.add_trace(trace, row=1, col=k + 1)
        else:
            fig.add_trace(trace)
    ylabel = "groups of size ≤ j (Hc)" if view == "cumulative" else "groups of size j (H)"
    fig.update_layout(
        title=title,
        barmode="overlay",
        bargap=0.05,
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 60 if title else 30},
    )
    fig.update_xaxes(title_text="group size j")
    fig.update_yaxes(title_text=ylabel, col=1) if side else fig.update_yaxes(title_text=ylabel)
    axis_types(fig, log_x, log_y)
    note_log_zero(fig, log_x, has_zero)
    return fig


def error_by_size_figure(
    errors: Mapping[str, np.ndarray], *, log_x: bool = False, log_y: bool = False, title: str | None = None
) -> go.Figure:
    """Error by size (paper, Figure 1): ``|Ĥc[s] − Hc[s]|`` against s, one step line per series.

    ``errors`` maps a series name to its per-size error array; each series
    sums to its emd, which the legend shows.
    """
    fig = go.Figure()
    for k, (name, err) in enumerate(errors.items()):
        err = as_int_array(err)
        x, y = step_points(err)
        if log_x:
            keep = x > 0
            x, y = x[keep], y[keep]
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                name=f"{name} (emd {int(err.sum()):,})",
                line={"shape": "hv", "color": SERIES_COLORS[k % len(SERIES_COLORS)], "width": 2},
                hovertemplate="size %{x}: |Ĥc − Hc| = %{y:,}<extra></extra>",
            )
        )
    fig.update_layout(title=title, legend={"orientation": "h", "y": -0.2}, margin={"t": 60 if title else 30})
    fig.update_xaxes(title_text="group size s")
    fig.update_yaxes(title_text="|Ĥc[s] − Hc[s]|")
    axis_types(fig, log_x, log_y)
    return fig


def consistency_figure(
    parent_h,
    children: Mapping[str, np.ndarray],
    *,
    view: str = "cumulative",
    log_x: bool = False,
    title: str | None = None,
    max_children: int = 10,
) -> go.Figure:
    """A parent's released histogram against the sum of its children's.

    The children are stacked (the largest ``max_children`` by groups, the
    rest pooled as "other children"); the parent is drawn on top as a line
    (cumulative view) or markers (H view).  When the release is consistent
    the parent sits exactly on the stack's top.
    """
    if view not in ("H", "cumulative"):
        raise ParameterError(f"view must be 'H' or 'cumulative', got {view!r}")
    parent = as_int_array(parent_h)
    kids = {k: as_int_array(v) for k, v in children.items()}
    n = max([len(parent), *(len(v) for v in kids.values()), 1])
    parent = pad(parent, n)
    kids = {k: pad(v, n) for k, v in kids.items()}
    order = sorted(kids, key=lambda k: -int(kids[k].sum()))
    shown = order[:max_children]
    rest = order[max_children:]
    stacks = [(k, kids[k]) for k in shown]
    if rest:
        stacks.append((f"other children ({len(rest)})", np.sum([kids[k] for k in rest], axis=0)))
    transform = np.cumsum if view == "cumulative" else (lambda a: a)
    fig = go.Figure()
    total = np.zeros(n, np.int64)
    for k, (name, h) in enumerate(stacks):
        total = total + h
        x, yy = step_points(transform(total))
        fig.add_trace(
            go.Scatter(
                x=x,
                y=yy,
                name=name,
                mode="lines",
                fill="tonexty" if k else "tozeroy",
                line={"shape": "hv", "width": 0.5, "color": SERIES_COLORS[k % len(SERIES_COLORS)]},
                hovertemplate="size %{x}: stack up to " + name + " = %{y:,}<extra></extra>",
            )
        )
    if view == "cumulative":
        x, y = step_points(np.cumsum(parent))
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                name="parent",
                mode="lines",
                line={"shape": "hv", "width": 2.5, "dash": "dot", "color": REFERENCE_COLOR},
                hovertemplate="size ≤ %{x}: parent %{y:,}<extra></extra>",
            )
        )
    else:
        x, y = sparse_points(parent, drop_zero_size=False)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                name="parent",
                mode="markers",
                marker={"color": REFERENCE_COLOR, "symbol": "x", "size": 8},
                hovertemplate="size %{x}: parent %{y:,}<extra></extra>",
            )
        )
    fig.update_layout(title=title, legend={"orientation": "h", "y": -0.2}, margin={"t": 60 if title else 30})
    fig.update_xaxes(title_text="group size j", type="log" if log_x else "linear")
    fig.update_yaxes(title_text="groups of size ≤ j (Hc)" if view == "cumulative" else "groups of size j (H)")
    return fig


def representations_figure(h, *, title: str | None = None) -> go.Figure:
    """The three views of one histogram side by side: H, Hc (cumulative) and Hg (ranked group sizes)."""
    h = as_int_array(h)
    hc = np.cumsum(h)
    hg = np.repeat(np.arange(len(h)), h)
    fig = make_subplots(
        rows=1,
        cols=3,
        subplot_titles=("H: groups of size j", "Hc: groups of size ≤ j", "Hg: sizes, smallest first"),
        horizontal_spacing=0.08,
    )
    sizes = np.arange(len(h))
    fig.add_trace(go.Bar(x=sizes, y=h, name="H", marker_color=TRUE_COLOR, text=h, textposition="outside"), 1, 1)
    fig.add_trace(
        go.Bar(x=sizes, y=hc, name="Hc", marker_color=SERIES_COLORS[2], text=hc, textposition="outside"), 1, 2
    )
    fig.add_trace(
        go.Bar(
            x=np.arange(1, len(hg) + 1), y=hg, name="Hg", marker_color=PRIVATE_COLOR, text=hg, textposition="outside"
        ),
        1,
        3,
    )
    fig.update_xaxes(title_text="size j", dtick=1, row=1, col=1)
    fig.update_xaxes(title_text="size j", dtick=1, row=1, col=2)
    fig.update_xaxes(title_text="rank i", dtick=1, row=1, col=3)
    fig.update_yaxes(rangemode="tozero")
    top = max(int(h.max(initial=0)), int(hc.max(initial=0)), int(hg.max(initial=0)), 1)
    fig.update_yaxes(range=[0, top * 1.25])
    fig.update_layout(title=title, showlegend=False, height=300, margin={"t": 60 if title else 40})
    return fig


def prefix_sums_figure(released, truth=None, *, emd: float | None = None, title: str | None = None) -> go.Figure:
    """Persons in groups of size at most j, P(j) = Σ_{s≤j} s·H[s]: released (and true), with the bound j·emd.

    ``released`` and ``truth`` are P(1..J) as arrays; ``emd`` draws the band
    P(j) ± j·emd that every release within that emd respects
    (|ΔP(j)| = |j·ΔHc(j) − Σ_{s<j} ΔHc(s)| ≤ j·Σ_s |ΔHc(s)|).

    >>> fig = prefix_sums_figure(np.array([2, 4, 4, 8]), np.array([2, 4, 4, 8]), emd=0)
    >>> [t.name for t in fig.data], fig.layout.xaxis.type
    (['released', 'true', 'bound j·emd'], 'log')
    """
    released = np.asarray(released)
    js = np.arange(1, len(released) + 1)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=js, y=released, name="released", mode="lines", line=dict(color=PRIVATE_COLOR)))
    if truth is not None:
        truth = np.asarray(truth)
        fig.add_trace(go.Scatter(x=js, y=truth, name="true", mode="lines", line=dict(color=TRUE_COLOR, dash="dot")))
        if emd is not None:
            fig.add_trace(
                go.Scatter(
                    x=js,
                    y=truth + js * emd,
                    name="bound j·emd",
                    mode="lines",
                    line=dict(color=REFERENCE_COLOR, dash="dash", width=1),
                )
            )
    fig.update_layout(
        title=title,
        xaxis_title="group size j (log scale)",
        yaxis_title="persons in groups of size ≤ j",
        hovermode="x unified",
    )
    # Sizes run to K (thousands) while the persons sit below ~20: on a linear axis the curve is a wall at the left.
    fig.update_xaxes(type="log")
    return fig
