"""Weighted vs. plain averaging: how the merge rule of top-down consistency changes the error (paper, Fig. 4)."""

from __future__ import annotations

import streamlit as st

from cocoviz import plots
from cocoviz.experiments import findings
from pages.common import controls, state, sweeps
from pages.common.help import HELP
from pages.common.numbers import Refused, number_box, stop_if_refused


def intro() -> None:
    st.title("Weighted vs. plain averaging")
    st.caption(
        "Top-down consistency matches every parent group to a child group and merges their two size estimates. "
        "**Weighted** merging uses inverse-variance weights; **plain** averaging takes their mean. The paper "
        "found weighted merging better at every budget and method mix, most at the top level. Each point is "
        "the mean emd per node of a level, averaged over N trials (± one standard error)."
    )


def choices(tree) -> tuple[list[float], list[tuple[str, ...]], list[str], list[str], int | Refused]:
    """The ε grid, the method mixes and their labels, the chosen labels and the trials (or why they are refused)."""

    mixes = sweeps.all_mixes(tree.depth + 1)
    labels = [sweeps.mix_label(m) for m in mixes]
    c1, c2, c3 = st.columns([3, 3, 1])
    eps_grid = controls.epsilon_grid_control(c1, "merge")
    chosen = c2.multiselect(
        "Method mixes (root first)",
        labels,
        help=HELP["method"],
        **state.bind(
            f"merge.mixes.{tree.depth}", labels[:2], valid=lambda v: isinstance(v, list) and set(v) <= set(labels)
        ),
    )
    trials = number_box(
        c3,
        "Trials N",
        "merge.trials",
        10,
        whole=True,
        lo=1,
        hi=100,
        help="Independent noise draws per point (the paper used 10).",
    )
    return eps_grid, mixes, labels, chosen, trials


def comparison_table(summary, names: list[str]) -> None:
    st.subheader("Weighted vs. plain, side by side")
    wide = summary.pivot_table(index=["level", "mix", "epsilon"], columns="merge", values="mean").reset_index()
    if {"weighted", "average"} <= set(wide.columns):
        wide["plain ÷ weighted"] = wide["average"] / wide["weighted"]
        wide.insert(1, "level name", [names[int(k)] for k in wide["level"]])
        wide = wide.rename(columns={"average": "plain (mean emd)", "weighted": "weighted (mean emd)"})
        st.dataframe(
            wide,
            hide_index=True,
            width="stretch",
            column_config={
                "plain (mean emd)": st.column_config.NumberColumn(format="%.1f"),
                "weighted (mean emd)": st.column_config.NumberColumn(format="%.1f"),
                "plain ÷ weighted": st.column_config.NumberColumn(format="%.2f", help="> 1: weighted is better"),
            },
        )
        top = wide[wide["level"] == 0]
        wins = int((top["plain ÷ weighted"] > 1).sum())
        st.markdown(
            f"At the top level weighted merging has the lower error in **{wins} of {len(top)}** (mix, ε) settings."
        )


def raw_results(raw, trials: int, max_size: int, seed: int) -> None:
    raw_panel = st.expander("Raw results (one row per series, ε, trial and node)", key="merge.raw", on_change="rerun")
    if raw_panel.open:
        with raw_panel:
            st.dataframe(raw, hide_index=True, width="stretch")
    st.download_button(
        "Raw results as CSV",
        lambda: raw.to_csv(index=False).encode(),
        file_name="merging_sweep.csv",
        mime="text/csv",
        on_click="ignore",
        icon=":material/download:",
    )
    st.caption(
        f"{len(raw):,} rows; {trials} trial(s) per point; K = {max_size:,}; seed {seed} (one noise stream per "
        "trial, shared by weighted and plain: a paired comparison); fast sampler (exploration only). Results are "
        "cached: coming back costs nothing."
    )


def main() -> None:
    intro()
    tree, info, max_size, seed, names = controls.comparison_sidebar()
    eps_grid, mixes, labels, chosen, trials = choices(tree)
    stop_if_refused(trials)
    if not eps_grid:
        st.error("Choose at least one ε per level.", icon=":material/warning:")
        st.stop()
    if not chosen:
        st.error("Choose at least one method mix.", icon=":material/warning:")
        st.stop()

    configs = findings.merging_series([mixes[labels.index(lab)] for lab in chosen])
    eps_grid = sorted(eps_grid)
    sweep = (info.key, tree, configs, eps_grid, trials, max_size, seed)
    slot = st.container()  # the shipped finding goes above the run button while the full run waits for it
    raw = sweeps.gated_run("merge", *sweep, finding_name="merging")
    summary, meta = sweeps.finding_or_stop("merging", raw, slot, *sweep)
    if meta is not None:
        names = [meta["root"], *meta["levels"]]
    with slot:
        st.plotly_chart(
            plots.sweep_figure(summary, facet_names=names, title="mean emd per node, by level"),
            theme="streamlit",
            key="merge_fig" if meta is None else "merge_finding_fig",
        )
        comparison_table(summary, names)
    if raw is not None:
        raw_results(raw, trials, max_size, seed)


main()
