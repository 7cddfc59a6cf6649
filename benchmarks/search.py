"""Finding a node among millions: cocoviz.hierarchy.search on a synthetic six-level tree to the block.

Run:  python benchmarks/search.py                  (8,000,000 blocks)
      python benchmarks/search.py --leaves 800000  (another size)

The tree is nation / state / county / tract / block group / block, shaped like the census's (51
states, 63 counties per state, 27 tracts per county, 3 block groups per tract, the rest blocks), built
straight into :class:`~cocoviz.core.nodes.NodeCodes` arrays.  Two labellings of the blocks:

* ``codes``: blocks numbered within their block group ("1000", "1001", ...), as the census does --
  few distinct labels per level;
* ``geoids``: every block labelled by its own 15-digit GEOID -- as many distinct labels as blocks,
  the costly case for the index and for a substring scan.

Every query's time is printed with its ratio to a reference measured in the same run: one pass of
``np.flatnonzero(parents == k)`` over the blocks' parent array (what listing one node's children
costs with no index).  Target: every query under 0.5 s at 8M blocks, in either labelling.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cocoviz.core.nodes import NodeCodes  # noqa: E402
from cocoviz.hierarchy.search import LabelIndex, find_nodes  # noqa: E402

FANOUT = (51, 63, 27, 3)  # states; counties per state; tracts per county; block groups per tract
STATES = [f"State {k:02d}" for k in range(FANOUT[0])]


def synthetic_nodes(leaves: int, geoids: bool) -> NodeCodes:
    """Six levels (root included) with about ``leaves`` blocks, sorted as NodeCodes.build sorts."""
    sizes = [1]
    for fan in FANOUT:
        sizes.append(sizes[-1] * fan)
    per_bg = max(1, round(leaves / sizes[-1]))
    sizes.append(sizes[-1] * per_bg)
    fans = [*FANOUT, per_bg]
    labels, codes, parents = [np.zeros(0, object)], [np.zeros(1, np.int64)], [np.zeros(0, np.int64)]
    for lvl in range(1, 6):
        n, fan = sizes[lvl], fans[lvl - 1]
        parent = np.arange(n, dtype=np.int64) // fan
        within = np.arange(n, dtype=np.int64) % fan
        if lvl == 1:
            lab = np.array(STATES, dtype=object)
        elif lvl == 2:
            lab = np.array([f"County {k:03d}" for k in range(fan)], dtype=object)
        elif lvl == 3:
            lab = np.array([f"{100 * (k + 1):06d}" for k in range(fan)], dtype=object)
        elif lvl == 4:
            lab = np.array([str(k + 1) for k in range(fan)], dtype=object)
        elif not geoids:
            lab = np.array([str(1000 + k) for k in range(fan)], dtype=object)
        else:  # one label per block: its 15-digit GEOID, sorted within its block group as the tree sorts
            lab = np.char.zfill(np.arange(n).astype(str), 15).astype(object)
            within = np.arange(n, dtype=np.int64)
        labels.append(lab)
        codes.append(within)
        parents.append(parent)
    return NodeCodes(tuple(labels), tuple(codes), tuple(parents))


def timed(f, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=8_000_000)
    args = parser.parse_args()
    queries = ["State 48", "state 48 / county 02", "1003", "County 020 / 000300 / 2", "00000123", "tract", "zzz"]
    for geoids in (False, True):
        t = time.perf_counter()
        nodes = synthetic_nodes(args.leaves, geoids)
        report(nodes, "geoids" if geoids else "codes", time.perf_counter() - t, queries)


def report(nodes: NodeCodes, name: str, made: float, queries: list[str]) -> None:
    reference, _ = timed(lambda: np.flatnonzero(nodes.parents[5] == 12345))
    built, index = timed(lambda: LabelIndex.build(nodes), repeat=1)
    print(
        f"{name}: {nodes.size(5):,} blocks, {len(nodes.labels[5]):,} distinct block labels "
        f"(tree arrays made in {made:.2f} s); reference pass {reference * 1e3:.1f} ms"
    )
    print(f"  index built in {built:.3f} s ({built / reference:.1f}x the reference)")
    for query in queries:
        seconds, hits = timed(lambda q=query: find_nodes(index, q, 50))
        shown = f"{len(hits)} shown of {hits.total:,}"
        print(f"  {query!r:28s} {seconds * 1e3:8.1f} ms ({seconds / reference:5.1f}x)  {shown}")


if __name__ == "__main__":
    main()
