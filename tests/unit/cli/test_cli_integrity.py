"""Integrity at the command line's door: the cap follows the persons, zCDP survives the way out, every check
comes before the noise, ``--out`` appears whole or not at all, and blank list items are refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import cocoviz.cli.release
import cocoviz.pipeline.estimate
from cocoviz import load_release
from cocoviz.cli.main import main
from cocoviz.privacy.accounting import zcdp_epsilon
from cocoviz.release.ledger import Ledger


def args(levels: str, *more: str, out: str = "out") -> list[str]:
    return ["release", "persons.parquet", "--group", "hh", "--levels", levels, "--groups", "households.csv",
            "--max-size", "10", *more, "--out", out]  # fmt: skip


def test_the_cap_follows_the_persons_not_the_hierarchy(files, capsys):
    """Cap 3: state,county at ε 3, then state and county at ε 2 each were accepted (7 against 3)."""
    assert main(args("state,county", "--epsilons", "1,1,1", "--methods", "Hg,Hg,Hg", "--budget-cap", "3")) == 0
    capsys.readouterr()
    for levels, out in [("state", "a"), ("county", "b")]:
        assert main(args(levels, "--epsilons", "1,1", "--methods", "Hg,Hg", "--budget-cap", "3", out=out)) == 2
        assert "budget cap is ε = 3 per dataset" in capsys.readouterr().err
        assert not Path(out).exists()
    (entry,) = Ledger().entries().itertuples()
    assert entry.status == "complete"
    # The same persons read through another path spelling are the same dataset.
    Path("sub").mkdir()
    assert main([*args("state", "--epsilons", "1,1", "--methods", "Hg,Hg", "--budget-cap", "3", out="c")[:1],
                 "sub/../persons.parquet", *args("state", "--epsilons", "1,1", "--methods", "Hg,Hg",
                                                 "--budget-cap", "3", out="c")[2:]]) == 2  # fmt: skip
    assert "budget cap" in capsys.readouterr().err


def test_a_zcdp_release_writes_its_files_and_a_readable_ledger(files, capsys):
    rhos = ("--rhos", "0.125,0.125,0.125", "--methods", "Hg,Hg,Hc")
    assert main(args("state,county", *rhos)) == 0, capsys.readouterr().err
    assert main(args("state,county", "--epsilons", "1,1,1", "--methods", "Hg,Hg,Hc", out="pure")) == 0
    assert main(args("state,county", *rhos, out="again")) == 0
    out = capsys.readouterr().out
    assert "ρ = 0.375 (ε = " in out
    report = json.loads(Path("out/budget.json").read_text())
    assert report["accounting"] == "zCDP" and report["total_rho"] == 0.375 and report["delta"] == 1e-10
    assert all(m["noise"].startswith("discrete Gaussian, σ") for m in report["measurements"])
    assert all(m["rho"] == 0.125 and m["sensitivity_norm"] == "L2" for m in report["measurements"])
    assert "Laplace" not in json.dumps(report["measurements"])
    assert report["parameters"]["epsilons"] is None and report["parameters"]["rhos"] == [0.125] * 3
    assert len(report["parameters"]["sigma2s"]) == 3
    markdown = Path("out/budget.md").read_text()
    assert markdown.startswith("# Privacy budget: secure release, ρ = 0.375 (ρ-zCDP") and "| 0.125 |" in markdown
    assert load_release("out/release.parquet").budget.total_rho == 0.375
    ledger = Ledger()
    entries = ledger.entries()  # was a TypeError once a zCDP draw was recorded
    assert entries["status"].tolist() == ["complete"] * 3
    assert entries["accounting"].tolist() == ["zCDP", "pure-ε", "zCDP"]
    assert entries["rho"].tolist()[::2] == [0.375, 0.375] and entries["delta"].tolist()[::2] == [1e-10, 1e-10]
    assert "discrete Gaussian σ=" in entries["measurements"][0]
    assert ledger.to_csv().count("\n") == 4
    # Composed: ρ adds (the pure draw as ε²/2 ... or its ε added to the zCDP reading), never readings added.
    eps, rho, delta = ledger.totals(entries["dataset"][0])
    zcdp_only = zcdp_epsilon(0.75, 1e-10)
    assert eps == pytest.approx(min(zcdp_epsilon(0.75 + 3**2 / 2, 1e-10), 3 + zcdp_only))
    assert eps < 2 * entries["epsilon"][0] + 3 and rho == pytest.approx(0.75 + 4.5)


def test_a_zcdp_plan_file_release(files, capsys):
    Path("plan.json").write_text(json.dumps({"rhos": [0.125, 0.125, 0.125], "methods": ["Hg", "Hg", "Hc"],
                                             "p": [None, None, None], "max_size": 10}))  # fmt: skip
    argv = ["release", "persons.parquet", "--group", "hh", "--levels", "state,county", "--groups", "households.csv",
            "--plan", "plan.json", "--out", "out"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    assert json.loads(Path("out/budget.json").read_text())["accounting"] == "zCDP"
    assert Ledger().entries()["status"].tolist() == ["complete"]


def _no_noise(*a, **k):
    raise AssertionError("noise drawn after a refusal")


def test_an_unwritable_out_or_no_room_refuses_before_the_ledger_and_the_noise(files, capsys, monkeypatch):
    monkeypatch.setattr(cocoviz.pipeline.estimate, "estimate", _no_noise)
    real_mkdir = Path.mkdir

    def read_only(self, *a, **k):
        if ".partial-" in self.name:
            raise PermissionError(13, "Read-only file system")
        return real_mkdir(self, *a, **k)

    monkeypatch.setattr(Path, "mkdir", read_only)
    assert main(args("state", "--epsilons", "1,1", "--methods", "Hg,Hg")) == 2
    assert "cannot write in" in capsys.readouterr().err
    monkeypatch.setattr(Path, "mkdir", real_mkdir)
    monkeypatch.setattr(cocoviz.cli.release.shutil, "disk_usage", lambda p: type("U", (), {"free": 10})())
    assert main(args("state", "--epsilons", "1,1", "--methods", "Hg,Hg")) == 2
    assert "bytes free" in capsys.readouterr().err
    assert Ledger().entries().empty and not Path("out").exists()
    assert not list(Path(".").glob(".out.partial-*"))


def test_a_failure_while_writing_leaves_no_out_and_an_incomplete_entry(files, capsys, monkeypatch):
    def broken(path, text):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cocoviz.cli.release, "write_text", broken)
    assert main(args("state", "--epsilons", "1,1", "--methods", "Hg,Hg")) != 0
    assert not Path("out").exists() and not list(Path(".").glob(".out.partial-*"))
    (entry,) = Ledger().entries().itertuples()
    assert entry.status == "incomplete" and "No space left" in entry.note


def test_a_killed_release_leaves_a_named_partial_folder_the_next_run_removes(files, capsys):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    leftover = Path(f".out.partial-{dead.pid}")
    leftover.mkdir()
    (leftover / "release.parquet").write_bytes(b"half")
    Path("out").mkdir()  # an empty --out (as a kill before the rename leaves it) is taken whole
    assert main(args("state", "--epsilons", "1,1", "--methods", "Hg,Hg")) == 0
    captured = capsys.readouterr()
    assert f"removed {leftover.absolute()}" in captured.err
    assert not leftover.exists() and sorted(p.name for p in Path("out").iterdir()) == [
        "accuracy.parquet",
        "budget.json",
        "budget.md",
        "release.parquet",
    ]


@pytest.mark.parametrize(
    "flags, message",
    [
        (("--epsilons", "1,,1", "--methods", "Hg,Hg,Hg"), "--epsilons '1,,1': item 2 is blank"),
        (("--epsilons", "1,1,1,", "--methods", "Hg,Hg,Hg"), "item 4 is blank"),
        (("--epsilons", "1,1,1", "--methods", "Hg,,Hg"), "--methods 'Hg,,Hg': item 2 is blank"),
        (("--rhos", "0.1,0.1,0.1", "--epsilons", "1,1,1", "--methods", "Hg,Hg,Hg"), "got --epsilons, --rhos"),
        (("--epsilons", "1,1,1", "--delta", "1e-6", "--methods", "Hg,Hg,Hg"), "--delta is the δ"),
    ],
)
def test_blank_items_and_two_budgets_are_refused(files, capsys, flags, message):
    assert main(args("state,county", *flags)) == 2
    assert message in capsys.readouterr().err
    assert not Path("out").exists() and Ledger().entries().empty


_KILLED_RUN = """
import os, signal, sys
import cocoviz.cli.release as r
from cocoviz.cli.main import main
real = r.write_text
def killed(path, text):
    real(path, text)
    os.kill(os.getpid(), signal.SIGKILL)  # kill -9 between release.parquet + budget.json and budget.md
r.write_text = killed
sys.exit(main(sys.argv[1:]))
"""


def test_a_kill_9_mid_write_leaves_the_old_state_a_named_leftover_and_an_incomplete_entry(files, capsys):
    import os

    argv = args("state", "--epsilons", "1,1", "--methods", "Hg,Hg")
    root = str(Path(cocoviz.cli.release.__file__).parents[2])  # this checkout's cocoviz, not an installed one
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    killed = subprocess.run([sys.executable, "-c", _KILLED_RUN, *argv], capture_output=True, env=env)
    assert killed.returncode == -9
    assert not Path("out").exists()  # the folder did not appear half-written
    (leftover,) = Path(".").glob(".out.partial-*")  # named by its process
    assert (leftover / "release.parquet").exists() and not (leftover / "budget.md").exists()
    (entry,) = Ledger().entries().itertuples()
    assert entry.status == "incomplete"  # its process is gone: its ε counts as spent
    assert main(argv) == 0  # a rerun into the same --out is not refused: the leftover is removed
    assert "removed" in capsys.readouterr().err and not leftover.exists()
    assert sorted(p.name for p in Path("out").iterdir()) == [
        "accuracy.parquet",
        "budget.json",
        "budget.md",
        "release.parquet",
    ]
