"""The accuracy frame computed a level at a time equals the node-by-node frames, on bundled data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cocoviz
from cocoviz import Plan, measure, post_process
from cocoviz.accuracy.intervals import level_frame
from cocoviz.accuracy.intervals.level_frame import segment_rows
from cocoviz.accuracy.intervals.scope import accuracy_frame
from tests.support.intervals import node_by_node_frame


def _release(name: str, methods: list[str], seed: int, zcdp: bool = False):
    tree = cocoviz.load_dataset(name)
    depth = tree.depth + 1
    budget = {"rhos": [0.5] * depth} if zcdp else {"epsilons": [1.0] * depth}
    plan = Plan.build(tree, **budget, methods=methods[-depth:], max_size=max(int(tree.max_size), 1))
    measurements = measure(plan, tree, seed=seed)
    return post_process(plan, measurements), measurements


@pytest.mark.parametrize(
    "name, methods, zcdp",
    [
        ("toy", ["Hc", "Hg", "Hg"], False),
        ("taxi", ["Hg", "Hc", "Hg"], False),
        ("taxi", ["Hc", "Hg", "Hc"], True),
        ("taxi", ["naive", "Hcp", "Hc"], False),
    ],
)
@pytest.mark.parametrize("scope", ["node", "level"])
def test_level_at_once_equals_node_by_node(name, methods, zcdp, scope):
    release, measurements = _release(name, methods, seed=3, zcdp=zcdp)
    for given in (None, measurements):
        fast = accuracy_frame(release, confidence=0.85, scope=scope, measurements=given)
        slow = node_by_node_frame(release, confidence=0.85, scope=scope, measurements=given)
        assert len(fast) > 0
        pd.testing.assert_frame_equal(fast, slow, check_like=False)


def test_small_chunks_and_overflow_fallbacks_change_nothing(monkeypatch):
    release, measurements = _release("taxi", ["Hg", "Hc", "Hg"], seed=4)
    slow = node_by_node_frame(release, measurements=measurements)
    monkeypatch.setattr(level_frame, "CHUNK_CELLS", 7)  # many chunks
    pd.testing.assert_frame_equal(accuracy_frame(release, measurements=measurements), slow)
    monkeypatch.setattr(level_frame, "_LIMIT", 4)  # every segmented trick falls back to the per-segment loops
    pd.testing.assert_frame_equal(accuracy_frame(release, measurements=measurements), slow)


def test_segments_do_not_leak_into_each_other():
    """Nodes laid end to end give each node's own band_frame rows: running bounds and sums start afresh."""
    from cocoviz.accuracy.intervals.derived import band_frame
    from tests.support.intervals import stretches

    nodes = [
        (np.array([5, 9]), np.array([6, 9]), np.array([1]), np.array([9])),
        (np.array([0, 1, 1]), np.array([1, 1, 1]), np.array([0, 2]), np.array([1, 3])),
        (np.array([2]), np.array([2]), np.array([0, 4]), np.array([1, 1])),
    ]
    rows = segment_rows(*zip(*nodes))
    for k, node in enumerate(nodes):
        expected = stretches(band_frame(*node)[0])
        for column, values in expected.items():
            assert rows[column][rows["segment"] == k].tolist() == values.tolist(), (k, column)


@pytest.mark.parametrize("method", ["Hc", "Hg"])
def test_level_bounds_equal_node_bounds_with_empty_nodes_and_widenings(method):
    from cocoviz.accuracy.intervals.bands import LevelBands, Widths, cumulative_bounds, level_cumulative_bounds

    rng = np.random.default_rng(9 if method == "Hc" else 10)
    cells = rng.integers(0, 12, 40)
    cells[[0, 7, 39]] = 0
    ptr = np.concatenate([[0], np.cumsum(cells)])
    truth = [np.sort(rng.integers(0, 30, c)) for c in cells]
    values = np.concatenate([t + rng.integers(-4, 5, t.size) for t in truth]) if ptr[-1] else np.zeros(0, np.int64)
    bands = LevelBands.of(method, values.astype(np.int64), ptr)
    widths = [
        Widths(int(c), int(rng.integers(0, 3)), int(rng.integers(0, c + 1)), int(rng.integers(0, c + 1))) for c in cells
    ]
    groups = np.array([max(int(c), 1) * 3 for c in cells])
    whole = level_cumulative_bounds(bands, widths, groups)
    parts = level_cumulative_bounds(bands.nodes(5, 20), widths[5:20], groups[5:20])
    for k in range(len(cells)):
        low, high = cumulative_bounds(bands, k, groups=int(groups[k]), a=widths[k])
        assert whole[k][0].tolist() == low.tolist() and whole[k][1].tolist() == high.tolist(), k
        if 5 <= k < 20:
            assert parts[k - 5][0].tolist() == low.tolist() and parts[k - 5][1].tolist() == high.tolist(), k
