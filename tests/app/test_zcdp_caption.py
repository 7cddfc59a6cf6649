"""The dashboard's ρ caption states what the plan charges (its cost's ρ, a private K's ε_K²/2 wherever the
plan charges it), where the caption once counted ε_K²/2 once beside the levels' ρ."""

from __future__ import annotations

import math

from cocoviz.plan import Plan, Shape
from cocoviz.privacy.accounting import zcdp_epsilon
from pages.common.controls import zcdp_caption


def test_the_caption_is_the_plans_charge():
    shape = Shape(("s",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)))
    differs = False
    for k_select in ("public", "noisy-max", "noisy-max-per-node", "svt"):
        k = {} if k_select == "public" else {"k_select": k_select, "k_epsilon": 0.3}
        cost = Plan.build(shape, rhos=[0.1, 0.1], methods=["Hc", "Hc"], max_size=10, **k).cost()
        caption = zcdp_caption(cost)
        assert f"ρ = {cost.total_rho:g} in all" in caption and "discrete Gaussian" in caption
        assert f"ε = {zcdp_epsilon(cost.total_rho, 1e-10):.3g}" in caption
        once = math.fsum([0.1, 0.1, 0.3**2 / 2 if k else 0.0])
        differs |= not math.isclose(once, cost.total_rho)
    assert differs  # the old count (ε_K²/2 once) is not what some plan charges
