"""Explore's Downloads: the settings as a plan file, a Python script and the release command."""

from __future__ import annotations

import numpy as np

import cocoviz
from tests.support.app import assert_clean, new_app


def test_the_downloads_give_the_plan_script_and_command_that_reproduce_the_release(tmp_path, monkeypatch):
    at = new_app(**{"explore.tab": "Downloads", "cv.eps.0": 0.87})
    assert_clean(at)
    buttons = {b.proto.label: b for b in at.get("download_button")}
    assert {"Plan file (TOML)", "Python script"} <= set(buttons)
    assert any("python -m cocoviz release" in c.value and "--plan" in c.value for c in at.code)
    from cocoviz.datasets import load_dataset
    from cocoviz.plan.export import python_script
    from pages.common.downloads import load_lines

    # The script the page offers, run here, draws the release the page shows.
    tree = load_dataset("toy")
    options = dict(epsilons=[0.87, 1.0], methods=["Hc", "Hc"])
    info = type("Info", (), {"label": "toy"})()
    expected = cocoviz.estimate(tree, **options, max_size=at.session_state["cv.K.toy"], seed=0)
    script = python_script(expected.plan, load_lines(tree, info), seed=0)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(script, "reproduce.py", "exec"), scope)  # noqa: S102 - the text under test
    for node in tree.nodes(1):
        assert np.array_equal(scope["release"].histogram(node), expected.histogram(node))
