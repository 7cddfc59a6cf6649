"""The plan options are declared once (cocoviz.plan.options): every entry point takes them with their defaults."""

from __future__ import annotations

import inspect

import pandas as pd
import pytest

from cocoviz import Hierarchy, ParameterError, Plan, estimate, select_mix, selection_cost
from cocoviz.plan.options import BUDGET_OPTIONS, OPTIONS, PLAN_OPTIONS, plan_keywords
from tests.support import files as file_support


def _tree() -> Hierarchy:
    rows = {"st": list("aaabbb"), "co": list("xxyzzz"), "size": [4, 1, 2, 1, 3, 3]}
    return Hierarchy.from_groups(pd.DataFrame(rows), size="size", levels=["st", "co"])


def test_plan_build_takes_exactly_the_options_in_their_order_with_their_defaults():
    parameters = list(inspect.signature(Plan.build).parameters.values())[1:]  # after the source
    assert [q.name for q in parameters] == list(OPTIONS)
    for q in parameters:
        expected = inspect.Parameter.empty if q.name == "methods" else OPTIONS[q.name].default
        assert q.default == expected, q.name


def test_estimate_takes_every_option_with_its_default():
    parameters = inspect.signature(estimate).parameters
    missing = [name for name in OPTIONS if name not in parameters]
    assert not missing
    for name, option in OPTIONS.items():
        expected = inspect.Parameter.empty if name == "methods" else option.default
        assert parameters[name].default == expected, name


@pytest.mark.parametrize("function", [select_mix, selection_cost])
def test_a_selection_takes_the_budget_options_itself_and_passes_the_rest_on(function):
    parameters = inspect.signature(function).parameters
    assert BUDGET_OPTIONS - {"delta"} <= set(parameters)
    assert any(q.kind is inspect.Parameter.VAR_KEYWORD for q in parameters.values())
    tree = _tree()
    with pytest.raises(ParameterError, match="does not take bogus"):
        selection_cost(tree, [["Hc"] * 3], epsilons=[1, 1, 1], epsilon_select=0.1, bogus=1)
    passed_on = {"merge": "average", "k_beta_scope": "release", "consistency": "none", "max_size": 9}
    assert selection_cost(tree, [["Hc"] * 3], epsilons=[1, 1, 1], epsilon_select=0.5, **passed_on) == 3.5


def test_estimate_shares_a_total_as_plan_build_does():
    tree = _tree()
    shared = {"total_epsilon": 1.5, "split": "leaves", "methods": ["Hg", "Hc", "Hg"], "max_size": 9}
    plan = Plan.build(tree, **shared)
    by_total = estimate(tree, **shared, seed=3)
    by_levels = estimate(tree, **plan.options(), seed=3)
    assert by_total.plan == plan and by_total.budget.total == 1.5
    assert file_support.same_release(by_total, by_levels)


@pytest.mark.parametrize("option", [o for o in PLAN_OPTIONS if o.choices is not None and o.name != "methods"])
def test_every_declared_choice_builds_and_one_outside_is_refused(option):
    tree = _tree()
    base = {"epsilons": [1, 1, 1], "methods": ["Hg", "Hg", "Hc"], "max_size": 9}
    for value in option.choices:
        private_k = option.name == "k_select" and value not in ("public", "from-hg")
        plan = Plan.build(tree, **{**base, option.name: value, **({"k_epsilon": 0.1} if private_k else {})})
        assert getattr(plan, option.name) == value
    with pytest.raises(ParameterError):
        Plan.build(tree, **{**base, option.name: "no-such-choice"})


def test_plan_keywords_fills_defaults_and_refuses_what_is_no_option():
    keywords = plan_keywords({"methods": ["Hc"], "merge": "average"})
    assert list(keywords) == list(OPTIONS) and keywords["merge"] == "average" and keywords["consistency"] == "top-down"
    with pytest.raises(ParameterError, match="does not take seed"):
        plan_keywords({"methods": ["Hc"], "seed": 1})


def test_a_release_wide_beta_with_a_public_k_releases_as_the_per_node_one():
    """``k_beta_scope`` only scopes a private K̂'s β: with a public K it changes no number and no note."""
    tree = _tree()
    options = {"epsilons": [1, 1, 1], "methods": ["Hg", "Hc", "Hc"], "max_size": 9, "seed": 2}
    wide, per_node = estimate(tree, **options, k_beta_scope="release"), estimate(tree, **options)
    assert wide.plan.k_beta_scope == "release" and wide.budget.notes == per_node.budget.notes
    for level in range(3):
        a, b = wide.runs(level), per_node.runs(level)
        assert a.sizes.tolist() == b.sizes.tolist() and a.counts.tolist() == b.counts.tolist()
