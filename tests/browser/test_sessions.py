"""Five browser sessions open Explore at once on a fresh server and each types a Total ε: none loses its edit,
and none meets the "Compute it anyway" gate (the estimate's learnt factor is bounded)."""

from __future__ import annotations

import time

import pytest

from tests.browser.test_browser import CHROMIUM, _no_exception, server  # noqa: F401 - fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed"),
]

SESSIONS = (1.5, 2.5, 3.5, 4.5, 5.5)
SHOWN = (
    "(want) => [...document.querySelectorAll('[data-testid=\"stMetric\"]')].some("
    "m => m.innerText.includes('Total ε spent') && m.innerText.includes(want))"
)


def test_five_sessions_editing_explore_at_once_lose_no_edit(server, browser):  # noqa: F811
    pages = []
    for _ in SESSIONS:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.set_default_timeout(300_000)
        page.goto(server, wait_until="commit")  # all five open at once: none waits for another's page
        pages.append(page)
    total = '[data-testid="stNumberInput"]'
    boxes = [p.locator(total).filter(has_text="Total ε").first.locator("input") for p in pages]
    for box in boxes:
        box.wait_for()
    start = time.perf_counter()
    for box, total in zip(boxes, SESSIONS):  # typed one after another, while the others still run
        box.fill(f"{total:g}")
        box.press("Enter")
    for page, total in zip(pages, SESSIONS):
        page.wait_for_function(SHOWN, arg=f"{total:g}", timeout=300_000)
        assert page.get_by_text("Compute it anyway").count() == 0
        _no_exception(page)
    print(f"five sessions' edits all applied in {time.perf_counter() - start:.1f} s")
    for page in pages:
        page.context.close()
