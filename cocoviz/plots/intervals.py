"""A node's publishable intervals: the private histogram with error bars, and the band on Hc.

Built from :meth:`cocoviz.Release.intervals`'s frame alone — the release, no truth — so the figure may
be published with it (unlike the figures against the truth, which are exploration only).

>>> import pandas as pd
>>> frame = pd.DataFrame({"size": [0, 1, 2], "cumulative_low": [0, 1, 3], "cumulative_high": [1, 3, 3],
...                       "cumulative": [0, 2, 3], "count_low": [0, 0, 0], "count_high": [1, 3, 2],
...                       "count": [0, 2, 1]})
>>> frame.attrs["confidence"] = 0.9
>>> [t.name for t in intervals_figure(frame).data]
['released, with 90% bounds']
>>> [t.name for t in intervals_figure(frame, view="cumulative").data]
['90% band (low)', '90% band (high)', 'released']
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from cocoviz.errors import ParameterError
from cocoviz.plots.style import PRIVATE_COLOR, REFERENCE_COLOR, _axis_types

__all__ = ["intervals_figure", "shown_sizes"]


def shown_sizes(frame: pd.DataFrame) -> int:
    """How many sizes a figure shows: up to a little past the largest released size (a Hc band runs to K)."""
    held = np.flatnonzero(frame["count"].to_numpy())
    last = int(held[-1]) if held.size else 0
    return min(len(frame), last + max(5, last // 10) + 1)


def intervals_figure(
    frame: pd.DataFrame, *, view: str = "H", log_x: bool = False, log_y: bool = False, title: str | None = None
) -> go.Figure:
    """The released H with error bars from ``count_low``..``count_high`` (``view="H"``), or the released Hc
    inside its band ``cumulative_low``..``cumulative_high`` (``view="cumulative"``)."""
    if view not in ("H", "cumulative"):
        raise ParameterError(f"view must be 'H' or 'cumulative', got {view!r}")
    part = frame.iloc[: shown_sizes(frame)]
    if log_x:
        part = part[part["size"] > 0]
    share = f"{frame.attrs.get('confidence', 0.9):.0%}"
    x = part["size"].to_numpy()
    fig = go.Figure()
    if view == "H":
        count = part["count"].to_numpy()
        fig.add_trace(
            go.Bar(
                x=x,
                y=count,
                name=f"released, with {share} bounds",
                marker_color=PRIVATE_COLOR,
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=part["count_high"].to_numpy() - count,
                    arrayminus=count - part["count_low"].to_numpy(),
                    color=REFERENCE_COLOR,
                ),
            )
        )
        y_title = "groups of size j"
    else:
        band = dict(mode="lines", line=dict(color=REFERENCE_COLOR, width=1, shape="hv"))
        fig.add_trace(go.Scatter(x=x, y=part["cumulative_low"], name=f"{share} band (low)", **band))
        fig.add_trace(go.Scatter(x=x, y=part["cumulative_high"], name=f"{share} band (high)", fill="tonexty", **band))
        fig.add_trace(
            go.Scatter(
                x=x, y=part["cumulative"], name="released", mode="lines", line=dict(color=PRIVATE_COLOR, shape="hv")
            )
        )
        y_title = "groups of size ≤ j"
    fig.update_layout(title=title, xaxis_title="group size j", yaxis_title=y_title, hovermode="x unified")
    _axis_types(fig, log_x, log_y)
    return fig
