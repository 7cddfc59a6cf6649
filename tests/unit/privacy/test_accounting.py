"""Accounting in ρ-zCDP beside pure ε: conversions (against OpenDP), L2 sensitivities by brute force,
the plan's cost and the release's budget in every mode, and the saved release's record."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import BudgetError, ParameterError, Plan, estimate, load_release
from cocoviz.plan import METHODS, gaussian_epsilon
from cocoviz.privacy.accounting import (
    bun_steinke_epsilon,
    check_rho,
    gaussian_sigma2,
    rho_of_epsilon,
    zcdp_delta,
    zcdp_epsilon,
)
from cocoviz.privacy.budget import PERSONS, Budget, Charge
from cocoviz.privacy.noise import GaussianNoise, discrete_gaussian_variance
from tests.support.engine import random_trees, release_options


# ------------------------------------------------------------------ conversions
@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.125, 0.5, 2.0, 15.29])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-3])
def test_zcdp_to_epsilon_delta_matches_opendp_and_beats_bun_steinke(rho, delta):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    gaussian = dp.m.make_gaussian(
        dp.atom_domain(T="i64"), dp.absolute_distance(T="i64"), scale=math.sqrt(1 / (2 * rho))
    )
    theirs = dp.c.make_zCDP_to_approxDP(gaussian).map(1).epsilon(delta)
    ours = zcdp_epsilon(rho, delta)
    assert ours == pytest.approx(theirs, rel=1e-9)
    assert ours < bun_steinke_epsilon(rho, delta)
    assert zcdp_delta(rho, ours) <= delta  # the ε returned is on the side that holds
    assert zcdp_delta(rho, ours * (1 - 1e-6)) > delta


def test_pure_steps_cost_epsilon_squared_over_two_and_sigma_is_exact():
    assert rho_of_epsilon(0.5) == 0.125
    assert gaussian_sigma2(0.5, 1) == 1 and gaussian_sigma2(0.1, 2) == Fraction(2) / (2 * Fraction(0.1))
    assert gaussian_sigma2(0.3, 1) * 2 * Fraction(0.3) == 1  # ρ = Δ₂²/(2σ²) holds exactly
    for bad in (0.0, -1.0, math.nan, True, "1", 1e7):
        with pytest.raises(BudgetError, match="ρ"):
            check_rho(bad)


# ------------------------------------------------------------------ L2 sensitivities, brute force
@pytest.mark.parametrize("name", ["Hc", "Hg", "naive", "Hcp"])
@pytest.mark.parametrize("max_size", [1, 4, 9, 40])
def test_l2_sensitivity_by_brute_force(name, max_size):
    """Every node of up to 4 groups of sizes 0..K+2, every person added or removed: the largest squared L2
    change of the query is the registry's Δ₂², and it is reached (the L1 Δ too)."""
    method = METHODS[name]
    rng = np.random.default_rng(max_size)
    worst_l2 = worst_l1 = 0
    for _ in range(200):
        groups = rng.integers(0, max_size + 3, rng.integers(1, 5))
        for g in range(len(groups)):
            for step in (-1, 1):
                if groups[g] + step < 0:
                    continue
                other = groups.copy()
                other[g] += step
                bound = max_size if method.needs_k else None
                a = np.asarray(method.query(*np.unique(groups, return_counts=True), bound), np.int64)
                b = np.asarray(method.query(*np.unique(other, return_counts=True), bound), np.int64)
                worst_l2 = max(worst_l2, int(((a - b) ** 2).sum()))
                worst_l1 = max(worst_l1, int(np.abs(a - b).sum()))
    assert worst_l2 == method.l2_squared and worst_l1 == method.sensitivity
    assert {m.name: m.l2_sensitivity for m in METHODS.values()} == {"Hc": 1, "Hg": 1, "naive": math.sqrt(2), "Hcp": 1}


# ------------------------------------------------------------------ the plan
def test_plan_takes_rhos_or_epsilons_and_states_its_cost(toy_public_tree):
    with pytest.raises(ParameterError, match="either epsilons .* or rhos"):
        Plan.build(toy_public_tree, epsilons=[1, 1], rhos=[1, 1], methods=["Hc", "Hg"])
    with pytest.raises(ParameterError, match="either epsilons"):
        Plan.build(toy_public_tree, methods=["Hc", "Hg"])
    with pytest.raises(BudgetError, match="ρ of level 1"):
        Plan.build(toy_public_tree, rhos=[1, 0], methods=["Hc", "Hg"])
    plan = Plan.build(toy_public_tree, rhos=[0.5, 0.125], methods=["naive", "Hg"], max_size=10, delta=1e-6)
    assert plan.accounting == "zCDP" and plan.ps == (None, 2) and plan.delta == 1e-6
    assert Plan.build(toy_public_tree, rhos=[0.5, 0.5], methods=["Hc", "Hg"]).ps == (2, 2)  # L2 fits by default
    assert Plan.build(toy_public_tree, rhos=[0.5, 0.5], methods=["Hc", "Hg"], p=1).ps == (1, 1)
    assert plan.level_noise(0) == GaussianNoise(Fraction(2))  # naive: σ² = Δ₂²/(2ρ) = 2/1
    assert plan.level_noise(1) == GaussianNoise(Fraction(4))
    cost = plan.cost()
    rows = [(c.level, c.quantity, c.sensitivity, c.epsilon, c.rho, c.noise, c.relation) for c in cost.charges]
    assert rows == [
        (0, "H[0..10]", math.sqrt(2), None, 0.5, "gaussian", PERSONS),
        (1, "Hg", 1.0, None, 0.125, "gaussian", PERSONS),
    ]
    assert [c.scale for c in cost.charges] == pytest.approx([math.sqrt(2), 2.0])
    assert cost.total_rho == 0.625 and cost.per_level_rho() == {0: 0.5, 1: 0.125}
    assert cost.epsilon_delta() == zcdp_epsilon(0.625, 1e-6) == cost.total
    assert cost.epsilon_delta(1e-10) == pytest.approx(zcdp_epsilon(0.625, 1e-10))
    text = cost.describe()
    assert text.startswith("total ρ spent: 0.625 (ρ-zCDP")
    assert "as (ε, δ)-DP: ε = " in text and "δ = 1e-06" in text and "level 1: ρ = 0.125" in text
    assert "Δ₂ = 1.41421, ρ = 0.5, discrete Gaussian σ = 1.41421; neighbours: persons" in text
    frame = cost.to_frame()
    assert list(frame["rho"]) == [0.5, 0.125] and list(frame["relation"]) == [PERSONS] * 2
    assert list(frame["noise_variance"]) == pytest.approx([discrete_gaussian_variance(2.0), 4.0], rel=1e-9)
    bottom = Plan.build(toy_public_tree, rhos=[0.25, 0.5], methods=["Hc", "Hg"], consistency="bottom-up").cost()
    assert bottom.per_level_rho() == {1: 0.75}
    assert Plan.from_dict(plan.to_dict()) == plan and Budget.from_dict(cost.to_dict()) == cost


def test_pure_epsilon_steps_enter_a_zcdp_plan_as_epsilon_squared_over_two(toy_public_tree):
    plan = Plan.build(
        toy_public_tree, rhos=[0.5, 0.5], methods=["Hc", "Hg"], max_size=10, k_select="noisy-max", k_epsilon=0.5
    )
    cost = plan.cost()
    k = cost.charges[0]
    assert (k.noise, k.epsilon, k.rho, k.zcdp_rho) == ("laplace", 0.5, None, 0.125)
    assert cost.total_rho == pytest.approx(1.125) and cost.per_level_rho() == {0: 0.625, 1: 0.5}
    extra = Budget(cost.charges, extra=(("selection", 1.0),), accounting="zCDP")
    assert extra.total_rho == pytest.approx(1.625)


def test_fits_read_the_gaussian_variance():
    # the ε a zCDP level hands its fit has Laplace variance 2/ε² equal to the Gaussian's exact variance
    for rho, name in [(0.5, "Hg"), (2.0, "Hc"), (8.0, "naive"), (0.01, "Hg")]:
        eps = gaussian_epsilon(rho, METHODS[name])
        sigma2 = float(gaussian_sigma2(rho, METHODS[name].l2_squared))
        assert 2 / eps**2 == pytest.approx(discrete_gaussian_variance(sigma2), rel=1e-12)
    assert discrete_gaussian_variance(0.125) < 0.125 / 2  # where σ is small the exact variance matters


def test_budget_refuses_gaussian_charges_in_pure_epsilon():
    gauss = Charge(0, (), "Hg", 3, 1.0, None, rho=0.5, noise="gaussian")
    with pytest.raises(ParameterError, match="zCDP"):
        Budget((gauss,))
    with pytest.raises(ParameterError, match="spends ρ"):
        Charge(0, (), "Hg", 3, 1.0, 0.5, noise="gaussian")
    with pytest.raises(ParameterError, match="accounting"):
        Budget((), accounting="rdp")


@st.composite
def any_accounting(draw, n_levels: int, largest: int) -> dict:
    opts = draw(release_options(n_levels, largest))
    if draw(st.booleans()):
        opts["rhos"] = [e * e / 2 for e in opts.pop("epsilons")]
    k_select = draw(st.sampled_from(["public", "noisy-max", "noisy-max-per-node", "svt"]))
    if k_select != "public":
        opts.update(k_select=k_select, k_epsilon=draw(st.sampled_from([0.1, 1.0])))
    return opts


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_release_budget_is_the_plan_cost_in_every_mode(data):
    """accounting × consistency × k_select: the release spends exactly what the plan said."""
    rt = data.draw(random_trees())
    opts = data.draw(any_accounting(rt.tree.depth + 1, rt.tree.max_size))
    seed = opts.pop("seed")
    plan = Plan.build(rt.tree, **opts)
    cost = plan.cost()
    release = estimate(rt.tree, seed=seed, **opts)
    assert release.budget.charges == cost.charges and release.plan == plan
    assert release.budget.accounting == cost.accounting == plan.accounting
    assert release.budget.total_rho == cost.total_rho and release.budget.total == cost.total
    assert release.is_consistent() or plan.consistency == "none"
    if "rhos" in opts:
        k_rho = rho_of_epsilon(opts["k_epsilon"]) if plan.private_k() else 0.0
        levels = 1 if plan.k_select == "noisy-max-per-node" else 0  # ε_K charged on each level that needs K
        if levels:
            k_rho *= len(plan.k_levels())
        assert cost.total_rho == pytest.approx(math.fsum(opts["rhos"]) + k_rho)


def test_zcdp_release_is_seeded_saved_and_loaded_with_its_accounting(tmp_path, toy_public_tree):
    kwargs = {"rhos": [0.5, 2.0], "methods": ["Hc", "Hg"], "max_size": 10, "seed": 3}
    a, b = estimate(toy_public_tree, **kwargs), estimate(toy_public_tree, **kwargs)
    assert a.to_frame().equals(b.to_frame()) and a.is_consistent()
    pure = estimate(toy_public_tree, epsilons=[1.0, 2.0], methods=["Hc", "Hg"], max_size=10, seed=3)
    assert pure.budget.accounting == "pure-ε" and "rhos" not in pure.plan.to_dict()
    path = tmp_path / "zcdp.parquet"
    a.save(path)
    back = load_release(path)
    assert back.plan == a.plan and back.budget == a.budget
    assert back.budget.accounting == "zCDP" and back.budget.delta == 1e-10
    assert [c.relation for c in back.budget.charges] == [PERSONS, PERSONS]
    params = a.parameters()
    assert params["accounting"] == "zCDP" and params["rhos"] == [0.5, 2.0] and params["rho_spent"] == 2.5
    assert params["delta"] == 1e-10 and params["epsilon_spent"] == pytest.approx(zcdp_epsilon(2.5, 1e-10))


def test_tenure_margin_is_charged_under_household_records_with_l2_one():
    """One household's record changes (a flip of its tenure, alone or with a person): on every level one node's
    owner count moves by 1, so Δ₂ = Δ₁ = 1 under that relation; the report names the relation."""
    import pandas as pd

    from cocoviz.core.shape import Shape
    from cocoviz.hierarchy import Hierarchy
    from cocoviz.joint.measure import TENURE_SENSITIVITY, owner_counts, tenure_cost
    from cocoviz.privacy.budget import HOUSEHOLDS

    levels = ["state", "county"]
    groups = pd.DataFrame(
        {
            "state": list("aaabb"),
            "county": ["a1", "a1", "a2", "b1", "b2"],
            "size": [0, 2, 1, 3, 1],
            "owner": [1, 0, 1, 0, 1],
        }
    )

    def margins(g: pd.DataFrame) -> list[np.ndarray]:
        table = g.assign(owners=g["owner"], renters=1 - g["owner"]).groupby([*levels, "size"], as_index=False)
        shape = Shape.of(Hierarchy.from_groups(g[[*levels, "size"]], size="size", levels=levels))
        return owner_counts(table[["owners", "renters"]].sum(), shape)

    base = margins(groups)
    worst = 0
    for i in range(len(groups)):
        for step in (0, 1, -1):
            other = groups.copy()
            other.loc[i, "owner"] = 1 - other.loc[i, "owner"]
            if other.loc[i, "size"] + step < 0:
                continue
            other.loc[i, "size"] += step
            worst = max(worst, *(int(((m - b) ** 2).sum()) for m, b in zip(margins(other), base)))
    assert worst == TENURE_SENSITIVITY**2 == 1
    cost = tenure_cost(
        Shape.of(Hierarchy.from_groups(groups[[*levels, "size"]], size="size", levels=levels)), [1, 1, 1]
    )
    assert {c.relation for c in cost.charges} == {HOUSEHOLDS}
    assert f"neighbours: {HOUSEHOLDS}" in cost.describe()
    assert Budget.from_dict(cost.to_dict()) == cost


def _delta_all_steps(rho: float, epsilon: float) -> float:
    """:func:`zcdp_delta` with every one of its 200 bisection steps (the reference for the early stop)."""
    if rho == 0:
        return 0.0
    lo, hi = 1.0 + 1e-9, max((epsilon + 1) / (2 * rho) + 2, 2.0)
    for _ in range(200):
        alpha = (lo + hi) / 2
        if (2 * alpha - 1) * rho - epsilon + math.log1p(-1 / alpha) < 0:
            lo = alpha
        else:
            hi = alpha
    alpha = (lo + hi) / 2
    log_delta = (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1 / alpha) - math.log(alpha - 1)
    return min(math.exp(log_delta), 1.0)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 50.0), st.floats(0.0, 20.0))
def test_the_bisections_stop_early_with_the_result_of_every_step(rho, epsilon):
    assert zcdp_delta(rho, epsilon) == _delta_all_steps(rho, epsilon)
