"""The dashboard's server settings: private data stays on this machine by default."""

from __future__ import annotations

import tomllib
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"


def test_the_dashboard_listens_on_localhost_only():
    server = tomllib.loads(CONFIG.read_text())["server"]
    assert server["address"] == "127.0.0.1"


def test_no_traceback_is_ever_shown():
    assert tomllib.loads(CONFIG.read_text())["client"]["showErrorDetails"] == "none"
