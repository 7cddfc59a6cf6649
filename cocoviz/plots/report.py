"""A release as one self-contained HTML file: what may be published, and apart, what may not.

The publishable part holds the plan (levels, ε, methods, K, consistency,
sampler), the budget with every measurement's sensitivity and noise, the
ledger entry of a secure draw when there is one, and charts of the released
histograms.  The data holder's part — errors against the true data, true
counts — is only written when given, under a CONFIDENTIAL heading, after the
publishable part, so that it can be cut off (or the file made without it).
Plotly's script is embedded once: the file opens offline.
"""

from __future__ import annotations

import datetime
import html
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from cocoviz.hierarchy import node_label
from cocoviz.plots.levels import budget_figure
from cocoviz.release.release import Release

__all__ = ["release_report_html", "CONFIDENTIAL_HEADING"]

CONFIDENTIAL_HEADING = "CONFIDENTIAL — for the data holder only, never to publish"
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
    "th{background:#f4f4f4}.secret{border:3px solid #c62828;padding:0 1em;margin-top:3em}"
    ".secret h2{color:#c62828}pre{white-space:pre-wrap;background:#f7f7f7;padding:1em}"
)


def _released_figure(release: Release, node: Sequence[str], name: str) -> go.Figure:
    h = release.histogram(node)
    fig = go.Figure(go.Bar(x=list(range(len(h))), y=h, name="released", marker={"color": "#F5A623"}))
    fig.update_layout(title=f"{name}: released groups of each size", height=360, xaxis_title="size j")
    fig.update_yaxes(title="groups (released)")
    return fig


def release_report_html(
    release: Release,
    *,
    dataset: str,
    level_names: Sequence[str] | None = None,
    ledger: str | None = None,
    accuracy: pd.DataFrame | None = None,
    nodes: int = 3,
) -> str:
    """The HTML report of ``release``.

    ``ledger``: the ledger entry of a secure draw (text); ``accuracy``: the data holder's per-level errors
    against the truth (written under :data:`CONFIDENTIAL_HEADING`, never without it); ``nodes``: how many
    nodes of the first level below the root get a chart besides the root.

    >>> import cocoviz
    >>> r = cocoviz.estimate(cocoviz.load_dataset("toy"), epsilons=[1, 1], methods=["Hc", "Hg"], max_size=8, seed=1)
    >>> page = release_report_html(r, dataset="toy")
    >>> "Privacy budget" in page and CONFIDENTIAL_HEADING not in page and page.count("<script") >= 1
    True
    """
    budget, plan = release.budget, release.plan
    names = list(level_names) if level_names is not None else ["(root)", *plan.shape.levels]
    if budget.accounting == "zCDP":  # ρ add across levels; the (ε, δ) readings of levels do not
        figures = [budget_figure(budget.per_level_rho(), level_names=names, unit="ρ")]
    else:
        figures = [budget_figure(budget.per_level(), level_names=names, extra=dict(budget.extra))]
    figures.append(_released_figure(release, (), names[0]))
    if plan.shape.depth >= 1:
        # Only the charted nodes' paths are made: the first level may hold thousands.
        first = plan.shape.paths[1]
        for node in (first[k] for k in range(min(nodes, len(first)))):
            figures.append(_released_figure(release, node, node_label(node)))
    charts = "".join(
        fig.to_html(full_html=False, include_plotlyjs=(k == 0), default_width="100%") for k, fig in enumerate(figures)
    )
    zcdp = plan.rhos is not None
    # Under zCDP a level spends ρ and draws discrete Gaussian noise of σ²; it has no privacy ε of its own.
    spent = (
        {"ρ": list(plan.rhos), "σ² (discrete Gaussian)": [float(plan.level_noise(k).sigma2) for k in range(len(names))]}
        if zcdp
        else {"ε": list(plan.epsilons)}
    )
    parameters = pd.DataFrame(
        {
            "level": names,
            **spent,
            "method": list(plan.methods),
            "nodes": [plan.shape.n_nodes(k) for k in range(plan.shape.depth + 1)],
        }
    )
    total = (
        f"Total ρ = <b>{budget.total_rho:g}</b> (ρ-zCDP; as (ε, δ)-DP: ε = {budget.epsilon_delta():.4g} at "
        f"δ = {budget.delta:g})"
        if zcdp
        else f"Total ε = <b>{budget.total:g}</b>"
    )
    fast = release.sampler.startswith("fast")
    sampler = (
        "fast seeded sampler — exploration only, <b>not for release</b>"
        if fast
        else f"secure sampler: {html.escape(release.sampler)}"
    )
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>cocoviz release — {html.escape(dataset)}</title>"
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Private count-of-counts release — {html.escape(dataset)}</h1>",
        f"<p>Made {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC by cocoviz. "
        f"Noise: {sampler}. {total}; K = {plan.max_size:,}; consistency "
        f"{html.escape(plan.consistency)}, merge {html.escape(plan.merge)}.</p>",
        "<h2>Publishable: the plan and the release</h2>",
        parameters.to_html(index=False),
        "<h3>Privacy budget</h3>",
        budget.summary().to_html(index=False, na_rep="–"),
        f"<pre>{html.escape(budget.describe())}</pre>",
    ]
    if ledger:
        parts.append(f"<h3>Ledger entry</h3><pre>{html.escape(ledger)}</pre>")
    parts.append(charts)
    if accuracy is not None:
        parts += [
            f"<div class='secret'><h2>{CONFIDENTIAL_HEADING}</h2>",
            "<p>Errors measured against the true data: they reveal the private data. Cut this part off "
            "before publishing the file, or download the report without it.</p>",
            accuracy.to_html(index=False, float_format=lambda v: f"{v:,.3g}"),
            "</div>",
        ]
    parts.append("</body></html>")
    return "".join(parts)
