"""What recording a sweep's releases costs: the same sweep with and without a journal.

Run:  python benchmarks/journal.py

A sweep of small releases (a 3-level tree of 13 nodes, 80 releases of a few tens of milliseconds)
is the worst case: the journal's cost per release (Parquet encoding and one append) is fixed, so on
the paper's data, whose releases take from a tenth of a second to seconds, its share is smaller.
Prints the best of three runs each, their ratio and the cost per release; both runs give the same frame.
"""

from __future__ import annotations

import tempfile
import time

import numpy as np
import pandas as pd

from cocoviz.experiments import Data, Sweep, run_sweep
from cocoviz.hierarchy import Hierarchy


def small_tree() -> Hierarchy:
    rng = np.random.default_rng(0)
    rows = []
    for state, n_counties in {"CA": 3, "OR": 2, "WA": 2, "NY": 2}.items():
        for c in range(n_counties):
            s, n = np.unique(np.concatenate([rng.geometric(0.4, 200), rng.integers(20, 60, 3)]), return_counts=True)
            rows.append(pd.DataFrame({"state": state, "county": f"{state}-{c}", "size": s, "count": n}))
    return Hierarchy.from_counts(pd.concat(rows), size="size", count="count", levels=["state", "county"])


def main() -> None:
    sweep = Sweep(
        datasets=[Data("a", tree=small_tree(), depth=1)],
        mixes=["Hc×Hg", "Hg"],
        epsilons=[0.5, 1.0],
        merges=["weighted", "average"],
        trials=10,
        seed=7,
        max_size=200,
    )
    reference = run_sweep(sweep)  # also warms the kernels
    best = {}
    for label in ("plain", "journal"):
        times = []
        for _ in range(3):
            folder = tempfile.mkdtemp()
            start = time.perf_counter()
            frame = run_sweep(sweep, journal=folder if label == "journal" else None)
            times.append(time.perf_counter() - start)
            pd.testing.assert_frame_equal(frame, reference)
        best[label] = min(times)
    n = len(sweep.mixes) * len(sweep.epsilons) * len(sweep.merges) * sweep.trials
    per_release = 1000 * (best["journal"] - best["plain"]) / n
    print(
        f"{n} releases: plain {best['plain']:.2f} s, journal {best['journal']:.2f} s, "
        f"ratio {best['journal'] / best['plain']:.2f}, {per_release:.1f} ms per release"
    )


if __name__ == "__main__":
    main()
