"""Explore: one private release of the chosen data, node by node."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import streamlit as st

from cocoviz import plots
from cocoviz.hierarchy import node_label
from pages.common import controls, data, engine, state
from pages.common.controls import HELP, fmt

st.title("Explore a private release")
st.caption("Pick a dataset, a budget ε and a method per level in the sidebar; the release below is recomputed "
           "(and cached) for every setting. Figures compare the private histogram with the true one — which only "
           "you, the data holder, can see.")

tree, info, _full = controls.dataset_panel()
params, secure = controls.release_controls(tree, info)
names = controls.level_names(tree, info)
st.markdown(controls.describe_tree(tree, info))
card = data.card_markdown(info.label) if info.key[0] == "bundled" else None
if card:
    with st.expander("About this dataset (data card)"):
        st.markdown(card)

# ------------------------------------------------------------------ the release
if secure:
    cells = engine.noise_cells(tree, params.methods, params.max_size, params.consistency)
    seconds = cells / engine.SECURE_CELLS_PER_SECOND
    st.warning(f"**Secure release**: OpenDP will noise about **{cells:,} cells** (Hc: K per node, Hg: G per node) "
               f"at ≈{engine.SECURE_CELLS_PER_SECOND:,} cells/s — about **{seconds:,.1f} s**.", icon=":material/lock:")
    done = st.session_state.setdefault("secure.done", set())
    token = (info.key, tuple(tree.levels), params)
    if token not in done:
        if not st.button("Draw the secure release", type="primary"):
            st.info("Press the button to draw the noise with the secure sampler, or switch the secure release off "
                    "to explore with the fast sampler.")
            st.stop()
        with st.spinner(f"Drawing {cells:,} noise cells with OpenDP…"):
            timed = engine.estimate((*info.key, tuple(tree.levels)), tree, params)
        done.add(token)
    else:
        timed = engine.estimate((*info.key, tuple(tree.levels)), tree, params)
else:
    guess = engine.estimated_seconds(tree, params.methods, params.max_size, params.consistency)
    if guess > engine.CONFIRM_SECONDS and not engine.is_cached((*info.key, tuple(tree.levels)), params):
        st.warning(f"This release is estimated to take about **{guess:,.0f} s**: Hc and naive measure K = "
                   f"{params.max_size:,} cells at each of {sum(tree.summary()['nodes_per_level']):,} nodes. A smaller "
                   "public bound K, or Hg, is much quicker.", icon=":material/hourglass_top:")
        if not st.button("Compute it anyway", type="primary", key="explore.confirm"):
            st.stop()
    with st.spinner("Computing the release…" + (f" (≈{guess:.0f} s: Hc and naive cost K per node)"
                                                 if guess >= 2 else "")):
        timed = engine.estimate((*info.key, tuple(tree.levels)), tree, params)

release = timed.release
budget = release.budget
errors = release.errors()

m1, m2, m3, m4 = st.columns(4)
m1.metric("Total ε spent", f"{budget.total:g}", help=HELP["epsilon"])
m2.metric("Release computed in", f"{timed.seconds:.2f} s",
          help="Time of cocoviz.estimate for these settings (cached afterwards: changing back is instant).")
m3.metric("Consistent", "yes ✓" if release.is_consistent() else "no ✗",
          help="Integral, non-negative, G kept at every node and parent = Σ children everywhere.")
m4.metric("Mean emd per node (all levels)", fmt(float(errors["emd"].mean())), help=HELP["emd"])
per_level = " · ".join(f"{names[k]} {eps:g}" for k, eps in budget.per_level().items())
sampler_note = ("fast sampler — **exploration only, not for release**" if release.sampler.startswith("fast")
                else "secure sampler (OpenDP)")
st.markdown(f"ε per level: {per_level} — total **{budget.total:g}** · {sampler_note}")

budget_panel = st.expander("Privacy budget — per level, total, and what each measurement cost", key="explore.budget",
                           on_change="rerun")
if budget_panel.open:
    with budget_panel:
        if release.sampler.startswith("fast"):
            st.warning("Noise from the **fast sampler** — seeded numpy: **exploration only, not for release**.",
                       icon=":material/science:")
        else:
            st.success(f"Noise from the **secure sampler**: {release.sampler}.", icon=":material/lock:")
        st.plotly_chart(plots.budget_figure(budget.per_level(), level_names=names, extra=budget.extra),
                        theme="streamlit", key="budget_fig")
        summary = budget.summary().copy()
        if not summary.empty:
            summary.insert(1, "level name", [names[int(k)] if pd.notna(k) else "whole data" for k in summary["level"]])
        st.dataframe(summary, hide_index=True, width="stretch",
                     column_config={"sensitivity": st.column_config.NumberColumn("Δ (sensitivity)"),
                                    "scale": st.column_config.NumberColumn("noise scale Δ/ε", format="%.3g"),
                                    "cells": st.column_config.NumberColumn("noised cells", format="%d")})
        st.caption(budget.composition)
        if st.toggle("Show every measurement (one row per node)", key="explore.measurements"):
            st.dataframe(budget.to_frame(), hide_index=True, width="stretch")

# ---------------------------------------------------------------------- the node
st.subheader("A node of the hierarchy")
node = controls.node_picker(tree, info.label)
level = len(node)
row = errors[(errors["level"] == level) & (errors["node"] == node_label(node))].iloc[0]
h_true = tree.histogram(node)
h_priv = release.histogram(node)

c1, c2, c3, c4 = st.columns(4)
c1.metric("Node", node_label(node), help=f"level {level}: {names[level]}")
c2.metric("Groups G (public)", f"{int(row['groups']):,}")
c3.metric("emd of this node", f"{int(row['emd']):,}", help=HELP["emd"])
c4.metric("Omniscient reference G/ε", fmt(float(row["omniscient"])), help=HELP["omniscient"])
if row["omniscient"]:
    st.caption(f"emd / omniscient reference = {row['emd'] / row['omniscient']:.3g} "
               "(below 1: better than knowing every group and noising its size).")

# Stateful tabs: only the open tab's content is computed and sent to the browser.
tab_hist, tab_size, tab_levels, tab_cons, tab_dl = st.tabs(
    ["Histogram", "Error by size", "Errors per level", "Consistency check", "Downloads"], key="explore.tab",
    on_change="rerun")

if tab_hist.open:
    with tab_hist:
        a, b, c, d = st.columns([2, 2, 1, 1])
        layout = a.segmented_control("Layout", ["overlay", "side"], **state.bind("hist.layout", "overlay"),
                                     format_func=lambda v: "overlay" if v == "overlay" else "side by side") or "overlay"
        view = b.segmented_control("View", ["H", "cumulative"], **state.bind("hist.view", "H"),
                                   format_func=lambda v: "H (groups of size j)" if v == "H" else "Hc (cumulative)",
                                   help="H[j] = groups with exactly j persons; Hc[j] = groups with at most j.") or "H"
        # Long-tailed data (sizes in the thousands) reads best on log axes: the default there.
        long_tail = tree.max_size > plots.BAR_LIMIT
        log_x = c.toggle("log x", **state.bind(f"hist.logx.{info.label}", long_tail))
        log_y = d.toggle("log y", **state.bind(f"hist.logy.{info.label}", long_tail))
        st.plotly_chart(plots.histogram_figure(h_true, h_priv, view=view, layout=layout, log_x=log_x, log_y=log_y,
                                               title=f"{node_label(node)}: true vs. private"),
                        theme="streamlit", key="hist_fig")

if tab_size.open:
    with tab_size:
        ls = st.toggle("log x", **state.bind(f"size.logx.{info.label}", tree.max_size > plots.BAR_LIMIT))
        st.plotly_chart(plots.error_by_size_figure({"release": release.error_by_size(node)}, log_x=ls,
                                                   title=f"{node_label(node)}: |Ĥc[s] − Hc[s]| by size s"),
                        theme="streamlit", key="size_fig")
        st.caption("Each point is how far the private cumulative count at size s is from the true one; the curve sums "
                   "to the node's emd. Hg's error tends to sit at small sizes, Hc's spreads over the rest.")

if tab_levels.open:
    with tab_levels:
        lev = release.level_errors()
        lev.insert(1, "level name", [names[int(k)] for k in lev["level"]])
        lev["emd / omniscient"] = lev["mean_emd"] / lev["omniscient"]
        st.plotly_chart(plots.level_error_figure(release.level_errors(), level_names=names), theme="streamlit",
                        key="level_fig")
        st.dataframe(lev, hide_index=True, width="stretch",
                     column_config={"mean_emd": st.column_config.NumberColumn("mean emd", format="%.1f",
                                                                          help=HELP["emd"]),
                                    "max_emd": st.column_config.NumberColumn("max emd", format="%d"),
                                    "omniscient": st.column_config.NumberColumn("omniscient G/ε", format="%.1f",
                                                                                help=HELP["omniscient"]),
                                    "emd / omniscient": st.column_config.NumberColumn(format="%.2f")})
        kids = tree.children(node)
        if kids:
            st.markdown(f"emd of the children of **{node_label(node)}**")
            labels = {node_label(k) for k in kids}
            st.dataframe(errors[errors["node"].isin(labels)], hide_index=True, width="stretch")

if tab_cons.open:
    with tab_cons:
        kids = tree.children(node)
        if not kids:
            st.info(f"{node_label(node)} is a leaf: it has no children to sum. Pick a node above the leaves.")
        else:
            summed = release.children_sum(node)
            n = max(len(summed), len(h_priv))
            same = np.array_equal(np.pad(summed, (0, n - len(summed))), np.pad(h_priv, (0, n - len(h_priv))))
            if same:
                st.success(f"parent = Σ children: the {len(kids)} children of {node_label(node)} add up exactly "
                           "to its released histogram.", icon=":material/check_circle:")
            else:
                diff = int(np.abs(np.pad(summed, (0, n - len(summed))) - np.pad(h_priv, (0, n - len(h_priv)))).sum())
                st.error(f"parent ≠ Σ children: they differ by {diff:,} group counts (consistency is "
                         f"'{params.consistency}': independent estimates do not add up).", icon=":material/cancel:")
            cview = st.segmented_control("View", ["cumulative", "H"], **state.bind("cons.view", "cumulative")) \
                or "cumulative"
            st.plotly_chart(plots.consistency_figure(h_priv, {k[-1]: release.histogram(k) for k in kids}, view=cview,
                                                     title=f"{node_label(node)}: parent vs. stacked children"),
                            theme="streamlit", key="cons_fig")

if tab_dl.open:
    with tab_dl:
        include_true = st.checkbox("Include the true counts", **state.bind("dl.true", info.own_data),
                                   disabled=not info.own_data,
                                   help="The true counts are the confidential data: keep them for your own checks and "
                                        "never publish a file that contains them.")
        stem = f"cocoviz_{info.label.replace(' ', '_').replace(':', '')}"

        def frame() -> pd.DataFrame:
            f = release.to_frame(include_true=include_true and info.own_data)
            f.insert(2, "level_name", [names[int(k)] for k in f["level"]])
            return f

        def as_csv() -> bytes:
            return frame().to_csv(index=False).encode()

        def as_parquet() -> bytes:
            buf = io.BytesIO()
            frame().to_parquet(buf, index=False)
            return buf.getvalue()

        parameters = {**release.parameters(), "dataset": info.label, "seed": params.seed,
                      "levels_used": list(tree.levels), "budget": budget.describe()}
        d1, d2, d3 = st.columns(3)
        d1.download_button("Release as CSV", as_csv, file_name=f"{stem}.csv", mime="text/csv", key="dl_csv",
                           on_click="ignore", icon=":material/download:")
        d2.download_button("Release as Parquet", as_parquet, file_name=f"{stem}.parquet",
                           mime="application/vnd.apache.parquet", key="dl_parquet", on_click="ignore",
                           icon=":material/download:")
        d3.download_button("Parameters as JSON", json.dumps(parameters, indent=2, default=str).encode(),
                           file_name=f"{stem}_parameters.json", mime="application/json", key="dl_json",
                           on_click="ignore", icon=":material/download:")
        st.caption("Columns: level, node, level_name, size, private_count" + (", true_count" if include_true else "")
                   + " — one row per (node, size) where a count is non-zero.")
        if release.sampler.startswith("fast"):
            st.caption(":material/science: This release used the fast sampler: exploration only, not for release.")
