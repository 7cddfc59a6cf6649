"""Explore's per-level views for any number of nodes: how each level's nodes spread, and a node's children
listed one by one up to :data:`pages.common.picker.LIST_LIMIT`, summarised beyond it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from cocoviz import plots
from cocoviz.hierarchy import node_label
from cocoviz.plots.summaries import MEASURES, QUANTILES
from pages.common import picker, state


def _quantile_table(table: pd.DataFrame, names: list[str]) -> None:
    shown = table.copy()
    shown.insert(1, "level name", [names[int(k)] for k in shown["level"]])
    shown["measure"] = shown["measure"].map(MEASURES)
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        column_config={q: st.column_config.NumberColumn(format="%.3g") for q in ("mean", *QUANTILES)},
    )


@st.cache_data(show_spinner=False, max_entries=48)
def _level_table(key: tuple, _figures: pd.DataFrame) -> pd.DataFrame:
    return plots.level_quantiles(_figures, list(MEASURES))


def spread_section(figures: pd.DataFrame, names: list[str], key: tuple) -> None:
    """How the nodes of each level spread: quantiles, whatever the number of nodes (a level of millions is
    never drawn node by node).  ``key`` (the data's key and the release's parameters) keeps the quantiles of
    a fast release for the next rerun; a secure release's are this session's own, never kept."""
    st.markdown("**How the nodes of each level spread**")
    a, b = st.columns([4, 1])
    measure = (
        a.segmented_control("Figure", list(MEASURES), format_func=MEASURES.get, **state.bind("levels.measure", "emd"))
        or "emd"
    )
    log_y = b.toggle("log y", **state.bind("levels.logy", True))
    secure = key[1].secure
    table = plots.level_quantiles(figures, list(MEASURES)) if secure else _level_table(key, figures)
    st.plotly_chart(
        plots.spread_figure(table, measure, level_names=names, log_y=log_y), theme="streamlit", key="spread_fig"
    )
    st.caption(
        "Each box holds the middle half of the level's nodes (p25 to p75), the line inside is the median, the "
        "whiskers reach from the smallest node to the largest. Released persons Σ j·Ĥ[j] cost no ε."
    )
    _quantile_table(table[table["measure"] == measure], names)


def children_section(tree, figures: pd.DataFrame, node, names: list[str]) -> None:
    """The children of ``node`` one row each, or, beyond :data:`picker.LIST_LIMIT` of them, their spread."""
    level, k = tree.locate(node)
    if level == tree.depth:
        return
    kids = tree.node_codes.children(level, k)
    rows = figures[figures["level"] == level + 1].iloc[kids]
    if len(kids) > picker.LIST_LIMIT:
        st.markdown(
            f"The **{len(kids):,}** children of **{node_label(node)}** are too many to list one by one "
            f"(over {picker.LIST_LIMIT:,}): how they spread"
        )
        _quantile_table(plots.level_quantiles(rows, list(MEASURES)), names)
    else:
        st.markdown(f"emd of the children of **{node_label(node)}**")
        st.dataframe(rows, hide_index=True, width="stretch")
