"""Experiments tao-e4 and tao-e5 on the stub loader's small trees (seconds)."""

from __future__ import annotations

import numpy as np
import pytest

from cocoviz.experiments import EXPERIMENTS, run_experiment
from tests.unit.experiments.test_experiments import stub_loader


@pytest.mark.slow
def test_e4_compares_methods_and_priors_per_county(tmp_path):
    result = run_experiment("tao-e4", out=tmp_path, trials=2, epsilons=[1.0], max_size=200, loader=stub_loader)
    summary = result.frames["summary"]
    assert len(summary) == 6 and (summary["trials"] == 2).all()
    assert summary["config"].str.contains("not private").sum() == 1  # the truth prior is labelled
    truth = summary[summary["config"].str.contains("truth")]["emd"].iloc[0]
    uniform = summary[summary["config"] == "Hcp · uniform"]["emd"].iloc[0]
    assert truth <= uniform  # the true histogram as prior is the best any prior can do
    trials = result.frames["trials"]
    assert set(trials["node"].str.count("/")) == {1} and (trials["emd"] >= 0).all()
    assert "tao-e4" in EXPERIMENTS and (tmp_path / "tao-e4" / "table.md").exists()


@pytest.mark.slow
def test_e5_reports_coverage_with_and_without_the_parent_rule(tmp_path):
    result = run_experiment("tao-e5", out=tmp_path, trials=2, epsilons=[1.0], max_size=200, loader=stub_loader)
    cov = result.frames["coverage"]
    parent = cov[cov["prior"] == "parent"]
    assert set(parent["parent_rule"]) == {True, False}
    assert np.all((cov["covered"] >= 0) & (cov["covered"] <= 1))
    summary = result.frames["summary"]
    assert set(summary["consistency"]) == {"top-down", "none"} and set(summary["prior"]) == {"parent", "previous"}
