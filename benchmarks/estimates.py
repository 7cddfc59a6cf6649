"""Run-time estimates of the Methods page against measured times on this machine, as a fresh server makes them.

A fresh server probes its speed (:func:`pages.common.calibration.probe_rate`) and, before any run has taught
it, estimates a sweep as the cells its plans noise at that speed (:func:`pages.common.sweeps.estimated_seconds`).
This benchmark does the same on the default dataset, then times the runs themselves — a sweep of the page's
default candidates and the Tables tab's two tables — and prints measured / estimated for each.  Goal: within 2×
either way (0.5–2).  Run from the repository root: ``python benchmarks/estimates.py [--trials 1]``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.pop("COCOVIZ_TIMING", None)
logging.disable(logging.WARNING)  # Streamlit's "no script run context" notes, outside a server

from results import Timer, record  # noqa: E402

import cocoviz  # noqa: E402
from cocoviz import datasets  # noqa: E402
from cocoviz.experiments import findings  # noqa: E402
from pages.common import calibration, engine, sweeps  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--max-size", type=int, default=100_000)
    args = parser.parse_args()
    tree = datasets.load_dataset(datasets.DEFAULT_DATASET)
    n = tree.depth + 1
    cocoviz.compile_kernels()
    rate = calibration.probe_rate()
    state = calibration._state()  # the server's calibration right after its first probe: no run taught yet
    state.update(rate=rate, default=engine.FAST_CELLS_PER_SECOND, at=time.time(), ratio={})
    print(f"probe: {rate / 1e6:.1f} M cells/s; load {os.getloadavg()[0]:.1f}")
    candidates = findings.method_candidates(n)
    sweep = [candidates[c] for c in findings.default_candidates(n)]
    table3 = [sweeps.Config((m,) * n, "none", "weighted", m) for m in ("naive", "Hc", "Hg")]
    table4 = [
        sweeps.Config(("Hc",) * n, "bottom-up", "weighted", "BU"),
        sweeps.Config(("Hc",) * n, "top-down", "weighted", "Hc"),
    ]
    runs = {
        f"Methods sweep: {len(sweep)} candidates, ε per level 1, {args.trials} trial(s)": (sweep, [1.0]),
        f"Methods Table 3: naive, Hc, Hg at ε 1, {args.trials} trial(s)": (table3, [1.0]),
        f"Methods Table 4: bottom-up and top-down Hc at ε 1/{n}, {args.trials} trial(s)": (table4, [1.0 / n]),
    }
    for target, (configs, epsilons) in runs.items():
        estimated = sweeps.estimated_seconds(tree, configs, epsilons, args.trials, args.max_size)
        with Timer() as timer:
            sweeps.run_series(tree, configs, epsilons=epsilons, trials=args.trials, max_size=args.max_size, seed=0)
        ratio = timer.wall / estimated
        print(f"{target}: estimated {estimated:.1f} s, measured {timer.wall:.1f} s, measured / estimated {ratio:.2f}")
        record(
            "estimates",
            target=target,
            figure=f"measured / estimated {ratio:.2f} ({timer.wall:.1f} s / {estimated:.1f} s)",
            goal="0.5-2",
            met=0.5 <= ratio <= 2,
            timer=timer,
            command="python benchmarks/estimates.py",
        )


if __name__ == "__main__":
    main()
