"""Sweeps for the comparison pages, run by :mod:`cocoviz.experiments`, cached per parameters.

A page describes what it wants as :class:`Config` series (a method mix, a
consistency and a merge, with a label); :func:`run` groups them into
:class:`cocoviz.experiments.Sweep` grids, runs them with
:func:`cocoviz.experiments.run_sweep` (one progress bar over all of them)
and stores the tidy frame in a process-wide cache, so returning to a page or
changing a plot option never recomputes.  :func:`summarize` is
:func:`cocoviz.experiments.summarize` with the page's series labels.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from cocoviz import experiments
from cocoviz.hierarchy import Hierarchy
from cocoviz.plan import Plan

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Config:
    """One series of a sweep: a method per level, a consistency and a merge."""

    methods: tuple[str, ...]
    consistency: str = "top-down"
    merge: str = "weighted"
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or mix_label(self.methods)

    def frame_key(self) -> tuple[str, str, str]:
        """How this series appears in a sweep frame: (mix, consistency, merge)."""
        merge = self.merge if self.consistency == "top-down" else experiments.NO_MERGE
        return mix_label(self.methods), self.consistency, merge


mix_label = experiments.mix_label


def all_mixes(n_levels: int, methods: Sequence[str] = ("Hc", "Hg")) -> list[tuple[str, ...]]:
    """Every assignment of ``methods`` to ``n_levels`` levels, uniform mixes first."""
    mixes = list(itertools.product(methods, repeat=n_levels))
    uniform = [m for m in mixes if len(set(m)) == 1]
    return uniform + [m for m in mixes if len(set(m)) > 1]


def estimated_seconds(
    tree: Hierarchy, configs: Sequence[Config], epsilons: Sequence[float], trials: int, max_size: int
) -> float:
    """A rough time estimate of a sweep, from the cells each series' plan noises."""
    from pages.common.engine import estimated_seconds as one

    n = tree.depth + 1
    per_round = sum(
        one(Plan.build(tree, epsilons=[1.0] * n, methods=list(c.methods), max_size=max_size, consistency=c.consistency))
        for c in configs
    )
    return per_round * len(epsilons) * trials


def sweep_key(
    data_key: tuple,
    tree: Hierarchy,
    configs: Sequence[Config],
    epsilons: Sequence[float],
    trials: int,
    max_size: int,
    seed: int,
) -> tuple:
    return (
        data_key,
        tuple(tree.levels),
        tuple(configs),
        tuple(float(e) for e in epsilons),
        int(trials),
        int(max_size),
        int(seed),
    )


#: Sweeps kept per server before the store starts afresh (a whole-country frame has millions of rows).
STORE_ENTRIES = 64


@st.cache_resource(show_spinner=False)
def _store() -> dict:
    """Sweep frames of every session, by their :func:`sweep_key`."""
    return {}


def cached(key: tuple) -> pd.DataFrame | None:
    """The stored frame of a sweep, or None."""
    return _store().get(key)


def run(
    data_key: tuple,
    tree: Hierarchy,
    configs: Sequence[Config],
    epsilons: Sequence[float],
    trials: int,
    max_size: int,
    seed: int,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """The sweep's tidy frame (one row per series, ε, trial and node), cached; a ``series`` column names the
    page's series.  Raises ValueError on bad parameters (the caller guards)."""
    key = sweep_key(data_key, tree, configs, epsilons, trials, max_size, seed)
    store = _store()
    hit = store.get(key)  # one lookup: sessions share the store between threads
    if hit is not None:
        return hit
    data = experiments.Data(str(data_key[1]) if len(data_key) > 1 else "data", tree=tree)
    groups: dict[tuple[str, str], list[Config]] = {}
    for c in configs:
        groups.setdefault((c.consistency, c.merge), []).append(c)
    sweeps = [
        experiments.Sweep(
            datasets=[data],
            mixes=[c.methods for c in group],
            epsilons=list(epsilons),
            merges=[merge],
            consistencies=[consistency],
            trials=int(trials),
            seed=int(seed),
            max_size=int(max_size),
        )
        for (consistency, merge), group in groups.items()
    ]
    total = sum(len(s.mixes) * len(s.epsilons) * s.trials for s in sweeps)
    frames, offset = [], 0
    for s in sweeps:
        n = len(s.mixes) * len(s.epsilons) * s.trials

        def report(done: int, _total: int, offset=offset) -> None:
            if progress is not None:
                progress(offset + done, total)

        frames.append(experiments.run_sweep(s, progress=report, workers=1))
        offset += n
    frame = pd.concat(frames, ignore_index=True)
    names = {c.frame_key(): c.name for c in configs}
    frame.insert(0, "series", [names.get(k, k[0]) for k in zip(frame["mix"], frame["consistency"], frame["merge"])])
    if len(store) > STORE_ENTRIES:
        store.clear()
    store[key] = frame
    return frame


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean emd per node of each level over trials, ± standard error (0 for a single trial), per series."""
    out = experiments.summarize(
        frame, by=["series", "mix", "consistency", "merge", "epsilon", "total_epsilon", "level", "level_name"]
    )
    out["se"] = out["se"].fillna(0.0)
    return out


def gated_run(
    gate: str,
    data_key: tuple,
    tree: Hierarchy,
    configs: Sequence[Config],
    epsilons: Sequence[float],
    trials: int,
    max_size: int,
    seed: int,
) -> pd.DataFrame | None:
    """The sweep's frame: cached, or run now with a progress bar once :func:`~pages.common.controls.run_gate`
    lets it (quick sweeps at once, long ones on a click); None while it waits for the click."""
    from pages.common import controls, engine

    raw = cached(sweep_key(data_key, tree, configs, epsilons, trials, max_size, seed))
    if raw is not None:
        return raw
    n_runs = len(configs) * len(epsilons) * trials
    seconds = engine.guard(estimated_seconds, tree, configs, epsilons, trials, max_size)
    go, clear = controls.run_gate(gate, n_runs, seconds)
    if not go:
        return None
    bar = st.progress(0.0, text=f"Running {n_runs} releases…")
    raw = engine.guard(
        run,
        data_key,
        tree,
        configs,
        epsilons,
        trials,
        max_size,
        seed,
        progress=lambda done, total: bar.progress(done / total, text=f"{done} / {total} releases"),
    )
    bar.empty()
    clear()
    return raw
