"""Explore's "Intervals (publishable)" tab under AppTest, on the toy: bounds from the release alone."""

from __future__ import annotations

from tests.support.app import assert_clean, new_app, plotly_specs


def test_explore_intervals_tab_shows_publishable_bounds():
    # ε = 10 per level: the toy root has 4 groups, so smaller budgets' bounds are (rightly) too wide to inform.
    at = new_app(**{"explore.tab": "Intervals (publishable)", "cv.eps.0": 10.0, "cv.eps.1": 10.0})
    assert_clean(at)
    assert any("**Publishable**" in s.value and "no ε" in s.value for s in at.success)
    specs = plotly_specs(at)
    bars = specs[-1]["data"][0]
    assert bars["name"] == "released, with 90% bounds" and bars["error_y"]["symmetric"] is False
    words = next(m.value for m in at.markdown if m.value.startswith("- With 90% confidence"))
    bounds = next(d.value for d in at.dataframe if "Groups ≤ j: low" in d.value.columns)  # headers in words
    assert list(bounds.columns[:4]) == ["Size j", "Groups ≤ j: low", "Groups ≤ j: released", "Groups ≤ j: high"]
    assert "groups have size" in words and "hold together with 90% confidence" in words
    # The cumulative view draws the band around the released Hc; a higher confidence widens it.
    at.session_state["cv.intervals.view"] = "cumulative"
    at.run()
    assert_clean(at)
    names = [t["name"] for t in plotly_specs(at)[-1]["data"]]
    assert names == ["90% band (low)", "90% band (high)", "released"]
    narrow = plotly_specs(at)[-1]["data"]
    at.session_state["cv.intervals.confidence"] = 0.99
    at.run()
    wide = plotly_specs(at)[-1]["data"]
    assert sum(wide[1]["y"]) - sum(wide[0]["y"]) >= sum(narrow[1]["y"]) - sum(narrow[0]["y"])


def test_explore_intervals_tab_explains_a_level_without_a_band():
    at = new_app(**{"explore.tab": "Intervals (publishable)", "cv.consistency": "bottom-up"})
    assert_clean(at)
    assert any("not measured" in i.value for i in at.info)


def test_explore_node_view_shows_the_stated_standard_errors_as_publishable():
    """The stated standard error per released size, under the intervals and where a level has no band."""
    from cocoviz import plots

    at = new_app(**{"explore.tab": "Intervals (publishable)", "cv.eps.0": 0.73})  # settings no other test asks for
    assert_clean(at)
    tables = [d.value for d in at.dataframe if plots.STATED_ERROR_COLUMN in d.value.columns]
    assert len(tables) == 1 and len(tables[0]) >= 1 and tables[0]["Group size"].tolist()
    assert any(m.value.startswith("**Stated standard error per size**") for m in at.markdown)
    assert any(c.value == plots.stated_error_caption(True) for c in at.caption)  # the root, above the leaves
    at = new_app(**{"explore.tab": "Intervals (publishable)", "cv.consistency": "bottom-up", "cv.eps.0": 0.74})
    assert_clean(at)
    assert any("not measured" in i.value for i in at.info)  # no band at the root under bottom-up, but an error
    assert any(plots.STATED_ERROR_COLUMN in d.value.columns for d in at.dataframe)


def test_explore_intervals_tab_puts_long_tailed_sizes_on_a_log_axis():
    """As on the histogram tab: sizes into the thousands (taxi) default to log x, the toy's few sizes do not."""

    # ε = 0.79: a release no other AppTest computes (they share one st.cache; test_pages' slow-release test
    # needs its own 0.77 uncomputed).
    def log_x(at):
        return next(t.value for t in at.toggle if t.label == "log x")

    assert log_x(new_app(**{"explore.tab": "Intervals (publishable)", "cv.eps.0": 0.79})) is False
    at = new_app(dataset="taxi", **{"explore.tab": "Intervals (publishable)", "cv.eps.0": 0.79})
    assert_clean(at)
    assert log_x(at) is True and plotly_specs(at)[-1]["layout"]["xaxis"]["type"] == "log"


def test_hg_bounds_that_say_nothing_are_not_called_publishable_alone():
    """Hg's bounds on a size's count at a small ε span most of G: said plainly, not a green "Publishable"."""
    at = new_app(
        **{"explore.tab": "Intervals (publishable)", "cv.method.0": "Hg", "cv.method.1": "Hg", "cv.eps.0": 0.11}
    )
    assert_clean(at)
    assert any("too wide to inform" in w.value and "Hg measures each group's size" in w.value for w in at.warning)
    assert not any(s.value.startswith("**Publishable** —") for s in at.success)
    from cocoviz import plots

    assert "not a count of groups" in plots.STATED_ERROR_COLUMN  # a group's size error, not a count's margin


def test_the_bounds_and_stated_errors_download_as_csv_and_parquet():
    at = new_app(**{"explore.tab": "Intervals (publishable)", "cv.eps.0": 0.83})
    assert_clean(at)
    labels = [b.proto.label for b in at.get("download_button")]
    assert {"Bounds (CSV)", "Bounds (Parquet)", "Stated errors (CSV)"} <= set(labels)


def test_the_bounds_download_offers_both_scopes_and_says_which_one_it_holds_for():
    at = new_app(**{"explore.tab": "Intervals (publishable)", "cv.eps.0": 10.0, "cv.eps.1": 10.0})
    assert_clean(at)
    node_caption = next(c.value for c in at.caption if c.value.startswith("The files hold"))
    assert "this node alone" in node_caption
    at.session_state["cv.intervals.scope"] = "level"
    at.run()
    assert_clean(at)
    level_caption = next(c.value for c in at.caption if c.value.startswith("The files hold"))
    assert "at once" in level_caption and "of level 0" in level_caption  # the root: its level's one node
    labels = [b.proto.label for b in at.get("download_button")]
    assert {"Bounds (CSV)", "Bounds (Parquet)"} <= set(labels)


def test_a_level_file_holds_every_node_of_the_level_with_its_scope():
    import io

    import pandas as pd

    import cocoviz
    from pages.common import data
    from pages.common.intervals import level_files
    from tests.support.app import small_dataset

    tree = data.load_bundled(small_dataset())
    release = cocoviz.estimate(tree, epsilons=[10.0] * (tree.depth + 1), methods=["Hc"] * (tree.depth + 1), seed=3)
    level = tree.depth
    csv, parquet = level_files(release, level, 0.9)
    frame = pd.read_csv(io.BytesIO(csv))
    assert set(frame["node"]) == {cocoviz.hierarchy.node_label(n) for n in release.nodes(level)}
    assert set(frame["scope"]) == {"level"} and set(frame["level"]) == {level}
    nodes = len(release.nodes(level))
    assert frame["holds_for"].iloc[0].startswith(f"all {nodes} nodes of level {level} at once")
    assert pd.read_parquet(io.BytesIO(parquet)).shape == frame.shape
