"""A fixed total budget: Plan.build(total_epsilon= / total_rho=, split=) spends exactly the total asked."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import BudgetError, ParameterError, Plan, Shape
from cocoviz.plan.split import shares, split_weights

PATHS = (((),), (("a",), ("b",)), (("a", "x"), ("b", "y")))
SHAPE = Shape(("s", "c"), PATHS, ((), (0, 0), (0, 1)), ((6,), (3, 3), (3, 3)))


def test_named_splits():
    assert split_weights("equal", 3) == [1.0, 1.0, 1.0]
    assert split_weights("leaves", 3) == [1.0, 2.0, 3.0]
    plan = Plan.build(SHAPE, total_epsilon=6.0, split="leaves", methods=["Hg", "Hc", "Hc"], max_size=8)
    assert plan.epsilons == (1.0, 2.0, 3.0) and plan.cost().total == 6.0
    plan = Plan.build(SHAPE, total_epsilon=3.0, methods=["Hg", "Hc", "Hc"], max_size=8)  # equal by default
    assert plan.epsilons == (1.0, 1.0, 1.0)


totals = st.one_of(
    st.floats(0.01, 20, allow_nan=False),
    st.fractions(Fraction(1, 100), 20).map(float),
    st.sampled_from([0.1, 0.3, 1 / 3, 2 / 3, 0.7, 1.1, 1e-2 * 7]),
)
splits = st.one_of(st.sampled_from(["equal", "leaves"]), st.lists(st.floats(0.01, 10), min_size=3, max_size=3))


@settings(max_examples=60, deadline=None)
@given(
    totals,
    splits,
    st.sampled_from(["public", "noisy-max", "noisy-max-per-node", "svt", "from-hg"]),
    st.sampled_from(["top-down", "bottom-up", "none"]),
)
def test_the_total_spent_is_the_total_asked_exactly(total, split, k_select, consistency):
    if k_select == "from-hg" and consistency == "bottom-up":
        return
    k_epsilon = None if k_select in ("public", "from-hg") else total / 7
    plan = Plan.build(
        SHAPE, total_epsilon=total, split=split, methods=["Hg", "Hc", "Hc"], max_size=8,
        k_select=k_select, k_epsilon=k_epsilon, consistency=consistency,
    )  # fmt: skip
    assert plan.cost().total == total
    # Every level but the last gets its share of what ε_K leaves, to rounding.
    k_spent = total - math.fsum(plan.epsilons)
    want = shares(total - k_spent, split_weights(split, 3))
    assert all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(plan.epsilons, want))
    if k_select == "noisy-max-per-node":
        assert math.isclose(k_spent, 2 * k_epsilon, rel_tol=1e-9)  # one ε_K per level that needs K
    elif k_epsilon is not None:
        assert math.isclose(k_spent, k_epsilon, rel_tol=1e-9)
    else:
        assert abs(k_spent) < 1e-12


@settings(max_examples=40, deadline=None)
@given(st.floats(0.01, 5), splits, st.sampled_from(["public", "noisy-max", "noisy-max-per-node"]))
def test_a_total_rho_is_spent_exactly(total, split, k_select):
    k_epsilon = None if k_select == "public" else math.sqrt(total / 5)  # ρ_K = ε_K²/2 = total/10 each
    plan = Plan.build(
        SHAPE, total_rho=total, split=split, methods=["Hg", "Hc", "Hc"], max_size=8, k_select=k_select,
        k_epsilon=k_epsilon,
    )  # fmt: skip
    assert plan.cost().total_rho == total and plan.accounting == "zCDP"


def test_the_plan_file_round_trips_a_total(tmp_path):
    plan = Plan.build(
        SHAPE, total_epsilon=0.1, split="leaves", methods=["Hg", "Hc", "Hc"], k_select="noisy-max", k_epsilon=0.01
    )
    for name in ("p.toml", "p.json"):
        plan.save(tmp_path / name)
        again = Plan.load(tmp_path / name)
        assert again == plan and again.cost().total == 0.1
    # A hand-written plan may give the total and its split instead of ε per level.
    (tmp_path / "hand.toml").write_text(
        'total_epsilon = 0.1\nsplit = "leaves"\nmethods = ["Hg", "Hc", "Hc"]\n'
        'k_select = "noisy-max"\nk_epsilon = 0.01\n'
    )
    assert Plan.load(tmp_path / "hand.toml", shape=SHAPE) == plan
    (tmp_path / "w.json").write_text('{"total_rho": 0.5, "split": [1, 1, 2], "methods": ["Hg", "Hc", "Hc"]}')
    assert Plan.load(tmp_path / "w.json", shape=SHAPE).cost().total_rho == 0.5


@pytest.mark.parametrize(
    ("options", "error", "reason"),
    [
        ({"total_epsilon": 1.0, "epsilons": [1, 1, 1]}, ParameterError, "give either"),
        ({"total_epsilon": 1.0, "total_rho": 1.0}, ParameterError, "give either"),
        ({"epsilons": [1, 1, 1], "split": "equal"}, ParameterError, "not with epsilons"),
        ({"total_epsilon": 1.0, "split": "roots"}, ParameterError, "split must be one of"),
        ({"total_epsilon": 1.0, "split": [1, 2]}, ParameterError, "one weight per level"),
        ({"total_epsilon": 1.0, "split": [1, 0, 2]}, ParameterError, "weight of level 1"),
        ({"total_epsilon": -1.0}, BudgetError, "total_epsilon"),
        ({"total_epsilon": 0.1, "k_select": "noisy-max", "k_epsilon": 0.1}, BudgetError, "takes the whole total"),
        ({"total_epsilon": 0.1, "k_select": "noisy-max-per-node", "k_epsilon": 0.06}, BudgetError, "whole total"),
    ],
)
def test_refusals(options, error, reason):
    with pytest.raises(error, match=reason):
        Plan.build(SHAPE, methods=["Hg", "Hc", "Hc"], max_size=8, **options)


def test_rounding_to_even_does_not_defeat_an_exact_total():
    """3.2433333333333336 split 1 : 2 over two levels: every float of the last share puts the exact sum
    halfway between two floats, and rounding to even skips this one; a finer share takes over."""
    two = Shape(("s",), (((),), (("a",),)), ((), (0,)), ((2,), (2,)))
    plan = Plan.build(two, total_epsilon=3.2433333333333336, split="leaves", methods=["Hg", "Hc"], max_size=8)
    assert plan.cost().total == 3.2433333333333336
    for k in range(1, 400):  # a sweep of totals k/30 (most are not sums of their shares in floats)
        for split in ("equal", "leaves", [1.0, 7.0]):
            plan = Plan.build(two, total_epsilon=k / 30, split=split, methods=["Hg", "Hc"], max_size=8)
            assert plan.cost().total == k / 30
