"""The block-level releases of this revision against another, alternated in the same run (issue 36's targets).

Run:  git -C . worktree add /tmp/base main   (or: mkdir /tmp/base && git archive main | tar -x -C /tmp/base)
      python benchmarks/blocks_compare.py --base /tmp/base --scale 0.3
      python benchmarks/blocks_compare.py --base /tmp/base --scale 0.3 --only secure --rounds 2

Each release (housing-us-blocks at ``--scale``: all-Hg, all-Hc with a private K per node, secure all-Hg; ε = 1
per level, no stated errors) runs in a fresh process of the revision it measures (``benchmarks/scale.py --one``
of that checkout, its own ``cocoviz`` imported), base and this revision one after the other, round after round.
Printed per release: wall and CPU seconds (all threads) and the release's peak resident memory, the two
revisions side by side with this one's ratio to the base.  Warm-up releases at scale 0.05 (its root is large
enough to be streamed) first compile each checkout's numba kernels into its cache, so neither revision pays for
compiling in its figures.

Figures are written whole as JSON under ``benchmarks/results/`` (``results.record_rows``, ``blocks-compare``),
with the load average before and after the run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from results import record_rows  # noqa: E402 - benchmarks/ is on the path just above

#: (name, methods, k_select, sampler, targets at scale 1: seconds, GB)
RELEASES = {
    "all-Hg": ("Hg", "public", "fast", 40, 6),
    "all-Hc": ("Hc", "noisy-max-per-node", "fast", 45, 6),
    "secure": ("Hg", "public", "secure", 60, 6),
}


def one(root: Path, release: str, scale: float) -> dict:
    """One release in a fresh process of the checkout at ``root``: its figures (``scale.py``'s ``country``)."""
    methods, k_select, sampler, _, _ = RELEASES[release]
    args = json.dumps(["country", [methods, "housing-us-blocks", k_select, sampler, None, scale]])
    out = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "scale.py"), "--one", args],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, type=Path, help="a checkout of the revision to compare against")
    parser.add_argument("--scale", type=float, default=0.3)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--only", choices=sorted(RELEASES), action="append", help="releases to run (default all)")
    args = parser.parse_args()
    base, here = args.base.resolve(), ROOT
    releases = args.only or list(RELEASES)
    load_before = os.getloadavg()
    for root in (base, here):
        for release in RELEASES:
            one(root, release, 0.05)
    rows = []
    print(f"housing-us-blocks at scale {args.scale:g}, {args.rounds} round(s); load {load_before[0]:.1f} at start")
    print(f"{'release':8} {'revision':9} {'wall s':>7} {'CPU s':>7} {'peak GB':>8}")
    for round_ in range(args.rounds):
        for release in releases:
            pair = {}
            for label, root in (("base", base), ("this", here)):
                r = one(root, release, args.scale)
                pair[label] = r
                assert r["consistent"], f"{label} {release}: the release is not consistent"
                print(f"{release:8} {label:9} {r['release_s']:7.1f} {r['release_cpu_s']:7.1f} {r['peak_gb']:8.2f}")
                rows.append(
                    {
                        "case": release,
                        "revision": label,
                        "round": round_,
                        "scale": args.scale,
                        "nodes": r["nodes"],
                        "cells": r["cells"],
                        "wall_s": r["release_s"],
                        "cpu_s": r["release_cpu_s"],
                        "peak_gb": r["peak_gb"],
                    }
                )
            b, t = pair["base"], pair["this"]
            print(
                f"{'':8} {'ratio':9} {t['release_s'] / b['release_s']:7.2f} "
                f"{t['release_cpu_s'] / b['release_cpu_s']:7.2f} {t['peak_gb'] / b['peak_gb']:8.2f}"
            )
    load_after = os.getloadavg()
    print(f"load {load_after[0]:.1f} at end")
    path = record_rows(
        "blocks-compare",
        rows,
        base=str(base),
        load_before=list(load_before),
        load_after=list(load_after),
        command=" ".join(["python", "benchmarks/blocks_compare.py", *sys.argv[1:]]),
    )
    print(f"figures: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
