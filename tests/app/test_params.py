"""The dashboard's release parameters speak the plan's options (cocoviz.plan.options)."""

from __future__ import annotations

import dataclasses

from cocoviz.plan.options import BUDGET_OPTIONS, OPTIONS
from pages.common.engine import Params


def test_params_give_every_plan_option_but_the_shared_totals():
    params = Params(epsilons=(1.0, 1.0), methods=("Hc", "Hg"), ps=(1, 2), max_size=10)
    given = set(params.plan_options())
    assert given <= set(OPTIONS)
    assert set(OPTIONS) - given - {"rhos"} == BUDGET_OPTIONS - {"epsilons", "rhos", "delta"}  # ε or ρ per level
    defaults = {f.name: f.default for f in dataclasses.fields(Params)}
    for name in ("consistency", "merge", "k_select", "k_beta_scope", "delta", "k_epsilon", "k_beta", "prior"):
        assert defaults[name] == OPTIONS[name].default, name
