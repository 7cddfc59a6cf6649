"""Error by size at the root (the paper's Figure 1): :func:`run_error_by_size` and its summary."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cocoviz.errors import ParameterError
from cocoviz.experiments.data import Loader, as_data
from cocoviz.experiments.runner import Progress, execute, load_all, release_error_by_size, trial_seed
from cocoviz.hierarchy import Hierarchy
from cocoviz.pipeline.estimate import estimate
from cocoviz.plan import DEFAULT_MAX_SIZE, METHODS

__all__ = ["run_error_by_size", "summarize_error_by_size"]


@dataclass(frozen=True)
class _SizeTask:
    data: int
    method: str
    epsilon: float
    trial: int
    seed: int
    max_size: int
    p: int | None


def _size_task(task: _SizeTask, trees: Sequence[Hierarchy], keys: Sequence[str]) -> np.ndarray:
    tree = trees[task.data].keep_levels([])
    release = estimate(
        tree,
        epsilons=[task.epsilon],
        methods=[task.method],
        p=task.p,
        max_size=task.max_size,
        consistency="none",
        seed=trial_seed(task.seed, task.trial),
    )
    return release_error_by_size(release, tree)


def _error_location(err: np.ndarray, h_true: np.ndarray) -> dict:
    """Where an error-by-size curve puts its mass (sizes holding 25/50/75% of the emd),
    and where the groups are (median, 90th percentile and largest group size)."""
    total = float(err.sum())
    cum = np.cumsum(err)
    hc = np.cumsum(h_true)
    out = {"emd": int(total)}
    for q in (25, 50, 75):
        out[f"error_p{q}_size"] = int(np.searchsorted(cum, q / 100 * total)) if total else 0
    for q in (50, 90):
        out[f"group_p{q}_size"] = int(np.searchsorted(hc, q / 100 * hc[-1]))
    out["group_max_size"] = len(h_true) - 1
    return out


def run_error_by_size(
    datasets: Sequence,
    *,
    methods: Sequence[str] = ("Hg", "Hc"),
    epsilon: float = 1.0,
    trials: int = 10,
    seed: int = 0,
    max_size: int | None = None,
    p: int | None = None,
    progress: Progress | None = None,
    workers: int | None = 1,
    loader: Loader | None = None,
    journal: str | os.PathLike | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Error by size ``|Ĥc[s] − Hc[s]|`` at the root of each dataset (paper, Figure 1).

    Every trial estimates the root alone with the whole ``epsilon``.  ``journal``: a folder that
    records finished trials so a killed run resumes (as :func:`~cocoviz.experiments.run_sweep`).

    Returns
    -------
    (curves, trials) : ``curves`` has columns dataset, method, size, error,
        mean_error: trial 0's curve (as the paper's one-run figure) and the
        mean over trials, at every size where either changes (a step
        function: drawn with ``line_shape="hv"`` it is exact); ``trials`` has
        one row per (dataset, method, trial) with the emd and where its error
        lies (see :func:`summarize_error_by_size`).
    """
    data = [as_data(d, k) for k, d in enumerate(datasets)]
    trees, keys = load_all(data, loader)
    max_size = DEFAULT_MAX_SIZE if max_size is None else int(max_size)
    for m in methods:
        if m not in METHODS:
            raise ParameterError(f"unknown method {m!r}; methods are {tuple(METHODS)}")
    tasks = [
        _SizeTask(d, m, float(epsilon), t, int(seed), max_size, p)
        for d in range(len(trees))
        for m in methods
        for t in range(int(trials))
    ]
    arrays = execute(_size_task, tasks, trees, keys, workers, progress, journal=journal)
    curves, rows = [], []
    for d, tree in enumerate(trees):
        h_true = tree.histogram(())
        for m in methods:
            errs = [a for task, a in zip(tasks, arrays) if task.data == d and task.method == m]
            n = max(len(e) for e in errs)
            padded = np.array([np.pad(e, (0, n - len(e))) for e in errs])
            first, mean = padded[0], padded.mean(axis=0)
            change = np.ones(n, bool)
            change[1:] = (first[1:] != first[:-1]) | (mean[1:] != mean[:-1])
            change[-1] = True
            sizes = np.flatnonzero(change)
            curves.append(
                pd.DataFrame(
                    {"dataset": keys[d], "method": m, "size": sizes, "error": first[sizes], "mean_error": mean[sizes]}
                )
            )
            for t, e in enumerate(errs):
                rows.append(
                    {
                        "dataset": keys[d],
                        "method": m,
                        "epsilon": float(epsilon),
                        "trial": t,
                        **_error_location(e, h_true),
                    }
                )
    return pd.concat(curves, ignore_index=True), pd.DataFrame(rows)


def summarize_error_by_size(trials: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error over trials of the emd and of the sizes holding 25/50/75% of it."""
    value_cols = ["emd", "error_p25_size", "error_p50_size", "error_p75_size"]
    g = trials.groupby(["dataset", "method", "epsilon"], sort=False)
    out = g[value_cols].mean()
    se = g[value_cols].std() / np.sqrt(g.size().to_numpy()[:, None])
    out = out.join(se.add_suffix("_se"))
    out["trials"] = g.size()
    out = out.join(g[["group_p50_size", "group_p90_size", "group_max_size"]].first())
    return out.reset_index()
