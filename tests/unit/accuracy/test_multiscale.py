"""The multiscale Hg band: exact sum tails, the event E implies coverage, integer bounds, the frame."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import ParameterError
from cocoviz.accuracy.intervals.bands import WIDER_FIRST, LevelBands, cumulative_bounds, half_widths
from cocoviz.accuracy.intervals.multiscale import (
    _family,
    multiscale_frame,
    multiscale_rank_bounds,
    multiscale_widths,
    rank_counts,
    sum_tail,
)
from cocoviz.hierarchy import Hierarchy
from cocoviz.measure.measurements import measure
from cocoviz.plan import Plan
from cocoviz.privacy.noise import GaussianNoise, discrete_gaussian_pmf, double_geometric_pmf

SPAN = 400


def _sum_pmf(noise, m: int) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(-SPAN, SPAN + 1)
    one = (
        discrete_gaussian_pmf(k, float(noise.sigma2))
        if isinstance(noise, GaussianNoise)
        else double_geometric_pmf(k, noise)
    )
    out = one
    for _ in range(m - 1):
        out = np.convolve(out, one)
    return np.arange(-SPAN * m, SPAN * m + 1), out


@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("m", [1, 2, 3, 6])
def test_double_geometric_sum_tail_is_exact(scale, m):
    k, pmf = _sum_pmf(scale, m)
    for w in (0, 1, 3, 7, 15):
        assert sum_tail(scale, m, w) == pytest.approx(pmf[k > w].sum(), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("sigma2", [0.3, 1.0, 9.0])
@pytest.mark.parametrize("m", [1, 2, 5])
def test_gaussian_sum_tail_bounds_the_exact_tail(sigma2, m):
    k, pmf = _sum_pmf(GaussianNoise(sigma2), m)
    for w in (0, 1, 2, 5, 12):
        exact = pmf[k > w].sum()
        if m == 1:
            assert sum_tail(GaussianNoise(sigma2), m, w) == pytest.approx(exact, rel=1e-9, abs=1e-15)
        else:
            assert sum_tail(GaussianNoise(sigma2), m, w) >= exact - 1e-15


@pytest.mark.parametrize("noise", [1.0, 0.4, GaussianNoise(2.0)])
@pytest.mark.parametrize("cells, grain", [(1, 1), (7, 1), (1000, 1), (1000, 16), (5000, 4)])
def test_widths_are_public_and_guarantee_the_confidence(noise, cells, grain):
    w = multiscale_widths(noise, cells, 0.9, grain=grain)
    assert 0.9 <= w.guarantee < 1
    assert all(m >= grain and h % grain == 0 and (count - 1) * h + m <= cells for m, h, count, _ in w.scales)
    # each tolerance is the smallest whole width meeting its share
    share = 0.1 / (2 * len(w.scales)) if w.scales else 0
    for m, _, count, tol in w.scales:
        assert 2 * count * sum_tail(noise, m, tol) <= share < 2 * count * sum_tail(noise, m, tol - 1)


def test_bad_grain_and_level_are_refused():
    with pytest.raises(ParameterError, match="grain"):
        multiscale_widths(1.0, 10, 0.9, grain=3)
    tree = Hierarchy.from_groups(pd.DataFrame({"size": [1, 2, 2]}), size="size", levels=[])
    plan = Plan.build(tree, epsilons=[1.0], methods=["Hc"], max_size=4)
    with pytest.raises(ParameterError, match="multiscale band is for Hg"):
        multiscale_frame(measure(plan, tree, seed=0), 0, 0)


def _event(y, t, w) -> bool:
    """E by brute force over the family: every cell and every interval sum within its tolerance."""
    z = y - t
    if np.abs(z).max(initial=0) > w.single:
        return False
    for m, h, count, tol in w.scales:
        for a in range(0, count * h, h):
            if abs(int(z[a : a + m].sum())) > tol:
                return False
    return True


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(1, 40)), min_size=1, max_size=6),
    st.integers(0, 2**31),
    st.sampled_from([1, 2, 4]),
    st.sampled_from([0.5, 0.9]),
)
def test_e_implies_the_band_holds_the_truth_and_the_bounds_are_whole_and_monotone(runs, seed, grain, c):
    gaps, lengths = zip(*runs)
    t = np.repeat(np.cumsum(gaps), lengths).astype(np.int64)
    w = multiscale_widths(1.0, t.size, c, grain=grain)
    y = t + np.random.default_rng(seed).integers(-2, 3, t.size) * np.random.default_rng(seed + 1).integers(0, 2, t.size)
    low, high = multiscale_rank_bounds(y, w)
    assert low.dtype == high.dtype == np.int64 and (low <= high).all() and (low >= 0).all()
    assert (np.diff(low) >= 0).all() and (np.diff(high) >= 0).all()
    if _event(y, t, w):
        assert (low <= t).all() and (t <= high).all()
    # the proof's bounds, computed here by brute force with exact fractions
    for j in range(0, t.size, max(1, t.size // 5)):
        best = max([0, *(int(v) - w.single for v in y[: j + 1])])
        for m, h, count, tol in w.scales:
            for a in range(0, count * h, h):
                if a + m - 1 <= j:
                    best = max(best, -((tol - int(y[a : a + m].sum())) // m))
        assert low[j] == best or low[j] == min(best, high[j])


def test_the_band_lies_within_the_per_cell_band_at_the_stricter_confidence():
    rng = np.random.default_rng(3)
    t = np.repeat([0, 1, 2, 5, 9], [500, 300, 200, 40, 3]).astype(np.int64)
    y = t + rng.integers(-3, 4, t.size)
    w = multiscale_widths(1.0, t.size, 0.9)
    low, high = multiscale_rank_bounds(y, w)
    cell = half_widths(1.0, t.size, 0.95, first=WIDER_FIRST["Hg"])
    plain_low, plain_high = cumulative_bounds(
        LevelBands.of("Hg", y, np.array([0, t.size])), 0, groups=t.size, a=cell.base + 1
    )
    ms_low, ms_high = rank_counts(low, high)
    n = max(plain_low.size, ms_low.size)
    pad = lambda v: np.pad(v, (0, n - v.size), constant_values=t.size)  # noqa: E731
    assert (pad(ms_low) >= pad(plain_low)).all() and (pad(ms_high) <= pad(plain_high)).all()


def test_frame_on_a_long_run_pins_the_counts():
    tree = Hierarchy.from_groups(pd.DataFrame({"size": [1] * 3000 + [2] * 2000 + [7] * 50}), size="size", levels=[])
    plan = Plan.build(tree, epsilons=[1.0], methods=["Hg"])
    frame = multiscale_frame(measure(plan, tree, seed=4), 0, 0, 0.9)
    assert frame["count_low"].iat[1] <= 3000 <= frame["count_high"].iat[1]
    assert frame["count_high"].iat[1] - frame["count_low"].iat[1] < 300  # the per-cell band: about 0..5000
    assert frame.attrs["guarantee"] >= 0.9 and frame.attrs["scope"] == "node"
    level = multiscale_frame(measure(plan, tree, seed=4), 0, 0, 0.9, scope="level")
    assert level.attrs["node_confidence"] == 0.9  # one node on the root level
    assert _family(1, 1) == [] and multiscale_widths(1.0, 1, 0.9).guarantee >= 0.9
