"""The three table forms aggregated where the data lives, checks included, into leaf runs.

One SQL text per form runs in the engine that holds the rows (DuckDB for
frames and files, the database itself for :func:`cocoviz.hierarchy.ingest.sql`): persons
-> group sizes -> ``(leaf labels, size, count)``.  Every check the in-memory
builders make is counted in the same pass: a group in two leaves, a person
whose group is not in the public groups table (or lies elsewhere there), a
missing label, a size over the limits.  Integer level columns are first made
one key per row (:mod:`cocoviz.hierarchy.ingest.leaf_key`), so that each group keeps two
numbers, not two per level; the groups table, if any, is grouped with the
persons in the same pass.  Where the group ids are integers too, in a range not much wider than the
rows, and the engine is the embedded one, a clean table is counted instead through an array indexed by
the id (:mod:`cocoviz.hierarchy.ingest.dense`: one read of two columns, in any row order); anything
unclean is left to the SQL, which names it.  Only the runs come back into Python,
where the labels become integer codes per level; on any problem nothing is
built, and a :class:`~cocoviz.hierarchy.tables.TableProblems` names each
problem with its count and up to 10 example rows (a second, failure-only
query fetches them).

>>> import pyarrow as pa
>>> persons = pa.table({"hh": [1, 1, 2, 2, 3], "state": ["a", "a", "a", "b", "b"]})
>>> try:
...     persons_leaves(persons, group="hh", levels=["state"])
... except tables.TableProblems as exc:
...     print(str(exc).replace("; ", ";\\n"))
column 'hh': 1 group(s) appear in more than one region, in 2 rows: (hh=2, state='a'), (hh=2, state='b');
a group must lie in one leaf
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from cocoviz.errors import InputError
from cocoviz.hierarchy import tables
from cocoviz.hierarchy.ingest.database import Database
from cocoviz.hierarchy.ingest.dense import dense_runs
from cocoviz.hierarchy.ingest.leaf_key import LeafKey, keyed_runs
from cocoviz.hierarchy.ingest.leaf_key import quote as _q
from cocoviz.hierarchy.ingest.leaf_key import sum_if as _sum
from cocoviz.hierarchy.ingest.sources import Sources, type_conflicts

__all__ = ["counts_leaves", "groups_leaves", "persons_leaves"]

_INTEGER = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"}
_INTEGER |= {"UHUGEINT", "INT2", "INT4", "INT8", "INT", "SMALLSERIAL", "SERIAL", "BIGSERIAL"}
_TEXT = {"VARCHAR", "TEXT", "BPCHAR", "CHAR", "NAME", "STRING"}
_FLOAT = {"FLOAT", "DOUBLE", "REAL", "FLOAT4", "FLOAT8", "NUMERIC", "DECIMAL"}
SHOWN = tables.MAX_PROBLEMS  # example rows per problem


def _kind(sql_type: str) -> str:
    base = sql_type.upper().split("(")[0].strip()
    if base in _INTEGER:
        return "integer"
    if base in _TEXT or base.startswith("ENUM") or sql_type.upper().startswith("ENUM"):
        return "text"
    return "float" if base in _FLOAT else "other"


def _literal(value: Any) -> str:
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return "'" + str(value).replace("'", "''") + "'"


def _lead(where: str | None) -> str:
    return f"{where}, " if where else ""


class _Table:
    """One relation in an engine, its columns checked for the roles asked."""

    def __init__(
        self,
        db: Database,
        relation: str,
        where: str | None,
        columns: Sequence[str],
        files: str | None = None,
    ):
        self.db, self.relation, self.where = db, relation, where
        #: The pattern of its Parquet files (None for any other source), whose footers say how rows are ordered.
        self.files = files
        self.lead = _lead(where)
        types = db.types(relation)
        missing = [c for c in columns if c not in types]
        if missing:
            raise InputError(f"{where + ': ' if where else ''}missing column(s) {missing}; the table has {list(types)}")
        if len(columns) != len(set(columns)):
            raise InputError(f"a column is given two roles: {list(columns)}")
        conflicts = type_conflicts(db, files, list(columns)) if files is not None else {}
        if conflicts:
            raise tables.TableProblems(
                [
                    f"{_lead(where)}column '{c}': a column must have one type in every file, but "
                    f"{'; '.join(found)} (values such as 1 and '1' would be taken for one label); store it alike"
                    for c, found in conflicts.items()
                ]
            )
        self.kinds = {c: _kind(types[c]) for c in columns}
        self.types = {c: types[c] for c in columns}
        self.columns = list(columns)

    def label_problems(self, cols: Sequence[str], what: Sequence[str], problems: list[str]) -> None:
        for col, name in zip(cols, what):
            if self.kinds[col] not in {"integer", "text", "float"}:
                t = self.types[col]
                problems.append(
                    f"{self.lead}column '{col}': a {name} must be text or a number, not {t}: the whole "
                    f"column is {t} (rows {self.examples(f'{_q(col)} IS NOT NULL', 5)})"
                )

    def examples(self, where: str, limit: int = SHOWN, join: str = "") -> str:
        """Up to ``limit`` rows matching ``where``, the least first by their shown columns.

        Ordered by the values shown (not by where the rows lie, which a parallel scan does not keep), so the
        same bad table names the same rows in every run and whatever its row order.
        """
        cols = ", ".join(f"p.{_q(c)}" for c in self.columns)
        order = ", ".join(f"{k + 1} NULLS LAST" for k in range(len(self.columns)))
        rows = self.db.query(
            f"SELECT {cols} FROM {self.relation} AS p {join} WHERE {where} ORDER BY {order} LIMIT {limit}"
        )
        return ", ".join(
            "(" + ", ".join(f"{c}={_show(v)}" for c, v in zip(self.columns, row)) + ")"
            for row in rows.itertuples(index=False)
        )

    def count_problem(self, col: str, what: str, n: int, where: str, unit: str = "rows", after: str = "") -> str:
        return f"{self.lead}column '{col}': {what}, in {n:,} {unit}: {self.examples(where)}{after}"


def _show(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return "null"
    return repr(value) if isinstance(value, str) else str(value)


def _same(a: str, b: str, kind_a: str, kind_b: str) -> str:
    """SQL: ``a`` and ``b`` are the same label (compared as text when their kinds differ, as uploads do)."""
    if kind_a == kind_b:
        return f"{a} = {b}"
    return f"CAST({a} AS VARCHAR) = CAST({b} AS VARCHAR)"


class _Paths:
    """SQL for each group's least and greatest path: each level's least and greatest label (``a0, b0, ...``).

    Per-level integer extremes keep fixed-size aggregate states: on 100M persons DuckDB took 18 s for them
    against 60 s for one least and one greatest struct of the whole path (which spills).
    """

    def __init__(self, levels: Sequence[str]):
        self.levels = list(levels)

    def aggregates(self) -> str:
        return "".join(f", MIN({_q(c)}) AS a{j}, MAX({_q(c)}) AS b{j}" for j, c in enumerate(self.levels))

    def key(self, alias: str) -> list[str]:
        """The grouping expressions of the least path of ``alias``'s groups."""
        return [f"{alias}.a{j}" for j in range(len(self.levels))]

    def label(self, alias: str, end: str, j: int) -> str:
        """Level ``j``'s label of ``alias``'s least (``end="a"``) or greatest (``"b"``) path."""
        return f"{alias}.{end}{j}"

    def split(self, alias: str) -> str:
        return " OR ".join(f"{alias}.a{j} <> {alias}.b{j}" for j in range(len(self.levels))) or "FALSE"

    def runs(self, inner: str, others: Sequence[str]) -> str:
        """``inner`` (grouped by :meth:`key` named k0, ... and the columns ``others``) with a0, a1, ... labels."""
        labels = "".join(f"k{j} AS a{j}, " for j in range(len(self.levels)))
        return f"SELECT {labels}{', '.join(others)} FROM ({inner}) AS r"


def _sizes_sql(table: _Table, group: str, paths: _Paths) -> str:
    """Per group: its size n, its rows with a missing label (k), and its least and greatest path."""
    missing = " OR ".join(f"{_q(c)} IS NULL" for c in paths.levels) or "FALSE"
    return (
        f"SELECT {_q(group)} AS g, COUNT(*) AS n, {_sum(missing)} AS k{paths.aggregates()} "
        f"FROM {table.relation} AS p GROUP BY {_q(group)}"
    )


def persons_leaves(persons: Any, *, group: str, levels: Sequence[str], groups: Any = None) -> tables.Leaves:
    """Leaves of a persons table held by an engine (see :meth:`Hierarchy.from_persons`)."""
    tables.check_roles(levels, group=group)
    levels = list(levels)
    sources = Sources(*([persons] if groups is None else [persons, groups]))
    with sources as (db, relations):
        people = _Table(db, relations[0], None, [group, *levels], sources.parquet.get(relations[0]))
        problems: list[str] = []
        people.label_problems([*levels, group], ["region label"] * len(levels) + ["group id"], problems)
        public = None
        if groups is not None:
            files = sources.parquet.get(relations[1])
            public = _Table(db, relations[1], tables.GROUPS_TABLE, [group, *levels], files)
            public.label_problems([*levels, group], ["region label"] * len(levels) + ["group id"], problems)
        tables.refuse(problems)
        both = [people] if public is None else [people, public]
        key = None
        if all(t.kinds[c] == "integer" for t in both for c in levels):
            ids = group if all(t.kinds[group] == "integer" for t in both) else None
            key = LeafKey.of(db, [t.relation for t in both], levels, ids)
        counted = None if key is None else dense_runs(people, public, group, key)
        if counted is not None:
            runs, checks = counted
        elif key is not None:
            runs, checks = keyed_runs(people, public, group, key)
        else:
            runs = checks = (
                _persons_runs(people, group, levels) if public is None else _public_runs(people, public, group, levels)
            )
        _report(people, public, checks, group, levels, problems)
        runs = runs[runs["c"].gt(0)]  # runs of persons in unlisted groups only: refused above
        _check_runs(public or people, runs, levels, problems)
        tables.refuse(problems)
    return _leaves(runs, levels)


def _report(
    people: _Table, public: _Table | None, runs: pd.DataFrame, group: str, levels: list[str], problems: list[str]
) -> None:
    """Each problem the runs count, with its rows (found by a second, failure-only query)."""
    _null_problems(people, runs, group, levels, "", problems)
    if public is None:
        _split_problem(people, runs, group, levels, problems)
    else:
        _null_problems(public, runs, group, levels, "q", problems)
        _public_problems(people, public, runs, group, levels, problems)


def _persons_runs(people: _Table, group: str, levels: list[str]) -> pd.DataFrame:
    paths = _Paths(levels)
    key = paths.key("sz")
    keys = "".join(f"{k} AS k{j}, " for j, k in enumerate(key))
    group_by = "".join(f"{k}, " for k in key)
    split = paths.split("sz")
    inner = (
        f"WITH sz AS ({_sizes_sql(people, group, paths)}) "
        f"SELECT {keys}sz.n AS n, COUNT(*) AS c, {_sum('sz.g IS NULL', 'sz.n')} AS null_group, "
        f"{_sum(f'sz.g IS NOT NULL AND ({split})')} AS split, CAST(SUM(sz.k) AS BIGINT) AS nulls "
        f"FROM sz GROUP BY {group_by}sz.n"
    )
    return people.db.query(paths.runs(inner, ["n", "c", "null_group", "split", "nulls"]))


def _split_problem(people: _Table, runs: pd.DataFrame, group: str, levels: list[str], problems: list[str]) -> None:
    n_split = int(runs["split"].sum())
    if n_split:
        bad = f"SELECT {_q(group)} FROM {people.relation} AS s GROUP BY {_q(group)} HAVING " + " OR ".join(
            f"MIN({_q(c)}) <> MAX({_q(c)})" for c in levels
        )
        rows = people.examples(f"p.{_q(group)} IN ({bad})")
        problems.append(
            f"column '{group}': {n_split:,} group(s) appear in more than one region, in "
            f"{_count_rows(people, f'p.{_q(group)} IN ({bad})')} rows: {rows}; a group must lie in one leaf"
        )


def _count_rows(table: _Table, where: str) -> str:
    n = table.db.query(f"SELECT COUNT(*) AS n FROM {table.relation} AS p WHERE {where}")["n"].item()
    return f"{int(n):,}"


def _null_problems(
    table: _Table, runs: pd.DataFrame, group: str, levels: list[str], prefix: str, problems: list[str]
) -> None:
    n = int(runs[f"{prefix}null_group"].sum())
    if n:
        problems.append(table.count_problem(group, "missing group id", n, f"p.{_q(group)} IS NULL"))
    if levels and int(runs[f"{prefix}nulls"].sum()):
        # Which levels: a second scan, on failure only.
        counts = ", ".join(f"CAST(COUNT(*) - COUNT({_q(c)}) AS BIGINT) AS m{j}" for j, c in enumerate(levels))
        missing = table.db.query(f"SELECT {counts} FROM {table.relation} AS p").iloc[0]
        for j, col in enumerate(levels):
            if int(missing[f"m{j}"]):
                where = f"p.{_q(col)} IS NULL"
                problems.append(table.count_problem(col, "missing region label", int(missing[f"m{j}"]), where))


def _public_runs(people: _Table, public: _Table, group: str, levels: list[str]) -> pd.DataFrame:
    paths = _Paths(levels)
    on = _same("q.g", "sz.g", public.kinds[group], people.kinds[group])
    moved = " OR ".join(
        f"NOT ({_same(paths.label('sz', e, j), paths.label('q', 'a', j), people.kinds[c], public.kinds[c])})"
        for j, c in enumerate(levels)
        for e in "ab"
    )
    moved = moved or "FALSE"
    key = paths.key("q")
    keys = "".join(f"{k} AS k{j}, " for j, k in enumerate(key))
    group_by = "".join(f"{k}, " for k in key)
    checks = ["null_group", "qnull_group", "repeated", "unknown", "moved", "qnulls", "nulls"]
    inner = (
        f"WITH sz AS ({_sizes_sql(people, group, paths)}), q AS ({_sizes_sql(public, group, paths)}) "
        f"SELECT {keys}COALESCE(sz.n, 0) AS n, COUNT(q.g) AS c, "
        f"{_sum('sz.g IS NULL AND sz.n IS NOT NULL', 'sz.n')} AS null_group, "
        f"{_sum('q.g IS NULL AND q.n IS NOT NULL', 'q.n')} AS qnull_group, "
        f"{_sum('q.g IS NOT NULL AND q.n > 1')} AS repeated, "
        f"{_sum('sz.g IS NOT NULL AND q.g IS NULL', 'sz.n')} AS unknown, "
        f"{_sum(f'sz.g IS NOT NULL AND q.g IS NOT NULL AND ({moved})', 'sz.n')} AS moved, "
        f"CAST(SUM(q.k) AS BIGINT) AS qnulls, CAST(SUM(sz.k) AS BIGINT) AS nulls "
        f"FROM q FULL OUTER JOIN sz ON {on} GROUP BY {group_by}COALESCE(sz.n, 0)"
    )
    return people.db.query(paths.runs(inner, ["n", "c", *checks]))


def _public_problems(
    people: _Table, public: _Table, runs: pd.DataFrame, group: str, levels: list[str], problems: list[str]
) -> None:
    g = _q(group)
    where = public.lead.rstrip(", ")
    n = int(runs["repeated"].sum())
    if n:
        bad = f"SELECT {g} FROM {public.relation} AS s GROUP BY {g} HAVING COUNT(*) > 1"
        problems.append(
            public.count_problem(
                group,
                f"{n:,} group id(s) listed more than once",
                int(_count_rows(public, f"p.{g} IN ({bad})").replace(",", "")),
                f"p.{g} IN ({bad})",
                after="; each group must be listed once, with its region",
            )
        )
    n = int(runs["unknown"].sum())
    if n:
        listed = _same("l.g", f"p.{g}", public.kinds[group], people.kinds[group]).replace("l.g", f"l.{g}")
        problems.append(
            people.count_problem(
                group,
                f"group(s) not in the {where}",
                n,
                f"p.{g} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {public.relation} AS l WHERE {listed})",
                after="; every person's group must be listed there",
            )
        )
    n = int(runs["moved"].sum())
    if n:
        listed = _same(f"l.{g}", f"p.{g}", public.kinds[group], people.kinds[group])
        elsewhere = " OR ".join(
            f"NOT ({_same(f'l.{_q(c)}', f'p.{_q(c)}', public.kinds[c], people.kinds[c])})" for c in levels
        )
        problems.append(
            people.count_problem(
                group,
                f"persons placed in another region than their group's in the {where}",
                n,
                f"EXISTS (SELECT 1 FROM {public.relation} AS l WHERE {listed} AND ({elsewhere}))",
                after="; a group must lie in one leaf",
            )
        )


def _check_runs(table: _Table, runs: pd.DataFrame, levels: list[str], problems: list[str]) -> None:
    """What the runs show whole: blank labels, sizes and totals over the limits."""
    for j, col in enumerate(levels):
        if table.kinds[col] == "text":
            labels = runs[f"a{j}"].astype(str)
            blank = pd.unique(labels[labels.str.strip().eq("")])
            if len(blank):
                values = ", ".join(_literal(v) for v in blank)
                n = int(runs["c"][labels.str.strip().eq("")].sum())
                problems.append(
                    table.count_problem(col, "empty region label", n, f"p.{_q(col)} IN ({values})", unit="groups")
                )
    sizes = runs["n"].to_numpy(np.float64)
    counts = runs["c"].to_numpy(np.float64)
    large = sizes > tables.MAX_GROUP_SIZE
    if large.any():
        problems.append(
            f"{table.lead}group size too large in {int(counts[large].sum()):,} groups (largest {int(sizes.max()):,}); "
            f"at most {tables.power_text(tables.MAX_GROUP_SIZE)} is supported"
        )
    if counts.sum() > tables.MAX_GROUPS:
        problems.append(
            f"{table.lead}{counts.sum():,.0f} groups in all; at most {tables.power_text(tables.MAX_GROUPS)} groups are "
            f"supported in one region, the root included"
        )
    if np.dot(sizes, counts) > tables.MAX_PERSONS:
        problems.append(
            f"more than {tables.power_text(tables.MAX_PERSONS)} persons in all; that many are not supported"
        )


def _leaves(runs: pd.DataFrame, levels: list[str]) -> tables.Leaves:
    frame = pd.DataFrame({c: runs[f"a{j}"].to_numpy() for j, c in enumerate(levels)}, index=runs.index)
    return tables.leaves_of(frame, levels, runs["n"].to_numpy(np.int64), runs["c"].to_numpy(np.int64))


def groups_leaves(df: Any, *, size: str, levels: Sequence[str]) -> tables.Leaves:
    """Leaves of a groups table held by an engine (see :meth:`Hierarchy.from_groups`)."""
    return _table_leaves(df, size, None, levels)


def counts_leaves(df: Any, *, size: str, count: str, levels: Sequence[str]) -> tables.Leaves:
    """Leaves of a per-leaf counts table held by an engine (see :meth:`Hierarchy.from_counts`)."""
    return _table_leaves(df, size, count, levels)


def _table_leaves(df: Any, size: str, count: str | None, levels: Sequence[str]) -> tables.Leaves:
    """Rows grouped by (labels, size[, count]) in the engine: every value check is made on the distinct values."""
    tables.check_roles(levels, size=size, **({} if count is None else {"count": count}))
    levels = list(levels)
    numbers = [size] if count is None else [size, count]
    sources = Sources(df)
    with sources as (db, (relation,)):
        table = _Table(db, relation, None, [*levels, *numbers], sources.parquet.get(relation))
        problems: list[str] = []
        table.label_problems(levels, ["region label"] * len(levels), problems)
        for col in numbers:
            if table.kinds[col] == "other":
                t = table.types[col]
                problems.append(f"column '{col}': must be a whole number, not {t}: the whole column is {t}")
        tables.refuse(problems)
        cols = [*levels, *numbers]
        keys = ", ".join(f"{_q(c)} AS v{k}" for k, c in enumerate(cols))
        rows = db.query(f"SELECT {keys}, COUNT(*) AS r FROM {relation} AS p GROUP BY {', '.join(map(_q, cols))}")
        for j, col in enumerate(levels):
            missing = rows[f"v{j}"].isna().to_numpy()
            if missing.any():
                n = int(rows["r"][missing].sum())
                problems.append(table.count_problem(col, "missing region label", n, f"p.{_q(col)} IS NULL"))
        limits = [(size, "group size", tables.MAX_GROUP_SIZE), (count, "number of groups", tables.MAX_GROUPS)]
        values = [
            _whole_numbers(table, col, what, limit, rows[f"v{len(levels) + k}"], rows["r"], problems)
            for k, (col, what, limit) in enumerate(limits[: len(numbers)])
        ]
        runs = pd.DataFrame({f"a{j}": rows[f"v{j}"] for j in range(len(levels))})
        runs["n"] = values[0]
        runs["c"] = rows["r"].to_numpy(np.int64) * (values[1] if count is not None else 1)
        # Rows of 0 groups stay: a leaf listed with none is a region of G = 0, as in the pandas path.
        _check_runs(table, runs, levels, problems)
        tables.refuse(problems)
    return _leaves(runs, levels)


def _whole_numbers(
    table: _Table, col: str, what: str, limit: int, raw: pd.Series, rows: pd.Series, problems: list[str]
) -> np.ndarray:
    """The distinct values ``raw`` of column ``col`` as int64, each bad kind reported with its rows."""
    values = pd.to_numeric(raw.astype(object).where(raw.notna(), None), errors="coerce").to_numpy(np.float64)
    finite = np.isfinite(values)
    checks = [
        (raw.isna().to_numpy(), f"missing {what}"),
        (np.isnan(values) & raw.notna().to_numpy(), f"{what} must be a number; not a number"),
        (np.isinf(values), f"infinite {what}"),
        (finite & (values < 0), f"negative {what}"),
        (finite & (values != np.floor(values)), f"fractional {what}"),
        (finite & (values > limit), f"{what} too large (at most {tables.power_text(limit)} is supported)"),
    ]
    for mask, problem in checks:
        if mask.any():
            bad = raw[mask]
            where = (
                f"p.{_q(col)} IS NULL"
                if bad.isna().all()
                else f"p.{_q(col)} IN ({', '.join(map(_literal, pd.unique(bad.dropna())[:100]))})"
            )
            problems.append(table.count_problem(col, problem, int(rows[mask].sum()), where))
    return np.where(finite, values, 0).astype(np.int64)
