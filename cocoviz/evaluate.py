"""Where the truth meets a release: errors per node, error by size, and the omniscient yardstick.

Only this module (and the experiments built on it) compares a release with the
private tree; what it returns is for evaluation and teaching, never for
publication.

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> from cocoviz.pipeline import estimate
>>> tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}),
...                              size="size", levels=["region"])
>>> release = estimate(tree, epsilons=[1e6, 1e6], methods=["Hg", "Hc"], max_size=8, seed=0)
>>> evaluate(tree, release)[["node", "groups", "sizes", "emd"]].to_dict("list")
{'node': ['(root)', 'a', 'b'], 'groups': [4, 2, 2], 'sizes': [3, 2, 2], 'emd': [0, 0, 0]}
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.errors import InputError
from cocoviz.hierarchy import node_label
from cocoviz.metrics import emd_level, error_by_size, omniscient_emd
from cocoviz.plan import Shape
from cocoviz.truncation import truncation_error

__all__ = ["evaluate", "size_errors", "level_summary", "compare_histograms", "EVALUATION_COLUMNS"]

EVALUATION_COLUMNS = [
    "level",
    "node",
    "groups",
    "sizes",
    "emd",
    "epsilon",
    "omniscient",
    "emd_per_group",
    "ratio",
    "bound",
    "truncation",
]


def _check(tree, release) -> None:
    if not release.plan.shape.same_as(Shape.of(tree)):
        raise InputError("this release was computed for another hierarchy (its levels, nodes or G differ)")


def _yardstick_epsilons(plan) -> list[float]:
    """The ε behind each level's estimate: its own, or the whole budget for bottom-up."""
    if plan.consistency == "bottom-up":
        return [math.fsum(plan.epsilons)] * len(plan.epsilons)
    return list(plan.epsilons)


def evaluate(tree, release) -> pd.DataFrame:
    """One row per node: its emd against the truth and the omniscient yardstick D/ε.

    Columns: ``level``, ``node``, ``groups`` (G), ``sizes`` (D, distinct true
    sizes), ``emd``, ``epsilon`` (behind the node's estimate: the level's, or
    Σ ε for bottom-up), ``omniscient`` (D/ε), ``emd_per_group`` (persons
    misplaced per group), ``ratio`` (emd / omniscient: about 1 is as good as
    knowing which sizes exist), ``bound`` (the K the node was measured with, 0
    where its method needs none) and ``truncation`` (persons lost to that K
    alone, apart from the noise: Σ_{s>K} (s − K)·H[s]).
    """
    _check(tree, release)
    frames = []
    for level, eps in enumerate(_yardstick_epsilons(release.plan)):
        truth = tree.runs(level)
        groups = truth.groups()
        sizes = np.diff(truth.ptr)
        emd = emd_level(truth, release.runs(level))
        omniscient = omniscient_emd(sizes, eps)
        bound = release.bounds[level]
        if bound is None:
            bound, truncation = np.zeros(truth.n_nodes, np.int64), np.zeros(truth.n_nodes, np.int64)
        else:
            truncation = np.array([truncation_error(*truth.node(k), int(b)) for k, b in enumerate(bound)], np.int64)
        frames.append(
            pd.DataFrame(
                {
                    "level": level,
                    "node": [node_label(p) for p in tree.nodes(level)],
                    "groups": groups,
                    "sizes": sizes,
                    "emd": emd,
                    "epsilon": eps,
                    "omniscient": omniscient,
                    "emd_per_group": emd / groups,
                    "ratio": emd / omniscient,
                    "bound": bound,
                    "truncation": truncation,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)[EVALUATION_COLUMNS]


def size_errors(tree, release, node: Sequence[str]) -> np.ndarray:
    """``|Ĥc[s] - Hc[s]|`` for every size s of ``node``; sums to its emd (the paper's Figure 1)."""
    _check(tree, release)
    return error_by_size(tree.histogram(node), release.histogram(node))


def level_summary(evaluation: pd.DataFrame) -> pd.DataFrame:
    """Per level of an :func:`evaluate` table: nodes, mean and maximum emd, mean yardstick and ratio."""
    return (
        evaluation.groupby("level")
        .agg(
            nodes=("node", "size"),
            mean_emd=("emd", "mean"),
            max_emd=("emd", "max"),
            omniscient=("omniscient", "mean"),
            ratio=("ratio", "mean"),
        )
        .reset_index()
    )


def compare_histograms(tree, release) -> pd.DataFrame:
    """Released and true counts side by side: level, node, size, private_count, true_count.

    One row per (node, size) where either count is non-zero.  It holds the
    confidential truth: for the data holder's own checks, never to publish.
    """
    _check(tree, release)
    frames = []
    for level in range(tree.depth + 1):
        released, truth = release.runs(level), tree.runs(level)
        frame = (
            pd.DataFrame(
                {
                    "node_id": np.concatenate([released.node_ids(), truth.node_ids()]),
                    "size": np.concatenate([released.sizes, truth.sizes]),
                    "private_count": np.concatenate([released.counts, np.zeros_like(truth.counts)]),
                    "true_count": np.concatenate([np.zeros_like(released.counts), truth.counts]),
                }
            )
            .groupby(["node_id", "size"], sort=True)
            .sum()
            .reset_index()
        )
        labels = np.array([node_label(p) for p in tree.nodes(level)], dtype=object)
        frame.insert(0, "node", labels[frame.pop("node_id").to_numpy()])
        frame.insert(0, "level", level)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
