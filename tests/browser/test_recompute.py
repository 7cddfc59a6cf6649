"""A recompute on Explore keeps the previous result readable and says what runs: while the release for a new
Total ε is computed, the elements not yet drawn again keep full opacity (Streamlit fades them by default) and a
status box above them names the work, its estimated time, and says that what is below is the previous result."""

from __future__ import annotations

import pytest

from pages.common.progress import PREVIOUS_NOTE
from tests.browser.test_browser import CHROMIUM, _idle, _no_exception, server  # noqa: F401 - fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed"),
]

#: Every 10 ms while the rerun runs: the lowest opacity of a stale element in the main area, how many stale
#: elements were seen, and whether the status box's note was on the page.
WATCH = """(note) => {
  window.__watch = {minOpacity: 1, stale: 0, status: false};
  window.__watcher = setInterval(() => {
    const w = window.__watch;
    for (const e of document.querySelectorAll('[data-testid="stMain"] [data-stale="true"]')) {
      w.stale += 1;
      w.minOpacity = Math.min(w.minOpacity, parseFloat(getComputedStyle(e).opacity));
    }
    if (document.querySelector('[data-testid="stMain"]').innerText.includes(note)) w.status = true;
  }, 10);
}"""
SHOWN = (
    "(want) => [...document.querySelectorAll('[data-testid=\"stMetric\"]')].some("
    "m => m.innerText.includes('Total ε spent') && m.innerText.includes(want))"
)


def test_a_recompute_keeps_the_previous_release_readable_under_a_status(server, browser):  # noqa: F811
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(180_000)
    try:
        page.goto(server)
        page.locator('[data-testid="stMetric"]').filter(has_text="Total ε spent").first.wait_for()
        _idle(page)
        box = page.locator('[data-testid="stNumberInput"]').filter(has_text="Total ε").first.locator("input")
        page.evaluate(WATCH, PREVIOUS_NOTE)
        box.fill("2.37")  # a total no other test computes: the release is not cached
        box.press("Enter")
        page.wait_for_function(SHOWN, arg="2.37")
        _idle(page)
        watch = page.evaluate("() => { clearInterval(window.__watcher); return window.__watch; }")
        _no_exception(page)
        assert watch["stale"] > 0, watch  # the previous result stayed on the page while the release ran
        assert watch["minOpacity"] == 1, watch  # and was never faded
        assert watch["status"], watch  # a status box said what ran and what the page below was
        assert page.get_by_text(PREVIOUS_NOTE).count() == 0  # and it is gone once the release is drawn
    finally:
        context.close()


def test_a_recompute_on_compare_says_so_too_and_fades_nothing(server, browser):  # noqa: F811
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(180_000)
    try:
        page.goto(server)
        page.locator('[data-testid="stMetric"]').filter(has_text="Total ε spent").first.wait_for()
        _idle(page)
        page.locator('[data-testid="stSidebarNav"]').get_by_text("Compare two releases").click()
        box = page.locator('[data-testid="stNumberInput"]').filter(has_text="ε per level").first.locator("input")
        box.wait_for()
        _idle(page, timeout=180_000)
        page.evaluate(WATCH, PREVIOUS_NOTE)
        box.fill("0.71")  # release A at a new ε: not cached
        box.press("Enter")
        page.wait_for_timeout(300)
        _idle(page, timeout=180_000)
        watch = page.evaluate("() => { clearInterval(window.__watcher); return window.__watch; }")
        _no_exception(page)
        assert watch["minOpacity"] == 1, watch
        assert watch["status"], watch
    finally:
        context.close()
