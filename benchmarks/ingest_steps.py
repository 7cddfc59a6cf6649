"""Where ``Hierarchy.from_persons`` spends its CPU seconds, step by step, against DuckDB's plain group-by.

On the persons file of ``benchmarks/ingest.py`` (generated there: ``--scale`` and ``--order`` as there), in
one process after a warm-up call of each path (so numba's start and the first reads are not counted): the
plain ``GROUP BY hh`` with its count; the SQL path (``cocoviz/hierarchy/ingest/leaf_key.py``): its one
aggregation query and its grouping of the persons alone (a count, the least and the greatest leaf key per
household); the array path (``cocoviz/hierarchy/ingest/dense.py``): the engine's scan of (id, leaf key)
through the counting kernel, each leaf's households by size, the runs read back; and, for both, the
runs made a tree.  Each step is the median of ``--repeat`` runs, without and with the public groups table.

    python benchmarks/ingest_steps.py --scale 0.03 --order shuffled
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=0.03)
    parser.add_argument("--order", choices=["sorted", "shuffled"], default="shuffled")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", default="/tmp/cocoviz-ingest")
    opts = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import ingest
    from results import record_rows

    from cocoviz.hierarchy import Hierarchy
    from cocoviz.hierarchy.ingest import _dense_kernels, aggregate, database, dense, leaf_key
    from cocoviz.hierarchy.ingest.sources import _duckdb

    persons = int(ingest.US_PERSONS * opts.scale)
    path = Path(opts.data) / f"persons_{persons}_{opts.order}.parquet"
    if not (path.exists() and ingest.groups_path(path).exists()):
        path.parent.mkdir(parents=True, exist_ok=True)
        ingest.generate(path, persons, order=opts.order)
    spent: dict[str, float] = {}

    def timed(owner, name: str, step: str) -> None:
        inner = getattr(owner, name)

        def wrapper(*args, **kwargs):
            start = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[step] = spent.get(step, 0.0) + time.process_time() - start

        setattr(owner, name, wrapper)

    timed(database.Database, "query", "engine queries through Database.query (the SQL path's aggregation)")
    timed(dense, "_feed", "array path: scan of (id, leaf key) through the counting kernel")
    timed(_dense_kernels, "leaf_sizes", "array path: each leaf's households by size (compiled)")
    timed(dense, "runs_of", "array path: runs read back (labels decoded)")
    timed(leaf_key, "runs_of", "SQL path: runs read back (labels decoded)")
    timed(aggregate, "_leaves", "both: runs made leaves (labels coded)")
    timed(Hierarchy, "__init__", "both: the tree built from its leaves")
    levels = ingest.LEVELS
    db = _duckdb()
    con = db.connection
    scan = f"read_parquet('{path}')"
    key = leaf_key.LeafKey.of(db, [scan], levels)
    grouping = (
        f"SELECT COUNT(*), SUM(t), SUM(lo), SUM(hi) FROM (SELECT hh, COUNT(*) AS t, MIN({key.sql('p')}) AS lo, "
        f"MAX({key.sql('p')}) AS hi FROM {scan} AS p GROUP BY hh)"
    )
    plain = f"SELECT COUNT(*) FROM (SELECT hh, COUNT(*) FROM {scan} GROUP BY hh)"

    def steps(groups):
        return {
            "plain GROUP BY hh, count(*)": lambda: con.execute(plain).fetchall(),
            "SQL path: persons grouped alone (count, min and max key)": lambda: con.execute(grouping).fetchall(),
            "from_persons, SQL path": lambda: _build(dense, Hierarchy, path, levels, groups, 10**15),
            "from_persons, array path": lambda: _build(dense, Hierarchy, path, levels, groups, 0),
        }

    rows = []
    for groups in [None, str(ingest.groups_path(path))]:
        table: dict[str, list[float]] = {}
        for repeat in range(opts.repeat + 1):  # the first: a warm-up, not counted
            for name, run in steps(groups).items():
                spent.clear()
                start = time.process_time()
                run()
                figures = {name: time.process_time() - start, **{f"{name} | {k}": v for k, v in spent.items()}}
                if repeat:
                    for k, v in figures.items():
                        table.setdefault(k, []).append(v)
        base = statistics.median(table["plain GROUP BY hh, count(*)"])
        print(f"{persons:,} persons, {opts.order}, groups table: {groups is not None}")
        for step, values in table.items():
            cpu = statistics.median(values)
            print(f"{cpu:7.2f} CPU s  {cpu / base:5.2f}x  {'    ' + step.split(' | ')[1] if ' | ' in step else step}")
            rows.append({"step": step, "groups_table": groups is not None, "cpu_s": round(cpu, 3)})
    print("wrote", record_rows(f"ingest_steps_{opts.order}_{persons}", rows, persons=persons, order=opts.order))


def _build(dense, hierarchy, path: Path, levels: list[str], groups: str | None, min_rows: int) -> None:
    dense.MIN_ROWS = min_rows
    hierarchy.from_persons(str(path), group="hh", levels=levels, groups=groups)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
