"""Sweeps described as labelled series, as the dashboard's comparison pages and their findings use them.

A :class:`Series` is one line of a comparison chart: a method per level, a
consistency and a merge, with a label.  :func:`run_series` groups series into
:class:`~cocoviz.experiments.runner.Sweep` grids (one per consistency and
merge), runs them with :func:`~cocoviz.experiments.runner.run_sweep` (one
progress count over all of them) and names each row's series;
:func:`summarize_series` is :func:`~cocoviz.experiments.runner.summarize` by
series.

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> counts = pd.DataFrame({"s": ["a", "a", "b"], "size": [1, 3, 2], "count": [5, 2, 4]})
>>> tree = Hierarchy.from_counts(counts, size="size", count="count", levels=["s"])
>>> series = [Series(("Hc", "Hc"), merge=m, label=f"Hc, {m}") for m in ("weighted", "average")]
>>> frame = run_series(tree, series, epsilons=[1.0], trials=2, max_size=10, seed=0)
>>> sorted(set(frame["series"])), len(frame)   # 2 series × 2 trials × 3 nodes
(['Hc, average', 'Hc, weighted'], 12)
>>> summarize_series(frame)[["series", "level", "trials"]].head(2).to_dict("list")
{'series': ['Hc, weighted', 'Hc, weighted'], 'level': [0, 1], 'trials': [2, 2]}
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from cocoviz.experiments.data import Data, mix_label
from cocoviz.experiments.runner import NO_MERGE, Progress, Sweep, run_sweep, summarize
from cocoviz.hierarchy import Hierarchy

__all__ = ["Series", "all_mixes", "run_series", "summarize_series", "SERIES_KEYS"]

#: The columns :func:`summarize_series` groups by.
SERIES_KEYS = ["series", "mix", "consistency", "merge", "epsilon", "total_epsilon", "level", "level_name"]


@dataclass(frozen=True)
class Series:
    """One series of a comparison: a method per level (root first), a consistency and a merge."""

    methods: tuple[str, ...]
    consistency: str = "top-down"
    merge: str = "weighted"
    label: str = ""

    @property
    def name(self) -> str:
        """The label, or the mix ("Hc×Hg") when there is none."""
        return self.label or mix_label(self.methods)

    def frame_key(self) -> tuple[str, str, str]:
        """How this series appears in a sweep frame: (mix, consistency, merge)."""
        merge = self.merge if self.consistency == "top-down" else NO_MERGE
        return mix_label(self.methods), self.consistency, merge


def all_mixes(n_levels: int, methods: Sequence[str] = ("Hc", "Hg")) -> list[tuple[str, ...]]:
    """Every assignment of ``methods`` to ``n_levels`` levels, uniform mixes first.

    >>> [mix_label(m) for m in all_mixes(2)]
    ['Hc×Hc', 'Hg×Hg', 'Hc×Hg', 'Hg×Hc']
    """
    mixes = list(itertools.product(methods, repeat=n_levels))
    uniform = [m for m in mixes if len(set(m)) == 1]
    return uniform + [m for m in mixes if len(set(m)) > 1]


def run_series(
    tree: Hierarchy,
    series: Sequence[Series],
    *,
    epsilons: Sequence[float],
    trials: int,
    max_size: int,
    seed: int,
    dataset: str = "data",
    progress: Progress | None = None,
    journal: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """The tidy frame of every series (one row per series, ε, trial and node), with a ``series`` column first.

    Series sharing a consistency and a merge run as one sweep; every trial's noise is keyed by
    (seed, trial), so the series of one trial are a paired comparison.  ``progress(done, total)``
    counts releases over all the sweeps; ``journal`` records them so a killed run resumes (see
    :func:`~cocoviz.experiments.run_sweep`).  Raises ParameterError on bad parameters.
    """
    data = Data(dataset, tree=tree)
    groups: dict[tuple[str, str], list[Series]] = {}
    for s in series:
        groups.setdefault((s.consistency, s.merge), []).append(s)
    sweeps = [
        Sweep(
            datasets=[data],
            mixes=[s.methods for s in group],
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
    for sweep in sweeps:

        def report(done: int, _total: int, offset=offset) -> None:
            if progress is not None and (done or not offset):  # a later sweep's start is the last one's end
                progress(offset + done, total)

        frames.append(run_sweep(sweep, progress=report, workers=1, journal=journal))
        offset += len(sweep.mixes) * len(sweep.epsilons) * sweep.trials
    frame = pd.concat(frames, ignore_index=True)
    names = {s.frame_key(): s.name for s in series}
    keys = zip(frame["mix"], frame["consistency"], frame["merge"])
    frame.insert(0, "series", [names.get(k, k[0]) for k in keys])
    return frame


def summarize_series(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean emd per node of each level over trials, ± standard error (0 for a single trial), per series."""
    out = summarize(frame, by=SERIES_KEYS)
    out["se"] = out["se"].fillna(0.0)
    return out
