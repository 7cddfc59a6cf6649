"""The accuracy frame a level at a time against node by node: ``python benchmarks/intervals.py --only frame``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def frame_time(name: str, repeats: int) -> list[dict]:
    """Seconds of the level-at-once accuracy frame against the node-by-node reference, same release, same run."""
    import pandas as pd

    import cocoviz
    from cocoviz import Plan, measure, post_process
    from cocoviz.accuracy.intervals.scope import accuracy_frame
    from tests.support.intervals import node_by_node_frame

    tree = cocoviz.load_dataset(name)
    depth = tree.depth + 1
    plan = Plan.build(
        tree, epsilons=[1.0] * depth, methods=["Hc"] * (depth - 1) + ["Hg"], max_size=max(int(tree.max_size), 1)
    )
    measurements = measure(plan, tree, seed=0)
    release = post_process(plan, measurements)
    rows = []
    for given, band in ((None, "cells"), (measurements, "runs on Hg")):
        best = {"node by node": float("inf"), "level at once": float("inf")}
        for _ in range(repeats):
            for label, fn in (("node by node", node_by_node_frame), ("level at once", accuracy_frame)):
                start = time.perf_counter()
                frame = fn(release, measurements=given)
                best[label] = min(best[label], time.perf_counter() - start)
                if label == "node by node":
                    reference = frame
            pd.testing.assert_frame_equal(frame, reference)
        rows.append(
            {
                "dataset": name,
                "band": band,
                "nodes": sum(len(release.nodes(level)) for level in range(depth)),
                "rows": len(frame),
                "node_by_node_s": best["node by node"],
                "level_at_once_s": best["level at once"],
                "speedup": best["node by node"] / best["level at once"],
                "equal": True,
            }
        )
    return rows
