"""select_mix's regret experiment: equal totals, paired arms, the summary's arithmetic."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cocoviz.experiments.selection import candidate_mixes, run_selection, summarize_selection
from cocoviz.hierarchy import Hierarchy


@pytest.fixture(scope="module")
def tree():
    rng = np.random.default_rng(0)
    regions = np.repeat(list("abcd"), 50)
    return Hierarchy.from_groups(
        pd.DataFrame({"region": regions, "size": rng.integers(0, 12, regions.size)}), size="size", levels=["region"]
    )


def test_candidates_are_hg_above_hc():
    assert candidate_mixes(2) == [("Hc", "Hc"), ("Hg", "Hc"), ("Hg", "Hg")]


def test_every_arm_spends_the_same_total_and_the_summary_follows_the_rows(tree):
    frame = run_selection(tree, totals=[2.0], trials=2, dataset="tiny")
    assert len(frame) == 2 * (3 + 1)
    assert np.allclose(frame["spent"], 2.0)  # the selection's own ε counted in the select arm's total
    summary = summarize_selection(frame).iloc[0]
    fixed = frame[frame["arm"] == "fixed"].groupby("mix")["emd"].mean()
    chosen = frame[frame["arm"] == "select"]
    assert summary["best in hindsight"] == fixed.idxmin()
    assert summary["regret"] == pytest.approx(chosen["emd"].mean() / fixed.min())
    assert summary["select_mix"] == chosen["emd"].mean() and summary["trials"] == 2
    assert set(chosen["mix"]) <= {"".join(m) for m in candidate_mixes(2)}


def test_runs_are_seeded(tree):
    a = run_selection(tree, totals=[1.0], trials=1, seed=3).drop(columns="seconds")
    b = run_selection(tree, totals=[1.0], trials=1, seed=3).drop(columns="seconds")
    pd.testing.assert_frame_equal(a, b)
