"""Figures of the reports: sweep figures, grouped bars, and PNG export."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from cocoviz.errors import SetupError

__all__ = ["sweep_figures", "bar_figure", "write_pngs"]


def sweep_figures(
    summary: pd.DataFrame, series: Callable[[pd.DataFrame], pd.Series], title: str, *, omniscient: bool = False
) -> dict[str, object]:
    """One sweep figure per dataset (plots.sweep_figure: a panel per level, ± standard error)."""
    from cocoviz.plots import sweep_figure

    figures = {}
    for dataset, part in summary.groupby("dataset", sort=False):
        part = part.copy()
        part["series"] = series(part)
        if omniscient:
            ref = part.groupby(["level", "level_name", "epsilon"], sort=False)["omniscient"].mean().reset_index()
            ref = ref.assign(mean=ref["omniscient"], series="omniscient D/ε", se=np.nan)
            part = pd.concat([part, ref], ignore_index=True)
        names = (
            part.drop_duplicates("level").set_index("level")["level_name"].dropna()
            if "level_name" in part
            else pd.Series(dtype=object)
        )
        facet_names = [f"level {k}: {names.get(k, '')}" for k in range(int(part["level"].max()) + 1)]
        figures[dataset] = sweep_figure(
            part, facet_names=facet_names, title=f"{title} — {dataset}", y_title="mean emd per node (± s.e.)"
        )
    return figures


def bar_figure(
    summary: pd.DataFrame,
    *,
    x: str,
    series: str,
    facet: str | None,
    title: str,
    log_y: bool = True,
    x_title: str | None = None,
):
    """Grouped bars of ``mean`` with ± ``se``: one bar per ``series`` at every ``x``, a panel per ``facet``."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from cocoviz.plots import SERIES_COLORS

    facets = list(dict.fromkeys(summary[facet])) if facet else [None]
    fig = make_subplots(
        rows=1, cols=len(facets), subplot_titles=[str(f) for f in facets] if facet else None, horizontal_spacing=0.06
    )
    names = list(dict.fromkeys(summary[series]))
    for col, f in enumerate(facets, start=1):
        part = summary if f is None else summary[summary[facet] == f]
        for k, name in enumerate(names):
            s = part[part[series] == name]
            color = SERIES_COLORS[k % len(SERIES_COLORS)]
            fig.add_trace(
                go.Bar(
                    x=s[x].astype(str),
                    y=s["mean"],
                    name=str(name),
                    legendgroup=str(name),
                    showlegend=col == 1,
                    marker_color=color,
                    error_y={"type": "data", "array": s["se"].fillna(0).to_numpy(), "visible": True},
                    hovertemplate=f"{name}<br>%{{x}}: %{{y:,.1f}}<extra></extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_layout(barmode="group", title=title, legend={"orientation": "h", "y": -0.2}, margin={"t": 70})
    fig.update_yaxes(type="log" if log_y else "linear")
    fig.update_yaxes(title_text="mean emd per node (± s.e.)", col=1)
    if x_title:
        fig.update_xaxes(title_text=x_title)
    return fig


def write_pngs(figures: Mapping[str, object], folder: Path, *, required: bool) -> list[Path]:
    """Write each figure as a PNG into ``folder``; without a renderer, refuse if ``required``, else write none."""
    paths = [folder / f"{_slug(key)}.png" for key in figures]
    try:
        import plotly.io as pio

        pio.write_images(list(figures.values()), paths, width=1200, height=500, scale=1)
    except Exception as exc:  # kaleido missing or no browser: HTML is the figure then
        if required:
            raise SetupError(
                f"PNG export failed ({type(exc).__name__}: {exc}); install kaleido and a "
                "Chrome/Chromium, or write HTML only"
            ) from exc
        return []
    return paths


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in str(text))
