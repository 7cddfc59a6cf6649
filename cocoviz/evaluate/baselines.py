"""Baselines the paper compares against, beyond the consistency modes of a plan.

Bottom-up and independent estimates are consistency modes of a
:class:`~cocoviz.plan.Plan`; the omniscient yardstick is in
:mod:`cocoviz.evaluate.against_truth`.  Here: Hay et al.'s mean-consistency on noisy Hc, the
real-valued baseline that shows why the matching approach exists.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.consistency import mean_consistency
from cocoviz.hierarchy import node_labels
from cocoviz.measure.measurements import check_inputs, draw_nodes, open_sampler
from cocoviz.methods.estimators import HC_SENSITIVITY
from cocoviz.methods.whole_level import query_hc_nodes
from cocoviz.plan import Plan
from cocoviz.privacy.budget import Budget, double_geometric_variance

__all__ = ["mean_consistency_baseline"]


def mean_consistency_baseline(
    tree, *, epsilons: Sequence[float], max_size: int, seed: int | Sequence[int] | None = None
) -> tuple[pd.DataFrame, Budget]:
    """Hay et al.'s mean-consistency on noisy Hc at every node: the real-valued baseline.

    Every node's Hc[0..K-1] gets double-geometric noise (Δ = 1, ε of its
    level) from the same keyed streams an all-Hc release uses;
    :func:`~cocoviz.consistency.mean_consistency` makes them consistent.  The
    result sums exactly, but differencing it back to H gives fractional and
    negative counts — what the matching approach avoids.

    Returns
    -------
    frame : one row per node: level, node, groups, emd (Σ|Ĥc - Hc|, real),
        negative_cells (sizes with Ĥ < 0), most_negative (smallest Ĥ)
    budget : the budget report of the noisy measurements (an all-Hc plan's cost)
    """
    plan = Plan.build(tree, epsilons=epsilons, methods=["Hc"] * (tree.depth + 1), max_size=max_size)
    noise = open_sampler(seed)
    notes = check_inputs(plan, tree, noise)
    noisy, variances, truths = [], [], []
    for level in range(tree.depth + 1):
        # A level at once, on integer arrays: every node's Hc[0..K-1] in one compiled pass, its noise in one keyed
        # draw (cell j of node k from the stream (level, k, 0), as a node-by-node draw takes it).
        n, k = tree.runs(level).n_nodes, plan.max_size
        values, ptr = query_hc_nodes(tree.runs(level), 0, n, np.full(n, k, np.int64))
        truths.append(values.reshape(n, k))
        scale = HC_SENSITIVITY / plan.epsilons[level]
        noisy.append(draw_nodes(noise, values.copy(), ptr, scale, level, 0).reshape(n, k))
        variances.append(double_geometric_variance(scale))
    parents = [None] + [tree.parents(level) for level in range(1, tree.depth + 1)]
    consistent = mean_consistency(noisy, variances, parents)
    frames = []
    for level, (hc_hat, truth) in enumerate(zip(consistent, truths)):
        groups = tree.runs(level).groups()
        h_hat = np.diff(hc_hat, axis=1, prepend=0.0)
        frames.append(
            pd.DataFrame(
                {
                    "level": level,
                    "node": node_labels(tree.node_codes, level).astype("str"),
                    "groups": groups,
                    "emd": np.abs(hc_hat - truth).sum(axis=1),
                    "negative_cells": (h_hat < -1e-9).sum(axis=1),
                    "most_negative": h_hat.min(axis=1),
                }
            )
        )
    return pd.concat(frames, ignore_index=True), plan.cost().with_sampler(noise.name, notes)
