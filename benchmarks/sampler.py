"""The secure samplers' speed: the exact vectorised sampler ("secure") against OpenDP's ("opendp").

Run:  python benchmarks/sampler.py                 (10M cells for "secure", 100k for OpenDP, four scales, best of 3)
      python benchmarks/sampler.py --cells 100000000   (memory stays one 1 MiB buffer beyond the output)
      python benchmarks/sampler.py --gaussian          (the discrete Gaussian instead, four σ²; then a fast
                                                        release in zCDP against the same release in pure ε)

Prints, per noise scale, cells per second of both samplers measured in the same run, in CPU seconds
of the one thread that draws (one core: the figure the target is about, and steady on a shared
machine) and in wall seconds, and their ratio; then the memory the secure sampler takes beyond its
input and output.  Targets (issue 14): >= 10 M cells/s on one core and >= 100x OpenDP.  With
``--gaussian`` (issue 23): the secure discrete Gaussian >= 5 M cells/s and >= 50x OpenDP's; the fast
zCDP release (3 levels, all Hg, discrete Gaussian) within 1.3x of the same release in pure ε.
Other scripts import :func:`measure` (e.g. benchmarks/scale.py).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cocoviz.privacy.noise import OpenDPSampler, SecureSampler  # noqa: E402

#: Scales Δ/ε: small (ε = 2, Δ = 1), unit, Δ = 2 at ε = 0.3 (a float with a 2**50 denominator), large.
SCALES = (0.5, 1.0, 2 / 0.3, 1000.0)
#: σ² of the discrete Gaussian: ρ = 2 (σ = 0.5), ρ = 0.5 (σ = 1), ρ = 0.0075 at Δ₂ = 1, large.
SIGMA2S = (0.25, 1.0, 1 / 0.015, 1e6)


class _Gaussian:
    """A sampler's discrete Gaussian behind the ``draw(values, scale)`` the timings call (scale = σ²)."""

    def __init__(self, sampler):
        self.sampler = sampler

    def draw(self, values, sigma2):
        return self.sampler.draw_gaussian(values, sigma2)


def _rate(sampler, cells: int, scale: float, repeats: int) -> tuple[float, float]:
    """(cells per CPU second, cells per wall second) of the best of ``repeats`` draws over ``cells`` counts."""
    values = np.full(cells, 5, np.int64)  # written, not lazy zeros
    cpu = wall = float("inf")
    for _ in range(repeats):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        sampler.draw(values, scale)
        cpu, wall = min(cpu, time.process_time() - cpu0), min(wall, time.perf_counter() - wall0)
    return cells / max(cpu, 1e-9), cells / max(wall, 1e-9)


def measure(
    cells: int = 10_000_000, opendp_cells: int = 100_000, scale: float = 2.0, repeats: int = 3, gaussian: bool = False
) -> dict:
    """Cells per second of the secure sampler and OpenDP's, measured now (best of ``repeats``), and their ratios.

    Returns ``secure_cpu``, ``secure_wall``, ``opendp_cpu``, ``opendp_wall`` (cells/s) and
    ``ratio_cpu``, ``ratio_wall`` (secure / OpenDP), with ``cells``, ``opendp_cells`` and ``scale``.
    With ``gaussian``, the discrete Gaussian of σ² = ``scale``.
    """
    secure, opendp = SecureSampler(), OpenDPSampler()
    if gaussian:
        secure, opendp = _Gaussian(secure), _Gaussian(opendp)
    secure.draw(np.zeros(1_000, np.int64), scale)  # compile (or load the cached kernel) outside the timing
    opendp.draw(np.zeros(1_000, np.int64), scale)
    secure_cpu, secure_wall = _rate(secure, cells, scale, repeats)
    opendp_cpu, opendp_wall = _rate(opendp, opendp_cells, scale, repeats)
    return {
        "scale": scale,
        "cells": cells,
        "opendp_cells": opendp_cells,
        "secure_cpu": secure_cpu,
        "secure_wall": secure_wall,
        "opendp_cpu": opendp_cpu,
        "opendp_wall": opendp_wall,
        "ratio_cpu": secure_cpu / opendp_cpu,
        "ratio_wall": secure_wall / opendp_wall,
    }


def extra_memory(cells: int, scale: float = 2.0) -> int:
    """Peak bytes the secure sampler allocates beyond its int64 output (numpy reports to tracemalloc)."""
    sampler = SecureSampler()
    sampler.draw(np.zeros(1_000, np.int64), scale)  # load the compiled kernel before tracing
    values = np.full(cells, 5, np.int64)
    tracemalloc.start()
    try:
        sampler.draw(values, scale)
        return tracemalloc.get_traced_memory()[1] - 8 * cells
    finally:
        tracemalloc.stop()


def release_ratio(groups: int = 2_000_000, repeats: int = 3) -> dict:
    """Seconds of a fast 3-level all-Hg release in zCDP (discrete Gaussian) and in pure ε (double-geometric),
    same tree, same seed, best of ``repeats``, and their ratio."""
    from scale import synthetic_tree

    from cocoviz import estimate

    tree = synthetic_tree(groups, 50, 3_000)
    runs = {
        "pure-ε": {"epsilons": [1.0, 1.0, 1.0]},
        "zCDP": {"rhos": [0.5, 0.5, 0.5]},
    }
    best = {}
    for name, budget in runs.items():
        estimate(tree, methods=["Hg"] * 3, seed=0, **budget)  # compile outside the timing
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            estimate(tree, methods=["Hg"] * 3, seed=0, **budget)
            times.append(time.perf_counter() - start)
        best[name] = min(times)
    return {"groups": groups, **best, "ratio": best["zCDP"] / best["pure-ε"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=10_000_000, help="cells for the secure sampler")
    parser.add_argument("--opendp-cells", type=int, default=100_000, help="cells for OpenDP (0.1 M/s)")
    parser.add_argument("--repeats", type=int, default=3, help="draws per sampler and scale; the best counts")
    parser.add_argument("--gaussian", action="store_true", help="the discrete Gaussian, and the zCDP release")
    args = parser.parse_args()
    if args.gaussian:
        return main_gaussian(args)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from results import record  # benchmarks/results.py: the figures as JSON under benchmarks/results/

    print(f"secure: {SecureSampler.name}\nopendp: {OpenDPSampler.name}")
    print(f"{'scale':>9} | {'secure M/s cpu':>14} {'wall':>6} | {'opendp M/s cpu':>14} {'wall':>6} | ratio cpu  wall")
    rows = []
    for scale in SCALES:
        r = measure(args.cells, args.opendp_cells, scale, args.repeats)
        rows.append(r)
        print(
            f"{scale:9.4g} | {r['secure_cpu'] / 1e6:14.2f} {r['secure_wall'] / 1e6:6.2f} | "
            f"{r['opendp_cpu'] / 1e6:14.3f} {r['opendp_wall'] / 1e6:6.3f} | "
            f"{r['ratio_cpu']:9.0f} {r['ratio_wall']:5.0f}"
        )
    print(
        f"(best of {args.repeats}: secure on {args.cells:,} cells, OpenDP on {args.opendp_cells:,}; "
        "targets: >= 10 M cells/s, >= 100x)"
    )
    print(f"memory beyond the output, {args.cells:,} cells: {extra_memory(args.cells) / 2**20:.1f} MiB")
    slowest = min(row["secure_cpu"] for row in rows)
    ratio = min(row["ratio_cpu"] for row in rows)
    record(
        "sampler",
        target="secure sampler, one core (the slowest of the scales) and its ratio to OpenDP",
        figure=f"{slowest / 1e6:.1f}M cells/s, {ratio:.0f}x OpenDP's",
        goal=">= 10M/s, >= 100x",
        met=slowest >= 10e6 and ratio >= 100,
        command=" ".join(["python benchmarks/sampler.py", *sys.argv[1:]]),
        values={"cells": args.cells, "opendp_cells": args.opendp_cells, "repeats": args.repeats},
    )


def main_gaussian(args) -> None:
    print(f"secure: {SecureSampler.name}\nopendp: {OpenDPSampler.name}  (discrete Gaussian)")
    print(f"{'σ²':>9} | {'secure M/s cpu':>14} {'wall':>6} | {'opendp M/s cpu':>14} {'wall':>6} | ratio cpu  wall")
    for sigma2 in SIGMA2S:
        r = measure(args.cells, args.opendp_cells, sigma2, args.repeats, gaussian=True)
        print(
            f"{sigma2:9.4g} | {r['secure_cpu'] / 1e6:14.2f} {r['secure_wall'] / 1e6:6.2f} | "
            f"{r['opendp_cpu'] / 1e6:14.3f} {r['opendp_wall'] / 1e6:6.3f} | "
            f"{r['ratio_cpu']:9.0f} {r['ratio_wall']:5.0f}"
        )
    print(
        f"(best of {args.repeats}: secure on {args.cells:,} cells, OpenDP on {args.opendp_cells:,}; "
        "targets: >= 5 M cells/s, >= 50x)"
    )
    r = release_ratio(repeats=args.repeats)
    print(
        f"fast release, 3 levels all Hg, {r['groups']:,} groups: pure ε {r['pure-ε']:.2f} s, "
        f"zCDP {r['zCDP']:.2f} s, ratio {r['ratio']:.2f} (target <= 1.3)"
    )


if __name__ == "__main__":
    main()
