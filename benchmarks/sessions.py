"""Concurrent visitors: N headless Chromium sessions changing ε on the Explore page's default data at once.

Run:  python benchmarks/sessions.py [--sessions 20] [--edits 4] [--rounds 4]
      (quick check: --sessions 3 --edits 2 --rounds 1)

Starts ``streamlit run app.py`` headless on a free local port (warmed as ``scripts/run.sh`` does) and
drives Debian's Chromium (Playwright, one browser, a context per session: separate cookies and
websockets, so separate Streamlit sessions).  Then:

1. one session alone: open the page, then type ``--edits`` values of the root's ε, each until the
   "Total ε spent" metric shows the new total (the single-session edit time);
2. N sessions at once: each opens the page and types its values: the shared ones (0.5, 0.7, …, which
   every session asks for, so their releases can be shared) and one of its own (1 + i/100, a release
   no other session asks for).  After every edit the session checks that the page shows *its* total;
   a wrong or missing total is a lost edit, an exception box is an error;
3. step 2 again, ``--rounds`` times in all, each round with new browser contexts (new sessions) asking
   for the same values, so after the first round every release is in the shared memo and whatever the
   server still gains is what sessions leave behind.

Meanwhile the server's memory (resident set of its process) is sampled every half second.  Printed:
median edit time with N sessions against the single-session one, errors and lost edits, memory at the
start, peak and end of the concurrent phase, the memory at the end of every round (flat memory: the
later rounds end where the second did, while the server still keeps the last rounds' disconnected
sessions for ``server.disconnectedSessionTTL``), and the fast releases computed against those requested
(the server's shared release memo counts them: ``COCOVIZ_MEMO_STATS``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, _serve, _stop  # noqa: E402  (same server start and browser)

METRIC = "Total ε spent"
#: The default data's other levels keep ε = 1 each: the total is the root's ε + 2.
OTHER_LEVELS = 2.0
SHARED_VALUES = ["0.5", "0.7", "0.9", "1.1", "1.3", "1.5"]
TIMEOUT_MS = 600_000
#: An edit shown later than this is counted lost (a median edit takes seconds with 20 sessions).
EDIT_TIMEOUT_MS = 120_000


class Memory:
    """The resident memory of a process and its children, sampled every ``every`` seconds in a thread."""

    def __init__(self, pid: int, every: float = 0.5) -> None:
        import psutil

        self._proc, self._every = psutil.Process(pid), every
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _rss_mb(self) -> float:
        procs = [self._proc, *self._proc.children(recursive=True)]
        total = 0
        for p in procs:
            try:
                total += p.memory_info().rss
            except Exception:  # a child that just ended
                pass
        return total / 2**20

    def _run(self) -> None:
        start = time.perf_counter()
        while not self._stop.is_set():
            self.samples.append((time.perf_counter() - start, self._rss_mb()))
            self._stop.wait(self._every)

    def __enter__(self) -> Memory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


async def _total(page) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=METRIC).first
    return (await box.locator('[data-testid="stMetricValue"]').inner_text()).strip()


async def _session(browser, url: str, values: list[str]) -> dict:
    """Open the Explore page in a new context and type ``values`` as the root's ε, one after the other."""
    context = await browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)  # 20 pages load at once on two cores: minutes, not seconds
    out: dict = {"edits": [], "lost": [], "errors": 0, "open_s": float("nan")}
    try:
        page = await context.new_page()
        start = time.perf_counter()
        await page.goto(url, wait_until="commit")
        await page.locator('[data-testid="stMetric"]').filter(has_text=METRIC).first.wait_for(timeout=TIMEOUT_MS)
        out["open_s"] = time.perf_counter() - start
        # The root's box by its widget key: under load the sidebar renders in pieces, and "the first box labelled
        # exact ε" was at times another level's (an edit typed into level 1 then reads as a lost edit).
        await page.locator(".st-key-w-per_level label").click()  # per-level boxes on request (issue 25)
        box = page.locator(".st-key-w-eps_n-0 input")
        await box.wait_for(timeout=TIMEOUT_MS)
        for value in values:
            expected = f"{float(value) + OTHER_LEVELS:g}"
            await box.fill(value)
            start = time.perf_counter()
            await box.press("Enter")
            try:
                await page.wait_for_function(
                    "([m, want]) => { const e = [...document.querySelectorAll('[data-testid=\"stMetric\"]')]"
                    ".find(x => x.innerText.includes(m)); "
                    "return e && e.querySelector('[data-testid=\"stMetricValue\"]').innerText.trim() === want; }",
                    arg=[METRIC, expected],
                    timeout=EDIT_TIMEOUT_MS,
                )
                out["edits"].append(time.perf_counter() - start)
            except Exception:
                out["lost"].append((value, await _total(page)))
            await page.wait_for_timeout(300)
        # The last edit stays: the page (after its script is idle) still shows this session's own total.
        await page.wait_for_timeout(1000)
        if await _total(page) != f"{float(values[-1]) + OTHER_LEVELS:g}":
            out["lost"].append((values[-1], await _total(page)))
        out["errors"] = await page.locator('[data-testid="stException"]').count()
    except Exception as exc:  # a session that could not finish counts as an error, the others go on
        out["errors"] += 1
        out["failure"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    finally:
        await context.close()
    return out


async def _run(
    url: str, sessions: int, edits: int, rounds: int, memory: Memory
) -> tuple[dict, list[dict], float, list[float]]:
    """The single session, then ``rounds`` rounds of ``sessions`` at once; the memory at the end of each round."""
    from playwright.async_api import async_playwright

    many, ends = [], []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        single = await _session(browser, url, SHARED_VALUES[:edits])
        start = time.perf_counter()
        plans = [SHARED_VALUES[: edits - 1] + [f"{1 + (i + 1) / 100:g}"] for i in range(sessions)]
        for r in range(rounds):
            done = await asyncio.gather(*(_session(browser, url, plan) for plan in plans))
            many += done
            await asyncio.sleep(2)  # the server answers the closed sessions' last messages
            ends.append(memory.samples[-1][1])
            lost = [x for d in done for x in d["lost"]]
            print(
                f"  round {r + 1}: {sum(d['errors'] for d in done)} errors, {len(lost)} lost edits {lost[:3]}, "
                f"{ends[-1]:.0f} MB at its end",
                flush=True,
            )
        wall = time.perf_counter() - start
        await browser.close()
    return single, many, wall, ends


def _stats(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {"requests": 0, "computed": 0, "waited": 0, "hits": 0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20, help="concurrent browser sessions (default 20)")
    parser.add_argument("--edits", type=int, default=4, help="ε edits per session (default 4, at most 6)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds of concurrent sessions (default 4)")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing (apt-get install chromium)", file=sys.stderr)
        return 1
    edits = max(1, min(args.edits, len(SHARED_VALUES)))
    with tempfile.TemporaryDirectory() as tmp:
        stats_path = Path(tmp) / "memo.json"
        proc, url = _serve(ROOT.parent / "app.py", env={"COCOVIZ_MEMO_STATS": str(stats_path)})
        try:
            with Memory(proc.pid) as memory:
                warm = _stats(stats_path)
                single, many, wall, ends = asyncio.run(_run(url, args.sessions, edits, max(1, args.rounds), memory))
            end = _stats(stats_path)
        finally:
            _stop(proc)
    edits_many = [t for s in many for t in s["edits"]]
    lost = [(i, x) for i, s in enumerate(many) for x in s["lost"]] + [("single", x) for x in single["lost"]]
    errors = sum(s["errors"] for s in many) + single["errors"]
    mem = [m for _, m in memory.samples]
    single_median = statistics.median(single["edits"]) if single["edits"] else float("nan")
    many_median = statistics.median(edits_many) if edits_many else float("nan")
    requested = end["requests"] - warm["requests"]
    computed = end["computed"] - warm["computed"]
    print(
        f"{args.sessions} concurrent sessions × {edits} ε edits on the Explore page (default data), "
        f"{len(ends)} round(s), {wall:.0f} s"
    )
    print(
        f"  edit time: median {many_median:.2f} s with {args.sessions} sessions against {single_median:.2f} s "
        f"alone (ratio {many_median / single_median:.1f}); slowest {max(edits_many, default=float('nan')):.2f} s"
    )
    print(
        f"  first load: median {statistics.median(s['open_s'] for s in many):.2f} s with {args.sessions} sessions "
        f"against {single['open_s']:.2f} s alone"
    )
    failures = [s["failure"] for s in [single, *many] if "failure" in s]
    print(
        f"  errors (exception boxes or sessions that failed): {errors} {failures[:3] if failures else ''}; "
        f"lost edits: {len(lost)} {lost[:5] if lost else ''}"
    )
    print(
        f"  server memory (RSS): {mem[0]:.0f} MB at the start, peak {max(mem):.0f} MB, {mem[-1]:.0f} MB at the end "
        f"({len(mem)} samples)"
    )
    rounds = " → ".join(f"{m:.0f}" for m in ends)
    later = f"; the last round ends {ends[-1] - ends[1]:+.0f} MB from the second" if len(ends) > 2 else ""
    print(f"  server memory at the end of each round (MB): {rounds}{later}")
    print(
        f"  fast releases: {requested} requested, {computed} computed "
        f"({end['waited'] - warm['waited']} waited for another session's computation, "
        f"{end['hits'] - warm['hits']} read from the shared memo); the memo holds {end.get('entries', 0)} "
        f"releases in {end.get('bytes', 0) / 2**20:.0f} MB"
    )
    return 1 if errors or lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
