"""Two releases of one hierarchy side by side: how far apart they are, node by node.

Both releases are public outputs, so their difference costs no ε and reads no
private data; the errors of each against the truth (:func:`cocoviz.evaluate`)
are the data holder's and are joined by the caller.  Works a level at a time on
the released runs: no Python object per node, so a tree of millions of blocks
compares in seconds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.core.runs import LevelRuns
from cocoviz.errors import InputError
from cocoviz.evaluate.metrics import emd_level
from cocoviz.hierarchy import node_labels
from cocoviz.release.release import Release

__all__ = ["same_nodes", "release_differences"]


def same_nodes(a: Release, b: Release) -> bool:
    """Whether two releases cover the same nodes, level by level (they can then be compared node by node)."""
    return a.plan.shape.node_codes.same(b.plan.shape.node_codes)


def _persons(runs: LevelRuns) -> np.ndarray:
    """Σ_j j·Ĥ[j] of every node, exactly in int64."""
    total = np.concatenate([np.zeros(1, np.int64), np.cumsum(runs.sizes.astype(np.int64) * runs.counts)])
    return total[runs.ptr[1:]] - total[runs.ptr[:-1]]


def release_differences(a: Release, b: Release) -> pd.DataFrame:
    """One row per node: level, node, G, persons in each release and the emd between the two histograms
    (persons to move to turn one into the other).

    Raises :class:`~cocoviz.errors.InputError` when the releases do not cover the same nodes.

    >>> import cocoviz
    >>> tree = cocoviz.load_dataset("toy")
    >>> a = cocoviz.estimate(tree, epsilons=[1, 1], methods=["Hc", "Hc"], max_size=8, seed=1)
    >>> release_differences(a, a)["emd_between"].tolist()
    [0, 0, 0]
    """
    if not same_nodes(a, b):
        raise InputError("the two releases cover different nodes: compare releases of the same data and levels")
    shape = a.plan.shape
    frames = []
    for level in range(shape.depth + 1):
        ra, rb = a.runs(level), b.runs(level)
        frames.append(
            pd.DataFrame(
                {
                    "level": np.full(ra.n_nodes, level, np.int64),
                    "node": node_labels(shape.node_codes, level).astype("str"),
                    "groups": ra.groups().astype(np.int64),
                    "persons_a": _persons(ra),
                    "persons_b": _persons(rb),
                    "emd_between": emd_level(ra, rb),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
