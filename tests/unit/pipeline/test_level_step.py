"""The one per-level step: fused, it is measure then fit on the same batches, bit for bit, in bounded memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from cocoviz.hierarchy import Hierarchy
from cocoviz.measure.measurements import choose_bounds, measure, measure_level, open_sampler
from cocoviz.methods import whole_level as whole_level
from cocoviz.pipeline import level_step as level_step
from cocoviz.pipeline.level_step import estimate_level
from cocoviz.plan import Plan
from cocoviz.release.post_process import fit_level


@pytest.fixture(scope="module")
def tree() -> Hierarchy:
    rng = np.random.default_rng(26)
    n = 2500
    groups = pd.DataFrame(
        {
            "state": rng.choice(list("abc"), n),
            "county": rng.choice([f"c{k}" for k in range(12)], n),
            "size": np.minimum(rng.geometric(0.35, n), 30),
        }
    )
    return Hierarchy.from_groups(groups, size="size", levels=["state", "county"])


def assert_same(a, b):
    for name in ("ptr", "sizes", "counts", "variances"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


METHOD_PLANS = [
    dict(methods=["Hg", "Hc", "Hg"], max_size=40),
    dict(methods=["Hc", "Hg", "Hc"], p=2, max_size=40),
    dict(methods=["naive", "Hcp", "naive"], max_size=40),
    dict(methods=["Hc", "Hcp", "Hcp"], max_size=40, prior="parent"),
    dict(methods=["Hc", "Hc", "Hc"], max_size=40, k_select="noisy-max-per-node", k_epsilon=0.5),
]


@pytest.mark.parametrize("opts", METHOD_PLANS, ids=lambda o: "/".join(o["methods"]) + "," + o.get("k_select", ""))
@pytest.mark.parametrize("chunk", [None, 50])
def test_the_fused_step_is_measure_then_fit(monkeypatch, tree, opts, chunk):
    """Every method, every level, any batch size and threads: the fused step's estimates are fit_level's of
    measure_level's answers (the parent level's raw estimates standing in for the parent prior's)."""
    if chunk is not None:
        monkeypatch.setattr(whole_level, "CHUNK_CELLS", chunk)  # many batches; the root's Hg streamed
    plan = Plan.build(tree, epsilons=[0.5, 1.0, 2.0], **opts)
    sampler = open_sampler(4)
    bounds = choose_bounds(plan, tree, sampler)
    parent = None
    for level in plan.measured_levels():
        two_steps = fit_level(plan, measure_level(plan, tree, level, sampler, 1, bounds[level]), 1, parent)
        for workers in (1, 2):
            assert_same(estimate_level(plan, tree, level, sampler, bounds[level], workers, parent=parent), two_steps)
        parent = two_steps


@pytest.mark.parametrize("methods", [["Hg", "Hg", "Hc"], ["Hc", "naive", "Hcp"]])
def test_a_range_of_nodes_is_the_slice_of_the_whole_level(monkeypatch, tree, methods):
    """What a Dask subtree computes: nodes lo..hi-1 alone are those nodes of the whole level."""
    monkeypatch.setattr(whole_level, "CHUNK_CELLS", 100)
    plan = Plan.build(tree, epsilons=[1.0] * 3, methods=methods, max_size=40)
    sampler = open_sampler(5)
    for level in (1, 2):
        whole = estimate_level(plan, tree, level, sampler, None)
        n = len(plan.shape.paths[level])
        for lo, hi in ((0, n), (1, n // 2), (n // 2, n), (n - 1, n)):
            part = estimate_level(plan, tree, level, sampler, None, nodes=(lo, hi))
            a, b = whole.ptr[lo], whole.ptr[hi]
            np.testing.assert_array_equal(part.ptr, whole.ptr[lo : hi + 1] - a)
            np.testing.assert_array_equal(part.sizes, whole.sizes[a:b])
            np.testing.assert_array_equal(part.counts, whole.counts[a:b])


def test_a_batch_holds_at_most_chunk_cells(monkeypatch, tree):
    """Each batch measured by the fused step is at most CHUNK_CELLS cells, or a single node."""
    monkeypatch.setattr(whole_level, "CHUNK_CELLS", 200)
    seen = []
    real = level_step.measure_nodes

    def recording(plan, tree, level, sampler, lo, hi, *args):
        noisy, ptr = real(plan, tree, level, sampler, lo, hi, *args)
        seen.append((level, hi - lo, noisy.size))
        return noisy, ptr

    monkeypatch.setattr(level_step, "measure_nodes", recording)
    plan = Plan.build(tree, epsilons=[1.0] * 3, methods=["Hg", "Hg", "Hc"], p=1, max_size=40)  # p = 1: not streamed
    sampler = open_sampler(6)
    for level in (1, 2):
        estimate_level(plan, tree, level, sampler, None)
    assert {level for level, _, _ in seen} == {1, 2} and max(nodes for _, nodes, _ in seen) == 5
    assert all(cells <= 200 or nodes == 1 for _, nodes, cells in seen)
    assert sum(nodes for _, nodes, _ in seen) == sum(len(plan.shape.paths[level]) for level in (1, 2))


def test_a_level_of_many_nodes_streams_in_bounded_memory(monkeypatch):
    """8,000 leaves of K = 500 cells: measure() holds all 4M noisy answers (32 MB); the fused step a batch
    at a time, so its peak is a small part of that."""
    rng = np.random.default_rng(1)
    leaves = 8000
    frame = pd.DataFrame({"leaf": np.arange(leaves).astype(str), "size": rng.integers(1, 9, leaves), "count": 3})
    tree = Hierarchy.from_counts(frame, size="size", count="count", levels=["leaf"])
    plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=500)
    sampler = open_sampler(7)
    monkeypatch.setattr(whole_level, "CHUNK_CELLS", 1 << 16)  # 512 KB of noisy answers per batch
    estimate_level(plan, tree, 1, sampler, None, workers=1)  # compiled before measuring

    def peak(fn) -> int:
        tracemalloc.start()
        try:
            fn()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    held = leaves * 500 * 8
    assert peak(lambda: measure_level(plan, tree, 1, sampler, workers=1)) >= held
    assert peak(lambda: estimate_level(plan, tree, 1, sampler, None, workers=1)) < held / 8
    # And the release is measure's, seed for seed.
    m = measure(plan, tree, seed=3)
    assert_same(estimate_level(plan, tree, 1, open_sampler(3), None), fit_level(plan, m.levels[1]))


class _Unkeyed:
    """A stand-in for the secure sampler: one stateful generator, no keys (so draws depend on their order).
    Seeded for the test only; it records the first cell's value of every draw, in order."""

    secure = True

    def __init__(self, seed: int):
        self.rng, self.calls = np.random.default_rng(seed), []

    def draw(self, values, scale, key=()):
        values = np.asarray(values, np.int64)
        self.calls.append((values.size, int(values[0]) if values.size else None))
        return values + self.rng.integers(-3, 4, values.size)


@pytest.mark.parametrize("opts", METHOD_PLANS[:2], ids=lambda o: "/".join(o["methods"]))
@pytest.mark.parametrize("chunk", [None, 50, 200])
def test_a_secure_level_is_drawn_in_order_while_the_batch_before_is_fitted(monkeypatch, tree, opts, chunk):
    """Drawing batch i while batch i-1 is fitted on a second thread draws the same cells in the same order
    and gives the estimates and bands of batch after batch on one thread (``workers=1``)."""
    if chunk is not None:
        monkeypatch.setattr(whole_level, "CHUNK_CELLS", chunk)
    plan = Plan.build(tree, epsilons=[0.5, 1.0, 2.0], **opts)
    for level in plan.measured_levels():
        serial, overlapped = _Unkeyed(9), _Unkeyed(9)
        bands_serial, bands_overlapped = [], []
        one = estimate_level(plan, tree, level, serial, None, 1, bands_out=bands_serial)
        two = estimate_level(plan, tree, level, overlapped, None, None, bands_out=bands_overlapped)
        assert overlapped.calls == serial.calls and len(serial.calls) >= 1
        assert_same(two, one)
        assert (bands_serial[0] is None) == (bands_overlapped[0] is None)
        if bands_serial[0] is not None:
            for name in vars(bands_serial[0]):
                np.testing.assert_array_equal(getattr(bands_overlapped[0], name), getattr(bands_serial[0], name))
