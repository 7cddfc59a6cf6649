"""Finding one node by its path: NodeCodes.locate on the blocks of housing-us-blocks.

Run:  python benchmarks/locate.py               (scale 0.3)
      python benchmarks/locate.py --scale 1     (about 8M blocks; generating it takes minutes)

Prints the time of ``locate`` on a block, a tract and a state, each with its ratio to a reference
measured in the same run: locate's first form, one pass over each level (``codes == c & parents == k``).
The first call also pays the one-time check that each level is in (parent, label) order.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cocoviz import load_dataset  # noqa: E402
from cocoviz.core.nodes import NodeCodes  # noqa: E402


def scan(nodes: NodeCodes, path: tuple[str, ...]) -> int:
    """The reference: locate as a pass over every level on the way down."""
    k = 0
    for lvl, label in enumerate(path, start=1):
        code = int(np.searchsorted(nodes.labels[lvl], label))
        k = int(np.flatnonzero((nodes.codes[lvl] == code) & (nodes.parents[lvl] == k))[0])
    return k


def best(f, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.3)
    args = parser.parse_args()
    t = time.perf_counter()
    tree = load_dataset("housing-us-blocks", scale=args.scale)
    nodes = tree.node_codes
    total = sum(nodes.size(lvl) for lvl in range(nodes.depth + 1))
    print(
        f"housing-us-blocks scale {args.scale}: {nodes.size(nodes.depth):,} blocks, {total:,} nodes "
        f"(loaded in {time.perf_counter() - t:.1f} s)"
    )
    t = time.perf_counter()
    nodes.locate(nodes.path(nodes.depth, 0))
    print(f"  first locate (checks every level's order once): {(time.perf_counter() - t) * 1e3:.1f} ms")
    for level in (nodes.depth, 3, 1):
        k = nodes.size(level) * 2 // 3
        path = nodes.path(level, k)
        assert nodes.locate(path) == scan(nodes, path) == k
        reference = best(lambda p=path: scan(nodes, p))
        seconds = best(lambda p=path: nodes.locate(p), repeat=50)
        print(
            f"  level {level}: locate {seconds * 1e6:8.1f} µs, scan {reference * 1e3:7.1f} ms "
            f"(locate/scan = {seconds / reference:.5f})"
        )


if __name__ == "__main__":
    main()
