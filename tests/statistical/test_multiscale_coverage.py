"""Seeded Monte Carlo coverage of the multiscale Hg band: per node, and every node of a level at once.

The guarantee is a lower bound (a union bound over the scales), so coverage must be at least the stated
confidence, less four binomial standard errors; it is not expected to equal it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cocoviz.accuracy.intervals.multiscale import multiscale_rank_bounds, multiscale_widths
from cocoviz.accuracy.intervals.scope import node_confidence
from cocoviz.datasets import load_dataset
from cocoviz.privacy.noise import FastSampler, GaussianNoise

pytestmark = [pytest.mark.statistical, pytest.mark.slow]


def _at_least(rate: float, p: float, trials: int) -> bool:
    return rate >= p - 4 * math.sqrt(p * (1 - p) / trials)


@pytest.mark.parametrize("noise", [1.0, 0.25, GaussianNoise(1.0)])
@pytest.mark.parametrize("grain", [1, 16])
def test_a_node_with_runs_is_covered_at_the_stated_confidence(noise, grain):
    trials = 1500
    t = np.repeat([0, 1, 2, 3, 4, 6, 9, 40], [2000, 900, 500, 300, 120, 60, 10, 1]).astype(np.int64)
    widths = multiscale_widths(noise, t.size, 0.9, grain=grain)
    hits = 0
    for trial in range(trials):
        y = FastSampler(seed=(38, 1, trial)).draw_level(t.copy(), np.array([0, t.size]), noise, 0)
        low, high = multiscale_rank_bounds(y, widths)
        hits += bool((low <= t).all() and (t <= high).all())
    assert widths.guarantee >= 0.9 and _at_least(hits / trials, 0.9, trials)


def test_every_node_of_a_level_at_once():
    trials = 300
    runs = load_dataset("taxi").runs(2)
    truths = [np.repeat(*runs.node(k)).astype(np.int64) for k in range(runs.n_nodes)]
    ptr = np.concatenate([[0], np.cumsum([t.size for t in truths])])
    c_node = node_confidence(0.9, "level", runs.n_nodes)
    widths = [multiscale_widths(1.0, t.size, c_node) for t in truths]
    truth = np.concatenate(truths)
    together = 0
    for trial in range(trials):
        noisy = FastSampler(seed=(38, 2, trial)).draw_level(truth.copy(), ptr, 1.0, 2)
        ok = True
        for k, (t, w) in enumerate(zip(truths, widths)):
            low, high = multiscale_rank_bounds(noisy[ptr[k] : ptr[k + 1]], w)
            ok &= bool((low <= t).all() and (t <= high).all())
        together += ok
    assert _at_least(together / trials, 0.9, trials)
