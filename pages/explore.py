"""Explore: one private release of the chosen data, node by node."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import cocoviz
from cocoviz import plots
from cocoviz.evaluate.against_truth import (
    evaluation_row,
    level_summary,
    plain_number,
    plain_reading,
    ratio_reading,
    share_percent,
)
from cocoviz.hierarchy import node_label
from cocoviz.privacy.truncation import bound_from_release
from pages.common import (
    budget_panel,
    calibration,
    controls,
    data,
    downloads,
    engine,
    leads,
    ledger,
    links,
    picker,
    planner,
    progress,
    state,
    summaries,
)
from pages.common.controls import fmt
from pages.common.help import HELP
from pages.common.intervals import intervals_tab


def release_section(tree, info, params: engine.Params, k_from_data: bool) -> engine.Timed:
    """The release of ``params``: at once for the fast sampler, behind one confirmation gate when secure."""
    data_key = (*info.key, tuple(tree.levels))
    plan = engine.plan(tree, params)
    cells = plan.cost().cells
    if params.secure:
        if not plan.shape.public_groups:
            st.error(
                "A secure release needs public G per region: this persons table came without its public "
                "groups table, so G and the region list are read from private rows. Add the groups table in "
                "the sidebar, or switch the secure release off to explore.",
                icon=":material/lock:",
            )
            st.stop()
        if k_from_data and any(cocoviz.METHODS[m].needs_k for m in params.methods):
            st.error(
                "A secure release needs a K from public knowledge: the K in the sidebar is the suggestion read "
                'from the private data. Type the public bound you know, or tick "is a bound I know from public '
                'facts" under it when it is the same number (or use Hg, which needs no K).',
                icon=":material/lock:",
            )
            st.stop()
        slot = st.empty()  # emptied once the release is drawn: its warning and button are then out of date
        if not engine.is_drawn(data_key, params):
            seconds = engine.estimated_seconds(plan, secure=True)
            drawn, spent = engine.ledger_total(plan)
            gate = slot.container()
            gate.warning(
                f"**Secure release**: the secure sampler will noise **{cells:,} cells** "
                "(Hc: K per node, Hg: G per node) "
                f"at ≈{cells / max(seconds, 1e-9):,.0f} cells/s on this machine — about **{seconds:,.1f} s**, and "
                f"it spends **ε = {plan.cost().total:g}** more on this dataset (the ledger holds ε = {spent:g} in "
                f"{drawn} secure release(s) of it).",
                icon=":material/lock:",
            )
            try:
                engine.ledger().check(plan, label=info.label)
            except cocoviz.CocovizError as exc:  # the cap (or a ledger that cannot be used) refuses the draw
                st.error(str(exc), icon=":material/lock:")
                ledger.ledger_section(plan)
                st.stop()
            for choice in engine.cheaper_choices(plan):
                gate.caption(f"Cheaper: {choice}")
            if not gate.button("Draw the secure release", type="primary", key="explore.secure"):
                gate.info(
                    "Press the button to draw the noise with the secure sampler, or switch the secure release "
                    "off to explore with the fast sampler."
                )
                ledger.ledger_section(plan)
                st.stop()
            slot.empty()
        return engine.estimate(data_key, tree, params, label=info.label)
    model = engine.estimated_seconds(plan)  # the plan's cells at this machine's rate
    rate = calibration.rate_in_use()  # the rate of that estimate (a probe may end while the release runs)
    guess = calibration.gate_seconds(model, "release")  # bounded: a slow past run never locks the page
    cached = engine.is_cached(data_key, params)
    if guess > engine.CONFIRM_SECONDS and not cached:
        st.warning(
            f"This release is estimated to take about **{guess:,.0f} s**: it noises {cells:,} cells (Hc and "
            "naive measure K cells per node). A smaller public bound K, or Hg, is much quicker.",
            icon=":material/hourglass_top:",
        )
        if not st.button("Compute it anyway", type="primary", key="explore.confirm"):
            st.stop()
    with progress.recomputing("Computing the release for these settings", guess):
        timed = engine.estimate(data_key, tree, params)
    if not cached and not timed.from_cache:  # this machine's own time teaches the next estimate
        calibration.observe("release", model, timed.seconds, rate)
    return timed


def headline(release: cocoviz.Release, errors: pd.DataFrame, timed: engine.Timed, names: list[str]) -> None:
    m1, m2, m3, m4 = st.columns(4)
    budget = release.budget
    m1.metric(
        "Total ε spent",
        f"{budget.total:.4g}" if budget.accounting == "zCDP" else f"{budget.total:g}",
        help=HELP["epsilon"]
        + (
            f" Under zCDP: the ε of the total ρ read as (ε, δ = {budget.delta:g})-DP."
            if budget.accounting == "zCDP"
            else ""
        ),
    )
    if timed.from_cache:
        m2.metric(
            "Release",
            "from cache",
            help=f"Computed earlier on this server in {timed.seconds:.2f} s; shown again at no cost.",
        )
    else:
        m2.metric(
            "Release computed in",
            f"{timed.seconds:.2f} s",
            help="Time of cocoviz.estimate for these settings (cached afterwards: changing back is instant).",
        )
    m3.metric(
        "Consistent",
        "yes ✓" if release.is_consistent() else "no ✗",
        help="Integral, non-negative, G kept at every node and parent = Σ children everywhere.",
    )
    m4.metric("Mean emd per node (all levels)", fmt(float(errors["emd"].mean())), help=HELP["emd"])
    secure = not release.sampler.startswith("fast")
    note = "secure sampler (exact, OS-keyed)" if secure else "fast sampler — **exploration only, not for release**"
    if budget.accounting == "zCDP":
        # A zCDP plan is spent in ρ; its levels have no ε of their own to show, only the total's (ε, δ) reading.
        rhos = " · ".join(f"{names[k]} {rho:g}" for k, rho in budget.per_level_rho().items())
        st.markdown(
            f"zCDP, discrete Gaussian noise: ρ per level {rhos} — total **ρ = {budget.total_rho:g}**, "
            f"read as (ε = {budget.total:.3g}, δ = {budget.delta:g})-DP · {note}"
        )
    else:
        per_level = " · ".join(f"{names[k]} {eps:g}" for k, eps in budget.per_level().items())
        st.markdown(f"ε per level: {per_level} — total **{budget.total:g}** · {note}")
    st.markdown("Method per level: " + " · ".join(f"{names[k]} **{m}**" for k, m in enumerate(release.plan.methods)))
    for text in budget.notes:
        if "not private" in text:
            st.warning(text, icon=":material/visibility:")
    if release.plan.methods[0] == "Hg":
        st.caption(
            f"The root's released top size suggests K = {bound_from_release(release):,} for a later Hc release, "
            "at no ε (post-processing of this release). It does not guarantee that no group is truncated: the "
            "released top size is noisy and may fall below the true largest group."
        )
    drawn, spent = engine.ledger_total(release.plan)
    if drawn:
        st.info(
            f"Secure releases of this dataset in the privacy ledger (every session): **{drawn}**, spending "
            f"**ε = {spent:g}** together (every draw is a new release of the same people).",
            icon=":material/receipt_long:",
        )
        ledger.ledger_section(release.plan)


def budget_section(release: cocoviz.Release, names: list[str]) -> None:
    budget = release.budget
    panel = st.expander(
        "Privacy budget — per level, total, and what each measurement cost", key="explore.budget", on_change="rerun"
    )
    if not panel.open:
        return
    with panel:
        if release.sampler.startswith("fast"):
            st.warning(
                "Noise from the **fast sampler** — seeded Philox counter streams: "
                "**exploration only, not for release**.",
                icon=":material/science:",
            )
        else:
            st.success(f"Noise from the **secure sampler**: {release.sampler}.", icon=":material/lock:")
        st.plotly_chart(
            plots.budget_figure(budget.per_level(), level_names=names, extra=dict(budget.extra)),
            theme="streamlit",
            key="budget_fig",
        )
        summary = budget_panel.budget_table(budget.summary(), names)
        # A relation's whole sentence does not fit in a table cell: its short name there, the sentence below.
        relations = budget_panel.relation_sentences(summary)
        if relations:
            summary["relation"] = summary["relation"].map(lambda r: str(r).split(":", 1)[0])
        st.dataframe(summary, hide_index=True, width="stretch", column_config=budget_panel.BUDGET_COLUMNS)
        for relation in relations:
            st.caption(f"Neighbour relation — {relation}")
        st.caption(budget.composition)
        for text in budget.notes:
            st.caption(f"Note: {text}")
        if st.toggle("Show every measurement (one row per level and query)", key="explore.measurements"):
            st.dataframe(budget.to_frame(), hide_index=True, width="stretch")


def node_metrics(row: pd.Series, node: tuple, level: int, names: list[str]) -> None:
    # The node's name on a line of its own: a metric cuts a long name ("Hudson Yards-Chelsea-…") short.
    st.markdown(f"**Node:** {node_label(node)} — level {level}: {names[level]}")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Groups G (public)", f"{int(row['groups']):,}")
    c2.metric("emd of this node", f"{int(row['emd']):,}", help=HELP["emd"])
    c3.metric("Omniscient yardstick D/ε", fmt(float(row["omniscient"])), help=HELP["omniscient"])
    c4.metric("emd / yardstick", plain_number(row["ratio"]), help=HELP["omniscient"])
    if np.isfinite(row["ratio"]) and row["ratio"] < 1:
        st.caption(HELP["below_yardstick"])
    c1, c2, _, _ = st.columns(4)
    c1.metric("Persons misplaced per group", plain_number(row["emd_per_group"]), help=HELP["per_group"])
    c2.metric("Groups of exactly the right size", share_percent(row["exact_share"]), help=HELP["exact_share"])
    st.markdown(f"**In plain words:** {plain_reading(row)}")
    st.caption(
        "Against the true data — for you, the data holder; exploration, not private: "
        f"{int(row['sizes']):,} distinct true sizes (D) at ε = {row['epsilon']:g}."
    )


def histogram_tab(tree, info, node, h_true, h_priv) -> None:
    a, b, c, d = st.columns([2, 2, 1, 1])
    layout = (
        a.segmented_control(
            "Layout",
            ["overlay", "side"],
            **state.bind("hist.layout", "overlay"),
            format_func=lambda v: "overlay" if v == "overlay" else "side by side",
        )
        or "overlay"
    )
    view = (
        b.segmented_control(
            "View",
            ["H", "cumulative"],
            **state.bind("hist.view", "H"),
            format_func=lambda v: "H (groups of size j)" if v == "H" else "Hc (cumulative)",
            help="H[j] = groups with exactly j persons; Hc[j] = groups with at most j.",
        )
        or "H"
    )
    # Long-tailed data (sizes in the thousands) reads best on log axes: the default there.
    long_tail = tree.max_size > plots.BAR_LIMIT
    log_x = c.toggle("log x", **state.bind(f"hist.logx.{info.label}", long_tail))
    log_y = d.toggle("log y", **state.bind(f"hist.logy.{info.label}", long_tail))
    st.plotly_chart(
        plots.histogram_figure(
            h_true,
            h_priv,
            view=view,
            layout=layout,
            log_x=log_x,
            log_y=log_y,
            title=f"{node_label(node)}: true vs. private",
        ),
        theme="streamlit",
        key="hist_fig",
    )
    if h_priv[0] or h_true[0]:
        st.caption(
            f"Size 0 holds {int(h_priv[0]):,} released and {int(h_true[0]):,} true groups. Size 0 is a real size: a "
            "group with no member of the kind counted (a census block with no person of the race). In a release "
            "it can also be a small group that the noise pushed down to zero: G is public and kept, so every "
            "group stays in the histogram."
        )


def size_tab(tree, info, release, node) -> None:
    ls = st.toggle("log x", **state.bind(f"size.logx.{info.label}", tree.max_size > plots.BAR_LIMIT))
    st.plotly_chart(
        plots.error_by_size_figure(
            {"release": cocoviz.size_errors(tree, release, node)},
            log_x=ls,
            title=f"{node_label(node)}: |Ĥc[s] − Hc[s]| by size s",
        ),
        theme="streamlit",
        key="size_fig",
    )
    st.caption(
        "Each point is how far the private cumulative count at size s is from the true one; the curve sums "
        "to the node's emd. Hg's error tends to sit at small sizes, Hc's spreads over the rest."
    )


def sums_tab(tree, release, node, row: pd.Series) -> None:
    h_true = tree.histogram(node)
    top = max(len(h_true) - 1, len(release.histogram(node)) - 1, 1)
    js = np.arange(1, top + 1)
    released = release.prefix_persons(node, js)
    truth = np.cumsum(np.arange(len(h_true)) * h_true)[np.minimum(js, len(h_true) - 1)]
    c1, c2, c3 = st.columns(3)
    c1.metric("Persons (released)", f"{release.persons(node):,}", help="Σ j·Ĥ[j]: post-processing, no ε.")
    c2.metric("Persons (true)", f"{int(truth[-1]):,}")
    c3.metric("Largest |P̂(j) − P(j)|", f"{int(np.abs(released - truth).max()):,}")
    st.plotly_chart(
        plots.prefix_sums_figure(
            released, truth, emd=float(row["emd"]), title=f"{node_label(node)}: persons in groups of size ≤ j"
        ),
        theme="streamlit",
        key="sums_fig",
    )
    st.caption(
        "P(j) = Σ_{s≤j} s·Ĥ[s] is computed from the released histogram, so it costs no ε and adds up over the "
        "hierarchy exactly as the histograms do. Its error is at most j × the node's emd (the dashed line)."
    )


def levels_tab(tree, release, errors: pd.DataFrame, node, names: list[str], key: tuple) -> None:
    lev = level_summary(errors)
    st.plotly_chart(plots.level_error_figure(lev, level_names=names), theme="streamlit", key="level_fig")
    lev.insert(1, "level name", [names[int(k)] for k in lev["level"]])
    lev["reading"] = [ratio_reading(r) for r in lev["ratio"]]
    st.dataframe(
        lev,
        hide_index=True,
        width="stretch",
        column_config={
            "mean_emd": st.column_config.NumberColumn("mean emd", format="%.1f", help=HELP["emd"]),
            "max_emd": st.column_config.NumberColumn("max emd", format="%d"),
            "exact_share": st.column_config.NumberColumn(
                "exactly right (mean)", format="percent", help=HELP["exact_share"]
            ),
            "omniscient": st.column_config.NumberColumn("yardstick D/ε", format="%.1f", help=HELP["omniscient"]),
            "ratio": st.column_config.NumberColumn("emd / yardstick", format="%.2f"),
        },
    )
    figures = plots.node_figures(errors, release)
    summaries.spread_section(figures, names, key)
    summaries.children_section(tree, figures, node, names)


def consistency_tab(tree, release, node, h_priv, consistency: str) -> None:
    level, k = tree.locate(node)
    kids = tree.node_codes.children(level, k) if level < tree.depth else ()
    if not len(kids):
        st.info(f"{node_label(node)} is a leaf: it has no children to sum. Pick a node above the leaves.")
        return
    summed = release.children_sum(node)
    n = max(len(summed), len(h_priv))
    gap = int(np.abs(np.pad(summed, (0, n - len(summed))) - np.pad(h_priv, (0, n - len(h_priv)))).sum())
    if gap == 0:
        st.success(
            f"parent = Σ children: the {len(kids)} children of {node_label(node)} add up exactly to its "
            "released histogram.",
            icon=":material/check_circle:",
        )
    else:
        st.error(
            f"parent ≠ Σ children: they differ by {gap:,} group counts (consistency is '{consistency}': "
            "independent estimates do not add up).",
            icon=":material/cancel:",
        )
    view = st.segmented_control("View", ["cumulative", "H"], **state.bind("cons.view", "cumulative")) or "cumulative"
    if len(kids) > picker.LIST_LIMIT:  # one histogram per child would be millions: their sum stands for them
        st.caption(f"{len(kids):,} children: too many to stack one by one, their sum is drawn.")
        parts = {f"Σ of the {len(kids):,} children": summed}
    else:
        parts = {child[-1]: release.histogram(child) for child in tree.children(node)}
    st.plotly_chart(
        plots.consistency_figure(
            h_priv,
            parts,
            view=view,
            title=f"{node_label(node)}: parent vs. stacked children",
        ),
        theme="streamlit",
        key="cons_fig",
    )


def main() -> None:
    st.title("Explore a private release")
    st.caption(
        "Pick a dataset, a budget ε and a method per level in the sidebar; the release below is recomputed "
        "(and cached) for every setting. Figures compare the private histogram with the true one — which "
        "only you, the data holder, can see."
    )
    tree, info, _full = controls.dataset_panel()
    params, k_from_data = controls.release_controls(tree, info)
    links.show_problems()  # what the address held that could not be used (before anything can stop the page)
    names = controls.level_names(tree, info)
    st.markdown(controls.describe_tree(tree, info))
    card = data.card_markdown(info.label) if info.key[0] == "bundled" else None
    if card:
        # Drawn when opened: the card's Markdown is not part of the first render.
        about = st.expander("About this dataset (data card)", key="explore.card", on_change="rerun")
        if about.open:
            about.markdown(card)

    planner.planner(tree, params, names)
    timed = release_section(tree, info, params, k_from_data)
    release = timed.release
    errors = engine.evaluate((*info.key, tuple(tree.levels)), tree, params, release)
    # Slots in page order, filled after the open tab's chart: the browser receives the chart first and
    # starts loading Plotly's module (its largest) while it draws the metrics above it.
    headline_slot, link_slot, advice_slot, budget_slot = (st.container() for _ in range(4))

    st.subheader("A node of the hierarchy")
    links.apply_node(tree, info.label)
    links.show_problems()
    node = picker.node_picker(tree, info.label)
    level = len(node)
    row = evaluation_row(errors, tree, node)
    metrics_slot = st.container()
    h_true, h_priv = tree.histogram(node), release.histogram(node)
    # Stateful tabs: only the open tab's content is computed and sent to the browser.
    tabs = st.tabs(
        [
            "Histogram",
            "Error by size",
            "Sums",
            "Errors per level",
            "Consistency check",
            "Intervals (publishable)",
            "Downloads",
        ],
        key="explore.tab",
        on_change="rerun",
    )
    bodies = [
        lambda: histogram_tab(tree, info, node, h_true, h_priv),
        lambda: size_tab(tree, info, release, node),
        lambda: sums_tab(tree, release, node, row),
        lambda: levels_tab(tree, release, errors, node, names, ((*info.key, tuple(tree.levels)), params)),
        lambda: consistency_tab(tree, release, node, h_priv, params.consistency),
        lambda: intervals_tab(
            info, engine.with_stated_errors((*info.key, tuple(tree.levels)), tree, params, release), node
        ),
        lambda: downloads.downloads_tab(tree, info, release, params, names, errors),
    ]
    for tab, body in zip(tabs, bodies):
        if tab.open:
            with tab:
                body()
    with headline_slot:
        headline(release, errors, timed, names)
    with link_slot:
        leads.share_link(tree, info, _full, params, node)
    with advice_slot:
        leads.finding_advice(tree, info, params)
    with budget_slot:
        budget_section(release, names)
    with metrics_slot:
        node_metrics(row, node, level, names)


main()
