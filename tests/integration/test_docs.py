"""The documentation: the API reference covers cocoviz.__all__ with examples that run; the helpers' doctests."""

from __future__ import annotations

import doctest
import importlib.util
import re
from pathlib import Path

import pytest

import cocoviz

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference" / "index.md"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem + "_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_public_name_has_a_reference_entry_with_an_example():
    text = REFERENCE.read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## `(\w+)`\n(.*?)(?=^## |\Z)", text, re.S | re.M))
    missing = [name for name in cocoviz.__all__ if name not in sections]
    assert not missing, f"no reference section for {missing}"
    for name in cocoviz.__all__:
        assert f"::: cocoviz.{name}\n" in sections[name], name
        assert ">>> " in sections[name], f"the reference entry of {name} has no example"


@pytest.mark.slow
def test_the_reference_examples_run_in_order():
    text = REFERENCE.read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, {}, "reference", str(REFERENCE), 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


@pytest.mark.parametrize("path", ["benchmarks/results.py", "scripts/griffe_doctests.py"])
def test_the_docs_helpers_doctests(path):
    module = _module(ROOT / path)
    assert doctest.testmod(module, optionflags=FLAGS).failed == 0


def test_the_readme_is_short_and_links_the_guide():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    for page in ["docs/guide/releasing.md", "docs/explanation/layout.md", "mkdocs serve"]:
        assert page in text


def test_the_latest_table_keeps_the_newest_row_per_target(tmp_path):
    results = _module(ROOT / "benchmarks/results.py")
    results.record("b", target="t", figure="2 s", goal="<= 1 s", met=False, folder=tmp_path)
    results.record("b", target="t", figure="0.5 s", goal="<= 1 s", met=True, folder=tmp_path)
    results.record("b", target="u", figure="3", goal="", met=None, folder=tmp_path)
    rows = results.latest_rows(tmp_path)
    assert [(row["target"], row["figure"]) for row in rows] == [("t", "0.5 s"), ("u", "3")]
    assert {"date", "commit", "machine", "wall_s", "cpu_s", "peak_gb", "met", "command"} <= set(rows[0])
    assert not list(tmp_path.glob("*.tmp"))


def test_the_latest_table_reads_both_file_forms(tmp_path):
    results = _module(ROOT / "benchmarks/results.py")
    results.record("a", target="t", figure="1 s", goal="<= 2 s", met=True, folder=tmp_path)
    rows = [
        {"case": "big", "wall_s": 3.0, "peak_gb": 1.5, "target": "<= 5 s", "met": True},
        {"case": "small", "wall_s": 0.1, "target": None, "met": None},  # kept for the record, not shown
    ]
    results.record_rows("b", rows, folder=tmp_path, size=7)
    shown = [(row["benchmark"], row["target"], row["figure"], row["goal"]) for row in results.latest_rows(tmp_path)]
    assert shown == [("a", "t", "1 s", "<= 2 s"), ("b", "case=big", "3 s, peak 1.50 GB", "<= 5 s")]
    table = results.latest_table(tmp_path)
    assert "| b | case=big | 3 s, peak 1.50 GB | <= 5 s | yes |" in table and "small" not in table
    assert not list(tmp_path.glob("*.tmp"))
