"""The browser the end-to-end test and the browser benchmarks launch: Debian's Chromium, headless, offline.

Playwright must not download a browser here; it launches ``CHROMIUM`` with ``CHROMIUM_ARGS`` (no sandbox, no
GPU, no QUIC, no first-run or background traffic, so that a visit's timing is the page's alone).
"""

from __future__ import annotations

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
