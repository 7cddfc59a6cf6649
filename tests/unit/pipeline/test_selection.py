"""Private algorithm selection: only the winner is published, and it carries the whole cost."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import BudgetError, Hierarchy, ParameterError, estimate, evaluate, load_release, select_mix
from cocoviz.release.release import Release


def wide_tree() -> Hierarchy:
    rng = np.random.default_rng(4)
    rows = [(s, f"{s}{c}", int(size)) for s in "pqr" for c in range(4) for size in rng.integers(0, 9, 15)]
    return Hierarchy.from_groups(
        pd.DataFrame(rows, columns=["state", "county", "size"]), size="size", levels=["state", "county"]
    )


def test_select_mix_publishes_the_winner_with_the_whole_cost(toy_public_tree):
    candidates = [("Hc", "Hc"), ("Hg", "Hg"), ("Hc", "Hg")]
    chosen = select_mix(toy_public_tree, candidates, epsilons=[0.5, 1.0], epsilon_select=0.25, max_size=10, seed=2)
    assert isinstance(chosen, Release) and chosen.is_consistent()
    assert chosen.budget.total == pytest.approx(3 * 1.5 + 0.25)
    assert tuple(chosen.plan.methods) == candidates[chosen.selection["chosen"]]
    assert chosen.selection == {
        "candidates": [list(c) for c in candidates],
        "chosen": chosen.selection["chosen"],
        "epsilon_select": 0.25,
    }
    assert set(chosen.selection) == {"candidates", "chosen", "epsilon_select"}  # no loser's score
    (charge,) = chosen.budget.charges
    assert (charge.level, charge.cells, charge.epsilon, charge.sensitivity) == (None, 3, 0.25, 4.0)
    text = chosen.budget.describe()
    assert "candidate 1: Hc x Hc: ε = 1.5" in text and "whole data" in text
    assert chosen.parameters()["epsilon_spent"] == pytest.approx(4.75)
    again = select_mix(toy_public_tree, candidates, epsilons=[0.5, 1.0], epsilon_select=0.25, max_size=10, seed=2)
    assert again.selection == chosen.selection
    pd.testing.assert_frame_equal(again.to_frame(), chosen.to_frame())


def test_select_mix_picks_the_lowest_total_emd():
    tree = wide_tree()
    candidates = [("Hg", "Hg", "Hg"), ("Hc", "Hc", "Hc"), ("naive", "naive", "naive")]
    # A huge selection budget makes the noise on the scores vanish (scale 6/10^6).
    chosen = select_mix(tree, candidates, epsilons=[0.2, 0.2, 0.2], epsilon_select=1e6, max_size=12, seed=5)
    # Candidate k drew from the streams keyed (5, k + 1): replay them to know every score.
    totals = [
        int(
            evaluate(tree, estimate(tree, epsilons=[0.2] * 3, methods=list(mix), max_size=12, seed=(5, k + 1)))[
                "emd"
            ].sum()
        )
        for k, mix in enumerate(candidates)
    ]
    assert len(set(totals)) == 3
    assert chosen.selection["chosen"] == int(np.argmin(totals))


def test_select_mix_bad_input(toy_public_tree):
    with pytest.raises(ParameterError, match="at least one candidate"):
        select_mix(toy_public_tree, [], epsilons=[1.0, 1.0], epsilon_select=1.0, max_size=10)
    with pytest.raises(ParameterError, match="ε of the selection must be between"):
        select_mix(toy_public_tree, [("Hc", "Hc")], epsilons=[1.0, 1.0], epsilon_select=0, max_size=10)


def test_a_selection_under_zcdp_counts_every_candidates_rho_and_its_own_eps_squared_over_two(tmp_path):
    """Under zCDP each candidate spends its ρ per level, the noisy min ε_select²/2; the saved release loads back."""
    from cocoviz import selection_cost

    tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}), size="size",
                                 levels=["region"])  # fmt: skip
    mixes = [["Hc", "Hc"], ["Hg", "Hc"]]  # both need K: each draws its own K̂
    options = dict(max_size=8, k_select="noisy-max", k_epsilon=0.2)
    chosen = select_mix(tree, mixes, rhos=[0.5, 0.25], epsilon_select=0.4, seed=3, **options)
    want = 2 * (0.5 + 0.25 + 0.2**2 / 2) + 0.4**2 / 2
    assert chosen.budget.accounting == "zCDP" and chosen.plan.rhos == (0.5, 0.25)
    assert chosen.budget.total_rho == pytest.approx(want, rel=1e-12)
    assert chosen.budget.per_level_rho()[1] == pytest.approx(0.5)  # both candidates' level 1, summed
    assert selection_cost(tree, mixes, rhos=[0.5, 0.25], epsilon_select=0.4, **options) == chosen.budget.total_rho
    assert chosen.is_consistent()
    chosen.save(tmp_path / "r.parquet")
    assert load_release(tmp_path / "r.parquet").budget == chosen.budget


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    st.floats(0.05, 20),
    st.floats(0.01, 0.5),
    st.sampled_from(["equal", "leaves", [1.0, 3.0]]),
    st.sampled_from([{}, {"k_select": "noisy-max", "k_epsilon": 0.01}]),
)
def test_a_total_rho_is_the_selections_whole_cost_exactly(total, share, split, k):
    from cocoviz.pipeline.selection import selection_cost, selection_epsilons

    tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}), size="size",
                                 levels=["region"])  # fmt: skip
    candidates = [["Hc", "Hc"], ["Hg", "Hg"], ["Hg", "Hc"]]
    options = dict(max_size=8, **k)
    eps_select = math.sqrt(2 * total * share)  # the selection takes about `share` of the total ρ
    rhos, eps_select_exact = selection_epsilons(
        tree, candidates, total_rho=total, epsilon_select=eps_select, split=split, **options
    )
    assert math.isclose(eps_select_exact, eps_select, rel_tol=1e-9)  # moved by a float or two at most
    assert selection_cost(tree, candidates, rhos=rhos, epsilon_select=eps_select_exact, **options) == total
    assert selection_cost(tree, candidates, total_rho=total, epsilon_select=eps_select, split=split, **options) == total


# ------------------------------------------------------------------ a selection inside a fixed total
@settings(max_examples=40, deadline=None)
@given(
    st.floats(0.05, 20),
    st.floats(0.001, 0.3),
    st.sampled_from(["equal", "leaves", [1.0, 3.0]]),
    st.sampled_from(
        [{}, {"k_select": "noisy-max", "k_epsilon": 0.01}, {"k_select": "noisy-max-per-node", "k_epsilon": 0.01}]
    ),
)
def test_a_total_epsilon_is_the_selections_whole_cost_exactly(total, share, split, k):
    from cocoviz.pipeline.selection import selection_cost, selection_epsilons

    tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}), size="size",
                                 levels=["region"])  # fmt: skip
    candidates = [["Hc", "Hc"], ["Hg", "Hg"], ["Hg", "Hc"]]
    options = dict(max_size=8, **k)
    if total * share <= 0.1:
        return
    epsilons, eps_select = selection_epsilons(
        tree, candidates, total_epsilon=total, epsilon_select=total * share, split=split, **options
    )
    assert math.isclose(eps_select, total * share, rel_tol=1e-9)  # moved by a float or two at most
    cost = selection_cost(tree, candidates, epsilons=epsilons, epsilon_select=eps_select, **options)
    assert cost == total
    assert (
        selection_cost(tree, candidates, total_epsilon=total, epsilon_select=total * share, split=split, **options)
        == total
    )


def test_select_mix_at_a_total_round_trips_and_refuses_both(tmp_path):
    tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}), size="size",
                                 levels=["region"])  # fmt: skip
    chosen = select_mix(tree, [["Hc", "Hc"], ["Hg", "Hg"]], total_epsilon=0.7, epsilon_select=0.1, split="leaves",
                        max_size=8, seed=3)  # fmt: skip
    assert chosen.budget.total == 0.7
    chosen.save(tmp_path / "r.parquet")
    assert load_release(tmp_path / "r.parquet").budget.total == 0.7
    with pytest.raises(ParameterError, match="one of them"):
        select_mix(tree, [["Hc", "Hc"]], epsilons=[1, 1], total_epsilon=1.0, epsilon_select=0.1, max_size=8, seed=0)
    with pytest.raises(BudgetError, match="take the whole total"):
        select_mix(tree, [["Hc", "Hc"]], total_epsilon=0.1, epsilon_select=0.1, max_size=8, seed=0)
    at_rho = select_mix(tree, [["Hc", "Hc"], ["Hg", "Hg"]], total_rho=0.7, epsilon_select=0.3, split="leaves",
                        max_size=8, seed=3)  # fmt: skip
    assert at_rho.budget.total_rho == 0.7
    at_rho.save(tmp_path / "z.parquet")
    assert load_release(tmp_path / "z.parquet").budget.total_rho == 0.7
    with pytest.raises(ParameterError, match="one of them"):
        select_mix(tree, [["Hc", "Hc"]], rhos=[1, 1], epsilons=[1, 1], epsilon_select=0.1, max_size=8, seed=0)
