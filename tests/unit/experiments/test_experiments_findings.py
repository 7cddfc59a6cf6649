"""The comparison pages' series and their shipped findings (cocoviz.experiments.series and .findings)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from cocoviz.errors import ParameterError
from cocoviz.experiments import findings
from cocoviz.experiments.series import Series, run_series, summarize_series
from cocoviz.hierarchy import Hierarchy

ROOT = Path(__file__).resolve().parents[3]


def _tree() -> Hierarchy:
    counts = pd.DataFrame({"s": ["a", "a", "b", "b"], "size": [1, 3, 2, 6], "count": [5, 2, 4, 1]})
    return Hierarchy.from_counts(counts, size="size", count="count", levels=["s"])


def test_series_of_one_trial_share_their_noise():
    """Weighted and plain merging measure alike in a trial: their roots (measured, then matched) differ only
    by the merge, and no consistency at all keeps the root's own estimate."""
    tree = _tree()
    series = [
        Series(("Hc", "Hc"), "top-down", "weighted", "w"),
        Series(("Hc", "Hc"), "top-down", "average", "a"),
        Series(("Hc", "Hc"), "none", "weighted", "n"),
    ]
    frame = run_series(tree, series, epsilons=[0.5, 1.0], trials=3, max_size=10, seed=4)
    assert list(frame.columns[:2]) == ["series", "dataset"]
    assert sorted(set(frame["series"])) == ["a", "n", "w"]
    assert len(frame) == 3 * 2 * 3 * 3  # series × ε × trials × nodes
    again = run_series(tree, series, epsilons=[0.5, 1.0], trials=3, max_size=10, seed=4)
    pd.testing.assert_frame_equal(frame, again)  # reproducible from the seed
    summary = summarize_series(frame)
    assert (summary["trials"] == 3).all() and summary["se"].notna().all()


def test_comparisons_name_the_pages_defaults():
    merging = [s.name for s in findings.COMPARISONS["merging"].series(3)]
    assert merging == ["Hc×Hc×Hc, weighted", "Hc×Hc×Hc, plain", "Hg×Hg×Hg, weighted", "Hg×Hg×Hg, plain"]
    methods = findings.COMPARISONS["methods"].series(3)
    assert len(methods) == 9 and methods[-1].consistency == "bottom-up"
    assert len(findings.default_candidates(5)) == 3  # past 8 mixes: the two uniform ones and bottom-up


def test_finding_round_trip(tmp_path):
    found = findings.compute_finding("merging", tree=_tree(), dataset="toy-ab", trials=2, max_size=10)
    meta = found.meta
    assert (meta["dataset"], meta["trials"], meta["seed"], meta["max_size"]) == ("toy-ab", 2, 0, 10)
    assert meta["releases"] == 4 * 4 * 2 and meta["epsilons"] == [0.25, 0.5, 1.0, 2.0]
    assert meta["created"][:2] == "20" and meta["cocoviz"]
    assert set(found.summary["series"]) == set(meta["series"])
    paths = findings.write_finding(found, tmp_path)
    assert [p.name for p in paths] == ["merging.parquet", "merging.json"]
    back = findings.read_finding("merging", tmp_path)
    assert back.meta == meta
    pd.testing.assert_frame_equal(back.summary, found.summary, check_dtype=False)
    assert findings.read_finding("methods", tmp_path) is None
    with pytest.raises(ParameterError, match="unknown comparison"):
        findings.compute_finding("nosuch", tree=_tree())


@pytest.mark.parametrize("name", list(findings.COMPARISONS))
def test_shipped_findings_match_their_comparison(name):
    """The files in data/findings hold every default series of the page on the default data."""
    found = findings.read_finding(name)
    assert found is not None, f"data/findings/{name}.* missing: run python -m cocoviz findings"
    meta = found.meta
    assert meta["dataset"] == findings.DEFAULT_DATASET
    assert meta["series"] == [s.name for s in findings.COMPARISONS[name].series(len(meta["levels"]) + 1)]
    assert meta["epsilons"] == list(findings.DEFAULT_EPSILONS) and meta["trials"] == findings.DEFAULT_TRIALS
    assert set(found.summary["series"]) == set(meta["series"])
    assert set(found.summary["epsilon"]) == set(meta["epsilons"])
    assert (found.summary["trials"] == meta["trials"]).all()


@pytest.mark.slow
def test_findings_command(tmp_path):
    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "cocoviz", "findings", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
        )

    done = run("nosuch")
    assert done.returncode == 2 and "unknown comparison" in done.stderr and "Traceback" not in done.stderr
    done = run("merging", "--dataset", "toy", "--trials", "1", "--quiet", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "merging: 16 releases" in done.stdout
    assert findings.read_finding("merging", tmp_path).meta["dataset"] == "toy"
