"""The Size × tenure page under AppTest: it runs on its defaults and draws its charts, with the truth labelled."""

from __future__ import annotations

from tests.support.app import assert_clean, errors, new_app, plotly_specs

JOINT = "pages/joint.py"


def test_joint_page_runs_on_defaults_and_draws_charts():
    at = new_app(JOINT)
    assert_clean(at)
    assert not errors(at)
    assert at.title[0].value == "Size × tenure"
    specs = plotly_specs(at)
    assert len(specs) == 4  # the region's table, its errors, priors compared, the budget
    table = specs[0]
    assert [t["name"] for t in table["data"]] == ["true", "private", "true", "private"]
    true_owners, private_owners = table["data"][0]["y"], table["data"][1]["y"]
    assert len(true_owners) == 7 and sum(true_owners) > 0 and sum(private_owners) > 0
    compare = specs[2]
    assert {t["name"] for t in compare["data"]} == {"previous census", "uniform", "independent margins (no prior)"}
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Total ε spent"] == "4.5"  # 3 levels × (1 for the sizes + 0.5 for tenure)
    # One number a metric, the node on a line of its own: nothing cut short in the browser.
    assert {"Owners (private)", "Owners (true)"} <= set(metrics) and "Node" not in metrics
    assert any("exploration, not private" in m.value for m in at.markdown)
    assert any("Δ = 0" in c.value for c in at.caption)


def test_joint_page_reacts_to_the_tenure_epsilon_and_refuses_zero():
    at = new_app(JOINT)
    at.number_input(key="w.joint.ten_eps").set_value(2.0).run()
    assert_clean(at)
    assert {m.label: m.value for m in at.metric}["Total ε spent"] == "9"
    assert any("its own ε" in c.value for c in at.caption)
    at.number_input(key="w.joint.ten_eps").set_value(0.0).run()
    assert_clean(at)
    assert errors(at) and "ε" in errors(at)[0]


def test_joint_page_under_zcdp_spends_rho_in_both_margins():
    at = new_app(JOINT)
    at.radio(key="w.accounting").set_value("zCDP").run()
    assert_clean(at)
    assert not errors(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Total ρ spent"] == "1.875"  # 3 levels × (0.5 for the sizes + 0.125 for tenure)
    assert "Total ε spent" not in metrics
    budget = plotly_specs(at)[3]
    assert budget["layout"]["title"]["text"] == "total ρ = 1.875"
    assert any("read as (ε = " in c.value and "δ = 1e-10)-DP" in c.value for c in at.caption)
    assert any("its own ρ" in c.value for c in at.caption)  # the page's caption names what is spent
    summary = at.dataframe[-1].value  # the budget: every measurement's noise, relation and ρ
    assert {"noise", "relation", "rho"} <= set(summary.columns) and summary["rho"].notna().all()
    assert set(summary["noise"]) == {"gaussian"}
    at.number_input(key="w.joint.ten_rho").set_value(0.5).run()
    assert {m.label: m.value for m in at.metric}["Total ρ spent"] == "3"
    at.number_input(key="w.joint.ten_rho").set_value(0.0).run()
    assert_clean(at)
    assert errors(at) and "ρ" in errors(at)[0]
