"""Experiment ``gauss``: double-geometric (Laplace) against discrete Gaussian noise, for Hc and Hg, per level.

For every ε of the grid (per level) and each method (all levels Hc, or all Hg), three releases of the
same 3-level data share a trial's seed:

* ``laplace`` — pure ε-DP, ε per level (the paper's setting);
* ``gauss, equal ρ`` — ρ-zCDP with ρ = ε²/2 per level: the zCDP cost of the Laplace release;
* ``gauss, equal (ε, δ)`` — ρ-zCDP with the largest ρ per level whose whole release reads as
  (L·ε, δ = 1e-10)-DP (Canonne-Kamath-Steinke's conversion), L the number of levels: the same
  (ε, δ) statement as the Laplace release.

Hc under Gaussian noise is also run with p = 1 (``gauss, equal (ε, δ), p=1``) to check the L2 default.
Each row is one trial's mean emd over a level's nodes; the summary gives the mean over trials and the
ratio of each Gaussian release to the Laplace one (below 1: the Gaussian wins).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.evaluate.against_truth import evaluate
from cocoviz.experiments.journal import NoJournal
from cocoviz.experiments.kuo_setup import Experiment, RunOptions
from cocoviz.experiments.result import ExperimentResult
from cocoviz.experiments.tables import markdown_table
from cocoviz.pipeline.estimate import estimate
from cocoviz.privacy.accounting import rho_of_epsilon, zcdp_rho

__all__ = ["GAUSS_DELTA", "NOISES", "run_gauss", "summarize_gauss", "noise_variances"]

#: The δ of the equal-(ε, δ) comparison: the 2020 Census's.
GAUSS_DELTA = 1e-10
#: The releases compared, in the order of the tables.
NOISES = ("laplace", "gauss, equal ρ", "gauss, equal (ε, δ)", "gauss, equal (ε, δ), p=1")


def _budgets(epsilon: float, levels: int) -> dict[str, dict]:
    same_eps_delta = zcdp_rho(levels * epsilon, GAUSS_DELTA) / levels
    return {
        "laplace": {"epsilons": [epsilon] * levels},
        "gauss, equal ρ": {"rhos": [rho_of_epsilon(epsilon)] * levels},
        "gauss, equal (ε, δ)": {"rhos": [same_eps_delta] * levels},
        "gauss, equal (ε, δ), p=1": {"rhos": [same_eps_delta] * levels, "p": 1},
    }


def noise_variances(epsilon: float, levels: int, delta: float = GAUSS_DELTA) -> pd.DataFrame:
    """Per-cell noise of a query with Δ₁ = Δ₂ = 1 under the three budgets of :func:`run_gauss` (without running
    anything): the ε or ρ per level, the noise's standard deviation and its variance relative to Laplace's.

    >>> noise_variances(1.0, 2)["relative variance"].round(2).tolist()
    [1.0, 0.54, 10.86]
    """
    from cocoviz.privacy.budget import double_geometric_variance
    from cocoviz.privacy.noise import discrete_gaussian_variance

    budgets = _budgets(epsilon, levels)
    laplace = double_geometric_variance(1 / epsilon)
    rows = [{"noise": "laplace", "per level": f"ε = {epsilon:g}", "std": laplace**0.5, "relative variance": 1.0}]
    for noise in NOISES[1:3]:
        rho = budgets[noise]["rhos"][0]
        variance = discrete_gaussian_variance(1 / (2 * rho))
        rows.append(
            {
                "noise": noise,
                "per level": f"ρ = {rho:.3g}",
                "std": variance**0.5,
                "relative variance": variance / laplace,
            }
        )
    return pd.DataFrame(rows)


def run_gauss(
    tree, *, epsilons, trials: int, seed: int, max_size: int, dataset: str = "data", journal=None
) -> pd.DataFrame:
    """One row per (method, ε, noise, trial, level): the level's mean emd over its nodes and ρ per level
    (the Laplace release's in zCDP terms, ε²/2).

    ``journal`` (from :meth:`RunOptions.journal_for`) records every (method, ε, noise) as it finishes, so a
    killed run resumes with the same frame.
    """
    levels = tree.depth + 1
    journal = NoJournal() if journal is None else journal
    frames = []
    for method in ("Hc", "Hg"):
        for eps in epsilons:
            for noise, budget in _budgets(eps, levels).items():
                if noise.endswith("p=1") and method != "Hc":
                    continue

                def step(method=method, eps=eps, noise=noise, budget=budget) -> pd.DataFrame:
                    rows = []
                    for trial in range(trials):
                        release = estimate(
                            tree, methods=[method] * levels, max_size=max_size, seed=(seed, trial), **budget
                        )
                        per_level = evaluate(tree, release).groupby("level")["emd"].mean()
                        for level, emd in per_level.items():
                            rows.append(
                                {
                                    "dataset": dataset,
                                    "method": method,
                                    "epsilon": eps,
                                    "noise": noise,
                                    "rho": budget["rhos"][0] if "rhos" in budget else rho_of_epsilon(eps),
                                    "trial": trial,
                                    "level": int(level),
                                    "emd": float(emd),
                                }
                            )
                    return pd.DataFrame(rows)

                frames.append(journal.resumable(len(frames), step))  # a killed run resumes here
    return pd.concat(frames, ignore_index=True)


def summarize_gauss(frame: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, method, ε and level: the mean emd of each release and each Gaussian's ratio to Laplace."""
    means = frame.groupby(["dataset", "method", "epsilon", "level", "noise"], sort=False)["emd"].mean().unstack("noise")
    out = means.reset_index()
    for noise in NOISES[1:]:
        if noise in out:
            out[f"ratio {noise}"] = out[noise] / out["laplace"]
    return out


def crossings(epsilons, ratios) -> list[float]:
    """The ε where the ratio crosses 1 between neighbouring grid points (ratio − 1 linear in log ε there).

    Undefined ratios (0/0: both releases exact) are skipped.

    >>> [round(c, 3) for c in crossings([0.1, 1.0, 4.0], [0.5, 1.5, 3.0])]
    [0.316]
    >>> crossings([0.1, 1.0, 4.0], [2.0, float("nan"), 3.0])
    []
    """
    e, d = np.log(np.asarray(epsilons, np.float64)), np.asarray(ratios, np.float64) - 1
    keep = np.isfinite(d)
    e, d = e[keep], d[keep]
    out = []
    for k in range(len(e) - 1):
        if d[k] * d[k + 1] < 0:
            out.append(float(np.exp(e[k] + (e[k + 1] - e[k]) * d[k] / (d[k] - d[k + 1]))))
    return out


def winners(summary: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, method, level and comparison: at which ε the Gaussian wins (ratio < 1), and where it crosses."""
    rows = []
    for (dataset, method, level), part in summary.groupby(["dataset", "method", "level"], sort=False):
        part = part.sort_values("epsilon")
        for noise in ("gauss, equal ρ", "gauss, equal (ε, δ)"):
            wins = part.loc[part[f"ratio {noise}"] < 1, "epsilon"].tolist()
            cross = crossings(part["epsilon"], part[f"ratio {noise}"])
            rows.append(
                {
                    "dataset": dataset,
                    "method": method,
                    "level": level,
                    "comparison": noise,
                    "gaussian wins at ε": ", ".join(f"{e:g}" for e in wins) or "none",
                    "ratio range": f"{part[f'ratio {noise}'].min():.2f}–{part[f'ratio {noise}'].max():.2f}",
                    "crossing ε": ", ".join(f"{c:.2g}" for c in cross) or "none",
                }
            )
    return pd.DataFrame(rows)


def _figures(summary: pd.DataFrame) -> dict[str, object]:
    """Per dataset: each Gaussian release's emd ratio to the Laplace one against ε, a line per method and level."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    figures = {}
    comparisons = ("gauss, equal ρ", "gauss, equal (ε, δ)")
    for dataset, part in summary.groupby("dataset", sort=False):
        fig = make_subplots(rows=1, cols=2, subplot_titles=comparisons)
        for col, noise in enumerate(comparisons, start=1):
            for (method, level), series in part.groupby(["method", "level"], sort=False):
                fig.add_trace(
                    go.Scatter(
                        x=series["epsilon"],
                        y=series[f"ratio {noise}"],
                        name=f"{method}, level {level}",
                        legendgroup=f"{method}{level}",
                        showlegend=col == 1,
                        mode="lines+markers",
                    ),
                    row=1,
                    col=col,
                )
        fig.update_xaxes(type="log", title_text="ε per level")
        fig.update_yaxes(type="log", title_text="emd ratio, Gaussian / Laplace (below 1: Gaussian wins)")
        fig.update_layout(title=f"gauss: Laplace against discrete Gaussian — {dataset}", height=450)
        figures[dataset] = fig
    return figures


def _gauss(exp: Experiment, run: RunOptions) -> ExperimentResult:
    config = run.config(exp)
    config["delta"] = GAUSS_DELTA
    frames = []
    level_counts = {}
    for name in config["datasets"]:
        tree = run.three_level_data(name).load(run.loader)
        level_counts[name] = tree.depth + 1
        frames.append(
            run_gauss(
                tree,
                epsilons=config["epsilons"],
                trials=run.trials,
                seed=run.seed,
                max_size=config["max_size"],
                dataset=name,
                journal=run.journal_for(exp.name, config, name, tree),
            )
        )
    frame = pd.concat(frames, ignore_index=True)
    summary = summarize_gauss(frame)
    table = summary.copy()
    for column in table.columns:
        if column.startswith("ratio"):
            table[column] = [f"{x:.2f}" for x in table[column]]
        elif column in NOISES:
            table[column] = [f"{x:,.1f}" for x in table[column]]
    levels = ", ".join(f"{name}: {n}" for name, n in level_counts.items())
    md = "\n\n".join(
        [
            f"Levels (root included) {levels}; all Hc or all Hg, {run.trials} trials per cell, mean emd per node "
            f"of each level. ε is per level; 'equal ρ' spends ρ = ε²/2 per level, 'equal (ε, δ)' the largest ρ per "
            f"level whose release of L levels reads as (L·ε, δ = {GAUSS_DELTA:g})-DP. Ratios below 1: the discrete "
            "Gaussian wins.",
            markdown_table(table),
            "Where the Gaussian wins:",
            markdown_table(winners(summary)),
        ]
    )
    return ExperimentResult(exp.name, {"trials": frame, "summary": summary}, _figures(summary), md, config)


#: The registered experiment (see :data:`cocoviz.experiments.EXPERIMENTS`).
GAUSS = Experiment(
    "gauss",
    "gauss: Laplace against discrete Gaussian noise for Hc and Hg, at equal ρ and at equal (ε, δ = 1e-10), per level",
    "Hc and Hg have L2 sensitivity 1: at equal ρ the Gaussian should win; at equal (ε, δ = 1e-10) "
    "the Laplace should win at small ε",
    ("housing", "white", "hawaiian", "taxi"),
    (0.1, 0.5, 1.0, 4.0),
    _gauss,
    more_datasets=("housing-us-tracts",),
)
