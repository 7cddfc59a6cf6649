"""Intervals you can publish (issue 24): coverage of the 90% bands, their width beside the emd they bound,
and what they add to a release's time.

Run:  python benchmarks/intervals.py                    (everything: coverage 1,000 trials, widths, time)
      python benchmarks/intervals.py --only coverage --trials 200 --datasets toy taxi
      python benchmarks/intervals.py --only time

Targets, printed beside each figure:
- coverage: a nominal 90% simultaneous band holds the truth in 88–97% of ≥ 1,000 seeded trials, per
  dataset, method and level (housing, white, Hawaiian, taxi, the toy; ε = 1 per level, pure ε; and ρ-zCDP
  with ``--zcdp --rho 0.5``).  A trial draws the level's noise (fast sampler, seeded per trial), takes the bands'
  envelopes and checks every node (:func:`cocoviz.accuracy.intervals.bands.covered_nodes`, equal to the frames' check);
  the rate is per node, summarised over the level's nodes (up to 25, a seeded sample: mean, 5th and 95th
  percentile, min, max), beside
  the exact P(E) the tolerances were chosen for (:func:`cocoviz.accuracy.intervals.bands.half_widths`: ± a - 1 with the
  fewest one-sided widenings by 1; ``a_mean`` the widest, ``widened`` the widenings per cell).
- width: over 10 full releases, per level, the mean over nodes of the band's width (Σ_j high - low over
  sizes 0..K or 0..J, and per size) beside the emd bound it gives and the released histogram's true emd.
- sides: at the leaf level, the band's width with the one-sided widenings on the top cells first, the
  bottom cells first, split evenly, or ``± a`` everywhere (what :data:`cocoviz.accuracy.intervals.bands.WIDER_FIRST`
  chose).
- memory (``--only memory --scale 0.01``, not in the default run): the bytes of a release's bands per level.
- runs (``--only runs``, not in the default run): on the dense Hg nodes of the bundled datasets (per dataset and
  level, the three largest nodes with 20,000 to 3,000,000 groups), ε = 1, 3 seeded draws each: the count band's
  total width ``Σ_j (count_high - count_low)`` over the realised count error ``Σ_j |Ĥ_j - H_j|`` of the node's own
  Hg fit (p = 2, rounded), for the per-cell band and the multiscale band
  (:mod:`cocoviz.accuracy.intervals.multiscale`, grain 1 and 16), both at 90% per node; the same for the
  cumulative band over the emd; whether each band held the truth.  Target: multiscale ratio ≤ 10.  Recorded as
  ``benchmarks/results/intervals-runs-<UTC time>.json``.
- scope (``--only scope``, not in the default run): per dataset, method and level, ε = 1, ``--trials`` seeded draws
  (at most 500): the share of draws in which each node's band holds (mean over nodes) and in which every node of
  the level holds at once, for bands built per node (``scope="node"``) and per level (``scope="level"``:
  c^(1/n) per node), beside the exact products; and the widest tolerance each needs.  Recorded as
  ``benchmarks/results/intervals-scope-<UTC time>.json``.
- frame (``--only frame``, not in the default run): the whole release's accuracy frame
  (:func:`cocoviz.accuracy.intervals.scope.accuracy_frame`, a level's nodes at once) against the node-by-node
  reference (``tests/support/intervals.py``: every node's frame cut to its stretches), per dataset (default
  hawaiian), all-Hc above an Hg leaf level, ε = 1, with and without the measurements (runs bands on Hg): best of
  ``--repeats`` interleaved runs each, the frames checked equal.  Recorded as
  ``benchmarks/results/intervals-frame-<UTC time>.json``.
- time: a release at 10M groups with the bands against the same release without them (their envelopes
  stubbed out), five interleaved runs each, best against best (and median against median): at most 1.2x.
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

DATASETS = ("toy", "taxi", "hawaiian", "white", "housing")
RUNS_DATASETS = ("taxi", "hawaiian", "hawaiian-west", "white", "white-west", "housing", "housing-west")


def _plan(tree, method: str, zcdp: bool, rho: float = 0.5):
    from cocoviz import Plan

    depth = tree.depth + 1
    budget = {"rhos": [rho] * depth} if zcdp else {"epsilons": [1.0] * depth}
    return Plan.build(tree, **budget, methods=[method] * depth, max_size=max(int(tree.max_size), 1))


def coverage(name: str, method: str, trials: int, zcdp: bool, cap: int = 25, rho: float = 0.5) -> list[dict]:
    """Per level, the share of trials in which each node's band holds its truth (up to ``cap`` nodes per
    level, a seeded sample, where a level has more: the machine is shared)."""
    import cocoviz
    from cocoviz.accuracy.intervals.bands import WIDER_FIRST, LevelBands, covered_nodes, half_widths
    from cocoviz.privacy.noise import FastSampler

    tree = cocoviz.load_dataset(name)
    plan = _plan(tree, method, zcdp, rho)
    rows = []
    for level in plan.measured_levels():
        runs, m = tree.runs(level), plan.level_method(level)
        picked = np.arange(runs.n_nodes)
        if picked.size > cap:
            picked = np.sort(np.random.default_rng(level).choice(picked, size=cap, replace=False))
        n = picked.size
        bounds = np.full(runs.n_nodes, plan.max_size, np.int64) if m.needs_k else None
        if m.level_query is None:  # Hcp: its per-node query
            parts = [(m.query(*runs.node(k), plan.max_size), None) for k in picked]
        else:
            parts = [m.level_query(runs, k, k + 1, bounds) for k in picked]
        truth = np.concatenate([v for v, _ in parts])
        ptr = np.concatenate([[0], np.cumsum([v.size for v, _ in parts])])
        cells, groups, noise = np.diff(ptr), plan.shape.group_counts(level)[picked], plan.level_noise(level)
        chosen = {int(c): half_widths(noise, int(c), 0.9, first=WIDER_FIRST[m.name]) for c in np.unique(cells)}
        widths = [chosen[int(c)] for c in cells]
        a = np.array([w.widest for w in widths], np.int64)
        exact = np.array([w.confidence(noise) for w in widths])
        hits = np.zeros(n, np.int64)
        start = time.perf_counter()
        for trial in range(trials):
            noisy = FastSampler(seed=(24, trial)).draw_level(truth.copy(), ptr, noise, level)
            hits += covered_nodes(LevelBands.of(m.name, noisy, ptr), truth, widths, groups)
        live = cells > 0
        rate = hits[live] / trials
        rows.append(
            {
                "dataset": name,
                "method": method,
                "noise": f"zCDP ρ={rho:g}" if zcdp else "ε=1",
                "level": level,
                "nodes": f"{int(live.sum())}/{runs.n_nodes}",
                "trials": trials,
                "mean": rate.mean(),
                "p5": np.percentile(rate, 5),
                "p95": np.percentile(rate, 95),
                "min": rate.min(),
                "max": rate.max(),
                "exact_mean": exact[live].mean(),
                "a_mean": a[live].mean(),
                "widened": np.mean([(w.top + w.bottom) / max(w.cells, 1) for w in widths]),
                "in_target": bool(0.88 <= rate.mean() <= 0.97),
                "seconds": time.perf_counter() - start,
            }
        )
    return rows


def widths(name: str, method: str, releases: int = 10, sample: int = 200) -> list[dict]:
    """Per level, the bands' mean width beside the emd bound and the true emd of the released histogram."""
    import cocoviz
    from cocoviz.evaluate.metrics import emd

    tree = cocoviz.load_dataset(name)
    plan = _plan(tree, method, zcdp=False)
    rng = np.random.default_rng(0)
    picks = {
        level: np.sort(rng.choice(n, size=min(n, sample), replace=False))
        for level in range(tree.depth + 1)
        for n in [tree.runs(level).n_nodes]
    }
    sums = {level: np.zeros(5) for level in picks}
    for seed in range(releases):
        release = cocoviz.estimate(tree, **plan.options(), seed=seed)
        for level, nodes in picks.items():
            for k in nodes:
                node = plan.shape.paths[level][k]
                frame = release.intervals(node)
                width = (frame["cumulative_high"] - frame["cumulative_low"]).to_numpy()
                sizes, counts = tree.runs(level).node(k)
                true_h = np.zeros(int(sizes[-1]) + 1 if sizes.size else 1, np.int64)
                true_h[sizes] = counts
                actual = emd(true_h, release.histogram(node))
                sums[level] += [width.sum(), width.mean(), frame.attrs["emd_bound"], actual, 1]
    rows = []
    for level, (total, per_size, bound, actual, count) in sums.items():
        rows.append(
            {
                "dataset": name,
                "method": method,
                "level": level,
                "nodes": len(picks[level]),
                "width_sum": total / count,
                "width_per_size": per_size / count,
                "emd_bound": bound / count,
                "emd_true": actual / count,
            }
        )
    return rows


def sides(name: str, method: str, zcdp: bool, trials: int = 30, sample: int = 8) -> dict:
    """At the leaf level, the band's mean width (Σ over cells of high - low) with the widenings on each side
    first (:data:`cocoviz.accuracy.intervals.bands.WIDER_FIRST`), split evenly, and with ``± a`` on every cell."""
    import cocoviz
    from cocoviz.accuracy.intervals.bands import Widths, half_widths
    from cocoviz.privacy.noise import FastSampler

    tree = cocoviz.load_dataset(name)
    plan = _plan(tree, method, zcdp)
    level = tree.depth
    runs, m, noise = tree.runs(level), plan.level_method(level), plan.level_noise(level)
    picked = np.sort(np.random.default_rng(0).choice(runs.n_nodes, size=min(sample, runs.n_nodes), replace=False))
    bounds = np.full(runs.n_nodes, plan.max_size, np.int64) if m.needs_k else None
    totals = dict.fromkeys(("top", "bottom", "even", "uniform"), 0.0)
    for k in picked:
        truth, _ = m.level_query(runs, k, k + 1, bounds)
        if truth.size == 0:
            continue
        ceiling = int(plan.shape.group_counts(level)[k]) if method == "Hc" else 2**62
        chosen = {first: half_widths(noise, truth.size, 0.9, first=first) for first in ("top", "bottom", "even")}
        chosen["uniform"] = Widths(truth.size, chosen["top"].widest)
        i = np.arange(truth.size)
        for trial in range(trials):
            y = FastSampler(seed=(24, trial)).draw(truth, noise, (level, int(k), trial))
            for first, w in chosen.items():
                low = np.clip(np.maximum.accumulate(y - w.over(i)), 0, ceiling)
                high = np.clip(np.minimum.accumulate((y + w.under(i))[::-1])[::-1], 0, ceiling)
                totals[first] += float(np.abs(high - low).sum()) / trials / picked.size
    return {"dataset": name, "method": method, "noise": "zCDP ρ=0.5" if zcdp else "ε=1", "level": level, **totals}


def memory(scale: float) -> list[dict]:
    """The bytes a release's bands hold per level: housing-us-blocks at ``scale``, all-Hc with a private K."""
    import cocoviz
    from cocoviz.datasets import dataset as spec_of
    from cocoviz.datasets import generate

    tree = spec_of("housing-us-blocks").build(generate("housing-us-blocks", scale=scale))
    depth = tree.depth + 1
    release = cocoviz.estimate(
        tree, methods=["Hc"] * depth, epsilons=[1.0] * depth, k_select="noisy-max", k_epsilon=0.1, seed=0
    )
    fields = ("cells", "up_ptr", "up_at", "up_value", "down_ptr", "down_at", "down_value")
    return [
        {
            "scale": scale,
            "level": level,
            "nodes": b.cells.size,
            "integers": sum(getattr(b, f).size for f in fields),
            "MiB": sum(getattr(b, f).nbytes for f in fields) / 2**20,
            "dtypes": ",".join(sorted({str(getattr(b, f).dtype) for f in fields})),
        }
        for level, b in enumerate(release.bands)
        if b is not None
    ]


def timing(groups: int = 10_000_000, repeats: int = 5) -> list[dict]:
    """A release with bands against one without (envelopes stubbed out), five interleaved runs each."""
    from scale import synthetic_tree

    import cocoviz
    from cocoviz.pipeline import level_step as pipeline  # where a level's bands are made

    tree = synthetic_tree(groups, 50, 3000)
    cocoviz.compile_kernels()
    real = pipeline.LevelBands

    class NoBands:
        @staticmethod
        def of(*args, **kwargs):
            return None

        of_chunks = concat = of

    rows = []
    for method, k in (("Hg", None), ("Hc", 10_000)):  # Hc: K cells per node, about Hg's cells (3 x 10M)
        opts = dict(epsilons=[1.0] * 3, methods=[method] * 3, max_size=k, seed=0)
        with_bands, without = [], []
        for _ in range(repeats):
            pipeline.LevelBands = NoBands
            start = time.perf_counter()
            cocoviz.estimate(tree, **opts)
            without.append(time.perf_counter() - start)
            pipeline.LevelBands = real
            start = time.perf_counter()
            release = cocoviz.estimate(tree, **opts)
            with_bands.append(time.perf_counter() - start)
        start = time.perf_counter()
        release.intervals(())
        frame_s = time.perf_counter() - start
        rows.append(
            {
                "method": method,
                "groups": groups,
                "K": k,
                "release_s": min(without),
                "with_bands_s": min(with_bands),
                "ratio": min(with_bands) / min(without),
                "ratio_of_medians": float(np.median(with_bands) / np.median(without)),
                "root_frame_s": frame_s,
                "target": "≤ 1.2x",
            }
        )
    return rows


def runs_bands(name: str, trials: int = 3, per_level: int = 3) -> list[dict]:
    """Per dense node: the count and cumulative bands' width over the realised error, per-cell and multiscale."""
    from scipy.optimize import isotonic_regression

    import cocoviz
    from cocoviz.accuracy.intervals.bands import WIDER_FIRST, LevelBands, cumulative_bounds, half_widths
    from cocoviz.accuracy.intervals.derived import count_bounds
    from cocoviz.accuracy.intervals.multiscale import multiscale_rank_bounds, multiscale_widths, rank_counts
    from cocoviz.hierarchy.tree import node_label
    from cocoviz.privacy.noise import FastSampler

    def pad(v: np.ndarray, n: int, fill: int) -> np.ndarray:
        return np.pad(v, (0, n - v.size), constant_values=fill)

    tree = cocoviz.load_dataset(name)
    rows = []
    for level in range(tree.depth + 1):
        runs = tree.runs(level)
        groups = np.array([int(runs.node(k)[1].sum()) for k in range(runs.n_nodes)])
        dense = [k for k in np.argsort(-groups, kind="stable") if 20_000 <= groups[k] <= 3_000_000][:per_level]
        for k in dense:
            sizes, counts = runs.node(k)
            t = np.repeat(sizes, counts).astype(np.int64)
            n = t.size
            start = time.perf_counter()
            cell = half_widths(1.0, n, 0.9, first=WIDER_FIRST["Hg"])
            multi = {g: multiscale_widths(1.0, n, 0.9, grain=g) for g in (1, 16)}
            widths_seconds = time.perf_counter() - start
            for trial in range(trials):
                y = FastSampler(seed=(38, level, int(k), trial)).draw_level(t.copy(), np.array([0, n]), 1.0, level)
                fit = np.clip(np.rint(isotonic_regression(y.astype(np.float64)).x), 0, None).astype(np.int64)
                top = int(max(fit[-1], t[-1])) + 1
                true_h, fit_h = np.bincount(t, minlength=top), np.bincount(fit, minlength=top)
                count_error = int(np.abs(fit_h - true_h).sum())
                emd = int(np.abs(np.cumsum(fit_h) - np.cumsum(true_h)).sum())
                bands = {"cell": cumulative_bounds(LevelBands.of("Hg", y, np.array([0, n])), 0, groups=n, a=cell)}
                held = {"cell": None}
                for g, w in multi.items():
                    low, high = multiscale_rank_bounds(y, w)
                    held[f"multi{g}"] = bool((low <= t).all() and (t <= high).all())
                    bands[f"multi{g}"] = rank_counts(low, high)
                row = {"dataset": name, "level": level, "node": node_label(tree.nodes(level)[k]), "groups": n}
                row.update(trial=trial, count_error=count_error, emd=emd, w0=multi[1].single, widths_s=widths_seconds)
                for key, (low, high) in bands.items():
                    size = max(low.size, top)
                    low, high = pad(low, size, n), pad(high, size, n)
                    count_low, count_high = count_bounds(low, high)
                    row[f"{key}_count_ratio"] = float((count_high - count_low).sum()) / max(count_error, 1)
                    row[f"{key}_cum_ratio"] = float((high - low).sum()) / max(emd, 1)
                    row[f"{key}_size1"] = f"{int(count_low[1])}..{int(count_high[1])}" if size > 1 else ""
                    truth_c = pad(np.cumsum(true_h), size, n)
                    if held.get(key) is None:
                        held[key] = bool(((low <= truth_c) & (truth_c <= high)).all())
                    row[f"{key}_held"] = held[key]
                row["true_size1"] = int(true_h[1]) if top > 1 else 0
                rows.append(row)
    return rows


def scope_coverage(name: str, method: str, trials: int) -> list[dict]:
    """Per measured level with more than one node: coverage per node and of the whole level, for both scopes."""
    import cocoviz
    from cocoviz.accuracy.intervals.bands import WIDER_FIRST, LevelBands, covered_nodes, half_widths
    from cocoviz.accuracy.intervals.scope import node_confidence
    from cocoviz.privacy.noise import FastSampler

    tree = cocoviz.load_dataset(name)
    plan = _plan(tree, method, zcdp=False)
    rows = []
    for level in plan.measured_levels():
        runs, m = tree.runs(level), plan.level_method(level)
        if runs.n_nodes < 2:
            continue
        bounds = np.full(runs.n_nodes, plan.max_size, np.int64) if m.needs_k else None
        truth, _ = m.level_query(runs, 0, runs.n_nodes, bounds)
        cells = np.array([m.level_query(runs, k, k + 1, bounds)[0].size for k in range(runs.n_nodes)])
        ptr = np.concatenate([[0], np.cumsum(cells)])
        noise, groups = plan.level_noise(level), plan.shape.group_counts(level)
        for scope in ("node", "level"):
            c_node = node_confidence(0.9, scope, runs.n_nodes)
            chosen = {int(c): half_widths(noise, int(c), c_node, first=WIDER_FIRST[method]) for c in np.unique(cells)}
            widths = [chosen[int(c)] for c in cells]
            exact = np.array([w.confidence(noise) for w in widths])
            hits = np.zeros(runs.n_nodes, np.int64)
            together = 0
            for trial in range(trials):
                noisy = FastSampler(seed=(38, level, trial)).draw_level(truth.copy(), ptr, noise, level)
                covered = covered_nodes(LevelBands.of(method, noisy, ptr), truth, widths, groups)
                hits += covered
                together += bool(covered.all())
            rows.append(
                {
                    "dataset": name,
                    "method": method,
                    "level": level,
                    "nodes": runs.n_nodes,
                    "scope": scope,
                    "trials": trials,
                    "per_node": float((hits / trials).mean()),
                    "per_node_exact": float(exact.mean()),
                    "level_at_once": together / trials,
                    "level_exact": float(np.prod(exact)),
                    "a_mean": float(np.mean([w.widest for w in widths])),
                }
            )
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("coverage", "width", "sides", "time", "memory", "runs", "scope", "frame"))
    parser.add_argument("--scale", type=float, default=0.01, help="memory: housing-us-blocks' scale (default 0.01)")
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--zcdp", action="store_true", help="coverage under ρ-zCDP per level too")
    parser.add_argument("--rho", type=float, default=0.5, help="ρ per level with --zcdp (default 0.5)")
    parser.add_argument("--methods", nargs="*", default=["Hc", "Hg"], help="coverage: the methods (Hcp too)")
    parser.add_argument("--repeats", type=int, default=5, help="time: interleaved runs each (default 5)")
    parser.add_argument("--zcdp-only", action="store_true", help="coverage under ρ-zCDP only")
    args = parser.parse_args(argv)
    import pandas as pd

    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 20)
    if args.only in (None, "coverage"):
        print(f"coverage of nominal 90% simultaneous bands, {args.trials} trials (target: mean 0.88-0.97)", flush=True)
        for name in args.datasets:
            for method in args.methods:
                for zcdp in (True,) if args.zcdp_only else (False, True) if args.zcdp else (False,):
                    rows = coverage(name, method, args.trials, zcdp, rho=args.rho)
                    print(pd.DataFrame(rows).round(4).to_string(index=False), flush=True)
    if args.only in (None, "width"):
        print("band width beside the emd it bounds (10 releases, ε = 1 per level, up to 200 nodes per level)")
        for name in args.datasets:
            for method in ("Hc", "Hg"):
                print(pd.DataFrame(widths(name, method)).round(1).to_string(index=False), flush=True)
    if args.only in (None, "sides"):
        print("leaf band width (Σ_j high - low) by where the widenings go first (8 nodes, 30 trials each)")
        rows = [sides(n, m, z) for n in args.datasets for m in ("Hc", "Hg") for z in (False, True)]
        print(pd.DataFrame(rows).round(1).to_string(index=False), flush=True)
    if args.only == "memory":
        print("bands' memory per level, housing-us-blocks, all-Hc with a private K per node")
        print(pd.DataFrame(memory(args.scale)).round({"MiB": 2}).to_string(index=False), flush=True)
    if args.only == "scope":
        from results import record_rows as record

        trials = min(args.trials, 500)
        print(f"coverage per node and of whole levels, nominal 90%, {trials} draws, ε = 1 (scope node vs level)")
        rows = [r for name in args.datasets for method in ("Hc", "Hg") for r in scope_coverage(name, method, trials)]
        out = record("intervals-scope", rows)
        print(pd.DataFrame(rows).round(4).to_string(index=False), flush=True)
    if args.only == "frame":
        from results import record_rows as record

        names = args.datasets if args.datasets != list(DATASETS) else ["hawaiian"]
        repeats = min(args.repeats, 3)
        print(f"accuracy frame: level at once against node by node (best of {repeats}, frames checked equal)")
        from intervals_frame import frame_time

        rows = [row for name in names for row in frame_time(name, repeats)]
        out = record("intervals-frame", rows)
        print(pd.DataFrame(rows).round(3).to_string(index=False), flush=True)
        print(f"wrote {out}")
    if args.only == "runs":
        from results import record_rows as record

        print("dense Hg nodes: count band width over the realised count error, per-cell vs multiscale (90% per node)")
        names = args.datasets if args.datasets != list(DATASETS) else list(RUNS_DATASETS)
        rows = [row for name in names for row in runs_bands(name, trials=min(args.trials, 3))]
        frame = pd.DataFrame(rows)
        columns = [
            "dataset",
            "level",
            "node",
            "groups",
            "count_error",
            "cell_count_ratio",
            "multi1_count_ratio",
            "multi16_count_ratio",
            "cell_cum_ratio",
            "multi1_cum_ratio",
            "multi1_held",
            "cell_held",
        ]
        summary = frame.groupby(["dataset", "level", "node", "groups"], sort=False)[columns[4:]].mean().reset_index()
        print(summary.round(1).to_string(index=False), flush=True)
        print("size-1 counts (first draw):")
        first = frame[frame["trial"] == 0]
        print(
            first[["dataset", "node", "true_size1", "cell_size1", "multi1_size1", "multi16_size1"]].to_string(
                index=False
            )
        )
        ratios = summary["multi1_count_ratio"]
        goal = {
            "case": "multiscale count band over the realised count error, median over dense Hg nodes",
            "median_ratio": float(ratios.median()),
            "min_ratio": float(ratios.min()),
            "max_ratio": float(ratios.max()),
            "nodes": len(summary),
            "target": "<= 10x on every dense node",
            "met": bool(ratios.max() <= 10),
        }
        out = record("intervals-runs", [*rows, goal])
        print(
            f"multiscale count ratio over nodes: median {ratios.median():.1f}, "
            f"range {ratios.min():.1f}-{ratios.max():.1f}"
            f" (per-cell: {summary['cell_count_ratio'].min():.0f}-{summary['cell_count_ratio'].max():.0f}); "
            f"held: multiscale {frame['multi1_held'].mean():.3f}, per-cell {frame['cell_held'].mean():.3f}"
            f" of {len(frame)} draws; wrote {out}"
        )
    if args.only in (None, "time"):
        print("release time with the bands against without, 10M groups (target ≤ 1.2x)")
        print(pd.DataFrame(timing(repeats=args.repeats)).round(3).to_string(index=False), flush=True)


if __name__ == "__main__":
    main()
