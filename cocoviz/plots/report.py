"""A release as one small self-contained HTML file: what may be published, and apart, what may not.

The publishable part, in the order a reviewer reads it: a methods statement (what was measured at each
level, with which noise, under which neighbour relation, and what post-processing followed), the
accounting (ε per level and in all, or ρ per level read as (ε, δ)), the budget with every measurement's
sensitivity and noise, the ledger entry of a secure draw, the released tables per level (per node: G,
persons, groups of each small size, the largest size), their publishable accuracy (the 90% bounds' width
and error bound per node, where the release carries its measurements' bands) and the released histograms
on log axes.  The figures are inline SVG drawn here — no script, no plotting library — so the file opens
offline and stays small (well under 1 MB for the default release).  The data holder's part — errors against
the true data — is only written when given, under a CONFIDENTIAL heading, after the publishable part, so
that it can be cut off (or the file made without it).
"""

from __future__ import annotations

import datetime
import html
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.errors import CocovizError
from cocoviz.hierarchy import node_label
from cocoviz.release.release import Release

__all__ = ["release_report_html", "svg_histogram", "methods_statement", "CONFIDENTIAL_HEADING"]

CONFIDENTIAL_HEADING = "CONFIDENTIAL — for the data holder only, never to publish"
#: Nodes listed per level in the released tables (the first ones, in the release's order).
TABLE_NODES = 25
#: A histogram with more distinct sizes than this is drawn as this many log-spaced bins (the file stays small).
MAX_POINTS = 200
#: Sizes with a column of their own in the released tables; larger ones are summed in the last column.
TABLE_SIZES = 5
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
    "th{background:#f4f4f4}.secret{border:3px solid #c62828;padding:0 1em;margin-top:3em}"
    ".secret h2{color:#c62828}pre{white-space:pre-wrap;background:#f7f7f7;padding:1em}"
    ".figs{display:flex;flex-wrap:wrap;gap:1em}svg text{font:11px system-ui,sans-serif;fill:#333}"
)
_NOISE = {"laplace": "double-geometric (discrete Laplace)", "gaussian": "discrete Gaussian"}


def _log_ticks(low: float, high: float) -> list[float]:
    """Powers of ten from below ``low`` to above ``high``."""
    return [10.0**e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


def _tick_label(v: float) -> str:
    return f"{v:,.0f}" if v >= 1 else f"{v:g}"


def svg_histogram(h: np.ndarray, title: str, *, width: int = 520, height: int = 300) -> str:
    """The released groups per size of one node as an inline SVG on log–log axes (size 0 and empty sizes,
    which a log axis cannot show, are left out and said so).

    Examples
    --------
    >>> svg = svg_histogram(np.array([0, 120, 30, 0, 2]), "root")
    >>> svg.startswith("<svg") and svg.count("<circle") == 3 and ">100<" in svg
    True
    """
    h = np.asarray(h)
    sizes = np.flatnonzero(h)
    sizes = sizes[sizes > 0]
    left, right, top, bottom = 84, 30, 28, 40
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' role='img'>"]
    parts.append(f"<text x='{left}' y='16' style='font-weight:600'>{html.escape(title)}</text>")
    if not sizes.size:
        parts.append(f"<text x='{left}' y='{height // 2}'>no group of size ≥ 1 released</text></svg>")
        return "".join(parts)
    counts = h[sizes].astype(float)
    binned = sizes.size > MAX_POINTS
    if binned:  # a point per log-spaced bin of sizes: the mean groups per size in it (the file stays small)
        edges = np.unique(np.floor(np.logspace(0, math.log10(sizes.max() + 1), MAX_POINTS)).astype(np.int64))
        edges = np.append(edges[edges <= sizes.max()], sizes.max() + 1)
        which = np.searchsorted(edges, sizes, side="right") - 1
        totals = np.bincount(which, weights=counts, minlength=edges.size - 1)
        held = np.flatnonzero(totals)
        span = np.diff(edges)[held]
        sizes, counts = np.sqrt(edges[held] * (edges[held] + span - 1)), totals[held] / span
    xs = _log_ticks(1, max(float(sizes.max()), 10))
    ys = _log_ticks(min(1.0, float(counts.min())), max(float(counts.max()), 10))
    x0, x1, y0, y1 = math.log10(xs[0]), math.log10(xs[-1]), math.log10(ys[0]), math.log10(ys[-1])

    def px(v: float) -> float:
        return left + (math.log10(v) - x0) / (x1 - x0) * (width - left - right)

    def py(v: float) -> float:
        return height - bottom - (math.log10(v) - y0) / (y1 - y0) * (height - top - bottom)

    for v in xs:
        parts.append(f"<line x1='{px(v):.1f}' x2='{px(v):.1f}' y1='{top}' y2='{height - bottom}' stroke='#eee'/>")
        parts.append(f"<text x='{px(v):.1f}' y='{height - bottom + 14}' text-anchor='middle'>{_tick_label(v)}</text>")
    for v in ys:
        parts.append(f"<line x1='{left}' x2='{width - right}' y1='{py(v):.1f}' y2='{py(v):.1f}' stroke='#eee'/>")
        parts.append(f"<text x='{left - 4}' y='{py(v) + 4:.1f}' text-anchor='end'>{_tick_label(v)}</text>")
    parts.append(
        f"<text x='{(left + width - right) / 2:.0f}' y='{height - 8}' text-anchor='middle'>group size j (log)</text>"
    )
    parts.append(
        f"<text transform='translate(14 {(top + height - bottom) / 2:.0f}) rotate(-90)' text-anchor='middle'>"
        "groups of size j (log)</text>"
    )
    for s, c in zip(sizes, counts):
        parts.append(
            f"<circle cx='{px(s):.1f}' cy='{py(c):.1f}' r='2.5' fill='#E07B00'>"
            f"<title>{s:,.0f}: {c:,.3g}</title></circle>"
        )
    if binned:
        parts.append(
            f"<text x='{width - right}' y='{top + 10}' text-anchor='end'>sizes in log-spaced bins: "
            "mean groups per size</text>"
        )
    if h[0]:
        parts.append(
            f"<text x='{width - right}' y='16' text-anchor='end'>size 0: {int(h[0]):,} (not on a log axis)</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def methods_statement(release: Release, names: Sequence[str]) -> str:
    """What was measured, with which noise, under which neighbour relation, and what followed: plain sentences
    read from the release's plan and budget alone."""
    plan, budget = release.plan, release.budget
    noises = sorted({_NOISE.get(c.noise, c.noise) for c in budget.charges})
    relations = sorted({str(c.relation) for c in budget.charges})
    if budget.accounting == "zCDP":
        spend = " · ".join(f"{names[k]} ρ = {r:g}" for k, r in budget.per_level_rho().items())
        account = (
            f"zero-concentrated DP: ρ adds up over the levels to ρ = {budget.total_rho:g}, read as "
            f"(ε = {budget.epsilon_delta():.4g}, δ = {budget.delta:g})-DP"
        )
    else:
        spend = " · ".join(f"{names[k]} ε = {e:g}" for k, e in budget.per_level().items())
        account = (
            f"pure ε-differential privacy: ε adds up over the levels (sequential composition) to ε = {budget.total:g}"
        )
    methods = " · ".join(f"{names[k]}: {m}" for k, m in enumerate(plan.methods))
    sentences = [
        f"Each level's count-of-counts histograms were measured with noise ({', '.join(noises)}), level by level: "
        f"{methods} (Hc measures the cumulative histogram up to the public bound K = {plan.max_size:,}; Hg "
        "measures each group's size). Within a level the nodes are disjoint, so a level costs its own budget once.",
        f"Budget: {spend}; {account}.",
        f"Neighbouring datasets: {', '.join(relations) if relations else 'as stated per measurement below'}.",
        f"Post-processing (no further privacy cost): isotonic regression to a valid histogram, then "
        f"{plan.consistency} consistency across levels ({plan.merge} merge), so that every parent equals the sum "
        "of its children and every node keeps its public number of groups G.",
        f"Sampler: {release.sampler}.",
    ]
    return " ".join(sentences)


def _level_table(release: Release, level: int) -> pd.DataFrame:
    """The first :data:`TABLE_NODES` nodes of ``level``: G, persons, groups of each small size, the largest."""
    rows = []
    for node in release.nodes(level)[:TABLE_NODES]:
        h = release.histogram(node)
        small = {f"size {j}": int(h[j]) if j < len(h) else 0 for j in range(1, TABLE_SIZES + 1)}
        held = np.flatnonzero(h)
        rows.append(
            {
                "node": node_label(node),
                "groups G": int(h.sum()),
                "persons": release.persons(node),
                **small,
                f"size > {TABLE_SIZES}": int(h[TABLE_SIZES + 1 :].sum()),
                "largest size": int(held[-1]) if held.size else 0,
            }
        )
    return pd.DataFrame(rows).map(lambda v: f"{v:,}" if isinstance(v, (int, np.integer)) else v)


def _accuracy_table(release: Release, level: int) -> pd.DataFrame | None:
    """Publishable accuracy of the listed nodes: the 90% bounds' half-width and error bound (post-processing)."""
    rows = []
    for node in release.nodes(level)[:TABLE_NODES]:
        try:
            frame = release.intervals(node, 0.9)
        except CocovizError:
            return None
        rows.append(
            {
                "node": node_label(node),
                "90% ± on each cumulative count (groups ≤ j)": f"{frame.attrs.get('half_width'):,}",
                "90% error bound (persons misplaced)": f"{frame.attrs.get('emd_bound'):,}",
                "from": f"{frame.attrs.get('method')} at level {frame.attrs.get('level')}",
            }
        )
    return pd.DataFrame(rows)


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
    >>> "Privacy budget" in page and CONFIDENTIAL_HEADING not in page and "<script" not in page
    True
    """
    budget, plan = release.budget, release.plan
    names = list(level_names) if level_names is not None else ["(root)", *plan.shape.levels]
    figures = [svg_histogram(release.histogram(()), f"{names[0]}: released groups per size")]
    if plan.shape.depth >= 1:
        for node in release.nodes(1)[:nodes]:
            figures.append(svg_histogram(release.histogram(node), f"{node_label(node)}: released groups per size"))
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
        "<h3>Methods statement</h3>",
        f"<p>{html.escape(methods_statement(release, names))}</p>",
        "<h3>Accounting</h3>",
        parameters.to_html(index=False, na_rep="–"),
        "<h3>Privacy budget</h3>",
        budget.summary().replace({"noise": _NOISE}).to_html(index=False, na_rep="–"),
        f"<pre>{html.escape(budget.describe())}</pre>",
    ]
    if ledger:
        parts.append(f"<h3>Ledger entry</h3><pre>{html.escape(ledger)}</pre>")
    parts.append("<h3>Released histograms (log axes)</h3><div class='figs'>" + "".join(figures) + "</div>")
    for level in range(plan.shape.depth + 1):
        count = plan.shape.n_nodes(level)
        shown = min(count, TABLE_NODES)
        parts.append(f"<h3>Released table — {html.escape(names[level])} ({shown:,} of {count:,} nodes)</h3>")
        parts.append(_level_table(release, level).to_html(index=False))
        bounds = _accuracy_table(release, level)
        if bounds is not None:
            parts.append(
                "<p>Accuracy, publishable (from the release's own noisy measurements, no ε): with 90% confidence, "
                "together, every cumulative count of a node (its groups of size at most j, each j) is within ± the "
                "value shown of the truth, and its histogram within the error bound of persons misplaced.</p>"
                + bounds.to_html(index=False, na_rep="–")
            )
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
