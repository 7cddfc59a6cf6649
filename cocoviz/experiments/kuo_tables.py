"""The paper's tables: Table 3 (naive vs. Hc vs. Hg at the root) and Table 4 (bottom-up vs. top-down)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.experiments.figures import bar_figure
from cocoviz.experiments.kuo_naive import NAIVE_CLIP, NAIVE_PROJECTION, clip_only_frame
from cocoviz.experiments.kuo_setup import Experiment, RunOptions
from cocoviz.experiments.result import ExperimentResult
from cocoviz.experiments.runner import summarize
from cocoviz.experiments.tables import label_levels, markdown_table, number_text, panel_labels, plus_minus

__all__ = ["PAPER_TABLE3", "PAPER_TABLE4", "TABLE3_METHODS", "TABLE4_METHODS", "table3", "table4", "table4_report"]


#: The paper's Table 3 (slides): mean emd at the top level, ε = 1.0: naive, Hc, Hg, on the full data.
PAPER_TABLE3 = {
    "housing": (4_462_728_374, 3_742.0, 2_219.6),
    "white": (4_809_679_734, 1_838.9, 6_115.3),
    "hawaiian": (4_027_891_692, 254.0, 516.2),
    "taxi": (208_977_518.4, 2_819.8, 11_227.6),
}


#: Table 3's rows, in order: the sweep's mix label and the label shown.
TABLE3_METHODS = {"naive": NAIVE_PROJECTION, "naive-clip": NAIVE_CLIP, "Hc": "Hc", "Hg": "Hg"}


def table3(exp: Experiment, run: RunOptions) -> ExperimentResult:
    """Kuo et al.'s Table 3: naive, Hc and Hg at the root, mean error per dataset beside the paper's."""
    config = run.config(exp)
    data = [run.root_data(d) for d in config["datasets"]]
    sweep = run.sweep(config, data, mixes=["naive", "Hc", "Hg"], consistencies=["none"])
    frame = run.run_sweep(sweep)
    # The paper's reading of naive, from the noise of each trial's exact-projection release.
    clipped = clip_only_frame(
        [d.load(run.loader) for d in data], [d.key for d in data], sweep.epsilons, run.trials, run.seed, run.max_size
    )
    frame = pd.concat([frame, clipped], ignore_index=True)
    summary = summarize(frame)
    rows = []
    for eps in sweep.epsilons:
        for mix, label in TABLE3_METHODS.items():
            part = summary[(summary["mix"] == mix) & (summary["epsilon"] == eps)].set_index("dataset")
            rows.append(
                {
                    "ε": f"{eps:g}",
                    "method": label,
                    **{d: plus_minus(part.at[d, "mean"], part.at[d, "se"]) for d in config["datasets"]},
                }
            )
    if 1.0 in sweep.epsilons:
        for k, mix in enumerate(("naive", "Hc", "Hg")):
            rows.append(
                {
                    "ε": "1",
                    "method": f"{mix} (paper, full data)",
                    **{d: number_text(PAPER_TABLE3[d][k]) for d in config["datasets"]},
                }
            )
    table = pd.DataFrame(rows)
    wide = summary.pivot_table(index=["dataset", "epsilon"], columns="mix", values="mean").reset_index()
    best = wide[["Hc", "Hg"]].min(axis=1)
    wide["naive (exact projection) / best of Hc, Hg"] = wide["naive"] / best
    wide["naive (clip only) / best of Hc, Hg"] = wide["naive-clip"] / best
    wide["naive (clip only) / paper's naive"] = [
        clip / PAPER_TABLE3[d][0] if d in PAPER_TABLE3 and e == 1.0 else np.nan
        for d, e, clip in zip(wide["dataset"], wide["epsilon"], wide["naive-clip"])
    ]
    wide["Hg / Hc"] = wide["Hg"] / wide["Hc"]
    first = summary.drop_duplicates("dataset").set_index("dataset")
    wide.insert(1, "groups G", wide["dataset"].map(first["groups"]).astype(np.int64))
    wide.insert(2, "distinct sizes D", wide["dataset"].map(first["sizes"]).astype(np.int64))
    wide["D/ε"] = wide["distinct sizes D"] / wide["epsilon"]
    wide["best of Hc, Hg / (D/ε)"] = best / wide["D/ε"]
    md = "\n\n".join(
        [
            f"Mean emd of the root (± standard error over {run.trials} trials), whole ε at the root, K = "
            f"{config['max_size']:,}. The naive estimator in two readings, from the same noisy H[0..K] in each "
            "trial: *exact projection* (ours: the L2 projection onto the histograms with G groups, then integers) "
            "and *clip only* (negative cells set to 0, the positive noise kept; the groups no longer add up to G, "
            "so it cannot be released; it is what the paper's billions match):",
            markdown_table(table),
            "Ratios of the means, and the root's number of distinct group sizes D against the best method:",
            markdown_table(
                wide[
                    [
                        "dataset",
                        "groups G",
                        "distinct sizes D",
                        "epsilon",
                        "naive (exact projection) / best of Hc, Hg",
                        "naive (clip only) / best of Hc, Hg",
                        "naive (clip only) / paper's naive",
                        "Hg / Hc",
                        "D/ε",
                        "best of Hc, Hg / (D/ε)",
                    ]
                ]
            ),
        ]
    )
    shown = summary.assign(method=summary["mix"].map(TABLE3_METHODS))
    fig = bar_figure(
        shown.drop(columns="mix"),
        x="dataset",
        series="method",
        facet=None,
        title="Table 3: naive (two readings) vs. Hc vs. Hg at the top level (log scale)",
    )
    return ExperimentResult(
        exp.name, {"trials": frame, "summary": summary, "ratios": wide}, {"table3": fig}, md, config
    )


#: Table 4's rows: the method shown for each consistency.
TABLE4_METHODS = {"bottom-up": "BU", "top-down": "Hc top-down", "none": "Hc independent (reference)"}
#: The paper's Table 4 (slides), total ε = 1.0, 3 levels: (BU, Hc top-down) per level, full data.
PAPER_TABLE4 = {
    "housing-west": ((78_459.0, 32_480.0), (1_512.2, 1_000.3), (24.9, 80.1)),
    "white-west": ((448_909.0, 17_000.0), (8_722.0, 1_511.8), (152.3, 363.8)),
    "hawaiian-west": ((13_968.0, 1_381.0), (270.1, 117.7), (4.3, 21.6)),
    "taxi": ((20_731.0, 10_547.0), (10_405.5, 5_431.5), (772.8, 1_601.8)),
}


def table4(exp: Experiment, run: RunOptions) -> ExperimentResult:
    """Kuo et al.'s Table 4: Hc on three levels, bottom-up, top-down and no consistency, at a total ε."""
    config = run.config(exp)
    config["whole_country"] = run.whole_country
    frame = run.run_grid(
        config,
        [run.three_level_data(d) for d in config["datasets"]],
        mixes=["Hc"],
        budget="total",
        consistencies=["bottom-up", "top-down", "none"],
        merges=["weighted"],
    )
    frames, figures, md = table4_report(frame)
    return ExperimentResult(exp.name, frames, figures, md, config)


def table4_report(frame: pd.DataFrame) -> tuple[dict, dict, str]:
    """Table 4's CSV frames, figures and markdown from its sweep frame (also from a saved trials.csv)."""
    trials = int(frame["trial"].nunique())
    summary = summarize(frame)
    summary["method"] = summary["consistency"].map(TABLE4_METHODS)
    datasets = list(summary["dataset"].unique())
    rows = []
    for eps in sorted(summary["total_epsilon"].unique()):
        for level in sorted(summary["level"].unique()):
            for method in TABLE4_METHODS.values():
                part = summary[
                    (summary["total_epsilon"] == eps) & (summary["level"] == level) & (summary["method"] == method)
                ].set_index("dataset")
                rows.append(
                    {
                        "total ε": f"{eps:g}",
                        "level": int(level),
                        "method": method,
                        **{
                            d: plus_minus(part.at[d, "mean"], part.at[d, "se"]) if d in part.index else "–"
                            for d in datasets
                        },
                    }
                )
            if eps == 1.0 and level < 3 and any(d in PAPER_TABLE4 for d in datasets):
                for k, method in enumerate(("BU (paper, full data)", "Hc top-down (paper, full data)")):
                    rows.append(
                        {
                            "total ε": "1",
                            "level": int(level),
                            "method": method,
                            **{
                                d: number_text(PAPER_TABLE4[d][level][k]) if d in PAPER_TABLE4 else "–"
                                for d in datasets
                            },
                        }
                    )
    table = pd.DataFrame(rows)
    wide = summary.pivot_table(
        index=["dataset", "total_epsilon", "level", "level_name"], columns="method", values="mean", aggfunc="first"
    ).reset_index()
    wide["BU / top-down"] = wide["BU"] / wide["Hc top-down"]
    wide["independent / top-down"] = wide[TABLE4_METHODS["none"]] / wide["Hc top-down"]
    label_levels(wide, 2)
    md = "\n\n".join(
        [
            "Mean emd per node ± standard error over "
            f"{trials} trials; BU = the whole budget on the leaves (Hc), parents are sums; top-down = Hc at every "
            "level with the total split evenly, weighted merge; independent = the same Hc estimates as top-down "
            "without the consistency step (not consistent; a reference):",
            markdown_table(table),
            "Ratios of the means (BU / top-down > 1: top-down is better):",
            markdown_table(wide[["dataset", "total_epsilon", "level", "BU / top-down", "independent / top-down"]]),
        ]
    )
    part = summary.copy()
    part["panel"] = panel_labels(part)
    figures = {}
    for eps in sorted(summary["total_epsilon"].unique()):
        figures[f"table4-eps{eps:g}"] = bar_figure(
            part[part["total_epsilon"] == eps],
            x="dataset",
            series="method",
            facet="panel",
            title=f"Table 4: bottom-up vs. top-down Hc, total ε = {eps:g} (log scale)",
        )
    return {"trials": frame, "summary": summary.drop(columns="method"), "ratios": wide}, figures, md
