"""Wu et al.'s sum-query strategies against the count-of-counts releases: experiments E2 and E3.

* **wu-e2** (our person-level neighbours, G public): P(j) = Σ_{s ≤ j} s·H[s],
  j = 1..J, at the root and per state, from the Hc and Hg releases
  (``release.prefix_persons``, post-processing) against Wu's Identity, SQM,
  Workload and the dyadic TaMM / TiMM (:mod:`cocoviz.sums`), each with and
  without isotonic regression, and total persons (release vs. a direct noisy
  total).  Every method spends ε at the root and ε at the states (parallel
  across states): the same total 2ε.  Wu's strategies also run with τ chosen
  by TruncSVT or the recursive mechanism on a share of ε (``τ = svt``,
  ``τ = recursive``; both hold under person neighbours, :data:`WU_E2_TAUS`).
* **wu-e3** (Wu's record-level neighbours: one group added or removed): the
  same strategies with truncation at τ (the truth is untruncated, so the
  bias counts), plus ``τ = svt``: each node's τ chosen by Wu's TruncSVT
  (:func:`cocoviz.sums.trunc_svt_tau`, record level, with a private ñ) on
  :data:`WU_SVT_SHARE` of ε, the strategy answering on the rest, so every
  row spends the same ε per level (**the threshold's ε counts**), and
  ``τ = recursive``: τ from Chen and Zhou's recursive mechanism as Wu use it
  (:func:`cocoviz.sums.recursive_tau`, β = :data:`WU_RECURSIVE`) on the same
  share of ε.  GreedyH
  (``greedyh``, Wu's TaMM with a workload-weighted strategy) is a strategy
  of both experiments.  The releases are left out: with G private, Hg's length and
  Hc's last cell (= G) are not record-level private, so there is nothing
  equal to compare.

Error: for one node, MAE = mean_j |P̂(j) − P(j)| and relative error
mean_j |P̂(j) − P(j)| / max(P(j), 1); averaged over the nodes of a level per
trial; mean ± standard error over trials (as the other experiments).

>>> from cocoviz.experiments.wu import node_errors
>>> node_errors(np.array([2., 5., 4., 8.]), np.array([2, 4, 4, 8]))
(0.25, 0.0625)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

import cocoviz
from cocoviz.experiments.figures import bar_figure
from cocoviz.experiments.kuo_setup import Experiment, RunOptions
from cocoviz.experiments.result import ExperimentResult
from cocoviz.experiments.tables import markdown_table, plus_minus
from cocoviz.privacy.noise import FastSampler
from cocoviz.sums import answer, direct_total, prefix_sums, recursive_tau, trunc_svt_tau

__all__ = [
    "WU_J_GRID",
    "WU_TAUS",
    "WU_E2_TAUS",
    "WU_STRATEGIES",
    "WU_SVT_SHARE",
    "WU_SVT",
    "WU_RECURSIVE",
    "node_errors",
    "run_wu",
    "wu_e2",
    "wu_e3",
]

#: Workload bounds J (queries P(1..J)).
WU_J_GRID = (10, 100)
#: Truncation thresholds of E3 (None: no truncation).
WU_TAUS = (2, 4, 8, 16, 32, None, "svt", "recursive")
#: E2's thresholds: none, and Wu's two private ones (both hold under person neighbours: TruncSVT's
#: queries and the recursive index move by at most one when one group's size moves by one, and TruncSVT's
#: ñ reads the number of groups, which a person move leaves alone).
WU_E2_TAUS = (None, "svt", "recursive")
#: Wu's strategies, in table order (``tamm``/``timm`` on the plain dyadic strategy; ``greedyh``: GreedyH).
WU_STRATEGIES = ("identity", "sqm", "workload", "tamm", "timm", "greedyh")
#: The share of a level's ε that TruncSVT (or the recursive mechanism) spends on τ (the strategy answers on the rest).
WU_SVT_SHARE = 0.2
#: TruncSVT's parameters (Wu's ρ, θ₀, β; ñ gets half of the threshold's ε).
WU_SVT = {"rho": 0.95, "theta0": 1.0, "beta": 2.0, "split": 0.5}
#: The recursive mechanism's parameters (:func:`cocoviz.sums.recursive_tau`).
WU_RECURSIVE = {"beta": 0.1, "shift": 1.0}
#: The private τ labels and the tag that keeps their noise streams apart.
_PRIVATE_TAU = {"svt": 1, "recursive": 2}
KEYS = ["dataset", "epsilon", "J", "tau", "level", "method", "isotonic"]


def node_errors(estimate: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """Mean absolute error over j, and mean relative error |P̂ − P| / max(P, 1)."""
    err = np.abs(np.asarray(estimate, np.float64) - truth)
    return float(err.mean()), float((err / np.maximum(truth, 1)).mean())


def _histogram(tree, node) -> np.ndarray:
    sizes, counts = tree.node_runs(node)
    return np.bincount(sizes, weights=counts, minlength=1).astype(np.int64)


def _trial_rows(
    tree,
    *,
    trial_seed: tuple[int, ...],
    eps: float,
    js: Sequence[int],
    taus: Sequence[int | None | str],
    neighbours: str,
    releases: Sequence[str],
    max_size: int,
) -> list[dict]:
    """Per node: every method's errors (one noise draw each, scored with and without isotonic)."""
    sampler = FastSampler(trial_seed)
    made = {
        m: cocoviz.estimate(
            tree, epsilons=[eps] * (tree.depth + 1), methods=[m] * (tree.depth + 1), max_size=max_size, seed=trial_seed
        )
        for m in releases
    }
    rows = []
    for level in range(tree.depth + 1):
        for k, node in enumerate(tree.nodes(level)):
            h = _histogram(tree, node)
            base = {"level": level, "node": k}
            persons = int(np.dot(np.arange(len(h)), h))
            chosen = {}  # τ label -> (τ, the ε left for the strategy)
            for tau in taus:
                if tau == "svt":  # one private τ per node, on a share of ε; the nodes of a level are disjoint
                    pick = trunc_svt_tau(h, WU_SVT_SHARE * eps, sampler, ceiling=max_size, key=(level, k, 77), **WU_SVT)
                    chosen["svt"] = (pick.tau, (1 - WU_SVT_SHARE) * eps)
                elif tau == "recursive":  # Chen and Zhou's threshold on the same share
                    pick = recursive_tau(
                        h,
                        WU_SVT_SHARE * eps,
                        sampler,
                        ceiling=max_size,
                        neighbours=neighbours,
                        key=(level, k, 78),
                        **WU_RECURSIVE,
                    )
                    chosen["recursive"] = (pick.tau, (1 - WU_SVT_SHARE) * eps)
                else:
                    chosen[str(tau or "none")] = (tau, eps)
            for m, release in made.items():
                rows.append(
                    {
                        **base,
                        "J": 0,
                        "tau": "none",
                        "method": f"{m} release",
                        "isotonic": False,
                        "mae": abs(release.persons(node) - persons),
                        "rel": abs(release.persons(node) - persons) / max(persons, 1),
                    }
                )
            for label, (tau, spend) in chosen.items():
                if tau is not None or neighbours == "person":
                    flag = _PRIVATE_TAU.get(label, 0)
                    est = direct_total(
                        h, spend, sampler, neighbours=neighbours, tau=tau, key=(level, k, 99, tau or 0, flag)
                    )
                    err = abs(float(est.raw[0]) - persons)
                    rows.append(
                        {
                            **base,
                            "J": 0,
                            "tau": label,
                            "method": "direct total",
                            "isotonic": False,
                            "mae": err,
                            "rel": err / max(persons, 1),
                        }
                    )
            for J in js:
                truth = prefix_sums(h, J)
                for m, release in made.items():
                    mae, rel = node_errors(release.prefix_persons(node, np.arange(1, J + 1)), truth)
                    rows.append(
                        {
                            **base,
                            "J": J,
                            "tau": "none",
                            "method": f"{m} release",
                            "isotonic": False,
                            "mae": mae,
                            "rel": rel,
                        }
                    )
                for label, (tau, spend) in chosen.items():
                    for s, name in enumerate(WU_STRATEGIES):
                        est = answer(
                            h,
                            spend,
                            J,
                            sampler,
                            strategy=name,
                            neighbours=neighbours,
                            tau=tau,
                            key=(level, k, s, J, tau or 0, _PRIVATE_TAU.get(label, 0)),
                        )
                        for iso in (False, True):
                            mae, rel = node_errors(est.estimate(isotonic=iso), truth)
                            rows.append(
                                {
                                    **base,
                                    "J": J,
                                    "tau": label,
                                    "method": name,
                                    "isotonic": iso,
                                    "mae": mae,
                                    "rel": rel,
                                }
                            )
    return rows


def run_wu(
    exp: Experiment, run: RunOptions, *, neighbours: str, taus: Sequence[int | None | str], releases: Sequence[str]
) -> ExperimentResult:
    """Run E2 (``neighbours="person"``, the releases) or E3 (``"record"``, τ grid) on root + states."""
    config = run.config(exp)
    config.update(
        J=list(WU_J_GRID),
        taus=[str(t or "none") for t in taus],
        neighbours=neighbours,
        budget="ε per level (root, states): total 2ε for every method (τ = svt, recursive: the threshold's share counts)",  # noqa: E501
        svt={**WU_SVT, "share": WU_SVT_SHARE, "ceiling": "max_size"} if "svt" in taus else None,
        recursive={**WU_RECURSIVE, "share": WU_SVT_SHARE, "ceiling": "max_size"} if "recursive" in taus else None,
    )
    frames = []
    datasets = config["datasets"]
    total = len(datasets) * len(config["epsilons"]) * run.trials
    done = 0
    for name in datasets:
        tree = run.two_level_data(name).load(run.loader)
        journal = run.journal_for(exp.name, config, name, tree, list(taus), list(releases))
        for e, eps in enumerate(config["epsilons"]):
            for t in range(run.trials):

                def trial(e=e, eps=eps, t=t, tree=tree, name=name) -> pd.DataFrame:
                    rows = _trial_rows(
                        tree,
                        trial_seed=(run.seed, t, e),
                        eps=eps,
                        js=WU_J_GRID,
                        taus=taus,
                        neighbours=neighbours,
                        releases=releases,
                        max_size=config["max_size"],
                    )
                    return pd.DataFrame(rows).assign(dataset=name, epsilon=eps, trial=t)

                frames.append(journal.resumable(e * run.trials + t, trial))  # a killed run resumes here
                done += 1
                if run.progress:
                    run.progress(done, total)
    nodes = pd.concat(frames, ignore_index=True)
    trials = nodes.groupby([*KEYS, "trial"], sort=False)[["mae", "rel"]].mean().reset_index()
    summary = _summarize(trials)
    md = _report(summary, neighbours, run.trials)
    figures = _figures(summary)
    return ExperimentResult(exp.name, {"trials": trials, "summary": summary}, figures, md, config)


def _summarize(trials: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error over trials of the per-level mean errors."""
    g = trials.groupby(KEYS, sort=False)
    out = g[["mae", "rel"]].mean().rename(columns={"mae": "mean", "rel": "rel_mean"})
    out["se"] = g["mae"].std(ddof=1) / np.sqrt(g.size())
    out["rel_se"] = g["rel"].std(ddof=1) / np.sqrt(g.size())
    out["trials"] = g.size()
    return out.reset_index()


def _report(summary: pd.DataFrame, neighbours: str, trials: int) -> str:
    """One table per dataset, ε and level: methods × J (MAE ± se), isotonic as a column, and totals."""
    parts = [
        f"Neighbours: **{neighbours}**. Mean absolute error of P(1..J) per node, averaged over the "
        f"level's nodes (± s.e. over {trials} trials); relative error in brackets; J = 0 rows are total "
        "persons."
    ]
    wide_keys = ["dataset", "epsilon", "level", "method", "tau", "isotonic"]
    cells = summary.assign(
        cell=[f"{plus_minus(m, s)} [{r:.3g}]" for m, s, r in zip(summary["mean"], summary["se"], summary["rel_mean"])]
    )
    table = cells.pivot_table(index=wide_keys, columns="J", values="cell", aggfunc="first", sort=False)
    table.columns = ["total persons" if j == 0 else f"J = {j}" for j in table.columns]
    table = table.reset_index().fillna("–")
    table["level"] = table["level"].map({0: "root", 1: "states"})
    table["isotonic"] = table["isotonic"].map({True: "yes", False: "no"})
    parts.append(markdown_table(table))
    iso = (
        summary[summary["method"].isin(WU_STRATEGIES)]
        .pivot_table(index=["dataset", "epsilon", "J", "tau", "level", "method"], columns="isotonic", values="mean")
        .reset_index()
    )
    iso["isotonic / raw"] = iso[True] / iso[False]
    hurt = iso[iso["isotonic / raw"] > 1.0]
    parts.append(
        f"Isotonic regression raised the MAE in {len(hurt)} of {len(iso)} cells (strategy × J × τ × "
        f"level × ε); median ratio isotonic / raw = {iso['isotonic / raw'].median():.3f}."
    )
    if len(hurt):
        parts.append(markdown_table(hurt.drop(columns=[False, True]).round({"isotonic / raw": 3})))
    return "\n\n".join(parts)


def _figures(summary: pd.DataFrame) -> dict[str, object]:
    """Grouped bars of MAE per method, a panel per J, one figure per dataset, ε and level."""
    figures = {}
    part = summary[summary["J"] > 0].copy()
    part["series"] = (
        part["method"]
        + np.where(part["isotonic"], " +iso", "")
        + np.where(part["tau"] == "none", "", " τ=" + part["tau"].astype(str))
    )
    for (dataset, eps, level), p in part.groupby(["dataset", "epsilon", "level"], sort=False):
        fig = bar_figure(
            p.assign(J=p["J"].map(lambda j: f"J = {j}")),
            x="series",
            series="J",
            facet=None,
            title=f"{dataset}, ε = {eps:g} per level, {'root' if level == 0 else 'states'}: MAE of P(1..J)",
        )
        fig.update_yaxes(title_text="mean |P̂(j) − P(j)| (± s.e.)", col=1)
        figures[f"{dataset}-eps{eps:g}-level{level}"] = fig
    return figures


def wu_e2(exp: Experiment, run: RunOptions) -> ExperimentResult:
    """wu-e2: prefix-sum errors under person-level neighbours, G public, with Hc and Hg releases."""
    return run_wu(exp, run, neighbours="person", taus=WU_E2_TAUS, releases=("Hc", "Hg"))


def wu_e3(exp: Experiment, run: RunOptions) -> ExperimentResult:
    """wu-e3: prefix-sum errors under record-level neighbours, over the truncations τ."""
    return run_wu(exp, run, neighbours="record", taus=WU_TAUS, releases=())
