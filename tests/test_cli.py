"""The command line never shows a traceback for a user error: one line on stderr and a non-zero exit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cocoviz", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


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
