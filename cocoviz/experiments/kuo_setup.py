"""What the paper's experiments share: :class:`Experiment`, the options of a run, the paper's
datasets and grids, and how a run picks its data and runs its sweep.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from cocoviz.errors import ParameterError
from cocoviz.experiments.data import Data, Loader
from cocoviz.experiments.journal import Journal, NoJournal, loop_key
from cocoviz.experiments.result import ExperimentResult
from cocoviz.experiments.runner import Progress, Sweep, run_sweep
from cocoviz.plan import DEFAULT_MAX_SIZE

__all__ = ["Experiment", "RunOptions", "PAPER_DATASETS", "EPSILON_GRID", "TWO_LEVEL_MIXES"]

#: The paper's datasets, by the base name used to pick them (``--datasets``).
PAPER_DATASETS = ("housing", "white", "hawaiian", "taxi")
#: ε per level of the sweep figures (the paper's grids are not legible in the text).
EPSILON_GRID = (0.1, 0.25, 0.5, 1.0, 2.0)
#: Every mix of Hc and Hg over two levels.
TWO_LEVEL_MIXES = ("Hc×Hc", "Hc×Hg", "Hg×Hc", "Hg×Hg")


@dataclass(frozen=True)
class Experiment:
    """One of the paper's experiments: its finding, default data and grid, and how to run it.

    ``build(experiment, options)`` runs it, with ``options`` a :class:`RunOptions`; ``more_datasets`` names
    the datasets it accepts beside :data:`PAPER_DATASETS` (e.g. the census-scale stand-in).
    """

    name: str
    title: str
    finding: str
    datasets: tuple[str, ...]
    epsilons: tuple[float, ...]
    build: Callable[[Experiment, RunOptions], ExperimentResult] = field(repr=False)
    more_datasets: tuple[str, ...] = ()

    def run(self, **kwargs) -> ExperimentResult:
        """Run the experiment with the :class:`RunOptions` given as keywords."""
        return self.build(self, RunOptions(**kwargs))


@dataclass(frozen=True)
class RunOptions:
    """The options of one run of an experiment (see :func:`cocoviz.experiments.run_experiment`).

    Parameters
    ----------
    scale : dataset scale passed to ``load_dataset`` (None = the bundled scale)
    trials, seed, workers, progress : as :class:`Sweep` and :func:`run_sweep`; ``seed`` seeds the noise
    datasets : a subset of :data:`PAPER_DATASETS` (None: the experiment's)
    epsilons : the ε grid instead of the experiment's
    max_size : public bound K (None: 100,000)
    loader : ``loader(name, scale=, seed=)`` → Hierarchy, instead of the bundled datasets
    data_seed : seed of the synthetic data (0 = the bundled files)
    whole_country : 3-level data on national / state / county instead of the West Coast cut
    journal : folder recording finished releases, from which a killed run resumes (see :func:`run_sweep`)
    """

    scale: float | None = None
    trials: int = 10
    seed: int = 0
    workers: int | None = 1
    progress: Progress | None = None
    datasets: Sequence[str] | None = None
    epsilons: Sequence[float] | None = None
    max_size: int | None = None
    loader: Loader | None = None
    data_seed: int = 0
    whole_country: bool = False
    journal: str | os.PathLike | None = None

    def pick(self, exp: Experiment) -> tuple[str, ...]:
        """The datasets to run ``exp`` on: the chosen ones (checked), else the experiment's."""
        if self.datasets is None:
            return exp.datasets
        chosen = tuple(self.datasets)
        known = (*PAPER_DATASETS, *exp.more_datasets)
        unknown = [d for d in chosen if d not in known]
        if unknown or not chosen:
            raise ParameterError(
                f"unknown dataset(s) {unknown or chosen} for experiment {exp.name}; choose from {known}"
            )
        return chosen

    def config(self, exp: Experiment) -> dict:
        """The run's parameters as written to ``config.json``."""
        return {
            "experiment": exp.name,
            "title": exp.title,
            "finding": exp.finding,
            "scale": self.scale,
            "data_seed": self.data_seed,
            "trials": self.trials,
            "seed": self.seed,
            "datasets": list(self.pick(exp)),
            "epsilons": list(self.epsilons if self.epsilons is not None else exp.epsilons),
            "max_size": DEFAULT_MAX_SIZE if self.max_size is None else self.max_size,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "pandas": pd.__version__,
        }

    def root_data(self, name: str) -> Data:
        """The root of dataset ``name`` alone."""
        return Data(name, scale=self.scale, seed=self.data_seed, depth=0)

    def two_level_data(self, name: str) -> Data:
        """Dataset ``name``'s root and first level."""
        return Data(name, scale=self.scale, seed=self.data_seed, depth=1)

    def three_level_data(self, name: str) -> Data:
        """The paper's 3-level data: West Coast / state / county (or the whole country), taxi's full geography."""
        if name in ("housing", "white", "hawaiian") and not self.whole_country:
            return Data(f"{name}-west", scale=self.scale, seed=self.data_seed)
        return Data(name, scale=self.scale, seed=self.data_seed)

    def sweep(self, config: dict, data: Sequence[Data], **grid) -> Sweep:
        """The sweep of ``data`` × ``grid`` (mixes, merges, consistencies, budget) with the config's ε grid."""
        return Sweep(
            datasets=list(data),
            epsilons=config["epsilons"],
            trials=self.trials,
            seed=self.seed,
            max_size=self.max_size,
            **grid,
        )

    def journal_for(self, *parts) -> Journal | NoJournal:
        """The journal of an experiment's own loop, fingerprinted by ``parts`` (name, parameters, trees):
        its ``resumable(k, compute)`` records step k as it finishes and, when a killed run is started again,
        takes it from there.  Without a journal folder it just computes."""
        return NoJournal() if self.journal is None else Journal(self.journal, loop_key(*parts))

    def run_sweep(self, sweep: Sweep) -> pd.DataFrame:
        """:func:`run_sweep` with the run's progress, workers and loader."""
        return run_sweep(sweep, progress=self.progress, workers=self.workers, loader=self.loader, journal=self.journal)

    def run_grid(self, config: dict, data: Sequence[Data], **grid) -> pd.DataFrame:
        """Run :meth:`sweep` ``(config, data, **grid)``."""
        return self.run_sweep(self.sweep(config, data, **grid))
