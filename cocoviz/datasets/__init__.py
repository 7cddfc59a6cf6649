"""Synthetic stand-ins for the paper's datasets, the slides' toy example, and loading.

The paper (Kuo et al., §6.1) evaluates on four datasets that cannot be
downloaded here.  Each generator imitates one of them and, at
``scale=1.0``, matches the paper's number of groups, persons and distinct
group sizes within 5% (``benchmarks/datasets_scale.py`` checks this).  A
smaller ``scale`` draws proportionally fewer groups of the same kind, so
the bulk's groups and persons scale linearly while the number of distinct
sizes drops (rare large sizes are the first to go) — except housing's
outliers, which are kept whole at every scale up to 1 (``data/README.md``).

Generators return the compact per-leaf counts form (level columns, ``size``,
``count``) and never one row per group, so the 240 million households of the
full housing data take seconds and little memory.  Every generator is a pure
function of ``(scale, seed)``; each state draws from its own stream, so a
regional cut (the paper's West Coast) equals the same states of the national
data for the same seed and scale.

Modules
-------
geography
    US states and counties: real names, 2010 weights, synthetic county sizes.
common
    The paper's figures, scale and seed checks, random streams, frame helpers.
housing, race, taxi, toy
    One generator each (``race`` makes both White and Hawaiian).
census
    Census-scale housing: the housing draw split over tracts, block groups and blocks
    (``housing-us-tracts``, ``housing-us-blockgroups``, ``housing-us-blocks``; generated on demand).
registry
    :class:`Dataset`, the bundled datasets by name, :func:`load_dataset`.
cards
    Data cards, summary lines and :func:`write_bundle` (``data/``).

>>> tree = load_dataset("toy")
>>> tree.histogram(())
array([0, 2, 1, 0, 1])
"""

from __future__ import annotations

from cocoviz.datasets.cards import card_markdown, dataset_card, full_scale_figures, summary_line, write_bundle
from cocoviz.datasets.census import generate_census
from cocoviz.datasets.common import PAPER_FIGURES, PAPER_MAX_SIZE
from cocoviz.datasets.housing import generate_housing
from cocoviz.datasets.race import generate_race
from cocoviz.datasets.registry import (
    BUNDLE_SEED,
    DATA_DIR,
    DEFAULT_DATASET,
    Dataset,
    bundled_names,
    dataset,
    dataset_names,
    generate,
    load_dataset,
    persons_identity,
)
from cocoviz.datasets.taxi import generate_taxi
from cocoviz.datasets.toy import toy_groups, toy_persons

__all__ = [
    "DATA_DIR",
    "DEFAULT_DATASET",
    "BUNDLE_SEED",
    "PAPER_FIGURES",
    "PAPER_MAX_SIZE",
    "Dataset",
    "dataset_names",
    "bundled_names",
    "dataset",
    "load_dataset",
    "persons_identity",
    "generate",
    "generate_housing",
    "generate_census",
    "generate_race",
    "generate_taxi",
    "dataset_card",
    "card_markdown",
    "summary_line",
    "toy_persons",
    "toy_groups",
    "write_bundle",
    "full_scale_figures",
]
