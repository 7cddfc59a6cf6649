"""The figure builders of cocoviz.plots, checked on their figure data (no browser)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import match_groups, plots
from cocoviz.plots.style import log_ticks

H_TRUE = np.array([0, 2, 1, 0, 1])  # slides: two groups of size 1, one of 2, one of 4
H_PRIV = np.array([0, 1, 2, 1])


def _expand_steps(x, y, n):
    """Dense values over 0..n-1 of a step trace drawn through its change points."""
    out = np.empty(n)
    x = list(x)
    for k, xi in enumerate(x):
        hi = x[k + 1] if k + 1 < len(x) else n
        out[xi:hi] = y[k]
    return out


def test_step_points_keeps_first_last_and_changes():
    x, y = plots.step_points(np.array([3, 3, 5, 5, 5, 7]))
    assert x.tolist() == [0, 2, 5] and y.tolist() == [3, 5, 7]
    x, y = plots.step_points(np.array([1, 1, 1]))
    assert x.tolist() == [0, 2] and y.tolist() == [1, 1]
    assert plots.step_points(np.array([], np.int64))[0].size == 0


def test_histogram_overlay_bars_hold_both_histograms_padded():
    fig = plots.histogram_figure(H_TRUE, H_PRIV)
    assert isinstance(fig, go.Figure)
    assert [t.type for t in fig.data] == ["bar", "bar"]
    assert [t.name for t in fig.data] == ["true", "private"]
    assert list(fig.data[0].y) == [0, 2, 1, 0, 1]
    assert list(fig.data[1].y) == [0, 1, 2, 1, 0]  # padded to the common length
    assert list(fig.data[0].x) == [0, 1, 2, 3, 4]
    assert fig.layout.barmode == "overlay"
    assert fig.layout.xaxis.type == "linear" and fig.layout.yaxis.type == "linear"
    assert "H" in fig.layout.yaxis.title.text


def test_histogram_cumulative_view_is_hc_as_steps():
    fig = plots.histogram_figure(H_TRUE, H_PRIV, view="cumulative")
    true, priv = fig.data
    assert true.line.shape == "hv" and true.mode == "lines"
    assert _expand_steps(true.x, true.y, 5).tolist() == [0, 2, 3, 3, 4]  # Hc of the slides
    assert _expand_steps(priv.x, priv.y, 5).tolist() == [0, 1, 3, 4, 4]
    assert "Hc" in fig.layout.yaxis.title.text


def test_histogram_side_by_side_uses_two_panels_sharing_y():
    fig = plots.histogram_figure(H_TRUE, H_PRIV, layout="side", names=("truth", "release"))
    assert fig.data[0].xaxis == "x" and fig.data[1].xaxis == "x2"
    assert fig.layout.yaxis2.matches == "y"
    assert [a.text for a in fig.layout.annotations][:2] == ["truth", "release"]


def test_histogram_log_axes_drop_size_zero_and_say_so():
    h = np.zeros(1000, np.int64)
    h[[0, 3, 999]] = [5, 2, 1]
    fig = plots.histogram_figure(h, h, log_x=True, log_y=True)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.data[0].type == "scatter"  # long H: sparse markers, not 1000 bars
    assert list(fig.data[0].x) == [3, 999] and list(fig.data[0].y) == [2, 1]
    assert any("size 0" in a.text for a in fig.layout.annotations)


def test_histogram_long_arrays_stay_small():
    h = np.zeros(100_001, np.int64)
    h[[1, 2, 3, 50_000]] = [10, 5, 2, 1]
    fig = plots.histogram_figure(h, h, view="cumulative")
    assert len(fig.data[0].x) <= 6
    fig = plots.histogram_figure(h, h)
    assert len(fig.data[0].x) == 4


def test_histogram_rejects_unknown_options():
    with pytest.raises(ValueError, match="view"):
        plots.histogram_figure(H_TRUE, H_PRIV, view="Hg")
    with pytest.raises(ValueError, match="layout"):
        plots.histogram_figure(H_TRUE, H_PRIV, layout="grid")


def test_error_by_size_sums_to_emd_in_legend():
    err = np.abs(np.cumsum(np.pad(H_PRIV, (0, 1))) - np.cumsum(H_TRUE))
    fig = plots.error_by_size_figure({"Hc": err, "Hg": err * 2}, log_y=True)
    assert [t.name for t in fig.data] == ["Hc (emd 2)", "Hg (emd 4)"]
    assert _expand_steps(fig.data[0].x, fig.data[0].y, 5).tolist() == err.tolist()
    assert fig.layout.yaxis.type == "log"
    assert fig.data[0].line.color != fig.data[1].line.color


def test_level_error_figure_bars_and_reference():
    frame = pd.DataFrame(
        {"level": [0, 1], "nodes": [1, 2], "mean_emd": [10.0, 4.0], "max_emd": [10, 6], "omniscient": [4.0, 2.0]}
    )
    fig = plots.level_error_figure(frame, level_names=["root", "state"])
    bar, ref = fig.data
    assert bar.type == "bar" and list(bar.x) == ["root", "state"] and list(bar.y) == [10.0, 4.0]
    assert list(ref.y) == [4.0, 2.0] and "omniscient" in ref.name
    assert fig.layout.yaxis.type == "log"


def test_log_error_axes_label_plain_numbers_not_bare_digits():
    # issue 25, item 7: a log y axis over a decade or two read "5 2 100 5 2".
    frame = pd.DataFrame(
        {"level": [0, 1], "nodes": [1, 2], "mean_emd": [430.0, 12.0], "max_emd": [430, 20], "omniscient": [3.0, 2.5]}
    )
    y = plots.level_error_figure(frame).layout.yaxis
    assert y.tickmode == "array" and list(y.tickvals) == [10.0, 100.0] and list(y.ticktext) == ["10", "100"]
    assert plots.level_error_figure(frame, log_y=False).layout.yaxis.tickmode is None
    rows = [
        {"level": level, "series": "Hg", "epsilon": eps, "mean": mean, "se": 0.0}
        for level, means in ((0, (30.0, 6.0)), (1, (2500.0, 40.0)))
        for eps, mean in zip((0.5, 2.0), means)
    ]
    fig = plots.sweep_figure(pd.DataFrame(rows))
    # Each panel labelled over its own range: a coarse step where it spans decades, a finer one where not.
    assert list(fig.layout.yaxis.ticktext) == ["10", "20"]
    assert list(fig.layout.yaxis2.ticktext) == ["100", "1,000"]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(1e-6, 1e9), min_size=1, max_size=20))
def test_log_ticks_are_plain_labels_within_the_values(values):
    ticks = log_ticks(values)
    assert ticks["tickvals"] == sorted(ticks["tickvals"]) and len(ticks["tickvals"]) >= 1
    assert all("e" not in text for text in ticks["ticktext"])
    assert all(min(values) <= t <= max(values) for t in ticks["tickvals"])


def test_budget_figure_stacks_levels_to_the_total():
    fig = plots.budget_figure(
        {0: 0.5, 1: 1.0, 2: 0.25}, level_names=["root", "state", "county"], extra={"selection": 0.1}
    )
    assert fig.layout.barmode == "stack"
    assert [t.x[0] for t in fig.data] == [0.5, 1.0, 0.25, 0.1]
    assert fig.layout.title.text == "total ε = 1.85"
    assert "state" in fig.data[1].name


def test_consistency_figure_stack_top_equals_children_sum():
    parent = np.array([0, 2, 1, 0, 1])
    kids = {"a": np.array([0, 1, 0, 0, 1]), "b": np.array([0, 1, 1])}
    fig = plots.consistency_figure(parent, kids)
    names = [t.name for t in fig.data]
    assert names[-1] == "parent" and set(names[:-1]) == {"a", "b"}
    top = fig.data[len(kids) - 1]
    assert _expand_steps(top.x, top.y, 5).tolist() == np.cumsum(parent).tolist()
    par = fig.data[-1]
    assert _expand_steps(par.x, par.y, 5).tolist() == np.cumsum(parent).tolist()


def test_consistency_figure_pools_many_children():
    kids = {f"c{k}": np.array([0, k]) for k in range(1, 15)}
    parent = np.sum(list(kids.values()), axis=0)
    fig = plots.consistency_figure(parent, kids, view="H", max_children=5)
    names = [t.name for t in fig.data]
    assert len(names) == 7 and names[5] == "other children (9)"
    assert fig.data[-1].mode == "markers"


def test_sweep_figure_one_panel_per_level_with_error_bars():
    rows = []
    for level in (0, 1):
        for series in ("Hc, weighted", "Hc, plain"):
            for eps in (0.5, 1.0):
                rows.append({"level": level, "series": series, "epsilon": eps, "mean": 10 / eps + level, "se": 0.5})
    fig = plots.sweep_figure(pd.DataFrame(rows), facet_names=["root", "state"])
    assert len(fig.data) == 4
    assert {t.xaxis for t in fig.data} == {"x", "x2"}
    first = fig.data[0]
    assert first.name == "Hc, weighted" and list(first.x) == [0.5, 1.0] and list(first.y) == [20.0, 10.0]
    assert list(first.error_y.array) == [0.5, 0.5]
    assert [t.showlegend for t in fig.data] == [True, True, False, False]
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert [a.text for a in fig.layout.annotations] == ["root", "state"]
    # The budgets swept, in plain numbers: not plotly's bare leading digits (issue 25, item 7).
    assert list(fig.layout.xaxis.ticktext) == ["0.5", "1"] and list(fig.layout.xaxis2.tickvals) == [0.5, 1.0]


def test_representations_figure_shows_h_hc_hg():
    fig = plots.representations_figure(H_TRUE)
    h, hc, hg = fig.data
    assert list(h.y) == [0, 2, 1, 0, 1]
    assert list(hc.y) == [0, 2, 3, 3, 4]
    assert list(hg.y) == [1, 1, 2, 4] and list(hg.x) == [1, 2, 3, 4]


def test_noise_figure_pairs_true_and_noisy():
    fig = plots.noise_figure([1, 1, 2, 4], [0, 3, 2, 5], start=1)
    noise, true, noisy = fig.data
    assert list(true.x) == [1, 2, 3, 4] and list(noisy.y) == [0, 3, 2, 5]
    assert noise.mode == "lines"


def test_isotonic_figure_shades_one_rect_per_block():
    noisy = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    fit = np.array([2.0, 2.0, 2.0, 4.5, 4.5])
    fig = plots.isotonic_figure(noisy, fit, truth=[1, 2, 2, 4, 5], rounded=np.rint(fit))
    assert len(fig.layout.shapes) == 2  # two blocks
    assert fig.layout.shapes[0].x0 == -0.45 and fig.layout.shapes[0].x1 == 2.45
    names = [t.name for t in fig.data]
    assert names[0].startswith("isotonic fit") and "noisy" in names and "true" in names and "rounded fit" in names
    assert list(fig.data[0].y) == fit.tolist()


def test_matching_figure_draws_one_line_per_parent_group_with_optimal_cost():
    parent = np.array([1, 1, 1, 1, 2, 3, 3, 6, 9])
    kids = {"a": np.array([1, 1, 2, 1, 9]), "b": np.array([6, 1, 3, 3])}
    child, index = match_groups(parent, list(kids.values()))
    fig = plots.matching_figure(parent, kids, child, index, parent_name="root")
    lines = fig.data[0]
    xs = [v for v in lines.x]
    assert xs.count(None) == len(parent)  # one segment per match
    assert list(lines.y[:2]) == [1, 0]
    top = fig.data[2]
    assert top.name == "root" and list(top.text) == [str(s) for s in parent]
    assert [t.name for t in fig.data[3:]] == ["a", "b"]
    assert fig.layout.title.text == "matching cost Σ|top − bottom| = 0"
    # Every match joins equal sizes here: the labels of both ends agree.
    costs = [int(t) for t in fig.data[1].text]
    assert sum(costs) == 0


def test_matching_figure_cost_is_sorted_pairing():
    parent = np.array([5, 1, 3])
    kids = {"a": np.array([2, 6]), "b": np.array([3])}
    child, index = match_groups(parent, list(kids.values()))
    fig = plots.matching_figure(parent, kids, child, index)
    expected = int(np.abs(np.sort(parent) - np.sort(np.concatenate(list(kids.values())))).sum())
    assert fig.layout.title.text.endswith(f"= {expected}")


def test_merge_figure_has_both_estimates_and_merges():
    fig = plots.merge_figure(
        [1, 4], [2, 6], {"weighted": [1.5, 5.0], "plain": [1.5, 5.0]}, labels=["a:1", "a:2"], truth=[1, 5]
    )
    assert [t.name for t in fig.data] == [
        "parent's estimate",
        "child's estimate",
        "merged: weighted",
        "merged: plain",
        "true",
    ]
    assert list(fig.data[2].y) == [1.5, 5.0]
    assert fig.layout.xaxis.type == "category"


def test_figures_keep_the_ambient_template_so_the_theme_applies():
    """No builder forces a template or background: Streamlit's light/dark theme (or plotly's default) applies."""
    ambient = pio.templates[pio.templates.default]
    figs = (
        plots.histogram_figure(H_TRUE, H_PRIV, layout="side"),
        plots.representations_figure(H_TRUE),
        plots.budget_figure({0: 1.0}),
        plots.error_by_size_figure({"x": np.array([1, 0])}),
        plots.isotonic_figure([1.0, 0.0], [0.5, 0.5]),
        plots.consistency_figure(H_TRUE, {"a": H_TRUE}),
    )
    for fig in figs:
        assert fig.layout.template == ambient
        assert fig.layout.paper_bgcolor is None and fig.layout.plot_bgcolor is None
        assert fig.layout.font.color is None


def test_stated_error_table_shows_a_releases_stated_errors_in_plain_numbers():
    """One row per released size of the node, the square root of its stated variance, no exponent notation."""
    from cocoviz import estimate
    from cocoviz.datasets import load_dataset

    release = estimate(load_dataset("toy"), epsilons=[0.3, 0.3], methods=["Hc", "Hg"], max_size=8, seed=2, stated=True)
    for node in [(), ("a",)]:
        errors = release.stated_errors(node)
        table = plots.stated_error_table(errors)
        sizes, counts = release.runs(len(node)).node(release.shape.locate(node)[1])
        assert table["Group size"].tolist() == [str(s) for s in sizes]
        assert table["Released groups"].tolist() == [str(c) for c in counts]
        shown = table[plots.STATED_ERROR_COLUMN]
        assert not shown.str.contains("e").any()
        np.testing.assert_allclose(shown.str.replace(",", "").astype(float), errors["stated_se"], rtol=0.051)
    assert "Publishable" in plots.STATED_ERROR_CAPTION and "no ε" in plots.STATED_ERROR_CAPTION


def test_log_axes_are_labelled_in_plain_numbers_over_what_is_drawn():
    """A log size axis from 1 to 5,000 reads 1, 10, 100, 1,000 (not plotly's '2 5 100 2 5'); linear axes
    keep plotly's own ticks."""
    h = np.zeros(5001, np.int64)
    h[[1, 2, 3, 40, 5000]] = [900, 500, 20, 3, 1]
    fig = plots.histogram_figure(h, h, log_x=True, log_y=True)
    assert fig.layout.xaxis.type == "log" and list(fig.layout.xaxis.ticktext) == ["1", "10", "100", "1,000"]
    assert fig.layout.yaxis.type == "log" and list(fig.layout.yaxis.ticktext) == ["1", "10", "100"]
    linear = plots.histogram_figure(h, h)
    assert linear.layout.xaxis.tickvals is None and linear.layout.xaxis.type == "linear"
