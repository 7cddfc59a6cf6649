"""Size × tenure: one region's joint table of household size and tenure, from two released margins and a prior."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from cocoviz.core.shape import Shape
from cocoviz.datasets.tenure import previous_census_tenure, tenure_table
from cocoviz.experiments.tao_joint import E7_MAX_SIZE
from cocoviz.hierarchy import Hierarchy, node_label
from cocoviz.joint import class_labels, estimate_joints, evaluate_joint, prior_tables, true_tables
from cocoviz.plots import budget_figure
from cocoviz.plots import joint as joint_plots
from cocoviz.privacy.accounting import DEFAULT_DELTA
from pages.common import controls, data, picker, privacy_terms, state
from pages.common.engine import guard
from pages.common.numbers import stop_if_refused

#: Tenure exists on the housing stand-in only; its West Coast cut keeps the page quick.
DATASET = "housing-west"
NO_PRIOR = "independent margins (no prior)"
PRIOR_NAMES = ("previous census", "uniform", NO_PRIOR)
HELP = {
    "size_eps": "ε of every level for the household sizes (Hc, top-down): the size margin of every region.",
    "tenure_eps": (
        "ε of every level for the tenure margin: owners per region, noise of scale 1/ε (Δ = 1 when one household's "
        "tenure may change; Δ = 0 under one person added or removed, see the budget notes)."
    ),
    "size_rho": "ρ (zCDP) of every level for the household sizes: discrete Gaussian noise with σ² = Δ₂²/(2ρ).",
    "tenure_rho": (
        "ρ (zCDP) of every level for the tenure margin: owners per region, discrete Gaussian noise with "
        "σ² = 1/(2ρ) (Δ₂ = 1 when one household's tenure may change)."
    ),
    "prior": (
        "The public table IDE starts from. **previous census**: another draw of the generator, households a little "
        "larger and more owners, each county's lean kept. **uniform**: gives the same table as **no prior** (the "
        "product of the two margins). A prior costs no ε and can only shape the owner rate by size: both margins "
        "come from the measurements."
    ),
    "consistency": "top-down: owners add up from counties to states to the root; none: each region on its own.",
}


@st.cache_resource(show_spinner="Drawing tenure…", max_entries=2)
def _tenure(name: str, _tree: Hierarchy) -> pd.DataFrame:
    return tenure_table(_tree, seed=0)


@st.cache_resource(show_spinner="Drawing the previous census…", max_entries=2)
def _previous(name: str, _shape: Shape) -> dict:
    return prior_tables(previous_census_tenure(name), _shape)


@st.cache_resource(show_spinner="Releasing and fitting the tables…", max_entries=8)
def _compute(
    name: str, zcdp: bool, size_spend: float, tenure_spend: float, consistency: str, seed: int, _tree, _table, _priors
):
    """The joint tables of every prior; ``size_spend`` and ``tenure_spend`` are ε per level, or ρ under ``zcdp``."""
    n = _tree.depth + 1
    sizes, tenure = [size_spend] * n, [tenure_spend] * n
    budgets = (
        dict(size_rhos=sizes, tenure_rhos=tenure, delta=DEFAULT_DELTA)
        if zcdp
        else dict(size_epsilons=sizes, tenure_epsilons=tenure)
    )
    release, noisy, joints = estimate_joints(
        _tree,
        _table,
        _priors,
        **budgets,
        max_size=E7_MAX_SIZE,
        consistency=consistency,
        seed=seed,
    )
    errors = pd.concat([evaluate_joint(_table, j).assign(config=k) for k, j in joints.items()], ignore_index=True)
    return release, joints, errors


def sidebar() -> tuple[bool, float, float, str, str, int]:
    sb = st.sidebar
    sb.header("Size × tenure")
    sb.caption(f"Data: **{DATASET}** with tenure drawn per household (cocoviz.datasets.tenure; seed 0).")
    zcdp = controls.accounting_control(sb) == "zCDP"
    if zcdp:  # ε = 1 and 0.5 as ρ = ε²/2
        size_spend = controls.rho_box(
            sb, "ρ per level, sizes", "joint.size_rho", 0.5, name="ρ of the sizes", help=HELP["size_rho"]
        )
        tenure_spend = controls.rho_box(
            sb, "ρ per level, tenure margin", "joint.ten_rho", 0.125, name="ρ of the tenure margin",
            help=HELP["tenure_rho"],
        )  # fmt: skip
    else:
        size_spend = controls.epsilon_box(
            sb, "ε per level, sizes", "joint.size_eps", 1.0, name="ε of the sizes", help=HELP["size_eps"]
        )
        tenure_spend = controls.epsilon_box(
            sb, "ε per level, tenure margin", "joint.ten_eps", 0.5, name="ε of the tenure margin",
            help=HELP["tenure_eps"],
        )  # fmt: skip
    prior = sb.selectbox(
        "Prior",
        PRIOR_NAMES,
        help=HELP["prior"],
        **state.bind("joint.prior", PRIOR_NAMES[0], valid=PRIOR_NAMES.__contains__),
    )
    consistency = sb.radio(
        "Tenure margin",
        ["top-down", "none"],
        help=HELP["consistency"],
        horizontal=True,
        **state.bind("joint.cons", "top-down"),
    )
    seed = controls.seed_control()
    stop_if_refused(size_spend, tenure_spend, seed)
    return zcdp, size_spend, tenure_spend, prior, consistency, seed


def main() -> None:
    st.title("Size × tenure")
    zcdp, size_spend, tenure_spend, prior, consistency, seed = sidebar()
    st.caption(
        "Per region, the table of household size × tenure (owner / renter) estimated from the released, consistent "
        f"size histogram, a noisy count of owners per region (its own {'ρ' if zcdp else 'ε'}) and a public prior, "
        "combined by IDE (Tao, Bater & Machanavajjhala). Both margins are kept exactly; a prior can only shape how "
        "ownership varies with size."
    )
    tree = guard(data.load_bundled, DATASET)
    card = data.data_card(DATASET)
    info = data.DataInfo(
        ("bundled", DATASET), DATASET, True, data.public_bound(card), card, identity=data.bundled_identity(DATASET)
    )
    st.markdown(controls.describe_tree(tree, info))
    shape = Shape.of(tree)
    table = _tenure(DATASET, tree)
    priors = {"previous census": _previous(DATASET, shape), "uniform": "uniform", NO_PRIOR: "independent"}
    _release, joints, errors = guard(
        _compute, DATASET, zcdp, size_spend, tenure_spend, consistency, seed, tree, table, priors
    )
    joint = joints[prior]
    names = controls.level_names(tree, info)

    path = picker.node_picker(tree, DATASET)
    truth = true_tables(table, joint)[path]
    est = joint.table(path)
    st.markdown(f"**Node:** {node_label(path)}")  # a line of its own: a metric cuts a long name short
    c1, c2, c3, c4 = st.columns(4)  # one number a metric: "23,250,675 / 23,25…" was cut short
    budget = joint.budget
    if zcdp:
        c1.metric(
            "Total ρ spent",
            f"{budget.total_rho:g}",
            help=f"zCDP, read as (ε = {budget.total:.3g}, δ = {budget.delta:g})-DP.",
        )
    else:
        c1.metric("Total ε spent", f"{budget.total:g}")
    c2.metric("Groups G (public)", f"{int(est.sum()):,}")
    c3.metric("Owners (private)", f"{int(est[:, 0].sum()):,}")
    c4.metric("Owners (true)", f"{int(truth[:, 0].sum()):,}")
    st.plotly_chart(
        joint_plots.joint_table_figure(
            est, truth, class_labels(joint.edges), title=f"{node_label(path)}: true vs private, prior: {prior}"
        ),
        theme="streamlit",
        key="joint_table",
    )
    here = errors[errors["node"] == node_label(path)]
    st.subheader("Errors of this region (against the truth: exploration, not private — for the data holder)")
    st.plotly_chart(joint_plots.joint_errors_figure(here), theme="streamlit", key="joint_errors")
    st.dataframe(here.drop(columns=["level", "node"]), hide_index=True, width="stretch")

    st.subheader("Prior against no prior, every region (E7 on one draw)")
    summary = errors.groupby(["level", "config"], sort=False, as_index=False)[
        ["joint_l1", "size_l1", "tenure_l1"]
    ].mean()
    st.plotly_chart(
        joint_plots.prior_comparison_figure(summary, names, title="mean joint L1 per region, by level"),
        theme="streamlit",
        key="joint_priors",
    )
    st.caption(
        f"One noise draw (seed {seed}, fast sampler: exploration only, not for release), shared by the priors: a "
        "paired comparison. The experiment averages many: `python -m cocoviz experiment tao-e7`."
    )

    st.subheader("Budget")
    extra = {
        f"{names[level]}: {what}": eps
        for level in range(tree.depth + 1)
        for what, eps in (("sizes", size_spend), ("tenure", tenure_spend))
    }
    unit = "ρ" if zcdp else "ε"
    st.plotly_chart(budget_figure({}, extra=extra, unit=unit), theme="streamlit", key="joint_budget")
    if zcdp:
        noise = privacy_terms.level_noise(budget, len(names))  # the two margins' σ at each level
        levels = " · ".join(f"{names[k]} ρ = {rho:g} ({noise[k]})" for k, rho in budget.per_level_rho().items())
        st.caption(
            f"zCDP, discrete Gaussian noise in both margins (ρ per level: sizes {size_spend:g}, tenure "
            f"{tenure_spend:g}): {levels} — total **ρ = {budget.total_rho:g}**, read as "
            f"(ε = {budget.epsilon_delta():.3g}, δ = {budget.delta:g})-DP."
        )
    st.dataframe(budget.summary(), hide_index=True, width="stretch")
    for note in budget.notes:
        st.caption(f"Note: {note}")
    st.caption(
        f"Sizes: Hc at every level, K = {E7_MAX_SIZE:,} (the generator's public bound on its outliers), top-down."
    )


main()
