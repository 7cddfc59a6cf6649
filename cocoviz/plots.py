"""Plotly figures of the dashboard: every chart is built here, from plain arrays and frames.

No Streamlit here: each builder takes numbers (numpy arrays, pandas frames,
dicts) and returns a :class:`plotly.graph_objects.Figure`, so the figures can
be tested on their data without a browser and reused in notebooks.

Colours: a few mid-tone colours that read on light and dark backgrounds;
no template is set, so Streamlit's theme (``theme="streamlit"``) or
plotly's default applies.  Long histograms are drawn sparsely: H as markers
at the sizes that hold groups, Hc as a step line through its change points
(exact for a piecewise-constant function), so K = 100,000 stays cheap.

>>> fig = histogram_figure(np.array([0, 2, 1, 0, 1]), np.array([0, 1, 2, 1]))
>>> [t.name for t in fig.data]
['true', 'private']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from cocoviz.errors import ParameterError
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

__all__ = [
    "TRUE_COLOR",
    "PRIVATE_COLOR",
    "REFERENCE_COLOR",
    "SERIES_COLORS",
    "histogram_figure",
    "error_by_size_figure",
    "level_error_figure",
    "budget_figure",
    "consistency_figure",
    "sweep_figure",
    "representations_figure",
    "noise_figure",
    "isotonic_figure",
    "matching_figure",
    "merge_figure",
    "step_points",
]

TRUE_COLOR = "#4C8BF5"      # mid blue
PRIVATE_COLOR = "#F5A623"   # amber
REFERENCE_COLOR = "#9E9E9E"  # grey, for references and guides
#: Distinct mid-tone colours for series (method mixes, merges, children).
SERIES_COLORS = ("#4C8BF5", "#F5A623", "#2CA58D", "#E4572E", "#A06CD5", "#8D6E63", "#6B8E23", "#17BECF",
                 "#EC6FA8", "#7F8C8D")

#: Above this many sizes, H is drawn as markers at its non-empty sizes instead of bars.
BAR_LIMIT = 300


def _as_int_array(h) -> np.ndarray:
    return np.asarray(h, dtype=np.int64).ravel()


def _pad(h: np.ndarray, n: int) -> np.ndarray:
    return h if len(h) >= n else np.concatenate([h, np.zeros(n - len(h), h.dtype)])


def step_points(values: np.ndarray, *, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The change points of a step function ``values[x]`` over x = start, start+1, ...

    Returns ``(x, y)`` with the first point, every point where the value
    changes, and the last point; drawn with ``line_shape="hv"`` it is the
    same picture as all points, at a fraction of the size.

    >>> step_points(np.array([0, 2, 2, 2, 4]))
    (array([0, 1, 4]), array([0, 2, 4]))
    """
    values = np.asarray(values)
    if values.size == 0:
        return np.zeros(0, np.int64), values
    keep = np.ones(values.size, bool)
    keep[1:] = values[1:] != values[:-1]
    keep[-1] = True
    x = np.flatnonzero(keep)
    return x + start, values[x]


def _sparse_points(h: np.ndarray, *, drop_zero_size: bool) -> tuple[np.ndarray, np.ndarray]:
    x = np.flatnonzero(h)
    if drop_zero_size:
        x = x[x > 0]
    return x, h[x]


def _axis_types(fig: go.Figure, log_x: bool, log_y: bool) -> None:
    fig.update_xaxes(type="log" if log_x else "linear")
    fig.update_yaxes(type="log" if log_y else "linear")


def _note_log_zero(fig: go.Figure, log_x: bool, has_zero: bool) -> None:
    if log_x and has_zero:
        fig.add_annotation(text="size 0 not shown on a log axis", xref="paper", yref="paper", x=1, y=1.08,
                           showarrow=False, xanchor="right", font={"size": 11})


def histogram_figure(h_true, h_private, *, view: str = "H", layout: str = "overlay", log_x: bool = False,
                     log_y: bool = False, title: str | None = None,
                     names: tuple[str, str] = ("true", "private")) -> go.Figure:
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
    h_true, h_private = _as_int_array(h_true), _as_int_array(h_private)
    n = max(len(h_true), len(h_private), 1)
    h_true, h_private = _pad(h_true, n), _pad(h_private, n)
    side = layout == "side"
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, subplot_titles=names,
                        horizontal_spacing=0.04) if side else go.Figure()
    colors = (TRUE_COLOR, PRIVATE_COLOR)
    has_zero = bool(h_true[0] or h_private[0])
    for k, (h, name, color) in enumerate(zip((h_true, h_private), names, colors)):
        if view == "cumulative":
            x, y = step_points(np.cumsum(h))
            if log_x:
                keep = x > 0
                x, y = x[keep], y[keep]
            trace = go.Scatter(x=x, y=y, name=name, mode="lines", line={"shape": "hv", "color": color, "width": 2},
                               hovertemplate="size ≤ %{x}: %{y:,} groups<extra>" + name + "</extra>")
        elif n <= BAR_LIMIT and not log_x:
            trace = go.Bar(x=np.arange(n), y=h, name=name, marker_color=color, opacity=0.6 if not side else 0.9,
                           hovertemplate="size %{x}: %{y:,} groups<extra>" + name + "</extra>")
        else:
            x, y = _sparse_points(h, drop_zero_size=log_x)
            # The true histogram as open rings, the private one as small filled diamonds, so both stay
            # visible where they coincide.
            marker = ({"color": color, "size": 11, "symbol": "circle-open", "line": {"width": 2}} if k == 0
                      else {"color": color, "size": 6, "symbol": "diamond"})
            trace = go.Scatter(x=x, y=y, name=name, mode="markers", marker=marker,
                               hovertemplate="size %{x}: %{y:,} groups<extra>" + name + "</extra>")
        if side:
            fig.add_trace(trace, row=1, col=k + 1)
        else:
            fig.add_trace(trace)
    ylabel = "groups of size ≤ j (Hc)" if view == "cumulative" else "groups of size j (H)"
    fig.update_layout(title=title, barmode="overlay", bargap=0.05, legend={"orientation": "h", "y": -0.2},
                      margin={"t": 60 if title else 30})
    fig.update_xaxes(title_text="group size j")
    fig.update_yaxes(title_text=ylabel, col=1) if side else fig.update_yaxes(title_text=ylabel)
    _axis_types(fig, log_x, log_y)
    _note_log_zero(fig, log_x, has_zero)
    return fig


def error_by_size_figure(errors: Mapping[str, np.ndarray], *, log_x: bool = False, log_y: bool = False,
                         title: str | None = None) -> go.Figure:
    """Error by size (paper, Figure 1): ``|Ĥc[s] − Hc[s]|`` against s, one step line per series.

    ``errors`` maps a series name to its per-size error array; each series
    sums to its emd, which the legend shows.
    """
    fig = go.Figure()
    for k, (name, err) in enumerate(errors.items()):
        err = _as_int_array(err)
        x, y = step_points(err)
        if log_x:
            keep = x > 0
            x, y = x[keep], y[keep]
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=f"{name} (emd {int(err.sum()):,})",
                                 line={"shape": "hv", "color": SERIES_COLORS[k % len(SERIES_COLORS)], "width": 2},
                                 hovertemplate="size %{x}: |Ĥc − Hc| = %{y:,}<extra></extra>"))
    fig.update_layout(title=title, legend={"orientation": "h", "y": -0.2}, margin={"t": 60 if title else 30})
    fig.update_xaxes(title_text="group size s")
    fig.update_yaxes(title_text="|Ĥc[s] − Hc[s]|")
    _axis_types(fig, log_x, log_y)
    return fig


def level_error_figure(level_errors: pd.DataFrame, *, level_names: Sequence[str] | None = None,
                       log_y: bool = True, title: str | None = None) -> go.Figure:
    """Mean emd per level as bars, with the omniscient yardstick D/ε as markers.

    ``level_errors`` has the columns of :meth:`cocoviz.Release.level_errors`
    (level, nodes, mean_emd, max_emd, omniscient).
    """
    levels = level_errors["level"].to_numpy()
    names = [level_names[int(k)] if level_names is not None else f"level {int(k)}" for k in levels]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=names, y=level_errors["mean_emd"], name="mean emd (release)", marker_color=PRIVATE_COLOR,
                         customdata=np.c_[level_errors["nodes"], level_errors["max_emd"]],
                         hovertemplate="%{x}: mean emd %{y:,.1f} over %{customdata[0]} node(s), "
                                       "max %{customdata[1]:,}<extra></extra>"))
    fig.add_trace(go.Scatter(x=names, y=level_errors["omniscient"], name="omniscient yardstick D/ε", mode="markers",
                             marker={"color": REFERENCE_COLOR, "symbol": "line-ew-open", "size": 28,
                                     "line": {"width": 3, "color": REFERENCE_COLOR}},
                             hovertemplate="%{x}: omniscient D/ε = %{y:,.1f}<extra></extra>"))
    fig.update_layout(title=title, legend={"orientation": "h", "y": -0.2}, margin={"t": 60 if title else 30})
    fig.update_yaxes(title_text="emd (persons)", type="log" if log_y else "linear")
    return fig


def budget_figure(per_level: Mapping[int, float], *, level_names: Sequence[str] | None = None,
                  extra: Mapping[str, float] | None = None, title: str | None = None) -> go.Figure:
    """The privacy budget as one horizontal stacked bar: ε of every level (and extra spending).

    Levels compose sequentially, so the bar's length is the total ε.
    """
    fig = go.Figure()
    items = [(level_names[k] if level_names is not None else f"level {k}", eps) for k, eps in per_level.items()]
    items += list((extra or {}).items())
    for k, (name, eps) in enumerate(items):
        fig.add_trace(go.Bar(y=["ε"], x=[eps], name=f"{name}: ε = {eps:g}", orientation="h",
                             marker_color=SERIES_COLORS[k % len(SERIES_COLORS)], text=[f"{eps:g}"],
                             textposition="inside", hovertemplate=f"{name}: ε = {eps:g}<extra></extra>"))
    total = float(sum(eps for _, eps in items))
    fig.update_layout(barmode="stack", title=title or f"total ε = {total:g}", height=170,
                      legend={"orientation": "h", "y": -0.5}, margin={"t": 40, "b": 10, "l": 10, "r": 10})
    fig.update_xaxes(title_text=None, range=[0, total * 1.001 if total else 1])
    fig.update_yaxes(showticklabels=False)
    return fig


def consistency_figure(parent_h, children: Mapping[str, np.ndarray], *, view: str = "cumulative",
                       log_x: bool = False, title: str | None = None, max_children: int = 10) -> go.Figure:
    """A parent's released histogram against the sum of its children's.

    The children are stacked (the largest ``max_children`` by groups, the
    rest pooled as "other children"); the parent is drawn on top as a line
    (cumulative view) or markers (H view).  When the release is consistent
    the parent sits exactly on the stack's top.
    """
    if view not in ("H", "cumulative"):
        raise ParameterError(f"view must be 'H' or 'cumulative', got {view!r}")
    parent = _as_int_array(parent_h)
    kids = {k: _as_int_array(v) for k, v in children.items()}
    n = max([len(parent), *(len(v) for v in kids.values()), 1])
    parent = _pad(parent, n)
    kids = {k: _pad(v, n) for k, v in kids.items()}
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
        fig.add_trace(go.Scatter(x=x, y=yy, name=name, mode="lines", fill="tonexty" if k else "tozeroy",
                                 line={"shape": "hv", "width": 0.5, "color": SERIES_COLORS[k % len(SERIES_COLORS)]},
                                 hovertemplate="size %{x}: stack up to " + name + " = %{y:,}<extra></extra>"))
    if view == "cumulative":
        x, y = step_points(np.cumsum(parent))
        fig.add_trace(go.Scatter(x=x, y=y, name="parent", mode="lines",
                                 line={"shape": "hv", "width": 2.5, "dash": "dot", "color": REFERENCE_COLOR},
                                 hovertemplate="size ≤ %{x}: parent %{y:,}<extra></extra>"))
    else:
        x, y = _sparse_points(parent, drop_zero_size=False)
        fig.add_trace(go.Scatter(x=x, y=y, name="parent", mode="markers",
                                 marker={"color": REFERENCE_COLOR, "symbol": "x", "size": 8},
                                 hovertemplate="size %{x}: parent %{y:,}<extra></extra>"))
    fig.update_layout(title=title, legend={"orientation": "h", "y": -0.2}, margin={"t": 60 if title else 30})
    fig.update_xaxes(title_text="group size j", type="log" if log_x else "linear")
    fig.update_yaxes(title_text="groups of size ≤ j (Hc)" if view == "cumulative" else "groups of size j (H)")
    return fig


def sweep_figure(summary: pd.DataFrame, *, x: str = "epsilon", y: str = "mean", error: str | None = "se",
                 series: str = "series", facet: str = "level", facet_names: Sequence[str] | None = None,
                 log_x: bool = True, log_y: bool = True, title: str | None = None,
                 x_title: str = "ε per level", y_title: str = "mean emd per node") -> go.Figure:
    """Error against budget: one panel per ``facet`` (level), one line per ``series``, ± ``error`` bars.

    ``summary`` is tidy: one row per (facet, series, x) with the mean and its
    standard error (e.g. over trials).
    """
    facets = sorted(summary[facet].unique()) if len(summary) else [0]
    names = [facet_names[int(f)] if facet_names is not None and int(f) < len(facet_names) else f"level {f}"
             for f in facets]
    fig = make_subplots(rows=1, cols=len(facets), subplot_titles=names, horizontal_spacing=0.06)
    series_names = list(dict.fromkeys(summary[series])) if len(summary) else []
    for col, f in enumerate(facets, start=1):
        part = summary[summary[facet] == f]
        for k, name in enumerate(series_names):
            s = part[part[series] == name].sort_values(x)
            if s.empty:
                continue
            color = SERIES_COLORS[k % len(SERIES_COLORS)]
            err = None
            if error is not None and error in s:
                err = {"type": "data", "array": s[error].fillna(0).to_numpy(), "visible": True, "color": color}
            fig.add_trace(go.Scatter(x=s[x], y=s[y], error_y=err, mode="lines+markers", name=str(name),
                                     legendgroup=str(name), showlegend=col == 1,
                                     line={"color": color}, marker={"color": color},
                                     hovertemplate=f"{name}<br>{x_title} %{{x:g}}: %{{y:,.1f}}<extra></extra>"),
                          row=1, col=col)
    fig.update_xaxes(title_text=x_title, type="log" if log_x else "linear")
    fig.update_yaxes(type="log" if log_y else "linear")
    fig.update_yaxes(title_text=y_title, col=1)
    fig.update_layout(title=title, legend={"orientation": "h", "y": -0.25}, margin={"t": 60 if title else 40})
    return fig


# --------------------------------------------------------------------------- teaching
def representations_figure(h, *, title: str | None = None) -> go.Figure:
    """The three views of one histogram side by side: H, Hc (cumulative) and Hg (ranked group sizes)."""
    h = _as_int_array(h)
    hc = np.cumsum(h)
    hg = np.repeat(np.arange(len(h)), h)
    fig = make_subplots(rows=1, cols=3, subplot_titles=("H: groups of size j", "Hc: groups of size ≤ j",
                                                        "Hg: sizes, smallest first"), horizontal_spacing=0.08)
    sizes = np.arange(len(h))
    fig.add_trace(go.Bar(x=sizes, y=h, name="H", marker_color=TRUE_COLOR, text=h, textposition="outside"), 1, 1)
    fig.add_trace(go.Bar(x=sizes, y=hc, name="Hc", marker_color=SERIES_COLORS[2], text=hc, textposition="outside"),
                  1, 2)
    fig.add_trace(go.Bar(x=np.arange(1, len(hg) + 1), y=hg, name="Hg", marker_color=PRIVATE_COLOR, text=hg,
                         textposition="outside"), 1, 3)
    fig.update_xaxes(title_text="size j", dtick=1, row=1, col=1)
    fig.update_xaxes(title_text="size j", dtick=1, row=1, col=2)
    fig.update_xaxes(title_text="rank i", dtick=1, row=1, col=3)
    fig.update_yaxes(rangemode="tozero")
    top = max(int(h.max(initial=0)), int(hc.max(initial=0)), int(hg.max(initial=0)), 1)
    fig.update_yaxes(range=[0, top * 1.25])
    fig.update_layout(title=title, showlegend=False, height=300, margin={"t": 60 if title else 40})
    return fig


def noise_figure(true_values, noisy_values, *, x_title: str = "index", title: str | None = None,
                 start: int = 0) -> go.Figure:
    """True values against their noisy measurement, cell by cell (noise drawn as thin segments)."""
    t = np.asarray(true_values, np.float64)
    z = np.asarray(noisy_values, np.float64)
    x = np.arange(len(t)) + start
    fig = go.Figure()
    seg_x = np.column_stack([x, x, np.full(len(x), np.nan)]).ravel()
    seg_y = np.column_stack([t, z, np.full(len(x), np.nan)]).ravel()
    fig.add_trace(go.Scatter(x=seg_x, y=seg_y, mode="lines", name="noise", hoverinfo="skip",
                             line={"color": REFERENCE_COLOR, "width": 1}))
    fig.add_trace(go.Scatter(x=x, y=t, mode="markers", name="true", marker={"color": TRUE_COLOR, "size": 10}))
    fig.add_trace(go.Scatter(x=x, y=z, mode="markers", name="noisy", marker={"color": PRIVATE_COLOR, "size": 10,
                                                                            "symbol": "diamond"}))
    fig.update_layout(title=title, height=300, legend={"orientation": "h", "y": -0.3},
                      margin={"t": 60 if title else 30})
    fig.update_xaxes(title_text=x_title, dtick=1 if len(x) <= 30 else None)
    return fig


def isotonic_figure(noisy, fit, *, truth=None, rounded=None, x_title: str = "index", start: int = 0,
                    title: str | None = None) -> go.Figure:
    """Isotonic regression before and after: noisy values, the non-decreasing fit, and its blocks.

    Every block (run of equal fitted values) is shaded; the fit's value in a
    block is the block's mean (p = 2) or median (p = 1) of the noisy values.
    """
    noisy = np.asarray(noisy, np.float64)
    fit = np.asarray(fit, np.float64)
    x = np.arange(len(noisy)) + start
    fig = go.Figure()
    if len(fit):
        starts = np.flatnonzero(np.concatenate([[True], fit[1:] != fit[:-1]]))
        ends = np.append(starts[1:], len(fit)) - 1
        for b, (lo, hi) in enumerate(zip(starts, ends)):
            fig.add_vrect(x0=x[lo] - 0.45, x1=x[hi] + 0.45, fillcolor=SERIES_COLORS[2], opacity=0.12 if b % 2 else 0.24,
                          line_width=0, layer="below")
        fig.add_trace(go.Scatter(x=x, y=fit, mode="lines+markers", name="isotonic fit (blocks shaded)",
                                 line={"shape": "linear", "color": SERIES_COLORS[2], "width": 3},
                                 marker={"size": 7}))
    if truth is not None:
        fig.add_trace(go.Scatter(x=x, y=np.asarray(truth, np.float64), mode="markers", name="true",
                                 marker={"color": TRUE_COLOR, "size": 9, "symbol": "circle-open",
                                         "line": {"width": 2}}))
    fig.add_trace(go.Scatter(x=x, y=noisy, mode="markers", name="noisy", marker={"color": PRIVATE_COLOR, "size": 10,
                                                                               "symbol": "diamond"}))
    if rounded is not None:
        fig.add_trace(go.Scatter(x=x, y=np.asarray(rounded, np.float64), mode="markers", name="rounded fit",
                                 marker={"color": SERIES_COLORS[3], "size": 8, "symbol": "x"}))
    fig.update_layout(title=title, height=330, legend={"orientation": "h", "y": -0.3},
                      margin={"t": 60 if title else 30})
    fig.update_xaxes(title_text=x_title, dtick=1 if len(x) <= 30 else None)
    return fig


def matching_figure(parent_sizes, children_sizes: Mapping[str, np.ndarray], child, index, *,
                    parent_name: str = "parent", title: str | None = None) -> go.Figure:
    """Algorithm 2's matching as a bipartite picture.

    Parent groups sit on top (sorted by estimated size), the children's
    groups at the bottom (child by child, each sorted), and a line joins each
    matched pair, labelled with its cost ``|top − bottom|``.  ``child`` and
    ``index`` are :func:`cocoviz.match_groups`' output: parent group i is
    matched with group ``index[i]`` of child number ``child[i]`` (in the order
    of ``children_sizes``).
    """
    parent = np.asarray(parent_sizes, np.int64)
    names = list(children_sizes)
    kids = [np.asarray(children_sizes[k], np.int64) for k in names]
    child = np.asarray(child, np.int64)
    index = np.asarray(index, np.int64)
    n = len(parent)
    top_order = np.argsort(parent, kind="stable")
    top_x = np.empty(n, np.float64)
    top_x[top_order] = np.arange(n)
    # Bottom: children side by side, a gap of one slot between children.
    bottom_x: list[np.ndarray] = []
    offset = 0.0
    centres = []
    for sizes in kids:
        order = np.argsort(sizes, kind="stable")
        xs = np.empty(len(sizes), np.float64)
        xs[order] = offset + np.arange(len(sizes))
        bottom_x.append(xs)
        centres.append(offset + (len(sizes) - 1) / 2)
        offset += len(sizes) + 1
    width_bottom = offset - 1
    # Centre the top row over the bottom one.
    top_x += (width_bottom - n) / 2 if width_bottom > n else 0
    fig = go.Figure()
    line_x, line_y, mid_x, mid_y, mid_text = [], [], [], [], []
    for i in range(n):
        c, j = int(child[i]), int(index[i])
        bx = bottom_x[c][j]
        line_x += [top_x[i], bx, None]
        line_y += [1, 0, None]
        mid_x.append((top_x[i] + bx) / 2)
        mid_y.append(0.5)
        mid_text.append(str(abs(int(parent[i]) - int(kids[c][j]))))
    fig.add_trace(go.Scatter(x=line_x, y=line_y, mode="lines", name="match", hoverinfo="skip",
                             line={"color": REFERENCE_COLOR, "width": 2}))
    fig.add_trace(go.Scatter(x=mid_x, y=mid_y, mode="text", text=mid_text, name="cost |top − bottom|",
                             textfont={"size": 11}, hoverinfo="skip", showlegend=False))
    fig.add_trace(go.Scatter(x=top_x, y=np.ones(n), mode="markers+text", name=parent_name,
                             text=[str(s) for s in parent], textposition="middle center",
                             marker={"size": 30, "color": PRIVATE_COLOR}, textfont={"color": "#111111"},
                             hovertemplate=parent_name + ": size %{text}<extra></extra>"))
    for k, (name, sizes, xs) in enumerate(zip(names, kids, bottom_x)):
        color = SERIES_COLORS[(k + 2) % len(SERIES_COLORS)]
        fig.add_trace(go.Scatter(x=xs, y=np.zeros(len(sizes)), mode="markers+text", name=name,
                                 text=[str(s) for s in sizes], textposition="middle center",
                                 marker={"size": 30, "color": color}, textfont={"color": "#111111"},
                                 hovertemplate=name + ": size %{text}<extra></extra>"))
    for name, cx in zip(names, centres):
        fig.add_annotation(x=cx, y=-0.28, text=f"<b>{name}</b>", showarrow=False)
    fig.add_annotation(x=float(np.mean(top_x)) if n else 0, y=1.28, text=f"<b>{parent_name}</b>", showarrow=False)
    total = sum(int(t) for t in mid_text)
    fig.update_layout(title=title or f"matching cost Σ|top − bottom| = {total}", height=330, showlegend=False,
                      margin={"t": 50, "b": 10})
    fig.update_xaxes(visible=False, range=[-1, max(width_bottom, n) + 0.5])
    fig.update_yaxes(visible=False, range=[-0.45, 1.45])
    return fig


def merge_figure(parent, child, merged: Mapping[str, np.ndarray], *, labels: Sequence[str] | None = None,
                 truth=None, title: str | None = None) -> go.Figure:
    """Each matched group's two estimates (parent's, child's) and the merged size(s).

    ``merged`` maps a merge name (e.g. "weighted", "average") to the merged
    sizes; ``labels`` names the groups on the x axis.
    """
    parent = np.asarray(parent, np.float64)
    child = np.asarray(child, np.float64)
    x = list(labels) if labels is not None else [str(i + 1) for i in range(len(parent))]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=parent, mode="markers", name="parent's estimate",
                             marker={"color": PRIVATE_COLOR, "size": 12, "symbol": "triangle-down"}))
    fig.add_trace(go.Scatter(x=x, y=child, mode="markers", name="child's estimate",
                             marker={"color": SERIES_COLORS[2], "size": 12, "symbol": "triangle-up"}))
    symbols = ("circle", "square", "cross")
    for k, (name, values) in enumerate(merged.items()):
        fig.add_trace(go.Scatter(x=x, y=np.asarray(values, np.float64), mode="markers", name=f"merged: {name}",
                                 marker={"color": SERIES_COLORS[(k + 3) % len(SERIES_COLORS)], "size": 9,
                                         "symbol": symbols[k % len(symbols)]}))
    if truth is not None:
        fig.add_trace(go.Scatter(x=x, y=np.asarray(truth, np.float64), mode="markers", name="true",
                                 marker={"color": TRUE_COLOR, "size": 14, "symbol": "circle-open",
                                         "line": {"width": 2}}))
    fig.update_layout(title=title, height=330, legend={"orientation": "h", "y": -0.3},
                      margin={"t": 60 if title else 30})
    fig.update_xaxes(title_text="matched group (child: rank)", type="category")
    fig.update_yaxes(title_text="estimated size")
    return fig
