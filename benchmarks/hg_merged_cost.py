"""Cost of the Hg children's merged statement within their parent's sizes (issue 24,
:func:`cocoviz.accuracy.stated.variances.hg_merged_stated`, docs/merge-variances.md "Small Hg nodes") at 10M groups,
as a share
of the release's own time (``post_process``) in the same run.

The rule runs once per merged pair in the size-error regime, over the parent's runs within eight noise scales of
the child's fitted size (a compiled loop): its cost grows with pairs and the parent's runs near them, not with
groups.  The tree of ``benchmarks/released_stated_cost.py`` (10M groups, 1 root, 50 states, 2,500 counties),
all-Hg top-down, ε = 1 and 0.1 per level (at 0.1 more of the counties' blocks are noise, so more pairs take the
rule); wall and CPU seconds, the better of two runs.  Run under ``nice``::

    nice python benchmarks/hg_merged_cost.py
"""

from __future__ import annotations

import time

from released_stated_cost import GROUPS, tree  # the same seeded tree (this folder is on the path of a script)

from cocoviz.accuracy.stated import topdown as slices  # where the statements call the rules
from cocoviz.measure.measurements import measure
from cocoviz.plan import Plan
from cocoviz.release.post_process import post_process


def main() -> None:
    data = tree()
    rule = slices.hg_merged_stated
    spent = [0.0, 0.0]

    def timed(*args):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return rule(*args)
        finally:
            spent[0] += time.perf_counter() - wall
            spent[1] += time.process_time() - cpu

    for eps in (1.0, 0.1):
        plan = Plan.build(data, epsilons=[eps] * 3, methods=["Hg"] * 3, max_size=2_048)
        measured = measure(plan, data, seed=0)
        post_process(plan, measured, stated=True)  # compile outside the timing
        best = None
        slices.hg_merged_stated = timed
        try:
            for _ in range(2):
                spent[:] = [0.0, 0.0]
                wall, cpu = time.perf_counter(), time.process_time()
                post_process(plan, measured, stated=True)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                if best is None or wall < best[0]:
                    best = (wall, cpu, *spent)
        finally:
            slices.hg_merged_stated = rule
        wall, cpu, rule_wall, rule_cpu = best
        print(
            f"Hg×Hg×Hg top-down ε = {eps:g}, {GROUPS:,} groups: post_process {wall:.2f} s ({cpu:.2f} CPU s), "
            f"hg_merged_stated {rule_wall:.3f} s ({rule_cpu:.3f} CPU s): {rule_wall / wall:.1%} of the wall time, "
            f"{rule_cpu / cpu:.1%} of the CPU",
            flush=True,
        )


if __name__ == "__main__":
    main()
