"""The comparison and Size × tenure pages refuse a number they cannot use, with a message, and compute nothing
with an earlier value; their defaults still draw."""

from __future__ import annotations

import pytest

from tests.support.app import assert_clean, errors, new_app, plotly_specs

MERGING, METHODS, JOINT = "pages/merging.py", "pages/methods.py", "pages/joint.py"
NOTHING = "Nothing is computed until these numbers are fixed"


def refused(at, message: str) -> bool:
    """The box's own message and the section's summary both name the problem."""
    errs = errors(at)
    return message in errs and any(e.startswith(NOTHING) and message in e for e in errs)


@pytest.mark.parametrize(
    "page, setting",
    [(MERGING, "merge.trials"), (METHODS, "methods.trials")],
)
def test_sweep_trials_refused_then_accepted(page, setting):
    at = new_app(page, **{f"cv.{setting}": 1})
    assert_clean(at)
    assert not errors(at) and plotly_specs(at)
    for typed in (0.0, 2.5, 101.0):
        at.number_input(key=f"w.{setting}").set_value(typed).run()
        assert_clean(at)
        assert refused(at, f"Trials N must be a whole number between 1 and 100, got {typed:g}")
        assert not plotly_specs(at)  # no sweep with the earlier N
        assert at.session_state[f"cv.{setting}"] == typed
    at.number_input(key=f"w.{setting}").set_value(2.0).run()
    assert_clean(at)
    assert not errors(at) and plotly_specs(at)


def test_methods_tables_refuse_a_bad_epsilon_or_trials():
    at = new_app(METHODS, **{"methods.tab": "Tables 3 and 4", "cv.methods.table_trials": 1})
    assert at.button(key="tables_run")  # valid defaults: the tables wait for the click
    at.number_input(key="w.methods.table_eps").set_value(-1.0).run()
    assert_clean(at)
    assert refused(at, "ε must be between 1e-06 and 1e+06, got -1")
    assert not at.get("button") and not any("Table 3 form" in m.value for m in at.markdown)
    at.number_input(key="w.methods.table_eps").set_value(1.0).run()
    at.number_input(key="w.methods.table_trials").set_value(2.5).run()
    assert refused(at, "Trials must be a whole number between 1 and 100, got 2.5")
    assert not at.get("button")


@pytest.mark.parametrize(
    "setting, message",
    [
        ("select.eps", "ε per level must be between 1e-06 and 1e+06, got 0"),
        ("select.eps_select", "ε of the selection must be between 1e-06 and 1e+06, got 0"),
    ],
)
def test_methods_selection_refuses_a_zero_epsilon(setting, message):
    at = new_app(METHODS, **{"methods.tab": "Private algorithm selection"})
    assert any("ε = 4.1" in i.value for i in at.info)  # valid defaults: the stated cost
    at.number_input(key=f"w.{setting}").set_value(0.0).run()
    assert_clean(at)
    assert refused(at, message)
    assert not at.info and not at.get("button")  # no cost, no run with the earlier ε


def test_methods_wu_refuses_zero_trials():
    at = new_app(METHODS, **{"methods.tab": "Choosing K and sum queries"})
    assert at.button(key="wu_run")
    at.number_input(key="w.wu.trials").set_value(0.0).run()
    assert_clean(at)
    assert refused(at, "Trials must be a whole number between 1 and 100, got 0")
    assert not at.get("button")


@pytest.mark.parametrize(
    "key, typed, message",
    [
        ("w.joint.size_eps", -1.0, "ε of the sizes must be between 1e-06 and 1e+06, got -1"),
        ("w.joint.ten_eps", 0.0, "ε of the tenure margin must be between 1e-06 and 1e+06, got 0"),
        ("w.seed", 2.5, "Seed must be a whole number between 0 and 2,147,483,647, got 2.5"),
    ],
)
def test_joint_refuses_with_a_message_and_draws_nothing(key, typed, message):
    at = new_app(JOINT)
    assert plotly_specs(at)
    at.number_input(key=key).set_value(typed).run()
    assert_clean(at)
    assert refused(at, message)
    assert not plotly_specs(at) and not at.metric
