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
