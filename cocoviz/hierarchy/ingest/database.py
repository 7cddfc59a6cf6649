"""A table in a database, named for :meth:`~cocoviz.hierarchy.Hierarchy.from_persons` and its siblings.

``sql(url_or_connection, table_or_query)`` only names the table; nothing is
read until a builder runs its aggregation *inside* the database
(:mod:`cocoviz.hierarchy.ingest.aggregate`), so only the runs (leaves x distinct sizes) come
back into Python.

A PostgreSQL URL (``postgresql://user@host:5432/db``, or
``postgresql://user@/db?host=/run/postgresql`` for a unix socket) is opened
with psycopg 3; an open connection may be passed instead (psycopg, DuckDB,
or any DB-API connection whose SQL has ``WITH``, ``CASE`` and ``CAST``).

>>> sql("postgresql://me@/census?host=/tmp", "persons")
sql('postgresql://me@/census?host=/tmp', 'persons')
>>> sql("postgresql://me@/census", "SELECT * FROM persons WHERE year = 2020").relation
'(SELECT * FROM persons WHERE year = 2020)'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pandas as pd

from cocoviz.errors import InputError, ParameterError

__all__ = ["SqlSource", "sql"]

_URL = re.compile(r"^postgres(ql)?(\+psycopg)?://", re.IGNORECASE)
# A table name: schema-qualified identifiers, each bare or double-quoted.
_NAME = re.compile(r'^\s*("[^"]+"|[A-Za-z_][A-Za-z0-9_$]*)(\s*\.\s*("[^"]+"|[A-Za-z_][A-Za-z0-9_$]*))*\s*$')


@dataclass(frozen=True)
class SqlSource:
    """A table or query of a database (see :func:`sql`)."""

    connection: Any
    table_or_query: str

    def __repr__(self) -> str:
        where = self.connection if isinstance(self.connection, str) else type(self.connection).__name__
        return f"sql({where!r}, {self.table_or_query!r})"

    @property
    def relation(self) -> str:
        """The ``FROM`` item, to be given an alias: the table's name, or the query as a subquery."""
        if _NAME.match(self.table_or_query):
            return self.table_or_query.strip()
        return f"({self.table_or_query.strip().rstrip(';')})"

    def describe(self) -> str:
        """The source as messages name it (no password)."""
        where = self.connection if isinstance(self.connection, str) else type(self.connection).__name__
        hidden = re.sub(r"://([^:@/]*):[^@]*@", r"://\1:***@", str(where))
        return f"{hidden} {self.table_or_query}"


def sql(url_or_connection: Any, table_or_query: str) -> SqlSource:
    """Name a table (or a ``SELECT``) of a database as a source for the hierarchy builders.

    Parameters
    ----------
    url_or_connection : str or connection
        A PostgreSQL URL, opened with psycopg 3 when the builder runs and closed
        after; or an open DB-API connection (psycopg, DuckDB), left open.
    table_or_query : str
        A table name (``persons``, ``census.persons``) or a ``SELECT`` query.
    """
    if not isinstance(table_or_query, str) or not table_or_query.strip():
        raise ParameterError(f"sql() needs a table name or a query, got {table_or_query!r}")
    if isinstance(url_or_connection, str):
        if not _URL.match(url_or_connection):
            raise ParameterError(
                f"sql() takes a postgresql:// URL or an open connection, got {url_or_connection.split('://')[0]!r}"
            )
    elif not hasattr(url_or_connection, "cursor") and not hasattr(url_or_connection, "execute"):
        raise ParameterError(f"sql() takes a URL or a DB-API connection, got {type(url_or_connection).__name__}")
    return SqlSource(url_or_connection, table_or_query)


class Database:
    """A connection to run the aggregation in: opened from a URL (and closed) or borrowed."""

    def __init__(self, source: SqlSource):
        self.source = source
        self._owned = isinstance(source.connection, str)
        if self._owned:
            try:
                import psycopg
            except ImportError:  # pragma: no cover - declared dependency
                raise ParameterError("reading PostgreSQL needs psycopg: pip install 'psycopg[binary]'") from None
            url = _URL.sub("postgresql://", source.connection)
            try:
                self.connection = psycopg.connect(url, autocommit=True)
            except psycopg.Error as exc:
                raise InputError(f"cannot connect to {source.describe()}: {str(exc).strip()}") from None
        else:
            self.connection = source.connection

    def close(self) -> None:
        if self._owned:
            self.connection.close()

    def query(self, text: str) -> pd.DataFrame:
        """Rows of ``text`` as a frame; a database error becomes an :class:`InputError`."""
        with self._errors():
            if _is_duckdb(self.connection):  # its registered frames are seen by this connection only, not cursors
                return self.connection.execute(text).df()
            cursor = self.connection.cursor()
            cursor.execute(text)
            names = [d[0] for d in cursor.description]
            return pd.DataFrame.from_records(cursor.fetchall(), columns=names)

    def types(self, relation: str) -> dict[str, str]:
        """Column name -> SQL type name (upper case) of ``relation``."""
        with self._errors():
            cursor = self.connection if _is_duckdb(self.connection) else self.connection.cursor()
            cursor.execute(f"SELECT * FROM {relation} AS t LIMIT 0")
            description = cursor.description
            cursor.fetchall()
        return {d[0]: _type_name(self.connection, d) for d in description}

    def load_frame(self, name: str, frame: pd.DataFrame) -> str:
        """``frame`` as a temporary table ``name`` of this connection (dropped when it closes); its name."""
        if _is_duckdb(self.connection):
            self.connection.register(name, frame)
            return name
        if not hasattr(self.connection, "adapters"):
            raise ParameterError(
                "a table in this database can only meet a table of the same database; give both as sql(...)"
            )
        columns = ", ".join(f'"{c}" {_pg_type(frame[c])}' for c in frame.columns)
        with self._errors():
            cursor = self.connection.cursor()
            cursor.execute(f'CREATE TEMP TABLE "{name}" ({columns})')
            with cursor.copy(f'COPY "{name}" FROM STDIN (FORMAT csv)') as copy:
                for start in range(0, len(frame), 1_000_000):
                    copy.write(frame.iloc[start : start + 1_000_000].to_csv(index=False, header=False))
        return f'"{name}"'

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except Exception as exc:  # the driver's own error family varies: name the source and the reason
            if type(exc).__module__.split(".")[0] not in _DRIVERS:
                raise
            _rollback(self.connection)
            raise InputError(f"{self.source.describe()}: {str(exc).strip().splitlines()[0]}") from None


_DRIVERS = {"psycopg", "duckdb", "_duckdb", "sqlite3"}


def _is_duckdb(connection: Any) -> bool:
    return type(connection).__module__.split(".")[0] in {"duckdb", "_duckdb"}


def _pg_type(column: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(column.dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(column.dtype):
        return "bigint"
    if pd.api.types.is_float_dtype(column.dtype):
        return "double precision"
    return "text"


def _rollback(connection: Any) -> None:
    try:
        connection.rollback()
    except Exception:  # noqa: BLE001 - nothing to undo (autocommit, DuckDB): the first error is the one to show
        pass


def _type_name(connection: Any, column: Any) -> str:
    code = column[1]
    if isinstance(code, int):  # psycopg: a PostgreSQL type OID
        info = connection.adapters.types.get(code) if hasattr(connection, "adapters") else None
        return (info.name if info is not None else str(code)).upper()
    return str(code).upper()
