"""Baselines: Hay et al.'s mean-consistency on noisy Hc, real-valued and sometimes negative."""

from __future__ import annotations

import pytest
from test_consistency import sparse_tree

from cocoviz import Plan, mean_consistency_baseline


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
