"""Explore's "Plan by accuracy": a target fills the sidebar with the ε that meets it."""

from __future__ import annotations

from tests.support.app import assert_clean, new_app


def test_plan_by_accuracy_fills_the_sidebar_and_the_release_meets_the_target():
    at = new_app(**{"explore.planner": True, "cv.plan.target": 3, "cv.plan.confidence": 0.8})
    assert_clean(at)
    assert any("is the smallest budget" in m.value and "± 3" in m.value for m in at.markdown)
    at.button(key="plan.apply").click().run()
    assert_clean(at)
    assert at.session_state["cv.eps.split"] == "custom"
    chosen = at.session_state["cv.eps.1"]
    assert chosen != 1.0 and at.session_state["cv.eps.0"] == 1.0
    # The release the sidebar now draws has every leaf's 80% band within ± 3 (the planner's claim).
    at.session_state["explore.tab"] = "Intervals (publishable)"
    at.session_state["cv.node.toy.1"] = "a"
    at.run()
    assert_clean(at)
    assert any("± 3" in c.value or "± 2" in c.value for c in at.caption if "noisy cells" in c.value), [
        c.value for c in at.caption
    ]


def test_a_ratio_below_the_yardstick_is_explained_on_explore():
    from pages.common.help import HELP

    BELOW_YARDSTICK = HELP["below_yardstick"]  # noqa: N806

    for eps in (0.05, 0.2, 1.0, 3.0):  # the toy root's ratio at some small ε falls below 1
        at = new_app(**{"cv.eps.0": eps, "cv.eps.1": eps, "cv.eps.split": "custom"})
        assert_clean(at)
        ratio = next(m.value for m in at.metric if m.label == "emd / yardstick")
        if float(ratio.replace(",", "")) < 1:
            assert any(c.value == BELOW_YARDSTICK for c in at.caption)
            return
        assert not any(c.value == BELOW_YARDSTICK for c in at.caption)


def test_an_emd_target_fills_the_sidebar_and_the_release_at_that_level_meets_it():

    state = {"explore.planner": True, "cv.plan.kind": "emd per group", "cv.plan.emd": 0.5, "cv.plan.level": 1}
    at = new_app(**state)
    assert_clean(at)
    claim = next(m.value for m in at.markdown if "emd of" in m.value and "per group" in m.value)
    assert "is the smallest budget" in claim
    assert any("worst data" in c.value for c in at.caption)  # what the bound is about, said
    at.button(key="plan.apply").click().run()
    assert_clean(at)
    assert at.session_state["cv.eps.split"] == "custom" and at.session_state["cv.eps.0"] == 1.0
    # The release the sidebar now draws: every leaf within 0.5 persons per group of its truth, as Explore says.
    from pages.common import data

    for node in data.load_bundled("toy").nodes(1):
        at.session_state["cv.node.toy.1"] = node[-1]
        at.run()
        assert_clean(at)
        groups = int(next(m.value for m in at.metric if m.label == "Groups G (public)").replace(",", ""))
        moved = int(next(m.value for m in at.metric if m.label == "emd of this node").replace(",", ""))
        assert moved / groups <= 0.5, (node, moved, groups)
