"""Earthmover's distance in its three forms, error by size, the omniscient yardstick."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import emd, error_by_size, omniscient_emd
from cocoviz.core.histograms import cumulative, from_ranked, ranked, to_runs
from cocoviz.evaluate.metrics import emd_level, emd_runs
from cocoviz.hierarchy import LevelRuns


def test_slides_emd_example():
    # The slides' H (sizes 1, 1, 2, 4) against an estimate with sizes 1, 2, 2, 3:
    # one person added to a size-1 group and one removed from the size-4 group.
    h = np.array([0, 2, 1, 0, 1])
    hg, hg_hat = np.array([1, 1, 2, 4]), np.array([1, 2, 2, 3])
    h_hat = from_ranked(hg_hat)
    np.testing.assert_array_equal(h_hat, [0, 1, 2, 1])
    # Hc = [0, 2, 3, 3, 4] vs Ĥc = [0, 1, 3, 4, 4]: differences 0, 1, 0, 1, 0.
    np.testing.assert_array_equal(cumulative(h), [0, 2, 3, 3, 4])
    np.testing.assert_array_equal(cumulative(np.append(h_hat, 0)), [0, 1, 3, 4, 4])
    hc_l1 = 0 + 1 + 0 + 1 + 0
    hg_l1 = 0 + 1 + 0 + 1
    assert hc_l1 == hg_l1 == 2
    assert emd(h, h_hat) == 2
    assert emd(h_hat, h) == 2
    assert np.abs(hg - hg_hat).sum() == 2
    assert emd_runs(*to_runs(h), *to_runs(h_hat)) == 2
    np.testing.assert_array_equal(error_by_size(h, h_hat), [0, 1, 0, 1, 0])


def test_emd_counts_persons_moved():
    assert emd([0, 1], [0, 1]) == 0
    assert emd([0, 1], [0, 0, 1]) == 1  # one person added to the group
    assert emd([3], [0, 0, 0, 1, 2]) == 3 + 2 * 4  # persons needed to fill empty groups
    assert emd([0, 0, 5], [0, 0, 5, 0, 0]) == 0  # trailing empty sizes do not matter


def equal_g_pairs(max_groups=12, max_size=8):
    """Two histograms with the same number of groups, as Hg arrays."""
    return st.integers(1, max_groups).flatmap(
        lambda g: st.tuples(
            st.lists(st.integers(0, max_size), min_size=g, max_size=g),
            st.lists(st.integers(0, max_size), min_size=g, max_size=g),
        )
    )


@settings(max_examples=150)
@given(equal_g_pairs())
def test_emd_forms_agree(pair):
    a, b = (np.sort(np.array(x, np.int64)) for x in pair)
    h1, h2 = from_ranked(a), from_ranked(b)
    expected = int(np.abs(a - b).sum())  # Hg-L1, valid for equal G
    assert emd(h1, h2) == expected
    assert emd(h2, h1) == expected
    assert emd_runs(*to_runs(h1), *to_runs(h2)) == expected
    assert error_by_size(h1, h2).sum() == expected
    assert (emd(h1, h2) == 0) == np.array_equal(a, b)
    np.testing.assert_array_equal(ranked(h1), a)


@settings(max_examples=100)
@given(
    st.integers(1, 10).flatmap(
        lambda g: st.lists(st.lists(st.integers(0, 8), min_size=g, max_size=g), min_size=3, max_size=3)
    )
)
def test_emd_is_a_metric(triple):
    a, b, c = (from_ranked(np.array(x)) for x in triple)
    assert emd(a, c) <= emd(a, b) + emd(b, c)
    assert emd(a, b) == emd(b, a) >= 0


def _level(hgs):
    """LevelRuns of one node per ranked histogram in ``hgs``."""
    runs = [to_runs(from_ranked(np.array(x))) for x in hgs]
    ptr = np.cumsum([0] + [len(s) for s, _ in runs])
    return LevelRuns(ptr, np.concatenate([s for s, _ in runs]), np.concatenate([c for _, c in runs]))


@settings(max_examples=60)
@given(st.lists(equal_g_pairs(max_groups=6), min_size=1, max_size=5))
def test_emd_level_is_emd_per_node(pairs):
    got = emd_level(_level([p[0] for p in pairs]), _level([p[1] for p in pairs]))
    want = [emd(from_ranked(np.array(x)), from_ranked(np.array(y))) for x, y in pairs]
    np.testing.assert_array_equal(got, want)


@settings(max_examples=60)
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(0, 8), min_size=1, max_size=6), st.lists(st.integers(0, 8), min_size=1, max_size=6)
        ),
        min_size=2,
        max_size=5,
    )
)
def test_emd_level_restarts_at_every_node(pairs):
    # Unequal G inside a node: the running difference does not return to 0 at its end,
    # so a node's emd must not leak into the next one.  (Hg arrays have no trailing empty
    # sizes, so the sparse and dense forms agree on the common length.)
    got = emd_level(_level([p[0] for p in pairs]), _level([p[1] for p in pairs]))
    want = [emd(from_ranked(np.array(x)), from_ranked(np.array(y))) for x, y in pairs]
    np.testing.assert_array_equal(got, want)


def test_omniscient_emd():
    assert omniscient_emd(100, 0.5) == pytest.approx(200.0)
    np.testing.assert_allclose(omniscient_emd(np.array([10, 30]), 2.0), [5.0, 15.0])


def test_omniscient_emd_matches_laplace_simulation():
    # Laplace(1/ε) on the count of each of the D existing sizes; the error measure is the total
    # absolute error of those counts, Σ_d |noise_d|, whose expectation is D/ε.
    rng = np.random.default_rng(7)
    distinct, epsilon = 50, 0.5
    sims = np.abs(rng.laplace(0, 1 / epsilon, size=(4000, distinct))).sum(axis=1)
    assert sims.mean() == pytest.approx(omniscient_emd(distinct, epsilon), rel=0.02)
