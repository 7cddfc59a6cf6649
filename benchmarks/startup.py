"""Start-up cost: `python -c "import cocoviz"` against `python -c "import numpy, pandas"`, in the same run.

Run:  python benchmarks/startup.py [--runs 7]

Each import runs in a fresh interpreter, alternating, and the medians are compared.  numba, SciPy's
optimizers, OpenDP and pyarrow load on first use, so the package costs little more than numpy and
pandas (goal: at most 1.5x). The figure is also written to ``benchmarks/results/`` (:mod:`results`).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from results import Timer, record  # noqa: E402  (benchmarks/ is not a package)


def seconds(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    base, package = [], []
    with Timer() as timer:
        for _ in range(args.runs):
            base.append(seconds("import numpy, pandas"))
            package.append(seconds("import cocoviz"))
    b, p = statistics.median(base), statistics.median(package)
    print(
        f"import numpy, pandas: median {b:.2f} s; import cocoviz: median {p:.2f} s; ratio {p / b:.2f} "
        f"({args.runs} runs each, alternating)"
    )
    path = record(
        "startup",
        target="import cocoviz against import numpy, pandas (median ratio)",
        figure=f"{p / b:.2f}x ({p:.2f} s against {b:.2f} s)",
        goal="<= 1.5x",
        met=p / b <= 1.5,
        timer=timer,
        command=f"python benchmarks/startup.py --runs {args.runs}",
        values={"import_cocoviz_s": p, "import_numpy_pandas_s": b, "runs": args.runs},
    )
    print(f"written to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
