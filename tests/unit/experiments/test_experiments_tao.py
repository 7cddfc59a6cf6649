"""Experiment tao-e6 (IDE on overlapping pairwise margins): a tiny run, its files and the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cocoviz.cli.main import main
from cocoviz.errors import ParameterError
from cocoviz.experiments import EXPERIMENTS, run_experiment
from cocoviz.experiments.tao import SHAPE, e6_priors, run_e6, synthetic_joint


def test_registered():
    assert "tao-e6" in EXPERIMENTS and EXPERIMENTS["tao-e6"].epsilons == (0.1, 1.0, 10.0)


def test_synthetic_joint_is_deterministic_and_positive():
    a, b = synthetic_joint(3), synthetic_joint(3)
    np.testing.assert_array_equal(a, b)
    assert a.size == np.prod(SHAPE) and a.sum() == pytest.approx(1) and np.all(a > 0)
    assert not np.allclose(synthetic_joint(3), synthetic_joint(4))
    priors = e6_priors(0)
    assert list(priors) == ["uniform", "same population, earlier", "similar", "mismatched", "similar, 6+ unseen"]
    unseen, reduce = priors["similar, 6+ unseen"]
    assert reduce and np.all(unseen.reshape(SHAPE)[5:] == 0)


def test_tiny_run_converges_on_exact_targets_and_is_seeded():
    trials, runs = run_e6(epsilons=[1.0], trials=2, households=800, sweeps=10)
    assert len(runs) == 2 * 5 * (1 + 2) and len(trials) == len(runs) * 31
    assert set(runs["stage1"]) == {"partition", "lp"}
    assert trials["partition"].iloc[:4].tolist() == ["prior", "size×tenure", "size×age", "tenure×age"]
    exact = runs[(runs["targets"] == "exact") & (runs["prior"] != "similar, 6+ unseen")]
    assert (exact["l1"] < 1e-6).all() and (exact["stage1_optimum"] < 1e-9).all()
    # The prior never saw sizes 6 and 7+: those households cannot be placed, the fit stays off.
    assert runs.loc[runs["prior"] == "similar, 6+ unseen", "l1"].min() > 0.05
    noisy = runs[runs["targets"] == "noisy"]
    assert (noisy["gap"] >= -1e-9).all()  # nothing beats the stage-1 optimum
    assert (noisy["last_cycle_change"] < 1e-6).all()  # settled within T (10 cycles)
    again = run_e6(epsilons=[1.0], trials=2, households=800, sweeps=10)[1]
    np.testing.assert_array_equal(runs["joint_error"], again["joint_error"])


def test_run_experiment_writes_its_files(tmp_path):
    result = run_experiment("tao-e6", out=tmp_path, trials=2, epsilons=[1.0], scale=0.2, png=False)
    assert set(result.frames) == {"trials", "runs", "summary"} and set(result.figures) == {"e6-l1", "e6-kl"}
    assert "stage-1 optimum" in result.markdown and "| ε = 1 | uniform |" in result.markdown
    folder = tmp_path / "tao-e6"
    config = json.loads((folder / "config.json").read_text())
    assert config["households"] == 1000 and config["iterations"] == 120 and config["trials"] == 2
    assert {"trials.csv", "runs.csv", "summary.csv", "table.md", "figures.html"} <= {p.name for p in folder.iterdir()}


def test_bad_options_are_refused():
    with pytest.raises(ParameterError, match="ε > 0"):
        run_e6(epsilons=[0.0])
    with pytest.raises(ParameterError, match="does not apply"):
        run_experiment("tao-e6", datasets=["housing"], trials=1)


def test_command_line(tmp_path, capsys):
    assert (
        main(
            [
                "experiment",
                "tao-e6",
                "--trials",
                "1",
                "--epsilons",
                "1",
                "--scale",
                "0.1",
                "--workers",
                "1",
                "--out",
                str(tmp_path),
                "--no-png",
                "--quiet",
            ]
        )
        == 0
    )
    assert "tao-e6:" in capsys.readouterr().out
    assert (tmp_path / "tao-e6" / "table.md").exists()


def test_the_lp_stage_one_closes_the_gap():
    runs = run_e6(epsilons=[1.0], trials=2, households=800, sweeps=40)[1]
    noisy = runs[(runs["targets"] == "noisy") & (runs["prior"] != "similar, 6+ unseen")]
    lp, part = noisy[noisy["stage1"] == "lp"], noisy[noisy["stage1"] == "partition"]
    assert (lp["gap"] <= 1e-2 * lp["stage1_optimum"]).all()  # at the paper's optimum, up to IPF's last steps
    assert part["gap"].mean() > 10 * max(lp["gap"].mean(), 1e-9)  # the per-partition fits stop above it
