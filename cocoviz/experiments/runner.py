"""Running a :class:`Sweep`: its tasks, the worker processes, :func:`run_sweep` and :func:`summarize`.

Every call of a Release's error methods made by the experiments is in this module,
in :func:`release_node_errors` and :func:`release_error_by_size`.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cocoviz.errors import ParameterError
from cocoviz.evaluate.against_truth import evaluate, size_errors
from cocoviz.experiments.data import Data, Loader, as_data, methods_for, mix_label, parse_mix
from cocoviz.experiments.journal import Journal, sweep_key
from cocoviz.hierarchy import Hierarchy
from cocoviz.methods.registry import MERGES
from cocoviz.pipeline.estimate import estimate
from cocoviz.plan import CONSISTENCY, DEFAULT_MAX_SIZE

__all__ = [
    "Sweep",
    "run_sweep",
    "summarize",
    "trial_seed",
    "default_workers",
    "release_node_errors",
    "release_error_by_size",
    "FRAME_COLUMNS",
    "SUMMARY_KEYS",
    "SUMMARY_COLUMNS",
    "NO_MERGE",
    "Progress",
    "execute",
    "load_all",
]

#: Columns of :func:`run_sweep`'s frame, in order.
FRAME_COLUMNS = [
    "dataset",
    "mix",
    "consistency",
    "merge",
    "epsilon",
    "total_epsilon",
    "trial",
    "level",
    "level_name",
    "node",
    "groups",
    "sizes",
    "emd",
    "level_epsilon",
    "omniscient",
]
#: Keys :func:`summarize` groups by (those present in the frame).
SUMMARY_KEYS = ["dataset", "mix", "consistency", "merge", "epsilon", "total_epsilon", "level", "level_name"]
#: Columns of :func:`summarize`'s output after the keys.
SUMMARY_COLUMNS = ["mean", "se", "sd", "trials", "nodes", "groups", "sizes", "omniscient"]
#: The merge recorded for consistencies that do not merge ("none", "bottom-up"); not an NA
#: marker of pandas.read_csv (which "n/a" would be).
NO_MERGE = "no merge"

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Sweep:
    """A grid of releases: datasets × mixes × ε × consistencies × merges × trials.

    Parameters
    ----------
    datasets : names, :class:`Data` or Hierarchy objects
    mixes : method mixes, one method per level ("Hc×Hg" or ("Hc", "Hg")); a single
        method ("Hc") is used at every level
    epsilons : the budget grid; each value is ε per level (``budget="per-level"``)
        or the total split evenly over the levels (``budget="total"``)
    merges : "weighted" and/or "average" (only top-down merges; the others record :data:`NO_MERGE`)
    consistencies : "top-down", "bottom-up" (the whole budget on the leaves) and/or "none"
    trials : independent repetitions
    seed : the root of every trial's noise stream (see :mod:`cocoviz.experiments`)
    max_size : public bound K for Hc and naive (default 100,000, as the paper)
    p : isotonic loss for every level (None = Hc: 1, Hg: 2)
    """

    datasets: Sequence = ()
    mixes: Sequence = ("Hc", "Hg")
    epsilons: Sequence[float] = (1.0,)
    merges: Sequence[str] = ("weighted",)
    consistencies: Sequence[str] = ("top-down",)
    trials: int = 10
    seed: int = 0
    budget: str = "per-level"
    max_size: int | None = None
    p: int | None = None

    def __post_init__(self):
        datasets = tuple(as_data(d, k) for k, d in enumerate(self.datasets))
        if not datasets:
            raise ParameterError("a sweep needs at least one dataset")
        keys = [d.key for d in datasets]
        if len(set(keys)) != len(keys):
            raise ParameterError(f"dataset names must be distinct, got {keys}")
        mixes = tuple(parse_mix(m) for m in ([self.mixes] if isinstance(self.mixes, str) else self.mixes))
        epsilons = tuple(float(e) for e in self.epsilons)
        merges = tuple(self.merges)
        consistencies = tuple(self.consistencies)
        for name, values in (
            ("mixes", mixes),
            ("epsilons", epsilons),
            ("merges", merges),
            ("consistencies", consistencies),
        ):
            if not values:
                raise ParameterError(f"a sweep needs at least one of {name}")
        for e in epsilons:
            if not (math.isfinite(e) and e > 0):
                raise ParameterError(f"every ε must be a finite number > 0, got {e!r}")
        for m in merges:
            if m not in MERGES:
                raise ParameterError(f"merge must be one of {MERGES}, got {m!r}")
        for c in consistencies:
            if c not in CONSISTENCY:
                raise ParameterError(f"consistency must be one of {CONSISTENCY}, got {c!r}")
        if self.budget not in ("per-level", "total"):
            raise ParameterError(f"budget must be 'per-level' or 'total', got {self.budget!r}")
        _check_whole("trials", self.trials, 1, MAX_TRIALS)
        _check_whole("seed", self.seed, 0)
        for name, value in (
            ("datasets", datasets),
            ("mixes", mixes),
            ("epsilons", epsilons),
            ("merges", merges),
            ("consistencies", consistencies),
        ):
            object.__setattr__(self, name, value)


#: The most trials a sweep accepts: more is a typing slip (10^23 would run forever), not a study.
MAX_TRIALS = 100_000


def _check_whole(name: str, value, least: int, most: int | None = None) -> None:
    """Raise ParameterError unless ``value`` is a whole number (not a bool) >= ``least`` (and <= ``most``)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ParameterError(f"{name} must be a whole number >= {least}, got {value!r}")
    if most is not None and value > most:
        raise ParameterError(f"{name} must be at most {most:,}, got {value:,}")


@dataclass(frozen=True)
class _Task:
    data: int  # index into the loaded trees
    methods: tuple[str, ...]
    epsilons: tuple[float, ...]  # per level
    consistency: str
    merge: str
    trial: int
    seed: int
    max_size: int
    p: int | None


def trial_seed(seed: int, trial: int) -> tuple[int, int]:
    """The fast sampler's seed of trial ``trial``: its noise streams are keyed by (seed, trial, level, node)."""
    return int(seed), int(trial)


# ------------------------------------------------ the Release error methods (the only calls)
def release_node_errors(release, tree: Hierarchy) -> pd.DataFrame:
    """The per-node error rows of ``release`` of ``tree``: :func:`cocoviz.evaluate` with its ``epsilon``
    renamed ``level_epsilon``, plus ``level_name``.
    """
    errors = evaluate(tree, release).rename(columns={"epsilon": "level_epsilon"})
    names = np.array(["(root)", *tree.levels], dtype=object)
    errors["level_name"] = names[errors["level"].to_numpy()]
    return errors


def release_error_by_size(release, tree: Hierarchy) -> np.ndarray:
    """``|Ĥc[s] − Hc[s]|`` at the root of ``release``, by size s."""
    return size_errors(tree, release, ())


# ---------------------------------------------------------------------- tasks
def _sweep_task(task: _Task, trees: Sequence[Hierarchy], keys: Sequence[str]) -> pd.DataFrame:
    tree = trees[task.data]
    release = estimate(
        tree,
        epsilons=list(task.epsilons),
        methods=list(task.methods),
        p=task.p,
        max_size=task.max_size,
        consistency=task.consistency,
        merge=task.merge,
        seed=trial_seed(task.seed, task.trial),
    )
    errors = release_node_errors(release, tree)
    errors["dataset"] = keys[task.data]
    errors["mix"] = mix_label(task.methods)
    errors["consistency"] = task.consistency
    errors["merge"] = task.merge if task.consistency == "top-down" else NO_MERGE
    errors["epsilon"] = task.epsilons[0]
    errors["total_epsilon"] = math.fsum(task.epsilons)
    errors["trial"] = task.trial
    return errors[FRAME_COLUMNS]


def _sweep_tasks(sweep: Sweep, trees: Sequence[Hierarchy], keys: Sequence[str]) -> list[_Task]:
    max_size = DEFAULT_MAX_SIZE if sweep.max_size is None else int(sweep.max_size)
    tasks = []
    for d, tree in enumerate(trees):
        n_levels = tree.depth + 1
        for mix in sweep.mixes:
            methods = methods_for(mix, n_levels, keys[d])
            for eps in sweep.epsilons:
                per_level = eps if sweep.budget == "per-level" else eps / n_levels
                for consistency in sweep.consistencies:
                    merges = sweep.merges if consistency == "top-down" else sweep.merges[:1]
                    for merge in merges:
                        for trial in range(sweep.trials):
                            tasks.append(
                                _Task(
                                    d,
                                    methods,
                                    (per_level,) * n_levels,
                                    consistency,
                                    merge,
                                    trial,
                                    int(sweep.seed),
                                    max_size,
                                    sweep.p,
                                )
                            )
    return tasks


# ------------------------------------------------------------------ execution
_WORKER_TREES: list[Hierarchy] = []
_WORKER_KEYS: list[str] = []


def _init_worker(trees: list[Hierarchy], keys: list[str]) -> None:
    global _WORKER_TREES, _WORKER_KEYS
    _WORKER_TREES, _WORKER_KEYS = trees, keys


def _call_in_worker(fn, task):
    return fn(task, _WORKER_TREES, _WORKER_KEYS)


def default_workers() -> int:
    """Both cores when there are two (the machine this was written for), else one."""
    return max(1, min(2, os.cpu_count() or 1))


def execute(
    fn,
    tasks: list,
    trees: list[Hierarchy],
    keys: list[str],
    workers: int | None,
    progress: Progress | None,
    client=None,
    journal: str | os.PathLike | None = None,
) -> list:
    """``fn(task, trees, keys)`` for every task, in task order; ``workers`` > 1 uses processes, a Dask
    ``client`` its cluster (:func:`cocoviz.pipeline.distributed.map_tasks`).

    With a ``journal`` folder every result is recorded there as it finishes, and the results a killed
    run recorded are taken from it instead of being computed again (:mod:`cocoviz.experiments.journal`).
    """
    results: list = [None] * len(tasks)
    book = None
    recorded: dict[int, object] = {}
    if journal is not None:
        book = Journal(journal, sweep_key(fn, tasks, trees, keys))
        recorded = {k: r for k, r in book.load().items() if k < len(tasks)}
    for k, result in recorded.items():
        results[k] = result
    todo = [k for k in range(len(tasks)) if k not in recorded]
    total, first = len(tasks), len(recorded)

    def finish(k: int, result, done: int) -> None:
        results[k] = result
        if book is not None:
            book.record(k, result)
        if progress is not None:
            progress(first + done, total)

    if client is not None:
        from cocoviz.pipeline.distributed import map_tasks

        shown = None if progress is None else (lambda done, _: progress(first + done, total))
        computed = map_tasks(client, fn, [tasks[k] for k in todo], (list(trees), list(keys)), shown)
        for k, result in zip(todo, computed):  # a cluster's results are recorded when all are back
            results[k] = result
            if book is not None:
                book.record(k, result)
        return results
    workers = default_workers() if workers is None else workers
    _check_whole("workers", workers, 1)
    if progress is not None:
        progress(first, total)
    if workers == 1 or len(todo) <= 1:
        for done, k in enumerate(todo, 1):
            finish(k, fn(tasks[k], trees, keys), done)
        return results
    # "spawn": a fresh interpreter per worker, safe from any host process's threads
    # (the dashboard's); the trees are sent once per worker, not once per task.
    pool = ProcessPoolExecutor(
        max_workers=min(int(workers), len(todo)),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_worker,
        initargs=(list(trees), list(keys)),
    )
    try:
        pending = {pool.submit(_call_in_worker, fn, tasks[k]): k for k in todo}
        done = 0
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                done += 1
                finish(pending.pop(future), future.result(), done)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return results


def load_all(datasets: Sequence[Data], loader: Loader | None) -> tuple[list[Hierarchy], list[str]]:
    """Every dataset loaded (through ``loader`` when given) and its key, in order."""
    return [d.load(loader) for d in datasets], [d.key for d in datasets]


def run_sweep(
    sweep: Sweep,
    *,
    progress: Progress | None = None,
    workers: int | None = 1,
    loader: Loader | None = None,
    client=None,
    journal: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """Run every release of ``sweep``: one row per (dataset, mix, ε, consistency, merge, trial, node).

    Parameters
    ----------
    sweep : Sweep
    progress : called as ``progress(done, total)`` with releases done (from this process)
    workers : processes (1 = inline, None = both cores); results do not depend on it
    loader : ``loader(name, scale=, seed=)`` → Hierarchy, instead of ``cocoviz.datasets.load_dataset``
    client : a ``dask.distributed.Client``: each release is a task on its cluster (``workers`` unused);
        results do not depend on it
    journal : a folder where every finished release is recorded as it finishes; a rerun of the same
        sweep with the same folder (after a kill) takes those from it and runs only the others, and
        returns the same frame as an uninterrupted run

    Returns
    -------
    DataFrame with :data:`FRAME_COLUMNS`: ``epsilon`` is ε per level,
    ``total_epsilon`` their sum, ``level_epsilon`` what the level's own
    measurements spent (the total, at the leaves, for bottom-up), ``emd`` the
    node's error and ``omniscient`` the reference G/level_epsilon.
    """
    trees, keys = load_all(sweep.datasets, loader)
    tasks = _sweep_tasks(sweep, trees, keys)
    frames = execute(_sweep_task, tasks, trees, keys, workers, progress, client, journal)
    frame = pd.concat(frames, ignore_index=True)
    frame["emd"] = frame["emd"].astype(np.int64)
    return frame


def summarize(frame: pd.DataFrame, by: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean emd per node of a level, over trials, with its standard error.

    For every group of ``by`` (default: dataset, mix, consistency, merge,
    epsilon, total_epsilon, level, level_name, those present) and every
    trial, the emd is first averaged over the nodes of the level; ``mean`` is
    the mean of those per-trial values over trials, ``sd`` their sample
    standard deviation (ddof = 1) and ``se = sd / √trials`` (NaN for one
    trial).  ``nodes`` is the number of nodes per trial; ``groups`` (G),
    ``sizes`` (distinct sizes D) and ``omniscient`` (D/ε) are averaged over
    nodes like the emd (NaN when the frame lacks them).
    """
    keys = [k for k in (by if by is not None else SUMMARY_KEYS) if k in frame.columns]
    if frame.empty:
        return pd.DataFrame(columns=[*keys, *SUMMARY_COLUMNS])
    extra = [c for c in ("groups", "sizes", "omniscient") if c in frame.columns]
    per_trial = (
        frame.groupby([*keys, "trial"], sort=False, dropna=False)
        .agg(emd=("emd", "mean"), nodes=("emd", "size"), **{c: (c, "mean") for c in extra})
        .reset_index()
    )
    out = (
        per_trial.groupby(keys, sort=False, dropna=False)
        .agg(
            mean=("emd", "mean"),
            sd=("emd", "std"),
            trials=("emd", "size"),
            nodes=("nodes", "max"),
            **{c: (c, "mean") for c in extra},
        )
        .reset_index()
    )
    out["se"] = out["sd"] / np.sqrt(out["trials"])
    return out.reindex(columns=[*keys, *SUMMARY_COLUMNS])
