"""Dashboard speed on the bundled default: what the Explore page computes, and whole page runs.

Run:  python benchmarks/dashboard.py

1. The Explore page's work without Streamlit (load the default dataset, ``estimate`` with the
   page's defaults, per-node errors, the histogram and error-by-size figures), in a fresh
   process so imports and numba's cache loading count: cold, then warm interactions
   (a new ε, a node picked).
2. The page itself under ``streamlit.testing``'s AppTest: first run in a fresh process
   (the server's first session), a new session on the warm process (a later visitor),
   an ε change at the root, back to a cached one, and at the counties.

Targets (issue 4): a first visit under 2 s, later interactions under 1 s.  The browser's
own figures (time to first metric and chart, in Chromium) are written by the end-to-end
test to ``artifacts/browser_timings.json``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ENGINE = r"""
import json, time
t0 = time.perf_counter()
import cocoviz
from cocoviz import plots
from cocoviz.datasets import DEFAULT_DATASET, dataset_card, load_dataset
t_import = time.perf_counter() - t0

def page(tree, eps, node):
    release = cocoviz.estimate(tree, epsilons=[eps] * (tree.depth + 1), methods=["Hc"] * (tree.depth + 1),
                               max_size=K, seed=0)
    cocoviz.level_summary(cocoviz.evaluate(tree, release))
    plots.histogram_figure(tree.histogram(node), release.histogram(node), log_x=True, log_y=True)
    plots.error_by_size_figure({"release": cocoviz.size_errors(tree, release, node)})
    return release

t = time.perf_counter(); tree = load_dataset(DEFAULT_DATASET); K = dataset_card(DEFAULT_DATASET)["public_max_size"]
t_load = time.perf_counter() - t
t = time.perf_counter(); page(tree, 1.0, ()); t_first = time.perf_counter() - t
t = time.perf_counter(); page(tree, 0.5, ()); t_eps = time.perf_counter() - t
node = tree.nodes(1)[0]
t = time.perf_counter(); page(tree, 0.5, node); t_node = time.perf_counter() - t
print(json.dumps({"dataset": DEFAULT_DATASET, "K": K, "nodes": sum(tree.summary()["nodes_per_level"]),
                  "import_s": t_import, "load_s": t_load, "first_release_and_figures_s": t_first,
                  "new_epsilon_s": t_eps, "node_pick_recompute_s": t_node}))
"""

APPTEST = r"""
import json, time
from streamlit.testing.v1 import AppTest
t = time.perf_counter(); at = AppTest.from_file("app.py", default_timeout=120).run(); first = time.perf_counter() - t
assert not at.exception and not at.error, (at.exception, at.error)
at2 = AppTest.from_file("app.py", default_timeout=120)
at2.session_state["cv.per_level"] = True  # the per-level boxes, drawn on request (issue 25)
t = time.perf_counter(); at2.run(); second = time.perf_counter() - t
t = time.perf_counter(); at2.number_input(key="w.eps_n.0").set_value(0.5).run(); eps = time.perf_counter() - t
t = time.perf_counter(); at2.number_input(key="w.eps_n.0").set_value(1.0).run(); back = time.perf_counter() - t
# The counties' ε: the level that costs most (the root's and states' estimates are reused).
t = time.perf_counter(); at2.number_input(key="w.eps_n.2").set_value(0.5).run(); leaves = time.perf_counter() - t
# Timed only if it computed the release: a time estimate above the confirmation threshold stops the page at a button.
assert not [b for b in at2.get("button") if b.key == "explore.confirm"], "the county release waited for a click"
assert not at2.exception and not at2.error, (at2.exception, at2.error)
print(json.dumps({"first_session_s": first, "new_session_warm_s": second, "epsilon_change_s": eps,
                  "epsilon_back_cached_s": back, "county_epsilon_change_s": leaves}))
"""


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    engine = _run(ENGINE)
    app = _run(APPTEST)
    print("Explore's work without Streamlit (fresh process):")
    for k, v in engine.items():
        print(f"  {k:30s} {v:.3f}" if isinstance(v, float) else f"  {k:30s} {v}")
    print("Explore page under AppTest (fresh process):")
    for k, v in app.items():
        print(f"  {k:30s} {v:.3f}")


if __name__ == "__main__":
    main()
