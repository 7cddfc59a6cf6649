"""Whole-level kernels: the same numbers as node by node, whatever the batching, chunking or threads."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import estimate
from cocoviz.measure.measurements import answer_node, measure, measure_level
from cocoviz.methods import whole_level as whole_level
from cocoviz.methods.estimators import fit_hc, fit_hg
from cocoviz.methods.isotonic import isotonic
from cocoviz.methods.whole_level import fit_hc_nodes, fit_hg_nodes, join_segments, node_batches, stream_hg_node
from cocoviz.pipeline import estimate as pipeline
from cocoviz.plan import Plan
from cocoviz.privacy.noise import FastSampler
from cocoviz.privacy.noise._fast_kernels import philox4x32
from cocoviz.release.post_process import fit_level, post_process
from tests.support.digests import three_levels


def test_philox_known_answers():
    """Random123's known-answer vectors for Philox4x32-10."""
    u = np.uint64
    cases = [
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        (
            (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
            (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
        ),
    ]
    for counter, key, expected in cases:
        assert tuple(int(w) for w in philox4x32(*map(u, counter), *map(u, key))) == expected


def test_a_level_drawn_at_once_is_its_nodes_drawn_one_by_one():
    sampler = FastSampler(seed=(3, 1))
    values = np.arange(50, dtype=np.int64)
    ptr = np.array([0, 7, 7, 30, 50])
    whole = sampler.draw_level(values, ptr, 2.5, level=2, first_node=10)
    for s in range(4):
        alone = sampler.draw(values[ptr[s] : ptr[s + 1]], 2.5, (2, 10 + s, 0))
        np.testing.assert_array_equal(whole[ptr[s] : ptr[s + 1]], alone)
    # A node in chunks: its cells keep their own noise.
    chunk = sampler.draw_level(values[35:50].copy(), np.array([0, 15]), 2.5, level=2, first_node=13, offset=5)
    np.testing.assert_array_equal(chunk, whole[35:50])
    # Other keys, other noise.
    assert not np.array_equal(sampler.draw(values, 2.5, (2, 10, 1)), sampler.draw(values, 2.5, (2, 10, 0)))


def test_node_batches_cover_the_level_in_order():
    cells = np.array([5, 0, 9, 1, 1, 1, 30, 2])
    batches = node_batches(cells, max_cells=10)
    assert [lo for lo, _ in batches] == [0] + [hi for _, hi in batches[:-1]] and batches[-1][1] == len(cells)
    assert all(cells[lo:hi].sum() <= 10 or hi - lo == 1 for lo, hi in batches)
    assert node_batches(np.zeros(0, np.int64)) == []
    values, ptr = join_segments([(np.array([1, 2]), np.array([0, 0, 2])), (np.array([3]), np.array([0, 1]))])
    assert values.tolist() == [1, 2, 3] and ptr.tolist() == [0, 0, 2, 3]


def _exact_pava(y):
    """Reference L2 isotonic regression: pool-adjacent-violators in exact rational arithmetic."""
    blocks = []  # (sum, length)
    for v in y:
        s, n = Fraction(int(v)), 1
        while blocks and blocks[-1][0] / blocks[-1][1] >= s / n:
            ps, pn = blocks.pop()
            s, n = s + ps, n + pn
        blocks.append((s, n))
    return [(s / n, n) for s, n in blocks]


def _reference_hg(y, epsilon):
    """Hg's fit by METHOD.md from the exact blocks: clip at 0, round half to even, variance 2/(|S| ε²)."""
    runs = []
    for mean, n in _exact_pava(y):
        size = max(round(mean), 0)  # Python's round of a Fraction: half to even
        variance = 2 / (n * epsilon**2)
        if mean <= 0 and runs:
            runs[-1][1] += n
            runs[-1][2] = 2 / (runs[-1][1] * epsilon**2)
        elif runs and runs[-1][0] == size and runs[-1][2] == variance:
            runs[-1][1] += n
        else:
            runs.append([size, n, variance])
    return runs


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-30, 60), max_size=40), st.sampled_from([0.1, 1.0]))
def test_hg_fit_matches_exact_pava(y, epsilon):
    y = np.sort(np.abs(np.array(y, np.int64))) + np.array(y, np.int64) % 7 - 3 if y else np.zeros(0, np.int64)
    est = fit_hg_nodes(y, np.array([0, len(y)]), groups=np.array([len(y)]), epsilon=epsilon, p=2)
    got = [[int(s), int(c), float(v)] for s, c, v in zip(est.sizes, est.counts, est.variances)]
    assert got == [[s, n, pytest.approx(v)] for s, n, v in _reference_hg(y, epsilon)]


def _scipy_hc(y: np.ndarray, groups: int, p: int) -> np.ndarray:
    """The oracle: Hc's group sizes from SciPy's bounded isotonic regression (L2) or the slope trick (L1)."""
    hc = np.append(np.rint(isotonic(y, p=p, lower=0, upper=groups)), groups).astype(np.int64)
    return np.repeat(np.arange(hc.size), np.diff(hc, prepend=0))


def _scipy_hg(y: np.ndarray, p: int) -> np.ndarray:
    return np.rint(isotonic(y, p=p, lower=0)).astype(np.int64)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-20, 40), min_size=1, max_size=30), st.integers(0, 25), st.sampled_from([1, 2]))
def test_node_and_level_fits_agree_with_the_scipy_oracle(y, groups, p):
    """One fit per method: a node's fit is the level kernel on one segment, and both give the groups of the
    isotonic regression rounded (SciPy's for L2, exact but at block means halfway between two sizes)."""
    y = np.array(y, np.int64)
    ptr = np.array([0, len(y)])
    for name, level_fit, node_fit in (("Hc", fit_hc_nodes, fit_hc), ("Hg", fit_hg_nodes, fit_hg)):
        g = groups if name == "Hc" else len(y)
        est = level_fit(y, ptr, groups=np.array([g]), epsilon=0.5, p=p)
        node = node_fit(y, groups=g, epsilon=0.5, p=p)
        for field in ("sizes", "counts", "variances"):
            np.testing.assert_array_equal(getattr(est, field), getattr(node, field))
        assert int(est.counts.sum()) == g
        got = np.repeat(est.sizes, est.counts)
        want = _scipy_hc(y, g, p) if name == "Hc" else _scipy_hg(y, p)
        if p == 1:
            np.testing.assert_array_equal(got, want)
        else:
            assert np.abs(got - want).max(initial=0) <= 1


def test_hg_streamed_in_chunks_is_the_whole_fit():
    sampler = FastSampler(seed=4)
    sizes, counts = np.array([1, 2, 3, 7, 40]), np.array([300, 250, 100, 20, 3])
    truth = np.repeat(sizes, counts)
    whole = fit_hg_nodes(sampler.draw(truth, 2.0, (1, 5, 0)), np.array([0, truth.size]), groups=None, epsilon=0.5, p=2)

    def draw(values, offset):
        return sampler.draw_level(values, np.array([0, len(values)]), 2.0, 1, 0, 5, offset, out=values)

    for chunk, threads in ((1, 1), (7, 2), (100, 3), (10_000, 2)):
        streamed = stream_hg_node(sizes, counts, draw, epsilon=0.5, chunk=chunk, threads=threads)
        for name in ("ptr", "sizes", "counts", "variances"):
            np.testing.assert_array_equal(getattr(streamed, name), getattr(whole, name))


@pytest.fixture
def three_level_tree():
    return three_levels()


@pytest.mark.parametrize("methods", [["Hg", "Hc", "Hg"], ["Hc", "Hg", "Hc"]])
@pytest.mark.parametrize("p", [None, 1, 2])
def test_batches_chunks_and_threads_never_change_a_release(monkeypatch, three_level_tree, methods, p):
    opts = dict(epsilons=[0.5, 1.0, 2.0], methods=methods, p=p, max_size=200, seed=9)
    reference = estimate(three_level_tree, workers=1, **opts).to_frame()
    monkeypatch.setattr(whole_level, "CHUNK_CELLS", 37)  # many batches, the root's Hg streamed
    monkeypatch.setattr(pipeline, "CHUNK_CELLS", 37)
    for workers in (1, 2):
        pd.testing.assert_frame_equal(estimate(three_level_tree, workers=workers, **opts).to_frame(), reference)
    plan = Plan.build(three_level_tree, **{k: v for k, v in opts.items() if k != "seed"})
    pd.testing.assert_frame_equal(post_process(plan, measure(plan, three_level_tree, seed=9)).to_frame(), reference)


def test_whole_level_measurement_is_the_node_by_node_one(three_level_tree):
    plan = Plan.build(three_level_tree, epsilons=[1, 1, 1], methods=["Hg", "Hc", "Hg"], max_size=200)
    sampler = FastSampler(seed=2)
    for level in range(3):
        measured = measure_level(plan, three_level_tree, level, sampler)
        answer = answer_node(plan, three_level_tree, level, sampler)
        for k in range(measured.n_nodes):
            np.testing.assert_array_equal(measured.node(k), answer(k))
        # And the batched fit is the per-segment fit.
        fitted = fit_level(plan, measured)
        for k in range(measured.n_nodes):
            alone = plan.level_method(level).level_fit(
                measured.node(k),
                np.array([0, measured.node(k).size]),
                groups=plan.shape.group_counts(level)[k : k + 1],
                epsilon=1.0,
                p=plan.ps[level],
            )
            lo, hi = fitted.ptr[k], fitted.ptr[k + 1]
            np.testing.assert_array_equal(fitted.sizes[lo:hi], alone.sizes)
            np.testing.assert_array_equal(fitted.counts[lo:hi], alone.counts)


def test_a_streamed_node_draws_its_chunks_in_order_from_an_unkeyed_generator():
    """With one drawing thread (the secure sampler's: one generator, no keys) the chunks are drawn in chunk
    order, each while the one before is fitted, and the estimate is the whole vector's fit of those draws."""
    sizes, counts = np.array([1, 2, 3, 7, 40]), np.array([300, 250, 100, 20, 3])
    truth = np.repeat(sizes, counts)
    for chunk in (1, 7, 100, 10_000):
        generator, offsets = np.random.default_rng(3), []

        def draw(values: np.ndarray, offset: int, generator=generator, offsets=offsets) -> np.ndarray:
            offsets.append(offset)
            return values + generator.integers(-4, 5, values.size)

        streamed = stream_hg_node(sizes, counts, draw, epsilon=0.5, chunk=chunk, threads=1)
        assert offsets == list(range(0, truth.size, chunk))
        again = np.random.default_rng(3)  # the same draws, chunk after chunk, on the whole vector
        parts = [truth[a : a + chunk] for a in offsets]
        noisy = np.concatenate([part + again.integers(-4, 5, part.size) for part in parts])
        whole = fit_hg_nodes(noisy, np.array([0, truth.size]), groups=None, epsilon=0.5, p=2)
        for name in ("ptr", "sizes", "counts", "variances"):
            np.testing.assert_array_equal(getattr(streamed, name), getattr(whole, name))
