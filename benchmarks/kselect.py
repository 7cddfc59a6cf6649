"""All-Hc with a per-node private K (noisy max) against the paper's public K = 100,000.

Run:  python benchmarks/kselect.py            (the bundled default data and a 30,000-leaf hierarchy)
      python benchmarks/kselect.py --quick    (the bundled default only)

Prints, per hierarchy and ε, measured in the same run: noise cells and seconds of each release and their
ratios (public / private), and the mean emd per level of both.  Goal (issue "Truncation and sums"): at
30k leaves at least 20x fewer cells and 10x less time, with emd no worse at ε >= 0.5.

Run:  python benchmarks/kselect.py --census   (the census stand-in's ~30,000 tracts only)
      python benchmarks/kselect.py --quick --share 0.02   (at an equal total: ε_K = 2% of each level's ε
                                                          taken out of it, the release keeps 98%)

Without --share, ε_K = 0.1 is spent on top of the public release's ε (a larger total).  With --share F,
both releases cost the same total: every level that needs K spends F·ε on its per-node noisy max and
(1 − F)·ε on Hc; the plan's cost is checked to equal the public release's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine import synthetic_counts  # noqa: E402

import cocoviz  # noqa: E402

K_EPSILON = 0.1


def release(tree, eps: float, seed: int, private: bool, share: float | None = None):
    """One all-Hc release; ``private`` chooses K per node, with ε_K on top (``share`` None) or out of ε."""
    n = tree.depth + 1
    level_eps, options = eps, {}
    if private:
        # Per-node noisy max charges ε_K once per level that needs K (parallel over the level's nodes).
        k_eps = K_EPSILON if share is None else share * eps
        level_eps = eps if share is None else eps - k_eps
        options = dict(k_select="noisy-max-per-node", k_epsilon=k_eps)
    start = time.perf_counter()
    out = cocoviz.estimate(tree, epsilons=[level_eps] * n, methods=["Hc"] * n, max_size=100_000, seed=seed, **options)
    seconds = time.perf_counter() - start
    if private and share is not None and not np.isclose(out.budget.total, n * eps):
        raise AssertionError(f"not at an equal total: {out.budget.total} against {n * eps}")
    ev = cocoviz.evaluate(tree, out)
    cells = sum(int(b.sum()) for b in out.bounds if b is not None)
    return seconds, cells, ev.groupby("level")["emd"].mean().to_numpy(), int(ev["truncation"].sum())


def compare(name: str, tree, epsilons, seeds, share: float | None = None) -> None:
    cocoviz.compile_kernels()
    print(f"\n{name}: {tree.summary()['groups']:,} groups, nodes per level {tree.summary()['nodes_per_level']}")
    for eps in epsilons:
        runs = {p: [release(tree, eps, s, p, share) for s in seeds] for p in (False, True)}
        t_pub = min(r[0] for r in runs[False])
        t_priv = min(r[0] for r in runs[True])
        c_pub, c_priv = runs[False][0][1], float(np.mean([r[1] for r in runs[True]]))
        e_pub = np.mean([r[2] for r in runs[False]], axis=0)
        e_priv = np.mean([r[2] for r in runs[True]], axis=0)
        trunc = sum(r[3] for r in runs[True])
        budget = f"ε_K = {K_EPSILON:g} on top" if share is None else f"equal total, ε_K = {share:.0%} of ε per level"
        print(
            f"  ε = {eps:<5g} cells {c_pub:>13,} vs {c_priv:>13,.0f} (ratio {c_pub / c_priv:7.1f}x)  "
            f"time {t_pub:7.2f} s vs {t_priv:6.2f} s (ratio {t_pub / t_priv:6.1f}x)  "
            f"mean emd per level public {np.round(e_pub, 1).tolist()} private {np.round(e_priv, 1).tolist()} "
            f"(private / public {np.round(e_priv / e_pub, 3).tolist()}; {budget}; persons truncated: {trunc}; "
            f"{len(seeds)} seeds)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the bundled default only")
    parser.add_argument("--census", action="store_true", help="only the census stand-in's ~30,000 tracts")
    parser.add_argument("--share", type=float, default=None, help="ε_K as a share of each level's ε (equal total)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds of the bundled default's releases")
    args = parser.parse_args()
    if not args.census:
        default = cocoviz.load_dataset(cocoviz.DEFAULT_DATASET)
        compare(
            f"bundled default ({cocoviz.DEFAULT_DATASET})",
            default,
            [0.25, 0.5, 1.0, 2.0],
            range(args.seeds),
            args.share,
        )
    if not args.quick:
        # Census-like leaves: tracts of the census stand-in (scale 0.35: about 30,000 tracts), whose
        # largest households are what a tract holds, not the synthetic hierarchy's one outlier of up
        # to 10,000 persons in every leaf (which caps its cells ratio near 20x).
        tracts = cocoviz.load_dataset("housing-us-tracts", scale=0.35)
        compare(
            "census stand-in, about 30,000 tracts (housing-us-tracts, scale 0.35)", tracts, [1.0], range(1), args.share
        )
    if not args.quick and not args.census:
        frame = synthetic_counts(2_000_000, 50, 30_000)
        tree = cocoviz.Hierarchy.from_counts(frame, size="size", count="count", levels=["mid", "leaf"])
        compare("30,000 leaves under 50 mid-level nodes", tree, [0.5, 1.0], range(1), args.share)


if __name__ == "__main__":
    main()
