"""The geometric mechanism: the three samplers' laws (chi-square, tails), moments, keyed streams, the ε range.

The secure sampler cannot be seeded (AES-CTR keyed by the OS), so its own tests are statistical
with false-alarm rates of 1e-6; its kernel (cocoviz.privacy.noise._discrete_laplace) is also tested on a seeded
AESCounter, deterministically, including the exact path it hands undecided cases to.
"""

from __future__ import annotations

import copy
import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from randomgen import AESCounter
from scipy.stats import binomtest, chi2_contingency, chisquare, norm

from cocoviz.errors import BudgetError, ParameterError, PrivacyError
from cocoviz.measure.measurements import open_sampler
from cocoviz.privacy.budget import double_geometric_variance
from cocoviz.privacy.noise import (
    EPSILON_RANGE,
    SAMPLERS,
    FastSampler,
    OpenDPSampler,
    SecureSampler,
    check_epsilon,
    check_seed,
    double_geometric_pmf,
    make_sampler,
)
from cocoviz.privacy.noise import _discrete_laplace as dl
from cocoviz.privacy.noise._discrete_laplace import add_noise, exact_sample, scale_ratio
from cocoviz.privacy.noise._discrete_laplace_kernel import PENDING_D, PENDING_V


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
@pytest.mark.statistical
@pytest.mark.parametrize("scale, seed", [(1.0, 1), (5.0, 2)])
def test_fast_sampler_follows_the_law(scale, seed):
    noise = fast_noise(200_000, scale, seed)
    assert noise.dtype == np.int64
    assert chi_square_pvalue(noise, scale) > 1e-3


@pytest.mark.statistical
@pytest.mark.parametrize("scale, seed", [(1.0, 3), (5.0, 4)])
@pytest.mark.parametrize("wrong", [0.7, 1.3])
def test_chi_square_rejects_a_wrong_scale(scale, seed, wrong):
    noise = fast_noise(200_000, scale * wrong, seed)
    assert chi_square_pvalue(noise, scale) < 1e-6


@pytest.mark.statistical
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


# ------------------------------------------------------------------ the OpenDP sampler
@pytest.mark.statistical
def test_opendp_sampler_follows_the_law():
    sampler = OpenDPSampler()
    assert sampler.secure
    # Not seedable (OS CSPRNG): the threshold makes a false alarm a 1-in-10,000 event.
    noise = sampler.draw(np.zeros(30_000, np.int64), 2.0)
    assert noise.dtype == np.int64
    assert chi_square_pvalue(noise, 2.0) > 1e-4
    assert noise.var() == pytest.approx(double_geometric_variance(2.0), rel=0.1)


def test_opendp_sampler_shapes():
    sampler = make_sampler("opendp", seed=5)  # a seed means nothing to it
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


# ------------------------------------------------------------------ the secure sampler
ALPHA = 1e-6  # every statistical test of the secure sampler: a false alarm is a one-in-a-million event


def cdf(k: np.ndarray, scale: float) -> np.ndarray:
    """P(X <= k) of the double-geometric law: α^-k / (1+α) below 0, 1 - α^(k+1) / (1+α) from 0."""
    alpha = math.exp(-1.0 / scale)
    k = np.asarray(k, np.float64)
    return np.where(k < 0, alpha ** np.abs(k) / (1 + alpha), 1 - alpha ** (k + 1) / (1 + alpha))


def cuts(scale: float, bins: int = 60) -> np.ndarray:
    """Integer cut points near the law's quantiles j/bins: bins (-inf, c1], (c1, c2], ..., (c_last, inf)."""
    span = int(40 * scale) + 10
    k = np.arange(-span, span + 1)
    return np.unique(k[np.searchsorted(cdf(k, scale), np.arange(1, bins) / bins)])


def binned(samples: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.bincount(np.searchsorted(edges, samples), minlength=len(edges) + 1)


def law_pvalue(samples: np.ndarray, scale: float) -> float:
    """Chi-square goodness of fit to the exact law, on bins of about equal probability."""
    edges = cuts(scale)
    probs = np.diff(np.concatenate([[0.0], cdf(edges, scale), [1.0]]))
    expected = len(samples) * probs
    assert expected.min() >= 5
    return float(chisquare(binned(samples, edges), expected).pvalue)


def two_sample_pvalue(a: np.ndarray, b: np.ndarray, scale: float) -> float:
    """Chi-square test that two samples have one law, on the bins of ``scale``'s quantiles."""
    table = np.stack([binned(a, cuts(scale, 30)), binned(b, cuts(scale, 30))])
    return float(chi2_contingency(table[:, table.min(axis=0) > 0]).pvalue)


def tail_pvalues(samples: np.ndarray, scale: float, prob: float) -> list[float]:
    """Exact binomial tests of P(X <= -m) and P(X >= m), m the largest with P(X >= m) >= ``prob``."""
    alpha = math.exp(-1.0 / scale)
    m = max(1, math.floor(math.log(prob * (1 + alpha)) / math.log(alpha)))
    p = alpha**m / (1 + alpha)
    n = len(samples)
    return [binomtest(int(np.sum(side)), n, p).pvalue for side in (samples >= m, samples <= -m)]


def seeded_noise(n: int, scale, seed: int, **force) -> np.ndarray:
    """The secure kernel on a *seeded* AESCounter: deterministic, for tests only (never for release)."""
    return add_noise(np.zeros(n, np.int64), scale, AESCounter(seed=seed), **force)


SCALES = [0.5, 1.0, 2 / 0.3, 1000.0]  # small, unit, a float with a 2**50 denominator, large


# Paths of the compiled loop: t = 1 (no U, no D); t <= 4096 (a table of exp); t > 4096 (the series'
# bounds, then exp), with U of 32 bits, or 64 bits when t >= 2**32; Y by a shift, or a division.
@pytest.mark.statistical
@pytest.mark.parametrize("scale", [*SCALES, Fraction(10_007, 3_000)])
def test_secure_kernel_follows_the_exact_law(scale):
    noise = seeded_noise(1_000_000, scale, seed=11)  # several 1 MiB buffers of random words
    assert noise.dtype == np.int64
    assert law_pvalue(noise, scale) > ALPHA
    assert min(tail_pvalues(noise, scale, 1e-4) + tail_pvalues(noise, scale, 1e-5)) > ALPHA
    assert noise.var() == pytest.approx(double_geometric_variance(scale), rel=0.02)


@pytest.mark.statistical
@pytest.mark.parametrize("scale", SCALES)
def test_secure_sampler_follows_the_exact_law(scale):
    # Keyed from the OS: not reproducible, so only a one-in-a-million false alarm.
    noise = SecureSampler().draw(np.zeros(300_000, np.int64), scale)
    assert law_pvalue(noise, scale) > ALPHA
    assert min(tail_pvalues(noise, scale, 1e-4)) > ALPHA


@pytest.mark.statistical
@pytest.mark.parametrize("scale", [0.5, 1000.0])
@pytest.mark.parametrize("wrong", [0.9, 1.1])
def test_the_law_tests_catch_a_scale_off_by_ten_percent(scale, wrong):
    noise = seeded_noise(300_000, scale * wrong, seed=12)
    assert law_pvalue(noise, scale) < ALPHA
    assert law_pvalue(noise, scale * wrong) > ALPHA


@pytest.mark.parametrize("scale", [0.5, 2.0, 1000.0])
def test_secure_sampler_matches_opendp(scale):
    ours = SecureSampler().draw(np.zeros(50_000, np.int64), scale)
    theirs = OpenDPSampler().draw(np.zeros(50_000, np.int64), scale)
    assert two_sample_pvalue(ours, theirs, scale) > ALPHA
    assert law_pvalue(theirs, scale) > ALPHA  # the reference itself
    off = SecureSampler().draw(np.zeros(50_000, np.int64), scale * 1.1)
    assert two_sample_pvalue(off, theirs, scale) < ALPHA  # and the comparison has the power to see 10%


@pytest.mark.parametrize("scale", [0.5, 3.0, 2 / 0.3])
def test_the_exact_path_decides_everything_forced_to_it(scale, monkeypatch):
    """A margin of 0.3 leaves most Bernoulli(exp(-U/t)) undecided, a slack of 2**31 most V:
    the exact integer path finishes those cells, and the law is unchanged."""
    calls = []
    finish = dl._finish_pending
    monkeypatch.setattr(dl, "_finish_pending", lambda *a: calls.append(a[2]) or finish(*a))
    noise = seeded_noise(10_000, scale, seed=13, margin=0.3, v_slack=2**31)
    kinds = np.bincount(calls, minlength=3)
    assert kinds[PENDING_V] > 2_500 and (scale == 0.5 or kinds[PENDING_D] > 1_000)  # t = 1 at 0.5: no D
    assert law_pvalue(noise, scale) > ALPHA


@pytest.mark.statistical
def test_the_exact_path_alone_follows_the_law():
    more = AESCounter(seed=14).random_raw
    t, s = scale_ratio(2 / 0.3)
    noise = np.array([exact_sample(t, s, lambda: int(more())) for _ in range(8_000)])
    assert law_pvalue(noise, 2 / 0.3) > ALPHA


def test_overflowing_x_is_finished_with_python_integers():
    # t = 2**59: V >= 8 would take U + tV past 2**62 in the compiled loop (about 7 of 20,000 cells).
    noise = seeded_noise(20_000, 2.0**59, seed=15)
    assert np.abs(noise).max() >= 2**62
    with pytest.raises(BudgetError, match="too large to add exactly"):
        add_noise(np.full(20_000, 2**62 - 1, np.int64), 2.0**59, AESCounter(seed=15))


def test_secure_noise_is_added_exactly_to_int64():
    values = np.arange(2**61, 2**61 + 200_000, dtype=np.int64).reshape(400, 500)
    out = SecureSampler().draw(values, 2.0, key=(3, 4, 0))
    assert out.dtype == np.int64 and out.shape == values.shape
    assert law_pvalue((out - values).ravel(), 2.0) > ALPHA
    buffer = np.empty(10, np.int64)
    assert add_noise(np.zeros(10, np.int64), 1.0, AESCounter(seed=16), out=buffer) is not None
    with pytest.raises(ParameterError, match="2\\*\\*62"):
        SecureSampler().draw(np.array([2**62]), 1.0)
    with pytest.raises(ParameterError, match="int64 buffer"):
        add_noise(np.zeros(10, np.int64), 1.0, AESCounter(seed=16), out=np.empty(9, np.int64))


def test_scale_is_taken_exactly():
    assert scale_ratio(2 / 0.3) == (2 / 0.3).as_integer_ratio()
    assert scale_ratio(np.float32(0.1)) == float(np.float32(0.1)).as_integer_ratio()
    assert scale_ratio(3) == (3, 1) and scale_ratio(Fraction(7, 3)) == (7, 3)
    for bad in (0.0, -1.0, float("inf"), float("nan"), True, "2"):
        with pytest.raises(ParameterError, match="noise scale"):
            scale_ratio(bad)
    with pytest.raises(BudgetError, match="too large"):
        scale_ratio(2.0**62)


def test_secure_sampler_shapes_names_and_keys():
    sampler = make_sampler("secure", seed=5)  # a seed means nothing to it
    assert isinstance(sampler, SecureSampler) and sampler.secure and OpenDPSampler.secure
    assert "exact discrete Laplace" in sampler.name and "AES-CTR" in sampler.name and "OpenDP" in OpenDPSampler.name
    assert sampler.draw(np.zeros(0, np.int64), 1.0).shape == (0,)
    zeros = np.zeros(1_000, np.int64)
    # Keyed from the OS each time: two samplers (or two draws) agree with probability far below 1e-100.
    assert not np.array_equal(sampler.draw(zeros, 10.0), SecureSampler().draw(zeros, 10.0))
    assert not np.array_equal(sampler.draw(zeros, 10.0, (0, 0, 0)), sampler.draw(zeros, 10.0, (0, 0, 0)))
    assert SAMPLERS == ("fast", "secure", "opendp")
    assert (sampler.kind, OpenDPSampler.kind) == ("secure", "opendp")  # what Dask ships instead of the sampler
    with pytest.raises(PrivacyError, match="never copied"):
        pickle.dumps(sampler)  # a copy would repeat its noise
    with pytest.raises(PrivacyError, match="never copied"):
        copy.deepcopy(sampler)
    assert isinstance(open_sampler(secure=True), SecureSampler)
    assert isinstance(open_sampler(secure=True, sampler="opendp"), OpenDPSampler)
    assert isinstance(open_sampler(sampler="opendp"), OpenDPSampler)
    with pytest.raises(ParameterError, match="secure=True asks for a secure sampler"):
        open_sampler(secure=True, sampler="fast")


@pytest.mark.parametrize("epsilon, delta", [(1.0, 1), (0.5, 2), (2.0, 1)])
def test_neighbouring_values_are_epsilon_indistinguishable(epsilon, delta):
    """Outputs for value v and v + Δ: each output's frequency ratio stays within e^ε (up to sampling
    error, Bonferroni over the outputs at 1e-6), and reaches it on the far side (the bound is tight)."""
    n = 1_000_000
    scale = delta / epsilon
    sampler = SecureSampler()
    a = sampler.draw(np.full(n, 10, np.int64), scale)
    b = sampler.draw(np.full(n, 10 + delta, np.int64), scale)
    lo, hi = min(a.min(), b.min()), max(a.max(), b.max())
    ca, cb = np.bincount(a - lo, minlength=hi - lo + 1), np.bincount(b - lo, minlength=hi - lo + 1)
    both = (ca >= 500) & (cb >= 500)
    ratio = np.log(ca[both] / cb[both])
    se = np.sqrt(1 / ca[both] + 1 / cb[both])
    z = norm.isf(ALPHA / (2 * both.sum()))
    assert np.all(np.abs(ratio) <= epsilon + z * se)
    outputs = np.arange(lo, hi + 1)[both]
    below = outputs <= 10  # every output at or below v is e^ε likelier from v than from v + Δ
    assert np.all(np.abs(ratio[below] - epsilon) <= z * se[below])
