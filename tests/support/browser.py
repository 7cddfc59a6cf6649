"""The browser the end-to-end test and the browser benchmarks launch: Debian's Chromium, headless, offline.

Playwright must not download a browser here; it launches ``CHROMIUM`` with ``CHROMIUM_ARGS`` (no sandbox, no
GPU, no QUIC, no first-run or background traffic, so that a visit's timing is the page's alone).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def streamlit_command(app: str | Path, port: int) -> list[str]:
    """``streamlit run app`` headless on 127.0.0.1:``port``, no usage statistics, no file watcher.

    >>> streamlit_command("app.py", 8600)[3:7]
    ['run', 'app.py', '--server.port', '8600']
    """
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app),
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]


def stop(proc: subprocess.Popen) -> None:
    """End a server started in its own session: SIGTERM to its process group, SIGKILL after 10 s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)
