"""What the privacy ledger adds to a secure release: identity, record and read times.

Run:  python benchmarks/ledger.py          (a national-scale shape: 50 states, 3,000 counties, 240,000 tracts)

Prints the seconds to hash a shape into its dataset identity, to record and complete one draw of
it (begin + complete, each a SQLite transaction), the same per draw for a one-node plan (mostly
the file system's sync), and to read back every entry.  There is no target: the figures say what a
ledger entry costs next to the release it records (seconds to minutes at this scale).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cocoviz.plan import Plan, Shape  # noqa: E402
from cocoviz.release.ledger import Ledger, dataset_identity  # noqa: E402


def national_shape(states: int = 50, counties: int = 60, tracts: int = 80) -> Shape:
    """A state / county / tract shape with 100 groups per tract."""
    s = [(f"s{i}",) for i in range(states)]
    c = [(a, f"c{j}") for (a,) in s for j in range(counties)]
    t = [(a, b, f"t{k}") for a, b in c for k in range(tracts)]
    g3 = np.full(len(t), 100)
    g2 = g3.reshape(-1, tracts).sum(1)
    g1 = g2.reshape(-1, counties).sum(1)
    parents = ((), (0,) * len(s), [i // counties for i in range(len(c))], [i // tracts for i in range(len(t))])
    return Shape(("state", "county", "tract"), (((),), s, c, t), parents, ((int(g1.sum()),), g1, g2, g3))


def main() -> None:
    shape = national_shape()
    start = time.perf_counter()
    dataset_identity(shape)
    print(f"dataset identity of {len(shape.paths[-1]):,} leaves: {time.perf_counter() - start:.2f} s")
    book = Ledger(Path(tempfile.mkdtemp()) / "ledger.sqlite")
    plan = Plan.build(shape, epsilons=[1, 1, 1, 1], methods=["Hg"] * 4)
    start = time.perf_counter()
    book.complete(book.begin(plan, cap=1000))
    print(f"record and complete one draw of it: {time.perf_counter() - start:.2f} s")
    small = Plan.build(Shape((), (((),),), ((),), ((4,),)), epsilons=[0.001], methods=["Hg"])
    start = time.perf_counter()
    for _ in range(100):
        book.complete(book.begin(small, cap=1000))
    print(f"record and complete a one-node draw: {(time.perf_counter() - start) * 10:.1f} ms per draw")
    start = time.perf_counter()
    n = len(book.entries())
    print(f"read back {n} entries: {(time.perf_counter() - start) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
