"""A privately chosen K: noisy max, per node, SVT; sensitivities by brute force; empirical privacy checks."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import Hierarchy, Measurements, ParameterError, Plan, estimate, evaluate, measure, post_process
from cocoviz.hierarchy import node_path
from cocoviz.measure.measurements import choose_bounds, open_sampler
from cocoviz.methods.estimators import query_hc, query_hg, query_naive
from cocoviz.privacy.noise import FastSampler
from cocoviz.privacy.truncation import (
    bound_from_release,
    hg_bounds,
    noisy_max_bound,
    noisy_max_offset,
    svt_grid,
    truncated_nodes,
    truncation_error,
)


# ------------------------------------------------------------------ neighbours: one person added or removed
def neighbours(sizes: list[int]):
    """Every dataset one person away: a person added to, or removed from, one group (G is public)."""
    for i, s in enumerate(sizes):
        yield sizes[:i] + [s + 1] + sizes[i + 1 :]
        if s > 0:
            yield sizes[:i] + [s - 1] + sizes[i + 1 :]


def runs(sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    values, counts = np.unique(np.asarray(sizes, np.int64), return_counts=True)
    return values, counts


@settings(max_examples=60)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=6))
def test_brute_forced_sensitivities_equal_the_declared_ones(sizes):
    """Over every one-person change: max size 1, 'groups ≤ θ' 1, Hc 1, Hg 1, H 2 (declared in the registry)."""
    from cocoviz.plan import METHODS

    k = 9  # above every size reachable by one change
    worst = {"max": 0, "at_most": 0, "Hc": 0, "Hg": 0, "naive": 0}
    base = runs(sizes)
    for other in neighbours(sizes):
        changed = runs(other)
        worst["max"] = max(worst["max"], abs(max(other) - max(sizes)))
        at_most = [abs(sum(x <= t for x in other) - sum(x <= t for x in sizes)) for t in range(k)]
        worst["at_most"] = max(worst["at_most"], max(at_most))
        for name, query in (("Hc", query_hc), ("Hg", query_hg), ("naive", query_naive)):
            worst[name] = max(worst[name], int(np.abs(query(*changed, k) - query(*base, k)).sum()))
    assert worst == {
        "max": 1,
        "at_most": 1,
        "Hc": METHODS["Hc"].sensitivity,
        "Hg": METHODS["Hg"].sensitivity,
        "naive": METHODS["naive"].sensitivity,
    }


def test_toy_examples():
    # Noisy max with ε_K = 1, β = 0.01 and an injected noise of -2: K̂ = 4 - 2 + ⌈ln 100⌉ = 7.
    assert noisy_max_offset(1.0, 0.01) == 5
    assert noisy_max_bound(4, epsilon=1.0, beta=0.01, ceiling=100, noise=-2) == 7
    assert noisy_max_bound(4, epsilon=1.0, beta=0.01, ceiling=6, noise=-2) == 6  # the public ceiling
    assert noisy_max_bound(0, epsilon=1.0, beta=0.5, ceiling=6, noise=-9) == 1  # at least 1
    assert svt_grid(100_000)[-3:].tolist() == [32_768, 65_536, 100_000]
    # Toy root H = [0, 2, 1, 0, 1]: P(1..4) = 2, 4, 4, 8 from a release, at no ε.
    groups = pd.DataFrame({"region": list("abab"), "size": [4, 2, 1, 1]})
    tree = Hierarchy.from_groups(groups, size="size", levels=["region"])
    release = estimate(tree, epsilons=[1e6, 1e6], methods=["Hc", "Hc"], max_size=10, seed=0)
    before = release.budget
    assert release.prefix_persons((), [1, 2, 3, 4]).tolist() == [2, 4, 4, 8] and release.persons(()) == 8
    assert release.persons(("a",)) + release.persons(("b",)) == release.persons(())
    assert release.budget == before  # sum queries are post-processing


def wide_tree(seed: int = 4) -> Hierarchy:
    rng = np.random.default_rng(seed)
    rows = [(s, f"{s}{c}", int(size)) for s in "pqr" for c in range(4) for size in rng.geometric(0.3, 40)]
    return Hierarchy.from_groups(
        pd.DataFrame(rows, columns=["state", "county", "size"]), size="size", levels=["state", "county"]
    )


@pytest.mark.parametrize("k_select", ["noisy-max", "noisy-max-per-node", "svt"])
@pytest.mark.parametrize("consistency", ["top-down", "none", "bottom-up"])
def test_budget_is_the_plan_cost_with_epsilon_k(k_select, consistency):
    tree = wide_tree()
    opts = dict(
        epsilons=[0.5, 0.25, 1.0],
        methods=["Hc", "Hg", "Hc"],
        max_size=500,
        consistency=consistency,
        k_select=k_select,
        k_epsilon=0.1,
    )
    plan = Plan.build(tree, **opts)
    release = estimate(tree, seed=1, **opts)
    assert release.budget.charges == plan.cost().charges
    k_levels = [2] if consistency == "bottom-up" else [0, 2]
    level_eps = {0: 0.5, 1: 0.25, 2: 1.0} if consistency != "bottom-up" else {2: 1.75}
    if k_select == "noisy-max-per-node":  # ε_K once per level that needs K, by parallel composition
        want = {lvl: e + (0.1 if lvl in k_levels else 0) for lvl, e in level_eps.items()}
    else:  # one K̂ measured at the root
        want = {**level_eps, 0: level_eps.get(0, 0) + 0.1}
    assert release.budget.per_level() == pytest.approx(want)
    assert release.budget.total == pytest.approx(sum(want.values()))
    assert release.is_consistent() == (consistency != "none")
    k_chosen = release.chosen_bounds()
    assert sorted(k_chosen) == k_levels and all(1 <= k <= 500 for ks in k_chosen.values() for k in ks)
    if k_select != "noisy-max-per-node":
        assert len({k for ks in k_chosen.values() for k in ks}) == 1


def test_noisy_max_cuts_cells_and_rarely_truncates():
    tree = wide_tree()
    opts = dict(epsilons=[1.0] * 3, methods=["Hc"] * 3, max_size=100_000)
    private = estimate(tree, seed=2, k_select="noisy-max-per-node", k_epsilon=0.5, **opts)
    ev = evaluate(tree, private)
    assert (ev["truncation"] == 0).all()
    assert ev["bound"].max() < 100  # K̂ ≈ max + ⌈ln(10^6)/0.5⌉ = max + 28
    assert (ev["bound"] >= ev["bound"].where(ev["truncation"] > 0, 0)).all()


def test_noisy_max_truncates_with_probability_at_most_beta():
    """Over many keyed draws the truncation frequency matches P(X ≤ -m - 1) = α^(m+1) / (1 + α) ≤ β."""
    eps, beta = 1.0, 0.05
    m = noisy_max_offset(eps, beta)
    exact = math.exp(-eps * (m + 1)) / (1 + math.exp(-eps))
    assert exact <= beta
    n = 20_000
    noise = FastSampler(3).draw(np.zeros(n, np.int64), 1 / eps, (0, 0, 1))
    truncated = np.mean([noisy_max_bound(10, epsilon=eps, beta=beta, ceiling=10**6, noise=x) < 10 for x in noise])
    assert truncated == pytest.approx(exact, abs=4 * math.sqrt(exact / n))


def test_secure_noisy_max_never_reads_the_private_maximum(monkeypatch):
    tree = wide_tree()
    monkeypatch.setattr(Hierarchy, "max_size", property(lambda self: pytest.fail("read the private maximum")))
    for k_select in ("noisy-max", "noisy-max-per-node", "svt"):
        release = estimate(
            tree, epsilons=[1.0] * 3, methods=["Hc"] * 3, max_size=1000, k_select=k_select, k_epsilon=0.5, secure=True
        )
        assert release.is_consistent()


def test_truncation_is_counted_not_refused():
    tree = wide_tree()
    # SVT with a small ε_K stops early and truncates (Wu's method, kept for teaching).
    release = estimate(
        tree, epsilons=[1.0] * 3, methods=["Hc"] * 3, max_size=1000, k_select="svt", k_epsilon=0.05, seed=0
    )
    ev = evaluate(tree, release)
    for row in ev.itertuples():
        path = node_path(row.node)
        assert row.truncation == truncation_error(*tree.node_runs(path), row.bound)
    assert release.is_consistent()


def test_bound_from_an_hg_release():
    tree = wide_tree()
    release = estimate(tree, epsilons=[1e6] * 3, methods=["Hg"] * 3, seed=0)
    assert bound_from_release(release) == tree.max_size


# ------------------------------------------------------------------ empirical privacy on neighbouring data
def sample_bounds(tree, k_select: str, eps_k: float, seeds: range, scale_factor: float = 1.0) -> np.ndarray:
    """K̂ of the root over many seeds, through the engine's own choose_bounds."""
    plan = Plan.build(tree, epsilons=[1.0], methods=["Hc"], max_size=64, k_select=k_select, k_epsilon=eps_k, k_beta=0.2)
    out = []
    for seed in seeds:
        sampler = open_sampler(seed)
        if scale_factor != 1.0:
            draw = sampler.draw
            sampler.draw = lambda values, scale, key, draw=draw: draw(values, scale * scale_factor, key)
        out.append(int(choose_bounds(plan, tree, sampler)[0][0]))
    return np.array(out)


def worst_log_ratio(a: np.ndarray, b: np.ndarray, min_count: int = 400) -> float:
    """max over outcomes seen often enough in both of |ln P_a(k) / P_b(k)|."""
    ka, ca = np.unique(a, return_counts=True)
    kb, cb = np.unique(b, return_counts=True)
    pa, pb = dict(zip(ka, ca)), dict(zip(kb, cb))
    ratios = [abs(math.log(pa[k] / pb[k])) for k in set(pa) & set(pb) if min(pa[k], pb[k]) >= min_count]
    assert ratios, "no outcome seen often enough in both"
    return max(ratios)


@pytest.mark.statistical
@pytest.mark.slow
@pytest.mark.parametrize(
    "k_select, eps_k, bound",
    [
        ("noisy-max", 0.7, 0.7),
        # AboveThreshold is charged ε_K, but against the public threshold G one person moves one query by
        # at most 1, so on neighbours its law moves by at most e^(ε_K/4) (query noise 4/ε_K): the check
        # uses that tighter bound, which a noise scale 0.4 times too small breaks.
        ("svt", 1.2, 1.2 / 4),
    ],
)
def test_empirical_privacy_on_neighbouring_toy_data(k_select, eps_k, bound):
    """One person added to the largest group: the law of K̂ moves by at most e^bound; at 0.4 times the
    noise scale (a wrong mechanism) the same check fails."""
    one = Hierarchy.from_groups(pd.DataFrame({"size": [4, 2, 1, 1]}), size="size", levels=[])
    other = Hierarchy.from_groups(pd.DataFrame({"size": [5, 2, 1, 1]}), size="size", levels=[])
    n, tolerance = 15_000, 0.1
    right = worst_log_ratio(
        sample_bounds(one, k_select, eps_k, range(n)), sample_bounds(other, k_select, eps_k, range(n, 2 * n))
    )
    assert right <= bound + tolerance
    wrong = worst_log_ratio(
        sample_bounds(one, k_select, eps_k, range(n), 0.4), sample_bounds(other, k_select, eps_k, range(n, 2 * n), 0.4)
    )
    assert wrong > bound + tolerance, (right, wrong)


def test_k_select_parameters_are_checked():
    from cocoviz import ParameterError

    tree = wide_tree()
    opts = dict(epsilons=[1.0] * 3, methods=["Hc"] * 3)
    for bad, problem in [
        (dict(k_select="guess"), "k_select must be one of"),
        (dict(k_select="noisy-max"), "give its budget k_epsilon"),
        (dict(k_epsilon=0.5), "with a private k_select"),
        (dict(k_select="svt", k_epsilon=0.0), "k_epsilon"),
        (dict(k_select="noisy-max", k_epsilon=0.5, k_beta=1.5), "k_beta"),
    ]:
        with pytest.raises(ParameterError, match=problem):
            Plan.build(tree, **opts, **bad)
    assert list(itertools.islice(neighbours([1, 0]), 3)) == [[2, 0], [0, 0], [1, 1]]


# ------------------------------------------------------------------ k_beta per K̂ or for the whole release
def test_whole_release_beta_is_split_over_the_draws():
    tree = wide_tree()
    opts = dict(epsilons=[1.0] * 3, methods=["Hg", "Hc", "Hc"], k_select="noisy-max-per-node", k_epsilon=0.5)
    per_node = Plan.build(tree, **opts, k_beta=0.01)
    whole = Plan.build(tree, **opts, k_beta=0.01, k_beta_scope="release")
    assert per_node.k_draws() == whole.k_draws() == 3 + 12
    assert per_node.k_node_beta() == 0.01 and whole.k_node_beta() == 0.01 / 15
    assert "≤ 0.15 (union bound)" in per_node.truncation() and "≤ 0.01 (union bound)" in whole.truncation()
    assert "whole release" in " ".join(estimate(tree, **opts, k_beta_scope="release", seed=0).budget.notes)
    one = Plan.build(tree, **{**opts, "k_select": "noisy-max"}, k_beta=0.01, k_beta_scope="release")
    assert one.k_draws() == 1 and one.k_node_beta() == 0.01  # one K̂: per K̂ is per release
    with pytest.raises(Exception, match="k_beta_scope must be one of"):
        Plan.build(tree, **opts, k_beta_scope="tract")


def exact_truncation(epsilon: float, beta: float) -> float:
    """P(X ≤ −m − 1) for X double-geometric of scale 1/ε and m = ⌈ln(1/β)/ε⌉: one K̂ truncates."""
    alpha = math.exp(-epsilon)
    return alpha ** (noisy_max_offset(epsilon, beta) + 1) / (1 + alpha)


@pytest.mark.parametrize("scope", ["node", "release"])
def test_some_node_truncates_as_stated_seeded_simulation(scope):
    """Noisy max per node on 15 nodes, 3,000 seeded draws: the share of releases where some node truncates
    is the exact 1 − (1 − p)^15 (p per K̂, computed), at most β for the whole-release scope."""
    tree = wide_tree()
    beta, eps, trials = 0.2, 0.3, 3000
    plan = Plan.build(
        tree, epsilons=[1.0] * 3, methods=["Hg", "Hc", "Hc"], max_size=10**6, k_select="noisy-max-per-node",
        k_epsilon=eps, k_beta=beta, k_beta_scope=scope,
    )  # fmt: skip
    some = 0
    for seed in range(trials):
        bounds = choose_bounds(plan, tree, open_sampler(seed))
        some += any(truncated_nodes(tree, level, bounds[level]) for level in (1, 2))
    p = exact_truncation(eps, plan.k_node_beta())
    expected = 1 - (1 - p) ** 15
    sd = math.sqrt(expected * (1 - expected) / trials)
    assert abs(some / trials - expected) < 4 * sd + 1e-9
    if scope == "release":
        assert expected <= beta and some / trials <= beta + 4 * sd
    else:
        assert expected > beta  # the per-node reading lets the whole release truncate more often than β


# ------------------------------------------------------------------ K from an Hg level's noisy answers (no ε)
def test_from_hg_costs_nothing_and_takes_k_from_the_hg_level():
    tree = wide_tree()
    plan = Plan.build(tree, total_epsilon=1.5, methods=["Hg", "Hc", "Hc"], max_size=500, k_select="from-hg")
    assert plan.k_source_level() == 0 and plan.k_draws() == 1
    assert plan.cost().total == 1.5 and not any(c.quantity.startswith("K") for c in plan.cost().charges)
    deeper = Plan.build(tree, epsilons=[0.5] * 3, methods=["Hg", "Hg", "Hc"], max_size=500, k_select="from-hg")
    assert deeper.k_source_level() == 1 and deeper.k_draws() == 3
    measurements = measure(deeper, tree, seed=5)
    source = measurements.levels[1]
    per_state = hg_bounds(source.ptr, source.values, deeper.k_margin(), 500)
    np.testing.assert_array_equal(measurements.levels[2].bounds, np.repeat(per_state, 4))  # each county: its state's
    release = post_process(deeper, measurements)
    assert release.chosen_bounds()[2] == np.repeat(per_state, 4).tolist()
    assert estimate(tree, **deeper.options(), seed=5).to_frame().equals(release.to_frame())
    values = measurements.levels[1].values.copy()
    values[-1] += 1000  # the last state's noisy largest size: its counties' K̂ no longer follow from it
    wrong = dataclasses.replace(measurements.levels[1], values=values)
    with pytest.raises(ParameterError, match="from-hg rule"):
        levels = (measurements.levels[0], wrong, measurements.levels[2])
        post_process(deeper, Measurements(deeper, levels, measurements.budget))


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"methods": ["Hc", "Hg", "Hc"]}, "from an Hg level measured above"),
        ({"methods": ["Hg", "Hc", "Hc"], "consistency": "bottom-up"}, "from an Hg level measured above"),
        ({"methods": ["Hg", "Hc", "Hc"], "k_epsilon": 0.1}, "spends none"),
    ],
)
def test_from_hg_refusals(options, reason):
    with pytest.raises(ParameterError, match=reason):
        Plan.build(wide_tree(), epsilons=[1.0] * 3, max_size=500, k_select="from-hg", **options)


def hg_margin_tail(plan) -> float:
    """The stated bound on one K̂'s truncation: P(X ≤ −m − 1) for the source level's noise (exact for
    double-geometric noise; the sub-Gaussian bound for the discrete Gaussian)."""
    m = plan.k_margin()
    if plan.rhos is None:
        alpha = math.exp(-plan.level_epsilon(plan.k_source_level()))
        return alpha ** (m + 1) / (1 + alpha)
    return math.exp(-((m + 1) ** 2) / (2 * float(plan.level_noise(plan.k_source_level()).sigma2)))


@pytest.mark.statistical
@pytest.mark.parametrize("budget", [{"epsilons": [0.05, 1.0, 1.0]}, {"rhos": [0.002, 0.5, 0.5]}])
def test_from_hg_truncates_no_more_than_stated_seeded_simulation(budget):
    """K from the root's noisy Hg with β = 0.3: over 1,000 seeded releases some county truncates in at
    most the stated share (the fit's top is at least the noisy largest size, so it is below the bound)."""
    tree = wide_tree()
    plan = Plan.build(tree, **budget, methods=["Hg", "Hc", "Hc"], max_size=10**4, k_select="from-hg", k_beta=0.3)
    assert hg_margin_tail(plan) <= 0.3
    trials, some = 1000, 0
    for seed in range(trials):
        m = measure(plan, tree, seed=seed)
        some += truncated_nodes(tree, 2, m.levels[2].bounds) > 0
    sd = math.sqrt(0.3 * 0.7 / trials)
    assert some / trials <= hg_margin_tail(plan) + 4 * sd
