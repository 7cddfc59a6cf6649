"""A link to any page, opened first on a fresh server, goes through ``app.py``'s navigation.

Streamlit treats the ``pages/`` folder beside ``app.py`` as a legacy multipage app until the first
``st.navigation`` call in the server process, so the first visit matters: each case starts its own server
and opens its URL as the very first request (no warm-up run of ``app.py``).  The page must then show the
app's navigation (the ``st.Page`` titles, not the file names), the app's tab title, the wide layout and the
app's CSS, and the page asked for.  A shared Explore link, opened on a second fresh server, restores the
same release (the same metrics).  Screenshots (1440×900) go to ``artifacts/direct_*.png``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, streamlit_server

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
]

#: The app's navigation, in app.py's order (Streamlit's file-name navigation would list app, compare, …).
APP_NAVIGATION = [
    "Explore",
    "Weighted vs. plain averaging",
    "Method selection",
    "Compare two releases",
    "Release viewer",
    "Size × tenure",
    "Learn",
]
APP_TITLE = "cocoviz — private count-of-counts"
SHARED = "/?dataset=taxi&eps=0.5,1,2&methods=Hg,Hc,Hc"

#: URL opened first on a fresh server → a heading of the page it must show.  Every page takes the same way
#: through ``pages/__init__.py`` (``tests/app/test_pages_package.py`` checks each imports it), so three cases
#: stand for all: a page without query, one with, and Explore's shared link.
LINKS = {
    "/viewer": "Release viewer",
    "/compare?dataset=taxi&eps=0.5,1,2": "Compare two releases",
    SHARED: "Explore a private release",
}


@contextmanager
def fresh_server(log_name: str) -> Iterator[str]:
    """A new ``streamlit run app.py``, healthy, on which no script has run yet; its URL."""
    with streamlit_server(ROOT, ARTIFACTS / f"{log_name}.log") as url:
        yield url


def _settled(page) -> None:
    """Wait for the app's navigation, then for the script run to end."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    nav = page.locator('[data-testid="stSidebarNav"]')
    try:
        nav.filter(has_text=APP_NAVIGATION[1]).first.wait_for(timeout=90_000)
    except PlaywrightTimeout:
        shown = nav.first.inner_text() if nav.count() else "(no navigation)"
        pytest.fail(f"{page.url}: the app's navigation never appeared; the sidebar shows {shown!r}")
    page.wait_for_timeout(300)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " || !document.querySelector('[data-testid=\"stStatusWidget\"]').innerText.includes('Running')",
        timeout=180_000,
    )
    page.wait_for_timeout(300)


def _check_app_frame(page) -> None:
    links = page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
    assert [text.strip().split("\n")[-1].strip() for text in links] == APP_NAVIGATION, links
    assert page.title() == APP_TITLE
    width = page.evaluate(
        "() => document.querySelector('[data-testid=\"stMainBlockContainer\"]').getBoundingClientRect().width"
    )
    assert width > 900, f"narrow layout: the main block is {width:.0f} px wide in a 1440 px window"
    css = page.evaluate("() => [...document.querySelectorAll('style')].some(s => s.textContent.includes('data-stale'))")
    assert css, "app.py's CSS (stale elements kept readable) is missing"
    assert page.locator('[data-testid="stException"]').count() == 0


def _metrics(page) -> list[str]:
    """The page's metrics, but for the time the release took (not part of the release)."""
    texts = [t.strip() for t in page.locator('[data-testid="stMetric"]').all_inner_texts()]
    return [t for t in texts if "computed in" not in t]


@pytest.mark.parametrize("path", list(LINKS))
def test_direct_link_on_a_fresh_server_goes_through_app(path, browser):
    name = "direct_" + (path.strip("/").split("?")[0] or "explore") + ("_query" if "?" in path else "")
    with fresh_server(name) as url:
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.set_default_timeout(90_000)
        try:
            page.goto(url + path)
            _settled(page)
            page.get_by_role("heading", name=LINKS[path]).first.wait_for()
            _check_app_frame(page)
            assert page.url.removeprefix(url).split("?")[0] == path.split("?")[0]
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
        finally:
            context.close()


def test_shared_explore_link_restores_the_same_release(browser):
    found = []
    for run in range(2):
        with fresh_server(f"direct_shared_{run}") as url:
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            page = context.new_page()
            page.set_default_timeout(90_000)
            try:
                # The first server opens the hand-written link; the second the link the first page published.
                page.goto(url + (SHARED if run == 0 else found[0][0]))
                _settled(page)
                page.locator('[data-testid="stMetric"]').filter(has_text="Total ε spent").first.wait_for()
                _settled(page)
                _check_app_frame(page)
                found.append((page.url.removeprefix(url), _metrics(page)))
            finally:
                context.close()
    (link, first), (_, second) = found
    assert "dataset=taxi" in link and "eps=" in link
    assert any(m.startswith("Total ε spent") and m.endswith("3.5") for m in first), first
    assert len(first) > 3 and first == second, (first, second)
