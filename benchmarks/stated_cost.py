"""Cost of the stated Hg variances (issue 24) at 10M groups, as a ratio to the Hg fit they come from.

``cocoviz.accuracy.stated.variances.hg_stated_runs`` (the step model and the block rule) and ``pool_by_size`` run on
the fitted
runs (one hash pass and a few passes over the runs), so their cost grows with runs, not groups.  Seeded data: sizes
1–60, geometric, as one node and as 10,000 nodes; the best of three runs.  Run under ``nice``::

    nice python benchmarks/stated_cost.py
"""

from __future__ import annotations

import time

import numpy as np

from cocoviz.accuracy.stated.variances import hg_stated_runs, pool_by_size
from cocoviz.methods._level_kernels import fit_hg_segments

GROUPS = 10_000_000


def main() -> None:
    rng = np.random.default_rng(0)
    sizes = np.sort(np.minimum(rng.geometric(0.35, GROUPS), 60))
    fit_hg_segments(sizes[:1000], np.array([0, 1000]), 2, 2.0)  # compile outside the timing
    for nodes in (1, 10_000):
        ptr = np.linspace(0, GROUPS, nodes + 1).astype(np.int64)
        truth = np.concatenate([np.sort(sizes[ptr[k] : ptr[k + 1]]) for k in range(nodes)])
        noisy = truth + rng.geometric(0.63, GROUPS) - rng.geometric(0.63, GROUPS)  # ε = 1: e^-1 ≈ 1 - 0.63
        best_fit = best_stated = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            run_ptr, run_sizes, counts, variances = fit_hg_segments(noisy, ptr, 2, 2.0)
            middle = time.perf_counter()
            pool_by_size(run_ptr, run_sizes, counts, hg_stated_runs(run_ptr, run_sizes, counts, variances, 2.0))
            end = time.perf_counter()
            best_fit, best_stated = min(best_fit, middle - start), min(best_stated, end - middle)
        print(
            f"{nodes} nodes, {GROUPS:,} groups, {len(run_sizes):,} runs: Hg fit {best_fit:.3f} s, "
            f"stated {best_stated:.4f} s ({best_stated / best_fit:.1%} of the fit)",
            flush=True,
        )


if __name__ == "__main__":
    main()
