"""The geometric mechanism: both samplers' laws (chi-square), moments, keyed streams, the ε range."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from cocoviz.budget import double_geometric_variance
from cocoviz.errors import BudgetError, ParameterError
from cocoviz.mechanisms import (
    EPSILON_RANGE,
    FastSampler,
    SecureSampler,
    check_epsilon,
    check_seed,
    double_geometric_pmf,
    make_sampler,
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
    return FastSampler(seed).draw(np.zeros(n, np.int64), scale, (0, 0, 0))


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
    out = FastSampler(0).draw(values, 1e-9, (0, 0, 0))  # scale ~0: no noise
    np.testing.assert_array_equal(out, values)
    np.testing.assert_array_equal(values, before)
    noisy = FastSampler(0).draw(values, 3.0, (0, 0, 0))
    assert noisy.shape == (3, 4) and noisy.dtype == np.int64
    assert not np.array_equal(noisy, values)


def test_fast_sampler_streams_are_keyed():
    zeros = np.zeros(200, np.int64)
    a = FastSampler(42).draw(zeros, 2.0, (1, 3, 0))
    FastSampler(42).draw(zeros, 2.0, (0, 0, 0))  # drawing another key first changes nothing
    np.testing.assert_array_equal(a, FastSampler(42).draw(zeros, 2.0, (1, 3, 0)))
    others = [FastSampler(42).draw(zeros, 2.0, key) for key in [(1, 4, 0), (2, 3, 0), (1, 3, 1)]]
    others.append(FastSampler(43).draw(zeros, 2.0, (1, 3, 0)))
    others.append(FastSampler((42, 1)).draw(zeros, 2.0, (1, 3, 0)))
    assert all(not np.array_equal(a, o) for o in others)
    assert "not for release" in FastSampler(0).name and not FastSampler(0).secure


def test_noise_at_the_smallest_epsilon_is_exact_and_larger_is_refused():
    scale = 2 / EPSILON_RANGE[0]  # naive's Δ = 2 at the smallest ε: 2e6
    noise = FastSampler(1).draw(np.full(100_000, 2**40, np.int64), scale, (0, 0, 0)) - 2**40
    assert np.abs(noise).max() < 2**40  # far from any overflow
    assert noise.var() == pytest.approx(double_geometric_variance(scale), rel=0.05)
    with pytest.raises(BudgetError, match="too large to add exactly"):
        FastSampler(1).draw(np.zeros(10, np.int64), 1e300, (0, 0, 0))


# ------------------------------------------------------------------ the secure sampler (OpenDP)
def test_secure_sampler_follows_the_law():
    sampler = SecureSampler()
    assert sampler.secure
    # Not seedable (OS CSPRNG): the threshold makes a false alarm a 1-in-10,000 event.
    noise = sampler.draw(np.zeros(30_000, np.int64), 2.0)
    assert noise.dtype == np.int64
    assert chi_square_pvalue(noise, 2.0) > 1e-4
    assert noise.var() == pytest.approx(double_geometric_variance(2.0), rel=0.1)


def test_secure_sampler_shapes():
    sampler = make_sampler("secure", seed=5)  # a seed means nothing to it
    assert sampler.draw(np.zeros(0, np.int64), 1.0).shape == (0,)
    values = np.full((2, 3), 100, np.int64)
    out = sampler.draw(values, 1.0, (0, 0, 0))
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(values, 100)
    assert "OpenDP" in sampler.name


# ------------------------------------------------------------------ parameters
def test_check_epsilon():
    assert check_epsilon(0.5) == 0.5
    assert check_epsilon(np.float32(2.0)) == 2.0
    assert check_epsilon(3) == 3.0
    assert check_epsilon(EPSILON_RANGE[0]) == 1e-6 and check_epsilon(EPSILON_RANGE[1]) == 1e6
    for bad in (0.0, -2, float("inf"), float("nan"), 1e-300, 1e300, 1e-7, 2e6):
        with pytest.raises(BudgetError, match="must be between 1e-06 and 1e\\+06"):
            check_epsilon(bad)
    for bad in (True, "one", None, [1.0], 1 + 0j, np.bool_(True)):
        with pytest.raises(BudgetError, match="ε of level 1 must be a real number"):
            check_epsilon(bad, "ε of level 1")


def test_check_seed():
    assert check_seed(0) == (0,) and check_seed(np.int64(7)) == (7,) and check_seed([1, 2]) == (1, 2)
    assert len(check_seed(None)) == 1
    for bad in ("x", True, -1, 1.5, (), (1, "a"), None.__class__):
        with pytest.raises(ParameterError, match="seed"):
            check_seed(bad)
    with pytest.raises(ParameterError, match="sampler must be one of"):
        make_sampler("quantum")
