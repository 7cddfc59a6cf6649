"""Cost of the released upper levels' stated variances (issue 24, :mod:`cocoviz.accuracy.stated.released`) at 10M
groups,
as a share of the release's own time (``post_process``) in the same run.

The rule reads runs only, one step per level: the union at the parent of each step's children's own fits
(``union_stated``), one m = 1 merge and bound per matched segment (``step_stated``), their sums per parent and
size and the released runs' look-up (``StepStatements.add``, ``.released``); bottom-up the levels' sums
(``union_levels``, which also pools the leaves' own statements as the release did before).  Those are timed
inside ``post_process`` (wall and CPU seconds) and compared with the whole call, and with measure +
post_process (CPU seconds: on a shared machine the wall time of a niced process is mostly waiting).  Seeded data:
10M groups in 1 root, 50 states and 2,500 counties, sizes geometric (1–60) with a tail to 2,000; ε = 1 per
level; top-down (weighted) for all-Hc and all-Hg, and bottom-up all-Hg.  Run under ``nice``::

    nice python benchmarks/released_stated_cost.py
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from cocoviz.accuracy.stated import released as released_stated
from cocoviz.accuracy.stated import topdown as slices  # where the statements call the rules
from cocoviz.hierarchy import Hierarchy
from cocoviz.measure.measurements import measure
from cocoviz.plan import Plan
from cocoviz.release import post_process as postprocess
from cocoviz.release.post_process import post_process

GROUPS = 10_000_000
STATES, COUNTIES = 50, 2_500


def tree() -> Hierarchy:
    rng = np.random.default_rng(0)
    sizes = np.minimum(rng.geometric(0.35, GROUPS), 60)
    tail = rng.random(GROUPS) < 1e-4
    sizes[tail] = rng.integers(61, 2_000, int(tail.sum()))
    county = rng.integers(0, COUNTIES, GROUPS)
    frame = pd.DataFrame({"county": county, "size": sizes}).value_counts().rename("count").reset_index()
    frame["state"] = "s" + (frame["county"] % STATES).astype(str)
    frame["county"] = "c" + frame["county"].astype(str)
    return Hierarchy.from_counts(frame, size="size", count="count", levels=["state", "county"])


class Timed:
    """Wraps the rule's functions where they are called, summing their wall and CPU seconds."""

    NAMES = (
        (slices, "union_stated"),  # where the consistency step calls them (cocoviz.accuracy.stated.topdown)
        (slices, "step_stated"),
        (released_stated.StepStatements, "add"),
        (released_stated.StepStatements, "released"),
        (postprocess, "union_levels"),
    )

    def __enter__(self) -> Timed:
        self.wall = self.cpu = 0.0
        self.saved = {(owner, name): getattr(owner, name) for owner, name in self.NAMES}
        for (owner, name), function in self.saved.items():
            setattr(owner, name, self._timed(function))
        return self

    def _timed(self, function):
        def call(*args, **kwargs):
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.wall += time.perf_counter() - wall
                self.cpu += time.process_time() - cpu

        return call

    def __exit__(self, *exc) -> None:
        for (owner, name), function in self.saved.items():
            setattr(owner, name, function)


def main() -> None:
    data = tree()
    for methods, how in ((["Hc"] * 3, "top-down"), (["Hg"] * 3, "top-down"), (["Hg"] * 3, "bottom-up")):
        plan = Plan.build(data, epsilons=[1.0] * 3, methods=methods, max_size=2_048, consistency=how)
        measure(plan, data, seed=0)  # compile outside the timing
        cpu = time.process_time()
        measured = measure(plan, data, seed=0)
        measure_cpu = time.process_time() - cpu
        post_process(plan, measured, stated=True)
        best = None
        for _ in range(2):
            with Timed() as rule:
                wall, cpu = time.perf_counter(), time.process_time()
                post_process(plan, measured, stated=True)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            if best is None or wall < best[0]:
                best = (wall, cpu, rule.wall, rule.cpu)
        wall, cpu, rule_wall, rule_cpu = best
        print(
            f"{'×'.join(methods)} {how}, {GROUPS:,} groups: post_process {wall:.2f} s ({cpu:.2f} CPU s), "
            f"released-level rule {rule_wall:.3f} s ({rule_cpu:.3f} CPU s): {rule_wall / wall:.1%} of the "
            f"release's wall time, {rule_cpu / cpu:.1%} of its CPU; measure (the fast seeded sampler) "
            f"{measure_cpu:.2f} CPU s, so {rule_cpu / (cpu + measure_cpu):.1%} of measure + post_process",
            flush=True,
        )


if __name__ == "__main__":
    main()
