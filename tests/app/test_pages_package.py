"""Every page imports the ``pages`` package, whose import hands a direct link on a fresh server to ``app.py``.

The browser test ``tests/browser/test_direct_links.py`` checks the hand-over itself; this one, without a
server, that a page (a new one included) cannot skip it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p for p in (ROOT / "pages").glob("*.py") if p.name != "__init__.py")


def _imports_pages(source: str) -> bool:
    """Whether a module imports ``pages`` or anything under it at its top level.

    Examples
    --------
    >>> _imports_pages("import pages"), _imports_pages("from pages.common import state"), _imports_pages("import os")
    (True, True, False)
    """
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "pages" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "pages":
            return True
    return False


def test_every_page_file_is_found():
    assert {p.name for p in PAGES} >= {"explore.py", "viewer.py", "compare.py", "learn.py"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_page_imports_the_pages_package(page):
    assert _imports_pages(page.read_text()), f"{page.name} must import the pages package (see pages/__init__.py)"
