"""Selection that leads somewhere (issue 25): a chosen release opens in Explore and downloads; Explore says when
the shipped finding on the loaded data prefers another mix, and offers it."""

from __future__ import annotations

import pytest

from tests.support.app import assert_clean, new_app

METHODS, EXPLORE = "pages/methods.py", "pages/explore.py"


def test_the_private_selection_opens_in_explore_and_downloads():
    at = new_app(METHODS, **{"cv.methods.trials": 1, "methods.tab": "Private algorithm selection"})
    at.button(key="select_run").click().run()
    assert_clean(at)
    assert [b.label for b in at.get("download_button")] == [
        "Download the selected release (fast sampler: exploration only)"
    ]
    chosen = next(s.value for s in at.success if s.value.startswith("Selected:")).split("**")[1].split("×")
    at.button(key="select.open").click().run()
    assert_clean(at)
    assert at.title[0].value == "Explore a private release"
    assert [at.session_state[f"cv.method.{k}"] for k in range(len(chosen))] == chosen
    assert at.session_state["cv.consistency"] == "top-down"


def test_a_zcdp_private_selection_states_its_rho_and_opens_in_explore_under_zcdp():
    at = new_app(METHODS, **{"methods.tab": "Private algorithm selection"})
    at.radio(key="w.accounting").set_value("zCDP").run()
    assert_clean(at)
    # Two candidates of ρ = 0.5 per level on the toy's 2 levels, and the selection's ε = 0.1 as ε²/2.
    cost = next(i.value for i in at.info if i.value.startswith("Whole privacy cost"))
    assert "**ρ = 2.005**" in cost and "δ = 1e-10)-DP" in cost and "against ρ = 1 for a single release" in cost
    at.number_input(key="w.select.rho").set_value(1.0).run()
    assert any("**ρ = 4.005**" in i.value for i in at.info)
    at.button(key="select_run").click().run()
    assert_clean(at)
    selected = next(s.value for s in at.success if s.value.startswith("Selected:"))
    assert "whole cost ρ = 4.005, read as (ε = " in selected and "δ = 1e-10)-DP" in selected
    report = at.code[0].value
    assert report.startswith("total ρ spent: 4.005") and "discrete Gaussian" in report
    at.button(key="select.open").click().run()
    assert_clean(at)
    assert at.title[0].value == "Explore a private release"
    assert at.session_state["cv.accounting"] == "zCDP"
    assert [at.session_state[f"cv.rho.{k}"] for k in range(2)] == [1.0, 1.0]
    assert any("total **ρ = 2**" in m.value for m in at.markdown)  # Explore releases it at the selection's ρ


def test_a_sweep_candidate_opens_in_explore():
    at = new_app(METHODS, **{"cv.methods.trials": 1})
    assert_clean(at)
    at.selectbox(key="methods.open_series").set_value("bottom-up (Hc leaves)")
    at.selectbox(key="methods.open_eps").set_value(0.5).run()
    at.button(key="methods.open").click().run()
    assert_clean(at)
    assert at.title[0].value == "Explore a private release"
    assert at.session_state["cv.consistency"] == "bottom-up"
    assert next(m.value for m in at.metric if m.label == "Total ε spent") == "1"  # 0.5 per level × 2 levels


@pytest.mark.slow
def test_explore_offers_the_mix_the_shipped_finding_prefers():
    from cocoviz.experiments.findings import read_finding

    meta = read_finding("methods").meta
    at = new_app(dataset=meta["dataset"])  # its defaults: Hc at every level, top-down, ε = 1 per level
    assert_clean(at)
    advice = [i.value for i in at.info if "shipped method-selection finding" in i.value]
    assert advice and "bottom-up (Hc leaves)" in advice[0]
    at.button(key="explore.advice").click().run()
    assert_clean(at)
    assert at.session_state["cv.consistency"] == "bottom-up"
    assert not any("shipped method-selection finding" in i.value for i in at.info)  # now the preferred one


def test_the_secure_gate_is_gone_once_drawn():
    at = new_app(**{"cv.K.toy": 8})
    at.toggle(key="w.secure").set_value(True).run()
    assert any("secure sampler will noise" in w.value for w in at.warning)
    at.button(key="explore.secure").click().run()
    assert_clean(at)
    assert not any("secure sampler will noise" in w.value for w in at.warning)
    assert not [b for b in at.button if b.key == "explore.secure"]
    assert any(m.label == "Total ε spent" for m in at.metric)


def test_labels_are_whole_long_node_names_and_download_labels():
    # A metric cuts a long value short in the browser: the node is named on a line of its own, and the
    # download buttons sit two a row so their labels fit.
    at = new_app(**{"explore.tab": "Downloads", "cv.node.toy.1": "a"})
    assert_clean(at)
    assert not [m for m in at.metric if m.label == "Node"]
    assert any(m.value == "**Node:** a — level 1: region" for m in at.markdown)
    holding = [c for c in at.columns if c.get("download_button")]
    # Six release files and the settings as code (plan file, script): half a row each.
    assert len(holding) == 8 and all(abs(c.proto.weight - 0.5) < 1e-9 for c in holding)


def test_explore_downloads_a_release_report_and_names_the_confidential_one():
    at = new_app(**{"explore.tab": "Downloads"})
    assert_clean(at)
    assert "Release report (HTML)" in [b.label for b in at.get("download_button")]
    next(c for c in at.checkbox if c.label.startswith("Include the true counts")).check().run()
    assert_clean(at)
    assert "Release report with accuracy (HTML, CONFIDENTIAL)" in [b.label for b in at.get("download_button")]


def test_the_data_card_is_drawn_when_opened():
    at = new_app()
    assert any("data card" in e.label for e in at.expander)
    card = next(e for e in at.expander if "data card" in e.label)
    assert not card.children  # not part of the first render
    at.session_state["explore.card"] = True
    at.run()
    assert_clean(at)
    card = next(e for e in at.expander if "data card" in e.label)
    assert card.children
