"""A table in a database, named for :meth:`~cocoviz.hierarchy.Hierarchy.from_persons` and its siblings.

``sql(url_or_connection, table)`` names a table; ``sql(url_or_connection, query=...)`` gives one
read-only ``SELECT``.  Nothing is read until a builder runs its aggregation *inside* the database
(:mod:`cocoviz.hierarchy.ingest.aggregate`), so only the runs (leaves x distinct sizes) come
back into Python.

Integrity contract
------------------
* A **table** is an identifier, optionally schema-qualified (``census.persons``); each part is bare
  (``[A-Za-z_][A-Za-z0-9_$]*``, folded to lower case as PostgreSQL folds it) or double-quoted, and
  the statement names it quoted, ``"census"."persons"`` (a double quote inside a name doubled, which
  is PostgreSQL's ``quote_ident`` and psycopg's ``sql.Identifier``).  Any other text is refused.
* A **query** is one statement: a second statement after a ``;`` (outside strings, quoted names and
  comments) or a parenthesis that closes the subquery it is wrapped in is refused by name, before a
  connection is opened.  A database opened from a URL runs every statement of the aggregation in a
  read-only transaction (the temporary copy of a public groups table is made before that), so
  even a statement that slipped past the check could not write.

A PostgreSQL URL (``postgresql://user@host:5432/db``, or
``postgresql://user@/db?host=/run/postgresql`` for a unix socket) is opened
with psycopg 3; an open connection may be passed instead (psycopg, DuckDB,
or any DB-API connection whose SQL has ``WITH``, ``CASE`` and ``CAST``).

>>> sql("postgresql://me@/census?host=/tmp", "persons")
sql('postgresql://me@/census?host=/tmp', 'persons')
>>> sql("postgresql://me@/census", "Census.Persons").relation
'"census"."persons"'
>>> sql("postgresql://me@/census", query="SELECT * FROM persons WHERE year = 2020").relation
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

__all__ = ["SqlSource", "sql", "table_name_parts", "check_one_statement", "is_duckdb"]

_URL = re.compile(r"^postgres(ql)?(\+psycopg)?://", re.IGNORECASE)
# One part of a table name: bare, or double-quoted with "" for a quote inside.
_PART = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_$]*)|"((?:[^"]|"")+)")\s*')


def table_name_parts(name: str) -> tuple[str, ...]:
    """The parts of a (schema-qualified) table name, bare parts folded to lower case; refused otherwise.

    Parameters
    ----------
    name : str
        ``persons``, ``census.persons``, ``"Census"."Persons 2020"``.

    Returns
    -------
    tuple of str
        The identifiers, unquoted.

    Raises
    ------
    ParameterError
        When ``name`` is not one to three dot-separated identifiers (a query, a clause, a ``;``).

    Examples
    --------
    >>> table_name_parts('Census."Persons 2020"')
    ('census', 'Persons 2020')
    """
    parts: list[str] = []
    position = 0
    while True:
        match = _PART.match(name, position)
        if match is None:
            break
        parts.append(match.group(1).lower() if match.group(1) is not None else match.group(2).replace('""', '"'))
        position = match.end()
        if position < len(name) and name[position] == ".":
            position += 1
            continue
        break
    if not parts or position != len(name) or len(parts) > 3:
        raise ParameterError(
            f"sql(): {name[:80]!r} is not a table name (an identifier such as persons or census.persons); "
            "give a SELECT as query=... (--query on the command line)"
        )
    return tuple(parts)


def quote_name(parts: tuple[str, ...]) -> str:
    """``parts`` as one SQL name, each double-quoted with inner quotes doubled (``quote_ident``)."""
    return ".".join('"' + part.replace('"', '""') + '"' for part in parts)


def check_one_statement(query: str) -> str:
    r"""``query`` without a trailing ``;`` when it is one statement that stays inside its parentheses.

    A small SQL lexer: single-quoted strings (``''`` and, in ``E'...'``, backslash escapes),
    double-quoted names, dollar-quoted strings (``$tag$...$tag$``), ``--`` and (nested) ``/* */``
    comments are skipped; outside them a ``;`` followed by anything but blanks and comments, or a
    ``)`` without its ``(``, or an unterminated string or comment is refused.

    Raises
    ------
    ParameterError
        Naming the problem and its position.

    Examples
    --------
    >>> check_one_statement("SELECT ';' AS a, $x$;)$x$ AS b -- ;\n;")
    "SELECT ';' AS a, $x$;)$x$ AS b -- ;\n"
    >>> check_one_statement("SELECT 1; DROP TABLE t")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cocoviz.errors.ParameterError: sql(query=...): more than one statement (a second one starts after ...
    """
    text = query
    n = len(text)
    i = depth = 0
    end: int | None = None  # the position of a statement-ending ';'

    def refuse(problem: str) -> ParameterError:
        return ParameterError(f"sql(query=...): {problem}")

    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == "-" and text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if c == "/" and text.startswith("/*", i):
            level, i = 1, i + 2
            while i < n and level:
                if text.startswith("/*", i):
                    level, i = level + 1, i + 2
                elif text.startswith("*/", i):
                    level, i = level - 1, i + 2
                else:
                    i += 1
            if level:
                raise refuse("a /* comment is not closed")
            continue
        if end is not None:
            raise refuse(
                f"more than one statement (a second one starts after the ';' at character {end + 1}); "
                "a query runs alone"
            )
        if c == "'":
            escapes = i > 0 and text[i - 1] in "eE" and (i < 2 or not (text[i - 2].isalnum() or text[i - 2] == "_"))
            i += 1
            while i < n:
                if escapes and text[i] == "\\":
                    i += 2
                    continue
                if text[i] == "'":
                    if text.startswith("''", i):
                        i += 2
                        continue
                    break
                i += 1
            if i >= n:
                raise refuse("a quoted string is not closed")
            i += 1
            continue
        if c == '"':
            j = i + 1
            while True:
                j = text.find('"', j)
                if j < 0:
                    raise refuse("a quoted name is not closed")
                if text.startswith('""', j):
                    j += 2
                    continue
                break
            i = j + 1
            continue
        if c == "$":
            tag = re.match(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$", text[i:])
            if tag is not None and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
                close = text.find(tag.group(0), i + len(tag.group(0)))
                if close < 0:
                    raise refuse(f"a {tag.group(0)} string is not closed")
                i = close + len(tag.group(0))
                continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise refuse(f"the ')' at character {i + 1} closes a parenthesis the query did not open")
        elif c == ";":
            end = i
        i += 1
    if depth:
        raise refuse("a '(' is not closed")
    body = text if end is None else text[:end] + text[end + 1 :]
    if not body.strip() or not re.match(r"\s*(\(\s*)*(SELECT|WITH|VALUES|TABLE)\b", _strip_comments(body), re.I):
        raise refuse("a query must be one SELECT (or WITH ... SELECT, VALUES, TABLE)")
    return text if end is None else text[:end]


def _strip_comments(text: str) -> str:
    return re.sub(r"^(\s*(--[^\n]*(\n|$)|/\*.*?\*/))*", "", text, flags=re.S)


@dataclass(frozen=True)
class SqlSource:
    """A table or one query of a database (see :func:`sql`)."""

    connection: Any
    table: tuple[str, ...] | None = None
    query: str | None = None

    def __repr__(self) -> str:
        where = self.connection if isinstance(self.connection, str) else type(self.connection).__name__
        if self.table is not None:
            return f"sql({where!r}, {'.'.join(self.table)!r})"
        return f"sql({where!r}, query={self.query!r})"

    @property
    def table_or_query(self) -> str:
        """The table's name (its parts joined by dots) or the query's text."""
        return ".".join(self.table) if self.table is not None else str(self.query)

    @property
    def relation(self) -> str:
        """The ``FROM`` item, to be given an alias: the table's quoted name, or the query as a subquery."""
        if self.table is not None:
            return quote_name(self.table)
        return f"({self.query})"

    def describe(self) -> str:
        """The source as messages name it (no password)."""
        where = self.connection if isinstance(self.connection, str) else type(self.connection).__name__
        hidden = re.sub(r"://([^:@/]*):[^@]*@", r"://\1:***@", str(where))
        return f"{hidden} {self.table_or_query}"


def sql(url_or_connection: Any, table: str | None = None, *, query: str | None = None) -> SqlSource:
    """Name a table of a database, or give one read-only ``SELECT``, as a source for the hierarchy builders.

    Parameters
    ----------
    url_or_connection : str or connection
        A PostgreSQL URL, opened with psycopg 3 when the builder runs and closed
        after; or an open DB-API connection (psycopg, DuckDB), left open.
    table : str, optional
        A table name (``persons``, ``census.persons``): an identifier, never SQL text.
    query : str, optional
        One ``SELECT`` statement (instead of ``table``), run as a subquery in a read-only transaction.

    Returns
    -------
    SqlSource

    Raises
    ------
    ParameterError
        Neither or both of ``table`` and ``query``; a table that is not a name; a query of more than
        one statement or one that leaves its parentheses; an unknown URL scheme.

    Examples
    --------
    >>> sql("postgresql://me@/db", "persons) AS t; DROP TABLE secret; --")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cocoviz.errors.ParameterError: sql(): 'persons) AS t; DROP TABLE secret; --' is not a table name ...
    """
    if (table is None) == (query is None):
        raise ParameterError("sql() needs a table name or query=... (one of them)")
    text = table if table is not None else query
    if not isinstance(text, str) or not text.strip():
        raise ParameterError(f"sql() needs a table name or a query, got {text!r}")
    if isinstance(url_or_connection, str):
        if not _URL.match(url_or_connection):
            raise ParameterError(
                f"sql() takes a postgresql:// URL or an open connection, got {url_or_connection.split('://')[0]!r}"
            )
    elif not hasattr(url_or_connection, "cursor") and not hasattr(url_or_connection, "execute"):
        raise ParameterError(f"sql() takes a URL or a DB-API connection, got {type(url_or_connection).__name__}")
    if table is not None:
        return SqlSource(url_or_connection, table=table_name_parts(table))
    return SqlSource(url_or_connection, query=check_one_statement(str(query)).strip())


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

    def read_only(self) -> None:
        """From now on every statement of a database opened from a URL runs in a read-only transaction.

        Called once the temporary tables are made; a borrowed connection is left as its owner set it
        (its queries are held to one statement by :func:`check_one_statement`).
        """
        if self._owned and hasattr(self.connection, "adapters"):
            with self._errors():
                self.connection.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")

    def query(self, text: str) -> pd.DataFrame:
        """Rows of ``text`` as a frame; a database error becomes an :class:`InputError`."""
        with self._errors():
            if is_duckdb(self.connection):  # its registered frames are seen by this connection only, not cursors
                return self.connection.execute(text).df()
            cursor = self.connection.cursor()
            cursor.execute(text)
            names = [d[0] for d in cursor.description]
            return pd.DataFrame.from_records(cursor.fetchall(), columns=names)

    def types(self, relation: str) -> dict[str, str]:
        """Column name -> SQL type name (upper case) of ``relation``."""
        with self._errors():
            cursor = self.connection if is_duckdb(self.connection) else self.connection.cursor()
            cursor.execute(f"SELECT * FROM {relation} AS t LIMIT 0")
            description = cursor.description
            cursor.fetchall()
        return {d[0]: _type_name(self.connection, d) for d in description}

    def load_frame(self, name: str, frame: pd.DataFrame) -> str:
        """``frame`` as a temporary table ``name`` of this connection (dropped when it closes); its name."""
        if is_duckdb(self.connection):
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


def is_duckdb(connection: Any) -> bool:
    """Whether ``connection`` is a DuckDB connection (asked of its type's module; DuckDB need not be imported)."""
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
