"""The registry of the paper's experiments, :data:`EXPERIMENTS`, and :func:`run_experiment`."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from cocoviz.core.atomic import check_writable_folder
from cocoviz.errors import ParameterError
from cocoviz.experiments.data import Loader
from cocoviz.experiments.gauss import GAUSS
from cocoviz.experiments.kselect import kselect_experiment
from cocoviz.experiments.kuo_figures import figure1, figure4, figure5, figure6
from cocoviz.experiments.kuo_setup import EPSILON_GRID, PAPER_DATASETS, Experiment
from cocoviz.experiments.kuo_tables import table3, table4
from cocoviz.experiments.result import ExperimentResult
from cocoviz.experiments.runner import Progress
from cocoviz.experiments.tao import E6
from cocoviz.experiments.tao_hcp import E4 as TAO_E4
from cocoviz.experiments.tao_hcp import E5 as TAO_E5
from cocoviz.experiments.tao_joint import E7 as TAO_E7
from cocoviz.experiments.wu import wu_e2, wu_e3

__all__ = ["EXPERIMENTS", "experiment_names", "run_experiment"]

EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in [
        Experiment(
            "table3",
            "Table 3: naive vs. Hc vs. Hg at the top level, ε = 1.0",
            "Naive is orders of magnitude (billions) worse than Hc and Hg.",
            PAPER_DATASETS,
            (1.0,),
            table3,
        ),
        Experiment(
            "figure4",
            "Figure 4: weighted vs. plain average merge, 2 levels",
            "The weighted merge beats the plain average at the top level for every budget and mix, "
            "modestly at the second level.",
            ("housing", "white", "hawaiian"),
            EPSILON_GRID,
            figure4,
        ),
        Experiment(
            "figure5",
            "Figure 5: 2-level top-down consistency, method mixes",
            "No mix dominates; Hc wins on dense data (white), Hg on sparse data with gaps (housing "
            "nationally); the best mix is close to the omniscient D/ε.",
            ("housing", "white", "hawaiian"),
            EPSILON_GRID,
            figure5,
        ),
        Experiment(
            "figure6",
            "Figure 6: 3 levels with and without consistency",
            "No method dominates; Hc-based estimation tends to be much better than Hg overall.",
            PAPER_DATASETS,
            EPSILON_GRID,
            figure6,
        ),
        Experiment(
            "table4",
            "Table 4: bottom-up vs. top-down Hc, total ε = 1.0",
            "Bottom-up is worse at the upper levels and better at the leaves.",
            PAPER_DATASETS,
            (1.0,),
            table4,
        ),
        Experiment(
            "figure1",
            "Figure 1: error by size, Hg and Hc",
            "Hg's error sits at small sizes; Hc's is spread over the rest.",
            PAPER_DATASETS,
            (1.0,),
            figure1,
        ),
        Experiment(
            "wu-e1",
            "E1 (Wu et al.): K public, by noisy max, by SVT, by Wu's thresholds or the true maximum, against ε",
            "Noisy max lands within a few per cent of the true maximum and (almost) never truncates; SVT "
            "stops early and truncates; a private K cuts Hc's noise cells by orders of magnitude.",
            ("housing", "white", "hawaiian", "taxi"),
            (0.1, 0.25, 0.5, 1.0, 2.0),
            kselect_experiment,
        ),
        Experiment(
            "wu-e2",
            "Wu E2: prefix sums P(j) from the Hc/Hg releases vs. Wu's strategies, person level",
            "Wu: Identity beats the other baselines; isotonic regression can hurt answers with uneven bias.",
            ("housing",),
            (0.1, 1.0),
            wu_e2,
        ),
        Experiment(
            "wu-e3",
            "Wu E3: Wu's strategies at the record level (one group added/removed), τ choices",
            "Wu: truncation improves every algorithm; Identity beats the other baselines.",
            ("housing",),
            (0.1, 1.0),
            wu_e3,
        ),
        E6,
        TAO_E4,
        TAO_E5,
        TAO_E7,
        GAUSS,
    ]
}


def experiment_names() -> list[str]:
    """The registered experiments, in the order of :data:`EXPERIMENTS`."""
    return list(EXPERIMENTS)


def run_experiment(
    name: str,
    *,
    out: str | os.PathLike | None = None,
    scale: float | None = None,
    trials: int = 10,
    seed: int = 0,
    workers: int | None = 1,
    progress: Progress | None = None,
    datasets: Sequence[str] | None = None,
    epsilons: Sequence[float] | None = None,
    max_size: int | None = None,
    loader: Loader | None = None,
    data_seed: int = 0,
    whole_country: bool = False,
    png: bool | None = None,
    resume: bool = True,
) -> ExperimentResult:
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
    resume : with ``out``, record finished releases in ``<out>/.<name>.journal/`` as they finish, and take
        them from there when a killed run is started again with the same arguments (every experiment; the
        resumed frame equals an uninterrupted run's, but for wu-e1's measured seconds); the journal is removed
        once the results are written.
        The folder ``<out>/<name>/`` is swapped in whole: it holds the previous results or the new ones,
        never a mix.
    """
    if name not in EXPERIMENTS:
        raise ParameterError(f"unknown experiment {name!r}; choose from {', '.join(EXPERIMENTS)}")
    journal = Path(out) / f".{name}.journal" if out is not None and resume else None
    if out is not None:
        check_writable_folder(out, "out")
    start = time.perf_counter()
    result = EXPERIMENTS[name].run(
        scale=scale,
        trials=trials,
        seed=seed,
        workers=workers,
        progress=progress,
        datasets=datasets,
        epsilons=None if epsilons is None else tuple(epsilons),
        max_size=max_size,
        loader=loader,
        data_seed=data_seed,
        whole_country=whole_country,
        journal=journal,
    )
    result.seconds = time.perf_counter() - start
    result.config["workers"] = workers
    if out is not None:
        result.write(out, png=png)
        if journal is not None:
            shutil.rmtree(journal, ignore_errors=True)
    return result
