"""The discrete Gaussian: its exact law from the three samplers (chi-square, tails, against OpenDP), keyed streams.

Statistical tests run at α = 1e-6.  The secure sampler's kernel is tested on *seeded* AESCounters
(deterministic); the secure sampler itself, keyed by the OS, only with one-in-a-million false alarms;
the fast sampler with fixed seeds (deterministic).  Each test's power: σ off by 10% is caught.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from randomgen import AESCounter
from scipy.special import ndtr, ndtri
from scipy.stats import binomtest, chi2_contingency, chisquare

from cocoviz.errors import BudgetError, ParameterError
from cocoviz.privacy.noise import (
    FastSampler,
    GaussianNoise,
    OpenDPSampler,
    SecureSampler,
    discrete_gaussian_pmf,
    discrete_gaussian_variance,
)
from cocoviz.privacy.noise import _discrete_gaussian as dg

ALPHA = 1e-6
SIGMA2 = [0.25, 1.0, 2 / 0.3, 50.0, Fraction(10**6, 3)]  # t = 1; t = 2; a float with a 2**50 denominator; large


def support(sigma2) -> np.ndarray:
    span = int(12 * math.sqrt(float(sigma2))) + 3
    return np.arange(-span, span + 1)


#: Above this variance the cdf comes from the normal law at k + ½ instead of summing the pmf over a grid of
#: 80σ points (at σ² = 1e13, 2.5e8 of them).  The discrete Gaussian's partial sums are the midpoint rule for
#: the normal integral: by Euler–Maclaurin and Poisson summation they differ from Φ((k + ½)/σ) by at most
#: about 1/(24σ²) (at σ² = 1e13, < 1e-14), far below what a chi-square test of a million draws can see.
NORMAL_CDF_FROM = 1e8


def cdf(k: np.ndarray, sigma2) -> np.ndarray:
    """P(X <= k): summed from the pmf over ±(40σ + 10), or the midpoint normal cdf for huge σ²."""
    if float(sigma2) >= NORMAL_CDF_FROM:
        return ndtr((np.asarray(k, float) + 0.5) / math.sqrt(float(sigma2)))
    span = int(40 * math.sqrt(float(sigma2))) + 10
    grid = np.arange(-span, span + 1)
    cum = np.cumsum(discrete_gaussian_pmf(grid, float(sigma2)))
    return cum[np.clip(np.asarray(k) + span, 0, grid.size - 1)]


def cuts(sigma2, bins: int = 60) -> np.ndarray:
    if float(sigma2) >= NORMAL_CDF_FROM:
        return np.unique(np.floor(math.sqrt(float(sigma2)) * ndtri(np.arange(1, bins) / bins)).astype(np.int64))
    k = support(sigma2)
    return np.unique(k[np.searchsorted(cdf(k, sigma2), np.arange(1, bins) / bins)])


def binned(samples: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.bincount(np.searchsorted(edges, samples), minlength=len(edges) + 1)


def law_pvalue(samples: np.ndarray, sigma2) -> float:
    """Chi-square goodness of fit to the exact discrete Gaussian, on bins of about equal probability."""
    edges = cuts(sigma2)
    probs = np.diff(np.concatenate([[0.0], cdf(edges, sigma2), [1.0]]))
    expected = len(samples) * probs / probs.sum()
    assert expected.min() >= 5
    return float(chisquare(binned(samples, edges), expected).pvalue)


def two_sample_pvalue(a: np.ndarray, b: np.ndarray, sigma2) -> float:
    table = np.stack([binned(a, cuts(sigma2, 30)), binned(b, cuts(sigma2, 30))])
    return float(chi2_contingency(table[:, table.min(axis=0) > 0]).pvalue)


def tail_pvalues(samples: np.ndarray, sigma2, prob: float) -> list[float]:
    """Exact binomial tests of P(X >= m) and P(X <= -m), m the largest with P(X >= m) >= ``prob``."""
    k = np.arange(0, support(sigma2)[-1] + 1)
    upper = 1 - cdf(k - 1, sigma2)  # P(X >= k)
    m = max(1, int(k[upper >= prob][-1]))
    p = float(upper[m])
    return [binomtest(int(np.sum(side)), len(samples), p).pvalue for side in (samples >= m, samples <= -m)]


def seeded(n: int, sigma2, seed: int, **force) -> np.ndarray:
    return dg.add_noise(np.zeros(n, np.int64), sigma2, AESCounter(seed=seed), **force)


def test_pmf_and_variance():
    for sigma2 in (0.25, 1.0, 9.0, 1e4):
        k = support(sigma2)
        assert discrete_gaussian_pmf(k, sigma2).sum() == pytest.approx(1.0, abs=1e-12)
        variance = discrete_gaussian_variance(sigma2)
        assert variance <= sigma2 and (sigma2 < 1 or variance == pytest.approx(sigma2, rel=1e-6))
    assert discrete_gaussian_variance(0.25) == pytest.approx(0.2150, abs=1e-4)  # well below σ² when σ < 1


def test_sigma2_is_taken_exactly_and_t_is_floor_sigma_plus_one():
    assert dg.sigma2_ratio(2 / 0.3) == (2 / 0.3).as_integer_ratio()
    assert dg.sigma2_ratio(Fraction(1, 3)) == (1, 3)
    assert [dg.scale_of(x) for x in (0.25, 1.0, 3.99, 4.0, Fraction(10**6, 3))] == [1, 2, 2, 3, 578]
    for bad in (0.0, -1.0, float("inf"), float("nan"), True, "2"):
        with pytest.raises(ParameterError, match="σ²"):
            dg.sigma2_ratio(bad)


@pytest.mark.statistical
@pytest.mark.parametrize("sigma2", SIGMA2)
def test_secure_kernel_follows_the_exact_law(sigma2):
    noise = seeded(600_000, sigma2, seed=21)
    assert noise.dtype == np.int64
    assert law_pvalue(noise, sigma2) > ALPHA
    assert min(tail_pvalues(noise, sigma2, 1e-4) + tail_pvalues(noise, sigma2, 1e-5)) > ALPHA
    assert noise.var() == pytest.approx(discrete_gaussian_variance(float(sigma2)), rel=0.02)


@pytest.mark.statistical
@pytest.mark.parametrize("sigma2", [0.25, 50.0])
@pytest.mark.parametrize("wrong", [0.9, 1.1])
def test_the_law_tests_catch_sigma_off_by_ten_percent(sigma2, wrong):
    off = seeded(300_000, sigma2 * wrong**2, seed=22)
    assert law_pvalue(off, sigma2) < ALPHA
    assert law_pvalue(off, sigma2 * wrong**2) > ALPHA
    fast = FastSampler(seed=5).draw_gaussian(np.zeros(300_000, np.int64), sigma2 * wrong**2, (0, 0, 0))
    assert law_pvalue(fast, sigma2) < ALPHA


@pytest.mark.statistical
@pytest.mark.parametrize("sigma2", [1.0, 50.0])
def test_secure_sampler_follows_the_law_and_matches_opendp(sigma2):
    # Keyed from the OS: not reproducible, so one-in-a-million false alarms; OpenDP is the reference.
    ours = SecureSampler().draw_gaussian(np.zeros(300_000, np.int64), sigma2)
    assert law_pvalue(ours, sigma2) > ALPHA
    assert min(tail_pvalues(ours, sigma2, 1e-4)) > ALPHA
    theirs = OpenDPSampler().draw_gaussian(np.zeros(50_000, np.int64), sigma2)
    assert law_pvalue(theirs, sigma2) > ALPHA
    assert two_sample_pvalue(ours[:50_000], theirs, sigma2) > ALPHA
    off = SecureSampler().draw_gaussian(np.zeros(50_000, np.int64), sigma2 * 1.21)
    assert two_sample_pvalue(off, theirs, sigma2) < ALPHA  # the comparison has the power to see σ off by 10%


@pytest.mark.parametrize("sigma2", [0.25, 2 / 0.3, 50.0])
def test_the_exact_path_decides_everything_forced_to_it(sigma2, monkeypatch):
    """A margin of 0.3 leaves most acceptances undecided: the exact path finishes them, the law is unchanged."""
    calls = []
    below = dg.LazyUniform.below_exp
    monkeypatch.setattr(dg.LazyUniform, "below_exp", lambda self, g: calls.append(g) or below(self, g))
    noise = seeded(20_000, sigma2, seed=23, margin=0.3)
    assert len(calls) > 5_000
    assert law_pvalue(noise, sigma2) > ALPHA


@pytest.mark.statistical
def test_the_exact_path_alone_follows_the_law():
    more = AESCounter(seed=24).random_raw
    noise = np.array([dg.exact_sample(2 / 0.3, lambda: int(more())) for _ in range(6_000)])
    assert law_pvalue(noise, 2 / 0.3) > ALPHA


def test_secure_noise_is_added_exactly_and_refuses_what_it_cannot():
    values = np.arange(2**61, 2**61 + 100_000, dtype=np.int64).reshape(200, 500)
    out = SecureSampler().draw_gaussian(values, 4.0, key=(3, 4, 0))
    assert out.dtype == np.int64 and out.shape == values.shape
    assert law_pvalue((out - values).ravel(), 4.0) > ALPHA
    assert SecureSampler().draw_gaussian(np.zeros(0, np.int64), 4.0).shape == (0,)
    with pytest.raises(ParameterError, match="2\\*\\*62"):
        SecureSampler().draw_gaussian(np.array([2**62]), 1.0)
    with pytest.raises(ParameterError, match="σ²"):
        SecureSampler().draw_gaussian(np.zeros(3, np.int64), 0.0)
    with pytest.raises(ParameterError, match="too large"):
        dg.sigma2_ratio(2.0**120)
    with pytest.raises(BudgetError, match="too large"):
        FastSampler(seed=0).draw_gaussian(np.zeros(3, np.int64), 2.0**94, (0, 0, 0))


@pytest.mark.statistical
@pytest.mark.parametrize("sigma2", SIGMA2)
@pytest.mark.parametrize("seed", [1, 2])
def test_fast_sampler_follows_the_law(sigma2, seed):
    noise = FastSampler(seed=seed).draw_gaussian(np.zeros(400_000, np.int64), float(sigma2), (1, 2, 0))
    assert law_pvalue(noise, sigma2) > ALPHA
    assert min(tail_pvalues(noise, sigma2, 1e-4)) > ALPHA


@pytest.mark.slow
def test_the_midpoint_normal_cdf_is_the_exact_cdf_within_its_bound():
    for sigma2 in (1e2, 1e4, 1e6):
        span = int(40 * math.sqrt(sigma2)) + 10
        grid = np.arange(-span, span + 1)
        exact = np.cumsum(discrete_gaussian_pmf(grid, sigma2))
        assert np.abs(exact - ndtr((grid + 0.5) / math.sqrt(sigma2))).max() < 1 / (24 * sigma2)


def test_fast_sampler_beyond_the_table_runs_the_rejection_sampler():
    sigma2 = 1e13  # a table of 10σ would hold 3e7 entries
    noise = FastSampler(seed=3).draw_gaussian(np.zeros(300_000, np.int64), sigma2, (1, 2, 0))
    assert law_pvalue(noise, sigma2) > ALPHA
    off = FastSampler(seed=3).draw_gaussian(np.zeros(300_000, np.int64), sigma2 * 1.21, (1, 2, 0))
    assert law_pvalue(off, sigma2) < ALPHA


def test_fast_gaussian_streams_are_keyed_and_independent_of_batching():
    sampler = FastSampler(seed=7)
    sizes = [5, 0, 17, 3]
    values = np.arange(sum(sizes), dtype=np.int64)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    level = sampler.draw_level(values, ptr, GaussianNoise(9.0), 2, 0, 10)
    one_by_one = np.concatenate(
        [sampler.draw_gaussian(values[ptr[s] : ptr[s + 1]], 9.0, (2, 10 + s, 0)) for s in range(len(sizes))]
    )
    assert np.array_equal(level, one_by_one)
    # a node drawn in two chunks: the second starts at its cell 7
    node = values[ptr[2] : ptr[3]]
    first = sampler.draw_level(node[:7], np.array([0, 7]), GaussianNoise(9.0), 2, 0, 12)
    second = sampler.draw_level(node[7:], np.array([0, 10]), GaussianNoise(9.0), 2, 0, 12, 7)
    assert np.array_equal(np.concatenate([first, second]), one_by_one[ptr[2] : ptr[3]])
    assert np.array_equal(FastSampler(seed=7).draw_gaussian(node, 9.0, (2, 12, 0)), one_by_one[ptr[2] : ptr[3]])
    assert not np.array_equal(FastSampler(seed=8).draw_gaussian(node, 9.0, (2, 12, 0)), one_by_one[ptr[2] : ptr[3]])
    # other keys, and the Laplace stream of the same key, are other noise
    zeros = np.zeros(1_000, np.int64)
    a = sampler.draw_gaussian(zeros, 9.0, (0, 0, 0))
    assert not np.array_equal(a, sampler.draw_gaussian(zeros, 9.0, (0, 1, 0)))
    assert not np.array_equal(a, sampler.draw_gaussian(zeros, 9.0, (0, 0, 0, 5)))
    assert np.corrcoef(a, sampler.draw(zeros, 3.0, (0, 0, 0)))[0, 1] < 0.2
