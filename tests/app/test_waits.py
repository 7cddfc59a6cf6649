"""Honest waits (issue 25): estimates calibrated on this machine, and a rerun that would only reproduce a
shipped finding says so and offers a new seed."""

from __future__ import annotations

import copy
import time

from tests.support.app import assert_clean, new_app


def test_the_probe_measures_this_machine_and_runs_teach_the_estimate(monkeypatch):
    from pages.common import calibration

    monkeypatch.delenv("COCOVIZ_TIMING")
    assert calibration.probe_rate() > 0
    default = 1e12
    assert calibration.fast_rate(default) == default or calibration.fast_rate(default) < default
    for _ in range(100):  # the background probe replaces the fixed rate
        if calibration.fast_rate(default) != default:
            break
        time.sleep(0.1)
    assert calibration.fast_rate(default) < default
    assert "at this machine's speed, measured" in calibration.describe()
    before = calibration.factor("test-kind")
    calibration.observe("test-kind", estimated=2.0, actual=4.0)
    assert before == 1.0 and calibration.factor("test-kind") == 2.0
    calibration.observe("test-kind", estimated=2.0, actual=2.0)
    assert calibration.factor("test-kind") == 1.5  # the median of the runs kept
    assert "the last 2 runs here took 1.5 times as long as that speed predicts" in calibration.describe("test-kind")
    assert "×" not in calibration.describe("test-kind")  # plain words, nothing to decode


def test_an_outlier_run_never_teaches_the_calibration_more_than_the_bound(monkeypatch):
    from pages.common import calibration

    monkeypatch.delenv("COCOVIZ_TIMING")
    calibration.observe("outlier-kind", estimated=1.0, actual=1e5)  # a run slowed 100,000× by load
    assert calibration.factor("outlier-kind") == calibration.MAX_FACTOR
    for _ in range(2):
        calibration.observe("outlier-kind", estimated=1.0, actual=1.1)
    assert calibration.factor("outlier-kind") == 1.1  # two typical runs outvote it at once


def test_a_slow_past_run_never_gates_a_change_of_epsilon_on_the_default_release(monkeypatch):
    from pages.common import calibration

    monkeypatch.delenv("COCOVIZ_TIMING")
    state = calibration._state()
    saved = {k: copy.deepcopy(v) for k, v in state.items() if k != "lock"}
    try:
        for _ in range(calibration.WINDOW):  # every past release here was slowed by contention
            calibration.observe("release", estimated=0.4, actual=0.4 * 1e5)
        at = new_app(**{"cv.eps.0": 0.57})
        assert_clean(at)
        assert not any("estimated to take" in w.value for w in at.warning)  # no "Compute it anyway" gate
        assert not any(b.key == "explore.confirm" for b in at.button)
    finally:
        state.update(saved)


def test_a_rerun_of_the_shipped_finding_says_so_and_offers_a_new_seed():
    from cocoviz.experiments.findings import read_finding

    meta = read_finding("methods").meta
    at = new_app("pages/methods.py", dataset=meta["dataset"])
    assert_clean(at)
    assert any("reproduce the shipped finding" in i.value for i in at.info)
    assert any("estimated" in i.value and "machine" in i.value for i in at.info)  # the estimate says its basis
    at.button(key="methods.new_seed").click().run()
    assert_clean(at)
    assert at.session_state["cv.seed"] != meta["seed"]
    assert not any("reproduce the shipped finding" in i.value for i in at.info)


def test_an_explore_release_teaches_the_next_estimate_and_the_gate_states_this_machines_rate(monkeypatch):
    from pages.common import calibration

    monkeypatch.delenv("COCOVIZ_TIMING")
    at = new_app(**{"cv.eps.0": 0.63})  # a release no other test computes (test_memo takes 0.61)
    assert_clean(at)
    assert calibration.factor("release") > 0 and "release" in calibration._state()["ratio"]
    at.toggle(key="w.secure").set_value(True).run()
    assert any("cells/s on this machine" in w.value for w in at.warning)


def test_a_new_probe_rescales_what_runs_taught_so_that_the_load_counts_once(monkeypatch):
    from pages.common import calibration

    monkeypatch.delenv("COCOVIZ_TIMING")
    state = calibration._state()
    saved = {k: copy.deepcopy(v) for k, v in state.items() if k != "lock"}
    try:
        state.update(rate=None, default=100.0, ratio={"release": [2.0]})  # a run took 2x the fixed rate's estimate
        monkeypatch.setattr(calibration, "probe_rate", lambda: 50.0)  # the machine runs at half the fixed rate
        state["running"] = True
        calibration._run_probe(state)
        assert state["rate"] == 50.0 and not state["running"]
        assert calibration.factor("release") == 1.0  # the slower rate explains the slow run: not counted twice
    finally:
        state.update(saved)


def test_the_methods_page_states_calibrated_estimates_and_every_run_it_lets_through_teaches_them(monkeypatch):
    from pages.common import calibration

    monkeypatch.delenv("COCOVIZ_TIMING")
    state = calibration._state()
    saved = {k: copy.deepcopy(v) for k, v in state.items() if k != "lock"}
    taught = []
    real_observe = calibration.observe
    monkeypatch.setattr(
        calibration,
        "observe",
        lambda kind, *args, **kwargs: (taught.append(kind), real_observe(kind, *args, **kwargs)),
    )
    try:
        for _ in range(calibration.WINDOW):  # every past sweep here was slowed 100,000× by contention
            calibration.observe("sweep", estimated=0.1, actual=0.1 * 1e5)
        taught.clear()
        assert calibration.factor("sweep") == calibration.MAX_FACTOR  # the outliers teach the bound, no more
        at = new_app("pages/methods.py", **{"methods.trials": 1})  # Explore opens first (a release teaches)
        assert_clean(at)
        assert taught.count("sweep") == 1  # the quick sweep ran at once (no gate) and taught the calibration
        at.session_state["methods.tab"] = "Tables 3 and 4"
        at.run()
        assert_clean(at)
        (button,) = [b for b in at.button if b.key == "tables_run"]
        assert "≈" in button.label  # the tables' wait is estimated before the click
        note = next(i.value for i in at.info if "computed on request" in i.value)
        assert "this machine's speed" in note or "default speed" in note
        assert "×" not in note  # in plain words
        button.click().run()
        assert_clean(at)
        assert taught.count("sweep") == 2  # the clicked run teaches too: a gate never stops the learning
        assert any("Table 3 form" in m.value for m in at.markdown)
    finally:
        state.update(saved)


def test_a_run_estimated_before_the_probe_ended_does_not_teach_the_load_twice(monkeypatch):
    from pages.common import calibration

    monkeypatch.delenv("COCOVIZ_TIMING")
    state = calibration._state()
    saved = {k: copy.deepcopy(v) for k, v in state.items() if k != "lock"}
    try:
        state.update(rate=None, default=100.0, ratio={})
        rate = calibration.rate_in_use()  # the fixed rate: the probe has not ended
        assert rate == 100.0
        state.update(rate=25.0)  # the probe ends while the run is under way: the machine runs at a quarter
        calibration.observe("probe-race", estimated=1.0, actual=4.0, rate=rate)  # 4x the fixed rate's estimate
        assert calibration.factor("probe-race") == 1.0  # the quarter rate explains it all: not taught again
        calibration.observe("probe-race-2", estimated=1.0, actual=4.0)  # without the rate: taken as it is
        assert calibration.factor("probe-race-2") == 4.0
    finally:
        state.update(saved)
