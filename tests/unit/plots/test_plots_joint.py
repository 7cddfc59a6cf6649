"""The size × tenure figures (cocoviz.plots.joint): they draw the numbers they are given."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.plots.joint import ERROR_NAMES, joint_errors_figure, joint_table_figure, prior_comparison_figure


def test_joint_table_figure_without_truth_draws_only_the_release():
    fig = joint_table_figure(np.array([[3, 1], [2, 2]]), None, ["1", "2+"])
    assert [t.name for t in fig.data] == ["private", "private"]
    assert list(fig.data[0].y) == [3, 2] and list(fig.data[1].y) == [1, 2]


def test_error_and_comparison_figures_carry_their_values():
    errors = pd.DataFrame({"config": ["a", "b"], "joint_l1": [0.1, 0.05], "size_l1": [0.02, 0.02], "tenure_l1": [0, 0]})
    fig = joint_errors_figure(errors)
    assert [t.name for t in fig.data] == ["a", "b"] and list(fig.data[1].y) == [0.05, 0.02, 0]
    assert list(fig.data[0].x) == list(ERROR_NAMES.values())
    summary = pd.DataFrame({"level": [0, 1, 0, 1], "config": ["a", "a", "b", "b"], "joint_l1": [0.1, 0.2, 0.01, 0.3]})
    fig = prior_comparison_figure(summary, ["root", "county"])
    assert list(fig.data[1].x) == ["root", "county"] and list(fig.data[1].y) == [0.01, 0.3]


def test_joint_table_figure_draws_every_size_class_as_a_category():
    # "≤1" and "7+" are not numbers: on a numeric axis plotly drops them without a word (issue 25, item 1).
    labels = ["≤1", "2", "3", "4", "5", "6", "7+"]
    table = np.arange(14).reshape(7, 2)
    fig = joint_table_figure(table, table, labels)
    for axis in (fig.layout.xaxis, fig.layout.xaxis2):
        assert axis.type == "category"
        assert list(axis.categoryarray) == labels
    assert all(list(trace.x) == labels for trace in fig.data)
