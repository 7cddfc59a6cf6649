"""Engine speed and memory: end-to-end releases (measure + consistency) on synthetic hierarchies.

Run:  python benchmarks/engine.py                       (all scenarios)
      python benchmarks/engine.py --quick               (the 1M-group scenarios only)
      python benchmarks/engine.py --against cfb0f31     (also run the engine of that git revision, same
                                                         scenarios, same run: prints new / reference)

Each scenario runs in a fresh subprocess so its peak memory (ru_maxrss) is its own.
Targets: ~1M groups, 3 levels: < 1 s; 10M groups, 50 mid-level nodes, 500 leaves,
all-Hc (K = 100,000) and all-Hg: each < 10 s and < 4 GB peak; against the engine
before the measure / post-process seam (cfb0f31): no slowdown over 10% at 10M groups.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if os.environ.get("COCOVIZ_REFERENCE") is None:
    sys.path.insert(0, str(ROOT))


def synthetic_counts(groups: int, mid: int, leaves: int, seed: int = 0) -> pd.DataFrame:
    """Per-leaf counts with a housing-like size law: mostly 1-7, a geometric tail, a few outliers."""
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.full(leaves, 5.0))
    per_leaf = rng.multinomial(groups, weights)
    sizes = np.arange(0, 2000)
    law = np.where(sizes == 0, 0.0, np.exp(-sizes / 2.5)) + np.where(sizes > 7, 1e-4 * 0.995**sizes, 0)
    law /= law.sum()
    frames = []
    for leaf, n in enumerate(per_leaf):
        counts = rng.multinomial(n, law)
        outliers = rng.integers(1, 10_001, size=max(1, n // 200_000))
        s = np.concatenate([sizes[counts > 0], outliers])
        c = np.concatenate([counts[counts > 0], np.ones(len(outliers), np.int64)])
        frames.append(pd.DataFrame({"mid": f"m{leaf % mid:02d}", "leaf": f"l{leaf:03d}", "size": s, "count": c}))
    return pd.concat(frames, ignore_index=True)


def run_one(groups: int, mid: int, leaves: int, method: str, max_size: int) -> dict:
    import cocoviz

    tree = cocoviz.Hierarchy.from_counts(
        synthetic_counts(groups, mid, leaves), size="size", count="count", levels=["mid", "leaf"]
    )
    # Compile the numba kernels (cached on disk) outside the timing.
    cocoviz.estimate(tree.keep_levels([]), epsilons=[1.0], methods=[method], max_size=max_size, seed=0)
    times = []
    for seed in range(3):
        start = time.perf_counter()
        release = cocoviz.estimate(tree, epsilons=[1.0, 1.0, 1.0], methods=[method] * 3, max_size=max_size, seed=seed)
        times.append(time.perf_counter() - start)
    assert release.is_consistent()
    return {
        "groups": tree.summary()["groups"],
        "nodes": sum(tree.summary()["nodes_per_level"]),
        "method": method,
        "K": max_size,
        "seconds_best": min(times),
        "seconds_median": float(np.median(times)),
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }


SCENARIOS = [
    ("1M groups, 3 levels (5 / 50 leaves), Hc K=100,000", (1_000_000, 5, 50, "Hc", 100_000)),
    ("1M groups, 3 levels (5 / 50 leaves), Hg", (1_000_000, 5, 50, "Hg", 100_000)),
    ("10M groups, 50 mid / 500 leaves, Hc K=100,000", (10_000_000, 50, 500, "Hc", 100_000)),
    ("10M groups, 50 mid / 500 leaves, Hg", (10_000_000, 50, 500, "Hg", 100_000)),
    # The paper cut its 3-level runs to the West Coast for compute; this is the whole
    # country at the housing data's size.  Hc only: Hg needs one value per group.
    ("240M groups, 52 states / 3,200 counties, Hc K=100,000", (240_000_000, 52, 3_200, "Hc", 100_000)),
]


def reference_tree(revision: str) -> str:
    """A folder holding the package as it was at git ``revision`` (for a same-run comparison)."""
    folder = tempfile.mkdtemp(prefix="cocoviz-ref-")
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "cocoviz"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def measure(params, reference: str | None = None) -> dict:
    env = dict(os.environ)
    if reference is not None:
        env["COCOVIZ_REFERENCE"] = reference
        env["PYTHONPATH"] = reference
    out = subprocess.run(
        [sys.executable, __file__, "--one", json.dumps(params)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=reference or ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="only the 1M-group scenarios")
    parser.add_argument("--skip-country", action="store_true", help="skip the 240M-group whole-country run")
    parser.add_argument("--against", metavar="REV", help="also time the engine of git revision REV")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(*json.loads(args.one))))
        return
    scenarios = SCENARIOS[:2] if args.quick else SCENARIOS[:-1] if args.skip_country else SCENARIOS
    reference = reference_tree(args.against) if args.against else None
    for name, params in scenarios:
        r = measure(params)
        line = (
            f"{name:52s} groups={r['groups']:>11,} nodes={r['nodes']:>4} "
            f"best={r['seconds_best']:6.2f}s median={r['seconds_median']:6.2f}s peak={r['peak_rss_gb']:5.2f} GB"
        )
        if reference is not None:
            ref = measure(params, reference)
            line += (
                f" | {args.against}: best={ref['seconds_best']:6.2f}s peak={ref['peak_rss_gb']:5.2f} GB"
                f" | ratio best {r['seconds_best'] / ref['seconds_best']:.2f}"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main()
