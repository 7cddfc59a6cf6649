"""Sweeps that survive a kill: the journal of finished releases, resuming to the same frame, and result
folders that hold the previous results or the new ones, never a mix (issue 27, item 6)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cocoviz.experiments import result as result_module
from cocoviz.experiments import run_experiment, run_sweep
from cocoviz.experiments.journal import Journal
from tests.unit.experiments.test_experiments import small_tree, stub_loader, tiny_sweep

ROOT = Path(__file__).resolve().parents[3]


class _Stop(Exception):
    pass


def _stop_after(n: int):
    def progress(done: int, total: int) -> None:
        if done >= n:
            raise _Stop

    return progress


def _first_done(calls: list) -> int:
    return calls[0][0]


# ------------------------------------------------------------------------------------------ the journal
def test_a_torn_journal_record_is_dropped_and_the_file_cut_back(tmp_path):
    journal = Journal(tmp_path, "k")
    journal.record(0, np.arange(3))
    journal.record(5, np.arange(4))
    whole = journal.path.read_bytes()
    for cut in (1, 10, 60):
        journal.path.write_bytes(whole[:-cut])
        loaded = Journal(tmp_path, "k").load()
        assert list(loaded) == [0] and np.array_equal(loaded[0], np.arange(3))
        assert len(journal.path.read_bytes()) < len(whole) - cut + 1
    journal.record(5, np.arange(4))  # appends follow the last good record
    assert list(Journal(tmp_path, "k").load()) == [0, 5]


def test_a_corrupt_journal_record_is_not_trusted(tmp_path):
    journal = Journal(tmp_path, "k")
    journal.record(0, np.arange(3))
    journal.record(1, pd.DataFrame({"a": [1, 2]}))
    data = bytearray(journal.path.read_bytes())
    data[-30] ^= 0xFF  # a flipped byte in the last record's payload
    journal.path.write_bytes(bytes(data))
    assert list(Journal(tmp_path, "k").load()) == [0]


# ------------------------------------------------------------------------------------------ resuming
def test_an_interrupted_sweep_resumes_to_the_same_frame(tmp_path):
    sweep = tiny_sweep()
    whole = run_sweep(sweep)
    with pytest.raises(_Stop):
        run_sweep(sweep, journal=tmp_path, progress=_stop_after(7))
    calls: list = []
    resumed = run_sweep(sweep, journal=tmp_path, progress=lambda done, total: calls.append((done, total)))
    assert _first_done(calls) == 7 and calls[-1] == (24, 24)  # only the 17 unfinished releases ran
    pd.testing.assert_frame_equal(resumed, whole)
    other = run_sweep(tiny_sweep(seed=8), journal=tmp_path, progress=lambda done, total: calls.append((done, total)))
    assert calls[-25] == (0, 24)  # another sweep shares the folder but never the records
    assert not other.equals(whole)


_KILLED_SWEEP = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, "tests")
    from tests.unit.experiments.test_experiments import tiny_sweep
    from cocoviz.experiments import run_sweep
    run_sweep(tiny_sweep(), journal=sys.argv[1], progress=lambda done, total: time.sleep(0.05))
    print("finished", flush=True)
    """
)


@pytest.mark.slow
def test_a_sweep_killed_by_sigkill_resumes_to_the_same_frame(tmp_path):
    """kill -9 at an arbitrary instant, mid-record perhaps; the rerun with the same arguments continues."""
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_SWEEP, str(tmp_path)], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    journals: list[Path] = []
    deadline = time.monotonic() + 120
    while child.poll() is None and time.monotonic() < deadline:
        journals = list(tmp_path.glob("*.journal"))
        if journals and journals[0].stat().st_size > 20_000:  # a few releases recorded
            break
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert "finished" not in child.stdout.read(), "the sweep ended before the kill"
    child.stdout.close()
    assert journals
    calls: list = []
    resumed = run_sweep(tiny_sweep(), journal=tmp_path, progress=lambda done, total: calls.append((done, total)))
    assert 0 < _first_done(calls) < 24
    pd.testing.assert_frame_equal(resumed, run_sweep(tiny_sweep()))


def test_run_experiment_resumes_and_clears_its_journal(tmp_path):
    options = dict(trials=2, epsilons=[1.0], max_size=200, loader=stub_loader, datasets=["white"], workers=1, png=False)
    run_experiment("table3", out=tmp_path / "whole", **options)
    with pytest.raises(_Stop):
        run_experiment("table3", out=tmp_path / "cut", progress=_stop_after(3), **options)
    assert sorted(p.name for p in (tmp_path / "cut").iterdir()) == [".table3.journal"]
    calls: list = []
    run_experiment("table3", out=tmp_path / "cut", progress=lambda done, total: calls.append((done, total)), **options)
    assert _first_done(calls) == 3
    assert sorted(p.name for p in (tmp_path / "cut").iterdir()) == ["table3"]
    for name in ("trials.csv", "summary.csv", "table.md"):
        assert (tmp_path / "cut" / "table3" / name).read_bytes() == (tmp_path / "whole" / "table3" / name).read_bytes()


def test_error_by_size_resumes_to_the_same_curves(tmp_path):
    options = dict(trials=2, max_size=200, loader=stub_loader, datasets=["white"], workers=1, png=False)
    whole = run_experiment("figure1", **options)
    with pytest.raises(_Stop):
        run_experiment("figure1", out=tmp_path, progress=_stop_after(2), **options)
    calls: list = []
    resumed = run_experiment("figure1", out=tmp_path, progress=lambda d, t: calls.append((d, t)), **options)
    assert _first_done(calls) == 2
    for key, frame in whole.frames.items():
        pd.testing.assert_frame_equal(resumed.frames[key], frame)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, module, step",
    [
        ("wu-e1", "cocoviz.experiments.kselect", "estimate"),  # two trials per recorded step
        ("wu-e2", "cocoviz.experiments.wu", "_trial_rows"),
        ("wu-e3", "cocoviz.experiments.wu", "_trial_rows"),
        ("tao-e4", "cocoviz.experiments.tao_hcp", "_release"),
        ("tao-e5", "cocoviz.experiments.tao_hcp", "_release"),  # two calls per recorded step
        ("tao-e6", "cocoviz.experiments.tao", "ide"),
        ("tao-e7", "cocoviz.experiments.tao_joint", "run_joint_trial"),
        ("gauss", "cocoviz.experiments.gauss", "estimate"),  # two trials per recorded step
    ],
)
def test_experiments_with_their_own_loops_resume_to_the_same_frames(tmp_path, monkeypatch, name, module, step):
    import importlib

    mod = importlib.import_module(module)
    real, ran, limit = getattr(mod, step), [], [None]

    def counted(*args, **kwargs):
        ran.append(1)
        if limit[0] is not None and len(ran) > limit[0]:
            raise _Stop
        return real(*args, **kwargs)

    monkeypatch.setattr(mod, step, counted)
    options = dict(trials=2, epsilons=[0.5, 1.0], max_size=200, loader=stub_loader, png=False)
    if name == "tao-e6":
        options.update(loader=None, scale=0.01)
    whole = run_experiment(name, **options)
    calls_whole = len(ran)
    ran.clear()
    limit[0] = 2  # the third call is killed: the steps of the first two are recorded
    with pytest.raises(_Stop):
        run_experiment(name, out=tmp_path, **options)
    ran.clear()
    limit[0] = None
    resumed = run_experiment(name, out=tmp_path, **options)
    assert len(ran) == calls_whole - 2  # the recorded steps were not run again
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    timings = ["seconds", "median_seconds"]  # wu-e1 measures them: equal only in a recorded step
    for key, frame in whole.frames.items():
        pd.testing.assert_frame_equal(
            resumed.frames[key].drop(columns=timings, errors="ignore"), frame.drop(columns=timings, errors="ignore")
        )


# ------------------------------------------------------------------------------------------ whole folders
def test_a_failed_experiment_write_leaves_the_previous_results_whole(tmp_path, monkeypatch):
    """Issue 27 item 6: a write cut after trials.csv left new trials beside the old summary and config."""
    options = dict(trials=1, epsilons=[1.0], max_size=200, loader=stub_loader, datasets=["white"], workers=1, png=False)
    run_experiment("table3", out=tmp_path, seed=0, **options)
    folder = tmp_path / "table3"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert json.loads(before["config.json"])["seed"] == 0

    class FullDisk:
        @staticmethod
        def dumps(*args, **kwargs):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(result_module, "json", FullDisk)  # config.json, the last file, fails
    with pytest.raises(OSError, match="No space left"):
        run_experiment("table3", out=tmp_path, seed=1, **options)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".table3.journal", "table3"]  # kept to resume


def test_result_paths_name_the_final_folder(tmp_path):
    result = run_experiment("table3", trials=1, epsilons=[1.0], max_size=200, loader=stub_loader, datasets=["white"])
    written = result.write(tmp_path, png=False)
    assert all(p.parent == tmp_path / "table3" and p.is_file() for paths in written.values() for p in paths)


def test_a_stopped_findings_series_resumes_to_the_same_frame(tmp_path):
    from cocoviz.experiments import run_series
    from cocoviz.experiments.findings import COMPARISONS

    tree = small_tree("a").keep_levels(["state"])
    series = COMPARISONS["merging"].series(tree.depth + 1)
    options = dict(epsilons=[0.5, 1.0], trials=2, max_size=200, seed=3)
    whole = run_series(tree, series, **options)
    with pytest.raises(_Stop):
        run_series(tree, series, journal=tmp_path, progress=_stop_after(5), **options)
    calls: list = []
    resumed = run_series(tree, series, journal=tmp_path, progress=lambda d, t: calls.append((d, t)), **options)
    assert _first_done(calls) == 5 and calls[-1][0] == calls[-1][1]
    pd.testing.assert_frame_equal(resumed, whole)
