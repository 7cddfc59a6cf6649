"""cocoviz.plan.export: the plan file loads back to the same plan, and the script reproduces the release."""

from __future__ import annotations

import numpy as np
import pytest

import cocoviz
from cocoviz.datasets import load_dataset
from cocoviz.plan import Plan
from cocoviz.plan.export import cli_line, plan_text, python_script


@pytest.mark.parametrize("kind", ["toml", "json"])
@pytest.mark.parametrize(
    "options",
    [
        dict(epsilons=[0.7, 1.3], methods=["Hg", "Hc"], max_size=12, consistency="top-down"),
        dict(rhos=[0.2, 0.4], methods=["Hc", "Hc"], max_size=9, merge="average"),
    ],
)
def test_the_plan_file_loads_back_to_the_same_plan(tmp_path, kind, options):
    tree = load_dataset("toy")
    plan = Plan.build(tree, **options)
    path = tmp_path / f"plan.{kind}"
    path.write_text(plan_text(plan, kind))
    again = Plan.load(path, plan.shape)
    assert again.options() == plan.options()
    assert again.cost().total == pytest.approx(plan.cost().total)


def test_the_script_reproduces_the_seeded_release(tmp_path, monkeypatch):
    tree = load_dataset("toy")
    options = dict(epsilons=[0.9, 1.1], methods=["Hc", "Hg"], max_size=12)
    expected = cocoviz.estimate(tree, **options, seed=5)
    script = python_script(
        Plan.build(tree, **options), ["from cocoviz.datasets import load_dataset", 'tree = load_dataset("toy")'], seed=5
    )
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(script, "reproduce.py", "exec"), scope)  # noqa: S102 - the text under test
    got = scope["release"]
    for level in range(tree.depth + 1):
        for node in tree.nodes(level):
            assert np.array_equal(got.histogram(node), expected.histogram(node))
    assert (tmp_path / "release.parquet").exists()


def test_the_command_line_names_the_plan_file_and_quotes_its_words():
    plan = Plan.build(load_dataset("toy"), epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=12)
    line = cli_line(plan, "my persons.parquet", group="hh", levels=["state", "county"], groups="groups.parquet")
    assert line == (
        "python -m cocoviz release 'my persons.parquet' --group hh --levels state,county "
        "--groups groups.parquet --plan plan.toml --out release"
    )
