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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]

__all__ = [
    "RESULTS",
    "Timer",
    "record",
    "record_rows",
    "load_rows",
    "latest_rows",
    "latest_table",
    "machine",
    "commit",
]

#: Keys of a row-list row that hold measured numbers; the others (strings, integers) name the case.
_MEASURES = ("wall_s", "cpu_s", "peak_gb", "target", "met", "goal", "figure", "command")


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
    _write_whole(path, rows)
    return path


def record_rows(name: str, rows: Sequence[dict[str, Any]], *, folder: Path | str | None = None, **context) -> str:
    """Write a run's table of figures whole as ``<folder>/<name>-<UTC time>.json`` and return the path.

    The file holds ``{"benchmark", "date", "commit", "machine", **context, "rows"}``; each row is one case
    (its naming fields, e.g. ``case``/``dataset``/``phase``, and its numbers: ``wall_s``, ``cpu_s``,
    ``peak_gb``, ratios) and, where the case checks a goal, ``target`` (the goal as printed, e.g.
    ``"<= 3x"``) and ``met``. :func:`load_rows` turns the rows with a goal into the page's rows.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = record_rows("demo", [{"case": "x", "wall_s": 1.5, "target": "<= 2 s", "met": True}], folder=folder)
    >>> [(row["target"], row["figure"], row["goal"]) for row in load_rows(folder)]
    [('case=x', '1.5 s', '<= 2 s')]
    """
    when = dt.datetime.now(dt.UTC)
    out = Path(folder) if folder is not None else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}-{when:%Y%m%dT%H%M%SZ}.json"
    payload = {
        "benchmark": name,
        "date": when.isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": machine(),
        **context,
        "rows": list(rows),
    }
    _write_whole(path, payload)
    return str(path)


def _write_whole(path: Path, payload: Any) -> None:
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False, encoding="utf-8") as handle:
        json.dump(payload, handle, indent=1, ensure_ascii=False, default=float)
        handle.write("\n")
    os.replace(handle.name, path)  # whole or not at all


def _table_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of a :func:`record_rows` file that check a goal, in :func:`record`'s form."""
    box = payload.get("machine", {})
    load = payload.get("load", box.get("load"))
    box = {
        "host": box.get("host"),
        "cpus": box.get("cpus", box.get("cores")),
        "cpu": box.get("cpu", box.get("processor")),
        "load": load[0] if isinstance(load, list) else load,
    }
    out = []
    for row in payload.get("rows", []):
        if row.get("target") is None and row.get("met") is None:
            continue  # a figure kept for the record, no goal to show
        case = [f"{k}={v}" for k, v in row.items() if k not in _MEASURES and isinstance(v, str | int)]
        parts = [f"{row['wall_s']:.3g} s"] if isinstance(row.get("wall_s"), int | float) else []
        if isinstance(row.get("peak_gb"), int | float):
            parts.append(f"peak {row['peak_gb']:.2f} GB")
        parts += [f"{k} {v:.3g}" for k, v in row.items() if "ratio" in k and isinstance(v, int | float)]
        out.append(
            {
                "benchmark": payload["benchmark"],
                "target": ", ".join(case) or "all",
                "figure": row.get("figure") or ", ".join(parts),
                "goal": row.get("goal") or row.get("target") or "",
                "met": row.get("met"),
                "date": payload["date"],
                "commit": str(payload.get("commit", "unknown"))[:7]
                + ("+dirty" if "+dirty" in str(payload.get("commit")) else ""),
                "machine": box,
                "command": row.get("command")
                or payload.get("command")
                or f"python benchmarks/{payload['benchmark']}.py",
                "values": row,
            }
        )
    return out


def load_rows(folder: Path | str | None = None) -> list[dict[str, Any]]:
    """Every row with a goal of every results file in ``folder``, oldest first.

    A file from :func:`record` is a list of rows; one from :func:`record_rows` is a dict whose goal-checking
    rows are turned into the same form (:func:`_table_rows`).
    """
    folder = Path(folder) if folder is not None else RESULTS
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        rows.extend(_table_rows(data) if isinstance(data, dict) else data)
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
