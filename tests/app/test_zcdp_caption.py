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


def test_the_privacy_terms_examples_hold():
    import doctest

    from pages.common import privacy_terms

    result = doctest.testmod(privacy_terms)
    assert result.attempted >= 8 and result.failed == 0


def test_a_pure_side_and_a_zcdp_side_compare_by_the_reading_at_the_zcdp_sides_delta():
    from pages.common.privacy_terms import compared_at

    shape = Shape(("s",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)))

    def cost(**o):
        return Plan.build(shape, methods=["Hc", "Hc"], max_size=10, **o).cost()

    z = cost(rhos=[0.5, 0.5], delta=1e-6)
    reading = zcdp_epsilon(1.0, 1e-6)
    equal = compared_at(cost(epsilons=[reading / 2, reading / 2]), z)
    assert "by (ε, δ) at δ = 1e-06" in equal and f"an equal total, ε = {reading:.4g} each" in equal
    assert "not an equal total: ε = 2 for A" in compared_at(cost(epsilons=[1, 1]), z)
    assert compared_at(z, z).startswith("Both zCDP: compared by total ρ")
