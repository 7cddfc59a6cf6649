"""Cost of the stated Hc variances (issue 24) at 10M groups, as ratios measured in the same run.

``cocoviz.accuracy.stated.variances.hc_stated`` is the larger of the rank-shift rule (``hc_size_variances``, the rule
before the
step inside a gap) and the step (``hc_step_variances``: a few edge ranks of each run beside a gap); both run on the
fitted runs, so their cost grows with runs, not groups.  Printed: the Hc fit's time, the rank shift's and the whole
statement's, and the statement as a share of the fit and a multiple of the rank shift alone.  Seeded data: sizes
1–60 geometric with a sparse tail of lone groups up to 5,000 (gaps to step into), as one node (K = 100,000) and as
10,000 nodes (K = 1,024), ε = 1 and 0.1; the best of three runs.  Run under ``nice``::

    nice python benchmarks/hc_stated_cost.py
"""

from __future__ import annotations

import time

import numpy as np

from cocoviz.accuracy.stated.variances import hc_size_variances, hc_stated
from cocoviz.methods._level_kernels import fit_hc_segments

GROUPS = 10_000_000


def main() -> None:
    rng = np.random.default_rng(0)
    sizes = np.minimum(rng.geometric(0.35, GROUPS), 60)
    tail = rng.random(GROUPS) < 1e-4  # about a thousand lone groups a million: a sparse tail
    sizes[tail] = rng.integers(61, 5_000, int(tail.sum()))
    for nodes, bound in ((1, 100_000), (10_000, 1_024)):
        ptr = np.linspace(0, GROUPS, nodes + 1).astype(np.int64)
        node_sizes = np.minimum(sizes, bound)
        cells = np.arange(nodes + 1, dtype=np.int64) * bound
        truth = np.empty(nodes * bound, np.int64)
        for k in range(nodes):
            h = np.bincount(node_sizes[ptr[k] : ptr[k + 1]], minlength=bound + 1)
            truth[cells[k] : cells[k + 1]] = np.cumsum(h)[:-1]
        groups = np.diff(ptr)
        for epsilon in (1.0, 0.1):
            q = 1 - np.exp(-epsilon)
            noisy = truth + rng.geometric(q, truth.size) - rng.geometric(q, truth.size)
            fit_hc_segments(noisy[:bound], cells[:2], groups[:1], 1, 4.0)  # compile outside the timing
            hc_stated(np.array([0, 1]), np.array([1]), np.array([1]), 1.0, bound)
            best = [float("inf")] * 3
            for _ in range(3):
                start = time.perf_counter()
                run_ptr, run_sizes, counts, _ = fit_hc_segments(noisy, cells, groups, 1, 4 / epsilon**2)
                fitted = time.perf_counter()
                hc_size_variances(run_ptr, run_sizes, counts, 1 / epsilon, 0.0, bound)
                shifted = time.perf_counter()
                hc_stated(run_ptr, run_sizes, counts, 1 / epsilon, bound)
                end = time.perf_counter()
                best = [min(b, t) for b, t in zip(best, (fitted - start, shifted - fitted, end - shifted), strict=True)]
            fit, shift, stated = best
            print(
                f"{nodes} nodes, K = {bound:,}, ε = {epsilon:g}, {GROUPS:,} groups, {len(run_sizes):,} runs: "
                f"Hc fit {fit:.3f} s, rank shift {shift:.4f} s, stated {stated:.4f} s "
                f"({stated / fit:.1%} of the fit, {stated / shift:.2f}× the rank shift alone)",
                flush=True,
            )


if __name__ == "__main__":
    main()
