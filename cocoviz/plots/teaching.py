"""The Learn page's figures of the engine's steps: noise, isotonic fit, matching, merging."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from cocoviz.plots.style import (
    PRIVATE_COLOR,
    REFERENCE_COLOR,
    SERIES_COLORS,
    TRUE_COLOR,
    truth_trace,
)

__all__ = ["noise_figure", "isotonic_figure", "matching_figure", "merge_figure"]


def noise_figure(
    true_values, noisy_values, *, x_title: str = "index", title: str | None = None, start: int = 0
) -> go.Figure:
    """True values against their noisy measurement, cell by cell (noise drawn as thin segments)."""
    t = np.asarray(true_values, np.float64)
    z = np.asarray(noisy_values, np.float64)
    x = np.arange(len(t)) + start
    fig = go.Figure()
    seg_x = np.column_stack([x, x, np.full(len(x), np.nan)]).ravel()
    seg_y = np.column_stack([t, z, np.full(len(x), np.nan)]).ravel()
    fig.add_trace(
        go.Scatter(
            x=seg_x, y=seg_y, mode="lines", name="noise", hoverinfo="skip", line={"color": REFERENCE_COLOR, "width": 1}
        )
    )
    fig.add_trace(go.Scatter(x=x, y=t, mode="markers", name="true", marker={"color": TRUE_COLOR, "size": 10}))
    fig.add_trace(
        go.Scatter(
            x=x, y=z, mode="markers", name="noisy", marker={"color": PRIVATE_COLOR, "size": 10, "symbol": "diamond"}
        )
    )
    fig.update_layout(
        title=title, height=300, legend={"orientation": "h", "y": -0.3}, margin={"t": 60 if title else 30}
    )
    fig.update_xaxes(title_text=x_title, dtick=1 if len(x) <= 30 else None)
    return fig


def isotonic_figure(
    noisy, fit, *, truth=None, rounded=None, x_title: str = "index", start: int = 0, title: str | None = None
) -> go.Figure:
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
            fig.add_vrect(
                x0=x[lo] - 0.45,
                x1=x[hi] + 0.45,
                fillcolor=SERIES_COLORS[2],
                opacity=0.12 if b % 2 else 0.24,
                line_width=0,
                layer="below",
            )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=fit,
                mode="lines+markers",
                name="isotonic fit (blocks shaded)",
                line={"shape": "linear", "color": SERIES_COLORS[2], "width": 3},
                marker={"size": 7},
            )
        )
    if truth is not None:
        fig.add_trace(truth_trace(x, truth, 9))
    fig.add_trace(
        go.Scatter(
            x=x, y=noisy, mode="markers", name="noisy", marker={"color": PRIVATE_COLOR, "size": 10, "symbol": "diamond"}
        )
    )
    if rounded is not None:
        fig.add_trace(
            go.Scatter(
                x=x,
                y=np.asarray(rounded, np.float64),
                mode="markers",
                name="rounded fit",
                marker={"color": SERIES_COLORS[3], "size": 8, "symbol": "x"},
            )
        )
    fig.update_layout(
        title=title, height=330, legend={"orientation": "h", "y": -0.3}, margin={"t": 60 if title else 30}
    )
    fig.update_xaxes(title_text=x_title, dtick=1 if len(x) <= 30 else None)
    return fig


def matching_figure(
    parent_sizes,
    children_sizes: Mapping[str, np.ndarray],
    child,
    index,
    *,
    parent_name: str = "parent",
    title: str | None = None,
) -> go.Figure:
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
    fig.add_trace(
        go.Scatter(
            x=line_x,
            y=line_y,
            mode="lines",
            name="match",
            hoverinfo="skip",
            line={"color": REFERENCE_COLOR, "width": 2},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=mid_x,
            y=mid_y,
            mode="text",
            text=mid_text,
            name="cost |top − bottom|",
            textfont={"size": 11},
            hoverinfo="skip",
            showlegend=False,
        )
    )
    fig.add_trace(
        go.Scatter(
            x=top_x,
            y=np.ones(n),
            mode="markers+text",
            name=parent_name,
            text=[str(s) for s in parent],
            textposition="middle center",
            marker={"size": 30, "color": PRIVATE_COLOR},
            textfont={"color": "#111111"},
            hovertemplate=parent_name + ": size %{text}<extra></extra>",
        )
    )
    for k, (name, sizes, xs) in enumerate(zip(names, kids, bottom_x)):
        color = SERIES_COLORS[(k + 2) % len(SERIES_COLORS)]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=np.zeros(len(sizes)),
                mode="markers+text",
                name=name,
                text=[str(s) for s in sizes],
                textposition="middle center",
                marker={"size": 30, "color": color},
                textfont={"color": "#111111"},
                hovertemplate=name + ": size %{text}<extra></extra>",
            )
        )
    for name, cx in zip(names, centres):
        fig.add_annotation(x=cx, y=-0.28, text=f"<b>{name}</b>", showarrow=False)
    fig.add_annotation(x=float(np.mean(top_x)) if n else 0, y=1.28, text=f"<b>{parent_name}</b>", showarrow=False)
    total = sum(int(t) for t in mid_text)
    fig.update_layout(
        title=title or f"matching cost Σ|top − bottom| = {total}",
        height=330,
        showlegend=False,
        margin={"t": 50, "b": 10},
    )
    fig.update_xaxes(visible=False, range=[-1, max(width_bottom, n) + 0.5])
    fig.update_yaxes(visible=False, range=[-0.45, 1.45])
    return fig


def merge_figure(
    parent,
    child,
    merged: Mapping[str, np.ndarray],
    *,
    labels: Sequence[str] | None = None,
    truth=None,
    title: str | None = None,
) -> go.Figure:
    """Each matched group's two estimates (parent's, child's) and the merged size(s).

    ``merged`` maps a merge name (e.g. "weighted", "average") to the merged
    sizes; ``labels`` names the groups on the x axis.
    """
    parent = np.asarray(parent, np.float64)
    child = np.asarray(child, np.float64)
    x = list(labels) if labels is not None else [str(i + 1) for i in range(len(parent))]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=x,
            y=parent,
            mode="markers",
            name="parent's estimate",
            marker={"color": PRIVATE_COLOR, "size": 12, "symbol": "triangle-down"},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=child,
            mode="markers",
            name="child's estimate",
            marker={"color": SERIES_COLORS[2], "size": 12, "symbol": "triangle-up"},
        )
    )
    symbols = ("circle", "square", "cross")
    for k, (name, values) in enumerate(merged.items()):
        fig.add_trace(
            go.Scatter(
                x=x,
                y=np.asarray(values, np.float64),
                mode="markers",
                name=f"merged: {name}",
                marker={
                    "color": SERIES_COLORS[(k + 3) % len(SERIES_COLORS)],
                    "size": 9,
                    "symbol": symbols[k % len(symbols)],
                },
            )
        )
    if truth is not None:
        fig.add_trace(truth_trace(x, truth, 14))
    fig.update_layout(
        title=title, height=330, legend={"orientation": "h", "y": -0.3}, margin={"t": 60 if title else 30}
    )
    fig.update_xaxes(title_text="matched group (child: rank)", type="category")
    fig.update_yaxes(title_text="estimated size")
    return fig
