"""Plotly figures of the dashboard: every chart is built here, from plain arrays and frames.

No Streamlit here: each builder takes numbers (numpy arrays, pandas frames,
dicts) and returns a :class:`plotly.graph_objects.Figure`, so the figures can
be tested on their data without a browser and reused in notebooks.

Colours: a few mid-tone colours that read on light and dark backgrounds;
no template is set, so Streamlit's theme (``theme="streamlit"``) or
plotly's default applies.  Long histograms are drawn sparsely: H as markers
at the sizes that hold groups, Hc as a step line through its change points
(exact for a piecewise-constant function), so K = 100,000 stays cheap.

>>> import numpy as np
>>> fig = histogram_figure(np.array([0, 2, 1, 0, 1]), np.array([0, 1, 2, 1]))
>>> [t.name for t in fig.data]
['true', 'private']
"""

from cocoviz.plots.histograms import (
    consistency_figure,
    error_by_size_figure,
    histogram_figure,
    prefix_sums_figure,
    representations_figure,
)
from cocoviz.plots.intervals import (
    STATED_ERROR_CAPTION,
    STATED_ERROR_COLUMN,
    holds_for,
    interval_files,
    interval_table,
    intervals_figure,
    largest_released_size,
    stated_error_caption,
    stated_error_table,
    uninformative_reason,
)
from cocoviz.plots.levels import budget_figure, level_error_figure, sweep_figure
from cocoviz.plots.style import BAR_LIMIT, PRIVATE_COLOR, REFERENCE_COLOR, SERIES_COLORS, TRUE_COLOR, step_points
from cocoviz.plots.summaries import level_quantiles, node_figures, spread_figure
from cocoviz.plots.teaching import isotonic_figure, matching_figure, merge_figure, noise_figure

__all__ = [
    "TRUE_COLOR",
    "PRIVATE_COLOR",
    "REFERENCE_COLOR",
    "SERIES_COLORS",
    "BAR_LIMIT",
    "histogram_figure",
    "intervals_figure",
    "interval_files",
    "holds_for",
    "uninformative_reason",
    "stated_error_table",
    "interval_table",
    "STATED_ERROR_CAPTION",
    "stated_error_caption",
    "largest_released_size",
    "STATED_ERROR_COLUMN",
    "prefix_sums_figure",
    "error_by_size_figure",
    "level_error_figure",
    "budget_figure",
    "consistency_figure",
    "sweep_figure",
    "level_quantiles",
    "node_figures",
    "spread_figure",
    "representations_figure",
    "noise_figure",
    "isotonic_figure",
    "matching_figure",
    "merge_figure",
    "step_points",
]
