"""Intervals from the noisy measurements alone: exact quantiles, the band's coverage proof, the fit inside."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import ParameterError, Plan, estimate, load_release, measure, post_process
from cocoviz.accuracy.intervals.bands import (
    WIDER_FIRST,
    LevelBands,
    Widths,
    covered_nodes,
    cumulative_bounds,
    half_width,
    half_widths,
    tail_probability,
    truth_covered,
)
from cocoviz.accuracy.intervals.counts import counts_cumulative_bounds
from cocoviz.accuracy.intervals.derived import count_bounds, persons_bounds, range_bounds
from cocoviz.datasets import load_dataset
from cocoviz.methods.hcp import hcp_grid, query_hcp
from cocoviz.methods.isotonic import isotonic
from cocoviz.privacy.noise import FastSampler, GaussianNoise, discrete_gaussian_pmf, double_geometric_pmf

LAWS = [1.0, 0.5, 3.7, 25.0, GaussianNoise(0.3), GaussianNoise(4.0), GaussianNoise(90.0)]


def pmf(noise, k):
    if isinstance(noise, GaussianNoise):
        return discrete_gaussian_pmf(k, float(noise.sigma2))
    return double_geometric_pmf(k, noise)


@pytest.mark.parametrize("noise", LAWS)
def test_tail_probability_is_the_pmf_summed(noise):
    span = 400 + int(40 * (math.sqrt(float(noise.sigma2)) if isinstance(noise, GaussianNoise) else noise))
    k = np.arange(-span, span + 1)
    p = pmf(noise, k)
    for m in (0, 1, 3, 10):
        inside = p[np.abs(k) <= m].sum()
        assert float(tail_probability(noise, m)) == pytest.approx(1 - inside, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("noise", LAWS)
@pytest.mark.parametrize("cells", [1, 7, 1000, 10**6])
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.99])
def test_half_width_is_the_exact_simultaneous_quantile(noise, cells, confidence):
    a = half_width(noise, cells, confidence)

    def joint(m):  # P(max of `cells` i.i.d. |Z| <= m) from the pmf, in logs (1 - tail summed from the far end)
        k = np.arange(m + 1, m + 20_000)
        tail = 2 * pmf(noise, k)[::-1].sum()
        return cells * math.log1p(-tail)

    assert joint(a) >= math.log(confidence) - 1e-12
    assert a == 0 or joint(a - 1) < math.log(confidence) + 1e-12


def test_half_width_refuses_a_confidence_outside_0_1():
    for bad in (0, 1, 1.5, -0.1, True, "0.9"):
        with pytest.raises(ParameterError, match="confidence"):
            half_width(1.0, 10, bad)


def brute_envelopes(values, ptr):
    ups, downs = [], []
    for k in range(len(ptr) - 1):
        seg = values[ptr[k] : ptr[k + 1]]
        ups.append(np.maximum.accumulate(seg) if seg.size else seg)
        downs.append(np.minimum.accumulate(seg[::-1])[::-1] if seg.size else seg)
    return ups, downs


def expand(at, value, cells):
    return np.repeat(value, np.diff(np.append(at, cells)))


@settings(max_examples=80)
@given(st.lists(st.lists(st.integers(-20, 20), max_size=30), min_size=1, max_size=6))
def test_envelopes_are_the_running_max_and_min_of_every_node(segments):
    values = np.array([v for s in segments for v in s], np.int64)
    ptr = np.cumsum([0] + [len(s) for s in segments])
    bands = LevelBands.of("Hc", values, ptr)
    ups, downs = brute_envelopes(values, ptr)
    for k in range(len(segments)):
        cells, up_at, up_value, down_at, down_value = bands.node(k)
        assert cells == len(segments[k])
        assert np.array_equal(expand(up_at, up_value, cells), ups[k])
        assert np.array_equal(expand(down_at, down_value, cells), downs[k])
        assert np.all(np.diff(up_value) > 0) and np.all(np.diff(down_value) > 0)  # steps, no repeats
    halves = LevelBands.concat([LevelBands.of("Hc", values, ptr[:2]), LevelBands.of("Hc", values, ptr[1:] - 0)])
    assert halves.cells.tolist() == [len(s) for s in segments[:1]] + [len(s) for s in segments[1:]]


@settings(max_examples=80)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=60), st.lists(st.integers(1, 20), max_size=4))
def test_chunked_envelopes_equal_the_whole_node(values, cuts):
    values = np.array(values, np.int64)
    edges = sorted({0, len(values), *[c % len(values) for c in cuts]})
    chunks = [(lo, LevelBands.of("Hg", values[lo:hi], np.array([0, hi - lo]))) for lo, hi in zip(edges[:-1], edges[1:])]
    whole, joined = LevelBands.of("Hg", values, np.array([0, len(values)])), LevelBands.of_chunks("Hg", chunks[::-1])
    for name in ("cells", "up_ptr", "up_at", "up_value", "down_ptr", "down_at", "down_value"):
        assert np.array_equal(getattr(whole, name), getattr(joined, name)), name


@st.composite
def any_widths(draw, n):
    """Tolerances of the scheme: ± base, one side wider by 1 on some top (over) and bottom (under) cells."""
    return Widths(n, draw(st.integers(0, 5)), draw(st.integers(0, n)), draw(st.integers(0, n)))


@st.composite
def truth_and_bounded_noise(draw):
    """A monotone truth in [0, G], noise within [-under, over] in every cell (the event E of the confidence)."""
    n = draw(st.integers(1, 40))
    groups = draw(st.integers(0, 30))
    truth = np.sort(np.array(draw(st.lists(st.integers(0, groups), min_size=n, max_size=n)), np.int64))
    widths = draw(any_widths(n))
    over, under = widths.over(np.arange(n)), widths.under(np.arange(n))
    noise = np.array([draw(st.integers(-int(u), int(o))) for o, u in zip(over, under)], np.int64)
    return truth, truth + noise, groups, widths


def brute_band(noisy, widths, floor, ceiling):
    """The band from every noisy value (not the envelopes): clipped running max / min, never crossing."""
    i = np.arange(len(noisy))
    low = np.clip(np.maximum.accumulate(noisy - widths.over(i)), floor, ceiling)
    high = np.clip(np.minimum.accumulate((noisy + widths.under(i))[::-1])[::-1], floor, ceiling)
    return np.minimum(low, high), np.maximum(low, high)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-30, 30), min_size=1, max_size=40), st.data())
def test_the_band_from_the_envelopes_is_the_band_from_every_noisy_value(values, data):
    """Exact from the envelopes for any noisy values, E or not: the first cell attaining the running max
    sets the lower bound's tolerance, the last attaining the running min the upper's."""
    noisy = np.array(values, np.int64)
    widths = data.draw(any_widths(len(noisy)))
    groups = data.draw(st.integers(0, 30))
    low, high = cumulative_bounds(LevelBands.of("Hc", noisy, np.array([0, len(noisy)])), 0, groups=groups, a=widths)
    brute_low, brute_high = brute_band(noisy, widths, 0, groups)
    assert np.array_equal(low[:-1], brute_low) and np.array_equal(high[:-1], brute_high)


@settings(max_examples=300, deadline=None)
@given(truth_and_bounded_noise())
def test_the_band_holds_the_truth_and_the_isotonic_fit_stays_within_the_tolerances(case):
    truth, noisy, groups, widths = case
    bands = LevelBands.of("Hc", noisy, np.array([0, len(noisy)]))
    low, high = cumulative_bounds(bands, 0, groups=groups, a=widths)
    assert np.all(low[:-1] <= truth) and np.all(truth <= high[:-1]) and low[-1] == high[-1] == groups
    assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) >= 0)
    up, down = np.maximum.accumulate(noisy), np.minimum.accumulate(noisy[::-1])[::-1]
    i, a = np.arange(len(noisy)), widths.widest
    over, under = widths.over(i), widths.under(i)
    for p in (1, 2):
        free, bounded = isotonic(noisy, p=p), isotonic(noisy, p=p, lower=0, upper=groups)
        for fit in (free, bounded, np.rint(bounded)):
            # Cell by cell, as o is non-decreasing and u non-increasing (module docstring).
            assert np.all(truth - under - 1e-9 <= fit) and np.all(fit <= truth + over + 1e-9), (p, fit)
        # The fit lies between the running min from the right and the running max from the left, so the
        # published band is never wider than the fit's own ± a (the widest tolerance).
        assert np.all(down - 1e-9 <= free) and np.all(free <= up + 1e-9)
        assert np.all(bounded - a - 1e-9 <= low[:-1]) and np.all(high[:-1] <= bounded + a + 1e-9)


@settings(max_examples=200, deadline=None)
@given(truth_and_bounded_noise())
def test_hg_band_on_sorted_sizes_gives_cumulative_bounds_that_hold(case):
    sizes, noisy, _, widths = case  # the truth: sorted group sizes
    bands = LevelBands.of("Hg", noisy, np.array([0, len(noisy)]))
    low, high = cumulative_bounds(bands, 0, groups=len(sizes), a=widths)
    truth = np.searchsorted(sizes, np.arange(len(low)), side="right")
    assert np.all(low <= truth) and np.all(truth <= high) and low[-1] == len(sizes)
    i = np.arange(len(sizes))
    for p in (1, 2):
        fit = np.rint(isotonic(noisy, p=p, lower=0))
        assert np.all(sizes - widths.under(i) <= fit) and np.all(fit <= sizes + widths.over(i))


@pytest.mark.parametrize("noise", LAWS)
@pytest.mark.parametrize("cells", [1, 7, 1000, 10**6])
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("first", ["top", "bottom"])
def test_half_widths_reach_the_confidence_with_the_fewest_widenings(noise, cells, confidence, first):
    widths = half_widths(noise, cells, confidence, first=first)
    a = half_width(noise, cells, confidence)
    assert widths.widest == a and widths.top + widths.bottom <= 2 * cells
    if a:
        assert widths.base == a - 1 and widths.top + widths.bottom > 0
    # P(E) from the pmf, cell by cell: P(-u ≤ Z ≤ o) over the four kinds of cell.
    k = np.arange(-a - 3, a + 4)
    p = pmf(noise, k)
    if cells <= 1000:
        i = np.arange(cells)
        over, under = widths.over(i), widths.under(i)
        kinds, counts = np.unique(np.stack([over, under]), axis=1, return_counts=True)
        log_e = sum(c * math.log(p[(k >= -u) & (k <= o)].sum()) for (o, u), c in zip(kinds.T, counts))
        assert log_e == pytest.approx(widths.log_confidence(noise), abs=1e-9)
        assert np.all(np.diff(over) >= 0) and np.all(np.diff(under) <= 0)
    assert widths.log_confidence(noise) >= math.log(confidence) - 1e-12
    if widths.top + widths.bottom:  # one widening fewer (the last one made) would not reach it
        second = "bottom" if first == "top" else "top"
        side = second if getattr(widths, second) else first
        fewer = dataclasses.replace(widths, **{side: getattr(widths, side) - 1})
        assert fewer.log_confidence(noise) < math.log(confidence)


@settings(max_examples=200)
@given(truth_and_bounded_noise(), st.data())
def test_counts_ranges_and_persons_bounds_hold_for_the_truth(case, data):
    truth, noisy, groups, a = case
    low, high = cumulative_bounds(LevelBands.of("Hc", noisy, np.array([0, len(noisy)])), 0, groups=groups, a=a)
    hc = np.append(truth, groups)
    h = np.diff(hc, prepend=0)
    count_low, count_high = count_bounds(low, high)
    assert np.all(count_low <= h) and np.all(h <= count_high)
    lo = data.draw(st.integers(0, len(hc) - 1))
    hi = data.draw(st.integers(lo, len(hc) - 1))
    r_low, r_high = range_bounds(low, high, lo, hi)
    assert r_low <= h[lo : hi + 1].sum() <= r_high
    persons = np.cumsum(np.arange(len(h)) * h)
    p_low, p_high = persons_bounds(low, high)
    assert np.all(p_low <= persons) and np.all(persons <= p_high)
    assert np.all(np.diff(p_low) >= 0) and np.all(np.diff(p_high) >= 0)


@pytest.mark.statistical
def test_coverage_on_one_node_is_the_nominal_one():
    """2,000 keyed draws of one Hc node of 50 cells: the band holds the truth in about 90% of them."""
    truth = np.minimum(np.arange(50) * 3, 100)
    sampler = FastSampler(seed=7)
    a = half_width(2.0, 50, 0.9)
    hits = 0
    for trial in range(2000):
        noisy = sampler.draw(truth, 2.0, (0, trial, 0))
        low, high = cumulative_bounds(LevelBands.of("Hc", noisy, np.array([0, 50])), 0, groups=100, a=a)
        hits += bool(np.all(low[:-1] <= truth) & np.all(truth <= high[:-1]))
    exact = (1 - float(tail_probability(2.0, a))) ** 50
    assert 0.9 <= exact < 0.95
    assert abs(hits / 2000 - exact) < 4 * math.sqrt(exact * (1 - exact) / 2000)


@pytest.mark.statistical
@pytest.mark.parametrize("methods", [["Hg", "Hc"], ["Hc", "Hg"]])
def test_toy_release_intervals_cover_about_nominally(methods):
    """200 seeded releases of the toy: every node's 90% band holds its truth in most of them."""
    tree = load_dataset("toy")
    plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=methods, max_size=6)
    hits = {(level, k): 0 for level in (0, 1) for k in range(tree.runs(level).n_nodes)}
    for seed in range(200):
        release = post_process(plan, measure(plan, tree, seed=seed))
        for level, k in hits:
            frame = release.intervals(plan.shape.paths[level][k])
            hits[level, k] += truth_covered(frame, *tree.runs(level).node(k))
    rates = np.array(list(hits.values())) / 200
    assert np.all(rates >= 0.82) and np.all(rates <= 1.0), rates


@pytest.mark.statistical
@pytest.mark.parametrize("method", ["Hc", "Hg"])
def test_vectorised_coverage_is_the_frames(method):
    """covered_nodes (the benchmark's, all nodes at once) agrees with every node's frame, misses included."""
    tree = load_dataset("toy")
    plan = Plan.build(tree, epsilons=[0.3, 0.3], methods=[method, method], max_size=6)
    groups = plan.shape.group_counts(1)
    agree = misses = 0
    for seed in range(60):
        measurements = measure(plan, tree, seed=seed)
        release = post_process(plan, measurements)
        bands = release.bands[1]
        a = [half_widths(plan.level_noise(1), int(c), 0.5, first=WIDER_FIRST[method]) for c in bands.cells]
        truth = plan.level_method(1).level_query(tree.runs(1), 0, 2, np.full(2, 6))[0]
        fast = covered_nodes(bands, truth, a, groups)
        paths = plan.shape.paths[1]
        slow = [truth_covered(release.intervals(node, 0.5), *tree.runs(1).node(k)) for k, node in enumerate(paths)]
        agree += fast.tolist() == slow
        misses += 2 - sum(slow)
    assert agree == 60 and misses > 0


def test_estimate_and_post_process_carry_the_same_bands():
    tree = load_dataset("toy")
    options = dict(epsilons=[0.5, 1.0], methods=["Hg", "Hc"], max_size=8)
    plan = Plan.build(tree, **options)
    fused = estimate(tree, **options, seed=3)
    split = post_process(plan, measure(plan, tree, seed=3))
    cache: dict = {}
    cached = [estimate(tree, **options, seed=3, level_cache=cache) for _ in range(2)][-1]
    for level in (0, 1):
        for node in plan.shape.paths[level]:
            frame = split.intervals(node, confidence=0.8)
            for other in (fused, cached):
                again = other.intervals(node, confidence=0.8)
                assert frame.equals(again) and frame.attrs == again.attrs


def test_intervals_under_zcdp_noise():
    tree = load_dataset("toy")
    release = estimate(tree, rhos=[0.5, 0.5], methods=["Hg", "Hc"], max_size=6, seed=0)
    frame = release.intervals(())
    plan = release.plan
    assert frame.attrs["half_width"] == half_width(plan.level_noise(0), 4, 0.9)
    assert isinstance(plan.level_noise(0), GaussianNoise)


def test_frame_columns_and_what_they_say():
    tree = load_dataset("toy")
    release = estimate(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=6, seed=1)
    frame = release.intervals(("a",))
    assert list(frame.columns) == [
        "size",
        "cumulative_low",
        "cumulative_high",
        "cumulative",
        "count_low",
        "count_high",
        "count",
        "persons_low",
        "persons_high",
        "persons",
    ]
    assert frame["size"].tolist() == list(range(len(frame)))
    assert (frame["cumulative_low"] <= frame["cumulative_high"]).all()
    assert "no ε" in frame.attrs["note"] and frame.attrs["emd_bound"] >= 0


def test_intervals_refuse_what_has_no_band_of_its_own(tmp_path):
    tree = load_dataset("toy")
    bottom_up = estimate(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=6, consistency="bottom-up", seed=0)
    with pytest.raises(ParameterError, match="not measured"):
        bottom_up.intervals(())
    assert bottom_up.intervals(("a",)).attrs["method"] == "Hc"
    naive = estimate(tree, epsilons=[1.0, 1.0], methods=["naive", "Hg"], max_size=6, seed=0)
    assert naive.intervals(()).attrs["method"] == "naive"
    path = tmp_path / "release.parquet"
    naive.save(path, bands=False)
    with pytest.raises(ParameterError, match="from a file"):
        load_release(path).intervals(("a",))
    with pytest.raises(ParameterError, match="confidence"):
        naive.intervals(("a",), confidence=1.0)


def test_bands_are_held_in_the_narrowest_exact_integer_type():
    """int32 where every value fits (a toy release, chunks joined), int64 where one does not; the band is the same."""
    release = estimate(load_dataset("toy"), epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=6, seed=0)
    fields = ("cells", "up_ptr", "up_at", "up_value", "down_ptr", "down_at", "down_value")
    for bands in release.bands:
        assert {getattr(bands, f).dtype for f in fields} == {np.dtype(np.int32)}
    values = np.array([3, 1, 2**40, 5, 2**40 + 1], np.int64)
    wide = LevelBands.of("Hc", values, np.array([0, 5]))
    assert wide.up_value.dtype == np.int64 and wide.up_at.dtype == np.int32
    chunks = [
        (0, LevelBands.of("Hc", values[:2], np.array([0, 2]))),
        (2, LevelBands.of("Hc", values[2:], np.array([0, 3]))),
    ]
    joined = LevelBands.of_chunks("Hc", chunks)
    for f in fields:
        assert np.array_equal(getattr(joined, f), getattr(wide, f)), f
    low, high = cumulative_bounds(joined, 0, groups=2**41, a=1)
    # crossed where E failed (cells 2, 3): swapped
    assert low.tolist() == [2, 2, 6, 6, 2**40, 2**41]
    assert high.tolist() == [2, 2, 2**40 - 1, 2**40 - 1, 2**40 + 2, 2**41]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), max_size=40), st.integers(1, 70), st.data())
def test_hcp_band_at_the_grid_holds_the_untruncated_truth_at_every_size(sizes, max_size, data):
    """Under E on the grid's cells, every Hc[j] of the true (untruncated) sizes lies in the band."""
    sizes = np.sort(np.array(sizes, np.int64))
    groups = len(sizes)
    runs_sizes, counts = np.unique(sizes, return_counts=True)
    truth = query_hcp(runs_sizes, counts, max_size)
    widths = data.draw(any_widths(len(truth)))
    i = np.arange(len(truth))
    noise = [data.draw(st.integers(-int(u), int(o))) for o, u in zip(widths.over(i), widths.under(i))]
    bands = LevelBands.of("Hcp", truth + np.array(noise, np.int64), np.array([0, len(truth)]))
    low, high = cumulative_bounds(bands, 0, groups=groups, a=widths)
    assert len(low) == int(hcp_grid(max_size)[-1]) + 2
    j = np.arange(max(len(low), int(sizes.max(initial=0)) + 2))
    hc = np.searchsorted(sizes, j, side="right")
    low, high = (np.pad(v, (0, len(j) - len(v)), mode="edge") for v in (low, high))
    assert np.all(low <= hc) and np.all(hc <= high)
    assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) >= 0)


def test_hcp_release_intervals_cover_and_agree_with_the_vectorised_check():
    tree = load_dataset("toy")
    plan = Plan.build(tree, epsilons=[0.5, 0.5], methods=["Hcp", "Hcp"], max_size=12)
    groups = plan.shape.group_counts(1)
    truth = np.concatenate([query_hcp(*tree.runs(1).node(k), 12) for k in range(2)])
    hits = np.zeros(2, np.int64)
    for seed in range(100):
        release = post_process(plan, measure(plan, tree, seed=seed))
        bands = release.bands[1]
        widths = [half_widths(plan.level_noise(1), int(c), 0.9, first=WIDER_FIRST["Hcp"]) for c in bands.cells]
        slow = [
            truth_covered(release.intervals(node), *tree.runs(1).node(k)) for k, node in enumerate(plan.shape.paths[1])
        ]
        assert covered_nodes(bands, truth, widths, groups).tolist() == slow
        hits += slow
    frame = release.intervals(())
    assert frame.attrs["method"] == "Hcp" and "grid" in frame.attrs["note"]
    assert np.all(hits >= 80), hits


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 12), max_size=40), st.integers(1, 14), st.data())
def test_naive_band_from_per_size_bounds_holds_the_truncated_truth(sizes, max_size, data):
    """Under E on the K + 1 noisy counts, every Hc[j] of the sizes counted at K lies in the band."""
    sizes = np.minimum(np.sort(np.array(sizes, np.int64)), max_size)
    h = np.bincount(sizes, minlength=max_size + 1)
    widths = data.draw(any_widths(max_size + 1))
    i = np.arange(max_size + 1)
    noise = [data.draw(st.integers(-int(u), int(o))) for o, u in zip(widths.over(i), widths.under(i))]
    low, high = counts_cumulative_bounds(h + np.array(noise, np.int64), widths, groups=len(sizes))
    hc = np.cumsum(h)
    assert np.all(low <= hc) and np.all(hc <= high) and np.all(np.diff(low) >= 0) and np.all(np.diff(high) >= 0)
    assert low[-1] == high[-1] == len(sizes)


def test_naive_release_intervals_cover_the_truth():
    tree = load_dataset("toy")
    plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["naive", "naive"], max_size=6)
    hits = np.zeros(3, np.int64)
    for seed in range(100):
        release = post_process(plan, measure(plan, tree, seed=seed))
        nodes = [(0, 0), (1, 0), (1, 1)]
        hits += [truth_covered(release.intervals(plan.shape.paths[lv][k]), *tree.runs(lv).node(k)) for lv, k in nodes]
    frame = release.intervals(())
    assert frame.attrs["cells"] == 7 and "per-size" in frame.attrs["note"]
    assert np.all(hits >= 90), hits  # P(E) ≥ 0.9 and the band may hold the truth off E too


def test_a_published_measurement_file_gives_the_release_and_its_intervals(tmp_path):
    """A release file saved without its envelopes gives no intervals; its noisy-measurement file does, through
    post_process, and so does the release file saved with them (tests/test_band_columns.py)."""
    import cocoviz
    from cocoviz.datasets import load_dataset

    tree = load_dataset("toy")
    plan = cocoviz.Plan.build(tree, epsilons=[1, 1], methods=["Hc", "Hg"], max_size=10)
    measured = cocoviz.measure(plan, tree, seed=5)
    release = cocoviz.post_process(plan, measured)
    cocoviz.save_measurements(measured, tmp_path / "m.parquet")
    release.save(tmp_path / "r.parquet", bands=False)
    release.save(tmp_path / "banded.parquet")
    again = cocoviz.post_process(plan, cocoviz.load_measurements(tmp_path / "m.parquet"))
    banded = cocoviz.load_release(tmp_path / "banded.parquet")
    for node in [(), ("a",), ("b",)]:
        pd.testing.assert_frame_equal(again.intervals(node), release.intervals(node))
        pd.testing.assert_frame_equal(banded.intervals(node), release.intervals(node))
    with pytest.raises(cocoviz.CocovizError, match="load_measurements"):
        cocoviz.load_release(tmp_path / "r.parquet").intervals(("a",))
