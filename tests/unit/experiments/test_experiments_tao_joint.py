"""Experiment tao-e7 on the stub loader's small tree (seconds)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import logit

from cocoviz.experiments import EXPERIMENTS, experiment_names, run_experiment
from cocoviz.experiments.tao_joint import E7_CONFIGS, E7_PERTURB_SDS, E7_PERTURB_SEEDS, e7_configs, perturb_owner_rate
from tests.unit.experiments.test_experiments import stub_loader


@pytest.mark.slow
def test_e7_compares_priors_with_independent_margins_per_county(tmp_path):
    result = run_experiment("tao-e7", out=tmp_path, trials=2, epsilons=[1.0], max_size=200, loader=stub_loader)
    summary = result.frames["summary"]
    assert len(summary) == 3 * len(e7_configs()) and (summary["trials"] == 2).all()
    assert len(e7_configs()) == len(E7_CONFIGS) + len(E7_PERTURB_SDS) * len(E7_PERTURB_SEEDS)
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
    md = (tmp_path / "tao-e7" / "table.md").read_text()
    assert md.count("\n| 1.0 | ") == len(e7_configs()) + 1 + len(E7_PERTURB_SDS)  # the configs, then the ranges
    assert np.isclose(leaves.loc[E7_CONFIGS[0][0], "joint_vs_no_prior"], 0.0)


def test_perturbed_prior_shifts_the_owner_rate_by_size_class_alike_in_every_region():
    table = pd.DataFrame(
        {
            "county": ["x", "x", "x", "y", "y"],
            "size": [1, 2, 9, 2, 12],
            "owners": [6.0, 3.0, 2.0, 1.0, 5.0],
            "renters": [4.0, 1.0, 2.0, 3.0, 5.0],
        }
    )
    a = perturb_owner_rate(table, 0.2, seed=3)
    assert a.equals(perturb_owner_rate(table, 0.2, seed=3))  # seeded
    assert not a.equals(perturb_owner_rate(table, 0.2, seed=4))
    assert np.allclose(a["owners"] + a["renters"], table["owners"] + table["renters"])  # households kept
    assert ((a["owners"] > 0) & (a["renters"] > 0)).all()
    shift = logit(a["owners"] / (a["owners"] + a["renters"])) - logit(
        table["owners"] / (table["owners"] + table["renters"])
    )
    assert np.isclose(shift[1], shift[3]) and np.isclose(shift[2], shift[4])  # one shift per size class, every region
    assert not np.isclose(shift[0], shift[1])
    assert perturb_owner_rate(table, 0.0, seed=3).equals(table)
    # The spread grows with sd: the draws are sd times one standard normal vector.
    wide = perturb_owner_rate(table, 0.4, seed=3)
    wide_shift = logit(wide["owners"] / (wide["owners"] + wide["renters"])) - logit(
        table["owners"] / (table["owners"] + table["renters"])
    )
    assert np.allclose(wide_shift, 2 * shift)
