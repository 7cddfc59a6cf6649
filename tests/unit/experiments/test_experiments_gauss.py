"""Experiment gauss: Laplace against discrete Gaussian at equal ρ and equal (ε, δ), on a small tree."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cocoviz import Hierarchy, Plan
from cocoviz.experiments import EXPERIMENTS
from cocoviz.experiments.gauss import GAUSS_DELTA, NOISES, _budgets, run_gauss, summarize_gauss, winners


def small_tree() -> Hierarchy:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {"state": rng.choice(list("ab"), 400), "county": rng.choice(list("xyz"), 400), "size": rng.geometric(0.3, 400)}
    )
    return Hierarchy.from_groups(frame, size="size", levels=["state", "county"])


@pytest.mark.slow
def test_budgets_are_equal_where_they_say():
    tree = small_tree()
    for eps in (0.1, 1.0):
        budgets = _budgets(eps, 3)
        laplace = Plan.build(tree, methods=["Hc"] * 3, max_size=30, **budgets["laplace"]).cost()
        same_rho = Plan.build(tree, methods=["Hc"] * 3, max_size=30, **budgets["gauss, equal ρ"]).cost()
        same_eps = Plan.build(tree, methods=["Hc"] * 3, max_size=30, **budgets["gauss, equal (ε, δ)"]).cost()
        assert same_rho.total_rho == pytest.approx(3 * eps**2 / 2)
        assert same_eps.epsilon_delta(GAUSS_DELTA) == pytest.approx(laplace.total, rel=1e-6)
        assert same_eps.epsilon_delta(GAUSS_DELTA) <= laplace.total * (1 + 1e-12)  # up to the sum of floats


@pytest.mark.slow
def test_run_and_summary():
    frame = run_gauss(small_tree(), epsilons=[0.5, 4.0], trials=2, seed=0, max_size=30, dataset="toy")
    assert set(frame["noise"]) == set(NOISES) and set(frame["level"]) == {0, 1, 2}
    assert len(frame) == 2 * 2 * 3 * (4 + 3)  # ε × trials × levels × (Hc's four releases + Hg's three)
    summary = summarize_gauss(frame)
    assert len(summary) == 2 * 2 * 3 and (summary["ratio gauss, equal ρ"] >= 0).all()
    table = winners(summary)
    assert set(table["comparison"]) == {"gauss, equal ρ", "gauss, equal (ε, δ)"}
    assert "gauss" in EXPERIMENTS


def test_gauss_takes_the_census_stand_in_and_other_experiments_do_not():
    from cocoviz.errors import ParameterError
    from cocoviz.experiments.kuo_setup import RunOptions

    run = RunOptions(datasets=["housing-us-tracts"])
    assert run.pick(EXPERIMENTS["gauss"]) == ("housing-us-tracts",)
    with pytest.raises(ParameterError, match="housing-us-tracts"):
        run.pick(EXPERIMENTS["figure6"])


def test_crossings_are_where_the_ratio_passes_one():
    from cocoviz.experiments.gauss import crossings

    # ratio − 1 goes −0.5 → +1 over one decade of ε: a third of the way up, in log ε.
    assert crossings([0.1, 1.0], [0.5, 2.0]) == pytest.approx([10 ** (-1 + 1 / 3)])
    assert crossings([0.1, 0.5, 1.0, 4.0], [2.0, 0.5, 0.8, 1.5]) == pytest.approx(
        [0.1 * 5 ** (2 / 3), 4 ** (0.2 / 0.7)]
    )
    assert crossings([0.1, 1.0, 4.0], [0.9, 0.8, 0.7]) == []
