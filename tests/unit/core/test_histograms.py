"""The three representations H, Hc, Hg and the sparse (size, count) runs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz.core.histograms import cumulative, from_cumulative, from_ranked, from_runs, pad, ranked, to_runs

# The slides: two groups of size 1, one of size 2, one of size 4.
ROOT_H = [0, 2, 1, 0, 1]
ROOT_HC = [0, 2, 3, 3, 4]
ROOT_HG = [1, 1, 2, 4]
# Region a: groups of size 1 (Judy) and 4 (Alice, Bob, Carol, Dave).
A_H = [0, 1, 0, 0, 1]
A_HC = [0, 1, 1, 1, 2]
A_HG = [1, 4]

histograms = st.lists(st.integers(0, 6), min_size=1, max_size=12).map(lambda x: np.array(x, np.int64))


@pytest.mark.parametrize("h, hc, hg", [(ROOT_H, ROOT_HC, ROOT_HG), (A_H, A_HC, A_HG)])
def test_slides_representations(h, hc, hg):
    np.testing.assert_array_equal(cumulative(h), hc)
    np.testing.assert_array_equal(ranked(h), hg)
    np.testing.assert_array_equal(from_cumulative(np.array(hc)), h)
    np.testing.assert_array_equal(from_ranked(np.array(hg)), np.trim_zeros(np.array(h), "b"))
    np.testing.assert_array_equal(from_ranked(np.array(hg), length=len(h)), h)
    sizes, counts = to_runs(np.array(h))
    np.testing.assert_array_equal(sizes, np.unique(hg))
    np.testing.assert_array_equal(counts, [hg.count(s) for s in np.unique(hg)])
    np.testing.assert_array_equal(from_runs(sizes, counts), h)


def test_from_ranked_any_order_and_size_zero():
    np.testing.assert_array_equal(from_ranked(np.array([4, 0, 1, 0])), [2, 1, 0, 0, 1])
    np.testing.assert_array_equal(from_ranked(np.array([], np.int64), length=3), [0, 0, 0])
    with pytest.raises(ValueError, match="non-negative"):
        from_ranked(np.array([1, -1]))


def test_from_runs_adds_repeated_sizes_and_pads():
    np.testing.assert_array_equal(from_runs(np.array([2, 0, 2]), np.array([1, 3, 4])), [3, 0, 5])
    np.testing.assert_array_equal(from_runs(np.array([1]), np.array([2]), length=4), [0, 2, 0, 0])
    np.testing.assert_array_equal(from_runs(np.array([], np.int64), np.array([], np.int64)), [0])


def test_pad():
    np.testing.assert_array_equal(pad(np.array([1, 2]), 4), [1, 2, 0, 0])
    np.testing.assert_array_equal(pad(np.array([1, 2, 3]), 2), [1, 2, 3])  # never truncates


@settings(max_examples=100)
@given(histograms)
def test_round_trips(h):
    hc = cumulative(h)
    hg = ranked(h)
    assert hc[-1] == h.sum() == len(hg)
    assert np.all(np.diff(hc) >= 0)
    assert np.all(np.diff(hg) >= 0)
    # Hg lists each size j exactly H[j] times.
    for j, c in enumerate(h):
        assert np.count_nonzero(hg == j) == c
    np.testing.assert_array_equal(from_cumulative(hc), h)
    np.testing.assert_array_equal(from_ranked(hg, length=len(h)), h)
    np.testing.assert_array_equal(from_runs(*to_runs(h), length=len(h)), h)
    # Hc[j] counts the entries of Hg that are at most j.
    np.testing.assert_array_equal(hc, [np.count_nonzero(hg <= j) for j in range(len(h))])


def test_inputs_not_mutated():
    h = np.array(ROOT_H)
    for f in (cumulative, ranked, to_runs, lambda x: pad(x, 9), from_cumulative):
        f(h)
        np.testing.assert_array_equal(h, ROOT_H)
