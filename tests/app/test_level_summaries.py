"""Per-level summaries on Explore (issue 26): the spread of each level's nodes, and a node's children as
quantiles beyond the list cap; small data with a small cap."""

from __future__ import annotations

import pytest

from tests.support.app import assert_clean, new_app, plotly_specs

TAXI = "taxi"  # root / 2 halves / 28 neighbourhoods
LOWER = "Lower Manhattan"  # 13 neighbourhoods


@pytest.fixture
def small_cap(monkeypatch):
    from pages.common import picker

    monkeypatch.setattr(picker, "LIST_LIMIT", 5)


def spread(at) -> dict:
    return next(s for s in plotly_specs(at) if s["data"][0]["type"] == "box")


def test_the_levels_tab_shows_each_levels_spread_and_lists_a_few_children():
    at = new_app(dataset=TAXI, **{"explore.tab": "Errors per level"})
    assert_clean(at)
    box = spread(at)["data"][0]
    assert box["x"] == ["Manhattan", "half", "neighbourhood"]  # the data card names the root
    assert box["upperfence"][0] == box["median"][0] == box["q1"][0]  # the root: one node
    quantiles = at.dataframe[1].value
    assert quantiles["nodes"].tolist() == [1, 2, 28] and set(quantiles["measure"]) == {"emd (persons)"}
    children = at.dataframe[2].value  # the root's two halves, one row each
    assert children["node"].tolist() == ["Lower Manhattan", "Upper Manhattan"]
    at.segmented_control(key="w.levels.measure").set_value("persons").run()
    assert_clean(at)
    assert spread(at)["layout"]["yaxis"]["title"]["text"] == "persons (released)"
    assert at.dataframe[1].value["nodes"].tolist() == [1, 2, 28]


def test_beyond_the_cap_a_nodes_children_are_summarised_and_summed(small_cap):
    at = new_app(dataset=TAXI, **{"explore.tab": "Errors per level", "cv.node.taxi.1": LOWER})
    assert_clean(at)
    assert any("13** children" in m.value and "too many to list" in m.value for m in at.markdown)
    summary = at.dataframe[2].value
    assert summary["nodes"].tolist() == [13] * 4 and summary["level"].tolist() == [2] * 4
    at.session_state["explore.tab"] = "Consistency check"
    at.run()
    assert_clean(at)
    names = [t["name"] for t in plotly_specs(at)[0]["data"]]
    assert "Σ of the 13 children" in names and len(names) == 2  # the sum and the parent, no child of its own
    assert any("parent = Σ children" in s.value for s in at.success)


def test_compare_draws_a_large_level_as_percentiles_and_lists_the_nodes_that_differ_most(small_cap):
    at = new_app("pages/compare.py", dataset=TAXI)
    assert_clean(at)
    names = [t["name"] for t in plotly_specs(at)[0]["data"]]
    assert names == ["Manhattan", "half", "neighbourhood: percentiles of 28 nodes", "same error"]
    assert any(c.value == "The 5 nodes that differ most, of 31." for c in at.caption)
    listed = at.dataframe[1].value
    assert len(listed) == 5 and listed["emd_between"].is_monotonic_decreasing


def test_a_secure_releases_spread_is_drawn_and_never_kept_for_other_sessions(tmp_path, monkeypatch):
    from pages.common import summaries

    monkeypatch.setenv("COCOVIZ_LEDGER", str(tmp_path / "ledger.sqlite"))
    at = new_app(**{"explore.tab": "Errors per level"})  # a fast release: its quantiles are kept
    monkeypatch.setattr(summaries, "_level_table", lambda *a: pytest.fail("a secure release's quantiles kept"))
    at.toggle(key="w.secure").set_value(True).run()
    at.button(key="explore.secure").click().run()
    assert_clean(at)
    assert spread(at)["data"][0]["x"] == ["everyone", "region"]
