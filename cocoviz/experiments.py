"""Reproduce the paper's experiments: sweeps of releases, their summaries, tables and figures.

A :class:`Sweep` is the cross product datasets × method mixes × ε × merges ×
consistencies × trials.  :func:`run_sweep` runs one release per combination
and returns a tidy frame (one row per trial, level and node, with its emd);
:func:`summarize` turns it into the paper's error bars.  :data:`EXPERIMENTS`
names the paper's Tables 3 and 4 and Figures 1, 4, 5 and 6, each built on
these two functions; :func:`run_experiment` runs one and writes its CSVs,
markdown table and figures (``python -m cocoviz experiment <name>``).

**What is averaged** (the paper, §6.2: "emd ... per node in the level", then
"averaged across 10 runs", error bars "the empirical standard deviation ...
divided by √10"): for every trial, the emd of the nodes of a level is
averaged over those nodes; the summary is the mean of these per-trial values
over trials, and its standard error the sample standard deviation (ddof = 1)
over trials divided by √trials.

**Seeds.** Trial ``t`` of a sweep with seed ``s`` draws its noise from
``numpy.random.SeedSequence(s).spawn(trials)[t]`` (equivalently
``SeedSequence(s, spawn_key=(t,))``), whatever the dataset, mix, ε, merge or
consistency and whatever the number of workers.  Trials are therefore
independent and reproducible from one seed, a result does not change when
the sweep grows, and configurations that measure alike within one trial
(weighted vs. average merge, top-down vs. no consistency) see the *same*
noisy measurements: their comparison is paired (common random numbers),
which removes the measurement noise from their difference.  Each
configuration's own mean and standard error are unaffected.

**Workers.** ``workers=1`` runs inline (tests, the dashboard); ``workers=2``
runs releases in two "spawn" processes (safe in a threaded host), which load
the trees once each.  Spawned workers import the calling script's main
module, so a script that calls with ``workers > 1`` needs the usual
``if __name__ == "__main__":`` guard (``python -m cocoviz`` has it).

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> counts = pd.DataFrame({"s": ["a", "a", "b"], "size": [1, 3, 2], "count": [5, 2, 4]})
>>> tree = Hierarchy.from_counts(counts, size="size", count="count", levels=["s"])
>>> frame = run_sweep(Sweep(datasets=[Data("toy-ab", tree=tree)], mixes=["Hc×Hg"], epsilons=[1.0],
...                         trials=2, max_size=10))
>>> sorted(frame.columns) == sorted(FRAME_COLUMNS), len(frame)   # 2 trials × 3 nodes
(True, 6)
>>> summarize(frame)[["level", "trials", "nodes"]].to_dict("list")
{'level': [0, 1], 'trials': [2, 2], 'nodes': [1, 2]}
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from cocoviz.consistency import MERGES
from cocoviz.estimators import METHODS
from cocoviz.datasets.geography import WEST_COAST  # the states of the paper's 3-level "West Coast" cut
from cocoviz.hierarchy import Hierarchy
from cocoviz.release import CONSISTENCY, DEFAULT_MAX_SIZE, estimate

__all__ = [
    "Data", "Sweep", "run_sweep", "summarize", "run_error_by_size", "summarize_error_by_size",
    "regional_cut", "mix_label", "parse_mix", "Experiment", "ExperimentResult", "EXPERIMENTS",
    "experiment_names", "run_experiment", "FRAME_COLUMNS", "SUMMARY_COLUMNS", "WEST_COAST",
]

#: Columns of :func:`run_sweep`'s frame, in order.
FRAME_COLUMNS = ["dataset", "mix", "consistency", "merge", "epsilon", "total_epsilon", "trial", "level",
                 "level_name", "node", "groups", "sizes", "emd", "level_epsilon", "omniscient"]
#: Keys :func:`summarize` groups by (those present in the frame).
SUMMARY_KEYS = ["dataset", "mix", "consistency", "merge", "epsilon", "total_epsilon", "level", "level_name"]
#: Columns of :func:`summarize`'s output after the keys.
SUMMARY_COLUMNS = ["mean", "se", "sd", "trials", "nodes", "groups", "sizes", "omniscient"]

#: Separator of per-level methods in a mix label, as in the paper ("Hc×Hg").
MIX_SEPARATOR = "×"
#: The merge recorded for consistencies that do not merge ("none", "bottom-up"); not an NA
#: marker of pandas.read_csv (which "n/a" would be).
NO_MERGE = "no merge"

Progress = Callable[[int, int], None]
Loader = Callable[..., Hierarchy]


# =========================================================================== data
def _default_loader(name: str, *, scale: float | None = None, seed: int = 0) -> Hierarchy:
    try:
        from cocoviz.datasets import load_dataset
    except ImportError as exc:  # pragma: no cover - the datasets module ships with the package
        raise ValueError(f"cannot load dataset {name!r}: cocoviz.datasets is not available ({exc})") from None
    return load_dataset(name, scale=scale, seed=seed)


_TREE_CACHE: dict[tuple, Hierarchy] = {}
_TREE_CACHE_SIZE = 8


def regional_cut(tree: Hierarchy, regions: Sequence[str]) -> Hierarchy:
    """The part of ``tree`` under the given level-1 nodes, with a new root above them.

    The paper's West Coast cut: ``regional_cut(national, ("CA", "OR", "WA"))``
    keeps the states' levels below a root that is the three states together.
    """
    if tree.depth < 1:
        raise ValueError("a regional cut needs a hierarchy with at least one level below the root")
    regions = [str(r) for r in regions]
    present = {p[0] for p in tree.nodes(1)}
    missing = [r for r in regions if r not in present]
    if missing or not regions:
        raise ValueError(f"regional cut: no node(s) {missing or regions} at level 1 '{tree.levels[0]}'")
    wanted = set(regions)
    parts = []
    for path in tree.nodes(tree.depth):
        if path[0] in wanted:
            sizes, counts = tree.node_runs(path)
            part = pd.DataFrame({"__size": sizes, "__count": counts})
            for i, level in enumerate(tree.levels):
                part[level] = path[i]
            parts.append(part)
    return Hierarchy.from_counts(pd.concat(parts, ignore_index=True), size="__size", count="__count",
                                 levels=list(tree.levels))


@dataclass(frozen=True)
class Data:
    """One dataset of a sweep: a bundled dataset by name, or a given Hierarchy.

    Parameters
    ----------
    name : bundled dataset name (``cocoviz.datasets.dataset_names()``), or a label for ``tree``
    scale, seed : passed to ``load_dataset`` (None = the bundled scale)
    regions : keep only these level-1 nodes under a new root (e.g. :data:`WEST_COAST`)
    depth : keep only the first ``depth`` levels below the root (0 = the root alone)
    label : the name shown in results (default: ``name``, with ``-west`` for a West Coast cut)
    tree : a Hierarchy to use instead of loading ``name``
    """

    name: str
    scale: float | None = None
    seed: int = 0
    regions: tuple[str, ...] | None = None
    depth: int | None = None
    label: str | None = None
    tree: Hierarchy | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.regions is not None:
            object.__setattr__(self, "regions", tuple(str(r) for r in self.regions))
        if self.depth is not None and (isinstance(self.depth, bool) or int(self.depth) != self.depth
                                       or self.depth < 0):
            raise ValueError(f"depth must be a whole number >= 0, got {self.depth!r}")

    @property
    def key(self) -> str:
        """The dataset's name in results."""
        if self.label:
            return self.label
        if self.regions is not None and tuple(self.regions) == WEST_COAST:
            return f"{self.name}-west"
        return self.name

    def load(self, loader: Loader | None = None) -> Hierarchy:
        """The hierarchy, cut and trimmed as specified (bundled data is cached per process)."""
        cache_key = (self.name, self.scale, self.seed, self.regions, self.depth)
        use_cache = self.tree is None and loader is None
        if use_cache and cache_key in _TREE_CACHE:
            return _TREE_CACHE[cache_key]
        if self.tree is not None:
            tree = self.tree
        else:
            tree = (loader or _default_loader)(self.name, scale=self.scale, seed=self.seed)
        if self.regions is not None:
            tree = regional_cut(tree, self.regions)
        if self.depth is not None:
            if self.depth > tree.depth:
                raise ValueError(f"dataset {self.key!r} has {tree.depth} level(s) below the root, "
                                 f"cannot keep {self.depth}")
            tree = tree.keep_levels(list(tree.levels[:self.depth]))
        if use_cache:
            if len(_TREE_CACHE) >= _TREE_CACHE_SIZE:
                _TREE_CACHE.pop(next(iter(_TREE_CACHE)))
            _TREE_CACHE[cache_key] = tree
        return tree


def _as_data(item, k: int) -> Data:
    if isinstance(item, Data):
        return item
    if isinstance(item, str):
        return Data(item)
    if isinstance(item, Hierarchy):
        return Data(f"data{k}", tree=item)
    raise ValueError(f"a dataset must be a name, a Data or a Hierarchy, got {type(item).__name__}")


# ========================================================================== mixes
def parse_mix(mix: str | Sequence[str]) -> tuple[str, ...]:
    """A method mix as a tuple, one method per level; a single method means every level.

    >>> parse_mix("Hc×Hg"), parse_mix("Hg*Hg"), parse_mix(["Hc", "Hc"]), parse_mix("Hc")
    (('Hc', 'Hg'), ('Hg', 'Hg'), ('Hc', 'Hc'), ('Hc',))
    """
    if isinstance(mix, str):
        text = mix
        for sep in ("*", "x", ",", " "):
            text = text.replace(sep, MIX_SEPARATOR)
        parts = tuple(p for p in text.split(MIX_SEPARATOR) if p)
    else:
        parts = tuple(str(m) for m in mix)
    if not parts:
        raise ValueError(f"empty method mix {mix!r}")
    for m in parts:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r} in mix {mix!r}; methods are {METHODS}")
    return parts


def mix_label(methods: Sequence[str]) -> str:
    """``("Hc", "Hg")`` → ``"Hc×Hg"``."""
    return MIX_SEPARATOR.join(methods)


def _methods_for(mix: tuple[str, ...], n_levels: int, dataset: str) -> tuple[str, ...]:
    if len(mix) == 1:
        return mix * n_levels
    if len(mix) != n_levels:
        raise ValueError(f"mix {mix_label(mix)} has {len(mix)} methods but dataset {dataset!r} has "
                         f"{n_levels} levels (the root and {n_levels - 1} below it)")
    return mix


# ========================================================================== sweep
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
    merges : "weighted" and/or "average" (only top-down merges; the others record "n/a")
    consistencies : "top-down", "bottom-up" (the whole budget on the leaves) and/or "none"
    trials : independent repetitions
    seed : the root of every trial's noise stream (see the module docstring)
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
        datasets = tuple(_as_data(d, k) for k, d in enumerate(self.datasets))
        if not datasets:
            raise ValueError("a sweep needs at least one dataset")
        keys = [d.key for d in datasets]
        if len(set(keys)) != len(keys):
            raise ValueError(f"dataset names must be distinct, got {keys}")
        mixes = tuple(parse_mix(m) for m in ([self.mixes] if isinstance(self.mixes, str) else self.mixes))
        epsilons = tuple(float(e) for e in self.epsilons)
        merges = tuple(self.merges)
        consistencies = tuple(self.consistencies)
        for name, values in (("mixes", mixes), ("epsilons", epsilons), ("merges", merges),
                             ("consistencies", consistencies)):
            if not values:
                raise ValueError(f"a sweep needs at least one of {name}")
        for e in epsilons:
            if not (math.isfinite(e) and e > 0):
                raise ValueError(f"every ε must be a finite number > 0, got {e!r}")
        for m in merges:
            if m not in MERGES:
                raise ValueError(f"merge must be one of {MERGES}, got {m!r}")
        for c in consistencies:
            if c not in CONSISTENCY:
                raise ValueError(f"consistency must be one of {CONSISTENCY}, got {c!r}")
        if self.budget not in ("per-level", "total"):
            raise ValueError(f"budget must be 'per-level' or 'total', got {self.budget!r}")
        if isinstance(self.trials, bool) or not isinstance(self.trials, (int, np.integer)) or self.trials < 1:
            raise ValueError(f"trials must be a whole number >= 1, got {self.trials!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"seed must be a whole number >= 0, got {self.seed!r}")
        for name, value in (("datasets", datasets), ("mixes", mixes), ("epsilons", epsilons),
                            ("merges", merges), ("consistencies", consistencies)):
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class _Task:
    data: int                       # index into the loaded trees
    methods: tuple[str, ...]
    epsilons: tuple[float, ...]     # per level
    consistency: str
    merge: str
    trial: int
    seed: int
    max_size: int
    p: int | None


def trial_rng(seed: int, trial: int) -> np.random.Generator:
    """The generator of trial ``trial``: ``SeedSequence(seed).spawn(...)[trial]``."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(int(trial),)))


def _level_names(tree: Hierarchy) -> list[str]:
    return ["(root)", *tree.levels]


def _sweep_task(task: _Task, trees: Sequence[Hierarchy], keys: Sequence[str]) -> pd.DataFrame:
    tree = trees[task.data]
    release = estimate(tree, epsilons=list(task.epsilons), methods=list(task.methods), p=task.p,
                       max_size=task.max_size, consistency=task.consistency, merge=task.merge,
                       rng=trial_rng(task.seed, task.trial))
    errors = release.errors().rename(columns={"epsilon": "level_epsilon"})
    names = np.array(_level_names(tree), dtype=object)
    errors["dataset"] = keys[task.data]
    errors["mix"] = mix_label(task.methods)
    errors["consistency"] = task.consistency
    errors["merge"] = task.merge if task.consistency == "top-down" else NO_MERGE
    errors["epsilon"] = task.epsilons[0]
    errors["total_epsilon"] = math.fsum(task.epsilons)
    errors["trial"] = task.trial
    errors["level_name"] = names[errors["level"].to_numpy()]
    # Distinct group sizes D of every node (errors() lists levels in order, nodes in tree order).
    errors["sizes"] = np.concatenate([np.diff(tree.runs(level).ptr) for level in range(tree.depth + 1)])
    return errors[FRAME_COLUMNS]


def _sweep_tasks(sweep: Sweep, trees: Sequence[Hierarchy], keys: Sequence[str]) -> list[_Task]:
    max_size = DEFAULT_MAX_SIZE if sweep.max_size is None else int(sweep.max_size)
    tasks = []
    for d, tree in enumerate(trees):
        n_levels = tree.depth + 1
        for mix in sweep.mixes:
            methods = _methods_for(mix, n_levels, keys[d])
            for eps in sweep.epsilons:
                per_level = eps if sweep.budget == "per-level" else eps / n_levels
                for consistency in sweep.consistencies:
                    merges = sweep.merges if consistency == "top-down" else sweep.merges[:1]
                    for merge in merges:
                        for trial in range(sweep.trials):
                            tasks.append(_Task(d, methods, (per_level,) * n_levels, consistency, merge, trial,
                                               int(sweep.seed), max_size, sweep.p))
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


def _execute(fn, tasks: list, trees: list[Hierarchy], keys: list[str], workers: int | None,
             progress: Progress | None) -> list:
    """``fn(task, trees, keys)`` for every task, in task order; ``workers`` > 1 uses processes."""
    workers = default_workers() if workers is None else workers
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
    total = len(tasks)
    if progress is not None:
        progress(0, total)
    results: list = [None] * total
    if workers == 1 or total <= 1:
        for k, task in enumerate(tasks):
            results[k] = fn(task, trees, keys)
            if progress is not None:
                progress(k + 1, total)
        return results
    # "spawn": a fresh interpreter per worker, safe from any host process's threads
    # (the dashboard's); the trees are sent once per worker, not once per task.
    pool = ProcessPoolExecutor(max_workers=min(int(workers), total),
                               mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker, initargs=(list(trees), list(keys)))
    try:
        pending = {pool.submit(_call_in_worker, fn, task): k for k, task in enumerate(tasks)}
        done = 0
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                results[pending.pop(future)] = future.result()
                done += 1
                if progress is not None:
                    progress(done, total)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return results


def _load_all(datasets: Sequence[Data], loader: Loader | None) -> tuple[list[Hierarchy], list[str]]:
    return [d.load(loader) for d in datasets], [d.key for d in datasets]


def run_sweep(sweep: Sweep, *, progress: Progress | None = None, workers: int | None = 1,
              loader: Loader | None = None) -> pd.DataFrame:
    """Run every release of ``sweep``: one row per (dataset, mix, ε, consistency, merge, trial, node).

    Parameters
    ----------
    sweep : Sweep
    progress : called as ``progress(done, total)`` with releases done (from this process)
    workers : processes (1 = inline, None = both cores); results do not depend on it
    loader : ``loader(name, scale=, seed=)`` → Hierarchy, instead of ``cocoviz.datasets.load_dataset``

    Returns
    -------
    DataFrame with :data:`FRAME_COLUMNS`: ``epsilon`` is ε per level,
    ``total_epsilon`` their sum, ``level_epsilon`` what the level's own
    measurements spent (the total, at the leaves, for bottom-up), ``emd`` the
    node's error and ``omniscient`` the reference G/level_epsilon.
    """
    trees, keys = _load_all(sweep.datasets, loader)
    tasks = _sweep_tasks(sweep, trees, keys)
    frames = _execute(_sweep_task, tasks, trees, keys, workers, progress)
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
    ``sizes`` (distinct sizes D) and ``omniscient`` (G/ε) are averaged over
    nodes like the emd (NaN when the frame lacks them).
    """
    keys = [k for k in (by if by is not None else SUMMARY_KEYS) if k in frame.columns]
    if frame.empty:
        return pd.DataFrame(columns=[*keys, *SUMMARY_COLUMNS])
    extra = [c for c in ("groups", "sizes", "omniscient") if c in frame.columns]
    per_trial = (frame.groupby([*keys, "trial"], sort=False, dropna=False)
                 .agg(emd=("emd", "mean"), nodes=("emd", "size"), **{c: (c, "mean") for c in extra})
                 .reset_index())
    out = (per_trial.groupby(keys, sort=False, dropna=False)
           .agg(mean=("emd", "mean"), sd=("emd", "std"), trials=("emd", "size"), nodes=("nodes", "max"),
                **{c: (c, "mean") for c in extra})
           .reset_index())
    out["se"] = out["sd"] / np.sqrt(out["trials"])
    return out.reindex(columns=[*keys, *SUMMARY_COLUMNS])


# ================================================================ error by size
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
    release = estimate(tree, epsilons=[task.epsilon], methods=[task.method], p=task.p, max_size=task.max_size,
                       consistency="none", rng=trial_rng(task.seed, task.trial))
    return release.error_by_size(())


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


def run_error_by_size(datasets: Sequence, *, methods: Sequence[str] = ("Hg", "Hc"), epsilon: float = 1.0,
                      trials: int = 10, seed: int = 0, max_size: int | None = None, p: int | None = None,
                      progress: Progress | None = None, workers: int | None = 1,
                      loader: Loader | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Error by size ``|Ĥc[s] − Hc[s]|`` at the root of each dataset (paper, Figure 1).

    Every trial estimates the root alone with the whole ``epsilon``.

    Returns
    -------
    (curves, trials) : ``curves`` has columns dataset, method, size, error,
        mean_error: trial 0's curve (as the paper's one-run figure) and the
        mean over trials, at every size where either changes (a step
        function: drawn with ``line_shape="hv"`` it is exact); ``trials`` has
        one row per (dataset, method, trial) with the emd and where its error
        lies (see :func:`summarize_error_by_size`).
    """
    data = [_as_data(d, k) for k, d in enumerate(datasets)]
    trees, keys = _load_all(data, loader)
    max_size = DEFAULT_MAX_SIZE if max_size is None else int(max_size)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r}; methods are {METHODS}")
    tasks = [_SizeTask(d, m, float(epsilon), t, int(seed), max_size, p)
             for d in range(len(trees)) for m in methods for t in range(int(trials))]
    arrays = _execute(_size_task, tasks, trees, keys, workers, progress)
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
            curves.append(pd.DataFrame({"dataset": keys[d], "method": m, "size": sizes,
                                        "error": first[sizes], "mean_error": mean[sizes]}))
            for t, e in enumerate(errs):
                rows.append({"dataset": keys[d], "method": m, "epsilon": float(epsilon), "trial": t,
                             **_error_location(e, h_true)})
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


# ================================================================== formatting
def _num(x: float, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if abs(x) >= 1e5:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def _pm(mean: float, se: float) -> str:
    return f"{_num(mean)} ± {_num(se)}"


def markdown_table(frame: pd.DataFrame) -> str:
    """A DataFrame as a GitHub markdown table (strings as they are, numbers formatted)."""
    cols = list(frame.columns)
    lines = ["| " + " | ".join(str(c) for c in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.itertuples(index=False):
        cells = [v if isinstance(v, str) else _num(float(v)) if isinstance(v, (float, np.floating))
                 else f"{v:,}" if isinstance(v, (int, np.integer)) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _level_label(level: int, name: str) -> str:
    """``0 (root)``, ``1 (state)``."""
    name = str(name)
    return f"{level} {name}" if name.startswith("(") else f"{level} ({name})"


def _panel_labels(summary: pd.DataFrame) -> pd.Series:
    """``level 1: state / half``: one panel per level number, naming every dataset's level there."""
    names = summary.groupby("level")["level_name"].agg(lambda s: " / ".join(dict.fromkeys(map(str, s))))
    return summary["level"].map(lambda k: f"level {k}: {names[k]}")


# ==================================================================== figures
def _sweep_figures(summary: pd.DataFrame, series: Callable[[pd.DataFrame], pd.Series], title: str,
                   *, omniscient: bool = False) -> dict[str, object]:
    """One sweep figure per dataset (plots.sweep_figure: a panel per level, ± standard error)."""
    from cocoviz.plots import sweep_figure

    figures = {}
    for dataset, part in summary.groupby("dataset", sort=False):
        part = part.copy()
        part["series"] = series(part)
        if omniscient:
            ref = part.groupby(["level", "level_name", "epsilon"], sort=False)[["omniscient", "sizes"]].mean()
            ref = ref.reset_index()
            refs = [ref.assign(mean=ref["omniscient"], series="omniscient G/ε"),
                    ref.assign(mean=ref["sizes"] / ref["epsilon"], series="distinct sizes D/ε")]
            part = pd.concat([part, *(r.assign(se=np.nan) for r in refs)], ignore_index=True)
        names = (part.drop_duplicates("level").set_index("level")["level_name"].dropna()
                 if "level_name" in part else pd.Series(dtype=object))
        facet_names = [f"level {k}: {names.get(k, '')}" for k in range(int(part["level"].max()) + 1)]
        figures[dataset] = sweep_figure(part, facet_names=facet_names, title=f"{title} — {dataset}",
                                        y_title="mean emd per node (± s.e.)")
    return figures


def _bar_figure(summary: pd.DataFrame, *, x: str, series: str, facet: str | None, title: str,
                log_y: bool = True, x_title: str | None = None):
    """Grouped bars of ``mean`` with ± ``se``: one bar per ``series`` at every ``x``, a panel per ``facet``."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from cocoviz.plots import SERIES_COLORS

    facets = list(dict.fromkeys(summary[facet])) if facet else [None]
    fig = make_subplots(rows=1, cols=len(facets), subplot_titles=[str(f) for f in facets] if facet else None,
                        horizontal_spacing=0.06)
    names = list(dict.fromkeys(summary[series]))
    for col, f in enumerate(facets, start=1):
        part = summary if f is None else summary[summary[facet] == f]
        for k, name in enumerate(names):
            s = part[part[series] == name]
            color = SERIES_COLORS[k % len(SERIES_COLORS)]
            fig.add_trace(go.Bar(x=s[x].astype(str), y=s["mean"], name=str(name), legendgroup=str(name),
                                 showlegend=col == 1, marker_color=color,
                                 error_y={"type": "data", "array": s["se"].fillna(0).to_numpy(), "visible": True},
                                 hovertemplate=f"{name}<br>%{{x}}: %{{y:,.1f}}<extra></extra>"),
                          row=1, col=col)
    fig.update_layout(barmode="group", title=title, legend={"orientation": "h", "y": -0.2},
                      margin={"t": 70})
    fig.update_yaxes(type="log" if log_y else "linear")
    fig.update_yaxes(title_text="mean emd per node (± s.e.)", col=1)
    if x_title:
        fig.update_xaxes(title_text=x_title)
    return fig


# ================================================================ experiments
@dataclass
class ExperimentResult:
    """What an experiment produced: CSV frames, figures, a markdown report and its parameters."""

    name: str
    frames: dict[str, pd.DataFrame]
    figures: dict[str, object]
    markdown: str
    config: dict
    seconds: float = 0.0

    def write(self, out: str | os.PathLike, *, png: bool | None = None) -> dict[str, list[Path]]:
        """Write ``<out>/<name>/``: every frame as CSV, ``table.md``, ``figures.html``,
        ``config.json`` and (when kaleido works, or ``png=True``) one PNG per figure.

        ``png=None`` tries PNG export and skips it quietly if it is not available.
        Returns the paths written, by kind.
        """
        folder = Path(out) / self.name
        folder.mkdir(parents=True, exist_ok=True)
        written: dict[str, list[Path]] = {"csv": [], "md": [], "html": [], "png": [], "json": []}
        for key, frame in self.frames.items():
            path = folder / f"{key}.csv"
            frame.to_csv(path, index=False)
            written["csv"].append(path)
        path = folder / "table.md"
        path.write_text(self.markdown + "\n", encoding="utf-8")
        written["md"].append(path)
        html = [f"<h1>{self.config.get('title', self.name)}</h1>"]
        for k, (key, fig) in enumerate(self.figures.items()):
            # plotly.js embedded once, so the page works offline.
            html.append(fig.to_html(full_html=False, include_plotlyjs=k == 0))
        path = folder / "figures.html"
        path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><title>" + self.name
                        + "</title></head><body>" + "\n".join(html) + "</body></html>", encoding="utf-8")
        written["html"].append(path)
        if png is not False and self.figures:
            written["png"] = _write_pngs(self.figures, folder, required=bool(png))
        config = dict(self.config, seconds=round(self.seconds, 1), written=sorted(
            str(p.relative_to(folder)) for paths in written.values() for p in paths))
        path = folder / "config.json"
        path.write_text(json.dumps(config, indent=2, default=str) + "\n", encoding="utf-8")
        written["json"].append(path)
        return written


def _write_pngs(figures: Mapping[str, object], folder: Path, *, required: bool) -> list[Path]:
    paths = [folder / f"{_slug(key)}.png" for key in figures]
    try:
        import plotly.io as pio

        pio.write_images(list(figures.values()), paths, width=1200, height=500, scale=1)
    except Exception as exc:  # kaleido missing or no browser: HTML is the figure then
        if required:
            raise ValueError(f"PNG export failed ({type(exc).__name__}: {exc}); install kaleido and a "
                             "Chrome/Chromium, or write HTML only") from exc
        return []
    return paths


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in str(text))


@dataclass(frozen=True)
class Experiment:
    """One of the paper's experiments: its finding, default data and grid, and how to run it."""

    name: str
    title: str
    finding: str
    datasets: tuple[str, ...]
    epsilons: tuple[float, ...]
    build: Callable[..., ExperimentResult] = field(repr=False)

    def run(self, **kwargs) -> ExperimentResult:
        return self.build(self, **kwargs)


#: The paper's datasets, by the base name used to pick them (``--datasets``).
PAPER_DATASETS = ("housing", "white", "hawaiian", "taxi")


def _root_data(name: str, scale, seed) -> Data:
    return Data(name, scale=scale, seed=seed, depth=0)


def _two_level_data(name: str, scale, seed) -> Data:
    return Data(name, scale=scale, seed=seed, depth=1)


def _three_level_data(name: str, scale, seed, whole_country: bool = False) -> Data:
    """The paper's 3-level data: West Coast / state / county (or the whole country), taxi's full geography."""
    if name in ("housing", "white", "hawaiian") and not whole_country:
        return Data(f"{name}-west", scale=scale, seed=seed)
    return Data(name, scale=scale, seed=seed)


def _pick(exp: Experiment, datasets: Sequence[str] | None) -> tuple[str, ...]:
    if datasets is None:
        return exp.datasets
    chosen = tuple(datasets)
    unknown = [d for d in chosen if d not in PAPER_DATASETS]
    if unknown or not chosen:
        raise ValueError(f"unknown dataset(s) {unknown or chosen} for experiment {exp.name}; "
                         f"choose from {PAPER_DATASETS}")
    return chosen


def _common(exp: Experiment, scale, trials, seed, datasets, epsilons, max_size, data_seed=0) -> dict:
    return {"experiment": exp.name, "title": exp.title, "finding": exp.finding, "scale": scale,
            "data_seed": data_seed, "trials": trials, "seed": seed, "datasets": list(_pick(exp, datasets)),
            "epsilons": list(epsilons if epsilons is not None else exp.epsilons),
            "max_size": DEFAULT_MAX_SIZE if max_size is None else max_size,
            "python": platform.python_version(), "numpy": np.__version__, "pandas": pd.__version__}


def _paired_wins(summary: pd.DataFrame, column: str, better: str, worse: str, keys: Sequence[str],
                 ignore: Sequence[str] = ()) -> pd.DataFrame:
    """Per ``keys``: in how many cells ``better`` had the lower mean than ``worse``, and the median ratio.

    A cell is one value of every other key column (mix, ε, ...), minus ``ignore``.
    """
    index = [c for c in summary.columns if c not in (column, *ignore, *SUMMARY_COLUMNS)]
    wide = summary.pivot_table(index=index, columns=column, values="mean", aggfunc="first").reset_index()
    wide["ratio"] = wide[worse] / wide[better]
    return (wide.groupby(list(keys), sort=False)
            .agg(cells=("ratio", "size"), wins=("ratio", lambda r: int((r > 1).sum())),
                 median_ratio=("ratio", "median"), min_ratio=("ratio", "min"), max_ratio=("ratio", "max"))
            .reset_index())


# ---------------------------------------------------------------- Table 3
#: The paper's Table 3 (slides): mean emd at the top level, ε = 1.0: naive, Hc, Hg, on the full data.
PAPER_TABLE3 = {"housing": (4_462_728_374, 3_742.0, 2_219.6), "white": (4_809_679_734, 1_838.9, 6_115.3),
                "hawaiian": (4_027_891_692, 254.0, 516.2), "taxi": (208_977_518.4, 2_819.8, 11_227.6)}
def _table3(exp: Experiment, *, scale=None, trials=10, seed=0, workers=1, progress=None, datasets=None,
            epsilons=None, max_size=None, loader=None, data_seed=0,
            whole_country=False) -> ExperimentResult:
    config = _common(exp, scale, trials, seed, datasets, epsilons, max_size, data_seed)
    sweep = Sweep(datasets=[_root_data(d, scale, data_seed) for d in config["datasets"]],
                  mixes=["naive", "Hc", "Hg"], epsilons=config["epsilons"], consistencies=["none"],
                  trials=trials, seed=seed, max_size=max_size)
    frame = run_sweep(sweep, progress=progress, workers=workers, loader=loader)
    summary = summarize(frame)
    rows = []
    for eps in sweep.epsilons:
        for mix in ("naive", "Hc", "Hg"):
            part = summary[(summary["mix"] == mix) & (summary["epsilon"] == eps)].set_index("dataset")
            rows.append({"ε": f"{eps:g}", "method": mix,
                         **{d: _pm(part.at[d, "mean"], part.at[d, "se"]) for d in config["datasets"]}})
    if 1.0 in sweep.epsilons:
        for k, mix in enumerate(("naive", "Hc", "Hg")):
            rows.append({"ε": "1", "method": f"{mix} (paper, full data)",
                         **{d: _num(PAPER_TABLE3[d][k]) for d in config["datasets"]}})
    table = pd.DataFrame(rows)
    wide = summary.pivot_table(index=["dataset", "epsilon"], columns="mix", values="mean").reset_index()
    wide["naive / best of Hc, Hg"] = wide["naive"] / wide[["Hc", "Hg"]].min(axis=1)
    wide["Hg / Hc"] = wide["Hg"] / wide["Hc"]
    first = summary.drop_duplicates("dataset").set_index("dataset")
    wide.insert(1, "groups G", wide["dataset"].map(first["groups"]).astype(np.int64))
    wide.insert(2, "distinct sizes D", wide["dataset"].map(first["sizes"]).astype(np.int64))
    wide["D/ε"] = wide["distinct sizes D"] / wide["epsilon"]
    wide["best of Hc, Hg / (D/ε)"] = wide[["Hc", "Hg"]].min(axis=1) / wide["D/ε"]
    md = "\n\n".join([
        f"Mean emd of the root (± standard error over {trials} trials), whole ε at the root, K = "
        f"{config['max_size']:,}:", markdown_table(table),
        "Ratios of the means, and the root's number of distinct group sizes D against the best method:",
        markdown_table(wide[["dataset", "groups G", "distinct sizes D", "epsilon", "naive / best of Hc, Hg",
                             "Hg / Hc", "D/ε", "best of Hc, Hg / (D/ε)"]])])
    fig = _bar_figure(summary.rename(columns={"mix": "method"}), x="dataset", series="method", facet=None,
                      title="Table 3: naive vs. Hc vs. Hg at the top level (log scale)")
    return ExperimentResult(exp.name, {"trials": frame, "summary": summary, "ratios": wide},
                            {"table3": fig}, md, config)


# ---------------------------------------------------------------- Figure 4
TWO_LEVEL_MIXES = ("Hc×Hc", "Hc×Hg", "Hg×Hc", "Hg×Hg")


def _run_grid(config: dict, data: Sequence[Data], *, trials, seed, max_size, workers, progress, loader,
              **grid) -> pd.DataFrame:
    """Run the sweep of ``data`` × ``grid`` (mixes, merges, consistencies, budget) with the config's ε grid."""
    sweep = Sweep(datasets=list(data), epsilons=config["epsilons"], trials=trials, seed=seed, max_size=max_size,
                  **grid)
    return run_sweep(sweep, progress=progress, workers=workers, loader=loader)


def _figure4(exp: Experiment, *, scale=None, trials=10, seed=0, workers=1, progress=None, datasets=None,
             epsilons=None, max_size=None, loader=None, data_seed=0,
             whole_country=False) -> ExperimentResult:
    config = _common(exp, scale, trials, seed, datasets, epsilons, max_size, data_seed)
    frame = _run_grid(config, [_two_level_data(d, scale, data_seed) for d in config["datasets"]],
                      mixes=TWO_LEVEL_MIXES, merges=list(("weighted", "average")), trials=trials, seed=seed, max_size=max_size, workers=workers, progress=progress, loader=loader)
    summary = summarize(frame)
    wins = _paired_wins(summary, "merge", "weighted", "average", ["dataset", "level", "level_name"])
    overall = _paired_wins(summary, "merge", "weighted", "average", ["level", "level_name"])
    index = ["dataset", "level", "level_name", "mix", "epsilon"]
    wide = summary.pivot_table(index=index, columns="merge", values="mean", aggfunc="first").reset_index()
    wide["average / weighted"] = wide["average"] / wide["weighted"]
    ratio = wide.pivot_table(index=["dataset", "level", "level_name", "mix"], columns="epsilon",
                             values="average / weighted", aggfunc="first")
    ratio.columns = [f"ε={c:g}" for c in ratio.columns]
    ratio = ratio.reset_index()
    ratio.insert(1, "level", [_level_label(lv, n) for lv, n in zip(ratio.pop("level"), ratio.pop("level_name"))])
    for t in (wins, overall):
        t.insert(0, "level", [_level_label(lv, n) for lv, n in zip(t.pop("level"), t.pop("level_name"))])
    md = "\n\n".join([
        "Cells where the weighted merge had the lower mean emd than the plain average (a cell = one mix "
        "and one ε), and the ratio average / weighted of the means (> 1: weighted is better):",
        markdown_table(overall.rename(columns={"cells": "cells", "wins": "weighted better"})),
        "By dataset:", markdown_table(wins.rename(columns={"wins": "weighted better"})),
        "Ratio average / weighted of the mean emd per node, by mix and ε per level:", markdown_table(ratio)])
    figures = _sweep_figures(summary, lambda s: s["mix"] + " " + s["merge"],
                             "Figure 4: weighted vs. plain average merge")
    return ExperimentResult(exp.name, {"trials": frame, "summary": summary, "ratios": wide},
                            figures, md, config)


# ---------------------------------------------------------------- Figure 5
def _best_counts(table: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Per (dataset, level): how many ε of the grid each series had the lowest mean."""
    counts = pd.crosstab([table["dataset"], table["level"]], table["best"])
    counts = counts.reindex(columns=list(order), fill_value=0)
    counts = counts.reindex(pd.MultiIndex.from_frame(table[["dataset", "level"]].drop_duplicates()))
    counts.columns.name = None
    return counts.reset_index()


def _best_table(summary: pd.DataFrame, series_col: str, order: Sequence[str]) -> pd.DataFrame:
    """Rows (dataset, level, ε), a column per series with mean ± se (the lowest mean in bold), omniscient G/ε."""
    rows = []
    for (dataset, level, name, eps), part in summary.groupby(["dataset", "level", "level_name", "epsilon"],
                                                             sort=False):
        part = part.set_index(series_col)
        best = part["mean"].idxmin()
        row = {"dataset": dataset, "level": _level_label(level, name), "ε/level": f"{eps:g}"}
        for s in order:
            if s in part.index:
                cell = _pm(part.at[s, "mean"], part.at[s, "se"])
                row[s] = f"**{cell}**" if s == best else cell
        row["omniscient G/ε"] = _num(float(part["omniscient"].mean()))
        row["D/ε"] = _num(float(part["sizes"].mean()) / float(eps))
        row["best"] = best
        rows.append(row)
    return pd.DataFrame(rows)


def _figure5(exp: Experiment, *, scale=None, trials=10, seed=0, workers=1, progress=None, datasets=None,
             epsilons=None, max_size=None, loader=None, data_seed=0,
             whole_country=False) -> ExperimentResult:
    config = _common(exp, scale, trials, seed, datasets, epsilons, max_size, data_seed)
    frame = _run_grid(config, [_two_level_data(d, scale, data_seed) for d in config["datasets"]],
                      mixes=TWO_LEVEL_MIXES, merges=list(("weighted",)), trials=trials, seed=seed, max_size=max_size, workers=workers, progress=progress, loader=loader)
    summary = summarize(frame)
    table = _best_table(summary, "mix", TWO_LEVEL_MIXES)
    counts = _best_counts(table, TWO_LEVEL_MIXES)
    uniform = _paired_wins(summary[summary["mix"].isin(["Hc×Hc", "Hg×Hg"])], "mix", "Hc×Hc", "Hg×Hg",
                           ["dataset", "level", "level_name"])
    uniform.insert(1, "level", [_level_label(lv, n) for lv, n in zip(uniform.pop("level"),
                                                                      uniform.pop("level_name"))])
    md = "\n\n".join([
        "How often each mix had the lowest mean emd over the ε grid (top-down, weighted merge):",
        markdown_table(counts),
        "Hc against Hg at every level (Hc×Hc vs. Hg×Hg): cells (ε values) where Hc×Hc had the lower mean, "
        "and the ratio Hg×Hg / Hc×Hc of the means (> 1: Hc is better):",
        markdown_table(uniform.rename(columns={"wins": "Hc×Hc better"})),
        f"Mean emd per node ± standard error over {trials} trials (lowest in bold); the references, averaged "
        "over the nodes of the level: omniscient G/ε (METHOD.md) and D/ε (D = the node's distinct group sizes):",
        markdown_table(table.drop(columns="best"))])
    figures = _sweep_figures(summary, lambda s: s["mix"], "Figure 5: 2-level top-down consistency",
                             omniscient=True)
    return ExperimentResult(exp.name, {"trials": frame, "summary": summary}, figures, md, config)


# ---------------------------------------------------------------- Figure 6
def _figure6(exp: Experiment, *, scale=None, trials=10, seed=0, workers=1, progress=None, datasets=None,
             epsilons=None, max_size=None, loader=None, data_seed=0,
             whole_country=False) -> ExperimentResult:
    config = _common(exp, scale, trials, seed, datasets, epsilons, max_size, data_seed)
    config["whole_country"] = whole_country
    frame = _run_grid(config, [_three_level_data(d, scale, data_seed, whole_country) for d in config["datasets"]], mixes=["Hc", "Hg"],
                      consistencies=["top-down", "none"], merges=["weighted"], trials=trials, seed=seed, max_size=max_size, workers=workers, progress=progress, loader=loader)
    summary = summarize(frame)
    summary["series"] = summary["mix"] + " " + summary["consistency"]
    order = ["Hc×Hc×Hc top-down", "Hc×Hc×Hc none", "Hg×Hg×Hg top-down", "Hg×Hg×Hg none"]
    table = _best_table(summary, "series", order)
    counts = _best_counts(table, order)
    wins = _paired_wins(summary.drop(columns="series"), "consistency", "top-down", "none",
                        ["dataset", "mix", "level", "level_name"], ignore=("merge",))
    wins.insert(2, "level", [_level_label(lv, n) for lv, n in zip(wins.pop("level"), wins.pop("level_name"))])
    md = "\n\n".join([
        "How often each series had the lowest mean emd over the ε grid:", markdown_table(counts),
        "Top-down consistency against independent estimates (same noise, paired): cells where top-down "
        "had the lower mean, and the ratio none / top-down (> 1: consistency helped):",
        markdown_table(wins.rename(columns={"wins": "top-down better"})),
        f"Mean emd per node ± standard error over {trials} trials (lowest in bold); references as in figure5:",
        markdown_table(table.drop(columns="best"))])
    figures = _sweep_figures(summary.drop(columns="series"), lambda s: s["mix"] + " " + s["consistency"],
                             "Figure 6: 3 levels with and without consistency", omniscient=True)
    return ExperimentResult(exp.name, {"trials": frame, "summary": summary}, figures, md, config)


# ---------------------------------------------------------------- Table 4
TABLE4_METHODS = {"bottom-up": "BU", "top-down": "Hc top-down", "none": "Hc independent (reference)"}
#: The paper's Table 4 (slides), total ε = 1.0, 3 levels: (BU, Hc top-down) per level, full data.
PAPER_TABLE4 = {
    "housing-west": ((78_459.0, 32_480.0), (1_512.2, 1_000.3), (24.9, 80.1)),
    "white-west": ((448_909.0, 17_000.0), (8_722.0, 1_511.8), (152.3, 363.8)),
    "hawaiian-west": ((13_968.0, 1_381.0), (270.1, 117.7), (4.3, 21.6)),
    "taxi": ((20_731.0, 10_547.0), (10_405.5, 5_431.5), (772.8, 1_601.8)),
}

def _table4(exp: Experiment, *, scale=None, trials=10, seed=0, workers=1, progress=None, datasets=None,
            epsilons=None, max_size=None, loader=None, data_seed=0,
            whole_country=False) -> ExperimentResult:
    config = _common(exp, scale, trials, seed, datasets, epsilons, max_size, data_seed)
    config["whole_country"] = whole_country
    frame = _run_grid(config, [_three_level_data(d, scale, data_seed, whole_country) for d in config["datasets"]], mixes=["Hc"], budget="total",
                      consistencies=["bottom-up", "top-down", "none"], merges=["weighted"], trials=trials, seed=seed, max_size=max_size, workers=workers, progress=progress, loader=loader)
    frames, figures, md = _table4_report(frame)
    return ExperimentResult(exp.name, frames, figures, md, config)


def _table4_report(frame: pd.DataFrame) -> tuple[dict, dict, str]:
    """Table 4's CSV frames, figures and markdown from its sweep frame (also from a saved trials.csv)."""
    trials = int(frame["trial"].nunique())
    summary = summarize(frame)
    summary["method"] = summary["consistency"].map(TABLE4_METHODS)
    datasets = list(summary["dataset"].unique())
    rows = []
    for eps in sorted(summary["total_epsilon"].unique()):
        for level in sorted(summary["level"].unique()):
            for method in TABLE4_METHODS.values():
                part = summary[(summary["total_epsilon"] == eps) & (summary["level"] == level)
                               & (summary["method"] == method)].set_index("dataset")
                rows.append({"total ε": f"{eps:g}", "level": int(level), "method": method,
                             **{d: _pm(part.at[d, "mean"], part.at[d, "se"]) if d in part.index else "–"
                                for d in datasets}})
            if eps == 1.0 and level < 3 and any(d in PAPER_TABLE4 for d in datasets):
                for k, method in enumerate(("BU (paper, full data)", "Hc top-down (paper, full data)")):
                    rows.append({"total ε": "1", "level": int(level), "method": method,
                                 **{d: _num(PAPER_TABLE4[d][level][k]) if d in PAPER_TABLE4 else "–"
                                    for d in datasets}})
    table = pd.DataFrame(rows)
    wide = summary.pivot_table(index=["dataset", "total_epsilon", "level", "level_name"], columns="method",
                               values="mean", aggfunc="first").reset_index()
    wide["BU / top-down"] = wide["BU"] / wide["Hc top-down"]
    wide["independent / top-down"] = wide[TABLE4_METHODS["none"]] / wide["Hc top-down"]
    wide.insert(2, "level", [_level_label(lv, n) for lv, n in zip(wide.pop("level"), wide.pop("level_name"))])
    md = "\n\n".join([
        "Mean emd per node ± standard error over "
        f"{trials} trials; BU = the whole budget on the leaves (Hc), parents are sums; top-down = Hc at every "
        "level with the total split evenly, weighted merge; independent = the same Hc estimates as top-down "
        "without the consistency step (not consistent; a reference):", markdown_table(table),
        "Ratios of the means (BU / top-down > 1: top-down is better):",
        markdown_table(wide[["dataset", "total_epsilon", "level", "BU / top-down", "independent / top-down"]])])
    part = summary.copy()
    part["panel"] = _panel_labels(part)
    figures = {}
    for eps in sorted(summary["total_epsilon"].unique()):
        figures[f"table4-eps{eps:g}"] = _bar_figure(
            part[part["total_epsilon"] == eps], x="dataset", series="method", facet="panel",
            title=f"Table 4: bottom-up vs. top-down Hc, total ε = {eps:g} (log scale)")
    return {"trials": frame, "summary": summary.drop(columns="method"), "ratios": wide}, figures, md


# ---------------------------------------------------------------- Figure 1
def _figure1(exp: Experiment, *, scale=None, trials=10, seed=0, workers=1, progress=None, datasets=None,
             epsilons=None, max_size=None, loader=None, data_seed=0,
             whole_country=False) -> ExperimentResult:
    from cocoviz.plots import error_by_size_figure

    config = _common(exp, scale, trials, seed, datasets, epsilons, max_size, data_seed)
    eps = config["epsilons"][0]
    if len(config["epsilons"]) != 1:
        raise ValueError("figure1 takes one ε")
    curves, per_trial = run_error_by_size([_root_data(d, scale, data_seed) for d in config["datasets"]],
                                          methods=("Hg", "Hc"), epsilon=eps, trials=trials, seed=seed,
                                          max_size=max_size, progress=progress, workers=workers, loader=loader)
    summary = summarize_error_by_size(per_trial)
    table = pd.DataFrame({
        "dataset": summary["dataset"], "method": summary["method"],
        "emd": [_pm(m, s) for m, s in zip(summary["emd"], summary["emd_se"])],
        **{f"{q}% of the error at sizes ≤": [_pm(m, s) for m, s in zip(summary[f"error_p{q}_size"],
                                                                     summary[f"error_p{q}_size_se"])]
           for q in (25, 50, 75)},
        "groups: median / 90th pct. / largest size": [f"{a:,} / {b:,} / {c:,}" for a, b, c in zip(
            summary["group_p50_size"], summary["group_p90_size"], summary["group_max_size"])],
    })
    md = "\n\n".join([
        f"Where the root's error |Ĥc[s] − Hc[s]| lies by size s, whole ε = {eps:g} at the root: the sizes up to "
        f"which 25%, 50% and 75% of the emd has accumulated (mean ± standard error over {trials} trials), "
        "against the sizes of the groups themselves.",
        markdown_table(table)])
    figures = {}
    for dataset, part in curves.groupby("dataset", sort=False):
        errors = {}
        for method, c in part.groupby("method", sort=False):
            full = np.zeros(int(c["size"].max()) + 1, np.int64)
            # Rebuild trial 0's step curve from its change points.
            idx = np.searchsorted(c["size"].to_numpy(), np.arange(len(full)), side="right") - 1
            full[:] = c["error"].to_numpy()[idx]
            errors[method] = full
        figures[dataset] = error_by_size_figure(errors, log_x=True, title=f"Figure 1: error by size (trial 0, "
                                                f"ε = {eps:g}) — {dataset}")
    return ExperimentResult(exp.name, {"curves": curves, "trials": per_trial, "summary": summary},
                            figures, md, config)


#: ε per level of the sweep figures (the paper's grids are not legible in the text).
EPSILON_GRID = (0.1, 0.25, 0.5, 1.0, 2.0)

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in [
    Experiment("table3", "Table 3: naive vs. Hc vs. Hg at the top level, ε = 1.0",
               "Naive is orders of magnitude (billions) worse than Hc and Hg.", PAPER_DATASETS, (1.0,), _table3),
    Experiment("figure4", "Figure 4: weighted vs. plain average merge, 2 levels",
               "The weighted merge beats the plain average at the top level for every budget and mix, "
               "modestly at the second level.", ("housing", "white", "hawaiian"), EPSILON_GRID, _figure4),
    Experiment("figure5", "Figure 5: 2-level top-down consistency, method mixes",
               "No mix dominates; Hc wins on dense data (white), Hg on sparse data with gaps (housing "
               "nationally); the best mix is close to the omniscient G/ε.", ("housing", "white", "hawaiian"),
               EPSILON_GRID, _figure5),
    Experiment("figure6", "Figure 6: 3 levels with and without consistency",
               "No method dominates; Hc-based estimation tends to be much better than Hg overall.",
               PAPER_DATASETS, EPSILON_GRID, _figure6),
    Experiment("table4", "Table 4: bottom-up vs. top-down Hc, total ε = 1.0",
               "Bottom-up is worse at the upper levels and better at the leaves.", PAPER_DATASETS, (1.0,), _table4),
    Experiment("figure1", "Figure 1: error by size, Hg and Hc",
               "Hg's error sits at small sizes; Hc's is spread over the rest.", PAPER_DATASETS, (1.0,), _figure1),
]}


def experiment_names() -> list[str]:
    """The registered experiments, in the order of :data:`EXPERIMENTS`."""
    return list(EXPERIMENTS)


def run_experiment(name: str, *, out: str | os.PathLike | None = None, scale: float | None = None,
                   trials: int = 10, seed: int = 0, workers: int | None = 1, progress: Progress | None = None,
                   datasets: Sequence[str] | None = None, epsilons: Sequence[float] | None = None,
                   max_size: int | None = None, loader: Loader | None = None, data_seed: int = 0,
                   whole_country: bool = False, png: bool | None = None) -> ExperimentResult:
    """Run one named experiment and, with ``out``, write its files to ``<out>/<name>/``.

    Parameters
    ----------
    name : one of :func:`experiment_names`
    scale : dataset scale passed to ``load_dataset`` (None = the bundled scale)
    trials, seed, workers, progress : as :class:`Sweep` and :func:`run_sweep`; ``seed`` seeds the noise
    data_seed : seed of the synthetic data (0 = the bundled files)
    whole_country : 3-level experiments (figure6, table4) on national / state / county instead of
        the paper's West Coast cut (about 3,300 nodes: ~10 s per Hc release)
    datasets : a subset of ``housing``, ``white``, ``hawaiian``, ``taxi`` (default: the paper's)
    epsilons : the ε grid (per level; the total for table4) instead of the experiment's
    max_size : public bound K (default 100,000)
    loader : ``loader(name, scale=, seed=)`` → Hierarchy, instead of the bundled datasets
    png : write PNGs (None: when kaleido works)
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; choose from {', '.join(EXPERIMENTS)}")
    start = time.perf_counter()
    result = EXPERIMENTS[name].run(scale=scale, trials=trials, seed=seed, workers=workers, progress=progress,
                                   datasets=datasets, epsilons=None if epsilons is None else tuple(epsilons),
                                   max_size=max_size, loader=loader, data_seed=data_seed,
                                   whole_country=whole_country)
    result.seconds = time.perf_counter() - start
    result.config["workers"] = workers
    if out is not None:
        result.write(out, png=png)
    return result
