"""The command line never shows a traceback for a user error: one line on stderr and a non-zero exit."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from cocoviz.cli import main

ROOT = Path(__file__).resolve().parents[3]


def run(*args: str) -> subprocess.CompletedProcess:
    """``python -m cocoviz ARGS`` in this process (``main`` as the entry point calls it), its exit status and output."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse's refusals
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


def test_the_entry_point_refuses_in_one_line_as_a_process():
    """One subprocess proves ``python -m cocoviz`` is the ``main`` the other tests call in-process."""
    done = subprocess.run(
        [sys.executable, "-m", "cocoviz", "data", "nosuch"], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "invalid choice" in done.stderr


def _bad_data_dir(tmp_path: Path) -> str:
    for name in ("toy.csv", "housing.parquet"):
        (tmp_path / name).write_bytes(b"garbage, not a table\n")
    return str(tmp_path)


@pytest.mark.parametrize(
    "args, words",
    [
        (["data", "housing", "--out", "/nonexistent/dir/x.parquet"], "does not exist"),
        (["data", "housing", "--scale", "abc"], "invalid float value"),
        (["data", "nosuch"], "invalid choice"),
        (["data"], "name a dataset"),
        (["experiment", "nosuch"], "unknown experiment"),
        (["experiment", "table3", "--out", "/proc/cocoviz-results"], "/proc/cocoviz-results"),
        (["data", "--list", "--data-dir", "BAD"], "unreadable file"),
    ],
)
def test_user_errors_are_one_line(tmp_path, args, words):
    args = [_bad_data_dir(tmp_path) if a == "BAD" else a for a in args]
    done = run(*args)
    assert done.returncode > 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and words in lines[0]


# ------------------------------------------------------------------ output folders (issue 27, items 5 and 7)
def _run_without_root_override(*args: str) -> subprocess.CompletedProcess:
    """Run the command line so that file permissions bind it even when the tests run as root."""
    import os
    import shutil

    prefix = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: permissions cannot be enforced")
        prefix = [shutil.which("setpriv"), "--bounding-set=-dac_override,-dac_read_search", "--"]
    return subprocess.run(
        [*prefix, sys.executable, "-m", "cocoviz", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["experiment", "table3", "--datasets", "housing", "--trials", "1", "--workers", "1", "--out", "RO"],
            "--out RO is not writable",
        ),
        (["findings", "merging", "--dataset", "toy", "--trials", "1", "--out", "RO"], "--out RO is not writable"),
        (["data", "toy", "--out", "RO/toy.parquet"], "--out RO/toy.parquet: the folder RO is not writable"),
    ],
    ids=["experiment", "findings", "data"],
)
def test_a_read_only_output_folder_is_refused_before_any_work(tmp_path, args, message):
    """Item 7: ``experiment --out`` on an existing read-only folder ran the whole sweep first, then failed."""
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "keep.txt").write_text("previous")
    folder.chmod(0o555)
    try:
        done = _run_without_root_override(*[a.replace("RO", str(folder)) for a in args])
    finally:
        folder.chmod(0o755)
    assert done.returncode == 2
    # One line and no progress line: nothing ran.
    assert done.stderr.splitlines() == ["error: " + message.replace("RO", str(folder)) + ": Permission denied"]
    assert done.stdout == ""
    assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]


def _full_disk_after_half(real):
    def write(self, path, *args, **kwargs):
        real(self, path, *args, **kwargs)
        data = Path(path).read_bytes()
        Path(path).write_bytes(data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    return write


def test_a_data_out_that_fails_midway_leaves_the_previous_file(tmp_path, monkeypatch, capsys):
    """Item 5: ``data --out`` left a truncated file."""
    import pandas as pd

    from cocoviz.cli.main import main

    out = tmp_path / "toy.parquet"
    assert main(["data", "toy", "--out", str(out)]) == 0
    before = out.read_bytes()
    monkeypatch.setattr(pd.DataFrame, "to_parquet", _full_disk_after_half(pd.DataFrame.to_parquet))
    assert main(["data", "toy", "--seed", "3", "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == "error: No space left on device"
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["toy.parquet"]
    assert main(["data", "toy", "--out", str(tmp_path / "new.parquet")]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy.parquet"]  # no cut file that might load


def test_a_findings_out_that_fails_midway_leaves_the_previous_pair(tmp_path, monkeypatch):
    """Item 5: ``findings --out`` left a truncated file (or a new summary beside old metadata)."""
    import pandas as pd

    from cocoviz.cli.main import main
    from cocoviz.experiments import findings

    def finding(name, *, dataset, trials, seed, progress, journal):
        summary = pd.DataFrame({"series": ["a", "b"] * 500, "mean": range(1000), "seed": seed})
        return findings.Finding(name, summary, {"seed": seed, "releases": 1, "seconds": 0.0})

    monkeypatch.setattr(findings, "compute_finding", finding)
    assert main(["findings", "merging", "--quiet", "--out", str(tmp_path)]) == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    monkeypatch.setattr(pd.DataFrame, "to_parquet", _full_disk_after_half(pd.DataFrame.to_parquet))
    assert main(["findings", "merging", "--quiet", "--seed", "1", "--out", str(tmp_path)]) == 2
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert findings.read_finding("merging", tmp_path).meta["seed"] == 0
