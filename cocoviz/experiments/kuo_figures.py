"""The paper's figures: Figure 4 (merges), 5 (2-level mixes), 6 (3 levels, consistency) and 1 (error by size)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.errors import ParameterError
from cocoviz.experiments.by_size import run_error_by_size, summarize_error_by_size
from cocoviz.experiments.figures import sweep_figures
from cocoviz.experiments.kuo_setup import TWO_LEVEL_MIXES, Experiment, RunOptions
from cocoviz.experiments.result import ExperimentResult
from cocoviz.experiments.runner import summarize
from cocoviz.experiments.tables import best_counts, best_table, label_levels, markdown_table, paired_wins, plus_minus

__all__ = ["root_winners", "figure6_report", "figure1", "figure4", "figure5", "figure6"]


def figure4(exp: Experiment, run: RunOptions) -> ExperimentResult:
    """Kuo et al.'s Figure 4: weighted against average merging, per level, over the ε grid."""
    config = run.config(exp)
    frame = run.run_grid(
        config,
        [run.two_level_data(d) for d in config["datasets"]],
        mixes=TWO_LEVEL_MIXES,
        merges=["weighted", "average"],
    )
    summary = summarize(frame)
    wins = paired_wins(summary, "merge", "weighted", "average", ["dataset", "level", "level_name"])
    overall = paired_wins(summary, "merge", "weighted", "average", ["level", "level_name"])
    index = ["dataset", "level", "level_name", "mix", "epsilon"]
    wide = summary.pivot_table(index=index, columns="merge", values="mean", aggfunc="first").reset_index()
    wide["average / weighted"] = wide["average"] / wide["weighted"]
    ratio = wide.pivot_table(
        index=["dataset", "level", "level_name", "mix"], columns="epsilon", values="average / weighted", aggfunc="first"
    )
    ratio.columns = [f"ε={c:g}" for c in ratio.columns]
    ratio = ratio.reset_index()
    label_levels(ratio, 1)
    for t in (wins, overall):
        label_levels(t, 0)
    md = "\n\n".join(
        [
            "Cells where the weighted merge had the lower mean emd than the plain average (a cell = one mix "
            "and one ε), and the ratio average / weighted of the means (> 1: weighted is better):",
            markdown_table(overall.rename(columns={"cells": "cells", "wins": "weighted better"})),
            "By dataset:",
            markdown_table(wins.rename(columns={"wins": "weighted better"})),
            "Ratio average / weighted of the mean emd per node, by mix and ε per level:",
            markdown_table(ratio),
        ]
    )
    figures = sweep_figures(
        summary, lambda s: s["mix"] + " " + s["merge"], "Figure 4: weighted vs. plain average merge"
    )
    return ExperimentResult(exp.name, {"trials": frame, "summary": summary, "ratios": wide}, figures, md, config)


def figure5(exp: Experiment, run: RunOptions) -> ExperimentResult:
    """Kuo et al.'s Figure 5: the 2-level method mixes under top-down consistency, over the ε grid."""
    config = run.config(exp)
    frame = run.run_grid(
        config, [run.two_level_data(d) for d in config["datasets"]], mixes=TWO_LEVEL_MIXES, merges=["weighted"]
    )
    summary = summarize(frame)
    table = best_table(summary, "mix", TWO_LEVEL_MIXES)
    counts = best_counts(table, TWO_LEVEL_MIXES)
    uniform = paired_wins(
        summary[summary["mix"].isin(["Hc×Hc", "Hg×Hg"])], "mix", "Hc×Hc", "Hg×Hg", ["dataset", "level", "level_name"]
    )
    label_levels(uniform, 1)
    md = "\n\n".join(
        [
            "How often each mix had the lowest mean emd over the ε grid (top-down, weighted merge):",
            markdown_table(counts),
            "Hc against Hg at every level (Hc×Hc vs. Hg×Hg): cells (ε values) where Hc×Hc had the lower mean, "
            "and the ratio Hg×Hg / Hc×Hc of the means (> 1: Hc is better):",
            markdown_table(uniform.rename(columns={"wins": "Hc×Hc better"})),
            f"Mean emd per node ± standard error over {run.trials} trials (lowest in bold); the reference, "
            "averaged over the nodes of the level: the omniscient yardstick D/ε (D = the node's distinct group "
            "sizes; METHOD.md):",
            markdown_table(table.drop(columns="best")),
        ]
    )
    figures = sweep_figures(summary, lambda s: s["mix"], "Figure 5: 2-level top-down consistency", omniscient=True)
    return ExperimentResult(exp.name, {"trials": frame, "summary": summary}, figures, md, config)


def root_winners(summary: pd.DataFrame) -> pd.DataFrame:
    """Figure 6's winner at the root per dataset and ε: the lowest series, and Hc against Hg.

    Each method is represented by its better series (top-down or none); the
    winner is the method with the lower of those two means.
    """
    root = summary[summary["level"] == 0]
    rows = []
    for (dataset, eps), part in root.groupby(["dataset", "epsilon"], sort=False):
        means = part.set_index(part["mix"] + " " + part["consistency"])["mean"]
        hc = part.loc[part["mix"].str.startswith("Hc"), "mean"].min()
        hg = part.loc[part["mix"].str.startswith("Hg"), "mean"].min()
        rows.append(
            {
                "dataset": dataset,
                "ε/level": f"{eps:g}",
                "lowest series": means.idxmin(),
                "winner": "Hc" if hc < hg else "Hg",
                "best Hg / best Hc": hg / hc,
            }
        )
    return pd.DataFrame(rows)


def figure6(exp: Experiment, run: RunOptions) -> ExperimentResult:
    """Kuo et al.'s Figure 6: the 3-level Hc/Hg mixes, top-down and no consistency, over the ε grid."""
    config = run.config(exp)
    config["whole_country"] = run.whole_country
    frame = run.run_grid(
        config,
        [run.three_level_data(d) for d in config["datasets"]],
        mixes=["Hc", "Hg"],
        consistencies=["top-down", "none"],
        merges=["weighted"],
    )
    frames, figures, md = figure6_report(frame)
    return ExperimentResult(exp.name, frames, figures, md, config)


def figure6_report(frame: pd.DataFrame) -> tuple[dict, dict, str]:
    """Figure 6's CSV frames, figures and markdown from its sweep frame (also from a saved trials.csv)."""
    trials = int(frame["trial"].nunique())
    summary = summarize(frame)
    summary["series"] = summary["mix"] + " " + summary["consistency"]
    order = ["Hc×Hc×Hc top-down", "Hc×Hc×Hc none", "Hg×Hg×Hg top-down", "Hg×Hg×Hg none"]
    table = best_table(summary, "series", order)
    counts = best_counts(table, order)
    wins = paired_wins(
        summary.drop(columns="series"),
        "consistency",
        "top-down",
        "none",
        ["dataset", "mix", "level", "level_name"],
        ignore=("merge",),
    )
    label_levels(wins, 2)
    md = "\n\n".join(
        [
            "How often each series had the lowest mean emd over the ε grid:",
            markdown_table(counts),
            "The winner at the root for each ε: Hc or Hg, each by its better series (top-down or none); "
            "best Hg / best Hc > 1: Hc wins:",
            markdown_table(root_winners(summary)),
            "Top-down consistency against independent estimates (same noise, paired): cells where top-down "
            "had the lower mean, and the ratio none / top-down (> 1: consistency helped):",
            markdown_table(wins.rename(columns={"wins": "top-down better"})),
            f"Mean emd per node ± standard error over {trials} trials (lowest in bold); references as in figure5:",
            markdown_table(table.drop(columns="best")),
        ]
    )
    figures = sweep_figures(
        summary.drop(columns="series"),
        lambda s: s["mix"] + " " + s["consistency"],
        "Figure 6: 3 levels with and without consistency",
        omniscient=True,
    )
    return {"trials": frame, "summary": summary}, figures, md


def figure1(exp: Experiment, run: RunOptions) -> ExperimentResult:
    """Kuo et al.'s Figure 1: the emd and size-error percentiles of each method at one ε."""
    from cocoviz.plots import error_by_size_figure

    config = run.config(exp)
    eps = config["epsilons"][0]
    if len(config["epsilons"]) != 1:
        raise ParameterError("figure1 takes one ε")
    curves, per_trial = run_error_by_size(
        [run.root_data(d) for d in config["datasets"]],
        methods=("Hg", "Hc"),
        epsilon=eps,
        trials=run.trials,
        seed=run.seed,
        max_size=run.max_size,
        progress=run.progress,
        workers=run.workers,
        loader=run.loader,
        journal=run.journal,
    )
    summary = summarize_error_by_size(per_trial)
    table = pd.DataFrame(
        {
            "dataset": summary["dataset"],
            "method": summary["method"],
            "emd": [plus_minus(m, s) for m, s in zip(summary["emd"], summary["emd_se"])],
            **{
                f"{q}% of the error at sizes ≤": [
                    plus_minus(m, s) for m, s in zip(summary[f"error_p{q}_size"], summary[f"error_p{q}_size_se"])
                ]
                for q in (25, 50, 75)
            },
            "groups: median / 90th pct. / largest size": [
                f"{a:,} / {b:,} / {c:,}"
                for a, b, c in zip(summary["group_p50_size"], summary["group_p90_size"], summary["group_max_size"])
            ],
        }
    )
    md = "\n\n".join(
        [
            f"Where the root's error |Ĥc[s] − Hc[s]| lies by size s, whole ε = {eps:g} at the root: the sizes up to "
            f"which 25%, 50% and 75% of the emd has accumulated (mean ± standard error over {run.trials} trials), "
            "against the sizes of the groups themselves.",
            markdown_table(table),
        ]
    )
    figures = {}
    for dataset, part in curves.groupby("dataset", sort=False):
        errors = {}
        for method, c in part.groupby("method", sort=False):
            full = np.zeros(int(c["size"].max()) + 1, np.int64)
            # Rebuild trial 0's step curve from its change points.
            idx = np.searchsorted(c["size"].to_numpy(), np.arange(len(full)), side="right") - 1
            full[:] = c["error"].to_numpy()[idx]
            errors[method] = full
        figures[dataset] = error_by_size_figure(
            errors, log_x=True, title=f"Figure 1: error by size (trial 0, ε = {eps:g}) — {dataset}"
        )
    return ExperimentResult(exp.name, {"curves": curves, "trials": per_trial, "summary": summary}, figures, md, config)
