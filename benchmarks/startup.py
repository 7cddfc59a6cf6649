"""Start-up cost: `python -c "import cocoviz"` against `python -c "import numpy, pandas"`, in the same run.

Run:  python benchmarks/startup.py [--runs 7]

Each import runs in a fresh interpreter, alternating, and the medians are compared.  numba, SciPy's
optimizers, OpenDP and pyarrow load on first use, so the package costs little more than numpy and
pandas (goal: at most 1.5x).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def seconds(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    base, package = [], []
    for _ in range(args.runs):
        base.append(seconds("import numpy, pandas"))
        package.append(seconds("import cocoviz"))
    b, p = statistics.median(base), statistics.median(package)
    print(
        f"import numpy, pandas: median {b:.2f} s; import cocoviz: median {p:.2f} s; ratio {p / b:.2f} "
        f"({args.runs} runs each, alternating)"
    )


if __name__ == "__main__":
    main()
