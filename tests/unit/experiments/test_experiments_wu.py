"""Experiments wu-e2 and wu-e3 on a tiny stub tree (root / 4 states), end to end in seconds."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cocoviz.cli.main import main
from cocoviz.experiments import EXPERIMENTS, run_experiment
from cocoviz.experiments.wu import WU_STRATEGIES, node_errors
from cocoviz.hierarchy import Hierarchy


def tiny_tree(name: str = "x", *, scale=None, seed: int = 0) -> Hierarchy:
    """Root / 4 states, a geometric size law and a few large groups."""
    rng = np.random.default_rng([seed, sum(map(ord, name))])
    rows = []
    for state in ("CA", "OR", "WA", "NY"):
        sizes = np.concatenate([rng.geometric(0.4, 150), rng.integers(20, 200, 2)])
        s, n = np.unique(sizes, return_counts=True)
        rows.append(pd.DataFrame({"state": state, "county": f"{state}-0", "size": s, "count": n}))
    return Hierarchy.from_counts(pd.concat(rows), size="size", count="count", levels=["state", "county"])


@pytest.mark.parametrize("name", ["wu-e2", "wu-e3"])
def test_wu_experiment_runs_end_to_end(name, tmp_path):
    result = run_experiment(name, out=tmp_path, trials=2, epsilons=[1.0], max_size=300, loader=tiny_tree, png=False)
    trials, summary = result.frames["trials"], result.frames["summary"]
    assert set(trials["trial"]) == {0, 1} and set(trials["level"]) == {0, 1}
    assert (summary["trials"] == 2).all() and (summary["mean"] >= 0).all()
    assert set(WU_STRATEGIES) <= set(summary["method"])
    releases = {"Hc release", "Hg release"} & set(summary["method"])
    assert releases == ({"Hc release", "Hg release"} if name == "wu-e2" else set())
    if name == "wu-e2":  # Wu's private thresholds at the person level, the releases untruncated
        assert set(summary["tau"]) == {"none", "svt", "recursive"}
        assert set(summary.loc[summary["method"].str.endswith("release"), "tau"]) == {"none"}
    if name == "wu-e3":
        assert {"2", "4", "8", "16", "32", "none", "svt", "recursive"} <= set(summary["tau"])
        config = json.loads((tmp_path / name / "config.json").read_text())
        assert config["svt"]["share"] == 0.2 and config["recursive"] == {
            "beta": 0.1,
            "shift": 1.0,
            "share": 0.2,
            "ceiling": "max_size",
        }
    folder = tmp_path / name
    written = {p.name for p in folder.iterdir()}
    assert {"trials.csv", "summary.csv", "table.md", "figures.html", "config.json"} <= written
    config = json.loads((folder / "config.json").read_text())
    assert config["neighbours"] == ("person" if name == "wu-e2" else "record")
    assert "isotonic" in result.markdown and "J = 10" in result.markdown


def test_wu_experiment_is_seeded():
    a = run_experiment("wu-e2", trials=1, epsilons=[0.5], max_size=300, loader=tiny_tree).frames["trials"]
    b = run_experiment("wu-e2", trials=1, epsilons=[0.5], max_size=300, loader=tiny_tree).frames["trials"]
    pd.testing.assert_frame_equal(a, b)


def test_noise_free_limit_is_exact_without_truncation():
    """At ε = 1e6 every strategy and the releases answer P(j) exactly (person level, no τ)."""
    result = run_experiment("wu-e2", trials=1, epsilons=[1e6], max_size=300, loader=tiny_tree)
    summary = result.frames["summary"]
    assert summary.loc[summary["tau"] == "none", "mean"].max() < 1e-6


def test_node_errors_and_registry():
    assert node_errors(np.array([0.0, 3.0]), np.array([0, 4])) == (0.5, 0.125)
    assert {"wu-e2", "wu-e3"} <= set(EXPERIMENTS)


def test_cli_runs_wu_e3(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("cocoviz.experiments.data._default_loader", tiny_tree)
    monkeypatch.setattr("cocoviz.experiments.data._TREE_CACHE", {})  # keep the stub out of the shared cache
    assert (
        main(
            [
                "experiment",
                "wu-e3",
                "--trials",
                "1",
                "--epsilons",
                "1",
                "--datasets",
                "white",
                "--out",
                str(tmp_path),
                "--no-png",
                "--quiet",
                "--workers",
                "1",
                "--max-size",
                "300",
            ]
        )
        == 0
    )
    assert "wu-e3" in capsys.readouterr().out and (tmp_path / "wu-e3" / "table.md").exists()


def test_svt_rows_spend_the_same_epsilon_and_find_a_tau():
    """TruncSVT's share counts: at ε = 1e6 its τ is the 95 % point, so only truncation bias is left."""
    result = run_experiment("wu-e3", trials=1, epsilons=[1e6], max_size=300, loader=tiny_tree)
    s = result.frames["summary"]
    svt = s[(s["tau"] == "svt") & (s["J"] == 10) & (s["method"] == "identity") & ~s["isotonic"]]
    untruncated = s[(s["tau"] == "none") & (s["J"] == 10) & (s["method"] == "identity") & ~s["isotonic"]]
    assert len(svt) == 2 and (untruncated["mean"] < 1e-3).all()
    assert (svt["mean"] > 0).any()  # a τ below the largest sizes truncates P(10): bias, not noise
