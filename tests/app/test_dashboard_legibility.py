"""What the first pass of the dashboard left hard to read: a cut-off table column and tooltip, a stale notice."""

from __future__ import annotations

import json

from pages.common.links import loaded_notice
from tests.support.app import assert_clean, new_app


def test_the_budget_table_names_the_relation_briefly_and_spells_it_out_below():
    at = new_app(**{"explore.budget": True})
    assert_clean(at)
    table = next(d for d in at.dataframe if "relation" in d.value.columns)
    relations = set(table.value["relation"])
    assert relations and all(len(r) <= 20 and ":" not in r for r in relations)
    config = json.loads(table.proto.columns)
    assert config["relation"]["label"] == "neighbour relation"
    spelled = [c.value for c in at.caption if c.value.startswith("Neighbour relation — ")]
    assert spelled and all(any(c.split(" — ", 1)[1].startswith(r + ":") for r in relations) for c in spelled)


def test_the_copy_link_tooltip_is_short_and_the_popover_says_the_rest():
    at = new_app()
    assert_clean(at)
    (popover,) = [p for p in at.get("popover") if p.proto.popover.label == "Copy link"]
    assert len(popover.proto.popover.help) <= 40
    words = [c.value for c in popover.children.values() if c.type == "caption"]
    assert words and "this node" in words[0] and "copy" in words[0].lower()


def test_the_loaded_settings_notice_goes_when_the_dataset_changes():
    assert loaded_notice("params.json", "toy", "toy") == "Settings of params.json loaded."
    assert loaded_notice("params.json", "toy", "housing") is None


#: The width (px) of a table in the budget panel at a 1440 × 900 window beside the sidebar (measured in Chromium).
BUDGET_TABLE_PX = 940


def test_every_column_of_the_budget_table_fits_beside_the_sidebar_the_relation_last():
    for state in ({"explore.budget": True}, {"explore.budget": True, "cv.accounting": "zCDP"}):
        at = new_app(**state)
        assert_clean(at)
        table = next(d for d in at.dataframe if "relation" in d.value.columns)
        config = json.loads(table.proto.columns)
        shown = list(table.value.columns)
        assert shown[-1] == "relation"
        widths = [config.get(c, {}).get("width") for c in shown]
        assert all(isinstance(w, int) for w in widths), dict(zip(shown, widths))  # none left to the grid's guess
        assert sum(widths) <= BUDGET_TABLE_PX, dict(zip(shown, widths))
