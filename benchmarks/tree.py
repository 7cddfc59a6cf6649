"""Building the tree at census scale: Hierarchy, Shape.of and Plan.build against a pandas groupby.

Run:  python benchmarks/tree.py                     (300,000 leaves, synthetic 4-level table)
      python benchmarks/tree.py --leaves 30000      (another size)
      python benchmarks/tree.py --census 1.25       (the census stand-in's block groups at that scale)

Every time is printed with its ratio to a reference measured in the same run: a pandas groupby of
the same table (group counts summed per leaf), the floor for anything that reads the table.  The
tree as it was built before issue 14 (Python tuples, sets and dicts) is timed too, from the same
leaves, as "tuples".  Bytes per node: the arrays the tree keeps (node codes and runs, every level),
and the peak of Python allocations while building it (tracemalloc), over the number of nodes.

``measure(leaves)`` returns the same figures as a dict (for benchmarks/scale.py).
Target: Hierarchy, Shape.of and Plan.build together well under a second at 300,000 leaves.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cocoviz.core.runs import aggregate_runs  # noqa: E402
from cocoviz.core.shape import Shape  # noqa: E402
from cocoviz.hierarchy import Hierarchy, tables  # noqa: E402
from cocoviz.plan import Plan  # noqa: E402

LEVELS = ["state", "county", "tract", "blockgroup"]


def synthetic_table(leaves: int, runs_per_leaf: int = 8, seed: int = 0) -> pd.DataFrame:
    """A census-like 4-level counts table: ``leaves`` block groups, 3 per tract, 27 tracts per county.

    Labels are categoricals and globally unique at every level (GEOID-like), the costly case for
    sorting; sizes 1..runs_per_leaf with random counts.
    """
    rng = np.random.default_rng(seed)
    bg = np.arange(leaves)
    tract, county = bg // 3, bg // 81
    state = county // 62
    leaf = np.repeat(bg, runs_per_leaf)

    def labels(prefix: str, codes: np.ndarray) -> pd.Categorical:
        names = np.char.add(prefix, np.arange(codes.max() + 1).astype(str))
        return pd.Categorical.from_codes(codes[leaf], names)

    return pd.DataFrame(
        {
            "state": labels("S", state),
            "county": labels("C", county),
            "tract": labels("T", tract),
            "blockgroup": labels("B", bg),
            "size": np.tile(np.arange(1, runs_per_leaf + 1), leaves),
            "count": rng.integers(1, 50, leaves * runs_per_leaf),
        }
    )


def tuple_tree(leaf_paths: list[tuple], leaf_node: np.ndarray, sizes: np.ndarray, counts: np.ndarray) -> list:
    """The tree as it was built before: sorted sets of tuples, a dict index and a list of parents per level."""
    depth = len(leaf_paths[0])
    paths = [sorted({p[:lvl] for p in leaf_paths}) for lvl in range(depth + 1)]
    index = [{p: k for k, p in enumerate(ps)} for ps in paths]
    order = np.array([index[depth][p] for p in leaf_paths], np.int64)
    parent = [np.zeros(0, np.int64)] + [
        np.array([index[lvl - 1][p[:-1]] for p in paths[lvl]], np.int64) for lvl in range(1, depth + 1)
    ]
    runs = [None] * (depth + 1)
    runs[depth] = aggregate_runs(order[leaf_node], sizes, counts, len(paths[depth]))
    for lvl in range(depth, 0, -1):
        below = runs[lvl]
        runs[lvl - 1] = aggregate_runs(parent[lvl][below.node_ids()], below.sizes, below.counts, len(paths[lvl - 1]))
    return [paths, index, parent, runs]


def _timed(fn, repeat: int = 3):
    """Best of ``repeat`` wall times (the machine is shared) and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def _peak(fn) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        keep = fn()  # noqa: F841 - held until the peak is read
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure_table(table: pd.DataFrame, levels: list[str] = LEVELS, *, repeat: int = 3, tuples: bool = True) -> dict:
    """Times (best of ``repeat``), ratios to the groupby and bytes per node of building ``table``'s tree."""
    out: dict = {"rows": len(table)}
    out["groupby_s"], _ = _timed(lambda: table.groupby(levels, observed=True)["count"].sum(), repeat)
    out["tables_s"], leaves = _timed(lambda: tables.counts_table(table, size="size", count="count", levels=levels), 1)
    out["hierarchy_s"], tree = _timed(lambda: Hierarchy(*leaves, public_groups=True), repeat)
    out["shape_s"], shape = _timed(lambda: Shape._of(tree), repeat)
    eps, methods = [1.0] * (tree.depth + 1), ["Hg"] * (tree.depth + 1)
    # A fresh shape each time: a shape keeps the tuples it made, and a plan is built once per shape.
    plan_times = []
    for _ in range(repeat):
        fresh = Shape._of(tree)
        plan_times.append(_timed(lambda s=fresh: Plan.build(s, epsilons=eps, methods=methods), 1)[0])
    out["plan_s"] = min(plan_times)
    nodes = sum(tree.summary()["nodes_per_level"])
    out["leaves"], out["nodes"] = tree.summary()["nodes_per_level"][-1], nodes
    kept = tree.node_codes.nbytes() + sum(
        tree.runs(lvl).ptr.nbytes + tree.runs(lvl).sizes.nbytes + tree.runs(lvl).counts.nbytes
        for lvl in range(tree.depth + 1)
    )
    out["kept_bytes_per_node"] = kept / nodes
    out["peak_bytes_per_node"] = _peak(lambda: Hierarchy(*leaves, public_groups=True)) / nodes
    if tuples:
        columns, runs = leaves[1], leaves[2]
        paths = list(zip(*(lab[c].tolist() for c, lab in zip(columns.codes, columns.labels))))
        args = (paths, runs.node_ids(), runs.sizes, runs.counts)
        out["tuples_s"], old = _timed(lambda: tuple_tree(*args), 1)
        out["tuples_peak_bytes_per_node"] = _peak(lambda: tuple_tree(*args)) / nodes
        assert [list(tree.nodes(lvl)) for lvl in range(tree.depth + 1)] == old[0], "node order changed"
    for key in ("tables_s", "hierarchy_s", "shape_s", "plan_s", "tuples_s"):
        if key in out:
            out[key.replace("_s", "_ratio")] = out[key] / out["groupby_s"]
    return out


def measure(leaves: int = 300_000) -> dict:
    """Build times and bytes per node of the tree of a synthetic 4-level table with ``leaves`` leaves."""
    return measure_table(synthetic_table(leaves))


def _print(title: str, m: dict) -> None:
    print(f"{title}: {m['rows']:,} rows, {m['leaves']:,} leaves, {m['nodes']:,} nodes")
    print(f"  reference: pandas groupby per leaf   {m['groupby_s']:7.3f} s   (1.00)")
    for key, label in (
        ("tables", "table checks + leaf codes"),
        ("hierarchy", "Hierarchy (integer codes)"),
        ("shape", "Shape.of"),
        ("plan", "Plan.build"),
        ("tuples", "Hierarchy as before (tuples)"),
    ):
        if f"{key}_s" in m:
            print(f"  {label:34s} {m[f'{key}_s']:7.3f} s   ({m[f'{key}_ratio']:.2f})")
    build = m["hierarchy_s"] + m["shape_s"] + m["plan_s"]
    print(f"  Hierarchy + Shape.of + Plan.build   {build:7.3f} s   ({build / m['groupby_s']:.2f})")
    print(
        f"  bytes per node: kept {m['kept_bytes_per_node']:,.0f}, peak while building "
        f"{m['peak_bytes_per_node']:,.0f}"
        + (f" (as before: peak {m['tuples_peak_bytes_per_node']:,.0f})" if "tuples_peak_bytes_per_node" in m else "")
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=300_000)
    parser.add_argument("--census", type=float, default=None, help="also the census stand-in at this scale")
    args = parser.parse_args(argv)
    _print("synthetic", measure(args.leaves))
    if args.census is not None:
        from cocoviz.datasets import generate_census

        start = time.perf_counter()
        table = generate_census(args.census, 0)
        print(f"\ncensus stand-in at scale {args.census:g} generated in {time.perf_counter() - start:.1f} s")
        _print("census block groups", measure_table(table, list(table.columns[:4]), repeat=1))


if __name__ == "__main__":
    main()
