"""Tables of the reports: number formatting, markdown, level labels, paired wins and best-of tables."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.experiments.runner import SUMMARY_COLUMNS

__all__ = [
    "markdown_table",
    "number_text",
    "plus_minus",
    "label_levels",
    "panel_labels",
    "paired_wins",
    "best_counts",
    "best_table",
]


def number_text(x: float, digits: int = 1) -> str:
    """A number for a table: ``–`` for none or NaN, no decimals from 100,000 up, else ``digits`` decimals."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if abs(x) >= 1e5:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def plus_minus(mean: float, se: float) -> str:
    """``mean ± se`` as table text (:func:`number_text`)."""
    return f"{number_text(mean)} ± {number_text(se)}"


def markdown_table(frame: pd.DataFrame) -> str:
    """A DataFrame as a GitHub markdown table (strings as they are, numbers formatted)."""
    cols = list(frame.columns)
    lines = ["| " + " | ".join(str(c) for c in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.itertuples(index=False):
        cells = [
            v
            if isinstance(v, str)
            else number_text(float(v))
            if isinstance(v, (float, np.floating))
            else f"{v:,}"
            if isinstance(v, (int, np.integer))
            else str(v)
            for v in row
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _level_label(level: int, name: str) -> str:
    """``0 (root)``, ``1 (state)``."""
    name = str(name)
    return f"{level} {name}" if name.startswith("(") else f"{level} ({name})"


def label_levels(frame: pd.DataFrame, at: int) -> None:
    """Replace ``frame``'s ``level`` and ``level_name`` columns by one ``level`` label column at ``at``."""
    frame.insert(at, "level", [_level_label(lv, n) for lv, n in zip(frame.pop("level"), frame.pop("level_name"))])


def panel_labels(summary: pd.DataFrame) -> pd.Series:
    """``level 1: state / half``: one panel per level number, naming every dataset's level there."""
    names = summary.groupby("level")["level_name"].agg(lambda s: " / ".join(dict.fromkeys(map(str, s))))
    return summary["level"].map(lambda k: f"level {k}: {names[k]}")


def paired_wins(
    summary: pd.DataFrame, column: str, better: str, worse: str, keys: Sequence[str], ignore: Sequence[str] = ()
) -> pd.DataFrame:
    """Per ``keys``: in how many cells ``better`` had the lower mean than ``worse``, and the median ratio.

    A cell is one value of every other key column (mix, ε, ...), minus ``ignore``.
    """
    index = [c for c in summary.columns if c not in (column, *ignore, *SUMMARY_COLUMNS)]
    wide = summary.pivot_table(index=index, columns=column, values="mean", aggfunc="first").reset_index()
    wide["ratio"] = wide[worse] / wide[better]
    return (
        wide.groupby(list(keys), sort=False)
        .agg(
            cells=("ratio", "size"),
            wins=("ratio", lambda r: int((r > 1).sum())),
            median_ratio=("ratio", "median"),
            min_ratio=("ratio", "min"),
            max_ratio=("ratio", "max"),
        )
        .reset_index()
    )


def best_counts(table: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Per (dataset, level): how many ε of the grid each series had the lowest mean."""
    counts = pd.crosstab([table["dataset"], table["level"]], table["best"])
    counts = counts.reindex(columns=list(order), fill_value=0)
    counts = counts.reindex(pd.MultiIndex.from_frame(table[["dataset", "level"]].drop_duplicates()))
    counts.columns.name = None
    return counts.reset_index()


def best_table(summary: pd.DataFrame, series_col: str, order: Sequence[str]) -> pd.DataFrame:
    """Rows (dataset, level, ε), a column per series with mean ± se (the lowest mean in bold), omniscient D/ε."""
    rows = []
    for (dataset, level, name, eps), part in summary.groupby(["dataset", "level", "level_name", "epsilon"], sort=False):
        part = part.set_index(series_col)
        best = part["mean"].idxmin()
        row = {"dataset": dataset, "level": _level_label(level, name), "ε/level": f"{eps:g}"}
        for s in order:
            if s in part.index:
                cell = plus_minus(part.at[s, "mean"], part.at[s, "se"])
                row[s] = f"**{cell}**" if s == best else cell
        row["omniscient D/ε"] = number_text(float(part["omniscient"].mean()))
        row["best"] = best
        rows.append(row)
    return pd.DataFrame(rows)
