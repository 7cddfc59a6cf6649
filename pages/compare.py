"""Compare two releases of the loaded data: two settings, or two saved release files."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import cocoviz
from cocoviz import plots
from cocoviz.evaluate.against_truth import level_summary
from cocoviz.evaluate.compare import release_differences, same_nodes
from cocoviz.experiments import findings
from cocoviz.hierarchy import node_label
from cocoviz.plots.compare import error_against_error_figure
from pages.common import calibration, controls, data, engine, picker, progress, state
from pages.common.help import HELP
from pages.common.numbers import any_refused, stop_if_refused

st.title("Compare two releases")
st.caption(
    "Two releases of the same data side by side: two settings computed here (fast sampler, exploration only), "
    "or two release files saved from Explore. Their difference is between public outputs and costs no ε; "
    "their errors are measured against the true data — for you, the data holder."
)

tree, info, _full = controls.dataset_panel()
max_size, _ = controls.k_control(tree, info)
seed = controls.seed_control()
stop_if_refused(max_size, seed)
names = controls.level_names(tree, info)
n_levels = tree.depth + 1
data_key = (*info.key, tuple(tree.levels))
candidates = findings.method_candidates(n_levels)
SOURCES = {"settings": "two settings on this data", "files": "two saved release files"}
source = (
    st.segmented_control("Releases", list(SOURCES), format_func=SOURCES.get, **state.bind("compare.source", "settings"))
    or "settings"
)


def settings_release(side: str, column, default: str) -> cocoviz.Release | None:
    """One side's settings (ε per level, candidate) and its release, or None when a number is refused."""
    column.markdown(f"**Release {side}**")
    split = column.toggle("A different ε at each level", **state.bind(f"compare.split.{side}", False))
    if split:
        boxes = [
            controls.epsilon_box(column, f"ε at {names[k]}", f"compare.eps.{side}.{k}", 1.0, help=HELP["epsilon"])
            for k in range(n_levels)
        ]
    else:
        boxes = [controls.epsilon_box(column, "ε per level", f"compare.eps.{side}", 1.0, help=HELP["epsilon"])]
    pick = column.selectbox(
        "Methods",
        list(candidates),
        help=HELP["method"],
        **state.bind(f"compare.series.{side}.{n_levels}", default, valid=candidates.__contains__),
    )
    if any_refused(*boxes):
        return None
    series = candidates[pick]
    epsilons = tuple(float(e) for e in boxes) if split else (float(boxes[0]),) * n_levels
    params = engine.Params.of(
        epsilons=epsilons,
        methods=series.methods,
        p=(None,) * n_levels,
        max_size=int(max_size),
        consistency=series.consistency,
        merge=series.merge,
        seed=int(seed),
    )
    if engine.is_cached(data_key, params):
        return engine.estimate(data_key, tree, params).release
    seconds = calibration.gate_seconds(engine.estimated_seconds(engine.plan(tree, params)), "release")
    with column, progress.recomputing(f"Computing release {side}", seconds):
        return engine.estimate(data_key, tree, params).release


def file_release(side: str, column) -> cocoviz.Release | None:
    file = column.file_uploader(
        f"Release {side}: a release file saved from Explore", type=["parquet"], key=f"cmp.{side}"
    )
    if file is None:
        return None
    return engine.guard(data.release_from_bytes, file.getvalue(), file.name)


left, right = st.columns(2)
if source == "settings":
    first, second = list(candidates)[0], findings.BOTTOM_UP_HC
    a, b = settings_release("A", left, first), settings_release("B", right, second)
else:
    a, b = file_release("A", left), file_release("B", right)
if a is None or b is None:
    st.info("Choose both releases to compare them.")
    st.stop()
shape_ok = same_nodes(a, b) and a.plan.shape.node_codes.same(tree.node_codes)  # arrays: no tuple per node
if not shape_ok:
    st.error(
        "These releases do not cover the nodes of the loaded data and levels: load the data they were made "
        "from, with the same levels, in the sidebar.",
        icon=":material/error:",
    )
    st.stop()

diff = engine.guard(release_differences, a, b)
errors_a, errors_b = (
    engine.guard(cocoviz.evaluate, tree, a),
    engine.guard(cocoviz.evaluate, tree, b),
)
c1, c2, c3 = st.columns(3)
c1.metric("ε spent by A", f"{a.budget.total:g}")
c2.metric("ε spent by B", f"{b.budget.total:g}")
c3.metric("Nodes that differ", f"{int((diff['emd_between'] > 0).sum()):,} of {len(diff):,}")

st.subheader("Per level")
la, lb = level_summary(errors_a), level_summary(errors_b)
between = diff.groupby("level")["emd_between"].mean()
table = pd.DataFrame(
    {
        "level": [f"{k}: {names[k]}" for k in range(n_levels)],
        "mean emd A (vs truth)": la["mean_emd"].to_numpy(),
        "mean emd B (vs truth)": lb["mean_emd"].to_numpy(),
        "mean emd between A and B": between.reindex(range(n_levels)).to_numpy(),
    }
)
st.dataframe(
    table,
    hide_index=True,
    width="stretch",
    column_config={c: st.column_config.NumberColumn(format="%.1f") for c in table.columns[1:]},
)
st.caption(controls.TRUTH_LABEL)

st.subheader("Per node: error against error")
merged = errors_a[["level", "node", "emd"]].rename(columns={"emd": "emd_a"})
merged["emd_b"] = errors_b["emd"].to_numpy()
# A level of millions of nodes is drawn as its percentiles, and the table lists the nodes that differ most.
st.plotly_chart(
    error_against_error_figure(merged, level_names=names, max_points=picker.LIST_LIMIT),
    theme="streamlit",
    key="cmp_scatter",
)
with st.expander("Every node (largest difference between A and B first)"):
    nodes = diff.merge(merged, on=["level", "node"]).sort_values("emd_between", ascending=False)
    if len(nodes) > picker.LIST_LIMIT:
        st.caption(f"The {picker.LIST_LIMIT:,} nodes that differ most, of {len(nodes):,}.")
    st.dataframe(nodes.head(picker.LIST_LIMIT), hide_index=True, width="stretch")

st.subheader("One node, histograms side by side")
node = picker.node_picker(tree, info.label)
h_a, h_b = a.histogram(node), b.histogram(node)
long_tail = max(len(h_a), len(h_b)) > plots.BAR_LIMIT  # sizes into the thousands read best on log axes
lx, ly = st.columns(2)
log_x = lx.toggle("log x", **state.bind(f"compare.logx.{info.label}", long_tail))
log_y = ly.toggle("log y", **state.bind(f"compare.logy.{info.label}", long_tail))
st.plotly_chart(
    plots.histogram_figure(
        h_a, h_b, layout="side", names=("A", "B"), title=f"{node_label(node)}: A and B", log_x=log_x, log_y=log_y
    ),
    theme="streamlit",
    key="cmp_hist",
)
