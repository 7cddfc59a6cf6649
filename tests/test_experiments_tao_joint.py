"""Experiment tao-e7 on the stub loader's small tree (seconds)."""

from __future__ import annotations

import numpy as np
from test_experiments import stub_loader

from cocoviz.experiments import EXPERIMENTS, experiment_names, run_experiment
from cocoviz.experiments.tao_joint import E7_CONFIGS


def test_e7_compares_priors_with_independent_margins_per_county(tmp_path):
    result = run_experiment("tao-e7", out=tmp_path, trials=2, epsilons=[1.0], max_size=200, loader=stub_loader)
    summary = result.frames["summary"]
    assert len(summary) == 3 * len(E7_CONFIGS) and (summary["trials"] == 2).all()
    leaves = summary[summary["level"] == 2].set_index("config")
    base, uniform, previous, truth = (leaves.loc[label] for label, _ in E7_CONFIGS)
    # Every configuration shares the two released margins: only the joint error differs.
    assert np.allclose(leaves["size_l1"], base["size_l1"]) and np.allclose(leaves["tenure_l1"], base["tenure_l1"])
    assert abs(uniform["joint_l1"] - base["joint_l1"]) < 0.01  # uniform is the no-prior table, up to ties
    assert truth["joint_l1"] < previous["joint_l1"] < base["joint_l1"]  # the size-dependent owner rate pays
    assert (leaves["joint_l1"] >= leaves["size_l1"] - 1e-12).all()
    assert summary["config"].str.contains("not private").sum() == 3  # the truth prior is labelled, every level
    trials = result.frames["trials"]
    assert set(trials["trial"]) == {0, 1} and (trials["joint_l1"] <= 2).all()
    assert "tao-e7" in EXPERIMENTS and "tao-e7" in experiment_names()
    assert (tmp_path / "tao-e7" / "table.md").read_text().count("\n| 1.0 |") == len(E7_CONFIGS)
