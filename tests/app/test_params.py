"""The dashboard's state of a release is the plan's options (cocoviz.plan.options), declared nowhere else."""

from __future__ import annotations

import dataclasses

import pytest

from cocoviz import Plan
from cocoviz.plan.options import BUDGET_OPTIONS, OPTIONS, PLAN_OPTIONS
from pages.common import links
from pages.common.engine import STATE_OPTIONS, Params
from tests.support.digests import three_levels

#: What the dashboard holds beside the plan's options: the sampler's choices, no plan option.
UI_ONLY = {"seed", "secure"}


def test_the_state_keys_are_the_options_table_and_nothing_else_declares_one():
    # Every plan option but the shared totals (the sidebar fills ε per level from them), in the table's order.
    assert STATE_OPTIONS == tuple(o.name for o in PLAN_OPTIONS if o.name not in {"total_epsilon", "total_rho", "split"})
    assert set(OPTIONS) - set(STATE_OPTIONS) == BUDGET_OPTIONS - {"epsilons", "rhos", "delta"}
    params = Params.of(epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10)
    assert [name for name, _ in params.options] == list(STATE_OPTIONS)
    # The fields: the options as one value, and the UI-only choices; no plan option is a field of its own.
    fields = {f.name for f in dataclasses.fields(Params)}
    assert fields == {"options"} | UI_ONLY and not fields & set(OPTIONS)
    for name in STATE_OPTIONS:  # an option not given takes the table's default
        if name not in ("epsilons", "methods", "max_size"):
            assert getattr(params, name) == OPTIONS[name].default, name


@pytest.mark.parametrize(
    "options",
    [
        dict(epsilons=[0.5, 1.0, 2.0], methods=["Hg", "Hc", "Hcp"], max_size=160, prior="parent", merge="average"),
        dict(rhos=[0.125, 0.5, 2.0], methods=["Hg", "Hc", "Hg"], max_size=200, delta=1e-8),
        dict(
            epsilons=[1.0] * 3,
            methods=["Hc"] * 3,
            max_size=400,
            k_select="noisy-max-per-node",
            k_epsilon=0.5,
            k_beta_scope="release",
        ),
    ],
)
def test_a_plans_options_are_a_state_that_gives_the_plan_back(options):
    tree = three_levels()
    plan = Plan.build(tree, **options)
    assert set(plan.options()) <= set(STATE_OPTIONS)  # the state can hold whatever a plan gives back
    params = Params.of_plan(plan, seed=4)
    assert Plan.build(tree, **params.plan_options()) == plan
    assert Plan.build(tree, **Params.of(**options).plan_options()) == plan
    assert hash(params) == hash(Params.of_plan(plan, seed=4))  # it keys the shared memos
    assert (params.epsilons is None) == ("rhos" in options) and params.kwargs()["seed"] == 4


def test_the_state_refuses_a_name_that_is_no_plan_option():
    with pytest.raises(TypeError, match="no plan options"):
        Params.of(epsilons=[1.0], methods=["Hc"], ps=[1])


def test_a_zcdp_state_links_its_rho_and_a_pure_one_its_epsilon():
    zcdp = Params.of(rhos=[0.125, 0.5], methods=["Hc", "Hg"], max_size=8, seed=2)
    settings = links.release_settings("toy", None, zcdp, ())
    assert settings["rhos"] == "0.125,0.5" and "eps" not in settings
    pure = Params.of(epsilons=[1.0, 2.0], methods=["Hc", "Hg"], max_size=8)
    settings = links.release_settings("toy", None, pure, ())
    assert settings["eps"] == "1,2" and "rhos" not in settings
