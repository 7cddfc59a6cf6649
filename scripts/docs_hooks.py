"""MkDocs hook: the performance page's table, the latest row per target from ``benchmarks/results/*.json``."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARK = "<!-- performance-table -->"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARK not in markdown:
        return markdown
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.results import latest_table
    finally:
        sys.path.remove(str(ROOT))
    return markdown.replace(MARK, latest_table(ROOT / "benchmarks" / "results"))
