"""Benchmark figures as JSON under ``benchmarks/results/``: one file per run of a benchmark, with where and when.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     path = record("demo", [{"case": "x", "wall_s": 1.5, "target": "<= 2 s", "met": True}], folder=folder)
...     saved = json.loads(Path(path).read_text())
>>> saved["benchmark"], saved["rows"][0]["met"], sorted(saved["machine"]) == sorted(machine())
('demo', True, True)
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["record", "machine", "commit", "load"]

#: Where the figures go: benchmarks/results/ beside this file.
RESULTS = Path(__file__).resolve().parent / "results"


def commit() -> str:
    """The commit of the working tree the benchmark ran from (``+dirty`` with uncommitted changes), or ``unknown``."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def load() -> list[float] | None:
    """The 1-, 5- and 15-minute load averages (the machine may be shared), or None where unknown."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine() -> dict:
    """The machine: host name, processor, logical cores, Python and OS."""
    return {
        "host": platform.node(),
        "processor": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": platform.platform(),
    }


def record(name: str, rows: Sequence[dict], *, folder: str | os.PathLike | None = None, **context) -> str:
    """Write ``rows`` (one dict per figure: wall and CPU seconds, peak memory, its target and whether it was met)
    as ``<folder>/<name>-<UTC time>.json`` with the date, commit, machine and load, and ``context`` (the run's
    parameters, e.g. its size); return the path.

    The file is written whole then renamed, so a reader never sees half of it.
    """
    when = dt.datetime.now(dt.UTC)
    out = Path(folder) if folder is not None else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}-{when.strftime('%Y%m%dT%H%M%SZ')}.json"
    payload = {
        "benchmark": name,
        "date": when.isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": machine(),
        "load": load(),
        **context,
        "rows": list(rows),
    }
    part = path.with_suffix(".json.part")
    part.write_text(json.dumps(payload, indent=2, default=float) + "\n")
    part.replace(path)
    return str(path)
