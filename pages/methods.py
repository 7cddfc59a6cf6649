"""Method selection: which method mix (Hc / Hg per level) works best on this data, and the private way to choose."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import streamlit as st

import cocoviz
from cocoviz import plots
from cocoviz.experiments import findings
from cocoviz.experiments.series import Series
from cocoviz.privacy.accounting import DEFAULT_DELTA, zcdp_epsilon
from pages.common import calibration, controls, data, engine, leads, state, sweeps
from pages.common.help import HELP
from pages.common.numbers import any_refused, number_box

leads.go_if_asked()
st.title("Method selection")
st.caption(
    "Every mix of Hc and Hg across the levels, top-down with weighted merging, against bottom-up (the whole "
    "budget on the leaves) and naive; error per level against ε per level, mean ± standard error over N "
    "trials. Hc tends to win on dense data (many distinct sizes), Hg on sparse data with large gaps."
)

tree, info, max_size, seed, names = controls.comparison_sidebar()
n_levels = tree.depth + 1

mixes = sweeps.all_mixes(n_levels)
mix_labels = [sweeps.mix_label(m) for m in mixes]
candidate_series = findings.method_candidates(n_levels)  # every mix, bottom-up and naive, by label
options = list(candidate_series)

# Stateful tabs: only the open tab runs (a sweep is not recomputed while you read the tables).
tab_sweep, tab_tables, tab_select, tab_wu = st.tabs(
    ["Error against ε", "Tables 3 and 4", "Private algorithm selection", "Choosing K and sum queries"],
    key="methods.tab",
    on_change="rerun",
)


# ------------------------------------------------------------------ the sweep
def sweep_tab() -> None:
    """Every candidate's error per level against ε."""
    c1, c2, c3 = st.columns([3, 4, 1])
    eps_grid = controls.epsilon_grid_control(c1, "methods")
    chosen = c2.multiselect(
        "Candidates",
        options,
        help=HELP["method"] + " Bottom-up spends ε per level × levels on the leaves, so every "
        "series has the same total ε.",
        **state.bind(
            f"methods.configs.{n_levels}",
            findings.default_candidates(n_levels),
            valid=lambda v: isinstance(v, list) and set(v) <= set(options),
        ),
    )
    trials = number_box(c3, "Trials N", "methods.trials", 10, whole=True, lo=1, hi=100, help="Noise draws per point.")
    if any_refused(trials):
        return
    if not eps_grid or not chosen:
        st.error("Choose at least one ε per level and one candidate.", icon=":material/warning:")
        return
    sweep = (info.key, tree, [candidate_series[c] for c in chosen], sorted(eps_grid), trials, max_size, seed)
    slot = st.container()  # the shipped finding goes above the run button while the full run waits for it
    raw = sweeps.gated_run("methods", *sweep, finding_name="methods")
    summary, meta = sweeps.finding_or_stop("methods", raw, slot, *sweep)
    with slot:
        sweep_view(summary, names if meta is None else [meta["root"], *meta["levels"]], live=meta is None)


def sweep_view(summary, names: list[str], live: bool) -> None:
    """The sweep's figure, the best candidate per level and ε, and the summary table."""
    st.plotly_chart(
        plots.sweep_figure(summary, facet_names=names, title="mean emd per node, by level"),
        theme="streamlit",
        key="methods_fig" if live else "methods_finding_fig",
    )
    st.subheader("Best candidate per level")
    best = summary.loc[summary.groupby(["level", "epsilon"])["mean"].idxmin()]
    table = best.assign(cell=[f"{s} ({m:,.1f})" for s, m in zip(best["series"], best["mean"])]).pivot(
        index="level", columns="epsilon", values="cell"
    )
    table.index = [f"{k}: {names[int(k)]}" for k in table.index]
    table.columns = [f"ε = {e:g}" for e in table.columns]
    st.dataframe(table, width="stretch")
    wins = best.groupby("level")["series"].agg(lambda s: s.value_counts().index[0])
    st.markdown("**Most often best, per level:** " + "; ".join(f"{names[int(k)]}: {v}" for k, v in wins.items()))
    overall = best["series"].value_counts().index[0]
    c1, c2, c3 = st.columns([3, 1, 2], vertical_alignment="bottom")
    series_names = list(dict.fromkeys(summary["series"]))
    pick = c1.selectbox(
        "Open a candidate in Explore",
        series_names,
        index=series_names.index(overall),
        key="methods.open_series",
        help="Explore then shows this candidate's release at this ε per level (the sidebar takes its settings).",
    )
    grid = sorted(set(summary["epsilon"]))
    at_eps = c2.selectbox("at ε per level", grid, index=len(grid) // 2, key="methods.open_eps")
    c3.button(
        "Open in Explore",
        icon=":material/search:",
        key="methods.open",
        on_click=leads.open_in_explore,
        args=([float(at_eps)] * len(names), candidate_series[pick]),
        disabled=pick not in candidate_series,
    )
    with st.expander("All results (mean ± se per level and ε)"):
        st.dataframe(summary, hide_index=True, width="stretch")


# --------------------------------------------------------------- tables 3 and 4
def tables() -> None:
    """Tables in the form of the paper's Tables 3 and 4, computed on request."""
    c1, c2 = st.columns([1, 1])
    t_eps = controls.epsilon_box(
        c1, "ε (Table 3: per level; Table 4: total)", "methods.table_eps", 1.0, name="ε", help=HELP["epsilon"]
    )
    t_trials = number_box(c2, "Trials", "methods.table_trials", 10, whole=True, lo=1, hi=100)
    if any_refused(t_eps, t_trials):
        return
    table3 = [sweeps.Config((m,) * n_levels, "none", "weighted", m) for m in ("naive", "Hc", "Hg")]
    per_level = float(t_eps) / n_levels
    table4 = [
        sweeps.Config(("Hc",) * n_levels, "bottom-up", "weighted", "BU"),
        sweeps.Config(("Hc",) * n_levels, "top-down", "weighted", "Hc"),
    ]
    raw3 = sweeps.cached(sweeps.sweep_key(info.key, tree, table3, [float(t_eps)], t_trials, max_size, seed))
    raw4 = sweeps.cached(sweeps.sweep_key(info.key, tree, table4, [per_level], t_trials, max_size, seed))
    if raw3 is None or raw4 is None:
        n_runs = (len(table3) + len(table4)) * t_trials
        seconds = engine.guard(sweeps.estimated_seconds, tree, table3, [float(t_eps)], t_trials, max_size)
        seconds += engine.guard(sweeps.estimated_seconds, tree, table4, [per_level], t_trials, max_size)
        label = f"Compute the tables ({n_runs} releases, ≈{seconds:,.0f} s)"
        if not st.button(label, type="primary", key="tables_run"):
            st.info(
                "Naive measures K + 1 cells per node and is slow for a large K: the tables are computed on request. "
                f"About {seconds:,.1f} s, estimated {calibration.describe('sweep')}."
            )
            return
        model = seconds / calibration.factor("sweep")  # without the learnt factor, read before other runs move it
        rate = calibration.rate_in_use()  # the rate of that estimate (a probe may end while the tables run)
        start = time.perf_counter()
        bar = st.progress(0.0, text="Table 3…")
        raw3 = engine.guard(
            sweeps.run,
            info.key,
            tree,
            table3,
            [float(t_eps)],
            t_trials,
            max_size,
            seed,
            progress=lambda d, t: bar.progress(d / t, text=f"Table 3: {d} / {t} releases"),
        )
        raw4 = engine.guard(
            sweeps.run,
            info.key,
            tree,
            table4,
            [per_level],
            t_trials,
            max_size,
            seed,
            progress=lambda d, t: bar.progress(d / t, text=f"Table 4: {d} / {t} releases"),
        )
        bar.empty()
        calibration.observe("sweep", model, time.perf_counter() - start, rate)  # a clicked run teaches too
    s3 = sweeps.summarize(raw3)
    top = s3[s3["level"] == 0].set_index("series")["mean"].reindex(["naive", "Hc", "Hg"])
    t3 = pd.DataFrame({info.label: top.to_numpy()}, index=["Naive", "Hc", "Hg"])
    st.markdown(
        f"**Table 3 form** — average error (emd) at the top level, each node estimated on its own "
        f"with ε = {t_eps:g}, mean over {t_trials} trial(s)"
    )
    st.dataframe(t3.style.format("{:,.1f}"), width="stretch")
    s4 = sweeps.summarize(raw4)
    rows = []
    for level in range(n_levels):
        for series in ("BU", "Hc"):
            v = s4[(s4["level"] == level) & (s4["series"] == series)]["mean"]
            rows.append(
                {
                    "level": f"Level {level} ({names[level]})",
                    "method": series,
                    info.label: float(v.iloc[0]) if len(v) else np.nan,
                }
            )
    st.markdown(
        f"**Table 4 form** — bottom-up (total ε = {t_eps:g} on the leaves) against top-down "
        f"Hc×…×Hc (ε = {per_level:g} per level), mean emd per node"
    )
    st.dataframe(pd.DataFrame(rows).style.format({info.label: "{:,.1f}"}), hide_index=True, width="stretch")


# ------------------------------------------------------------ private selection
def selection_tab() -> None:
    """Chaudhuri et al.'s private selection among method mixes, with its full cost (in ε, or in ρ under zCDP)."""
    st.markdown(
        "Choosing the best mix by looking at the true errors leaks private information. **Private "
        "algorithm selection** (Chaudhuri et al.) runs every candidate with the full budget, scores each by "
        "its total emd plus noise and releases the lowest noisy score — and its privacy cost is **every "
        "candidate's budget plus the selection's**, by sequential composition. Under zCDP the candidates draw "
        "discrete Gaussian noise with ρ per level, and the selection (pure ε) counts ε²/2."
    )
    zcdp = controls.accounting_control(st) == "zCDP"  # the same setting as Explore's sidebar
    c1, c2, c3 = st.columns(3)
    if zcdp:
        s_level = controls.rho_box(
            c1, "ρ per level", "select.rho", 0.5, help="ρ (zCDP) of every level of every candidate release."
        )
    else:
        s_level = controls.epsilon_box(c1, "ε per level", "select.eps", 1.0, help=HELP["epsilon"])
    s_sel = controls.epsilon_box(
        c2,
        "ε of the selection",
        "select.eps_select",
        0.1,
        help="Budget of the noisy comparison of the candidates' scores (pure ε; under zCDP it counts ε²/2).",
    )
    cands = c3.multiselect(
        "Candidates",
        mix_labels,
        **state.bind(
            f"select.candidates.{n_levels}",
            mix_labels[:2],
            valid=lambda v: isinstance(v, list) and set(v) <= set(mix_labels),
        ),
    )
    if any_refused(s_level, s_sel):
        return
    if not cands:
        st.error("Choose at least one candidate.", icon=":material/warning:")
        return
    candidates = [mixes[mix_labels.index(c)] for c in cands]
    levels = {"rhos" if zcdp else "epsilons": [float(s_level)] * n_levels}
    options = dict(**levels, epsilon_select=float(s_sel), max_size=max_size)
    total_cost = engine.guard(cocoviz.selection_cost, tree, candidates, **options)
    single = engine.guard(cocoviz.Plan.build, tree, **levels, methods=candidates[0], max_size=max_size).cost()
    if zcdp:
        cost = (
            f"**ρ = {total_cost:g}**, read as (ε = {zcdp_epsilon(total_cost, DEFAULT_DELTA):.4g}, "
            f"δ = {DEFAULT_DELTA:g})-DP, against ρ = {single.total_rho:g} for a single release"
        )
    else:
        cost = f"**ε = {total_cost:g}**, against ε = {single.total:g} for a single release"
    st.info(
        f"Whole privacy cost, from the candidates' plans: {len(cands)} candidate release(s) and the selection = "
        f"{cost}.",
        icon=":material/payments:",
    )
    if st.button("Run the private selection", type="primary", key="select_run"):
        with st.spinner(f"Running {len(candidates)} candidate releases and the noisy selection…"):
            chosen = engine.guard(cocoviz.select_mix, tree, candidates, seed=seed, **options)
        st.session_state["select.result"] = (info.key, tuple(tree.levels), tuple(cands), chosen)
    result = st.session_state.get("select.result")
    if result is not None and result[0] == info.key and result[1] == tuple(tree.levels):
        chosen = result[3]
        _selected(chosen)


def _selected(chosen: cocoviz.Release) -> None:
    """The selected release: its whole cost (as its own budget report states it), Explore and the download."""
    budget, rhos = chosen.budget, chosen.plan.rhos
    label = sweeps.mix_label(chosen.plan.methods)
    if rhos is not None:
        cost = (
            f"whole cost ρ = {budget.total_rho:g}, read as (ε = {budget.epsilon_delta():.4g}, δ = {budget.delta:g})-DP"
        )
    else:
        cost = f"whole cost ε = {budget.total:g}"
    st.success(
        f"Selected: **{label}** — {cost} (carried by the published release's own budget report)",
        icon=":material/flag:",
    )
    st.code(budget.describe(), language=None, wrap_lines=True)
    c1, c2 = st.columns(2)
    c1.button(
        "Open the selected mix in Explore",
        icon=":material/search:",
        key="select.open",
        on_click=leads.open_in_explore,
        args=(
            [] if rhos is not None else list(chosen.plan.epsilons),
            Series(tuple(chosen.plan.methods)),
            None if rhos is None else list(rhos),
        ),
    )
    c2.download_button(
        "Download the selected release (fast sampler: exploration only)",
        lambda: data.release_to_bytes(chosen),
        file_name=f"cocoviz_{info.label.replace(' ', '_')}_selected_release.parquet",
        mime="application/vnd.apache.parquet",
        key="select.download",
        on_click="ignore",
        icon=":material/download:",
        help="cocoviz.load_release reads it back: the release, its plan and the whole budget of the selection.",
    )
    st.caption(
        "Only the chosen release is published; the losing candidates and their noisy scores are not "
        "shown, because report-noisy-min protects only the winner's identity."
    )


# ------------------------------------------------------------ Wu et al.: K and sums
WU_EXPERIMENTS = {
    "wu-e1": "E1 — how K is chosen: public 100,000, noisy max, SVT or the true maximum (root, all-Hc)",
    "wu-e2": "E2 — persons in groups of size ≤ j from the Hc / Hg releases against Wu's strategies",
}


@st.cache_data(show_spinner=False, max_entries=8)
def _wu_run(name: str, data_key: tuple, trials: int, seed: int, max_size: int, _tree) -> tuple[str, dict]:
    from cocoviz.experiments import run_experiment

    result = run_experiment(
        name,
        trials=trials,
        seed=seed,
        max_size=max_size,
        datasets=["housing"],
        loader=lambda _name, **_: _tree,
        png=False,
    )
    return result.markdown.replace("housing", "this data"), {k: f.to_json() for k, f in result.figures.items()}


def wu_tab() -> None:
    """Wu et al.'s experiments, run on the chosen data with its levels."""
    st.markdown(
        "Hc measures K cells per node, so a K chosen **privately** from the data (noisy max: Δ = 1, its own "
        "ε_K) cuts the noise cells by orders of magnitude; SVT, Wu's choice, stops early and truncates. "
        "Sum queries (persons in groups of size ≤ j) come free from a release, and compare with Wu's direct "
        "strategies at the same ε. These are the package's experiments `wu-e1` and `wu-e2`, on this data."
    )
    c1, c2 = st.columns([3, 1])
    name = c1.selectbox(
        "Experiment",
        list(WU_EXPERIMENTS),
        format_func=WU_EXPERIMENTS.get,
        **state.bind("wu.name", "wu-e1", valid=WU_EXPERIMENTS.__contains__),
    )
    trials = number_box(c2, "Trials", "wu.trials", 5, whole=True, lo=1, hi=100)
    if any_refused(trials):
        return
    if name == "wu-e2" and tree.depth == 0:
        st.info("E2 compares the root and its children: keep at least one level below the root.")
        return
    key = (name, info.key, tuple(tree.levels), trials, seed, max_size)
    if st.session_state.get("wu.ran") != key and not st.button("Run it", type="primary", key="wu_run"):
        st.info("Runs on request (seconds to a minute, depending on the data and the trials).")
        return
    with st.spinner(f"Running {name} with {trials} trial(s)…"):
        markdown, figures = engine.guard(_wu_run, name, (*info.key, tuple(tree.levels)), trials, seed, max_size, tree)
    st.session_state["wu.ran"] = key
    import plotly.io as pio

    for k, spec in figures.items():
        st.plotly_chart(pio.from_json(spec), theme="streamlit", key=f"wu_fig_{k}")
    with st.expander("The tables", expanded=False):
        st.markdown(markdown)


for tab, body in ((tab_sweep, sweep_tab), (tab_tables, tables), (tab_select, selection_tab), (tab_wu, wu_tab)):
    if tab.open:
        with tab:
            body()
