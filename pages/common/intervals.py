"""Explore's "Intervals (publishable)" tab: bounds on a node's histogram from the release alone, no ε.

Unlike every other figure of the node view, nothing here reads the true data: the frame is
:meth:`cocoviz.Release.intervals`, computed from the release's noisy measurements and public facts.
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

import cocoviz
from cocoviz import plots
from cocoviz.accuracy.intervals.reading import interval_sentences
from cocoviz.accuracy.intervals.scope import accuracy_frame, node_confidence
from cocoviz.hierarchy import node_label
from cocoviz.plots.intervals import shown_sizes
from pages.common import state

CONFIDENCES = (0.8, 0.9, 0.95, 0.99)
SCOPES = ("node", "level")
PUBLISHABLE = (
    "**Publishable** — computed from the release alone (its noisy measurements and public facts): "
    "post-processing, no ε. The other tabs compare with the true data: exploration, not private."
)
UNINFORMATIVE = (
    "**Publishable, but too wide to inform** — computed from the release alone (post-processing, no ε), yet at this "
    "node they say next to nothing: {reason}. {why}"
)
WHY_HG = (
    "Hg measures each group's size with noise, not how many groups have each size, so its bounds on a size's "
    "count are as wide as the groups that could have moved there; read the stated errors below instead."
)
WHY_OTHER = "A larger ε at this level, or a smaller public K, narrows them."


def _file_stem(node: tuple, scope: str) -> str:
    label = re.sub(r"[^A-Za-z0-9]+", "-", node_label(node)).strip("-").lower() or "root"
    return f"intervals-{label}" if scope == "node" else f"intervals-level-of-{label}"


def level_bounds(release: cocoviz.Release, level: int, confidence: float) -> pd.DataFrame:
    """Every node's bounds at ``level``, built so that they all hold at once with probability ≥ ``confidence``
    (:func:`cocoviz.accuracy.intervals.scope.accuracy_frame` with ``scope="level"``, that level's rows);
    ``attrs`` say what the confidence holds for (:func:`cocoviz.plots.holds_for`)."""
    whole = accuracy_frame(release, confidence, scope="level")
    frame = whole[whole["level"] == level].reset_index(drop=True)
    frame.attrs = {
        "confidence": confidence,
        "scope": "level",
        "level": level,
        "level_nodes": len(release.nodes(level)),
        "node_confidence": whole.attrs["node_confidence"].get(level),
        "note": whole.attrs["note"],
    }
    return frame


def level_files(release: cocoviz.Release, level: int, confidence: float) -> tuple[bytes, bytes]:
    """:func:`level_bounds` as CSV and Parquet bytes (:func:`cocoviz.plots.interval_files`)."""
    return plots.interval_files(level_bounds(release, level, confidence))


def interval_downloads(release: cocoviz.Release, node: tuple, confidence: float, frame) -> None:
    """The bounds as CSV and Parquet: this node's (its confidence for it alone), or every node of its level's
    (the confidence for all of them at once); the caption and the files' ``holds_for`` column say which."""
    level, _ = release.shape.locate(node)
    nodes = len(release.nodes(level))
    scope = (
        st.segmented_control(
            "Download the bounds of",
            SCOPES,
            **state.bind("intervals.scope", "node", valid=lambda v: v in SCOPES),
            format_func=lambda v: "this node" if v == "node" else f"every node of its level ({nodes:,})",
            help="This node: its bounds hold together with the chosen confidence, for this node alone. "
            "Every node of its level: each node's band is widened so that all the level's bounds hold at once.",
        )
        or "node"
    )
    stem = _file_stem(node, scope)
    if scope == "node":
        csv, parquet = plots.interval_files(frame, {"node": node_label(node)})
        st.caption(
            f"The files hold **{node_label(node)}**'s bounds at {confidence:.0%}, for **this node alone**: "
            f"over the {nodes:,} nodes of level {level}, some fail together far more often."
        )
    else:
        per_node = node_confidence(confidence, "level", nodes)
        which = f"all {nodes:,} nodes" if nodes > 1 else "the one node"
        st.caption(
            f"The files hold the bounds of **{which} of level {level}**, holding **at once** with "
            f"≥ {confidence:.0%} (each node's band at {per_node:.3%}; the nodes' noises are independent). "
            "Built when you click: a large level takes a moment."
        )

        def csv() -> bytes:
            return level_files(release, level, confidence)[0]

        def parquet() -> bytes:
            return level_files(release, level, confidence)[1]

    a, b = st.columns(2)
    a.download_button("Bounds (CSV)", csv, f"{stem}.csv", "text/csv", key="intervals.csv", icon=":material/download:")
    b.download_button(
        "Bounds (Parquet)",
        parquet,
        f"{stem}.parquet",
        "application/vnd.apache.parquet",
        key="intervals.parquet",
        icon=":material/download:",
    )


def intervals_tab(info, release: cocoviz.Release, node: tuple) -> None:
    """The node's simultaneous bounds: the private histogram with error bars, its cumulative band, plain words."""
    a, b, c = st.columns([2, 2, 1])
    confidence = a.select_slider(
        "Confidence",
        CONFIDENCES,
        **state.bind("intervals.confidence", 0.9, valid=lambda v: v in CONFIDENCES),
        format_func=lambda v: f"{v:.0%}",
        help="All the bounds below hold together with at least this probability (over every size of the node at once).",
    )
    view = (
        b.segmented_control(
            "View",
            ["H", "cumulative"],
            **state.bind("intervals.view", "H"),
            format_func=lambda v: "H with error bars" if v == "H" else "Hc inside its band",
        )
        or "H"
    )
    try:
        frame = release.intervals(node, confidence)
    except cocoviz.CocovizError as exc:
        st.info(f"No intervals for {node_label(node)}: {exc}", icon=":material/info:")
        stated_errors(release, node)
        return
    # Sizes into the thousands read best on a log axis, as on the histogram tab (read from the bounds' frame).
    long_tail = plots.largest_released_size(frame) > plots.BAR_LIMIT
    log_x = c.toggle("log x", **state.bind(f"intervals.logx.{info.label}", long_tail))
    reason = plots.uninformative_reason(frame)
    if reason is None:
        st.success(PUBLISHABLE, icon=":material/verified:")
    else:
        why = WHY_HG if frame.attrs.get("method") == "Hg" else WHY_OTHER
        if release.plan.rhos is not None:  # a zCDP plan spends ρ per level
            why = why.replace("ε", "ρ")
        st.warning(UNINFORMATIVE.format(reason=reason, why=why), icon=":material/unfold_more:")
    st.plotly_chart(
        plots.intervals_figure(
            frame, view=view, log_x=log_x, title=f"{node_label(node)}: released, with {confidence:.0%} bounds"
        ),
        theme="streamlit",
        key="intervals_fig",
    )
    st.markdown("\n".join(f"- {line}" for line in interval_sentences(frame)))
    st.caption(frame.attrs["note"])
    st.dataframe(plots.interval_table(frame.iloc[: shown_sizes(frame)]), hide_index=True, width="stretch")
    interval_downloads(release, node, confidence, frame)
    stated_errors(release, node)


def stated_errors(release: cocoviz.Release, node: tuple) -> None:
    """The stated standard error of a group's size per released size (:meth:`cocoviz.Release.stated_errors`)."""
    try:
        errors = release.stated_errors(node)
    except cocoviz.CocovizError as exc:
        st.info(f"No stated errors for {node_label(node)}: {exc}", icon=":material/info:")
        return
    st.markdown(f"**Stated standard error per size**, {node_label(node)}")
    st.dataframe(plots.stated_error_table(errors), hide_index=True, width="stretch")
    st.download_button(
        "Stated errors (CSV)",
        errors.assign(node=node_label(node)).to_csv(index=False).encode(),
        f"{_file_stem(node, 'node').replace('intervals', 'stated-errors')}.csv",
        "text/csv",
        key="intervals.stated_csv",
        icon=":material/download:",
    )
    level, _ = release.shape.locate(node)
    upper = release.plan.consistency != "none" and level < release.shape.depth
    st.caption(plots.stated_error_caption(upper))
