"""The synthetic datasets at the paper's size, and the bundled files' sizes and load times.

Run:  python benchmarks/datasets_scale.py            (scale 1.0, seeds 0)
      python benchmarks/datasets_scale.py --seeds 5  (seeds 0..4: the spread of the figures)

Targets (issue 3): at scale 1.0 every dataset's groups, persons and distinct
sizes within 5% of the paper's Table 2; each bundled file at most 10 MB and
loaded in well under a second.  Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cocoviz import datasets  # noqa: E402
from cocoviz.datasets.registry import load_cached  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=1, help="number of seeds to generate (0, 1, ...)")
    args = parser.parse_args()
    ok = True

    print("Scale 1.0 against the paper's Table 2 (ours / paper, relative difference)")
    print(f"{'dataset':10s} {'seed':>4s} {'groups':>34s} {'persons':>36s} {'distinct sizes':>22s}")
    for seed in range(args.seeds):
        start = time.perf_counter()
        for row in datasets.full_scale_figures(seed):
            cells = []
            for ours, paper, rel in zip(row["ours"], row["paper"], row["relative"]):
                cells.append(f"{ours:,} / {paper:,} ({rel:+.1%})")
                ok &= abs(rel) <= 0.05
            print(f"{row['dataset']:10s} {seed:4d} {cells[0]:>34s} {cells[1]:>36s} {cells[2]:>22s}")
        print(f"{'':10s} {'':4s} all four generated in {time.perf_counter() - start:.1f} s")
    print(f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GB\n")

    print("Bundled files (data/): size and load time (first load, then cached)")
    for name in datasets.bundled_names():
        spec = datasets.dataset(name)
        path = datasets.DATA_DIR / spec.filename
        load_cached.cache_clear()
        start = time.perf_counter()
        tree = datasets.load_dataset(name)
        first = time.perf_counter() - start
        start = time.perf_counter()
        datasets.load_dataset(name)
        again = time.perf_counter() - start
        size = path.stat().st_size
        ok &= size <= 10 * 2**20 and first < 1.0
        s = tree.summary()
        print(
            f"{name:14s} {size / 1024:8,.0f} KiB  load {first * 1000:6.0f} ms (cached {again * 1e6:4.0f} µs)  "
            f"{s['groups']:>10,} groups, {s['distinct_sizes']:>5,} distinct sizes, nodes {s['nodes_per_level']}"
        )
    print("\nall targets met" if ok else "\nTARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
