"""One writer for every benchmark's figures: a JSON file per run under ``benchmarks/results/``.

A benchmark measures, then calls :func:`record` once per target it checks::

    from results import Timer, record  # benchmarks/ is on sys.path when run as a script

    with Timer() as timer:
        release = cocoviz.estimate(...)
    record(
        "scale",
        target="whole country, 3 levels, all-Hg",
        figure=f"{timer.wall:.1f} s",
        goal="<= 25 s, <= 5 GB",
        met=timer.wall <= 25,
        timer=timer,
        command="python benchmarks/scale.py --only country",
    )

Every row holds the date (UTC), the commit (``git rev-parse --short HEAD``, ``+dirty`` when the work tree
has changes), the machine (host name, CPU count, CPU model), the load average when it was written, the wall
and CPU seconds and the peak resident memory of the :class:`Timer` (or of the process), the target, the
figure, the goal and whether it is met. A run's rows go to ``benchmarks/results/<benchmark>-<date>.json``,
written whole (a temporary file renamed in). The documentation's performance page shows the newest row per
(benchmark, target): :func:`latest_table`.

This module imports nothing from cocoviz, so a benchmark of an older revision can use it too.

Examples
--------
>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> path = record("demo", target="a sum", figure="0.1 s", goal="<= 1 s", met=True, folder=folder)
>>> [row["target"] for row in load_rows(folder)]
['a sum']
>>> print(latest_table(folder).splitlines()[2].split(" | ")[1:4])
['a sum', '0.1 s', '<= 1 s']
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import resource
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]

__all__ = ["RESULTS", "Timer", "record", "load_rows", "latest_rows", "latest_table", "machine", "commit"]


class Timer:
    """Wall and CPU seconds (this process and its children) and peak memory of a ``with`` block.

    ``peak_gb`` is the process's high-water mark (``ru_maxrss``) at the end of the block, the larger of
    this process's and its waited-for children's: a benchmark that needs one phase's own peak runs that
    phase in a fresh process.

    >>> with Timer() as timer:
    ...     _ = sum(range(1000))
    >>> timer.wall >= 0 and timer.cpu >= 0 and timer.peak_gb > 0
    True
    """

    def __enter__(self) -> Timer:
        self._wall = time.perf_counter()
        self._cpu = _cpu_seconds()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = _cpu_seconds() - self._cpu
        self.peak_gb = _peak_gb()


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _peak_gb() -> float:
    kib = max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    )
    return kib / 2**20  # Linux reports KiB


def commit() -> str:
    """The short hash of HEAD, with ``+dirty`` when tracked files differ from it ("unknown" outside git)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def machine() -> dict[str, Any]:
    """Host name, CPU count and model, and the 1-minute load average now."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"host": socket.gethostname(), "cpus": os.cpu_count(), "cpu": model, "load": round(os.getloadavg()[0], 2)}


def record(
    benchmark: str,
    *,
    target: str,
    figure: str,
    goal: str,
    met: bool | None,
    timer: Timer | None = None,
    command: str | None = None,
    values: dict[str, Any] | None = None,
    folder: Path | str | None = None,
) -> Path:
    """Append one target's row to this run's results file and return the file's path.

    Parameters
    ----------
    benchmark : the script's name (``"scale"``, ``"ingest"``, ...): the file is ``<benchmark>-<date>.json``
    target : what is measured, in words, the same text in every run (the performance page groups by it)
    figure : the figure as printed (``"36.9 s, peak 5.81 GB"``, ``"1.38x"``)
    goal : the target's threshold as printed (``"<= 60 s, <= 8 GB"``)
    met : whether the figure meets the goal (None: no goal, a figure only)
    timer : the measured block's wall and CPU seconds and peak memory (else the process's CPU and peak)
    command : the exact command that prints the figure (default: ``python benchmarks/<benchmark>.py``)
    values : further numbers to keep with the row (ratios, counts)
    folder : where to write (default ``benchmarks/results/``)
    """
    folder = Path(folder) if folder is not None else RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    row = {
        "benchmark": benchmark,
        "target": target,
        "figure": figure,
        "goal": goal,
        "met": met,
        "date": now.isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": machine(),
        "wall_s": round(timer.wall, 3) if timer is not None else None,
        "cpu_s": round(timer.cpu if timer is not None else _cpu_seconds(), 3),
        "peak_gb": round(timer.peak_gb if timer is not None else _peak_gb(), 3),
        "command": command or f"python benchmarks/{benchmark}.py",
        "values": values or {},
    }
    path = folder / f"{benchmark}-{now:%Y-%m-%d}.json"
    rows = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    rows.append(row)
    with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False, encoding="utf-8") as handle:
        json.dump(rows, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    os.replace(handle.name, path)  # whole or not at all
    return path


def load_rows(folder: Path | str | None = None) -> list[dict[str, Any]]:
    """Every row of every results file in ``folder``, oldest first."""
    folder = Path(folder) if folder is not None else RESULTS
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json")):
        rows.extend(json.loads(path.read_text(encoding="utf-8")))
    return sorted(rows, key=lambda row: row["date"])


def latest_rows(folder: Path | str | None = None) -> list[dict[str, Any]]:
    """The newest row per (benchmark, target), ordered by benchmark then target."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for row in load_rows(folder):
        latest[(row["benchmark"], row["target"])] = row
    return [latest[key] for key in sorted(latest)]


def latest_table(folder: Path | str | None = None) -> str:
    """The performance page's Markdown table: one row per target, its latest figure, date, machine, command."""
    lines = [
        "| benchmark | target | latest figure | goal | met | date | machine | command |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in latest_rows(folder):
        met = {True: "yes", False: "**no**", None: "–"}[row["met"]]
        box = row["machine"]
        load = "not recorded" if box.get("load") is None else box["load"]
        where = f"{box['cpus']} cores, load {load}"
        lines.append(
            f"| {row['benchmark']} | {row['target']} | {row['figure']} | {row['goal']} | {met} | "
            f"{row['date'][:10]} (`{row['commit']}`) | {where} | `{row['command']}` |"
        )
    if len(lines) == 2:
        lines.append("| – | no results yet | | | | | | |")
    return "\n".join(lines) + "\n"
