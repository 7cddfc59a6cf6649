"""The test command in a fresh clone, and the inner loop after it: their wall time against the targets.

Clones the repository's HEAD into a temporary folder, runs ``.ci/run`` there (exactly ``bash
scripts/test.sh``: a fresh ``.venv``, lint, the strict docs build, PostgreSQL, every test on two
workers), then the documented inner loop (``pytest -n 2 -m "not slow"``) in the same clone, and
records both rows with :func:`results.record`. Each row keeps the load average before and after,
since the machine is shared.

Targets: the test command ≤ 6 min in all with pytest ≤ 4 min; the inner loop ≤ 90 s.

Usage::

    python benchmarks/test_command.py            # HEAD of this repository
    python benchmarks/test_command.py --no-inner  # the test command only
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import Timer, record  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"(\d+) passed(?:, (\d+) skipped)?.* in ([\d.]+)s")


def pytest_summary(log: str) -> tuple[int, int, float]:
    """(passed, skipped, pytest's seconds) from the last summary line of a pytest log.

    >>> pytest_summary("...\\n2479 passed, 3 skipped in 378.21s (0:06:18)\\n")
    (2479, 3, 378.21)
    """
    found = SUMMARY.findall(log)
    if not found:
        raise SystemExit("no pytest summary line in the log: the run failed before or during pytest")
    passed, skipped, seconds = found[-1]
    return int(passed), int(skipped or 0), float(seconds)


def run(command: list[str], cwd: Path, log: Path) -> tuple[Timer, str]:
    with Timer() as timer, log.open("w") as out:
        done = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "CI": "true"})
    text = log.read_text(errors="replace")
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}); the log is {log}")
    return timer, text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-inner", action="store_true", help="skip the inner loop")
    parser.add_argument("--keep", action="store_true", help="keep the clone (its path is printed)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cocoviz-fresh-"))
    clone = folder / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    load = os.getloadavg()[0]
    timer, text = run(["bash", ".ci/run"], clone, folder / "test.log")
    passed, skipped, seconds = pytest_summary(text)
    after = os.getloadavg()[0]
    figure = f"{timer.wall / 60:.1f} min ({passed:,} tests, pytest {seconds:.0f} s)"
    print(f"test command: {figure}; load {load:.1f} → {after:.1f}; log {folder / 'test.log'}")
    record(
        "tests",
        target="the test command (scripts/test.sh), fresh clone",
        figure=figure,
        goal="<= 6 min, pytest <= 4 min",
        met=timer.wall <= 360 and seconds <= 240,
        timer=timer,
        command="python benchmarks/test_command.py",
        values={"passed": passed, "skipped": skipped, "pytest_s": seconds, "load_before": load, "load_after": after},
    )
    if not args.no_inner:
        load = os.getloadavg()[0]
        inner = [".venv/bin/python", "-m", "pytest", "-n", "2", "-m", "not slow", "-p", "no:cacheprovider"]
        timer, text = run(["bash", "-c", "source scripts/postgres.sh && " + " ".join(f"'{a}'" for a in inner)],
                          clone, folder / "inner.log")  # fmt: skip
        passed, skipped, seconds = pytest_summary(text)
        figure = f"{timer.wall:.0f} s ({passed:,} tests)"
        print(f"inner loop: {figure}; load {load:.1f} → {os.getloadavg()[0]:.1f}")
        record(
            "tests",
            target='the inner loop (pytest -n 2 -m "not slow"), warm clone',
            figure=figure,
            goal="<= 90 s",
            met=timer.wall <= 90,
            timer=timer,
            command="python benchmarks/test_command.py",
            values={"passed": passed, "skipped": skipped, "pytest_s": seconds, "load_before": load},
        )
    if args.keep:
        print(f"clone kept: {clone}")
    else:
        time.sleep(1)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
