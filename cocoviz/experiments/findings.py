"""The dashboard's comparisons and their findings files: a result every comparison page shows on opening.

A :class:`Comparison` names the series a comparison page draws by default
(``merging``: weighted against plain averaging, per uniform mix;
``methods``: every Hc/Hg mix and bottom-up).  :func:`compute_finding` runs
one on a bundled dataset with :func:`~cocoviz.experiments.series.run_series`
and keeps its summary (mean emd ± se per series, ε and level: a few hundred
rows); :func:`write_finding` stores it as ``<name>.parquet`` with a JSON
sidecar ``<name>.json`` (date, parameters, trials, seed, dataset, versions)
in ``data/findings/``, and :func:`read_finding` reads it back.  Regenerate
the shipped files with ``python -m cocoviz findings``.

>>> [s.name for s in COMPARISONS["merging"].series(2)]
['Hc×Hc, weighted', 'Hc×Hc, plain', 'Hg×Hg, weighted', 'Hg×Hg, plain']
>>> default_candidates(2)
['Hc×Hc', 'Hg×Hg', 'Hc×Hg', 'Hg×Hc', 'bottom-up (Hc leaves)']
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from cocoviz.core.atomic import atomic_path
from cocoviz.datasets.registry import DATA_DIR, DEFAULT_DATASET
from cocoviz.errors import ParameterError
from cocoviz.experiments.data import mix_label
from cocoviz.experiments.runner import Progress
from cocoviz.experiments.series import Series, all_mixes, run_series, summarize_series
from cocoviz.hierarchy import Hierarchy

__all__ = [
    "Comparison",
    "COMPARISONS",
    "Finding",
    "FINDINGS_DIR",
    "DEFAULT_EPSILONS",
    "DEFAULT_TRIALS",
    "merging_series",
    "method_candidates",
    "default_candidates",
    "compute_finding",
    "write_finding",
    "read_finding",
]

#: Where the shipped findings live.
FINDINGS_DIR = DATA_DIR / "findings"
#: The comparison pages' default ε grid (per level) and trials.
DEFAULT_EPSILONS = (0.25, 0.5, 1.0, 2.0)
DEFAULT_TRIALS = 10
#: How the merge of top-down consistency is named on the pages.
MERGE_WORDS = (("weighted", "weighted"), ("average", "plain"))
BOTTOM_UP_HC, BOTTOM_UP_HG, NAIVE = "bottom-up (Hc leaves)", "bottom-up (Hg leaves)", "naive×…×naive"


def merging_series(mixes: Sequence[Sequence[str]]) -> list[Series]:
    """Each mix top-down with weighted and with plain merging, labelled "<mix>, weighted" / "<mix>, plain"."""
    return [
        Series(tuple(mix), "top-down", merge, f"{mix_label(mix)}, {word}")
        for mix in mixes
        for merge, word in MERGE_WORDS
    ]


def method_candidates(n_levels: int) -> dict[str, Series]:
    """The method-selection page's candidates by label: every Hc/Hg mix top-down, bottom-up and naive."""
    out = {mix_label(m): Series(m, "top-down", "weighted") for m in all_mixes(n_levels)}
    out[BOTTOM_UP_HC] = Series(("Hc",) * n_levels, "bottom-up", "weighted", BOTTOM_UP_HC)
    out[BOTTOM_UP_HG] = Series(("Hg",) * n_levels, "bottom-up", "weighted", BOTTOM_UP_HG)
    out[NAIVE] = Series(("naive",) * n_levels, "top-down", "weighted", NAIVE)
    return out


def default_candidates(n_levels: int) -> list[str]:
    """The candidates shown by default: every mix (the first two past 8) and bottom-up with Hc leaves."""
    labels = [mix_label(m) for m in all_mixes(n_levels)]
    return (labels if len(labels) <= 8 else labels[:2]) + [BOTTOM_UP_HC]


@dataclass(frozen=True)
class Comparison:
    """A comparison page: its name, title and default series for ``n_levels`` levels (root included)."""

    name: str
    title: str
    series: Callable[[int], list[Series]]


COMPARISONS = {
    "merging": Comparison(
        "merging",
        "Weighted vs. plain averaging",
        lambda n: merging_series(all_mixes(n)[:2]),
    ),
    "methods": Comparison(
        "methods",
        "Method selection",
        lambda n: [method_candidates(n)[c] for c in default_candidates(n)],
    ),
}


@dataclass(frozen=True)
class Finding:
    """A comparison's summary (:func:`~cocoviz.experiments.series.summarize_series`) and how it was made."""

    name: str
    summary: pd.DataFrame
    meta: dict


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cocoviz")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree without installing
        return "unknown"


def compute_finding(
    name: str,
    *,
    dataset: str = DEFAULT_DATASET,
    trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    max_size: int | None = None,
    tree: Hierarchy | None = None,
    progress: Progress | None = None,
    journal: str | os.PathLike | None = None,
) -> Finding:
    """Run comparison ``name`` on bundled ``dataset`` (all its levels) and summarize it.

    ``max_size`` defaults to the data card's public bound K (else 100,000); ``tree`` replaces the
    bundled file (tests); ``journal`` a folder recording finished releases, from which a killed run
    resumes (:func:`~cocoviz.experiments.run_sweep`).  Raises ParameterError for an unknown comparison or
    bad parameters.
    """
    from cocoviz.datasets import dataset_card, load_dataset
    from cocoviz.plan import DEFAULT_MAX_SIZE

    if name not in COMPARISONS:
        raise ParameterError(f"unknown comparison {name!r}; choose from {', '.join(COMPARISONS)}")
    comparison = COMPARISONS[name]
    card = dataset_card(dataset) if tree is None else {}
    tree = load_dataset(dataset) if tree is None else tree
    if max_size is None:
        max_size = int(card.get("public_max_size") or DEFAULT_MAX_SIZE)
    series = comparison.series(tree.depth + 1)
    start = time.perf_counter()
    frame = run_series(
        tree,
        series,
        epsilons=sorted(epsilons),
        trials=trials,
        max_size=max_size,
        seed=seed,
        dataset=dataset,
        progress=progress,
        journal=journal,
    )
    seconds = time.perf_counter() - start
    meta = {
        "name": name,
        "title": comparison.title,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "dataset": dataset,
        "root": str(card.get("root") or "root"),
        "levels": list(tree.levels),
        "series": [s.name for s in series],
        "epsilons": [float(e) for e in sorted(epsilons)],
        "trials": int(trials),
        "seed": int(seed),
        "max_size": int(max_size),
        "releases": len(series) * len(epsilons) * int(trials),
        "seconds": round(seconds, 1),
        "sampler": "fast (exploration only)",
        "cocoviz": _version(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "command": f"python -m cocoviz findings {name} --dataset {dataset} --trials {trials} --seed {seed}",
    }
    return Finding(name, summarize_series(frame), meta)


def _paths(name: str, folder: str | Path) -> tuple[Path, Path]:
    folder = Path(folder)
    return folder / f"{name}.parquet", folder / f"{name}.json"


def write_finding(finding: Finding, folder: str | Path = FINDINGS_DIR) -> list[Path]:
    """Write ``<name>.parquet`` (the summary) and ``<name>.json`` (its metadata) to ``folder``; their paths."""
    table, sidecar = _paths(finding.name, folder)
    table.parent.mkdir(parents=True, exist_ok=True)
    # Both files are written aside, then renamed in one after the other: a failure while writing leaves
    # the previous pair whole, never a cut file nor a new summary beside old metadata.
    with atomic_path(table) as tmp_table, atomic_path(sidecar) as tmp_sidecar:
        finding.summary.to_parquet(tmp_table, index=False, compression="zstd")
        tmp_sidecar.write_text(json.dumps(finding.meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return [table, sidecar]


def read_finding(name: str, folder: str | Path = FINDINGS_DIR) -> Finding | None:
    """The stored finding ``name`` in ``folder``, or None when either of its files is missing."""
    table, sidecar = _paths(name, folder)
    if not (table.is_file() and sidecar.is_file()):
        return None
    return Finding(name, pd.read_parquet(table), json.loads(sidecar.read_text(encoding="utf-8")))
