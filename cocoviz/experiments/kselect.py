"""Experiment E1 (Wu et al., under our neighbours): how the bound K is chosen, against ε.

At the root of a dataset, all-Hc releases with K chosen six ways — the
paper's public 100,000, noisy max, SVT (both with their own ε_K), Wu's two
private truncation thresholds taken as K (TruncSVT, ``trunc-svt``, and Chen and
Zhou's recursive mechanism, ``recursive``), and the true maximum as an oracle
(it reads the data: a yardstick, not a mechanism) — give per trial the emd, the
truncation error (persons lost to K alone), the noise cells (= K) and the
seconds.  Summaries carry the mean and the 5–95% band.

Wu's thresholds are written for records (one group added or removed); E1's
neighbours move one person (one group's size ± 1, the groups public).  Both
still hold there with their ε counted in full: TruncSVT's queries
``#{groups of size ≤ θ_i}`` move by at most one under a person move and its
threshold ``ρ·ñ`` reads the number of groups, which a person move leaves alone
(so the half of ε_K spent on ñ buys nothing here; it is kept to run the
mechanism as published); the recursive mechanism's index i* moves by at most
one under a person move (:mod:`cocoviz.methods.wu.recursive`).  Their K is
drawn from the root's histogram of group sizes and handed to the release as a
bound (the release measures the root's groups with those above K counted at K, as Hc with bound K does,
and is scored against the untruncated root); the release's budget is ε_K less, so ``total_epsilon`` adds
ε_K back.

The private choices run under two budgets: ε_K spent **on top** of ε (the
total is ε + ε_K: a larger budget than the public K's), and at an **equal
total** ε, with ε_K = share·ε taken out of it (the release keeps (1 − share)·ε),
so that their emd compares with the public K's at the same cost.

>>> _budgets(1.0, 0.1, (0.02, 0.1))
[('on top', 0.1, 1.0), ('equal total, ε_K = 2% of ε', 0.02, 0.98), ('equal total, ε_K = 10% of ε', 0.1, 0.9)]
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from cocoviz.evaluate.against_truth import evaluate
from cocoviz.experiments.journal import NoJournal
from cocoviz.experiments.kuo_setup import Experiment, RunOptions
from cocoviz.experiments.result import ExperimentResult
from cocoviz.experiments.tables import markdown_table, number_text
from cocoviz.pipeline.estimate import estimate
from cocoviz.plan import DEFAULT_MAX_SIZE
from cocoviz.privacy.noise import FastSampler
from cocoviz.sums import recursive_tau, trunc_svt_tau

__all__ = ["K_CHOICES", "DEFAULT_K_EPSILON", "DEFAULT_K_SHARES", "run_kselect", "kselect_experiment"]

#: How K is chosen in E1, with the estimate() options of each (the oracle's K is set per dataset).
K_CHOICES = ("public", "noisy-max", "svt", "trunc-svt", "recursive", "oracle")
#: The choices whose ε_K is spent: all but the public K and the oracle.
PRIVATE_K = ("noisy-max", "svt", "trunc-svt", "recursive")
#: The choices drawn here from the root's histogram (Wu's thresholds), not inside estimate().
DRAWN_K = ("trunc-svt", "recursive")
#: ε_K of the private choices (the issue's quick trial used 0.1).
DEFAULT_K_EPSILON = 0.1
#: Shares of the total ε taken by ε_K in the equal-total runs.
DEFAULT_K_SHARES = (0.02, 0.1)
#: The budget label of the public K and the oracle (nothing spent on K).
NO_K_BUDGET = "no ε_K"


def _budgets(eps: float, k_epsilon: float, shares) -> list[tuple[str, float, float]]:
    """A private K's budgets at release ε: (label, ε_K, ε of the release) on top and at each equal-total share."""
    out = [("on top", k_epsilon, eps)]
    for share in shares:
        out.append((f"equal total, ε_K = {share:.0%} of ε", share * eps, (1 - share) * eps))
    return out


def _options(choice: str, ceiling: int, true_max: int, k_epsilon: float) -> dict:
    if choice == "public":
        return {"max_size": ceiling}
    if choice == "oracle":
        return {"max_size": max(true_max, 1)}
    return {"max_size": ceiling, "k_select": choice, "k_epsilon": k_epsilon}


def _root_histogram(root) -> np.ndarray:
    """h[s] = the root's groups of size s."""
    sizes, counts = root.runs(0).node(0)
    h = np.zeros(int(sizes[-1]) + 1 if sizes.size else 1, np.int64)
    h[sizes] = counts
    return h


def _capped(root, h: np.ndarray, k: int):
    """The root with its groups above K counted at K: what Hc with bound K measures (the truth stays ``root``)."""
    from cocoviz.hierarchy import Hierarchy

    capped = np.bincount(np.minimum(np.arange(h.size), k), weights=h).astype(np.int64)
    sizes = np.flatnonzero(capped)
    return Hierarchy.from_counts(
        pd.DataFrame({"size": sizes, "count": capped[sizes]}), size="size", count="count", levels=[]
    )


def drawn_k(choice: str, h: np.ndarray, k_epsilon: float, ceiling: int, seed) -> int:
    """K from one of Wu's private thresholds over the root's group sizes (``h``), at ``k_epsilon``.

    >>> h = np.bincount([1] * 50 + [2] * 30 + [3] * 15 + [40] * 5)
    >>> drawn_k("trunc-svt", h, 1e6, 100, (0, 0)), drawn_k("recursive", h, 1e6, 100, (0, 0))  # i* = 11: ⌊e^2.1⌋
    (4, 8)
    """
    sampler = FastSampler((*seed, 1))  # a stream of its own, apart from the release's
    if choice == "trunc-svt":
        return max(int(trunc_svt_tau(h, k_epsilon, sampler, ceiling=ceiling).tau), 1)
    return max(int(recursive_tau(h, k_epsilon, sampler, ceiling=ceiling, neighbours="person").tau), 1)


def run_kselect(
    tree,
    *,
    epsilons,
    trials: int,
    seed: int,
    ceiling: int = DEFAULT_MAX_SIZE,
    k_epsilon: float = DEFAULT_K_EPSILON,
    shares=DEFAULT_K_SHARES,
    dataset: str = "data",
    journal=None,
) -> pd.DataFrame:
    """One row per (K choice, budget, ε, trial) at the root of ``tree``: emd, truncation, K, cells, seconds.

    A private choice runs with ``k_epsilon`` on top of ε and, for each of ``shares``, at the equal total ε
    (ε_K = share·ε out of it).  Every choice draws trial ``t``'s noise from the seed ``(seed, t)``, so the
    comparison is paired.
    ``journal`` (from :meth:`RunOptions.journal_for`) records every (ε, choice, budget) as it finishes, so a killed
    run resumes; the resumed rows keep the seconds measured when they ran.
    """
    root = tree.keep_levels([]) if tree.depth else tree
    h = _root_histogram(root)
    journal = NoJournal() if journal is None else journal
    frames = []
    steps = [
        (eps, choice, label, k_eps, release_eps)
        for eps in epsilons
        for choice in K_CHOICES
        for label, k_eps, release_eps in (
            _budgets(eps, k_epsilon, shares) if choice in PRIVATE_K else [(NO_K_BUDGET, 0.0, eps)]
        )
    ]
    for eps, choice, label, k_eps, release_eps in steps:

        def step(eps=eps, choice=choice, label=label, k_eps=k_eps, release_eps=release_eps) -> pd.DataFrame:
            options = _options(choice, ceiling, root.max_size, k_eps)
            rows = []
            for trial in range(trials):
                start = time.perf_counter()
                data = root
                if choice in DRAWN_K:
                    k = drawn_k(choice, h, k_eps, ceiling, (seed, trial))
                    options, data = {"max_size": k}, _capped(root, h, k)
                release = estimate(data, epsilons=[release_eps], methods=["Hc"], seed=(seed, trial), **options)
                seconds = time.perf_counter() - start
                ev = evaluate(root, release).iloc[0]
                rows.append(
                    {
                        "dataset": dataset,
                        "k_choice": choice,
                        "budget": label,
                        "k_epsilon": k_eps,
                        "epsilon": eps,
                        "trial": trial,
                        "emd": int(ev["emd"]),
                        "truncation": int(ev["truncation"]),
                        "K": int(ev["bound"]),
                        "true_max": root.max_size,
                        "cells": int(ev["bound"]),
                        "seconds": seconds,
                        "total_epsilon": release.budget.total + (k_eps if choice in DRAWN_K else 0.0),
                    }
                )
            return pd.DataFrame(rows)

        frames.append(journal.resumable(len(frames), step))  # a killed run resumes here
    return pd.concat(frames, ignore_index=True)


def summarize_kselect(frame: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, K choice and ε: mean and 5–95% band of emd and K, truncation rate and mean, cells, time."""

    def band(x: pd.Series) -> tuple[float, float]:
        return float(np.percentile(x, 5)), float(np.percentile(x, 95))

    rows = []
    for (dataset, choice, label, eps), part in frame.groupby(["dataset", "k_choice", "budget", "epsilon"], sort=False):
        emd_lo, emd_hi = band(part["emd"])
        rows.append(
            {
                "dataset": dataset,
                "k_choice": choice,
                "budget": label,
                "k_epsilon": part["k_epsilon"].iloc[0],
                "epsilon": eps,
                "trials": len(part),
                "mean_emd": part["emd"].mean(),
                "emd_p5": emd_lo,
                "emd_p95": emd_hi,
                "mean_K": part["K"].mean(),
                "K_p5": band(part["K"])[0],
                "K_p95": band(part["K"])[1],
                "true_max": int(part["true_max"].iloc[0]),
                "truncated_share": (part["truncation"] > 0).mean(),
                "mean_truncation": part["truncation"].mean(),
                "mean_cells": part["cells"].mean(),
                "median_seconds": part["seconds"].median(),
                "total_epsilon": part["total_epsilon"].iloc[0],
            }
        )
    out = pd.DataFrame(rows)
    public = out[out["k_choice"] == "public"].set_index(["dataset", "epsilon"])["mean_emd"]
    out["emd_vs_public"] = (
        out["mean_emd"].to_numpy() / public.reindex(pd.MultiIndex.from_frame(out[["dataset", "epsilon"]])).to_numpy()
    )
    return out


def _figures(summary: pd.DataFrame) -> dict[str, object]:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    figures = {}
    for dataset, part in summary.groupby("dataset", sort=False):
        fig = make_subplots(rows=1, cols=2, subplot_titles=("root emd (mean, 5–95% band)", "noise cells (K)"))
        for (choice, label), series in part.groupby(["k_choice", "budget"], sort=False):
            choice = choice if label == NO_K_BUDGET else f"{choice}, {label}"
            fig.add_trace(
                go.Scatter(
                    x=series["epsilon"],
                    y=series["mean_emd"],
                    name=choice,
                    legendgroup=choice,
                    error_y=dict(
                        type="data",
                        symmetric=False,
                        array=series["emd_p95"] - series["mean_emd"],
                        arrayminus=series["mean_emd"] - series["emd_p5"],
                    ),
                    mode="lines+markers",
                ),
                row=1,
                col=1,
            )
            fig.add_trace(
                go.Scatter(
                    x=series["epsilon"],
                    y=series["mean_cells"],
                    name=choice,
                    legendgroup=choice,
                    showlegend=False,
                    mode="lines+markers",
                ),
                row=1,
                col=2,
            )
        fig.update_xaxes(type="log", title_text="ε (the total, but for 'on top': ε_K added)")
        fig.update_yaxes(type="log")
        fig.update_layout(title=f"E1: how K is chosen — {dataset}", height=450)
        figures[dataset] = fig
    return figures


def kselect_experiment(exp: Experiment, run: RunOptions) -> ExperimentResult:
    """The K-selection experiment (:func:`run_kselect`) on each dataset's root at the default ε_K shares."""
    config = run.config(exp)
    config["k_epsilon"] = DEFAULT_K_EPSILON
    config["k_shares"] = list(DEFAULT_K_SHARES)
    config["k_choices"] = list(K_CHOICES)
    frames = []
    for name in config["datasets"]:
        tree = run.root_data(name).load(run.loader)
        frames.append(
            run_kselect(
                tree,
                epsilons=config["epsilons"],
                trials=run.trials,
                seed=run.seed,
                ceiling=config["max_size"],
                dataset=name,
                journal=run.journal_for(exp.name, config, name, tree),
            )
        )
    frame = pd.concat(frames, ignore_index=True)
    summary = summarize_kselect(frame)
    table = summary.assign(
        emd=[
            f"{number_text(m)} [{number_text(lo)}, {number_text(hi)}]"
            for m, lo, hi in zip(summary["mean_emd"], summary["emd_p5"], summary["emd_p95"])
        ],
        K=[
            f"{number_text(m)} [{number_text(lo)}, {number_text(hi)}]"
            for m, lo, hi in zip(summary["mean_K"], summary["K_p5"], summary["K_p95"])
        ],
        truncated=[f"{s:.0%}" for s in summary["truncated_share"]],
        truncation=[number_text(x) for x in summary["mean_truncation"]],
        seconds=[f"{s:.3f}" for s in summary["median_seconds"]],
        epsilon=[f"{e:g}" for e in summary["epsilon"]],
        total_epsilon=[f"{e:g}" for e in summary["total_epsilon"]],
        k_epsilon=[f"{e:g}" for e in summary["k_epsilon"]],
        emd_vs_public=[f"{r:.3f}" for r in summary["emd_vs_public"]],
    )[
        [
            "dataset",
            "k_choice",
            "budget",
            "epsilon",
            "k_epsilon",
            "total_epsilon",
            "emd",
            "emd_vs_public",
            "K",
            "true_max",
            "truncated",
            "truncation",
            "seconds",
        ]
    ]
    md = "\n\n".join(
        [
            f"Root of each dataset, all-Hc, {run.trials} trials per cell; mean [5%, 95%] of the emd and of K; "
            f"noise cells = K. Private choices run twice over: 'on top' spends ε_K = {DEFAULT_K_EPSILON:g} on top "
            "of ε (total_epsilon = ε + ε_K, more than the public K's); 'equal total' takes ε_K = "
            f"{', '.join(f'{s:.0%}' for s in DEFAULT_K_SHARES)} of ε out of ε (the release keeps the rest: "
            "total_epsilon = ε, the public K's cost). *emd_vs_public*: the mean emd over the public K's at the "
            "same ε (paired trials). trunc-svt (Wu's TruncSVT, ρ = 0.95 over the grid 2^i) and recursive (Chen and "
            "Zhou's threshold, β = 0.1) are Wu's private truncation thresholds taken as K; both hold under our "
            "person neighbours with ε_K counted in full. The oracle reads the true maximum (a yardstick, not a "
            "mechanism). "
            "'truncated' is the share of trials with K̂ below the largest group, 'truncation' the mean persons "
            "lost to K alone.",
            markdown_table(table),
        ]
    )
    return ExperimentResult(exp.name, {"trials": frame, "summary": summary}, _figures(summary), md, config)
