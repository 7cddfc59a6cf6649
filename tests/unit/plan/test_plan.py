"""The public Plan: validation when built, the method registry, and a cost known before any noise."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import BudgetError, ParameterError, Plan, Shape, estimate
from cocoviz.plan import MAX_K, METHODS
from tests.support.engine import random_trees, release_options


def build(tree, **change):
    kwargs = {"epsilons": [1.0, 1.0], "methods": ["Hc", "Hg"], "max_size": 10, **change}
    return Plan.build(tree, **kwargs)


def test_plan_is_frozen_and_public(toy_public_tree):
    plan = build(toy_public_tree)
    with pytest.raises(AttributeError):
        plan.max_size = 3
    assert plan.shape.groups == ((4,), (2, 2))
    assert plan.shape.paths == (((),), (("a",), ("b",)))
    assert plan.ps == (1, 2)
    assert not hasattr(plan.shape, "sizes") and not hasattr(plan, "tree")


@settings(max_examples=100)
@given(st.data())
def test_release_budget_is_the_plan_cost(data):
    """For every method mix and consistency mode: the release spends exactly what the plan said."""
    rt = data.draw(random_trees())
    opts = data.draw(release_options(rt.tree.depth + 1, rt.tree.max_size))
    seed = opts.pop("seed")
    plan = Plan.build(rt.tree, **opts)
    cost = plan.cost()
    release = estimate(rt.tree, seed=seed, **opts)
    assert release.budget.charges == cost.charges
    assert release.budget.total == cost.total == pytest.approx(math.fsum(opts["epsilons"]))
    assert release.plan == plan


def test_cost_per_method_and_mode(toy_public_tree):
    charges = build(toy_public_tree, methods=["naive", "Hg"]).cost().charges
    # One charge per (level, query), covering the level's nodes: cells add up, ε is spent once.
    assert [(c.level, c.node, c.nodes, c.quantity, c.cells, c.sensitivity, c.epsilon) for c in charges] == [
        (0, (), 1, "H[0..10]", 11, 2.0, 1.0),
        (1, (), 2, "Hg", 4, 1.0, 1.0),
    ]
    assert [c.where for c in charges] == ["(root)", "all 2 nodes"]
    bottom = build(toy_public_tree, epsilons=[0.25, 0.5], consistency="bottom-up").cost()
    assert [(c.level, c.nodes, c.epsilon) for c in bottom.charges] == [(1, 2, 0.75)]
    assert bottom.total == 0.75


def test_registry_drives_validation_and_cost():
    assert set(METHODS) == {"Hc", "Hg", "naive", "Hcp"}  # Hcp: experimental (tests/test_hcp.py)
    for name, method in METHODS.items():
        assert method.name == name and method.summary
        cells = method.cells(np.array([3, 5]), 10)
        assert cells.tolist() == ({"Hc": [10, 10], "Hg": [3, 5], "naive": [11, 11], "Hcp": [9, 9]}[name])
        assert method.needs_k == (name != "Hg")


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"epsilons": [0.0, 1.0]}, "ε of level 0 must be between"),
        ({"epsilons": [1.0, -1.0]}, "ε of level 1 must be between"),
        ({"epsilons": [float("inf"), 1.0]}, "ε of level 0 must be between"),
        ({"epsilons": [1.0, float("nan")]}, "ε of level 1 must be between"),
        ({"epsilons": [1e-300, 1.0]}, "ε of level 0 must be between 1e-06 and 1e\\+06"),
        ({"epsilons": [1e300, 1.0]}, "ε of level 0 must be between"),
        ({"epsilons": [True, 1.0]}, "ε of level 0 must be a real number"),
        ({"epsilons": [1 + 0j, 1.0]}, "ε of level 0 must be a real number"),
        ({"epsilons": ["one", 1.0]}, "ε of level 0 must be a real number"),
        ({"epsilons": "1.0"}, "epsilons must be a sequence"),
        ({"epsilons": 1.0}, "epsilons must be a sequence"),
        ({"epsilons": [1.0]}, "epsilons has 1 entries but the hierarchy has 2 levels"),
        ({"epsilons": [1.0, 1.0, 1.0]}, "epsilons has 3 entries"),
        ({"methods": ["Hc"]}, "methods has 1 entries but the hierarchy has 2 levels"),
        ({"methods": ["Hc", "hist"]}, "method of level 1 must be one of"),
        ({"methods": ["Hc", ["Hg"]]}, "method of level 1 must be one of"),
        ({"p": 3}, "p of level 0 must be 1 or 2"),
        ({"p": True}, "p of level 0 must be 1 or 2"),
        ({"p": 1.0}, "p of level 0 must be 1 or 2"),
        ({"p": [1, 0]}, "p of level 1 must be 1 or 2"),
        ({"p": [1]}, "p has 1 entries"),
        ({"max_size": 0}, "whole number from 1 to"),
        ({"max_size": 4.5}, "whole number from 1 to"),
        ({"max_size": True}, "whole number from 1 to"),
        ({"max_size": 10**12}, "whole number from 1 to 10,000,000"),
        ({"consistency": "sideways"}, "consistency must be one of"),
        ({"merge": "median"}, "merge must be one of"),
    ],
)
def test_bad_plan_parameters(toy_public_tree, change, problem):
    with pytest.raises(ParameterError, match=problem):
        build(toy_public_tree, **change)
    with pytest.raises(ParameterError, match=problem):  # and through the one-call form
        estimate(
            toy_public_tree, **{"epsilons": [1.0, 1.0], "methods": ["Hc", "Hg"], "max_size": 10, "seed": 0, **change}
        )


def test_epsilon_errors_are_budget_errors(toy_public_tree):
    with pytest.raises(BudgetError):
        build(toy_public_tree, epsilons=[1e-300, 1.0])


def test_the_constructor_checks_a_complete_plan(toy_public_tree):
    shape = Shape.of(toy_public_tree)
    with pytest.raises(ParameterError, match="p of level 0 must be None"):
        Plan(shape, (1.0, 1.0), ("naive", "Hg"), (1, 2))
    with pytest.raises(ParameterError, match="p of level 1 must be 1 or 2"):
        Plan(shape, (1.0, 1.0), ("Hc", "Hg"), (1, None))
    assert Plan(shape, (1.0, 1.0), ("Hc", "Hg"), (1, 2), 10) == build(toy_public_tree)


def test_k_limit_is_checked_before_allocating(toy_public_tree):
    assert build(toy_public_tree, max_size=MAX_K).max_size == MAX_K


def test_plan_round_trips_through_a_dict(toy_public_tree):
    plan = build(toy_public_tree, consistency="none", merge="average")
    again = Plan.from_dict(plan.to_dict())
    assert again == plan and again.cost() == plan.cost()


# ------------------------------------------------------------------ parameter fuzzing
ADVERSARIAL = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**64), 2**64),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.complex_numbers(max_magnitude=10),
    st.lists(st.integers(0, 3), max_size=2),
    st.sampled_from([0, 1, 2, 3, 1e-300, 1e300, 1e-6, 1e6, 2**31, 2**62, float("nan"), -1]),
)
NAMES = {
    "epsilons": "ε",
    "methods": "method",
    "p": "p",
    "max_size": "max_size",
    "seed": "seed",
    "consistency": "consistency",
    "merge": "merge",
}


@settings(max_examples=150)
@given(st.data())
def test_any_parameter_is_refused_by_name_or_gives_a_consistent_release(data):
    """Every parameter, good or adversarial: a CocovizError naming it, or a release that is consistent."""
    from cocoviz import CocovizError, Hierarchy

    tree = Hierarchy.from_groups(pd.DataFrame({"r": list("aabb"), "size": [4, 1, 2, 1]}), size="size", levels=["r"])
    good = {
        "epsilons": [1.0, 1.0],
        "methods": ["Hc", "Hg"],
        "p": None,
        "max_size": 10,
        "seed": 0,
        "consistency": "top-down",
        "merge": "weighted",
    }
    name = data.draw(st.sampled_from(sorted(good)))
    value = data.draw(
        st.one_of(
            ADVERSARIAL,
            st.lists(ADVERSARIAL, min_size=2, max_size=2),
            st.lists(st.sampled_from(["Hc", "Hg", "naive", "hc", ""]), min_size=2, max_size=2),
        )
    )
    kwargs = dict(good, **{name: value})
    try:
        release = estimate(tree, **kwargs)
    except CocovizError as exc:
        assert NAMES[name] in str(exc) or name in str(exc), (name, value, str(exc))
    else:
        assert release.is_consistent()


@pytest.mark.parametrize("seed", ["x", True, -1, 1.5, [1, "a"]])
def test_bad_seeds_are_refused_by_name(toy_public_tree, seed):
    with pytest.raises(ParameterError, match="seed must be a whole number"):
        estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=seed)
