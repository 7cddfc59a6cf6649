"""The browser the end-to-end test and the browser benchmarks launch: Debian's Chromium, headless, offline.

Playwright must not download a browser here; it launches ``CHROMIUM`` with ``CHROMIUM_ARGS`` (no sandbox, no
GPU, no QUIC, no first-run or background traffic, so that a visit's timing is the page's alone).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
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


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 90.0) -> None:
    """Until ``url``'s ``/_stcore/health`` answers ok; an exited server or the timeout is an error."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200 and r.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url}/_stcore/health did not answer within {timeout:.0f} s")


@contextmanager
def streamlit_server(root: Path, log: Path) -> Iterator[str]:
    """``streamlit run app.py`` in ``root`` on a free port, healthy, on which no script has run yet: its URL.

    Its output goes to ``log``; it is stopped (with its process group) on leaving the block.
    """
    port = free_port()
    log.parent.mkdir(exist_ok=True)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            streamlit_command("app.py", port),
            cwd=root,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, proc)
            yield url
        finally:
            stop(proc)
