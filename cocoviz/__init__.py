"""cocoviz: differentially private hierarchical count-of-counts histograms.

The method of Kuo, Chiu, Kifer, Hay and Machanavajjhala: per-node Hc or Hg
estimates with isotonic regression, made consistent top-down by an optimal
matching of parent to child groups and inverse-variance merging.

The pipeline: a public :class:`Plan` (its cost known before any noise) →
:func:`measure` (the only step that reads private data) → :func:`post_process`
(never sees the data) → a :class:`Release` that may be published →
:func:`evaluate` (where the truth meets the release).  :func:`estimate` is the
one-call form.
"""

from cocoviz.consistency import match_groups
from cocoviz.datasets import DEFAULT_DATASET, dataset_card, dataset_names, load_dataset
from cocoviz.errors import BudgetError, CocovizError, InputError, ParameterError, PrivacyError
from cocoviz.evaluate.against_truth import evaluate, level_summary, size_errors
from cocoviz.evaluate.baselines import mean_consistency_baseline
from cocoviz.evaluate.metrics import emd, error_by_size, omniscient_emd
from cocoviz.hierarchy import Hierarchy
from cocoviz.hierarchy.ingest import load_upload, read_table, sql
from cocoviz.measure.measurements import Measurements, measure
from cocoviz.methods.priors import ide
from cocoviz.pipeline.estimate import compile_kernels, estimate
from cocoviz.pipeline.selection import select_mix, selection_cost
from cocoviz.plan import METHODS, Plan, Shape
from cocoviz.privacy.budget import Budget, Charge
from cocoviz.release.files.measurements_file import load_measurements, save_measurements
from cocoviz.release.post_process import post_process
from cocoviz.release.release import Release, load_release

__all__ = [
    "Plan",
    "Shape",
    "METHODS",
    "measure",
    "Measurements",
    "load_measurements",
    "save_measurements",
    "post_process",
    "estimate",
    "Release",
    "load_release",
    "evaluate",
    "size_errors",
    "error_by_size",
    "level_summary",
    "Budget",
    "Charge",
    "select_mix",
    "selection_cost",
    "mean_consistency_baseline",
    "match_groups",
    "emd",
    "omniscient_emd",
    "compile_kernels",
    "ide",
    "Hierarchy",
    "dataset_names",
    "load_dataset",
    "dataset_card",
    "DEFAULT_DATASET",
    "load_upload",
    "read_table",
    "sql",
    "CocovizError",
    "InputError",
    "ParameterError",
    "BudgetError",
    "PrivacyError",
]
