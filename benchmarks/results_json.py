"""Benchmark figures as JSON under ``benchmarks/results/``: one file per benchmark name, with the run's context.

Each record holds the date (UTC), the commit, the machine (host, cores), the load average at the end of the
run, and the rows given (each a dict: wall and CPU seconds, peak memory, target, met, ...).

>>> import tempfile, json
>>> from pathlib import Path
>>> with tempfile.TemporaryDirectory() as folder:
...     path = record("example", [{"phase": "a", "wall_s": 1.0}], folder=Path(folder))
...     json.loads(path.read_text())["rows"][0]["phase"]
'a'
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=RESULTS.parent)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def record(name: str, rows: list[dict[str, Any]], folder: Path = RESULTS, **context: Any) -> Path:
    """Write ``rows`` (with ``context`` and the run's date, commit, machine and load) to ``folder/name.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "name": name,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "machine": {"host": platform.node(), "cores": os.cpu_count(), "python": platform.python_version()},
        "load": list(os.getloadavg()),
        **context,
        "rows": rows,
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path
