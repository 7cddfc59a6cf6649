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
* *truth*: IDE from the region's own true table — Tao's check, private = public, **not private**;
* *previous census, owner rate perturbed by size*: the previous census's table with the logit of its
  owner rate shifted per size class by a draw of N(0, sd²) (:func:`perturb_owner_rate`; the same shift
  in every region), for each sd of :data:`E7_PERTURB_SDS` and seed of :data:`E7_PERTURB_SEEDS`.  The
  unperturbed previous census differs from the truth by a main effect (one shift for every size), which
  the tenure margin corrects exactly: its gain is a best case; the perturbed ones show how fast it goes
  when the prior's interaction of size and tenure is off.

Reported per county (the summary's ``level`` 2; all levels in ``summary.csv``): Tao's metric
``joint_l1`` = ‖T̂/G − T/G‖₁, the size margin's ``size_l1`` and the tenure margin's ``tenure_l1``
(mean ± s.e. over trials of the county average), and the share of (county, trial) where the
configuration's joint error is below the baseline's.  Trial t draws its noise from the seed
``(seed, t)``; the size release and the tenure margin use disjoint noise keys.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from cocoviz.core.shape import Shape
from cocoviz.datasets.tenure import OWNER_DRIFT, previous_census_tenure, previous_tenure_table, tenure_table
from cocoviz.experiments.data import Data
from cocoviz.experiments.figures import bar_figure
from cocoviz.experiments.kuo_setup import Experiment, RunOptions
from cocoviz.experiments.result import ExperimentResult
from cocoviz.experiments.tables import markdown_table
from cocoviz.joint import estimate_joints, evaluate_joint, node_tables, prior_tables

__all__ = [
    "E7",
    "E7_CONFIGS",
    "E7_MAX_SIZE",
    "E7_PERTURB_SDS",
    "E7_PERTURB_SEEDS",
    "e7_configs",
    "e7_priors",
    "perturb_owner_rate",
    "run_joint_trial",
]

#: E7's configurations: (label, prior key).
E7_CONFIGS = (
    ("independent margins (no prior)", "independent"),
    ("uniform prior", "uniform"),
    ("previous census", "previous"),
    ("truth (Tao's check: private = public, not private)", "truth"),
)
#: Logit standard deviations of the previous census's owner rate perturbed by size.
E7_PERTURB_SDS = (0.1, 0.2)
#: Seeds of the perturbations: each is one draw of the shifts per size class.
E7_PERTURB_SEEDS = (0, 1, 2, 3, 4)
#: K of the size release unless --max-size says otherwise: the housing generator's outliers stop at 10,000.
E7_MAX_SIZE = 10_000
_METRICS = ("joint_l1", "size_l1", "tenure_l1")


def _perturbed_label(sd: float, seed: int) -> tuple[str, str]:
    return f"previous census, owner logit by size ± {sd:g} (seed {seed})", f"previous-sd{sd:g}-seed{seed}"


def e7_configs(sds=E7_PERTURB_SDS, seeds=E7_PERTURB_SEEDS) -> tuple[tuple[str, str], ...]:
    """E7's configurations (label, prior key): :data:`E7_CONFIGS` and the perturbed previous censuses.

    >>> [key for _, key in e7_configs((0.1,), (0, 1))][-2:]
    ['previous-sd0.1-seed0', 'previous-sd0.1-seed1']
    """
    return E7_CONFIGS + tuple(_perturbed_label(sd, seed) for sd in sds for seed in seeds)


def perturb_owner_rate(table: pd.DataFrame, sd: float, seed: int) -> pd.DataFrame:
    """``table`` (owners and renters per region and size) with the owner rate's logit shifted by size class.

    One shift per size class of :mod:`cocoviz.datasets.tenure` (1, 2, …, 6, 7+; size 0 with size 1), drawn
    N(0, sd²) from ``seed`` and applied in every region alike; each row keeps its households
    (owners + renters) and takes owners = households · expit(logit(rate) + shift).

    >>> t = pd.DataFrame({"county": ["x", "x"], "size": [1, 9], "owners": [6.0, 2.0], "renters": [4.0, 2.0]})
    >>> out = perturb_owner_rate(t, 0.2, seed=0)
    >>> bool(np.allclose(out["owners"] + out["renters"], [10, 4])), bool(perturb_owner_rate(t, 0.0, 0).equals(t))
    (True, True)
    """
    if sd == 0:
        return table.copy()
    shifts = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,))).normal(0.0, sd, 7)
    households = (table["owners"] + table["renters"]).to_numpy(np.float64)
    owners = table["owners"].to_numpy(np.float64)
    rate = np.clip(owners / np.where(households > 0, households, 1.0), 1e-12, 1 - 1e-12)
    shift = shifts[np.clip(table["size"].to_numpy(np.int64), 1, 7) - 1]
    new_owners = households * expit(logit(rate) + shift)
    return table.assign(owners=new_owners, renters=households - new_owners)


def e7_priors(
    tree, table: pd.DataFrame, name: str, run: RunOptions, sds=E7_PERTURB_SDS, seeds=E7_PERTURB_SEEDS
) -> dict[str, object]:
    """The priors by key: the named ones, the previous census's (as drawn and perturbed) and the truth's."""
    shape = Shape.of(tree)
    if run.loader is None:
        previous = previous_census_tenure(name, scale=run.scale, seed=run.data_seed + 1)
    else:  # the test loader's data: another draw of it, with the owner drift, as the previous census
        previous = previous_tenure_table(run.loader(name, scale=run.scale, seed=run.data_seed + 1), run.data_seed + 1)
    truth = {path: t.astype(np.float64) for path, t in node_tables(table, list(tree.levels)).items()}
    priors = {
        "independent": "independent",
        "uniform": "uniform",
        "previous": prior_tables(previous, shape),
        "truth": truth,
    }
    for sd in sds:
        for seed in seeds:
            priors[_perturbed_label(sd, seed)[1]] = prior_tables(perturb_owner_rate(previous, sd, seed), shape)
    return priors


def run_joint_trial(
    tree, table: pd.DataFrame, priors: dict[str, object], eps: float, seed, max_size: int, levels=None
) -> list[dict]:
    """One trial at one ε (sizes and tenure alike): every configuration's errors per node, one row each."""
    n = tree.depth + 1
    named = {label: priors[key] for label, key in e7_configs() if key in priors}
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
    base_joint = out[out["config"] == base].set_index(["epsilon", "level"])["joint_l1"]
    out["joint_vs_no_prior"] = (
        out["joint_l1"].to_numpy() / base_joint.reindex(pd.MultiIndex.from_frame(out[["epsilon", "level"]])).to_numpy()
        - 1
    )
    return out


def perturbed_ranges(summary: pd.DataFrame) -> pd.DataFrame:
    """Per ε and level: the previous census's change of joint error against no prior, as drawn and over the
    seeds of each perturbation sd (min … max, and the count of seeds where the prior still helps)."""
    rows = []
    for (eps, level), part in summary.groupby(["epsilon", "level"], sort=False):
        drawn = part.loc[part["config"] == E7_CONFIGS[2][0], "joint_vs_no_prior"]
        rows.append(
            {
                "epsilon": eps,
                "level": level,
                "prior": "previous census as drawn",
                "change vs no prior": f"{drawn.iloc[0]:+.0%}",
                "helps in": "–",
            }
        )
        for sd in E7_PERTURB_SDS:
            r = part.loc[part["config"].str.contains(f"± {sd:g} ", regex=False), "joint_vs_no_prior"]
            if len(r):
                rows.append(
                    {
                        "epsilon": eps,
                        "level": level,
                        "prior": f"owner logit by size ± {sd:g} ({len(r)} seeds)",
                        "change vs no prior": f"{r.max():+.0%} … {r.min():+.0%}",
                        "helps in": f"{int((r < 0).sum())} of {len(r)}",
                    }
                )
    return pd.DataFrame(rows)


def _fmt(summary: pd.DataFrame) -> pd.DataFrame:
    out = summary.copy()
    for m in _METRICS:
        out[m] = [f"{a:.4g} ± {b:.2g}" for a, b in zip(out[m], out[f"{m}_se"])]
    out["wins_vs_no_prior"] = ["–" if np.isnan(w) else f"{w:.1%}" for w in out["wins_vs_no_prior"]]
    out["joint_vs_no_prior"] = [f"{r:+.1%}" for r in out["joint_vs_no_prior"]]
    return out.drop(columns=[f"{m}_se" for m in _METRICS])


def _e7(exp: Experiment, run: RunOptions) -> ExperimentResult:
    data = Data("housing-west", scale=run.scale, seed=run.data_seed)
    name, tree = data.key, data.load(run.loader)
    table = tenure_table(tree, seed=run.data_seed)
    priors = e7_priors(tree, table, name, run)
    eps_grid = tuple(run.epsilons if run.epsilons is not None else exp.epsilons)
    max_size = run.max_size or E7_MAX_SIZE
    frames = []
    perturb = {"sds": list(E7_PERTURB_SDS), "seeds": list(E7_PERTURB_SEEDS)}
    journal = run.journal_for(exp.name, run.config(exp), eps_grid, max_size, tree, perturb)
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
            "*joint_vs_no_prior*: the change of the joint error against the no-prior baseline. The previous census "
            "as drawn differs from the truth by one logit shift for every size (a main effect, which the tenure "
            "margin corrects): a best case. Perturbed, its owner rate's logit is shifted per size class by "
            f"N(0, sd²) (the same in every region; seeds {', '.join(map(str, E7_PERTURB_SEEDS))}). Per county:",
            markdown_table(perturbed_ranges(summary[summary["level"] == tree.depth]).drop(columns="level")),
        ]
    )
    fig = bar_figure(
        summary.assign(mean=summary["joint_l1"], se=summary["joint_l1_se"]),
        x="epsilon",
        series="config",
        facet="level",
        title="tao-e7: joint L1 (Tao's metric) by level, prior against none",
    )
    config = run.config(exp)
    config.update(
        datasets=[name],
        epsilons=list(eps_grid),
        max_size=max_size,
        owner_drift=OWNER_DRIFT,
        perturb_sds=perturb["sds"],
        perturb_seeds=perturb["seeds"],
    )
    return ExperimentResult(exp.name, {"trials": trials, "summary": summary}, {"e7-joint": fig}, md, config)


E7 = Experiment(
    "tao-e7",
    "Tao E7 analogue: size × tenure tables per region, previous-census and uniform priors against independent margins",
    "A prior can only shape what the two margins leave open (the owner rate by size); uniform is the no-prior table.",
    ("housing-west",),
    (0.1, 1.0, 10.0),
    _e7,
)
