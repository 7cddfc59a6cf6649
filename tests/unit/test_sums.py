"""Wu's strategies for prefix sums: sensitivities proven by brute force, noise scales, empirical privacy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cocoviz.errors import InputError, ParameterError
from cocoviz.privacy.budget import double_geometric_variance
from cocoviz.privacy.noise import FastSampler
from cocoviz.sums import (
    STRATEGIES,
    answer,
    buckets,
    direct_total,
    greedy_h,
    matrix_sensitivity,
    prefix_sums,
    query_matrix,
    sensitivity,
    strategy_error,
    strategy_query,
)
from tests.support.neighbours import person_neighbours, record_neighbours

NAMES = ("identity", "sqm", "workload", "tamm", "timm")
TAUS = (None, 1, 2, 3, 5)


def total(h: np.ndarray, tau: int | None) -> int:
    s = np.arange(len(h))
    return int(np.dot(s if tau is None else np.minimum(s, tau), h))


def query(name: str, h: np.ndarray, J: int, tau: int | None) -> np.ndarray:
    return np.array([total(h, tau)]) if name == "total" else strategy_query(name, h, J, tau)


def declared(name: str, J: int, neighbours: str, tau: int | None):
    if name == "total":
        return 1 if neighbours == "person" else tau
    return sensitivity(name, J, neighbours, tau)


def max_change(name: str, h: np.ndarray, J: int, tau: int | None, neighbours) -> tuple[int, np.ndarray]:
    """Largest L1 change of the query vector, and of each entry, over the given neighbours of ``h``."""
    base = query(name, h, J, tau)
    diffs = np.array([np.abs(query(name, g, J, tau) - base) for g in neighbours])
    return int(diffs.sum(axis=1).max()), diffs.max(axis=0)


def random_histogram(rng: np.random.Generator, J: int, full: bool) -> np.ndarray:
    """Sizes 0..J+2; ``full``: every size present, so every worst-case neighbour exists."""
    h = rng.integers(0, 3, J + 3)
    h[rng.integers(0, J + 3)] += 1  # at least one group
    return h + 1 if full else h


# ------------------------------------------------------------ the issue's examples
def test_issue_toy_example():
    h = np.array([0, 2, 1, 0, 1])  # Alice's group of 4, Eve's of 2, two of 1
    assert prefix_sums(h, 4).tolist() == [2, 4, 4, 8]
    eve = np.array([0, 2, 0, 1, 1])  # Eve's group gains a person: 2 -> 3
    assert prefix_sums(h, 4)[1] == 4 and prefix_sums(eve, 4)[1] == 2
    assert prefix_sums(h, 4)[2] == 4 and prefix_sums(eve, 4)[2] == 5
    assert total(h, None) == 8 and total(eve, None) == 9
    assert int((np.cumsum(h) != np.cumsum(eve)).sum()) == 1  # exactly one Hc cell
    assert sorted(map(tuple, person_neighbours(h))).count(tuple(np.append(eve, 0))) == 1


# ------------------------------------------------------------ sensitivities
@pytest.mark.parametrize("J", [1, 2, 3, 4, 5, 7, 8, 9, 13])
@pytest.mark.parametrize("neighbours", ["person", "record"])
def test_declared_sensitivity_equals_matrix_column_bound(J, neighbours):
    for name in NAMES:
        for tau in TAUS:
            whole, rows = matrix_sensitivity(query_matrix(name, J, tau), neighbours)
            if name == "sqm":
                assert rows.tolist() == sensitivity(name, J, neighbours, tau).tolist()
            else:
                assert whole == sensitivity(name, J, neighbours, tau), (name, J, neighbours, tau)


@pytest.mark.parametrize("J", [1, 2, 3, 4, 6, 8])
def test_person_sensitivity_by_brute_force(J):
    rng = np.random.default_rng(J)
    for name in (*NAMES, "total"):
        for tau in TAUS:
            for trial in range(4):
                h = random_histogram(rng, J, full=trial == 0)
                whole, per_entry = max_change(name, h, J, tau, person_neighbours(h))
                delta = declared(name, J, "person", tau)
                if name == "sqm":
                    assert (per_entry <= delta).all() and (trial or per_entry.tolist() == delta.tolist())
                else:
                    assert whole <= delta and (trial or whole == delta), (name, J, tau, whole, delta)


@pytest.mark.parametrize("J", [1, 2, 3, 4, 6, 8])
def test_record_sensitivity_by_brute_force(J):
    rng = np.random.default_rng(100 + J)
    for name in (*NAMES, "total"):
        for tau in TAUS[1:] if name == "total" else TAUS:
            for trial in range(3):
                h = random_histogram(rng, J, full=trial == 0)
                whole, per_entry = max_change(name, h, J, tau, record_neighbours(h, J + 4))
                delta = declared(name, J, "record", tau)
                if name == "sqm":
                    assert (per_entry <= delta).all() and (trial or per_entry.tolist() == delta.tolist())
                else:
                    assert whole <= delta and (trial or whole == delta), (name, J, tau, whole, delta)


def test_closed_forms():
    # Person level: the prefix vector moves by exactly J at any b < τ, whatever τ; truncation does not help.
    assert [sensitivity("workload", J, "person", 2) for J in (1, 5, 50)] == [1, 5, 50]
    # Record level: ⌊(J+1)²/4⌋ untruncated, τ(J+1-τ) below the middle.
    assert [sensitivity("workload", J, "record") for J in (1, 4, 9, 100)] == [1, 6, 25, 2550]
    assert sensitivity("workload", 100, "record", 4) == 4 * 97
    assert sensitivity("tamm", 100, "person") == 14 and sensitivity("tamm", 100, "record") == 8
    assert sensitivity("timm", 100, "record", 4) == 32 and sensitivity("identity", 100, "person") == 2
    # SQM's normalised vector P(j)/Δ_j moves by 1 + Σ_{j>b} 1/j ≤ Σ_{j≤J} 1/j: far below the J its charge records.
    whole, _ = matrix_sensitivity(query_matrix("sqm", 8) / np.arange(1, 9)[:, None], "person")
    assert whole == pytest.approx(sum(1 / j for j in range(1, 9)))  # H_8, at b = 0


def test_refusals():
    with pytest.raises(ParameterError, match="needs a truncation"):
        direct_total(np.array([1, 2]), 1.0, FastSampler(0), neighbours="record")
    with pytest.raises(ParameterError, match="unknown strategy"):
        answer(np.array([1, 2]), 1.0, 2, FastSampler(0), strategy="ektelo")
    with pytest.raises(ParameterError, match="J must be"):
        sensitivity("workload", 0)
    with pytest.raises(ParameterError, match="neighbours"):
        sensitivity("workload", 3, "household")
    with pytest.raises(InputError):
        answer(np.array([1, -2]), 1.0, 2, FastSampler(0), strategy="identity")


# ------------------------------------------------------------ noise scales
def reconstruction(name: str, J: int, tau: int | None, scale: np.ndarray) -> np.ndarray:
    """Variance of each P̂(j): the linear answer map applied to unit noise, times the noise variance."""
    plan, w = STRATEGIES[name], np.minimum(np.arange(J + 1), tau or J)
    rows = len(strategy_query(name, np.ones(J + 1, np.int64), J, tau))
    maps = np.stack([plan.answer(np.eye(rows)[r], J, w) for r in range(rows)])  # rows x J
    var = np.array([double_geometric_variance(s) for s in np.broadcast_to(scale, rows)])
    return (maps**2 * var[:, None]).sum(axis=0)


@pytest.mark.statistical
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("neighbours,tau", [("person", None), ("record", 2)])
def test_noise_has_the_declared_scale(name, neighbours, tau):
    TRIALS = 6000
    J, eps, h = 6, 2.0, np.array([1, 4, 3, 2, 0, 1, 1, 2])
    true = prefix_sums(h, J, tau)
    draws = (
        np.array(
            [
                answer(h, eps, J, FastSampler(11), strategy=name, neighbours=neighbours, tau=tau, key=(t,)).raw
                for t in range(TRIALS)
            ]
        )
        - true
    )
    delta = np.asarray(sensitivity(name, J, neighbours, tau), np.float64)
    scale = delta * J / eps if name == "sqm" else delta / eps
    expected = reconstruction(name, J, tau, scale)
    # Over 48 checked entries, bounds of 5 standard errors (a sample variance of this law has a relative
    # standard error of about sqrt(5 / TRIALS) = 2.9%), so no seed fails by chance.
    assert np.abs(draws.mean(axis=0)) == pytest.approx(0, abs=float(5 * np.sqrt(expected / TRIALS).max()))
    assert draws.var(axis=0) == pytest.approx(expected, rel=0.15)
    est = answer(h, eps, J, FastSampler(11), strategy=name, neighbours=neighbours, tau=tau, key=(0,))
    assert est.charges[0].epsilon == eps
    assert est.charges[0].scale == pytest.approx(J / eps if name == "sqm" else float(delta) / eps)


def test_answer_is_the_strategy_map_of_the_keyed_draw():
    h, J, sampler = np.array([0, 2, 1, 0, 1]), 4, FastSampler(3)
    for name in ("identity", "workload", "tamm", "timm"):
        est = answer(h, 0.7, J, sampler, strategy=name, key=(5, 1))
        noisy = sampler.draw(strategy_query(name, h, J), est.charges[0].scale, (5, 1))
        w = np.arange(J + 1)
        assert np.allclose(est.raw, STRATEGIES[name].answer(noisy, J, w))
        fit = est.estimate(isotonic=True)
        assert (np.diff(fit) >= -1e-9).all() and (fit >= 0).all()


# ------------------------------------------------------------ empirical privacy
def max_log_ratio(a: np.ndarray, b: np.ndarray, min_count: int = 2000) -> float:
    """Largest |log P_a(y)/P_b(y)| over outputs y seen at least ``min_count`` times under both."""
    keys_a, counts_a = np.unique(a, axis=0, return_counts=True)
    keys_b, counts_b = np.unique(b, axis=0, return_counts=True)
    in_b = {tuple(k): c for k, c in zip(keys_b, counts_b)}
    ratios = [
        abs(math.log(c / in_b[tuple(k)]))
        for k, c in zip(keys_a, counts_a)
        if c >= min_count and in_b.get(tuple(k), 0) >= min_count
    ]
    assert len(ratios) >= 3
    return max(ratios)


def samples(name: str, h: np.ndarray, J: int, scale: float, key: int, n: int = 600_000, tau=None) -> np.ndarray:
    """``n`` noisy measurements of ``name``'s query (its answer is a post-processing of them)."""
    return FastSampler(key).draw(np.tile(query(name, h, J, tau), (n, 1)), scale, (0,))


CASES = [  # (strategy, D, D' one person / one group away, J, neighbours, τ)
    ("total", np.array([0, 2, 1, 0, 1]), np.array([0, 2, 0, 1, 1]), 4, "person", None),
    ("workload", np.array([1, 2, 1]), np.array([0, 3, 1]), 2, "person", None),  # a person joins a 0-group
    ("identity", np.array([0, 2, 1]), np.array([0, 1, 2]), 2, "person", None),  # 1 -> 2: two cells move
    ("total", np.array([0, 2, 1, 0, 1]), np.array([0, 2, 1, 0, 1, 0, 1]), 4, "record", 3),  # a group of 6, τ = 3
]


@pytest.mark.statistical
@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[4]}" for c in CASES])
def test_empirical_privacy_on_neighbours(case):
    """Measured outputs (the answer is a post-processing of them) on neighbours: ratio ≤ e^ε, and tight."""
    name, d, d2, J, neighbours, tau = case
    eps = 1.0
    scale = float(declared(name, J, neighbours, tau)) / eps
    a, b = samples(name, d, J, scale, 1, tau=tau), samples(name, d2, J, scale, 2, tau=tau)
    loss = max_log_ratio(a, b)
    assert eps - 0.2 < loss < eps + 0.1  # at most e^ε up to sampling error, and the bound is reached
    halved = max_log_ratio(samples(name, d, J, scale / 2, 1, tau=tau), samples(name, d2, J, scale / 2, 2, tau=tau))
    assert halved > eps + 0.5  # the same check fails when the noise scale is halved


# ------------------------------------------------------------ GreedyH (Wu's TaMM with a workload-weighted strategy)
def greedy_query(h: np.ndarray, J: int, neighbours: str, tau) -> np.ndarray:
    """The weighted strategy's true measurement A·H[1..J] (what its Δ is taken on)."""
    a = greedy_h(J, np.minimum(np.arange(1, J + 1), tau or J).astype(float), neighbours=neighbours)
    return a @ buckets(h, J)[1 : J + 1]


@pytest.mark.parametrize("J", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("neighbours", ["person", "record"])
def test_greedyh_sensitivity_by_brute_force(J, neighbours):
    rng = np.random.default_rng(200 + J)
    for tau in (None, 2):
        delta = sensitivity("greedyh", J, neighbours, tau)
        worst = 0.0
        for trial in range(3):
            h = random_histogram(rng, J, full=trial == 0)
            base = greedy_query(h, J, neighbours, tau)
            others = person_neighbours(h) if neighbours == "person" else record_neighbours(h, J + 4)
            worst = max(worst, max(np.abs(greedy_query(g, J, neighbours, tau) - base).sum() for g in others))
        assert worst == pytest.approx(delta, rel=1e-12), (J, neighbours, tau)


def test_greedyh_answers_are_unbiased_with_the_predicted_error_and_beat_dyadic():
    J, eps, h, tau = 8, 1.0, np.array([1, 4, 3, 2, 0, 1, 1, 2, 3, 1]), None
    true = prefix_sums(h, J, tau)
    draws = {
        name: np.array(
            [answer(h, eps, J, FastSampler(5), strategy=name, neighbours="record", key=(t,)).raw for t in range(4000)]
        )
        - true
        for name in ("greedyh", "tamm")
    }
    assert np.abs(draws["greedyh"].mean(axis=0)).max() < 5 * draws["greedyh"].std(axis=0).max() / np.sqrt(4000)
    mse = {k: float((v**2).sum(axis=1).mean()) for k, v in draws.items()}
    w = np.tril(np.ones((J, J))) * np.arange(1, J + 1)[None, :]
    a = greedy_h(J, np.arange(1, J + 1).astype(float))
    # double-geometric noise: variance slightly below the Laplace's 2 (Δ/ε c)², so allow 10 %
    assert mse["greedyh"] == pytest.approx(2 / eps**2 * strategy_error(a, w), rel=0.1)
    assert mse["greedyh"] < mse["tamm"]
    est = answer(h, eps, J, FastSampler(5), strategy="greedyh", neighbours="record")
    assert est.charges[0].epsilon == eps and est.charges[0].sensitivity == pytest.approx(1.0)
