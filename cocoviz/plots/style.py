"""Colours, sizes and the small helpers every figure shares."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from cocoviz.evaluate.against_truth import plain_number

__all__ = [
    "TRUE_COLOR",
    "PRIVATE_COLOR",
    "REFERENCE_COLOR",
    "SERIES_COLORS",
    "BAR_LIMIT",
    "step_points",
    "truth_trace",
    "as_int_array",
    "axis_types",
    "note_log_zero",
    "pad",
    "sparse_points",
]


TRUE_COLOR = "#4C8BF5"  # mid blue
PRIVATE_COLOR = "#F5A623"  # amber
REFERENCE_COLOR = "#9E9E9E"  # grey, for references and guides
#: Distinct mid-tone colours for series (method mixes, merges, children).
SERIES_COLORS = (
    "#4C8BF5",
    "#F5A623",
    "#2CA58D",
    "#E4572E",
    "#A06CD5",
    "#8D6E63",
    "#6B8E23",
    "#17BECF",
    "#EC6FA8",
    "#7F8C8D",
)

#: Above this many sizes, H is drawn as markers at its non-empty sizes instead of bars.
BAR_LIMIT = 300


def as_int_array(h) -> np.ndarray:
    """``h`` as a flat int64 array.

    >>> as_int_array([[1, 2]]).tolist()
    [1, 2]
    """
    return np.asarray(h, dtype=np.int64).ravel()


def pad(h: np.ndarray, n: int) -> np.ndarray:
    """``h`` padded with zeros to length ``n`` (unchanged when already as long).

    >>> pad(np.array([1, 2]), 4).tolist()
    [1, 2, 0, 0]
    """
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


def sparse_points(h: np.ndarray, *, drop_zero_size: bool) -> tuple[np.ndarray, np.ndarray]:
    """The sizes where ``h`` is non-zero (size 0 left out when ``drop_zero_size``) and their counts.

    >>> [a.tolist() for a in sparse_points(np.array([3, 0, 2]), drop_zero_size=True)]
    [[2], [2]]
    """
    x = np.flatnonzero(h)
    if drop_zero_size:
        x = x[x > 0]
    return x, h[x]


def plain_ticks(values) -> dict:
    """Tick marks at the given values, labelled in plain numbers.

    A log axis spanning less than a few decades is otherwise labelled by plotly with bare leading
    digits ("3 4 5 … 9 1 2"), which reads as nonsense for a budget axis.

    >>> plain_ticks([0.1, 1.0, 0.5, 2, 1])
    {'tickmode': 'array', 'tickvals': [0.1, 0.5, 1.0, 2.0], 'ticktext': ['0.1', '0.5', '1', '2']}
    """
    ticks = sorted({float(v) for v in values})
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [f"{v:g}" for v in ticks]}


def log_ticks(values) -> dict:
    """Tick marks for a log axis over ``values``, labelled in plain numbers.

    Powers of ten when at least two fall within the values' range, else 1-2-5 steps, else 1-2-3-5-7
    steps, else the smallest and largest value (to three digits): never plotly's default labels for a log axis spanning
    a decade or two, its bare leading digits ("5 2 100 5 2"). Values that are not positive (not drawn
    on a log axis) are ignored; none left gives no settings (plotly's own ticks).

    >>> log_ticks([3.0, 250.0, 4000.0])
    {'tickmode': 'array', 'tickvals': [10.0, 100.0, 1000.0], 'ticktext': ['10', '100', '1,000']}
    >>> log_ticks([0.03, 0.25])["ticktext"]
    ['0.05', '0.1', '0.2']
    >>> log_ticks([0, -1.0])
    {}
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v) & (v > 0)]
    if not v.size:
        return {}
    lo, hi = float(v.min()), float(v.max())
    decades = range(math.floor(math.log10(lo)), math.floor(math.log10(hi)) + 1)
    digits = 2
    for mantissas in ((1,), (1, 2, 5), (1, 2, 3, 5, 7)):
        # float("2e-2"), not 2 * 10.0**-2, so the tick sits exactly at the number its label says.
        ticks = [t for e in decades for m in mantissas if lo <= (t := float(f"{m}e{e}")) <= hi]
        if len(ticks) >= 2:
            break
    else:
        ticks, digits = sorted({lo, hi}), 3
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [plain_number(t, digits) for t in ticks]}


def axis_types(fig: go.Figure, log_x: bool, log_y: bool) -> None:
    """Linear or log axes; a log axis labelled in plain numbers over what the figure's traces draw
    (:func:`log_ticks`), never plotly's bare leading digits."""

    def drawn(axis: str) -> np.ndarray:
        parts = []
        for trace in fig.data:
            values = getattr(trace, axis, None)
            try:
                parts.append(np.asarray(values, dtype=float).ravel())
            except (TypeError, ValueError):  # absent, or labels: nothing to place a log tick by
                continue
        return np.concatenate(parts) if parts else np.zeros(0)

    fig.update_xaxes(type="log", **log_ticks(drawn("x"))) if log_x else fig.update_xaxes(type="linear")
    fig.update_yaxes(type="log", **log_ticks(drawn("y"))) if log_y else fig.update_yaxes(type="linear")


def note_log_zero(fig: go.Figure, log_x: bool, has_zero: bool) -> None:
    """Say on the figure that size 0 is not drawn, when a log x axis hides it."""
    if log_x and has_zero:
        fig.add_annotation(
            text="size 0 not shown on a log axis",
            xref="paper",
            yref="paper",
            x=1,
            y=1.08,
            showarrow=False,
            xanchor="right",
            font={"size": 11},
        )


def truth_trace(x, truth, size: int) -> go.Scatter:
    """The true values as open circles, the same in every teaching figure."""
    return go.Scatter(
        x=x,
        y=np.asarray(truth, np.float64),
        mode="markers",
        name="true",
        marker={"color": TRUE_COLOR, "size": size, "symbol": "circle-open", "line": {"width": 2}},
    )
