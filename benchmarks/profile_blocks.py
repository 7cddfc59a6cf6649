"""Where a block-level release spends its CPU: cProfile (CPU clock, all threads' work seen from the main one).

Run:  python benchmarks/profile_blocks.py --scale 0.3 --sampler secure          (top 40 by cumulative time)
      python benchmarks/profile_blocks.py --scale 0.1 --sampler fast --out f.prof --sort tottime

housing-us-blocks at ``--scale``, all-Hg, ε = 1 per level, no stated errors; the data generation and the tree's
build are not profiled, the kernels are compiled first (:func:`cocoviz.compile_kernels`).  Printed: the release's
CPU and wall seconds and the process's peak resident memory (with the generated data), then the profile.
A secure release is recorded in the privacy ledger as any other (``$COCOVIZ_LEDGER`` chooses which).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=0.3)
    parser.add_argument("--sampler", choices=["fast", "secure"], default="secure")
    parser.add_argument("--out", default=None, help="write the profile here too (pstats format)")
    parser.add_argument("--sort", default="cumulative", help="pstats sort key")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()

    import cocoviz
    from cocoviz.datasets import dataset, generate

    tree = dataset("housing-us-blocks").build(generate("housing-us-blocks", scale=args.scale))
    cocoviz.compile_kernels()
    gc.collect()
    depth = tree.depth + 1
    opts = dict(methods=["Hg"] * depth, epsilons=[1.0] * depth)
    opts.update(seed=0) if args.sampler == "fast" else opts.update(sampler="secure")
    profile = cProfile.Profile(time.process_time)
    cpu, wall = time.process_time(), time.perf_counter()
    profile.enable()
    cocoviz.estimate(tree, **opts)
    profile.disable()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"{args.sampler} all-Hg at scale {args.scale:g}: {cpu:.1f} s CPU, {wall:.1f} s wall, peak {peak:.2f} GiB")
    if args.out:
        profile.dump_stats(args.out)
    pstats.Stats(profile).sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
