"""The geometric mechanism: both samplers' laws (chi-square), moments, recorded scales, budget report."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from scipy.stats import chisquare

import cocoviz.mechanisms
from cocoviz.mechanisms import (
    Budget,
    FastSampler,
    GeometricMechanism,
    Measurement,
    SecureSampler,
    check_epsilon,
    double_geometric_pmf,
    double_geometric_variance,
)


def chi_square_pvalue(samples: np.ndarray, scale: float) -> float:
    """Goodness of fit of integer ``samples`` to the double-geometric law of ``scale``.

    Cells k = -m+1 .. m-1 one by one and the two tails (<= -m, >= m), with m
    the largest |k| whose expected count is at least 5, so every cell
    (tails included) expects at least 5.
    """
    n = len(samples)
    alpha = math.exp(-1.0 / scale)
    c = (1 - alpha) / (1 + alpha)
    m = 1
    while n * c * alpha ** (m + 1) >= 5:
        m += 1
    inner = np.arange(-m + 1, m)
    tail = alpha**m / (1 + alpha)  # P(X >= m) = Σ_{k>=m} c α^k
    expected = n * np.concatenate([[tail], c * alpha ** np.abs(inner), [tail]])
    assert expected.min() >= 5
    assert expected.sum() == pytest.approx(n)
    observed = np.bincount(np.clip(samples, -m, m) + m, minlength=2 * m + 1)
    return float(chisquare(observed, expected).pvalue)


def fast_noise(n: int, scale: float, seed: int) -> np.ndarray:
    return FastSampler(np.random.default_rng(seed))(np.zeros(n, np.int64), scale)


# ------------------------------------------------------------------ the law itself
@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0, 20.0])
def test_pmf_sums_to_one_and_variance_formula(scale):
    k = np.arange(-4000, 4001)
    pmf = double_geometric_pmf(k, scale)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.sum(k * pmf) == pytest.approx(0.0, abs=1e-12)
    alpha = math.exp(-1 / scale)
    assert double_geometric_variance(scale) == pytest.approx(np.sum(k**2 * pmf), rel=1e-10)
    assert double_geometric_variance(scale) == pytest.approx(2 * alpha / (1 - alpha) ** 2)
    # Scale Δ/ε: P(X = k + 1) / P(X = k) = exp(-ε/Δ) = α for k >= 0.
    assert pmf[4001] / pmf[4000] == pytest.approx(alpha)


# ------------------------------------------------------------------ the fast sampler
@pytest.mark.parametrize("scale, seed", [(1.0, 1), (5.0, 2)])
def test_fast_sampler_follows_the_law(scale, seed):
    noise = fast_noise(200_000, scale, seed)
    assert noise.dtype == np.int64
    assert chi_square_pvalue(noise, scale) > 1e-3


@pytest.mark.parametrize("scale, seed", [(1.0, 3), (5.0, 4)])
@pytest.mark.parametrize("wrong", [0.7, 1.3])
def test_chi_square_rejects_a_wrong_scale(scale, seed, wrong):
    noise = fast_noise(200_000, scale * wrong, seed)
    assert chi_square_pvalue(noise, scale) < 1e-6


def test_chi_square_rejects_rounded_continuous_laplace():
    # The classic mistake (rounding floating-point Laplace) has a different law on the integers.
    rounded = np.rint(np.random.default_rng(6).laplace(0, 1.0, 200_000)).astype(np.int64)
    assert chi_square_pvalue(rounded, 1.0) < 1e-6


def test_fast_sampler_moments():
    scale = 2.0
    n = 1_000_000
    noise = fast_noise(n, scale, 5)
    var = double_geometric_variance(scale)  # 2α/(1-α)² with α = e^{-1/2}
    assert abs(noise.mean()) < 5 * math.sqrt(var / n)
    assert noise.var() == pytest.approx(var, rel=0.015)


def test_fast_sampler_adds_to_values_and_keeps_shape():
    values = np.arange(12, dtype=np.int64).reshape(3, 4)
    before = values.copy()
    out = FastSampler(np.random.default_rng(0))(values, 1e-9)  # scale ~0: no noise
    np.testing.assert_array_equal(out, values)
    np.testing.assert_array_equal(values, before)
    noisy = FastSampler(np.random.default_rng(0))(values, 3.0)
    assert noisy.shape == (3, 4) and noisy.dtype == np.int64
    assert not np.array_equal(noisy, values)


def test_fast_sampler_is_reproducible_and_spawns_independent_streams():
    a = FastSampler(np.random.default_rng(42))(np.zeros(50, np.int64), 2.0)
    b = FastSampler(np.random.default_rng(42))(np.zeros(50, np.int64), 2.0)
    np.testing.assert_array_equal(a, b)
    kids = FastSampler(np.random.default_rng(42)).spawn(3)
    again = FastSampler(np.random.default_rng(42)).spawn(3)
    draws = [k(np.zeros(200, np.int64), 2.0) for k in kids]
    for d, k in zip(draws, again):
        np.testing.assert_array_equal(d, k(np.zeros(200, np.int64), 2.0))
    assert not np.array_equal(draws[0], draws[1])
    assert "not for release" in kids[0].name and not kids[0].secure


# ------------------------------------------------------------------ the secure sampler (OpenDP)
def test_secure_sampler_follows_the_law():
    sampler = SecureSampler()
    assert sampler.secure
    # Not seedable (OS CSPRNG): the threshold makes a false alarm a 1-in-10,000 event.
    noise = sampler(np.zeros(30_000, np.int64), 2.0)
    assert noise.dtype == np.int64
    assert chi_square_pvalue(noise, 2.0) > 1e-4
    assert noise.var() == pytest.approx(double_geometric_variance(2.0), rel=0.1)


def test_secure_sampler_shapes():
    sampler = SecureSampler()
    assert sampler.spawn(3) == [sampler] * 3
    assert sampler(np.zeros(0, np.int64), 1.0).shape == (0,)
    values = np.full((2, 3), 100, np.int64)
    out = sampler(values, 1.0)
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(values, 100)
    assert "OpenDP" in sampler.name


# ------------------------------------------------------------------ the mechanism and its records
@pytest.mark.parametrize("sensitivity, epsilon", [(1, 1.0), (2, 0.5), (1, 0.25)])
def test_measure_adds_noise_of_scale_delta_over_epsilon(sensitivity, epsilon):
    mech = GeometricMechanism(FastSampler(np.random.default_rng(9)))
    values = np.full(400_000, 7, np.int64)
    noisy = mech.measure(values, sensitivity=sensitivity, epsilon=epsilon, quantity="test", level=1, node=("a",))
    np.testing.assert_array_equal(values, 7)
    (m,) = mech.budget().measurements
    assert m == Measurement(1, ("a",), "test", 400_000, float(sensitivity), epsilon, mech.sampler.name)
    assert m.scale == sensitivity / epsilon
    assert m.noise_variance == pytest.approx(double_geometric_variance(sensitivity / epsilon))
    assert (noisy - values).var() == pytest.approx(m.noise_variance, rel=0.03)
    assert chi_square_pvalue(noisy[:100_000] - 7, sensitivity / epsilon) > 1e-3


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "abc", None, [1.0]])
def test_measure_refuses_bad_epsilon(bad):
    mech = GeometricMechanism(FastSampler(np.random.default_rng(0)))
    with pytest.raises(ValueError, match="ε"):
        mech.measure(np.zeros(3, np.int64), sensitivity=1, epsilon=bad, quantity="x", level=0, node=())
    assert mech.budget().measurements == []  # nothing was spent


def test_check_epsilon():
    assert check_epsilon(0.5) == 0.5
    assert check_epsilon(np.float32(2.0)) == 2.0
    assert check_epsilon(3) == 3.0
    with pytest.raises(ValueError, match="finite number > 0"):
        check_epsilon(0.0)
    with pytest.raises(ValueError, match="finite number > 0"):
        check_epsilon(-2)
    with pytest.raises(ValueError, match="finite number > 0"):
        check_epsilon(float("inf"))
    with pytest.raises(ValueError, match="finite number > 0"):
        check_epsilon(float("nan"))
    with pytest.raises(ValueError, match="ε of level 1 must be a number"):
        check_epsilon("one", "ε of level 1")


def test_spawned_mechanisms_record_into_the_parent():
    mech = GeometricMechanism(FastSampler(np.random.default_rng(0)))
    kids = mech.spawn(2)
    kids[1].measure(np.zeros(2, np.int64), sensitivity=1, epsilon=1.0, quantity="Hg", level=1, node=("b",))
    kids[0].measure(np.zeros(3, np.int64), sensitivity=1, epsilon=1.0, quantity="Hg", level=1, node=("a",))
    mech.measure(np.zeros(4, np.int64), sensitivity=2, epsilon=2.0, quantity="H", level=0, node=())
    budget = mech.budget()
    # Reported in a fixed order (level, node), whatever the order of measuring.
    assert [(m.level, m.node) for m in budget.measurements] == [(0, ()), (1, ("a",)), (1, ("b",))]
    assert budget.per_level() == {0: 2.0, 1: 1.0}
    assert budget.total == 3.0


# ------------------------------------------------------------------ the budget report
def test_budget_composition_and_report():
    name = "test sampler"
    budget = Budget([
        Measurement(0, (), "Hc[0..9]", 10, 1.0, 1.0, name),
        Measurement(1, ("a",), "Hg", 4, 1.0, 0.5, name),
        Measurement(1, ("b",), "Hg", 3, 1.0, 0.7, name),   # parallel: the level costs its largest ε
        Measurement(None, (), "scores", 2, 6.0, 0.2, name),  # a whole-data measurement
    ], extra={"selection": 0.3})
    assert budget.per_level() == {0: 1.0, 1: 0.7}
    assert budget.total == pytest.approx(1.0 + 0.7 + 0.2 + 0.3)
    assert budget.samplers == [name]
    frame = budget.to_frame()
    assert list(frame["scale"]) == pytest.approx([1.0, 2.0, 1.0 / 0.7, 30.0])
    assert list(frame["node"]) == ["(root)", "a", "b", "(root)"]
    text = budget.describe()
    assert text.startswith("total ε spent: 2.2")
    assert "level 0: ε = 1" in text and "level 1: ε = 0.7" in text and "selection: ε = 0.3" in text
    assert "level 1: Hg on 1 node(s), 4 cells, Δ = 1, scale Δ/ε = 2, sampler test sampler" in text
    assert "whole data: scores on 1 node(s), 2 cells, Δ = 6, scale Δ/ε = 30" in text
    assert Budget().total == 0.0 and Budget().summary().empty


def test_doctests():
    assert doctest.testmod(cocoviz.mechanisms).failed == 0
