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

**Modules.** :mod:`~cocoviz.experiments.data` (datasets, cuts, mixes),
:mod:`~cocoviz.experiments.runner` (sweeps, workers, summaries, and the only
calls of a Release's error methods), :mod:`~cocoviz.experiments.by_size`
(error by size), :mod:`~cocoviz.experiments.tables` and
:mod:`~cocoviz.experiments.figures` (report formatting),
:mod:`~cocoviz.experiments.result` (writing outputs),
:mod:`~cocoviz.experiments.series` (labelled series, as the dashboard draws them),
:mod:`~cocoviz.experiments.findings` (the dashboard's precomputed findings),
:mod:`~cocoviz.experiments.kuo_setup`, :mod:`~cocoviz.experiments.kuo_tables`,
:mod:`~cocoviz.experiments.kuo_figures` and :mod:`~cocoviz.experiments.kuo`
(the paper's named experiments).  Everything is importable from here.

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

from cocoviz.experiments.by_size import run_error_by_size, summarize_error_by_size
from cocoviz.experiments.data import MIX_SEPARATOR, WEST_COAST, Data, Loader, mix_label, parse_mix, regional_cut
from cocoviz.experiments.kuo import EXPERIMENTS, experiment_names, run_experiment
from cocoviz.experiments.kuo_setup import EPSILON_GRID, PAPER_DATASETS, TWO_LEVEL_MIXES, Experiment, RunOptions
from cocoviz.experiments.kuo_tables import PAPER_TABLE3, PAPER_TABLE4, TABLE4_METHODS
from cocoviz.experiments.kuo_tables import table4_report as table4_report  # for a saved trials.csv
from cocoviz.experiments.result import ExperimentResult
from cocoviz.experiments.runner import (
    FRAME_COLUMNS,
    NO_MERGE,
    SUMMARY_COLUMNS,
    SUMMARY_KEYS,
    Progress,
    Sweep,
    default_workers,
    run_sweep,
    summarize,
    trial_seed,
)
from cocoviz.experiments.series import Series, all_mixes, run_series, summarize_series
from cocoviz.experiments.tables import markdown_table

__all__ = [
    "Data",
    "Sweep",
    "run_sweep",
    "summarize",
    "run_error_by_size",
    "summarize_error_by_size",
    "regional_cut",
    "mix_label",
    "parse_mix",
    "Experiment",
    "ExperimentResult",
    "EXPERIMENTS",
    "experiment_names",
    "run_experiment",
    "FRAME_COLUMNS",
    "SUMMARY_COLUMNS",
    "WEST_COAST",
    "Series",
    "all_mixes",
    "run_series",
    "summarize_series",
    # also importable from here, as before the split
    "SUMMARY_KEYS",
    "MIX_SEPARATOR",
    "NO_MERGE",
    "Progress",
    "Loader",
    "trial_seed",
    "default_workers",
    "markdown_table",
    "PAPER_DATASETS",
    "EPSILON_GRID",
    "TWO_LEVEL_MIXES",
    "PAPER_TABLE3",
    "PAPER_TABLE4",
    "TABLE4_METHODS",
    "RunOptions",
]
