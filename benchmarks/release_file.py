"""The release file at 8M nodes: format 2 (every array a column) against pyarrow writing the bare tables.

Run:  python benchmarks/release_file.py                     (housing-us-blocks at scale 0.1, 0.3 and 1)
      python benchmarks/release_file.py --scales 0.1

For each scale: the housing-us-blocks tree (6 levels to blocks), measured bottom-up with Hg (one noisy
cell per household of the blocks: 12M cells at scale 0.1, 121M at scale 1) and post-processed; then, each
timed once, with the file's size and the memory the operation added to the process's resident set (its high-water mark,
reset before, less the resident set before):

* the release: ``Release.save`` / ``load_release`` in format 2 with its interval bands (the default: the
  leaves' Hg envelopes, :mod:`cocoviz.release.files.band_columns`) and without (``save(bands=False)``);
* the noisy-measurement file: ``save_measurements`` / ``load_measurements`` in format 2;
* the reference: pyarrow writing and reading the bare runs table (level, node, size, count) and the bare
  cells table (level, node, value), no metadata, no checks.

Ratios are to the reference of the same kind measured in the same run; CPU seconds (all threads) beside
the wall time, which a shared machine stretches.  No target is set by the issue
beyond "works at 8M nodes".
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale import _peak_gb, _reset_peak  # noqa: E402


def _rss_gb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 2**20
    return 0.0


def timed(what: str, call, path: Path | None = None) -> dict:
    """Time ``call`` once; the memory it added (GB) over the resident set before; ``path``'s size (MB)."""
    gc.collect()
    before = _rss_gb()
    _reset_peak()
    start, cpu = time.perf_counter(), time.process_time()
    out = call()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    added = max(_peak_gb() - before, 0.0)
    size = path.stat().st_size / 2**20 if path is not None and path.exists() else float("nan")
    del out
    return {"what": what, "s": seconds, "cpu": cpu, "gb": added, "mb": size}


def _cells_table(measurements):
    import pyarrow as pa

    measured = [m for m in measurements.levels if m is not None]
    return pa.table(
        {
            "level": np.concatenate([np.full(len(m.values), m.level, np.int64) for m in measured]),
            "node": np.concatenate([np.repeat(np.arange(m.n_nodes), np.diff(m.ptr)) for m in measured]),
            "value": np.concatenate([np.asarray(m.values, np.int64) for m in measured]),
        }
    )


def _runs_table(release):
    import pyarrow as pa

    levels = [release.runs(k) for k in range(release.shape.depth + 1)]
    return pa.table(
        {
            "level": np.concatenate([np.full(r.sizes.size, k, np.int64) for k, r in enumerate(levels)]),
            "node": np.concatenate([r.node_ids() for r in levels]),
            "size": np.concatenate([r.sizes for r in levels]),
            "count": np.concatenate([r.counts for r in levels]),
        }
    )


def run_scale(scale: float, folder: Path) -> None:
    import pyarrow.parquet as pq

    import cocoviz
    from cocoviz import CocovizError, Plan, load_measurements, load_release, measure, post_process, save_measurements

    start = time.perf_counter()
    tree = cocoviz.load_dataset("housing-us-blocks", scale=scale)
    depth = tree.depth + 1
    plan = Plan.build(tree, epsilons=[1.0] * depth, methods=["Hg"] * depth, consistency="bottom-up")
    measurements = measure(plan, tree, seed=0)
    release = post_process(plan, measurements)
    nodes = sum(plan.shape.n_nodes(lvl) for lvl in range(depth))
    cells = sum(len(m.values) for m in measurements.levels if m is not None)
    runs = sum(len(release.runs(lvl).sizes) for lvl in range(depth))
    print(
        f"housing-us-blocks at scale {scale:g}: {nodes:,} nodes, {runs:,} runs, {cells:,} noisy cells "
        f"(built, measured and post-processed in {time.perf_counter() - start:.0f} s)",
        flush=True,
    )
    rows = []

    def measured(kind: str, formats: list[tuple[str, object, object]], table) -> None:
        """The reference (``table`` written and read by pyarrow), then every ``(name, save, load)``."""
        ref_path = folder / f"{kind}-ref.parquet"
        ref_save = timed(f"{kind} table (reference)", lambda: pq.write_table(table, ref_path), ref_path)
        table = None  # freed before the next timing
        ref_load = timed(f"{kind} table (reference)", lambda: pq.read_table(ref_path))
        rows.append((ref_save, ref_load, ref_save, ref_load))
        for name, save, load in formats:
            path = folder / f"{name}.parquet"
            saved = timed(name, lambda s=save, p=path: s(p), path)
            try:
                rows.append((saved, timed(name, lambda f=load, p=path: f(p)), ref_save, ref_load))
            except CocovizError as exc:  # a load that fails is reported, not raised
                print(f"  {name:<26} save {saved['s']:6.2f} s, {saved['mb']:8.1f} MB; load FAILS: {exc}", flush=True)

    measured(
        "runs",
        [
            ("release format 2", release.save, load_release),
            ("release format 2, no bands", lambda path: release.save(path, bands=False), load_release),
        ],
        _runs_table(release),
    )
    release = None
    gc.collect()
    measured(
        "cells",
        [("measurements format 2", lambda path: save_measurements(measurements, path), load_measurements)],
        _cells_table(measurements),
    )
    for save, load, rsave, rload in rows:
        print(
            f"  {save['what']:<26} save {save['s']:6.2f} s ({save['s'] / rsave['s']:5.1f}x ref; "
            f"CPU {save['cpu']:.2f} s, {save['cpu'] / rsave['cpu']:.1f}x), "
            f"load {load['s']:6.2f} s ({load['s'] / rload['s']:5.1f}x ref; "
            f"CPU {load['cpu']:.2f} s, {load['cpu'] / rload['cpu']:.1f}x), "
            f"{save['mb']:8.1f} MB ({save['mb'] / rsave['mb']:4.1f}x ref), "
            f"memory added: save {save['gb']:.2f} GB, load {load['gb']:.2f} GB",
            flush=True,
        )
    for path in folder.glob("*.parquet"):
        path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", default="0.1,0.3,1", help="housing-us-blocks scales, comma-separated")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as folder:
        for scale in (float(s) for s in args.scales.split(",")):
            run_scale(scale, Path(folder))


if __name__ == "__main__":
    main()
