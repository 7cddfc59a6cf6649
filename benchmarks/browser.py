"""The dashboard in a real browser, against a trivial Streamlit app on the same machine.

Run:  python benchmarks/browser.py            (needs the test requirements and /usr/bin/chromium)

For each app: start ``streamlit run`` headless on a free port, warm it as ``scripts/run.sh`` does
(one script run through ``/_stcore/script-health-check``), then in headless Chromium (Playwright):

* first visit: a new browser context (empty cache) until the first metric, and until the first drawn chart,
  the two apps' visits alternating so that both see the same load on the machine; beside the wall-clock
  seconds, the CPU seconds of the page's main thread until that chart (``first_chart_cpu_s``, Chromium's
  ThreadTime), which a busy machine hardly changes;
* interactions: type a new number and press Enter, until the metric shows the new value (for cocoviz:
  the root's ε, and the counties' ε, the level that costs most).

The trivial app (one number input, one metric, one small plotly chart) is the floor that
Streamlit's front end and Chromium set on this machine; the difference is what cocoviz adds.
Targets: first visit until the first chart at most 1.3× the trivial app's in the same run (issue 15;
printed as "first-visit ratio"), later interactions under 1 s.  On a 2-core machine the browser
renders on the cores the server computes on, which a real visitor's browser does not.

Options: ``--visits N`` first visits per app (default 5), ``--no-interactions``, ``--app PATH`` (a
checkout's app.py, repeatable: ``--app ../main/app.py --app app.py`` measures before and after in one run,
each server importing its own checkout's package), ``--profile N``: N more first visits per app under
Chromium's sampling profiler, printing where the page's main thread spent its time until the first chart,
per front-end chunk (Plotly's module, React, the styling libraries, Markdown, the widgets).  The chunk
names are Streamlit's bundle's file names without their hashes.  ``--floors [NAME ...]``: more apps in the same
alternating run, the trivial app grown into the dashboard's required design as static content (its pages, then
Explore's first-render sidebar, then Explore's main area, then Explore's own first chart, and lighter variants:
:mod:`floor_apps`), each one's ratios to the trivial app printed like the dashboard's: what the design costs
before any of cocoviz's work.
"""

from __future__ import annotations

import argparse
import collections
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.append(str(ROOT))  # for tests.support

from floor_apps import FLOOR_APPS, THREE_BARS, write_chart  # noqa: E402
from warm_up import warm_up  # noqa: E402  (the warm-up scripts/run.sh does)

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, stop, streamlit_command  # noqa: E402  (the end-to-end test's browser)

#: Every visit's window, so that every page lays out alike.
VIEWPORT = {"width": 1500, "height": 1200}
#: The sidebar's "Per level" toggle: the per-level boxes are drawn once it is on.
PER_LEVEL = ".st-key-w-per_level label"
#: A chart Plotly has drawn (its SVG exists).
DRAWN_CHART = ".js-plotly-plot .main-svg"
TRIVIAL_APP = """
import plotly.graph_objects as go
import streamlit as st

x = st.number_input("x", value=1.0)
st.metric("value", f"{x:g}")
st.plotly_chart(go.Figure(go.Bar(y=[1, 3, 2])))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(app: Path, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    """Start ``streamlit run app`` headless on a free local port and warm it as scripts/run.sh does."""
    port = _free_port()
    proc = subprocess.Popen(
        streamlit_command(app, port),
        cwd=app.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        warm_up(url)
    except BaseException:
        _stop(proc)
        raise
    return proc, url


def _stop(proc: subprocess.Popen) -> None:
    """End a server started by :func:`_serve` (its own process group)."""
    stop(proc)


def _thread_seconds(cdp) -> float:
    """CPU seconds the page's main thread has used (CDP Performance "ThreadTime")."""
    return next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"] if m["name"] == "ThreadTime")


def first_visit(browser, url: str, metric: str) -> tuple[float, float, float]:
    """Seconds from navigation in a new context (empty cache) until the first metric, and the first drawn chart;
    and the CPU seconds the page's main thread spent until that chart.

    The CPU seconds hardly move with the machine's load (the wall-clock seconds do): the steadier figure for
    comparing two versions of a page on a busy machine.
    """
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        cpu = _thread_seconds(cdp)
        start = time.perf_counter()
        page.goto(url)
        page.locator('[data-testid="stMetric"]').filter(has_text=metric).first.wait_for(timeout=120_000)
        shown = time.perf_counter() - start
        page.locator(DRAWN_CHART).first.wait_for(timeout=120_000)
        return shown, time.perf_counter() - start, _thread_seconds(cdp) - cpu
    finally:
        context.close()


def profiled_visit(browser, url: str) -> collections.Counter:
    """Main-thread milliseconds by front-end chunk, from navigation until the first drawn chart.

    A CDP sampling profile (0.2 ms) of one first visit in a new context; each sample's time goes to the
    chunk (script file) of its innermost frame, or to Chromium's own labels ("(program)", "(garbage
    collector)"); idle time is left out.
    """
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        cdp.send("Profiler.start")
        page.goto(url)
        page.locator(DRAWN_CHART).first.wait_for(timeout=120_000)
        profile = cdp.send("Profiler.stop")["profile"]
    finally:
        context.close()
    nodes = {n["id"]: n["callFrame"] for n in profile["nodes"]}
    spent: collections.Counter = collections.Counter()
    for sample, dt in zip(profile["samples"], profile["timeDeltas"]):
        frame = nodes[sample]
        chunk = frame["url"].rsplit("/", 1)[-1].split(".", 1)[0] or frame["functionName"] or "(native)"
        if chunk != "(idle)":
            spent[chunk] += dt / 1000
    return spent


def _print_profiles(profiles: dict[str, list[collections.Counter]], top: int = 12) -> None:
    """Median main-thread ms per chunk, the apps side by side, the chunks that differ most first."""
    names = list(profiles)
    chunks = set().union(*(c for runs in profiles.values() for c in runs))
    median = {n: {c: statistics.median(r[c] for r in profiles[n]) for c in chunks} for n in names}
    total = {n: statistics.median(sum(r.values()) for r in profiles[n]) for n in names}
    order = sorted(chunks, key=lambda c: -max(abs(median[n][c] - median[names[0]][c]) for n in names))
    print("main thread until the first chart, ms (median of the profiled visits; apps in the order above)")
    print(f"  {'all, idle left out':28s}" + "".join(f"{total[n]:9.0f}" for n in names))
    for c in order[:top]:
        print(f"  {c[:28]:28s}" + "".join(f"{median[n][c]:9.0f}" for n in names))


def _interactions(browser, url: str, *, metric: str, values: list[str], boxes: dict[str, str]) -> dict:
    """Per box (a name and the CSS selector of its number input): seconds from Enter until the metric changes."""
    out: dict = {}
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.goto(url)
    shown = page.locator('[data-testid="stMetric"]').filter(has_text=metric).first
    shown.wait_for(timeout=60_000)
    page.wait_for_timeout(1500)
    if page.locator(PER_LEVEL).count():  # cocoviz draws the per-level boxes on request (issue 25)
        page.locator(PER_LEVEL).click()
        page.locator(next(iter(boxes.values()))).wait_for(timeout=60_000)
        page.wait_for_timeout(1500)
    for name, selector in boxes.items():
        box = page.locator(selector)
        out[name] = []
        for value in values:
            before = shown.inner_text()
            box.fill(value)
            start = time.perf_counter()
            box.press("Enter")
            page.wait_for_function(
                "([m, before]) => { const e = [...document.querySelectorAll('[data-testid=\"stMetric\"]')]"
                ".find(x => x.innerText.includes(m)); return e && e.innerText !== before; }",
                arg=[metric, before],
                timeout=60_000,
            )
            out[name].append(time.perf_counter() - start)
            page.wait_for_timeout(1500)
    return out


def main() -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--visits", type=int, default=5, help="first visits per app (default 5)")
    parser.add_argument("--no-interactions", action="store_true", help="first visits only")
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="N more first visits per app under the profiler"
    )
    parser.add_argument(
        "--app",
        action="append",
        default=None,
        help="a dashboard's app.py to measure (default: this tree's); repeat it to compare checkouts in one run",
    )
    parser.add_argument(
        "--floors",
        nargs="*",
        metavar="NAME",
        help="also measure the trivial app grown into the dashboard's design as static content (pages, sidebar, "
        f"main, …); names pick some of {', '.join(FLOOR_APPS)} (default: all)",
    )
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        trivial = Path(tmp) / "trivial_app.py"
        trivial.write_text(TRIVIAL_APP)
        # cocoviz: the root's ε (one level recomputed, the others reused) and the counties' ε (the costly level).
        dashboards = [Path(a).resolve() for a in (args.app or [ROOT / "app.py"])]
        floors = []
        chosen = [] if args.floors is None else (args.floors or list(FLOOR_APPS))
        for floor in chosen:
            source, metric = FLOOR_APPS[floor]
            path = Path(tmp) / floor / "app.py"
            path.parent.mkdir()
            path.write_text(source)
            if floor not in THREE_BARS:
                write_chart(str(dashboards[0]), path.with_name("chart.json"))
            floors.append((f"floor: trivial app + {floor} (static)", path, metric, {}))
        # Boxes by widget key (pages.common.state's "w." prefix): under load the sidebar renders in pieces, and
        # "the first box labelled exact ε" can be another level's.
        apps = [
            ("trivial Streamlit app", trivial, "value", {"interaction_s": '[data-testid="stNumberInput"] input'}),
            *floors,
        ] + [
            (
                f"cocoviz (Explore, bundled default) {app}",
                app,
                "Total ε spent",
                {"root_eps_s": ".st-key-w-eps_n-0 input", "county_eps_s": ".st-key-w-eps_n-2 input"},
            )
            for app in dashboards
        ]
        servers: list[tuple[subprocess.Popen, str]] = []
        results: dict[str, dict[str, list[float]]] = {
            name: {"first_metric_s": [], "first_chart_s": [], "first_chart_cpu_s": []} for name, *_ in apps
        }
        profiles: dict[str, list[collections.Counter]] = {name: [] for name, *_ in apps}
        try:
            for _name, app, *_ in apps:
                # Each dashboard imports its own checkout's package first; the floor apps, this checkout's tooltips.
                home = ROOT if any(app == path for _n, path, *_ in floors) else app.parent
                servers.append(_serve(app, env={"PYTHONPATH": str(home)}))
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                for _ in range(args.visits):  # alternating, so every app sees the same load
                    for (name, _app, metric, _boxes), (_proc, url) in zip(apps, servers):
                        shown, chart, cpu = first_visit(browser, url, metric)
                        results[name]["first_metric_s"].append(shown)
                        results[name]["first_chart_s"].append(chart)
                        results[name]["first_chart_cpu_s"].append(cpu)
                for _ in range(args.profile):
                    for (name, *_), (_proc, url) in zip(apps, servers):
                        profiles[name].append(profiled_visit(browser, url))
                if not args.no_interactions:
                    for (name, _app, metric, boxes), (_proc, url) in zip(apps, servers):
                        if not boxes:  # a floor app: first visits only
                            continue
                        results[name].update(
                            _interactions(
                                browser,
                                url,
                                metric=metric,
                                values=["0.5", "0.7", "0.9", "1.1", "1.3"],
                                boxes=boxes,
                            )
                        )
                browser.close()
        finally:
            for proc, _url in servers:
                _stop(proc)
    for name, r in results.items():
        print(name)
        for key, xs in r.items():
            print(f"  {key:16s} median {statistics.median(xs):5.2f} s   all {', '.join(f'{x:.2f}' for x in xs)}")
    if args.profile:
        _print_profiles(profiles)
    trivial_name = apps[0][0]
    floor = statistics.median(results[trivial_name]["first_chart_s"])
    cpu_floor = statistics.median(results[trivial_name]["first_chart_cpu_s"])
    for name, *_ in apps[1:]:
        ratio = statistics.median(results[name]["first_chart_s"]) / floor
        print(
            f"first-visit ratio (home page until the first chart, medians) {name} / trivial app: {ratio:.2f} "
            "(target ≤ 1.3)"
        )
        cpu_ratio = statistics.median(results[name]["first_chart_cpu_s"]) / cpu_floor
        print(f"  main-thread CPU until the first chart, same ratio: {cpu_ratio:.2f} (steadier under load)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
