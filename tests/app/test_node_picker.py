"""The node picker (issue 26): a search box over capped drill-down lists, on small data with a small cap."""

from __future__ import annotations

import pytest

from tests.support.app import APP, AppTest, assert_clean, new_app

TAXI = "taxi"  # root / 2 halves / 28 neighbourhoods: the smallest bundle with a list to cap
FAR = "West Village"  # the 13th neighbourhood of Lower Manhattan, beyond a cap of 5


def node_shown(at) -> str:
    line = next(m.value for m in at.markdown if m.value.startswith("**Node:** "))
    return line.removeprefix("**Node:** ").split(" — level ")[0]


def search(at, query: str) -> AppTest:
    return at.text_input(key=f"w.node.{at.session_state['cv.dataset']}.find").input(query).run()


def matches(at):
    return at.selectbox(key=f"w.node.{at.session_state['cv.dataset']}.hit")


@pytest.fixture
def small_cap(monkeypatch):
    from pages.common import picker

    monkeypatch.setattr(picker, "LIST_LIMIT", 5)


def test_search_finds_a_node_and_picking_it_shows_it_and_puts_it_in_the_address():
    at = new_app(dataset=TAXI)
    search(at, "lower")
    assert_clean(at)
    assert matches(at).value is None
    matches(at).set_value("Lower Manhattan").run()
    assert_clean(at)
    assert node_shown(at) == "Lower Manhattan"
    assert matches(at).value is None  # the matches offer again
    assert at.query_params["node"] in ("Lower Manhattan", ["Lower Manhattan"])


def test_a_single_match_is_chosen_without_a_pick():
    at = new_app()
    search(at, "A")
    assert_clean(at)
    assert not [s for s in at.selectbox if s.key == "w.node.toy.hit"]  # nothing left to pick
    assert any("The one match, **a**, is chosen." in s.value for s in at.success)
    assert node_shown(at) == "a"
    assert at.selectbox(key="w.node.toy.1").value == "a"  # the drill-down follows
    at.selectbox(key="w.node.toy.1").set_value(at.selectbox(key="w.node.toy.1").options[-1]).run()
    assert_clean(at)
    assert node_shown(at) != "a"  # the drill-down moves on: the match is not forced again


def test_search_ranks_exact_then_prefix_then_substring_and_says_when_nothing_matches():
    at = new_app(dataset=TAXI)
    search(at, "lower")
    assert matches(at).options == [
        "Lower Manhattan (half, prefix)",
        "Lower Manhattan/Lower East Side (neighbourhood, prefix)",
        "Lower Manhattan/Battery Park City-Lower Manhattan (neighbourhood, substring)",
    ]
    search(at, "lower manhattan / wes")
    assert node_shown(at) == f"Lower Manhattan/{FAR}"  # the one match, chosen
    search(at, "no such place")
    assert_clean(at)
    assert any("No node matches" in i.value for i in at.info)
    assert not [s for s in at.selectbox if s.key == "w.node.taxi.hit"]


def test_a_capped_list_shows_the_first_children_and_a_searched_node_beyond_them(small_cap):
    at = new_app(dataset=TAXI, **{"cv.node.taxi.1": "Lower Manhattan"})
    assert_clean(at)
    box = at.selectbox(key="w.node.taxi.2")
    assert len(box.options) == 1 + 5 and FAR not in box.options
    assert any(c.value == "5 of 13 listed: search for the others." for c in at.caption)
    search(at, FAR)  # its one match is chosen at once
    assert_clean(at)
    assert node_shown(at) == f"Lower Manhattan/{FAR}"
    box = at.selectbox(key="w.node.taxi.2")
    assert box.value == FAR and len(box.options) == 1 + 5 + 1


def test_an_address_names_a_node_beyond_the_capped_list(small_cap):
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"dataset": TAXI, "node": f"Lower Manhattan/{FAR}"})
    at.run()
    assert_clean(at)
    assert node_shown(at) == f"Lower Manhattan/{FAR}"
    assert at.selectbox(key="w.node.taxi.2").value == FAR
