"""One node's Hc and Hg fits (the whole-level kernels on one segment) against SciPy's isotonic regression.

Run:  python benchmarks/node_fits.py            (nodes of 1,000 cells, 200 of each)

The reference, measured in the same run, is the SciPy fit the tests use as their oracle
(:func:`cocoviz.methods.isotonic.isotonic`, then rounding) on the same noisy answers; the ratio is the node fit's
time to it.  Figures are printed and written as JSON under benchmarks/results/.
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

from results import record_rows as record  # noqa: E402 - benchmarks/ is on the path just above

from cocoviz.methods.estimators import fit_hc, fit_hg  # noqa: E402
from cocoviz.methods.isotonic import isotonic  # noqa: E402


def timed(call, inputs) -> float:
    start = time.perf_counter()
    for args in inputs:
        call(*args)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", type=int, default=1000, help="noisy cells per node")
    parser.add_argument("--nodes", type=int, default=200, help="nodes fitted per case")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    groups = args.cells
    hg = [np.sort(rng.integers(1, 50, args.cells)) + rng.integers(-3, 4, args.cells) for _ in range(args.nodes)]
    hc = [np.cumsum(rng.integers(0, 3, args.cells)) + rng.integers(-3, 4, args.cells) for _ in range(args.nodes)]
    fit_hg(hg[0], groups=groups, epsilon=1.0, p=2)
    fit_hc(hc[0], groups=groups, epsilon=1.0, p=1)  # compiled (or loaded from numba's cache) before timing
    rows = []
    for name, fit, data, upper in (("Hg", fit_hg, hg, None), ("Hc", fit_hc, hc, groups)):
        for p in (1, 2):
            ours = timed(lambda y, f=fit, q=p: f(y, groups=groups, epsilon=1.0, p=q), [(y,) for y in data])
            ref = timed(lambda y, q=p, u=upper: np.rint(isotonic(y, p=q, lower=0, upper=u)), [(y,) for y in data])
            rows.append({"case": f"{name} p={p}", "wall_s": ours, "reference_s": ref, "ratio": ours / ref})
            print(f"{name} p={p}: {args.nodes} nodes of {args.cells} cells {ours:.3f} s, SciPy {ref:.3f} s, "
                  f"{ours / ref:.2f}x", flush=True)  # fmt: skip
    print(record("node_fits", rows))


if __name__ == "__main__":
    main()
