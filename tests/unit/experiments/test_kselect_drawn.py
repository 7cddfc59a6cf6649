"""E1's rows for Wu's private thresholds taken as K: budgets at an equal total, ε_K counted."""

import numpy as np
import pandas as pd
import pytest

from cocoviz.experiments.kselect import DRAWN_K, K_CHOICES, run_kselect, summarize_kselect
from cocoviz.hierarchy import Hierarchy


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(2)
    sizes = np.concatenate([rng.integers(1, 6, 300), [60, 90]])
    tree = Hierarchy.from_groups(
        pd.DataFrame({"region": np.repeat(list("ab"), sizes.size // 2), "size": sizes}), size="size", levels=["region"]
    )
    return run_kselect(tree, epsilons=[1.0], trials=2, seed=0, ceiling=500, shares=(0.1,))


def test_drawn_choices_have_their_rows_and_budgets(frame):
    assert set(frame["k_choice"]) == set(K_CHOICES)
    for choice in DRAWN_K:
        rows = frame[frame["k_choice"] == choice]
        assert set(rows["budget"]) == {"on top", "equal total, ε_K = 10% of ε"}
        on_top = rows[rows["budget"] == "on top"]
        equal = rows[rows["budget"] != "on top"]
        assert np.allclose(on_top["total_epsilon"], 1.0 + on_top["k_epsilon"])
        assert np.allclose(equal["total_epsilon"], 1.0) and np.allclose(equal["k_epsilon"], 0.1)
        assert (rows["K"] >= 1).all() and (rows["K"] <= 500).all()
    # Wu's thresholds sit far below the largest group here: the persons they cut are counted against the truth
    assert (frame.loc[frame["k_choice"] == "trunc-svt", "truncation"] > 0).all()
    assert (frame.loc[frame["k_choice"] == "public", "truncation"] == 0).all()


def test_drawn_k_is_paired_and_summarised(frame):
    again = run_kselect(
        Hierarchy.from_groups(pd.DataFrame({"size": [1, 2, 3]}), size="size", levels=[]),
        epsilons=[1.0],
        trials=1,
        seed=0,
        ceiling=50,
        shares=(),
    )
    assert set(again["k_choice"]) == set(K_CHOICES)
    summary = summarize_kselect(frame)
    assert set(summary["k_choice"]) == set(K_CHOICES) and summary["emd_vs_public"].notna().all()
