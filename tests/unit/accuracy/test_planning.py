"""Plan by accuracy: the budget found is the smallest meeting the target, and its claim holds on releases."""

from __future__ import annotations

import numpy as np
import pytest

import cocoviz
from cocoviz.accuracy.intervals.bands import truth_covered
from cocoviz.accuracy.planning import budget_for_half_width, half_width_at
from cocoviz.datasets import load_dataset
from cocoviz.errors import ParameterError
from cocoviz.plan import Plan


@pytest.mark.parametrize(
    "options",
    [
        dict(epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=40),
        dict(epsilons=[1.0, 1.0], methods=["Hg", "Hg"], max_size=40),
        dict(rhos=[0.5, 0.5], methods=["Hc", "Hg"], max_size=40),
    ],
)
@pytest.mark.parametrize("target", [2, 5])
def test_the_budget_found_is_the_smallest_meeting_the_target(options, target):
    plan = Plan.build(load_dataset("toy"), **options)
    found = budget_for_half_width(plan, level=1, half_width=target, confidence=0.9)
    assert found.half_width <= target
    assert half_width_at(plan, 1, found.budget * 0.99, 0.9) > target  # 1% less misses it
    assert found.budgets[0] == (plan.epsilons if plan.rhos is None else plan.rhos)[0]  # the other level kept


def test_the_claim_holds_on_releases_drawn_with_the_budget_found():
    """Every node's band is at most the target, and the bands cover the truth at least as often as claimed."""
    tree = load_dataset("toy")
    plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=12)
    found = budget_for_half_width(plan, level=1, half_width=3, confidence=0.8)
    nodes = tree.nodes(1)
    covered, trials = 0, 300
    for seed in range(trials):
        release = cocoviz.estimate(tree, epsilons=list(found.budgets), methods=["Hc", "Hc"], max_size=12, seed=seed)
        for node in nodes:
            frame = release.intervals(node, 0.8)
            assert frame.attrs["half_width"] <= 3
            h = tree.histogram(node)
            sizes = np.flatnonzero(h)
            covered += truth_covered(frame, sizes, h[sizes])
    rate, n = covered / (trials * len(nodes)), trials * len(nodes)
    assert rate >= 0.8 - 3 * np.sqrt(0.8 * 0.2 / n), rate


def test_an_unreachable_or_malformed_target_is_refused_by_name():
    plan = Plan.build(load_dataset("toy"), epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=12)
    with pytest.raises(ParameterError, match="level must be between 0 and 1"):
        budget_for_half_width(plan, level=2, half_width=3)
    with pytest.raises(ParameterError, match="whole number of at least 1"):
        budget_for_half_width(plan, level=1, half_width=0)
