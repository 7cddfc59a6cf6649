"""``python -m cocoviz release``: a secure release with its budget report and ledger entry; every refusal is
one line, exit 2, nothing written, nothing drawn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pandas as pd
import pytest

import cocoviz.pipeline.estimate
from cocoviz import Plan, load_measurements, load_release
from cocoviz.cli.main import main
from cocoviz.hierarchy.tree import node_label
from cocoviz.release.files.accuracy_file import load_accuracy
from cocoviz.release.ledger import Ledger
from cocoviz.release.release import Release
from tests.unit.cli.conftest import PERSONS


def release_args(*more: str, out: str = "out") -> list[str]:
    return [
        "release",
        "persons.parquet",
        "--group",
        "hh",
        "--levels",
        "state,county",
        "--groups",
        "households.csv",
        *more,
        "--out",
        out,
    ]


FLAGS = ("--epsilons", "1,1,0.5", "--methods", "Hg,Hg,Hc", "--max-size", "10")


def test_a_secure_release_writes_its_files_and_its_ledger_entry(files, capsys):
    assert main(release_args(*FLAGS)) == 0
    stdout = capsys.readouterr().out
    assert stdout.startswith("secure release: ε = 2.5 over 3 levels") and "out/budget.md" in stdout
    release = load_release(files / "out" / "release.parquet")
    assert release.is_consistent() and release.sampler.startswith("secure")
    assert release.plan.methods == ("Hg", "Hg", "Hc") and release.plan.max_size == 10
    report = json.loads((files / "out" / "budget.json").read_text())
    assert report["secure"] and report["total_epsilon"] == 2.5
    assert [(m["level_name"], m["query"], m["sensitivity"], m["epsilon"]) for m in report["measurements"]] == [
        ("(root)", "Hg", 1.0, 1.0),
        ("state", "Hg", 1.0, 1.0),
        ("county", "Hc[0..9]", 1.0, 0.5),
    ]
    assert all("person" in m["neighbours"] and "scale" in m["noise"] for m in report["measurements"])
    markdown = (files / "out" / "budget.md").read_text()
    assert "| 2 (county) | all 4 nodes | Hc[0..9] | 40 | 1 (L1) |" in markdown and "exploration" not in markdown
    (entry,) = Ledger().entries().itertuples()
    assert entry.status == "complete" and entry.epsilon == 2.5 and entry.label == "persons.parquet"
    assert entry.dataset == report["dataset"] and entry.files.count("out/") == 4
    accuracy = load_accuracy(files / "out" / "accuracy.parquet")
    assert accuracy.attrs["scope"] == "node" and accuracy.attrs["confidence"] == 0.9
    assert set(accuracy["level"]) == {0, 1, 2} and not accuracy.attrs["skipped"]
    assert accuracy.attrs["band"] == {0: "runs", 1: "runs", 2: "cells"}  # Hg levels use the runs by default
    assert accuracy.attrs["hg_levels"] == [0, 1] and "On Hg levels" in accuracy.attrs["note"]


def test_the_accuracy_file_holds_every_node_at_the_chosen_scope(files):
    argv = release_args(*FLAGS, "--confidence", "0.8", "--band-scope", "level", "--seed", "3", "--hg-band", "cells")
    assert main(argv) == 0
    release = load_release(files / "out" / "release.parquet")
    accuracy = load_accuracy(files / "out" / "accuracy.parquet")
    assert accuracy.attrs["scope"] == "level" and accuracy.attrs["confidence"] == 0.8
    assert accuracy.attrs["node_confidence"][2] == pytest.approx(0.8 ** (1 / 4))
    for level in range(3):
        for node in release.nodes(level):
            frame = release.intervals(node, 0.8, scope="level")
            label = node_label(node)
            rows = accuracy[(accuracy["level"] == level) & (accuracy["node"] == label)]
            full = frame.set_index("size").loc[rows["size"]]
            assert (full["cumulative_low"].to_numpy() == rows["cumulative_low"].to_numpy()).all()
            assert (full["count_high"].to_numpy() == rows["count_high"].to_numpy()).all()


def test_the_accuracy_file_bounds_hg_levels_from_the_runs(files):
    measurements_path = files / "noisy.parquet"
    argv = release_args(*FLAGS, "--seed", "5", "--measurements", str(measurements_path))
    assert main(argv) == 0
    release = load_release(files / "out" / "release.parquet")
    measurements = load_measurements(measurements_path)
    accuracy = load_accuracy(files / "out" / "accuracy.parquet")
    assert accuracy.attrs["band"] == {0: "runs", 1: "runs", 2: "cells"}
    for level in range(3):
        for node in release.nodes(level):
            frame = release.intervals(node, measurements=measurements)
            assert frame.attrs["band"] == ("runs" if level < 2 else "cells")
            rows = accuracy[(accuracy["level"] == level) & (accuracy["node"] == node_label(node))]
            full = frame.set_index("size").loc[rows["size"]]
            assert (full["cumulative_high"].to_numpy() == rows["cumulative_high"].to_numpy()).all()


def test_a_bad_confidence_is_refused_before_anything_is_drawn(files, capsys):
    assert main(release_args(*FLAGS, "--confidence", "1.5")) == 2
    assert "confidence" in capsys.readouterr().err and not (files / "out").exists()


def test_a_seeded_release_is_labelled_exploration_and_not_recorded(files, capsys):
    assert main(release_args(*FLAGS, "--seed", "4")) == 0
    assert "exploration, not for release" in capsys.readouterr().out
    assert json.loads((files / "out" / "budget.json").read_text())["kind"] == "exploration, not for release"
    assert "Exploration, not for release" in (files / "out" / "budget.md").read_text()
    assert load_release(files / "out" / "release.parquet").sampler.startswith("fast")
    assert Ledger().entries().empty


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["release", "persons.parquet", "--group", "hh", "--levels", "state,county", *FLAGS, "--out", "out"],
         "needs public G per region: give --groups"),
        (release_args("--epsilons", "1,1,1", "--methods", "Hg,Hg,Hc", "--max-size", "data"),
         "K read from the private data"),
        (release_args(*FLAGS, "--plan", "plan.toml"), "not both (--epsilons, --methods, --max-size given)"),
        (release_args("--epsilons", "1,x,1", "--methods", "Hg,Hg,Hc"), "--epsilons takes comma-separated numbers"),
        (release_args("--epsilons", "1,1", "--methods", "Hg,Hg,Hg"), "epsilons has 2 entries"),
        (release_args("--epsilons", "1,1,0", "--methods", "Hg,Hg,Hg"), "ε of level 2"),
        (release_args("--methods", "Hg,Hg,Hg"), "give one budget"),
        (release_args(*FLAGS, "--budget-cap", "-1"), "budget cap must be a finite ε > 0"),
        (release_args(*FLAGS, "--seed", "1", "--budget-cap", "9"), "ledger does not record"),
        (release_args(*FLAGS, "--table", "persons"), "--table and --query are for a database URL"),
        (["release", "postgresql://h/db", "--group", "hh", "--levels", "state", "--groups", "households.csv",
          *FLAGS, "--out", "out"], "give its --table or its --query"),
        (release_args(*FLAGS, "--levels", "state,nowhere"), "missing column(s) ['nowhere']"),
        (release_args(*FLAGS, out="missing/out"), "does not exist"),
    ],
)  # fmt: skip
def test_every_refusal_is_one_line_exit_2_nothing_written(files, capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (files / "out").exists() and Ledger().entries().empty


def test_a_taken_folder_and_a_passed_cap_refuse_before_any_noise(files, capsys, monkeypatch):
    assert main(release_args(*FLAGS, "--budget-cap", "4")) == 0
    capsys.readouterr()
    assert main(release_args(*FLAGS, "--budget-cap", "4")) == 2
    assert "is not empty" in capsys.readouterr().err

    def no_noise(*args, **kwargs):
        raise AssertionError("noise drawn after a refusal")

    monkeypatch.setattr(cocoviz.pipeline.estimate, "estimate", no_noise)
    assert main(release_args(*FLAGS, "--budget-cap", "4", out="again")) == 2
    assert "budget cap is ε = 4 per dataset" in capsys.readouterr().err
    assert not (files / "again").exists() and len(Ledger().entries()) == 1


def test_a_failure_between_the_draw_and_the_files_leaves_an_incomplete_entry(files, capsys, monkeypatch):
    seen = []

    def broken_save(self, path):
        seen.append(Ledger().entries()["status"].tolist())  # the draw is recorded before its files
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Release, "save", broken_save)
    assert main(release_args(*FLAGS)) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert seen == [["started"]]
    (entry,) = Ledger().entries().itertuples()
    assert entry.status == "incomplete" and "No space left" in entry.note and entry.epsilon == 2.5
    assert not (files / "out").exists()


def test_a_plan_file_drives_the_release(files, capsys):
    assert main(release_args(*FLAGS, "--seed", "0", out="first")) == 0
    plan = load_release(files / "first" / "release.parquet").plan
    plan.save(files / "plan.toml")
    (files / "mine.json").write_text('{"epsilons": [0.5, 0.5, 2], "methods": ["Hg", "Hc", "Hg"], "max_size": 6}')
    assert main(release_args("--plan", "plan.toml")) == 0
    assert load_release(files / "out" / "release.parquet").plan == plan
    assert main(release_args("--plan", "mine.json", out="mine")) == 0
    mine = load_release(files / "mine" / "release.parquet").plan
    assert mine == Plan.build(plan.shape, epsilons=[0.5, 0.5, 2], methods=["Hg", "Hc", "Hg"], max_size=6)
    assert Ledger().entries()["epsilon"].tolist() == [2.5, 3.0]


def test_a_release_killed_mid_draw_leaves_its_entry_incomplete(files):
    """A real `python -m cocoviz release` process, killed while the secure sampler draws 70M cells."""
    argv = release_args("--epsilons", "1,1,1", "--methods", "Hc,Hc,Hc", "--max-size", "10000000")
    child = subprocess.Popen([sys.executable, "-m", "cocoviz", *argv], cwd=files, env={**os.environ})
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            if (files / "ledger.sqlite").exists() and not Ledger().entries().empty:
                break
            time.sleep(0.05)
        assert child.poll() is None, "the release ended before it could be killed"
        assert Ledger().entries()["status"].tolist() == ["started"]
    finally:
        child.kill()
        child.wait()
    (entry,) = Ledger().entries().itertuples()
    assert entry.status == "incomplete" and entry.epsilon == 3.0
    assert not (files / "out" / "budget.json").exists()


@pytest.mark.postgres
@pytest.mark.skipif(
    "COCOVIZ_TEST_POSTGRES" not in os.environ,
    reason="no PostgreSQL: COCOVIZ_TEST_POSTGRES is set by scripts/test.sh, which starts one",
)
def test_a_release_from_postgresql_is_the_release_from_the_file(files, capsys):
    # The README's second path: the persons table in the database, aggregated there; the same hierarchy as
    # the file gives, so the same plan, budget and consistency.
    import psycopg

    url = os.environ["COCOVIZ_TEST_POSTGRES"]
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("DROP TABLE IF EXISTS cli_persons")
        con.execute("CREATE TABLE cli_persons (hh bigint, state text, county text)")
        with con.cursor().copy("COPY cli_persons FROM STDIN") as copy:
            for row in PERSONS.itertuples(index=False):
                copy.write_row(list(row))
    argv = release_args(*FLAGS, out="from_db")
    argv[1:2] = [url, "--table", "cli_persons"]
    assert main(argv) == 0, capsys.readouterr().err
    assert main(release_args(*FLAGS, out="from_file")) == 0
    from_db = load_release(files / "from_db" / "release.parquet")
    from_file = load_release(files / "from_file" / "release.parquet")
    assert from_db.plan == from_file.plan and from_db.budget.total == from_file.budget.total == 2.5
    assert from_db.is_consistent() and from_db.sampler.startswith("secure")
    assert len(Ledger().entries()) == 2


def test_the_noisy_measurement_file_beside_the_release(files, capsys):
    from cocoviz import load_measurements, post_process

    args = ("--total-epsilon", "0.7", "--split", "leaves", "--methods", "Hg,Hg,Hc", "--max-size", "10")
    assert main(release_args(*args, "--measurements", "out/measurements.parquet")) == 0
    assert "out/measurements.parquet" in capsys.readouterr().out
    release = load_release(files / "out" / "release.parquet")
    assert release.budget.total == 0.7 and release.plan.epsilons[2] > release.plan.epsilons[0]
    measurements = load_measurements(files / "out" / "measurements.parquet")
    assert measurements.budget.sampler.startswith("secure") and measurements.plan == release.plan
    assert post_process(release.plan, measurements).to_frame().equals(release.to_frame())
    (entry,) = Ledger().entries().itertuples()
    assert entry.status == "complete" and "measurements.parquet" in entry.files
    # Seeded: the same release as without the file (the one-call path and measure + post_process agree).
    assert main(release_args(*FLAGS, "--seed", "3", "--measurements", "m.parquet", out="a")) == 0
    assert main(release_args(*FLAGS, "--seed", "3", out="b")) == 0
    a, b = (load_release(files / d / "release.parquet") for d in "ab")
    assert a.to_frame().equals(b.to_frame()) and (files / "m.parquet").exists()
    # A taken measurement file refuses before anything is drawn or written.
    assert main(release_args(*FLAGS, "--seed", "3", "--measurements", "m.parquet", out="c")) == 2
    assert "already holds" in capsys.readouterr().err and not (files / "c").exists()
    assert main(release_args(*FLAGS, "--total-epsilon", "2", out="d")) == 2
    assert "got --epsilons, --total-epsilon" in capsys.readouterr().err


def test_k_from_hg_spends_no_epsilon_and_states_its_truncation(files, capsys):
    argv = release_args("--epsilons", "1,1,0.5", "--methods", "Hg,Hg,Hc", "--max-size", "10", "--k-select", "from-hg")
    assert main(argv) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith("secure release: ε = 2.5 over 3 levels")  # no ε_K
    release = load_release(files / "out" / "release.parquet")
    assert release.plan.k_select == "from-hg" and release.plan.k_source_level() == 1 and release.is_consistent()
    markdown = (files / "out" / "budget.md").read_text()
    assert "K from the noisy Hg of level 1 (post-processing, no ε)" in markdown
    assert "truncates with probability ≤ 1e-06" in markdown
    (entry,) = Ledger().entries().itertuples()
    assert entry.status == "complete" and entry.epsilon == 2.5


@pytest.mark.parametrize(
    "more, message",
    [
        (("--methods", "Hc,Hg,Hc", "--k-select", "from-hg"), "k_select 'from-hg' takes K from an Hg level measured"),
        (("--methods", "Hg,Hg,Hc", "--k-select", "from-hg", "--k-epsilon", "0.1"), "k_select 'from-hg' spends none"),
    ],
)
def test_k_from_hg_refused_by_name_without_an_hg_level_above(files, capsys, more, message):
    assert main(release_args("--epsilons", "1,1,0.5", "--max-size", "10", *more)) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (files / "out").exists() and not Ledger().entries().shape[0]


def test_k_by_noisy_max_on_the_command_line_adds_its_epsilon(files, capsys):
    more = ("--k-select", "noisy-max", "--k-epsilon", "0.1", "--k-beta", "1e-3")
    assert main(release_args(*FLAGS, *more)) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith("secure release: ε = 2.6 over 3 levels")
    plan = load_release(files / "out" / "release.parquet").plan
    assert (plan.k_select, plan.k_epsilon, plan.k_beta, plan.max_size) == ("noisy-max", 0.1, 1e-3, 10)


def test_stated_errors_are_written_only_on_request(files, capsys):
    """``--stated-errors`` adds the experimental statements to the release file; the released numbers are the
    same with or without them."""
    assert main(release_args(*FLAGS, "--seed", "4", out="plain")) == 0
    assert main(release_args(*FLAGS, "--seed", "4", "--stated-errors", out="stated")) == 0
    plain, stated = (load_release(files / out / "release.parquet") for out in ("plain", "stated"))
    pd.testing.assert_frame_equal(plain.to_frame(), stated.to_frame())
    assert all(v is None for v in plain.stated) and all(v is not None for v in stated.stated)
    assert (stated.stated_errors(("CA",))["stated_se"] > 0).all()


def test_the_plan_options_with_choices_are_flags_from_the_declared_table(files, capsys):
    more = ("--consistency", "none", "--merge", "average", "--k-beta-scope", "release", "--seed", "0")
    more += ("--k-select", "noisy-max", "--k-epsilon", "0.1")
    assert main(release_args(*FLAGS, *more)) == 0, capsys.readouterr().err
    plan = load_release(files / "out" / "release.parquet").plan
    assert (plan.consistency, plan.merge, plan.k_beta_scope) == ("none", "average", "release")
    assert main(release_args("--plan", "plan.toml", "--merge", "average", out="other")) == 2
    assert "not both (--merge given)" in capsys.readouterr().err
