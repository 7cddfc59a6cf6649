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

Beside it, :func:`stated_error_table`: the stated standard error of a group's size per released size
(:meth:`cocoviz.Release.stated_errors`), publishable too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from cocoviz.errors import ParameterError
from cocoviz.plots.style import PRIVATE_COLOR, REFERENCE_COLOR, axis_types

__all__ = [
    "intervals_figure",
    "interval_table",
    "shown_sizes",
    "stated_error_table",
    "STATED_ERROR_COLUMN",
    "STATED_ERROR_CAPTION",
    "stated_error_caption",
    "largest_released_size",
    "uninformative_reason",
    "interval_files",
    "holds_for",
]

#: The column of :func:`stated_error_table` that holds the standard errors: an error on one group's size
#: (members), not on a count of groups.
STATED_ERROR_COLUMN = "± members on one group's size (stated standard error; not a count of groups)"
#: Why the table is there and why it may be published (shown under it).
STATED_ERROR_CAPTION = (
    "**Publishable** — computed from the release alone: each released group's size carries a stated variance, "
    "from the fitted histogram, ε and the plan only (post-processing of the noisy measurements, no ε, never the "
    "true data). Its square root is how many members a released group of that size is typically off its true "
    "size; calibrated on the bundled datasets so that squared errors average about the stated variance "
    "(docs/merge-variances.md). Unlike the bounds above it is a typical error, not a guarantee."
)


#: Added under an upper level's table when its histogram is the sum of its leaves' (consistency).
UPPER_LEVEL_CAVEAT = (
    " Above the leaves this node releases the union of its leaves' groups, whose misplacements partly cancel, and "
    "the statement is that union's: its children's boundary errors added in quadrature and, under top-down, pinned "
    "by this level's own fit where it wins the merge. On the bundled datasets' roots it is calibrated in 31 of 40 "
    'settings (dataset, methods, ε) and overstates the error in the other 9 (docs/merge-variances.md, "Released '
    'upper levels").'
)


def stated_error_caption(upper_level: bool) -> str:
    """:data:`STATED_ERROR_CAPTION`, with :data:`UPPER_LEVEL_CAVEAT` for a node above the leaves under consistency.

    >>> stated_error_caption(False) == STATED_ERROR_CAPTION, "union" in stated_error_caption(True)
    (True, True)
    """
    return STATED_ERROR_CAPTION + (UPPER_LEVEL_CAVEAT if upper_level else "")


def _last_held(frame: pd.DataFrame) -> int:
    """The row of the largest size the frame releases a group of (0 if none)."""
    held = np.flatnonzero(frame["count"].to_numpy())
    return int(held[-1]) if held.size else 0


def largest_released_size(frame: pd.DataFrame) -> int:
    """The largest size a bounds frame (:meth:`cocoviz.Release.intervals`) releases a group of; 0 if none.

    >>> largest_released_size(pd.DataFrame({"size": [0, 1, 2, 3], "count": [4, 0, 1, 0]}))
    2
    """
    return int(frame["size"].iloc[_last_held(frame)]) if len(frame) else 0


def shown_sizes(frame: pd.DataFrame) -> int:
    """How many sizes a figure shows: up to a little past the largest released size (a Hc band runs to K)."""
    last = _last_held(frame)
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
    axis_types(fig, log_x, log_y)
    return fig


def stated_error_table(errors: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """The frame of :meth:`cocoviz.Release.stated_errors` for people: one row per released size, the standard
    error in plain positional numbers (``digits`` significant digits, never ``1.5e-05``).

    >>> errors = pd.DataFrame({"size": [1, 7], "count": [1200, 3], "stated_variance": [2.5e-05, 30.25],
    ...                        "stated_se": [0.005, 5.5]})
    >>> stated_error_table(errors).values.tolist()
    [['1', '1,200', '0.005'], ['7', '3', '5.5']]
    """
    from cocoviz.evaluate.against_truth import plain_number  # deferred: the figures above need no evaluation module

    return pd.DataFrame(
        {
            "Group size": [f"{int(s):,}" for s in errors["size"]],
            "Released groups": [f"{int(c):,}" for c in errors["count"]],
            STATED_ERROR_COLUMN: [plain_number(v, digits) for v in errors["stated_se"]],
        }
    )


#: :func:`interval_table`'s headers for the columns of :meth:`cocoviz.Release.intervals`, in the order shown.
INTERVAL_HEADERS = {
    "size": "Size j",
    "cumulative_low": "Groups ≤ j: low",
    "cumulative": "Groups ≤ j: released",
    "cumulative_high": "Groups ≤ j: high",
    "count_low": "Groups = j: low",
    "count": "Groups = j: released",
    "count_high": "Groups = j: high",
    "persons_low": "Persons in groups ≤ j: low",
    "persons": "Persons in groups ≤ j: released",
    "persons_high": "Persons in groups ≤ j: high",
}


def interval_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame of :meth:`cocoviz.Release.intervals` for people: each bound beside the released value it brackets
    (low, released, high), headers in words and whole numbers with thousands separators.

    >>> frame = pd.DataFrame({"size": [1], "cumulative_low": [8953462], "cumulative_high": [8953489],
    ...     "cumulative": [8953475], "count_low": [8953448], "count_high": [8953489], "count": [8953475],
    ...     "persons_low": [8953448], "persons_high": [8953489], "persons": [8953475]})
    >>> interval_table(frame).iloc[0, :4].tolist()
    ['1', '8,953,462', '8,953,475', '8,953,489']
    """
    return pd.DataFrame({header: [f"{int(v):,}" for v in frame[column]] for column, header in INTERVAL_HEADERS.items()})


#: Bounds on a size's count wider than this share of the node's groups say next to nothing about it.
WIDE_SHARE = 0.5


def uninformative_reason(frame: pd.DataFrame) -> str | None:
    """Why a node's bounds (:meth:`cocoviz.Release.intervals`) say next to nothing, or None when they inform.

    They are still publishable (post-processing), but they do not inform when the node's error bound
    (``emd_bound``) is at least the persons the node releases, or when the bounds on the count of the most
    common released size span more than :data:`WIDE_SHARE` of the node's groups ``G`` (the released counts
    sum to ``G``, a public fact). Both are read from the frame alone.

    >>> frame = pd.DataFrame({"size": [0, 1, 2], "count": [0, 90, 10], "count_low": [0, 0, 0],
    ...                       "count_high": [0, 95, 60]})
    >>> frame.attrs.update(emd_bound=500)
    >>> for reason in uninformative_reason(frame).split("; "):
    ...     print(reason)
    between 0 and 95 groups have size 1, of 100 groups in all
    the error bound (500 members) is above the 110 members released
    >>> frame.attrs.update(emd_bound=5)
    >>> frame["count_low"] = [0, 88, 8]; frame["count_high"] = [0, 92, 12]
    >>> uninformative_reason(frame) is None
    True
    """
    if not len(frame):
        return None
    groups = int(frame["count"].sum())
    persons = int((frame["size"] * frame["count"]).sum())
    row = frame.iloc[int(np.argmax(frame["count"].to_numpy()))]
    low, high = int(row["count_low"]), int(row["count_high"])
    reasons = []
    if groups and high - low > WIDE_SHARE * groups:
        size = int(row["size"])
        reasons.append(f"between {low:,} and {high:,} groups have size {size:,}, of {groups:,} groups in all")
    bound = frame.attrs.get("emd_bound")
    if bound is not None and persons and bound >= persons:
        reasons.append(f"the error bound ({int(bound):,} members) is above the {persons:,} members released")
    return "; ".join(reasons) or None


def holds_for(frame: pd.DataFrame) -> str | None:
    """What a bounds frame's confidence is about, in words, from its ``attrs`` (``None`` without a ``scope``).

    ``scope="node"``: all the bounds of one node hold together; ``"level"``: all the bounds of all ``n`` nodes
    of the level hold at once, each node's band then built at the higher per-node confidence.

    >>> frame = pd.DataFrame({"size": [1]})
    >>> frame.attrs.update(confidence=0.9, scope="level", level=2, level_nodes=58, node_confidence=0.99818)
    >>> holds_for(frame)
    'all 58 nodes of level 2 at once (each node at 99.818%)'
    >>> frame.attrs.update(scope="node")
    >>> holds_for(frame)
    'each node alone'
    """
    scope = frame.attrs.get("scope")
    if scope is None:
        return None
    if scope == "node":
        return "each node alone"
    nodes, level = frame.attrs.get("level_nodes"), frame.attrs.get("level")
    per_node = frame.attrs.get("node_confidence")
    if nodes == 1:
        return f"the one node of level {level}"
    where = f"all {nodes:,} nodes of level {level} at once" if nodes is not None else "all nodes of a level at once"
    return where + (f" (each node at {per_node:.3%})" if isinstance(per_node, float) else "")


def interval_files(frame: pd.DataFrame, node_path: dict[str, str] | None = None) -> tuple[bytes, bytes]:
    """The bounds frame as CSV and Parquet bytes, with its confidence, what that confidence holds for
    (``scope``, ``holds_for``: :func:`holds_for`), method and level as columns (and the node's path, one
    ``path: <level>`` column per level, when given) so that a file read alone says what it is.

    >>> frame = pd.DataFrame({"size": [1], "count": [3], "count_low": [2], "count_high": [4]})
    >>> frame.attrs.update(confidence=0.9, method="Hc", level=1)
    >>> csv, parquet = interval_files(frame, {"path: state": "CA"})
    >>> csv.decode().splitlines()[0]
    'path: state,confidence,method,level,size,count,count_low,count_high'
    >>> frame.attrs.update(scope="node")
    >>> interval_files(frame)[0].decode().splitlines()[0]
    'confidence,scope,holds_for,method,level,size,count,count_low,count_high'
    >>> parquet[:4]
    b'PAR1'
    """
    import io

    out = frame.copy()
    out.attrs = {}
    meta = {**(node_path or {})}
    for key in ("confidence", "scope", "method", "level"):
        if key in frame.attrs and key not in out:
            meta[key] = frame.attrs[key]
        if key == "scope" and holds_for(frame) is not None:
            meta["holds_for"] = holds_for(frame)
    for position, (key, value) in enumerate(meta.items()):
        out.insert(position, key, value)
    buffer = io.BytesIO()
    out.to_parquet(buffer, index=False)
    return out.to_csv(index=False).encode(), buffer.getvalue()
