"""Per-node estimators (naive, Hc, Hg), their variances, simplex projection and rounding."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from cocoviz.methods.estimators import (
    GroupEstimate,
    fit_hc,
    fit_hg,
    fit_naive,
    largest_remainder,
    project_simplex,
)
from cocoviz.methods.isotonic import block_sizes, isotonic
from cocoviz.plan import METHODS
from cocoviz.privacy.noise import FastSampler


class Noisy:
    """Keyed fast noise of the method's scale on its query; keeps the true and noisy answers."""

    def __init__(self, seed: int):
        self.sampler = FastSampler(seed)
        self.inputs: list[np.ndarray] = []
        self.outputs: list[np.ndarray] = []

    def __call__(self, values, scale):
        self.inputs.append(np.array(values, copy=True))
        self.outputs.append(self.sampler.draw(values, scale, (0, 0, 0)))
        return self.outputs[-1].copy()


def run(method: str, sizes, counts, *, epsilon=1.0, max_size=10, p=1, noise=None) -> GroupEstimate:
    """Query, optional noise, fit: what measure and post_process do for one node."""
    m = METHODS[method]
    answer = m.query(sizes, counts, max_size)
    if noise is not None:
        answer = noise(answer, m.sensitivity / epsilon)
    return m.fit(answer, groups=int(np.sum(counts)), epsilon=epsilon, p=p if m.default_p else None, max_size=max_size)


def expand(est: GroupEstimate) -> tuple[np.ndarray, np.ndarray]:
    """Per group: estimated size and variance, sorted by (size, variance)."""
    sizes = np.repeat(est.sizes, est.counts)
    variances = np.repeat(est.variances, est.counts)
    order = np.lexsort((variances, sizes))
    return sizes[order], variances[order]


@st.composite
def node_runs(draw, max_size=8):
    sizes = draw(st.lists(st.integers(0, max_size), min_size=1, max_size=6, unique=True))
    counts = draw(st.lists(st.integers(1, 6), min_size=len(sizes), max_size=len(sizes)))
    order = np.argsort(sizes)
    return np.array(sizes, np.int64)[order], np.array(counts, np.int64)[order]


METHOD_P = [("Hc", 1), ("Hc", 2), ("Hg", 1), ("Hg", 2), ("naive", None)]


# ------------------------------------------------------------------ every estimate is a histogram of G groups
@settings(max_examples=120)
@given(
    node_runs(),
    st.sampled_from(METHOD_P),
    st.sampled_from([0.02, 0.2, 1.0, 5.0]),
    st.integers(0, 4),
    st.integers(0, 10_000),
)
def test_estimate_is_integral_nonnegative_and_keeps_g(runs, method_p, epsilon, extra_k, seed):
    sizes, counts = runs
    method, p = method_p
    max_size = max(int(sizes.max()), 1) + extra_k
    before = sizes.copy(), counts.copy()
    est = run(method, sizes, counts, epsilon=epsilon, max_size=max_size, p=p, noise=Noisy(seed))
    np.testing.assert_array_equal(sizes, before[0])  # inputs untouched
    np.testing.assert_array_equal(counts, before[1])
    assert est.sizes.dtype.kind == "i" and est.counts.dtype.kind == "i"
    assert est.groups == counts.sum()
    assert np.all(est.counts > 0)
    assert np.all(est.sizes >= 0)
    assert np.all(np.diff(est.sizes) >= 0)
    assert np.all(est.variances > 0) and np.all(np.isfinite(est.variances))
    if method != "Hg":
        assert est.sizes.max() <= max_size
        assert len(np.unique(est.sizes)) == len(est.sizes)


@pytest.mark.parametrize("method, p", METHOD_P)
def test_noiseless_measurement_gives_the_truth(method, p):
    sizes, counts = np.array([0, 1, 2, 7]), np.array([3, 5, 1, 2])
    est = run(method, sizes, counts, max_size=9, p=p)
    np.testing.assert_array_equal(np.repeat(est.sizes, est.counts), np.repeat(sizes, counts))


@pytest.mark.parametrize("method", ["Hc", "naive"])
def test_groups_above_k_count_at_k(method):
    sizes, counts = np.array([1, 4, 12]), np.array([2, 1, 3])
    est = run(method, sizes, counts, max_size=5)
    np.testing.assert_array_equal(est.sizes, [1, 4, 5])
    np.testing.assert_array_equal(est.counts, [2, 1, 3])


# ------------------------------------------------------------------ what is measured
def test_measured_quantities_sensitivities_and_cells():
    sizes, counts = np.array([0, 2, 3]), np.array([1, 2, 4])  # G = 7; H = [1, 0, 2, 4], Hc = [1, 1, 3, 7]
    k = 6
    for method, delta, values in [
        ("Hc", 1, [1, 1, 3, 7, 7, 7]),  # Hc[0..K-1]; Hc[K] = G is public
        ("Hg", 1, [0, 2, 2, 3, 3, 3, 3]),  # the sorted sizes
        ("naive", 2, [1, 0, 2, 4, 0, 0, 0]),  # H[0..K]
    ]:
        m = METHODS[method]
        answer = m.query(sizes, counts, k)
        np.testing.assert_array_equal(answer, values)
        assert m.sensitivity == delta
        assert m.cells(np.array([7]), k).tolist() == [len(values)]


# ------------------------------------------------------------------ variances
@settings(max_examples=60)
@given(node_runs(), st.sampled_from([0.1, 0.5, 2.0]), st.integers(0, 1000))
def test_hc_and_naive_variance(runs, epsilon, seed):
    sizes, counts = runs
    for method, numerator in [("Hc", 4.0), ("naive", 8.0)]:
        est = run(method, sizes, counts, epsilon=epsilon, max_size=int(sizes.max()) + 2, p=1, noise=Noisy(seed))
        # One run per estimated size; every group of it shares numerator / (ε² · Ĥ[size]).
        np.testing.assert_allclose(est.variances, numerator / (epsilon**2 * est.counts), rtol=1e-12)


@settings(max_examples=60)
@given(node_runs(), st.sampled_from([0.1, 0.5, 2.0]), st.sampled_from([1, 2]), st.integers(0, 1000))
def test_hg_variance_uses_isotonic_blocks(runs, epsilon, p, seed):
    sizes, counts = runs
    rec = Noisy(seed)
    est = run("Hg", sizes, counts, epsilon=epsilon, p=p, noise=rec)
    # Rebuild from the noisy Hg: fit, blocks of equal fitted values before rounding, then round.
    fit = isotonic(rec.outputs[0], p=p, lower=0)
    want_sizes = np.rint(fit).astype(np.int64)
    want_var = 2.0 / (block_sizes(fit) * epsilon**2)
    order = np.lexsort((want_var, want_sizes))
    got_sizes, got_var = expand(est)
    np.testing.assert_array_equal(got_sizes, want_sizes[order])
    np.testing.assert_allclose(got_var, want_var[order], rtol=1e-12)


@settings(max_examples=60)
@given(node_runs(), st.sampled_from([0.1, 0.5, 2.0]), st.integers(0, 1000))
def test_naive_is_simplex_projection_then_largest_remainder(runs, epsilon, seed):
    sizes, counts = runs
    rec = Noisy(seed)
    k = int(sizes.max()) + 3
    est = run("naive", sizes, counts, epsilon=epsilon, max_size=k, noise=rec)
    g = int(counts.sum())
    want = largest_remainder(project_simplex(rec.outputs[0].astype(float), g), g)
    got = np.zeros(k + 1, np.int64)
    got[est.sizes] = est.counts
    np.testing.assert_array_equal(got, want)


def test_naive_by_hand():
    # Noisy H = [3, -2, 1, 0] for G = 2: projection θ = 1 -> [2, 0, 0, 0].
    est = fit_naive(np.array([3, -2, 1, 0]), groups=2, epsilon=1.0)
    np.testing.assert_array_equal(est.sizes, [0])
    np.testing.assert_array_equal(est.counts, [2])
    # Noisy H = [2, 3, 0, 0] for G = 4: θ = 1/2 -> [1.5, 2.5, 0, 0]; floors [1, 2, 0, 0], one more to the
    # largest fractional part (a tie of exactly 1/2: the lower size) -> [2, 2, 0, 0].
    est = fit_naive(np.array([2, 3, 0, 0]), groups=4, epsilon=1.0)
    np.testing.assert_array_equal(est.sizes, [0, 1])
    np.testing.assert_array_equal(est.counts, [2, 2])
    np.testing.assert_allclose(est.variances, 8.0 / 2)


def test_hg_variance_by_hand():
    # Noisy Hg [5, 3, 4, 9] -> PAV blocks {5, 3, 4} (mean 4) and {9}: variances 2/(3ε²) and 2/ε².
    noisy = np.array([5, 3, 4, 9])
    est = fit_hg(noisy, groups=4, epsilon=2.0, p=2)
    np.testing.assert_array_equal(est.sizes, [4, 9])
    np.testing.assert_array_equal(est.counts, [3, 1])
    np.testing.assert_allclose(est.variances, [2 / (3 * 4.0), 2 / 4.0])


def test_hc_by_hand():
    # 5 groups, K = 4: Hc[0..3] is measured, Hc[4] = G = 5 is public.
    noisy = np.array([2, 1, 4, 9])
    est = fit_hc(noisy, groups=5, epsilon=1.0, p=2, max_size=4)
    # L2: pool (2, 1) -> 1.5, 1.5; 4; 9 -> clipped to G = 5.  rint: 2, 2, 4, 5 (half to even).
    # Ĥc = [2, 2, 4, 5, 5] -> Ĥ = [2, 0, 2, 1, 0].
    np.testing.assert_array_equal(est.sizes, [0, 2, 3])
    np.testing.assert_array_equal(est.counts, [2, 2, 1])
    np.testing.assert_allclose(est.variances, 4.0 / np.array([2, 2, 1]))


# ------------------------------------------------------------------ simplex projection
def project_reference(v: np.ndarray, total: float) -> np.ndarray:
    res = minimize(
        lambda x: 0.5 * np.sum((x - v) ** 2),
        np.full(len(v), total / len(v)),
        jac=lambda x: x - v,
        method="SLSQP",
        bounds=[(0, None)] * len(v),
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - total, "jac": lambda x: np.ones_like(x)}],
        options={"ftol": 1e-12, "maxiter": 500},
    )
    return res.x


def test_project_simplex_by_hand():
    # θ = 1: 3 - 1 = 2, -1 - 1 < 0 -> 0, 1 - 1 = 0; sum 2.
    np.testing.assert_allclose(project_simplex(np.array([3.0, -1.0, 1.0]), 2.0), [2, 0, 0])
    np.testing.assert_allclose(project_simplex(np.array([1.0, 1.0]), 4.0), [2, 2])
    np.testing.assert_allclose(project_simplex(np.array([0.0, 3.0, 1.0]), 4.0), [0, 3, 1])  # already feasible
    np.testing.assert_array_equal(project_simplex(np.array([3.0, 1.0]), 0), [0, 0])


@settings(max_examples=150)
@given(st.lists(st.floats(-30, 30, allow_nan=False, width=32), min_size=1, max_size=10), st.floats(0.5, 40))
def test_project_simplex_kkt_and_reference(v, total):
    v = np.array(v, np.float64)
    before = v.copy()
    x = project_simplex(v, total)
    np.testing.assert_array_equal(v, before)
    assert np.all(x >= 0)
    assert x.sum() == pytest.approx(total, rel=1e-9, abs=1e-9)
    # KKT: x = max(v - θ, 0) for one θ: v - x = θ where x > 0, and v <= θ where x = 0.
    pos = x > 1e-12
    theta = np.mean((v - x)[pos])
    np.testing.assert_allclose((v - x)[pos], theta, atol=1e-8)
    assert np.all(v[~pos] <= theta + 1e-8)
    ref = project_reference(v, total)
    assert np.sum((x - v) ** 2) <= np.sum((ref - v) ** 2) + 1e-6


# ------------------------------------------------------------------ largest remainder
def test_largest_remainder_by_hand():
    np.testing.assert_array_equal(largest_remainder(np.array([0.5, 1.25, 0.25]), 2), [1, 1, 0])
    np.testing.assert_array_equal(
        largest_remainder(np.array([0.5, 0.5, 0.5, 0.5]), 2), [1, 1, 0, 0]
    )  # ties: lower index
    np.testing.assert_array_equal(largest_remainder(np.array([2.0, 3.0]), 5), [2, 3])
    np.testing.assert_array_equal(largest_remainder(np.array([0.9, 0.05, 0.05]), 1), [1, 0, 0])


@settings(max_examples=150)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=10), st.integers(1, 60))
def test_largest_remainder_of_projection(raw, total):
    x = project_simplex(np.array(raw, np.float64) - 7.3, float(total))
    out = largest_remainder(x, total)
    assert out.sum() == total
    assert np.all(out >= np.floor(x)) and np.all(out <= np.floor(x) + 1)
    # Every cell rounded up has a fractional part at least as large as every cell rounded down.
    frac = x - np.floor(x)
    up = out > np.floor(x)
    if up.any() and (~up).any():
        assert frac[up].min() >= frac[~up].max() - 1e-12
