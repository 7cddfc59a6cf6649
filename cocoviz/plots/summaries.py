"""Per-level summaries of per-node figures, for levels too large to list or draw node by node.

A level of eight million blocks cannot be shown as a table or as one bar per
node; what a reader needs from it is how its nodes spread: the quantiles of
their error, their G and their released totals.  :func:`node_figures` gathers
those figures per node (vectorised over the release's runs),
:func:`level_quantiles` summarises them per level (or over any set of nodes,
e.g. one node's children), and :func:`spread_figure` draws one box per level
from the quantiles alone, so the figure's size does not grow with the nodes.

>>> import pandas as pd
>>> frame = pd.DataFrame({"level": [0, 1, 1, 1, 1], "emd": [4, 0, 2, 2, 8]})
>>> level_quantiles(frame, ["emd"])[["level", "nodes", "median", "max"]].values.tolist()
[[0.0, 1.0, 4.0, 4.0], [1.0, 4.0, 2.0, 8.0]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from cocoviz.errors import ParameterError
from cocoviz.plots.style import PRIVATE_COLOR, log_ticks

__all__ = ["QUANTILES", "MEASURES", "node_figures", "level_quantiles", "spread_figure"]

#: The quantiles of a summary, by column name.
QUANTILES: dict[str, float] = {
    "min": 0.0,
    "p10": 0.1,
    "p25": 0.25,
    "median": 0.5,
    "p75": 0.75,
    "p90": 0.9,
    "p99": 0.99,
    "max": 1.0,
}

#: The per-node figures :func:`node_figures` adds to an evaluation, with their readable names.
MEASURES: dict[str, str] = {
    "emd": "emd (persons)",
    "ratio": "emd / yardstick D/ε",
    "groups": "groups G (public)",
    "persons": "persons (released)",
}


def node_figures(evaluation: pd.DataFrame, release) -> pd.DataFrame:
    """The rows of ``evaluation`` (:func:`cocoviz.evaluate`, every level in node order) with
    ``persons``, each
    node's released total Σ_j j·Ĥ[j] (post-processing: no ε), computed per level from the release's runs."""
    persons = []
    for level in range(release.shape.depth + 1):
        runs = release.runs(level)
        total = np.concatenate([np.zeros(1, np.int64), np.cumsum(runs.sizes * runs.counts, dtype=np.int64)])
        persons.append(total[runs.ptr[1:]] - total[runs.ptr[:-1]])
    persons = np.concatenate(persons)
    if len(persons) != len(evaluation):
        raise ParameterError(f"the evaluation has {len(evaluation):,} rows for {len(persons):,} nodes of the release")
    return evaluation.assign(persons=persons)


def level_quantiles(frame: pd.DataFrame, measures: Sequence[str], *, by: str = "level") -> pd.DataFrame:
    """One row per (``by`` value, measure): the number of nodes, the mean and the :data:`QUANTILES`.

    Columns: ``by``, ``measure``, ``nodes``, ``mean`` and one per quantile; sorted by ``by`` then in the
    order of ``measures``.  Linear interpolation between nodes (numpy's default); a non-finite value (a
    ratio with no yardstick) is left out of its measure's figures.
    """
    missing = [m for m in (by, *measures) if m not in frame.columns]
    if missing:
        raise ParameterError(f"no column {', '.join(map(repr, missing))} in the table ({', '.join(frame.columns)})")
    rows = []
    keys = frame[by].to_numpy()
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, np.int64)
    bounds = np.r_[starts, len(keys)]
    values = {m: frame[m].to_numpy(np.float64)[order] for m in measures}
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        for measure in measures:
            part = values[measure][lo:hi]
            part = part[np.isfinite(part)]
            figures = np.quantile(part, list(QUANTILES.values())) if len(part) else np.full(len(QUANTILES), np.nan)
            rows.append(
                {
                    by: keys[lo],
                    "measure": measure,
                    "nodes": len(part),
                    "mean": float(part.mean()) if len(part) else np.nan,
                    **dict(zip(QUANTILES, map(float, figures))),
                }
            )
    return pd.DataFrame(rows, columns=[by, "measure", "nodes", "mean", *QUANTILES])


def spread_figure(
    quantiles: pd.DataFrame,
    measure: str,
    *,
    level_names: Sequence[str] | None = None,
    log_y: bool = False,
    title: str | None = None,
) -> go.Figure:
    """One box per level from :func:`level_quantiles`: the box holds the middle half of the nodes (p25 to p75),
    the line inside is the median, the whiskers reach from the smallest node to the largest.

    Drawn from the quantiles only, so its size does not grow with the number of nodes.
    """
    part = quantiles[quantiles["measure"] == measure]
    levels = part["level"].to_numpy()
    names = [level_names[int(k)] if level_names is not None else f"level {int(k)}" for k in levels]
    lower = part["min"].to_numpy(np.float64)
    if log_y:  # a log axis cannot show 0: the whisker stops at the smallest positive quantile (none: no whisker)
        positive = part[list(QUANTILES)].to_numpy(np.float64)
        positive = np.where(positive > 0, positive, np.inf).min(axis=1)
        lower = np.where(lower > 0, lower, np.where(np.isfinite(positive), positive, np.nan))
    fig = go.Figure(
        go.Box(
            x=names,
            q1=part["p25"],
            median=part["median"],
            q3=part["p75"],
            lowerfence=lower,
            upperfence=part["max"],
            mean=part["mean"],
            name=MEASURES.get(measure, measure),
            marker_color=PRIVATE_COLOR,
            boxpoints=False,
            customdata=np.c_[part["nodes"], part["p10"], part["p90"]],
            hovertemplate="%{x}: %{customdata[0]:,} nodes<br>median %{median:,.3g}, middle half %{q1:,.3g} to "
            "%{q3:,.3g}<br>p10 %{customdata[1]:,.3g}, p90 %{customdata[2]:,.3g}<extra></extra>",
        )
    )
    fig.update_layout(title=title, showlegend=False, margin={"t": 60 if title else 30})
    fig.update_yaxes(title_text=MEASURES.get(measure, measure), type="log" if log_y else "linear")
    if log_y:
        fig.update_yaxes(**log_ticks(np.r_[lower, part["max"].to_numpy(np.float64)]))
    return fig
