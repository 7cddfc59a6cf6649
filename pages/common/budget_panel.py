"""Explore's budget table as the page shows it: every column fits beside the sidebar at 1440 px, the neighbour
relation last (its short name in the table, its whole sentence below it)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

#: The budget table's noise column in words: Laplace on integers is the double-geometric law.
NOISE_NAMES = {"laplace": "double-geometric (discrete Laplace)", "gaussian": "discrete Gaussian"}


#: The budget table's columns: narrow numbers, so that every column (the neighbour relation last) fits the
#: main area at 1440 px beside the sidebar with no horizontal scroll.
BUDGET_COLUMNS = {
    "level": st.column_config.TextColumn("level", width=110, help="The level's number (root 0) and name."),
    "quantity": st.column_config.TextColumn("quantity", width=105),
    "nodes": st.column_config.NumberColumn("nodes", width=60),
    "cells": st.column_config.NumberColumn("noised cells", format="%d", width=100),
    "sensitivity": st.column_config.TextColumn(
        "Δ (norm)", width=70, help="Sensitivity of the measurement and its norm (L1 for ε, L2 for ρ)."
    ),
    "rho": st.column_config.NumberColumn("ρ", format="%g", width=60),
    "epsilon": st.column_config.NumberColumn("ε", format="%g", width=60),
    "scale": st.column_config.NumberColumn("scale", format="%.3g", width=65, help="The noise scale Δ/ε (or σ)."),
    "noise": st.column_config.TextColumn("noise", width=220),
    "relation": st.column_config.TextColumn(
        "neighbour relation", width=140, help="Which datasets count as neighbours (whole sentence below the table)."
    ),
}


def budget_table(summary: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """The budget summary as the page shows it: the level as "number name", Δ with its norm, the noise law's
    name in words, and no column that is empty throughout (ε under zCDP).

    Examples
    --------
    >>> summary = pd.DataFrame({"level": pd.array([0, None], "Int64"), "sensitivity": [1.0, 1.0],
    ...                         "norm": ["L1", "L1"], "rho": [None, None], "noise": ["laplace", "laplace"]})
    >>> budget_table(summary, ["root"]).to_dict("list")  # doctest: +NORMALIZE_WHITESPACE
    {'level': ['0 root', 'whole data'], 'sensitivity': ['1 (L1)', '1 (L1)'],
     'noise': ['double-geometric (discrete Laplace)', 'double-geometric (discrete Laplace)']}
    """
    table = summary.copy()
    if table.empty:
        return table
    table["level"] = [f"{int(k)} {names[int(k)]}" if pd.notna(k) else "whole data" for k in table["level"]]
    if "sensitivity" in table:
        norms = table["norm"] if "norm" in table else pd.Series("", index=table.index)
        table["sensitivity"] = [f"{d:g} ({n})" if n else f"{d:g}" for d, n in zip(table["sensitivity"], norms)]
        table = table.drop(columns=["norm"], errors="ignore")
    if "noise" in table:  # the law's name as the rest of the page says it (integers: double-geometric)
        table["noise"] = table["noise"].map(NOISE_NAMES).fillna(table["noise"])
    return table.dropna(axis="columns", how="all")


def relation_sentences(summary: pd.DataFrame) -> list[str]:
    """The budget table's neighbour relations, each once, as whole sentences ("persons: one person added …")."""
    if "relation" not in summary:
        return []
    return [str(r) for r in dict.fromkeys(summary["relation"].dropna())]
