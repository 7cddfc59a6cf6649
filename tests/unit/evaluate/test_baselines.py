"""Baselines: Hay et al.'s mean-consistency on noisy Hc, real-valued and sometimes negative."""

from __future__ import annotations

import pytest

from cocoviz import Plan, mean_consistency_baseline
from tests.unit.consistency.test_consistency import sparse_tree


def test_mean_consistency_baseline_reports_negative_counts():
    tree = sparse_tree()
    negatives = []
    for seed in range(10):
        frame, budget = mean_consistency_baseline(tree, epsilons=[0.5, 0.5, 0.5], max_size=8, seed=seed)
        assert budget.total == pytest.approx(1.5)
        assert list(frame["groups"]) == [tree.groups(n) for lvl in range(3) for n in tree.nodes(lvl)]
        negatives.append(int(frame["negative_cells"].sum()))
        assert ((frame["negative_cells"] > 0) == (frame["most_negative"] < -1e-9)).all()
    assert max(negatives) > 0


def test_mean_consistency_baseline_budget_is_the_all_hc_plan_cost():
    tree = sparse_tree()
    _, budget = mean_consistency_baseline(tree, epsilons=[0.5, 0.25, 1.0], max_size=8, seed=0)
    plan = Plan.build(tree, epsilons=[0.5, 0.25, 1.0], methods=["Hc"] * 3, max_size=8)
    assert budget.charges == plan.cost().charges


def _per_node_baseline(tree, epsilons, max_size, seed):
    """The baseline as it was first written, one Python step per node: the reference the level-at-once form
    must equal exactly."""
    import numpy as np
    import pandas as pd

    from cocoviz.consistency import mean_consistency
    from cocoviz.hierarchy import node_label
    from cocoviz.measure.measurements import open_sampler
    from cocoviz.methods.estimators import HC_SENSITIVITY, query_hc
    from cocoviz.privacy.budget import double_geometric_variance

    noise = open_sampler(seed)
    noisy, variances, truths = [], [], []
    for level in range(tree.depth + 1):
        runs = tree.runs(level)
        truth = np.stack([query_hc(*runs.node(k), max_size) for k in range(runs.n_nodes)])
        truths.append(truth)
        scale = HC_SENSITIVITY / epsilons[level]
        noisy.append(np.stack([noise.draw(row, scale, (level, k, 0)) for k, row in enumerate(truth)]))
        variances.append(double_geometric_variance(scale))
    parents = [None] + [tree.parents(level) for level in range(1, tree.depth + 1)]
    consistent = mean_consistency(noisy, variances, parents)
    frames = []
    for level, (hc_hat, truth) in enumerate(zip(consistent, truths)):
        h_hat = np.diff(hc_hat, axis=1, prepend=0.0)
        frames.append(
            pd.DataFrame(
                {
                    "level": level,
                    "node": [node_label(p) for p in tree.nodes(level)],
                    "groups": tree.runs(level).groups(),
                    "emd": np.abs(hc_hat - truth).sum(axis=1),
                    "negative_cells": (h_hat < -1e-9).sum(axis=1),
                    "most_negative": h_hat.min(axis=1),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("max_size", [8, 20])
def test_mean_consistency_baseline_equals_the_per_node_form(max_size):
    import pandas as pd

    from cocoviz import load_dataset

    for tree, epsilons in ((sparse_tree(), [0.5, 0.25, 1.0]), (load_dataset("toy"), [1.0, 0.5])):
        for seed in (0, 7):
            frame, _ = mean_consistency_baseline(tree, epsilons=epsilons, max_size=max_size, seed=seed)
            expected = _per_node_baseline(tree, epsilons, max_size, seed)
            pd.testing.assert_frame_equal(frame, expected, check_exact=True)
