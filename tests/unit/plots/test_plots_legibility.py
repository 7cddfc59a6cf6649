"""Legibility of the dashboard's figures: overlaid bars that both read, markers and bars inside the axes,
labelled log ticks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.plots.histograms import histogram_figure
from cocoviz.plots.joint import joint_table_figure
from cocoviz.plots.levels import level_error_figure, padded_range


def test_overlaid_bars_differ_in_width_opacity_and_outline():
    fig = histogram_figure([3, 5, 2], [4, 4, 1])
    true, private = fig.data
    assert true.marker.color != private.marker.color
    assert true.width > private.width  # the private bars sit inside the true ones
    assert true.opacity != private.opacity
    assert true.marker.line.width and true.marker.line.color == true.marker.color


def test_side_by_side_bars_keep_their_full_width():
    fig = histogram_figure([3, 5, 2], [4, 4, 1], layout="side")
    assert all(t.width is None for t in fig.data)


def _levels(mean, omni):
    return pd.DataFrame({"level": range(len(mean)), "nodes": 1, "mean_emd": mean, "max_emd": mean, "omniscient": omni})


def test_level_errors_axis_leaves_room_around_every_marker():
    frame = _levels([12.0, 340.0, 5000.0], [2.0, 20.0, 200.0])
    for log_y in (True, False):
        fig = level_error_figure(frame, log_y=log_y)
        lo, hi = fig.layout.yaxis.range
        values = np.r_[frame["mean_emd"], frame["omniscient"]]
        drawn = np.log10(values) if log_y else values
        assert lo < drawn.min() or (not log_y and lo == 0)
        assert hi > drawn.max() + 0.05 * (drawn.max() - min(drawn.min(), lo))


def test_padded_range_ignores_what_a_log_axis_cannot_draw():
    assert padded_range([0.0, -1.0], log=True) is None
    assert padded_range([0.0, 10.0, 100.0], log=True) == [0.88, 2.12]


def test_joint_table_log_axis_has_plain_labels_and_room_above_the_bars():
    est = np.array([[12000, 40], [300, 2], [5, 0]])
    truth = np.array([[11900, 45], [310, 1], [4, 1]])
    fig = joint_table_figure(est, truth, ["1", "2", "3+"])
    assert fig.layout.yaxis.type == "log"
    assert list(fig.layout.yaxis.ticktext) == ["1", "10", "100", "1,000", "10,000"]
    assert fig.layout.yaxis.range[1] > np.log10(12000)


def test_joint_table_linear_axis_is_padded_and_compact():
    fig = joint_table_figure(np.array([[30, 10], [20, 25]]), None, ["1", "2+"])
    assert fig.layout.yaxis.type in (None, "linear", "-")
    assert fig.layout.yaxis.range[1] > 30
    assert fig.layout.bargap <= 0.2 and fig.layout.height
