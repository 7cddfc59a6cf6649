"""cocoviz.plots.summaries: per-level quantiles against numpy per level, released totals against the release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cocoviz
from cocoviz.datasets import load_dataset
from cocoviz.errors import ParameterError
from cocoviz.plots.summaries import QUANTILES, level_quantiles, node_figures, spread_figure


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(-50, 50)), min_size=1, max_size=60))
def test_level_quantiles_match_numpy_per_level(rows):
    frame = pd.DataFrame(rows, columns=["level", "emd"]).assign(half=lambda f: f["emd"] / 2)
    table = level_quantiles(frame, ["emd", "half"])
    levels = sorted(frame["level"].unique())
    assert table[["level", "measure"]].values.tolist() == [[k, m] for k in levels for m in ("emd", "half")]
    for row in table.itertuples():
        values = frame.loc[frame["level"] == row.level, row.measure].to_numpy(np.float64)
        assert row.nodes == len(values) and row.mean == pytest.approx(values.mean())
        expected = np.quantile(values, list(QUANTILES.values()))
        assert [getattr(row, name) for name in QUANTILES] == pytest.approx(expected.tolist())


def test_non_finite_values_are_left_out_and_a_missing_column_is_named():
    frame = pd.DataFrame({"level": [1, 1, 1], "ratio": [1.0, np.inf, np.nan]})
    row = level_quantiles(frame, ["ratio"]).iloc[0]
    assert row["nodes"] == 1 and row["max"] == 1.0
    with pytest.raises(ParameterError, match="'emd'"):
        level_quantiles(frame, ["emd"])


def test_node_figures_add_each_nodes_released_persons():
    tree = load_dataset("taxi")
    release = cocoviz.estimate(tree, epsilons=[1, 1, 1], methods=["Hg"] * 3, seed=0)
    figures = node_figures(cocoviz.evaluate(tree, release), release)
    expected = [release.persons(p) for level in range(tree.depth + 1) for p in tree.nodes(level)]
    assert figures["persons"].tolist() == expected
    with pytest.raises(ParameterError, match="rows"):
        node_figures(cocoviz.evaluate(tree, release).iloc[:-1], release)


@pytest.mark.parametrize("log_y", [False, True])
def test_spread_figure_draws_one_box_per_level_from_the_quantiles_alone(log_y):
    many = pd.DataFrame({"level": np.repeat([0, 1, 2], [1, 10, 100_000]), "emd": np.arange(100_011) % 97})
    fig = spread_figure(level_quantiles(many, ["emd"]), "emd", level_names=["nation", "state", "block"], log_y=log_y)
    (box,) = fig.data
    assert list(box.x) == ["nation", "state", "block"] and list(box.upperfence) == [0.0, 10.0, 96.0]
    assert list(box.median) == [0.0, 5.5, 48.0]
    lower = list(box.lowerfence)
    # On a log axis a whisker stops at the smallest positive quantile (p10 = 9 for the blocks); the root has none.
    np.testing.assert_array_equal(lower, [np.nan, 1.0, 9.0] if log_y else [0.0, 1.0, 0.0])


def test_error_against_error_draws_a_level_beyond_max_points_as_its_percentiles():
    from cocoviz.plots.compare import error_against_error_figure

    frame = pd.DataFrame({"level": [0] + [1] * 200, "node": ["(root)"] + [f"n{k}" for k in range(200)]})
    frame["emd_a"], frame["emd_b"] = np.r_[7, np.arange(200)], np.r_[3, 2 * np.arange(200)]
    per_node = error_against_error_figure(frame)
    summed = error_against_error_figure(frame, max_points=100)
    assert [len(t.x) for t in per_node.data] == [1, 200, 2]
    assert [t.name for t in summed.data] == ["level 0", "level 1: percentiles of 200 nodes", "same error"]
    x, y = summed.data[1].x, summed.data[1].y
    assert len(x) == 101 and x[-1] == 199 and y[-1] == 398 and y[50] == 2 * x[50]
