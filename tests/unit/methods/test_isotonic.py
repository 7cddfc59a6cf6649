"""Isotonic regression: L1 against a linear program, L2 against a reference PAV, bounds, blocks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from cocoviz.methods.isotonic import block_sizes, isotonic, isotonic_l1, isotonic_l2

small_integers = st.lists(st.integers(-6, 12), min_size=1, max_size=9).map(lambda x: np.array(x, np.float64))
small_floats = st.lists(st.floats(-20, 20, allow_nan=False, width=32), min_size=1, max_size=9).map(
    lambda x: np.array(x, np.float64)
)


def l1_lp(y: np.ndarray, lower: float | None = None, upper: float | None = None) -> float:
    """Optimal value of min Σ|x - y| s.t. lower <= x_1 <= ... <= x_n <= upper, by linprog.

    Variables (x, t) with t_i >= |x_i - y_i|.
    """
    n = len(y)
    eye = np.eye(n)
    a_abs = np.block([[eye, -eye], [-eye, -eye]])
    b_abs = np.concatenate([y, -y])
    chain = np.zeros((max(n - 1, 0), 2 * n))
    for i in range(n - 1):
        chain[i, i], chain[i, i + 1] = 1.0, -1.0
    res = linprog(
        np.concatenate([np.zeros(n), np.ones(n)]),
        A_ub=np.vstack([a_abs, chain]),
        b_ub=np.concatenate([b_abs, np.zeros(n - 1)]),
        bounds=[(lower, upper)] * n + [(0, None)] * n,
        method="highs",
    )
    assert res.status == 0
    return float(res.fun)


def reference_pav(y: np.ndarray) -> np.ndarray:
    """Textbook pool-adjacent-violators for the L2 loss: a stack of (sum, count) blocks."""
    blocks: list[list[float]] = []
    for v in y:
        blocks.append([float(v), 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    return np.concatenate([np.full(c, s / c) for s, c in blocks])


def is_monotone(x: np.ndarray) -> bool:
    return bool(np.all(np.diff(x) >= 0))


# ------------------------------------------------------------------ hand-checked examples
def test_docstring_example_by_hand():
    y = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    # L2: pool 3, 1, 2 -> mean 2; pool 5, 4 -> mean 4.5.
    np.testing.assert_allclose(isotonic(y, p=2), [2, 2, 2, 4.5, 4.5])
    # L1: optimal cost 3 (e.g. [2, 2, 2, 4, 4]: 1 + 1 + 0 + 1 + 0, or [1, 1, 2, 4, 4]: 2 + 0 + 0 + 1 + 0);
    # and no less: x1 <= x2 forces |x1 - 3| + |x2 - 1| >= 2, and x4 <= x5 forces |x4 - 5| + |x5 - 4| >= 1.
    x = isotonic(y, p=1)
    assert is_monotone(x)
    assert np.abs(x - y).sum() == 3.0


def test_already_sorted_is_unchanged():
    y = np.array([0.0, 1.0, 1.0, 7.0])
    np.testing.assert_array_equal(isotonic_l1(y), y)
    np.testing.assert_array_equal(isotonic_l2(y), y)


def test_reversed_pools_to_one_block():
    y = np.array([4.0, 3.0, 2.0, 1.0, 0.0])
    np.testing.assert_allclose(isotonic_l2(y), np.full(5, 2.0))
    np.testing.assert_allclose(isotonic_l1(y), np.full(5, 2.0))  # the median, the only optimum


def test_empty_input():
    assert isotonic_l1(np.zeros(0)).shape == (0,)
    assert isotonic_l2(np.zeros(0)).shape == (0,)
    assert isotonic(np.zeros(0), p=1, lower=0, upper=3).shape == (0,)


def test_bad_p():
    with pytest.raises(ValueError, match="p must be 1 or 2"):
        isotonic(np.array([1.0, 0.0]), p=3)


# ------------------------------------------------------------------ optimality
@settings(max_examples=150)
@given(small_integers)
def test_l1_is_optimal_vs_linprog(y):
    x = isotonic_l1(y)
    assert x.shape == y.shape
    assert is_monotone(x)
    assert np.abs(x - y).sum() == pytest.approx(l1_lp(y), abs=1e-6)
    # The returned solution uses values of y itself: integral data, integral fit.
    assert set(x.tolist()) <= set(y.tolist())


@settings(max_examples=80)
@given(small_floats)
def test_l1_is_optimal_on_real_data(y):
    x = isotonic_l1(y)
    assert is_monotone(x)
    assert np.abs(x - y).sum() == pytest.approx(l1_lp(y), abs=1e-5)


def test_l1_optimal_on_a_long_noisy_input():
    rng = np.random.default_rng(11)
    y = np.sort(rng.integers(0, 40, 300)).astype(float) + rng.integers(-8, 9, 300)
    x = isotonic_l1(y)
    assert is_monotone(x)
    assert np.abs(x - y).sum() == pytest.approx(l1_lp(y), abs=1e-6)


@settings(max_examples=150)
@given(small_floats)
def test_l2_matches_reference_pav(y):
    x = isotonic_l2(y)
    assert is_monotone(x)
    np.testing.assert_allclose(x, reference_pav(y), atol=1e-9)


@settings(max_examples=150)
@given(small_integers, st.integers(-4, 4), st.integers(0, 12))
def test_bounded_l1_is_clip_and_optimal(y, lower, width):
    upper = lower + width
    x = isotonic(y, p=1, lower=lower, upper=upper)
    np.testing.assert_array_equal(x, np.clip(isotonic_l1(y), lower, upper))
    assert is_monotone(x) and x.min() >= lower and x.max() <= upper
    assert np.abs(x - y).sum() == pytest.approx(l1_lp(y, lower, upper), abs=1e-6)


@settings(max_examples=150)
@given(small_floats, st.integers(-4, 4), st.integers(0, 12))
def test_bounded_l2_is_clip_and_optimal(y, lower, width):
    upper = lower + width
    x = isotonic(y, p=2, lower=lower, upper=upper)
    np.testing.assert_allclose(x, np.clip(reference_pav(y), lower, upper), atol=1e-9)
    assert is_monotone(x) and x.min() >= lower and x.max() <= upper
    # x is the Euclidean projection of y onto the polytope {lower <= z_1 <= ... <= z_n <= upper}
    # iff (y - x)·(v - x) <= 0 for every vertex v; the vertices are the steps
    # (lower, ..., lower, upper, ..., upper).
    n = len(y)
    for k in range(n + 1):
        v = np.where(np.arange(n) < k, lower, upper).astype(float)
        assert np.dot(y - x, v - x) <= 1e-7 * (1 + np.abs(y).sum())


@settings(max_examples=50)
@given(small_floats, st.sampled_from([1, 2]))
def test_input_not_mutated(y, p):
    before = y.copy()
    isotonic(y, p=p, lower=0, upper=5)
    np.testing.assert_array_equal(y, before)


def test_integer_input_accepted():
    y = np.array([3, 1, 2], np.int64)
    assert np.abs(isotonic(y, p=1) - y).sum() == 2.0  # [1, 1, 2] and [2, 2, 2] are both optimal
    np.testing.assert_allclose(isotonic(y, p=2), [2, 2, 2])


# ------------------------------------------------------------------ blocks
def test_block_sizes_by_hand():
    np.testing.assert_array_equal(block_sizes(np.array([1.0, 1.0, 2.0, 3.0, 3.0, 3.0])), [2, 2, 1, 3, 3, 3])
    np.testing.assert_array_equal(block_sizes(np.array([5.0])), [1])
    np.testing.assert_array_equal(block_sizes(np.zeros(0)), [])
    np.testing.assert_array_equal(block_sizes(np.array([0.0, 0.0, 0.0])), [3, 3, 3])


@settings(max_examples=80)
@given(small_floats)
def test_block_sizes_partition_the_fit(y):
    fit = isotonic_l2(y)
    sizes = block_sizes(fit)
    assert sizes.sum() == pytest.approx(sum(sizes))
    # Σ 1/|S_i| over the entries counts the blocks; blocks are runs of equal values.
    n_blocks = 1 + np.count_nonzero(fit[1:] != fit[:-1])
    assert np.sum(1.0 / sizes) == pytest.approx(n_blocks)
    # The PAV fit is the mean of y over each block.
    start = 0
    while start < len(fit):
        stop = start + sizes[start]
        assert np.all(fit[start:stop] == fit[start])
        assert fit[start] == pytest.approx(y[start:stop].mean(), abs=1e-9)
        start = stop


# ------------------------------------------------ the counting slope trick against the heap
from cocoviz.methods._isotonic_kernels import integer_span, slope_trick, slope_trick_counts  # noqa: E402


@settings(max_examples=300)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=200), st.integers(-(10**6), 10**6))
def test_counting_path_equals_the_heap_on_whole_numbers(values, shift):
    y = np.array(values, np.float64) + shift
    np.testing.assert_array_equal(isotonic_l1(y), slope_trick(y))
    np.testing.assert_array_equal(isotonic_l1(y.astype(np.int64)), slope_trick(y))  # integer-typed input


def test_counting_path_equals_the_heap_on_noisy_hc():
    # The engine's case: a noisy cumulative histogram with a long flat tail at G.
    rng = np.random.default_rng(7)
    hc = np.minimum(np.cumsum(rng.poisson(300, 100_000)), 5_000).astype(np.float64)
    for scale in (0.5, 2.0, 20.0):
        noisy = hc + np.floor(rng.exponential(scale, hc.size)) - np.floor(rng.exponential(scale, hc.size))
        lo, hi, whole = integer_span(noisy)
        top, done = slope_trick_counts(noisy, lo, int(hi - lo) + 1, 16 * noisy.size + 4096)
        assert whole and done  # the fast path, within its step budget
        np.testing.assert_array_equal(isotonic_l1(noisy), slope_trick(noisy))


def test_alternating_extremes_exhaust_the_budget_and_fall_back():
    # 0, R, 0, R, ...: every violation scans the whole range; the budget stops it and the heap takes over.
    n = 20_000
    y = np.zeros(n)
    y[1::2] = 4 * n
    lo, hi, _ = integer_span(y)
    _, done = slope_trick_counts(y, lo, int(hi - lo) + 1, 16 * n + 4096)
    assert not done
    np.testing.assert_array_equal(isotonic_l1(y), slope_trick(y))


def test_fractions_and_wide_ranges_take_the_heap():
    y = np.array([0.5, 3.0, 1.0, 2.0])
    assert not integer_span(y)[2]
    np.testing.assert_array_equal(isotonic_l1(y), slope_trick(y))
    wide = np.array([0.0, 1e12, 5.0, 3.0])
    np.testing.assert_array_equal(isotonic_l1(wide), slope_trick(wide))
