"""Every field of a plan holds what its name says: ε only under pure ε, ρ and δ under zCDP, σ² in its noise laws."""

from __future__ import annotations

import dataclasses
import json
import math
from fractions import Fraction

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import InputError, ParameterError, Plan, Shape, estimate, load_release
from cocoviz.methods.hcp_prior import Prior
from cocoviz.plan import METHODS, gaussian_epsilon
from cocoviz.privacy.noise import GaussianNoise
from cocoviz.release.files.release_file import META_KEY

SHAPE = Shape(
    ("state", "county"),
    (((),), (("a",), ("b",)), (("a", "x"), ("a", "y"), ("b", "z"))),
    ((), (0, 0), (0, 0, 1)),
    ((7,), (4, 3), (2, 2, 3)),
)

#: What each field of a zCDP plan may hold; a new field fails the test until it is said here.
ZCDP_FIELDS = {
    "shape": lambda plan, given: isinstance(plan.shape, Shape),
    "epsilons": lambda plan, given: plan.epsilons is None,  # no ε per level: ρ is the privacy figure
    "rhos": lambda plan, given: plan.rhos == tuple(given["rhos"]),
    "delta": lambda plan, given: plan.delta == given["delta"],
    "methods": lambda plan, given: plan.methods == tuple(given["methods"]),
    "ps": lambda plan, given: all(q in (None, 1, 2) for q in plan.ps),
    "max_size": lambda plan, given: plan.max_size == given["max_size"],
    "consistency": lambda plan, given: plan.consistency == given["consistency"],
    "merge": lambda plan, given: plan.merge == "weighted",
    "k_select": lambda plan, given: plan.k_select == given["k_select"],
    # The private K's own mechanism is pure ε_K-DP, charged as ρ = ε_K²/2 (checked against the cost below).
    "k_epsilon": lambda plan, given: plan.k_epsilon == given["k_epsilon"],
    "k_beta": lambda plan, given: 0 < plan.k_beta < 1,
    "prior": lambda plan, given: isinstance(plan.prior, Prior),
    "k_beta_scope": lambda plan, given: plan.k_beta_scope == "node",
}


@st.composite
def zcdp_options(draw) -> dict:
    methods = draw(st.lists(st.sampled_from(["Hc", "Hg", "naive"]), min_size=3, max_size=3))
    needs_k = any(METHODS[m].needs_k for m in methods)
    k_select = draw(st.sampled_from(["public", "noisy-max"])) if needs_k else "public"
    consistency = draw(st.sampled_from(["top-down", "bottom-up", "none"]))
    return dict(
        rhos=draw(st.lists(st.floats(0.01, 4.0), min_size=3, max_size=3)),
        delta=draw(st.sampled_from([1e-10, 1e-6])),
        methods=methods,
        max_size=draw(st.integers(8, 50)),
        consistency=consistency,
        k_select=k_select,
        k_epsilon=0.5 if k_select != "public" else None,
    )


@given(zcdp_options())
@settings(max_examples=60, deadline=None, derandomize=True)
def test_no_field_of_a_zcdp_plan_holds_anything_but_a_rho_a_delta_or_a_public_choice(given_options):
    plan = Plan.build(SHAPE, **given_options)
    assert {f.name for f in dataclasses.fields(Plan)} == set(ZCDP_FIELDS), "say what the new field holds"
    for name, holds in ZCDP_FIELDS.items():
        assert holds(plan, given_options), f"the field {name} holds {getattr(plan, name)!r}"
    # The noise law of each level is the discrete Gaussian of σ² = Δ₂²/(2ρ) exactly (bottom-up: Σρ on each).
    for level, law in enumerate(plan.noise_laws):
        rho = math.fsum(plan.rhos) if plan.consistency == "bottom-up" else plan.rhos[level]
        assert law == GaussianNoise(Fraction(plan.level_method(level).l2_squared) / (2 * Fraction(rho)))
    cost = plan.cost()
    for charge in (c for c in cost.charges if c.noise != "gaussian"):  # a private K's, if any level needs K
        assert (charge.epsilon, charge.zcdp_rho) == (plan.k_epsilon, plan.k_epsilon**2 / 2)
    with pytest.raises(ParameterError, match="spends ρ per level, not ε"):
        plan.level_epsilon(0)
    # What the plan gives back to rebuild it, and what it stores, hold no ε per level either.
    assert "epsilons" not in plan.options() and "epsilons" not in plan.to_dict()
    assert Plan.from_dict(plan.to_dict()) == plan


def test_a_pure_epsilon_plan_holds_its_epsilons_and_double_geometric_scales():
    plan = Plan.build(SHAPE, epsilons=[0.5, 1.0, 2.0], methods=["Hg", "Hc", "naive"], max_size=9)
    assert plan.epsilons == (0.5, 1.0, 2.0) and plan.rhos is None
    assert plan.noise_laws == tuple(METHODS[m].sensitivity / e for m, e in zip(plan.methods, plan.epsilons))
    assert [plan.fit_epsilon(k) for k in range(3)] == [0.5, 1.0, 2.0]
    with pytest.raises(ParameterError, match="pure-ε plan spends no ρ"):
        plan.level_rho(0)


def test_a_plan_holds_one_budget_not_both():
    plan = Plan.build(SHAPE, rhos=[0.5] * 3, methods=["Hg"] * 3)
    with pytest.raises(ParameterError, match="ε per level .* or ρ per level .*: got both"):
        dataclasses.replace(plan, epsilons=(1.0, 1.0, 1.0))
    with pytest.raises(ParameterError, match="got neither"):
        dataclasses.replace(plan, rhos=None)


def test_a_zcdp_plan_stored_before_with_its_variance_equivalents_still_reads():
    """Files written before a zCDP plan held no ε stored ``epsilons`` (each level's Gaussian variance equivalent)
    beside ``rhos``: they are read (and checked), and anything else beside ρ is refused as a second budget."""
    plan = Plan.build(SHAPE, rhos=[0.125, 0.5, 2.0], methods=["Hg", "Hc", "Hc"], max_size=12)
    old = {**plan.to_dict(), "epsilons": [gaussian_epsilon(r, METHODS[m]) for r, m in zip(plan.rhos, plan.methods)]}
    assert Plan.from_dict(old) == plan
    with pytest.raises(InputError, match="two budgets"):
        Plan.from_dict({**old, "epsilons": [1.0, 1.0, 1.0]})


def test_a_zcdp_release_file_written_before_loads(tmp_path, toy_public_tree):
    """A release file of the format before (its plan with ``epsilons`` beside ``rhos``) loads to the same plan."""
    release = estimate(toy_public_tree, rhos=[0.125, 0.25], methods=["Hc", "Hg"], max_size=6, seed=3)
    path = tmp_path / "release.parquet"
    release.save(path)
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[META_KEY])
    plan = release.plan
    meta["plan"]["epsilons"] = [gaussian_epsilon(r, METHODS[m]) for r, m in zip(plan.rhos, plan.methods)]
    pq.write_table(table.replace_schema_metadata({META_KEY: json.dumps(meta).encode()}), path)
    assert load_release(path).plan == plan
    meta["plan"]["epsilons"] = [2.0, 2.0]
    pq.write_table(table.replace_schema_metadata({META_KEY: json.dumps(meta).encode()}), path)
    with pytest.raises(InputError, match="two budgets"):
        load_release(path)
