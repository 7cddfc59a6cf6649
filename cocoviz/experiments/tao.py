"""Experiment ``tao-e6``: IDE (Tao, Bater & Machanavajjhala) on overlapping partitions — does it converge?

**Domain.** Household size (1, ..., 6, 7+) × tenure (owner, renter) × age of the householder
(<35, 35–64, 65+): 7 × 2 × 3 = 42 cells, row-major.  **Workload.** The three pairwise margins
(size × tenure, size × age, tenure × age), one partition each: they overlap, so IDE must cycle.

**True joint** (:func:`synthetic_joint`, deterministic from a seed): a log-linear recipe with
main effects (a US-like size law, 60 % owners, ages), two-way effects (owners have larger
households, the 65+ smaller ones, the young rent), a three-way effect the pairwise margins cannot
see (young owners live in families of 3+, old renters alone) and cell-wise Gaussian jitter
(sd 0.15) drawn from the seed.  The truth is ``households`` draws from it (multinomial).

**Targets.** *Exact*: the true margins (feasible and consistent).  *Noisy*: the margin counts
plus Laplace noise of scale Δ/ε per cell, divided by the public number of households.  Δ = 4:
one person joining or leaving a household moves it between adjacent sizes, changing two cells of
each of the two margins that contain size (adding or removing a household changes 3 cells).
Trial t draws standard Laplace noise from ``SeedSequence(seed, spawn_key=(t,))`` and scales it by
Δ/ε, so the ε of a trial share their noise (common random numbers).

**Priors** (public stand-ins): ``uniform`` (IDE is then plain IPF, the maximum-entropy fit);
``same population, earlier`` (the truth's own recipe and jitter with drifted main and two-way
effects: an earlier census of the same places, whose margins are stale but whose higher-order
structure still holds); ``similar`` (the same recipe with other jitter: a survey of a similar
population);
``mismatched`` (the three-way effect reversed, other jitter); ``similar, 6+ unseen`` (``similar``
with sizes 6 and 7+ zeroed, run with ``reduce_domain=True``).

**Stage 1** (both run on the same targets): ``partition`` fits each margin's noisy targets alone
(Algorithm 1); ``lp`` solves the paper's eq. 2, one linear program over the three margins at once
(:func:`cocoviz.methods.ide_lp.stage1_lp`), and IPF then moves the prior toward its answers.

**Reported** per update: ‖Wq − ỹ‖₁ (against the targets as given) and KL(q‖p); per run: the
stage-1 optimum ``min ‖Wz − ỹ‖₁`` over distributions z (a linear program; on the prior's support
for the reduced run), the margin error ‖Wq − Wx‖₁ and the joint error ‖q − x‖₁.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.optimize import linprog

from cocoviz.errors import ParameterError
from cocoviz.experiments.journal import NoJournal
from cocoviz.experiments.kuo_setup import Experiment, RunOptions
from cocoviz.experiments.result import ExperimentResult
from cocoviz.experiments.tables import markdown_table
from cocoviz.methods.priors import ide, marginal_blocks

__all__ = ["SHAPE", "PAIRS", "E6_EPSILONS", "STAGE1S", "synthetic_joint", "e6_priors", "run_e6", "E6"]

SHAPE = (7, 2, 3)
AXES = ("size", "tenure", "age")
PAIRS = ((0, 1), (0, 2), (1, 2))
E6_EPSILONS = (0.1, 1.0, 10.0)
HOUSEHOLDS = 5_000
SWEEPS = 40
DELTA = 4.0
#: The stage-1 variants compared (see :func:`cocoviz.methods.priors.ide`).
STAGE1S = ("partition", "lp")
#: The partitions' names in the trials frame ("prior" is the row before any update).
MARGIN_NAMES = tuple("×".join(AXES[a] for a in pair) for pair in PAIRS)


def synthetic_joint(
    seed: int | Sequence[int], *, three_way: float = 1.0, jitter: float = 0.15, drift: float = 0.0
) -> np.ndarray:
    """The E6 recipe: a distribution on size × tenure × age (shape :data:`SHAPE`), flattened row-major.

    Parameters
    ----------
    seed : seed of the cell-wise jitter (an int or a sequence of ints)
    three_way : weight of the three-way effect (−1 reverses it)
    jitter : standard deviation of the cell-wise log-scale jitter
    drift : weight of a change of the main and two-way effects only (fewer owners, smaller
        households, more 65+): what the pairwise margins can see and correct

    Examples
    --------
    >>> x = synthetic_joint(0)
    >>> x.shape, round(float(x.sum()), 12), bool(np.all(x > 0))
    ((42,), 1.0, True)
    """
    size = np.arange(7)[:, None, None]
    owner = (np.arange(2) == 0)[None, :, None]
    age = np.arange(3)[None, None, :]
    log = np.log([0.28, 0.34, 0.15, 0.13, 0.06, 0.025, 0.015])[:, None, None] + 0.4 * owner
    log = log + np.array([-0.3, 0.6, 0.2])[age]  # main effects
    log = log + 0.15 * size * owner + np.array([0.1, 0.15, -0.5])[age] * np.minimum(size, 4)
    log = log + np.where(owner, np.array([-0.8, 0.0, 0.6])[age], 0.0)  # two-way effects
    log = log + three_way * (0.7 * (owner & (age == 0) & (size >= 2)) + 0.6 * (~owner & (age == 2) & (size == 0)))
    log = log + drift * (-0.5 * owner - 0.15 * size + 0.4 * (age == 2) + 0.1 * size * owner)
    log = log + jitter * np.random.default_rng(seed).normal(size=SHAPE)
    x = np.exp(log).ravel()
    return x / x.sum()


def e6_priors(data_seed: int) -> dict[str, tuple[np.ndarray, bool]]:
    """The E6 priors by name: (prior, reduce_domain)."""
    similar = synthetic_joint([data_seed, 2])
    unseen = similar.reshape(SHAPE).copy()
    unseen[5:] = 0.0
    return {
        "uniform": (np.full(similar.size, 1.0 / similar.size), False),
        "same population, earlier": (synthetic_joint([data_seed, 0], drift=1.0), False),
        "similar": (similar, False),
        "mismatched": (synthetic_joint([data_seed, 3], three_way=-1.0), False),
        "similar, 6+ unseen": (unseen.ravel() / unseen.sum(), True),
    }


def _stage1_optimum(partitions: list[list[np.ndarray]], targets: list[np.ndarray], cells: np.ndarray) -> float:
    """min ‖Wz − ỹ‖₁ over distributions z on ``cells`` (the paper's stage 1), by linear programming."""
    w = np.vstack([np.isin(cells, b) for part in partitions for b in part]).astype(float)
    y = np.concatenate(targets)
    m, n = w.shape
    eye = np.eye(m)
    res = linprog(
        np.concatenate([np.zeros(n), np.ones(m)]),
        A_ub=np.block([[w, -eye], [-w, -eye]]),
        b_ub=np.concatenate([y, -y]),
        A_eq=np.concatenate([np.ones(n), np.zeros(m)])[None, :],
        b_eq=[1.0],
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:  # pragma: no cover - a feasible LP
        raise RuntimeError(f"stage-1 linear program failed: {res.message}")
    return float(res.fun)


def _margins(q: np.ndarray, partitions: list[list[np.ndarray]]) -> list[np.ndarray]:
    return [np.array([q[b].sum() for b in part]) for part in partitions]


def run_e6(
    *,
    epsilons: Sequence[float] = E6_EPSILONS,
    trials: int = 10,
    seed: int = 0,
    data_seed: int = 0,
    households: int = HOUSEHOLDS,
    sweeps: int = SWEEPS,
    progress=None,
    journal=None,
    stage1s: Sequence[str] = STAGE1S,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run E6: the per-update frame (``trials``) and the per-run frame (``runs``).

    ``epsilons`` must be positive; the exact-target runs are listed with ε = ∞ and trial 0.  ``journal``
    (from :meth:`RunOptions.journal_for`) records every run as it finishes, so a killed run resumes.

    >>> trials, runs = run_e6(epsilons=[1.0], trials=1, households=500, sweeps=2)
    >>> len(trials), sorted(runs["targets"].unique())  # 2 stage 1s × 5 priors × 2 target sets × (1 + 6 updates)
    (140, ['exact', 'noisy'])
    """
    if not epsilons or any(not (float(e) > 0 and np.isfinite(e)) for e in epsilons):
        raise ParameterError(f"tao-e6 needs finite ε > 0, got {list(epsilons)}")
    if trials < 1 or households < 1 or sweeps < 1:
        raise ParameterError("trials, households and sweeps must be ≥ 1")
    truth_counts = np.random.default_rng([data_seed, 1]).multinomial(households, synthetic_joint([data_seed, 0]))
    x = truth_counts / households
    partitions = [marginal_blocks(SHAPE, pair) for pair in PAIRS]
    exact = _margins(x, partitions)
    cases = [("exact", np.inf, 0, exact)]
    for t in range(trials):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(t,)))
        noise = [rng.laplace(0.0, 1.0, len(part)) for part in partitions]
        cases += [
            ("noisy", float(e), t, [m + z * DELTA / float(e) / households for m, z in zip(exact, noise)])
            for e in epsilons
        ]
    priors = e6_priors(data_seed)
    per_update, per_run = [], []
    total, done = len(stage1s) * len(priors) * len(cases), 0
    journal = NoJournal() if journal is None else journal
    for stage1, (name, (prior, reduce)) in ((st, item) for st in stage1s for item in priors.items()):
        cells = np.flatnonzero(prior > 0) if reduce else np.arange(prior.size)
        for kind, eps, trial, targets in cases:

            def one_run(
                name=name,
                prior=prior,
                reduce=reduce,
                cells=cells,
                kind=kind,
                eps=eps,
                trial=trial,
                targets=targets,
                stage1=stage1,
            ):
                q, report = ide(
                    prior, partitions, targets, len(partitions) * sweeps, stage1=stage1, reduce_domain=reduce
                )
                key = {"stage1": stage1, "prior": name, "targets": kind, "epsilon": eps, "trial": trial}
                updates = report.assign(
                    **key, partition=report["partition"].map(lambda k: "prior" if pd.isna(k) else MARGIN_NAMES[k])
                )
                optimum = _stage1_optimum(partitions, targets, cells)
                gaps = report["l1"].to_numpy() - optimum
                reached = np.flatnonzero(gaps <= 1e-3)
                summary = {
                    **key,
                    "l1": report["l1"].iloc[-1],
                    "stage1_optimum": optimum,
                    "gap": gaps[-1],
                    "updates_to_gap_1e-3": int(reached[0]) if reached.size else -1,
                    "last_cycle_change": abs(report["l1"].iloc[-1] - report["l1"].iloc[-1 - len(partitions)]),
                    "kl": report["kl"].iloc[-1],
                    "margin_error": sum(np.abs(a - b).sum() for a, b in zip(_margins(q, partitions), exact)),
                    "noise_margin_error": sum(np.abs(a - b).sum() for a, b in zip(targets, exact)),
                    "joint_error": np.abs(q - x).sum(),
                    "prior_joint_error": np.abs(prior - x).sum(),
                }
                return updates, pd.DataFrame([summary])

            updates, summary = journal.resumable(done, one_run)  # a killed run resumes here
            per_update.append(updates)
            per_run.append(summary)
            done += 1
            if progress is not None:
                progress(done, total)
    columns = ["stage1", "prior", "targets", "epsilon", "trial", "iteration", "partition", "l1", "kl"]
    return pd.concat(per_update, ignore_index=True)[columns], pd.concat(per_run, ignore_index=True)


#: The per-run columns summarised (mean and standard error over trials).
SUMMARY_METRICS = (
    "l1",
    "stage1_optimum",
    "gap",
    "kl",
    "margin_error",
    "noise_margin_error",
    "joint_error",
    "prior_joint_error",
)


def summarize_e6(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error (ddof 1, over trials) of every per-run metric, per prior, targets and ε."""
    groups = runs.groupby(["stage1", "prior", "targets", "epsilon"], sort=False)
    out = groups.size().rename("trials").reset_index()
    for m in SUMMARY_METRICS:
        out[m] = groups[m].mean().to_numpy()
        out[f"{m}_se"] = (groups[m].std(ddof=1) / np.sqrt(groups[m].count())).to_numpy()
    return out


def _convergence(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (stage1, prior, kind, eps), part in runs.groupby(["stage1", "prior", "targets", "epsilon"], sort=False):
        reached = part["updates_to_gap_1e-3"]
        rel = part["gap"] / part["stage1_optimum"] if kind == "noisy" or part["stage1_optimum"].gt(0).all() else None
        rows.append(
            {
                "stage 1": stage1,
                "targets": kind if kind == "exact" else f"ε = {eps:g}",
                "prior": prior,
                "updates to gap ≤ 1e-3": "never" if (reached < 0).any() else f"{reached.median():g}",
                "gap / optimum": "–" if rel is None else _g(float(rel.mean())),
                "last-cycle change": _g(float(part["last_cycle_change"].max())),
            }
        )
    return pd.DataFrame(rows)


def _g(x: float) -> str:
    return "–" if not np.isfinite(x) else f"{x:.3g}"


def _report(trials: pd.DataFrame, runs: pd.DataFrame, summary: pd.DataFrame, config: dict) -> tuple[str, dict]:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from cocoviz.plots import SERIES_COLORS

    label = summary["targets"].where(summary["targets"] == "exact", "ε = " + summary["epsilon"].map("{:g}".format))
    table = pd.DataFrame(
        {
            "stage 1": summary["stage1"],
            "targets": label,
            "prior": summary["prior"],
            "‖Wq − ỹ‖₁ at T": [
                f"{_g(m)} ± {_g(s)}" if np.isfinite(s) else _g(m) for m, s in zip(summary["l1"], summary["l1_se"])
            ],
            "stage-1 optimum": summary["stage1_optimum"].map(_g),
            "gap": summary["gap"].map(_g),
            "KL(q‖p)": summary["kl"].map(_g),
            "margin error ‖Wq − Wx‖₁": summary["margin_error"].map(_g),
            "noisy margins ‖ỹ − Wx‖₁": summary["noise_margin_error"].map(_g),
            "joint error ‖q − x‖₁": summary["joint_error"].map(_g),
            "prior alone ‖p − x‖₁": summary["prior_joint_error"].map(_g),
        }
    )
    md = "\n\n".join(
        [
            f"IDE with the pairwise margins of size × tenure × age ({config['households']:,} households, "
            f"{config['iterations']} updates = {config['sweeps']} cycles over the 3 margins, Δ = {config['delta']:g}, "
            f"{config['trials']} noisy trials per ε; mean ± s.e. over trials). Stage 1 `partition` fits each "
            "margin alone (Algorithm 1), `lp` solves the paper's linear program over all margins at once. "
            "The gap is ‖Wq − ỹ‖₁ at T minus the "
            "stage-1 optimum (0 for exact targets).",
            markdown_table(table),
            "Convergence: updates until ‖Wq − ỹ‖₁ is within 1e-3 of the stage-1 optimum (median over trials; "
            "never: not within T), the gap relative to the optimum at T, and the largest change of ‖Wq − ỹ‖₁ over "
            "the last cycle (≈ 0: settled, on a fixed point or a cycle through the margins):",
            markdown_table(_convergence(runs)),
        ]
    )
    panels = [("exact", np.inf)] + [("noisy", float(e)) for e in config["epsilons"]]
    mean = (
        trials.groupby(["stage1", "targets", "epsilon", "prior", "iteration"], sort=False)[["l1", "kl"]]
        .mean()
        .reset_index()
    )
    figures = {}
    for metric, title in (("l1", "‖Wq − ỹ‖₁ per update"), ("kl", "KL(q‖p) per update")):
        fig = make_subplots(
            rows=1,
            cols=len(panels),
            horizontal_spacing=0.05,
            subplot_titles=[f"noisy, ε = {e:g}" if k == "noisy" else "exact targets" for k, e in panels],
        )
        for col, (kind, eps) in enumerate(panels, start=1):
            for (k, prior), stage1 in ((item, st) for st in config["stage1s"] for item in enumerate(config["priors"])):
                s = mean[
                    (mean["stage1"] == stage1)
                    & (mean["targets"] == kind)
                    & (mean["epsilon"] == eps)
                    & (mean["prior"] == prior)
                ]
                y = s[metric].clip(lower=1e-16) if metric == "l1" else s[metric]
                fig.add_trace(
                    go.Scatter(
                        x=s["iteration"],
                        y=y,
                        mode="lines",
                        name=f"{prior} ({stage1})",
                        legendgroup=f"{prior} ({stage1})",
                        showlegend=col == 1,
                        line={
                            "color": SERIES_COLORS[k % len(SERIES_COLORS)],
                            "dash": "solid" if stage1 == "lp" else "dash",
                        },
                    ),
                    row=1,
                    col=col,
                )
            if metric == "l1" and kind == "noisy":  # the stage-1 optimum on the full domain (every full-domain prior)
                best = summary.loc[(summary["epsilon"] == eps) & (summary["prior"] == "uniform"), "stage1_optimum"]
                fig.add_trace(
                    go.Scatter(
                        x=[0, config["iterations"]],
                        y=[best.iloc[0]] * 2,
                        mode="lines",
                        name="stage-1 optimum (LP)",
                        legendgroup="lp",
                        showlegend=col == 2,
                        line={"color": "black", "dash": "dot"},
                    ),
                    row=1,
                    col=col,
                )
        fig.update_yaxes(type="log" if metric == "l1" else "linear")
        fig.update_yaxes(title_text=f"{title} (mean over trials)", col=1)
        fig.update_xaxes(title_text="update t")
        fig.update_layout(title=f"tao-e6: {title}", legend={"orientation": "h", "y": -0.25})
        figures[f"e6-{metric}"] = fig
    return md, figures


def _e6(exp: Experiment, run: RunOptions) -> ExperimentResult:
    if run.datasets is not None:
        raise ParameterError("tao-e6 runs on its own synthetic joint distribution; --datasets does not apply")
    epsilons = tuple(float(e) for e in (run.epsilons if run.epsilons is not None else exp.epsilons))
    households = HOUSEHOLDS if run.scale is None else max(1, round(HOUSEHOLDS * run.scale))
    trials, runs = run_e6(
        epsilons=epsilons,
        trials=run.trials,
        seed=run.seed,
        data_seed=run.data_seed,
        households=households,
        sweeps=SWEEPS,
        progress=run.progress,
        journal=run.journal_for(exp.name, epsilons, run.trials, run.seed, run.data_seed, households, SWEEPS, STAGE1S),
    )
    summary = summarize_e6(runs)
    config = {
        "experiment": exp.name,
        "title": exp.title,
        "finding": exp.finding,
        "households": households,
        "scale": run.scale,
        "sweeps": SWEEPS,
        "iterations": SWEEPS * len(PAIRS),
        "delta": DELTA,
        "epsilons": list(epsilons),
        "trials": run.trials,
        "seed": run.seed,
        "data_seed": run.data_seed,
        "domain": dict(zip(AXES, SHAPE)),
        "partitions": [[AXES[a] for a in p] for p in PAIRS],
        "priors": list(e6_priors(run.data_seed)),
        "stage1s": list(STAGE1S),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
    }
    md, figures = _report(trials, runs, summary, config)
    return ExperimentResult(exp.name, {"trials": trials, "runs": runs, "summary": summary}, figures, md, config)


E6 = Experiment(
    "tao-e6",
    "E6 (Tao et al.): IDE convergence on overlapping pairwise margins",
    "The paper leaves convergence open: after enough iterations ‖Wq − ỹ‖₁ should be close to the "
    "minimum and KL(q‖p) low.",
    ("synthetic joint",),
    E6_EPSILONS,
    _e6,
)
