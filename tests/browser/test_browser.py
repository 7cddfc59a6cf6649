"""End to end in a real browser: ``streamlit run app.py`` driven by Playwright in Debian's Chromium.

Starts the dashboard headless on a free local port, waits for
``/_stcore/health``, then opens every page, changes an ε, picks a node,
downloads the release as CSV and checks its content, checks that no
exception box appears, and saves a screenshot of each page under
``artifacts/``.  Timings (first visit, an ε change) go to
``artifacts/browser_timings.json``.

Playwright must not download a browser here: it launches
``/usr/bin/chromium``.  The test is skipped (with that reason) only when
that binary is absent.
"""

from __future__ import annotations

import csv
import io
import json
import time
import urllib.request
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


WARMUP: dict[str, float] = {}

#: Records, on the browser's own clock (ms since navigation start), when the app's first
#: elements appear: the page frame, the first metric and the first drawn chart.
MARKS_SCRIPT = """
window.__marks = {};
const observer = new MutationObserver(() => {
  const t = performance.now(), m = window.__marks;
  const seen = (k, sel) => { if (!(k in m) && document.querySelector(sel)) m[k] = t; };
  seen('app', '[data-testid="stApp"]');
  seen('metric', '[data-testid="stMetric"]');
  seen('chart', '.js-plotly-plot .main-svg');
});
document.addEventListener('DOMContentLoaded', () => observer.observe(document.body, {subtree: true, childList: true}));
"""


@pytest.fixture(scope="module")
def server():
    with streamlit_server(ROOT, ARTIFACTS / "streamlit_server.log") as url:
        # Warm the server as the start script does: one run of app.py (imports, data, default release).
        start = time.perf_counter()
        with urllib.request.urlopen(f"{url}/_stcore/script-health-check", timeout=120) as r:
            assert r.status == 200, r.read()
        WARMUP["server_warmup_s"] = time.perf_counter() - start
        yield url


def _idle(page, timeout: float = 60_000) -> None:
    """Wait until the script run is over (Streamlit's running indicator is gone)."""
    page.wait_for_timeout(150)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " || !document.querySelector('[data-testid=\"stStatusWidget\"]').innerText.includes('Running')",
        timeout=timeout,
    )
    page.wait_for_timeout(100)


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator(
        '[data-testid="stException"]'
    ).first.inner_text()


def _shot(page, name: str) -> None:
    """A screenshot of the whole page: the viewport grows to the main area's height first."""
    size = page.viewport_size
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll("
        '\'[data-testid="stMain"], [data-testid="stSidebarContent"]\')]'
        ".map(e => e.scrollHeight), 800)"
    )
    page.set_viewport_size({"width": size["width"], "height": min(int(height) + 40, 9000)})
    page.wait_for_timeout(400)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    page.set_viewport_size(size)


def _quick_sweep(page) -> None:
    """On a comparison page: one trial per point, run, and wait for the figure."""
    trials = page.locator('[data-testid="stNumberInput"]').filter(has_text="Trials N").first.locator("input")
    trials.fill("1")
    trials.press("Enter")
    _idle(page, timeout=180_000)
    chart = page.locator('[data-testid="stPlotlyChart"]:visible')
    run = page.locator('[data-testid="stButton"] button:visible').filter(has_text="Run ")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stPlotlyChart\"]') || [...document.querySelectorAll("
        "'[data-testid=\"stButton\"] button')].some(b => b.innerText.startsWith('Run ') && b.offsetParent)",
        timeout=180_000,
    )
    if not chart.count() and run.count():
        run.first.click()
    chart.first.wait_for(timeout=180_000)
    _idle(page, timeout=180_000)


def test_dashboard_end_to_end(server, browser):
    timings: dict[str, float] = dict(WARMUP)
    context = browser.new_context(viewport={"width": 1500, "height": 2200}, accept_downloads=True)
    context.add_init_script(MARKS_SCRIPT)
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        # First visit: time until the release's numbers are on the page.
        start = time.perf_counter()
        page.goto(server)
        page.locator('[data-testid="stMetric"]').filter(has_text="Total ε spent").first.wait_for()
        page.locator('[data-testid="stPlotlyChart"]:visible').first.wait_for()
        page.locator(".js-plotly-plot .main-svg:visible").first.wait_for()
        timings["first_visit_s"] = time.perf_counter() - start
        marks = page.evaluate("window.__marks")
        timings["first_visit_browser_metric_s"] = marks.get("metric", float("nan")) / 1000
        timings["first_visit_browser_chart_s"] = marks.get("chart", float("nan")) / 1000
        _idle(page)
        _no_exception(page)
        assert _metric(page, "Consistent") == "yes ✓"
        total = float(_metric(page, "Total ε spent"))
        _shot(page, "explore")

        # Change ε of the root through its exact-number box (the per-level boxes are drawn on request).
        page.locator(".st-key-w-per_level label").click()
        box = page.locator(".st-key-w-eps_n-0 input")
        box.wait_for()
        _idle(page)
        start = time.perf_counter()
        changed = (
            "(want) => [...document.querySelectorAll('[data-testid=\"stMetric\"]')].some("
            "m => m.innerText.includes('Total ε spent') && m.innerText.includes(want))"
        )
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        # On a heavily loaded machine an edit typed while the box's own rerun is still being drawn can be
        # dropped (seen at load average 5 and more only, not traced further); it is typed again, up to 4 times.
        for attempt in range(4):
            box.fill("0.5")
            box.press("Enter")
            try:
                page.wait_for_function(changed, arg=f"{total - 0.5:g}", timeout=30_000)
                break
            except PlaywrightTimeout:
                if attempt == 3:
                    raise
                _idle(page, timeout=120_000)
        _idle(page)
        timings["epsilon_change_s"] = time.perf_counter() - start
        _no_exception(page)

        # A K the release cannot use is refused with a message, and nothing is computed with the old one.
        k_box = page.locator('[data-testid="stNumberInput"]').filter(has_text="K — public bound").first.locator("input")
        k_before = k_box.input_value()
        k_box.fill("0.1")
        k_box.press("Enter")
        page.get_by_text("K must be a whole number between 1 and 10,000,000, got 0.1").first.wait_for()
        _idle(page)
        assert page.locator('[data-testid="stMetric"]').count() == 0
        k_box.fill(k_before)
        k_box.press("Enter")
        page.locator('[data-testid="stMetric"]').filter(has_text="Total ε spent").first.wait_for()
        _idle(page)

        # Pick a node one level down.
        picker = page.locator('[data-testid="stSelectbox"]').filter(has_text=" in ").first
        picker.click()
        options = page.locator('[role="option"]')
        options.nth(1).wait_for()
        chosen = options.nth(1).inner_text().strip()
        start = time.perf_counter()
        options.nth(1).click()
        page.wait_for_function(
            "(want) => [...document.querySelectorAll('[data-testid=\"stMarkdown\"]')].some("
            "m => m.innerText.startsWith('Node:') && m.innerText.includes(want))",
            arg=chosen,
        )
        _idle(page)
        timings["node_pick_s"] = time.perf_counter() - start
        _no_exception(page)

        # Download the release as CSV and check it.
        page.get_by_role("tab", name="Downloads").click()
        button = page.locator('[data-testid="stDownloadButton"]').filter(has_text="Table as CSV").first
        with page.expect_download() as info:
            button.locator("button").click()
        path = info.value.path()
        rows = list(csv.DictReader(io.StringIO(Path(path).read_text())))
        assert rows, "the CSV is empty"
        # The release (no true counts), each node's path one column per level beside its name.
        assert {c for c in rows[0] if not c.startswith("path: ")} == {"level", "node", "level_name", "size", "count"}
        assert [c for c in rows[0] if c.startswith("path: ")] == ["path: state", "path: county"]
        root_rows = [r for r in rows if r["level"] == "0"]
        assert {r["node"] for r in root_rows} == {"(root)"}
        by_level = {}
        for r in rows:
            by_level[r["level"]] = by_level.get(r["level"], 0) + int(r["count"])
        assert len(set(by_level.values())) == 1 and by_level["0"] > 0  # G kept at every level
        assert any(r["node"] == chosen or r["node"].endswith("/" + chosen) for r in rows)
        _shot(page, "explore_node_download")

        # Every other page.
        for title, name, expect in [
            ("Weighted vs. plain averaging", "merging", "Weighted vs. plain averaging"),
            ("Method selection", "methods", "Method selection"),
            ("Learn", "learn", "Learn: how a private"),
        ]:
            page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title).first.click()
            page.get_by_role("heading", name=expect).first.wait_for()
            _idle(page)
            _no_exception(page)
            if name == "merging":
                start = time.perf_counter()
                _quick_sweep(page)
                timings["merging_sweep_1_trial_s"] = time.perf_counter() - start
                _no_exception(page)
            if name == "methods":
                _shot(page, "methods_sweep_tab")
                page.get_by_role("tab", name="Private algorithm selection").click()
                _idle(page)
                start = time.perf_counter()
                page.locator('[data-testid="stButton"] button').filter(has_text="Run the private selection").click()
                page.get_by_text("Selected:").first.wait_for(timeout=120_000)
                _idle(page, timeout=120_000)
                timings["private_selection_s"] = time.perf_counter() - start
                assert "total ε spent" in page.locator('[data-testid="stCode"]').first.inner_text()
                _no_exception(page)
            _shot(page, name)
        # The Learn page draws all its figures (waited for: under load the last ones arrive after the first idle).
        page.wait_for_function(
            "document.querySelectorAll('[data-testid=\"stPlotlyChart\"]').length >= 7", timeout=120_000
        )

        # Back on Explore, the changed ε is still there.
        page.locator('[data-testid="stSidebarNav"] a').filter(has_text="Explore").first.click()
        page.locator('[data-testid="stMetric"]').filter(has_text="Total ε spent").first.wait_for()
        _idle(page)
        assert float(_metric(page, "Total ε spent")) == pytest.approx(total - 0.5)
        _no_exception(page)
    finally:
        (ARTIFACTS / "browser_timings.json").write_text(json.dumps(timings, indent=2))
        context.close()


def test_dark_theme_renders(server, browser):
    """Streamlit follows the viewer's dark preference; the figures use its theme (screenshots for a look)."""
    context = browser.new_context(viewport={"width": 1500, "height": 1600}, color_scheme="dark")
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(server)
        page.locator(".js-plotly-plot .main-svg:visible").first.wait_for()
        _idle(page)
        _no_exception(page)
        background = page.evaluate(
            "() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"
        )
        channels = [int(c) for c in background[background.index("(") + 1 : background.index(")")].split(",")[:3]]
        assert sum(channels) < 3 * 80, background  # a dark page
        _shot(page, "explore_dark")
        page.goto(server + "/learn")
        page.locator(".js-plotly-plot .main-svg:visible").first.wait_for()
        _idle(page)
        _no_exception(page)
        _shot(page, "learn_dark")
    finally:
        context.close()
