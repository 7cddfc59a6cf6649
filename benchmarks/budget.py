"""The noisy-measurement file, K from an Hg level, and k_beta per K̂ or per release (issue 24).

Run:  python benchmarks/budget.py            (taxi; then housing-west for the file and from-hg)
      python benchmarks/budget.py --quick    (taxi only)

Prints, measured in the same run:
- the noisy-measurement file against the release file: seconds to save and load, MB, and their ratios;
  and whether post_process of the loaded file is the release (it must be);
- k_select="from-hg" against the public K = 100,000: the K̂, noise cells, seconds and mean emd per level;
- the share of 3,000 seeded releases where some node truncates, noisy max per node on 15 nodes, with
  k_beta_scope "node" and "release" (β = 0.2), beside the exact probability.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cocoviz  # noqa: E402
from cocoviz import Hierarchy, Plan, evaluate, load_measurements, load_release, measure, post_process  # noqa: E402
from cocoviz.measure.measurements import choose_bounds, open_sampler  # noqa: E402
from cocoviz.privacy.truncation import noisy_max_offset, truncated_nodes  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def files(name: str, folder: Path) -> None:
    tree = cocoviz.load_dataset(name)
    n = tree.depth + 1
    options = dict(total_epsilon=1.0, split="leaves", methods=["Hg"] + ["Hc"] * (n - 1), max_size=100_000)
    plan = Plan.build(tree, **options)
    hg = Plan.build(tree, **options, k_select="from-hg")
    for warm in (plan, hg):  # compile the kernels and fill the tree's caches outside the timings
        measure(warm, tree, seed=0)
    measurements, t_measure = timed(lambda: measure(plan, tree, seed=1))
    release = post_process(plan, measurements)
    m_path, r_path = folder / f"{name}.measurements.parquet", folder / f"{name}.release.parquet"
    _, m_save = timed(lambda: cocoviz.save_measurements(measurements, m_path))
    _, r_save = timed(lambda: release.save(r_path))
    again, m_load = timed(lambda: load_measurements(m_path))
    _, r_load = timed(lambda: load_release(r_path))
    same = post_process(plan, again).to_frame().equals(release.to_frame())
    m_mb, r_mb = m_path.stat().st_size / 1e6, r_path.stat().st_size / 1e6
    cells = sum(level.values.size for level in measurements.levels if level is not None)
    print(
        f"{name}: {cells:,} noisy cells (measure {t_measure:.1f} s); measurement file {m_mb:.1f} MB, "
        f"save {m_save:.2f} s, load {m_load:.2f} s; release file {r_mb:.2f} MB, save {r_save:.2f} s, "
        f"load {r_load:.2f} s; ratios {m_mb / r_mb:.0f}x size, {m_save / r_save:.1f}x save, "
        f"{m_load / r_load:.1f}x load; post_process(loaded) is the release: {same}"
    )
    hg_measurements, t_hg = timed(lambda: measure(hg, tree, seed=1))
    hg_cells = sum(level.values.size for level in hg_measurements.levels if level is not None)
    bounds = sorted({int(k) for level in hg_measurements.levels if level.bounds is not None for k in level.bounds})
    emd = {
        label: evaluate(tree, r).groupby("level")["emd"].mean().round(1).tolist()
        for label, r in (("public K", release), ("from-hg", post_process(hg, hg_measurements)))
    }
    print(
        f"  from-hg: K̂ {bounds} (margin {hg.k_margin()}, largest group {tree.max_size:,}), {hg_cells:,} cells "
        f"({cells / hg_cells:.1f}x fewer), measure {t_hg:.1f} s ({t_measure / t_hg:.1f}x faster); same total ε "
        f"{hg.cost().total:g}; mean emd per level {emd}"
    )


def fifteen_nodes() -> Hierarchy:
    rng = np.random.default_rng(4)
    rows = [(s, f"{s}{c}", int(size)) for s in "pqr" for c in range(4) for size in rng.geometric(0.3, 40)]
    return Hierarchy.from_groups(
        pd.DataFrame(rows, columns=["state", "county", "size"]), size="size", levels=["state", "county"]
    )


def scopes(trials: int = 3000, beta: float = 0.2, eps: float = 0.3) -> None:
    tree = fifteen_nodes()
    for scope in ("node", "release"):
        plan = Plan.build(
            tree, epsilons=[1.0] * 3, methods=["Hg", "Hc", "Hc"], max_size=10**6, k_select="noisy-max-per-node",
            k_epsilon=eps, k_beta=beta, k_beta_scope=scope,
        )  # fmt: skip
        draws = (choose_bounds(plan, tree, open_sampler(seed)) for seed in range(trials))
        some = sum(any(truncated_nodes(tree, level, bounds[level]) for level in (1, 2)) for bounds in draws)
        alpha = math.exp(-eps)
        p = alpha ** (noisy_max_offset(eps, plan.k_node_beta()) + 1) / (1 + alpha)
        print(
            f"k_beta = {beta} per {scope}: some node truncates in {some / trials:.4f} of {trials:,} seeded releases "
            f"(exact {1 - (1 - p) ** 15:.4f}; β per K̂ {plan.k_node_beta():.4g}, 15 K̂)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="taxi only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for name in ("taxi",) if args.quick else ("taxi", "housing-west"):
            files(name, Path(folder))
    scopes()


if __name__ == "__main__":
    main()
