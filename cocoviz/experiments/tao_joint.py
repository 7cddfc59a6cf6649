"""Experiment ``tao-e7``: size × tenure tables per region, with a prior against without one (Tao et al.).

On ``housing-west`` (West Coast / state / county) with tenure drawn by
:func:`cocoviz.datasets.tenure.tenure_table` (seed = the data seed): per trial and ε, one Hc
release of the sizes (ε per level, top-down, K = 10,000 by default: the generator's public bound
on its outliers) and one measurement of the tenure margin (the same ε per level; Δ = 1 under
neighbours that may also flip one household's tenure, see :mod:`cocoviz.joint.measure`), made
consistent top-down; then every region's table under four configurations that share those
measurements (a paired comparison):

* *independent margins (no prior)*: the product of the two released margins, the baseline;
* *uniform prior*: IDE from uniform — the same table up to the rounding of ties (maximum entropy);
* *previous census*: IDE from the previous census's table of the region
  (:func:`~cocoviz.datasets.tenure.previous_census_tenure`: another draw, households larger, more
  owners, the counties' lasting lean);
* *truth*: IDE from the region's own true table — Tao's check, private = public, **not private**.

Reported per county (the summary's ``level`` 2; all levels in ``summary.csv``): Tao's metric
``joint_l1`` = ‖T̂/G − T/G‖₁, the size margin's ``size_l1`` and the tenure margin's ``tenure_l1``
(mean ± s.e. over trials of the county average), and the share of (county, trial) where the
configuration's joint error is below the baseline's.  Trial t draws its noise from the seed
``(seed, t)``; the size release and the tenure margin use disjoint noise keys.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.datasets.tenure import OWNER_DRIFT, previous_census_tenure, previous_tenure_table, tenure_table
from cocoviz.experiments.data import Data
from cocoviz.experiments.figures import _bar_figure
from cocoviz.experiments.kuo_setup import Experiment, RunOptions
from cocoviz.experiments.result import ExperimentResult
from cocoviz.experiments.tables import markdown_table
from cocoviz.joint import estimate_joints, evaluate_joint, node_tables, prior_tables
from cocoviz.shape import Shape

__all__ = ["E7", "E7_CONFIGS", "E7_MAX_SIZE", "e7_priors", "run_joint_trial"]

#: E7's configurations: (label, prior key).
E7_CONFIGS = (
    ("independent margins (no prior)", "independent"),
    ("uniform prior", "uniform"),
    ("previous census", "previous"),
    ("truth (Tao's check: private = public, not private)", "truth"),
)
#: K of the size release unless --max-size says otherwise: the housing generator's outliers stop at 10,000.
E7_MAX_SIZE = 10_000
_METRICS = ("joint_l1", "size_l1", "tenure_l1")


def e7_priors(tree, table: pd.DataFrame, name: str, run: RunOptions) -> dict[str, object]:
    """The priors by key: the named ones, the previous census's and the truth's tables per node."""
    shape = Shape.of(tree)
    if run.loader is None:
        previous = previous_census_tenure(name, scale=run.scale, seed=run.data_seed + 1)
    else:  # the test loader's data: another draw of it, with the owner drift, as the previous census
        previous = previous_tenure_table(run.loader(name, scale=run.scale, seed=run.data_seed + 1), run.data_seed + 1)
    truth = {path: t.astype(np.float64) for path, t in node_tables(table, list(tree.levels)).items()}
    return {
        "independent": "independent",
        "uniform": "uniform",
        "previous": prior_tables(previous, shape),
        "truth": truth,
    }


def run_joint_trial(
    tree, table: pd.DataFrame, priors: dict[str, object], eps: float, seed, max_size: int, levels=None
) -> list[dict]:
    """One trial at one ε (sizes and tenure alike): every configuration's errors per node, one row each."""
    n = tree.depth + 1
    named = {label: priors[key] for label, key in E7_CONFIGS}
    _, _, joints = estimate_joints(
        tree, table, named, size_epsilons=[eps] * n, tenure_epsilons=[eps] * n, max_size=max_size, seed=seed
    )
    rows = []
    for label, joint in joints.items():
        rows += evaluate_joint(table, joint, levels).assign(epsilon=eps, config=label).to_dict("records")
    return rows


def _summary(trials: pd.DataFrame) -> pd.DataFrame:
    keys = ["epsilon", "level", "config"]
    per_trial = trials.groupby([*keys, "trial"], sort=False)[list(_METRICS)].mean().reset_index()
    g = per_trial.groupby(keys, sort=False)
    out = g.size().rename("trials").reset_index()
    for m in _METRICS:
        out[m] = g[m].mean().to_numpy()
        out[f"{m}_se"] = (g[m].std(ddof=1) / np.sqrt(g[m].count())).fillna(0).to_numpy()
    base = E7_CONFIGS[0][0]
    wide = trials.pivot_table(index=["epsilon", "level", "trial", "node"], columns="config", values="joint_l1")
    wins = []
    for eps, level, config in zip(out["epsilon"], out["level"], out["config"]):
        part = wide.xs((eps, level), level=["epsilon", "level"])
        wins.append(np.nan if config == base else float((part[config] < part[base] - 1e-12).mean()))
    out["wins_vs_no_prior"] = wins
    return out


def _fmt(summary: pd.DataFrame) -> pd.DataFrame:
    out = summary.copy()
    for m in _METRICS:
        out[m] = [f"{a:.4g} ± {b:.2g}" for a, b in zip(out[m], out[f"{m}_se"])]
    out["wins_vs_no_prior"] = ["–" if np.isnan(w) else f"{w:.1%}" for w in out["wins_vs_no_prior"]]
    return out.drop(columns=[f"{m}_se" for m in _METRICS])


def _e7(exp: Experiment, run: RunOptions) -> ExperimentResult:
    data = Data("housing-west", scale=run.scale, seed=run.data_seed)
    name, tree = data.key, data.load(run.loader)
    table = tenure_table(tree, seed=run.data_seed)
    priors = e7_priors(tree, table, name, run)
    eps_grid = tuple(run.epsilons if run.epsilons is not None else exp.epsilons)
    max_size = run.max_size or E7_MAX_SIZE
    frames = []
    journal = run.journal_for(exp.name, run.config(exp), eps_grid, max_size, tree)
    for t in range(run.trials):
        for eps in eps_grid:

            def trial(t=t, eps=eps) -> pd.DataFrame:
                rows = run_joint_trial(tree, table, priors, eps, (run.seed, t), max_size)
                return pd.DataFrame([dict(r, trial=t) for r in rows])

            frames.append(journal.resumable(len(frames), trial))  # a killed run resumes here
            if run.progress is not None:
                run.progress(len(frames), run.trials * len(eps_grid))
    trials = pd.concat(frames, ignore_index=True)
    summary = _summary(trials)
    leaves = summary[summary["level"] == tree.depth].drop(columns="level")
    md = "\n\n".join(
        [
            f"Per county of {name} ({len(tree.nodes(tree.depth))} counties; size classes ≤1, 2, …, 6, 7+ × owner / "
            f"renter; Hc top-down with ε per level and the tenure margin with the same ε per level, so the total "
            f"is 2 × {tree.depth + 1} × ε; {run.trials} trials, mean ± s.e. over trials of the county average). "
            "*wins_vs_no_prior*: share of (county, trial) where the joint error is strictly below the no-prior "
            "baseline's (uniform gives the no-prior table up to the rounding of ties).",
            markdown_table(_fmt(leaves)),
        ]
    )
    fig = _bar_figure(
        summary.assign(mean=summary["joint_l1"], se=summary["joint_l1_se"]),
        x="epsilon",
        series="config",
        facet="level",
        title="tao-e7: joint L1 (Tao's metric) by level, prior against none",
    )
    config = run.config(exp)
    config.update(datasets=[name], epsilons=list(eps_grid), max_size=max_size, owner_drift=OWNER_DRIFT)
    return ExperimentResult(exp.name, {"trials": trials, "summary": summary}, {"e7-joint": fig}, md, config)


E7 = Experiment(
    "tao-e7",
    "Tao E7 analogue: size × tenure tables per region, previous-census and uniform priors against independent margins",
    "A prior can only shape what the two margins leave open (the owner rate by size); uniform is the no-prior table.",
    ("housing-west",),
    (0.1, 1.0, 10.0),
    _e7,
)
