"""Where a table lives: a frame, Parquet / CSV files, or a database, as a relation an engine can scan.

Frames (Polars, Arrow; pandas when asked) and files are scanned by an
embedded DuckDB, out of core: Parquet and CSV files are read in place (one
file, a glob such as ``"persons/*.parquet"``, or a partitioned folder such as
``persons/state=06/part-0.parquet``), never loaded whole.  A database table
(:func:`cocoviz.hierarchy.ingest.sql`) stays in its database, which does the work itself.

DuckDB rather than Polars' streaming engine: the checks and the aggregation
are one SQL text that runs unchanged in DuckDB and in PostgreSQL, so a file
and a database table are checked by the same code (``benchmarks/ingest.py``
measures both engines on the same rows).

>>> import pyarrow as pa
>>> with Sources(pa.table({"hh": [1, 1, 2], "state": ["a", "a", "b"]})) as (db, (persons,)):
...     db.query(f"SELECT COUNT(DISTINCT hh) AS groups FROM {persons}")["groups"].item()
2
"""

from __future__ import annotations

import csv
import glob
import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from cocoviz.errors import InputError, ParameterError
from cocoviz.hierarchy.ingest.database import Database, SqlSource

__all__ = ["Sources", "is_external", "type_conflicts", "sql_string"]

_PARQUET = (".parquet", ".pq", ".parq")
_CSV = (".csv", ".csv.gz", ".txt", ".tsv")
# DuckDB's working memory, past which it spills to disk: 2 GB ran out on 128M households (an allocation
# that does not spill); 3 GB keeps the process near 2 GB (benchmarks/ingest.py; the target is 4 GB in all).
_MEMORY_LIMIT = os.environ.get("COCOVIZ_DUCKDB_MEMORY", "3GB")
_SPILL = os.path.join(tempfile.gettempdir(), "cocoviz-duckdb")


def is_external(table: Any) -> bool:
    """Whether ``table`` is read through an engine: a Polars or Arrow frame, a path or glob, or :func:`sql`."""
    return isinstance(table, (str, os.PathLike, SqlSource)) or (
        _is_frame(table) and not isinstance(table, pd.DataFrame)
    )


class Sources:
    """Open the given tables in one engine; ``with Sources(a, b) as (db, (rel_a, rel_b))``.

    Tables in the same database are scanned there; frames and files by one
    DuckDB connection.  Tables in different places meet in DuckDB: a database
    table that must meet a file is read into it (only the public groups table
    may be such, and it has one row per group).
    """

    def __init__(self, *tables: Any):
        self.tables = tables
        self._dbs: list[Database] = []
        #: relation -> the pattern of its Parquet files, one or several: their footers tell each column's type
        #: per file (:func:`type_conflicts`) and how the rows are ordered (:mod:`cocoviz.hierarchy.ingest.leaf_key`).
        self.parquet: dict[str, str] = {}

    def __enter__(self) -> tuple[Database, list[str]]:
        databases = [t for t in self.tables if isinstance(t, SqlSource)]
        try:
            if databases and all(isinstance(t, SqlSource) for t in self.tables):
                same = all(
                    t.connection is databases[0].connection or t.connection == databases[0].connection
                    for t in databases
                )
                if same:
                    db = Database(databases[0])
                    self._dbs.append(db)
                    db.read_only()
                    return db, [t.relation for t in self.tables]
            if isinstance(self.tables[0], SqlSource):
                # The persons stay in their database; the public groups table (one row per group) joins them there.
                db = Database(self.tables[0])
                self._dbs.append(db)
                uploaded = [self._upload(db, t, k) for k, t in enumerate(self.tables[1:])]
                db.read_only()  # the temporary copies are made: from here on nothing may write
                return db, [self.tables[0].relation, *uploaded]
            db = _duckdb()
            self._dbs.append(db)
            return db, [self._relation(db, t, k) for k, t in enumerate(self.tables)]
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for db in self._dbs:
            db.close()
        self._dbs.clear()

    def _upload(self, db: Database, table: Any, k: int) -> str:
        """``table`` copied into a temporary table of ``db``'s database."""
        local = _duckdb()
        self._dbs.append(local)
        frame = local.query(f"SELECT * FROM {self._relation(local, table, k)} AS t")
        return db.load_frame(f"cocoviz_table_{k}", frame)

    def _relation(self, db: Database, table: Any, k: int) -> str:
        name = f"cocoviz_source_{k}"
        if isinstance(table, SqlSource):
            # A database table meeting a file: read into the embedded engine.
            remote = Database(table)
            remote.read_only()
            self._dbs.append(remote)
            frame = remote.query(f"SELECT * FROM {table.relation} AS t")
            db.connection.register(name, frame)
            return name
        if isinstance(table, str) and "://" in table:
            raise ParameterError(
                f"{table.split('://')[0]}:// is a database: name its table with cocoviz.sql(url, table) "
                "or give cocoviz.sql(url, query=...)"
            )
        if isinstance(table, (str, os.PathLike)):
            relation, pattern = _files(table)
            if pattern is not None:
                self.parquet[relation] = pattern
            return relation
        if _is_frame(table):
            names = [str(c) for c in getattr(table, "column_names", None) or list(table.columns)]
            repeated = sorted({c for c in names if names.count(c) > 1})
            if repeated:
                raise InputError(f"the table's column name(s) {repeated} appear more than once")
            db.connection.register(name, table)
            return name
        raise ParameterError(
            "a table must be a pandas / Polars / Arrow frame, a path or glob of Parquet or CSV files, "
            f"or cocoviz.sql(url, table); got {type(table).__name__}"
        )


def _is_frame(table: Any) -> bool:
    module = type(table).__module__.split(".")[0]
    return isinstance(table, pd.DataFrame) or module in {"polars", "pyarrow"}


def _duckdb() -> Database:
    import duckdb

    # Spilled intermediates go to the system's temporary folder (DuckDB's default is ./.tmp), removed on close.
    config = {"memory_limit": _MEMORY_LIMIT, "preserve_insertion_order": False, "temp_directory": _SPILL}
    connection = duckdb.connect(config=config)
    return Database(SqlSource(connection, "(frames and files)"))


def sql_string(text: str) -> str:
    """``text`` as a SQL string literal: in single quotes, a quote inside doubled."""
    return "'" + text.replace("'", "''") + "'"


def type_conflicts(db: Database, pattern: str, columns: list[str]) -> dict[str, list[str]]:
    """Columns whose type differs between the Parquet files of ``pattern``: column -> ``file: type`` of each.

    Read from the files' footers only.  DuckDB would unite them silently (``1`` and ``"1"`` as one label).
    """
    wanted = ", ".join(sql_string(str(c)) for c in columns)
    schema = db.query(
        f"SELECT name, file_name, type || COALESCE('/' || logical_type, '') AS t "
        f"FROM parquet_schema({sql_string(pattern)}) WHERE name IN ({wanted})"
    )
    conflicts = {}
    for name, rows in schema.groupby("name", sort=False):
        if rows["t"].nunique() > 1:
            first = rows.drop_duplicates("t")
            conflicts[name] = [f"{Path(f).name}: {t}" for f, t in zip(first["file_name"], first["t"])]
    return conflicts


def _files(path: str | os.PathLike) -> tuple[str, str | None]:
    """The DuckDB table function reading ``path`` (a file, a glob or a (partitioned) folder), and the pattern
    of its files when they are Parquet (else None)."""
    text = os.fspath(path)
    if os.path.isdir(text):
        found = [p for p in Path(text).rglob("*") if p.is_file() and not p.name.startswith((".", "_"))]
        pattern = os.path.join(text, "**", "*")
        hive = True
    else:
        found = [Path(p) for p in glob.glob(text, recursive=True)] if glob.has_magic(text) else [Path(text)]
        pattern, hive = text, False
        if not glob.has_magic(text) and not os.path.exists(text):
            raise InputError(f"cannot open {text!r}: no such file or folder")
    if not found:
        raise InputError(f"{text!r}: no file matches")
    kinds = {_kind(p) for p in found}
    if len(kinds) > 1:
        raise InputError(f"{text!r} mixes Parquet and CSV files; give one kind at a time")
    kind = kinds.pop()
    for file in sorted(found)[:_HEADERS_CHECKED]:
        repeated_columns(file, kind)
    if hive:
        pattern = os.path.join(text, "**", "*" + found[0].suffix)
    if kind == "parquet":
        relation = f"read_parquet({sql_string(pattern)}, {_hive(hive)}, union_by_name = true)"
        return relation, pattern
    # Every CSV value as text, as uploads read them: labels such as '01' keep their zero.
    relation = (
        f"read_csv({sql_string(pattern)}, header = true, all_varchar = true, {_hive(hive)}, union_by_name = true)"
    )
    return relation, None


#: How many files of a glob or folder have their header read for repeated names (each is a small read).
_HEADERS_CHECKED = 10_000


def repeated_columns(path: str | os.PathLike, kind: str) -> None:
    r"""Refuse a file whose header names a column twice (DuckDB would rename one ``s_1``; pandas ``s.1``).

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "p.csv")
    >>> _ = Path(path).write_text("hh,s,s\n1,a,b\n")
    >>> repeated_columns(path, "csv")
    Traceback (most recent call last):
    ...
    cocoviz.errors.InputError: p.csv: column name(s) ['s'] appear more than once in the header
    """
    name = Path(path).name
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            names = pq.read_schema(path).names
        except Exception:  # noqa: BLE001 - an unreadable file is DuckDB's to name, with its reason
            return
    else:
        try:
            with open(path, encoding="utf-8", errors="replace", newline="") as handle:
                names = next(csv.reader(handle), [])
        except (OSError, csv.Error):
            return
        names = [c.strip().lstrip("\ufeff") for c in names]
    seen: dict[str, int] = {}
    for column in names:
        seen[column] = seen.get(column, 0) + 1
    repeated = sorted(c for c, n in seen.items() if n > 1)
    if repeated:
        raise InputError(f"{name}: column name(s) {repeated} appear more than once in the header")


def _hive(hive: bool) -> str:
    # A folder's partition values are text, as written in its names (state=06 stays '06').
    return "hive_partitioning = true, hive_types_autocast = false" if hive else "hive_partitioning = false"


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(_PARQUET):
        return "parquet"
    if name.endswith(_CSV):
        return "csv"
    with open(path, "rb") as f:
        return "parquet" if f.read(4) == b"PAR1" else "csv"
