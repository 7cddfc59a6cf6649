"""Uploads: CSV or Parquet files in any of the three table forms, validated whole.

The three forms are those of :class:`~cocoviz.hierarchy.Hierarchy`:

``persons``
    one row per person: a group id column and the level columns; optionally
    with a second, public groups table (the group id and level columns, one
    row per group).  **Without that table each region's number of groups G,
    and the list of regions, are taken from the private rows and are not
    protected by the release** (a person added in a new group changes G);
    with it they come from the public table (``Hierarchy.public_groups``);
``groups``
    one row per group: a size column (0 allowed) and the level columns;
``counts``
    one row per leaf and size: a size column, a count column (number of
    groups of that size in that leaf) and the level columns.

A file is read, then handed to the hierarchy's own validation; either the
whole file becomes a :class:`Hierarchy` or an :class:`~cocoviz.errors.InputError`
(a :class:`ValueError`) says what is wrong and where: every problem of the
table at once (up to :data:`~cocoviz.hierarchy.tables.MAX_PROBLEMS`), each
with its first offending rows, counted from 1 at the first row below the
header.  Nothing is ever half loaded.

>>> csv = b"state,county,size\\nCA,Alameda,3\\nCA,Marin,1\\nOR,Lane,0\\n"
>>> load_upload(csv, form="groups", levels=["state", "county"], filename="households.csv")
Hierarchy(levels=['state', 'county'], nodes=[1, 2, 3], groups=3, distinct_sizes=3)
>>> load_upload(b"state,size\\nCA,-2\\nOR,abc\\n", form="groups", levels=["state"], filename="bad.csv")
Traceback (most recent call last):
...
cocoviz.hierarchy.tables.TableProblems: bad.csv: 2 problems (rows are counted from 1 at the first row below the header):
- column 'size': group size must be a number; not a number in rows 2 ('abc')
- column 'size': negative group size in rows 1
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import pandas as pd

from cocoviz.errors import CocovizError, InputError, ParameterError
from cocoviz.hierarchy import MAX_DEPTH, Hierarchy
from cocoviz.hierarchy.tables import GROUPS_TABLE, TableProblems

__all__ = [
    "FORMS",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_ROWS",
    "MAX_UPLOAD_LEAVES",
    "read_table",
    "load_upload",
    "table_to_hierarchy",
]

Source = bytes | bytearray | memoryview | str | os.PathLike | IO[bytes]

#: Roles of each form besides the level columns, with their default column names.
FORMS: dict[str, dict[str, str]] = {
    "persons": {"group": "group"},
    "groups": {"size": "size"},
    "counts": {"size": "size", "count": "count"},
}

#: Largest file accepted (bytes).  Per-leaf counts make far larger data fit under it.
MAX_UPLOAD_BYTES = 200 * 2**20
#: Largest number of rows accepted.
MAX_UPLOAD_ROWS = 5_000_000
#: Largest number of leaves accepted: every leaf is estimated on its own.
MAX_UPLOAD_LEAVES = 20_000

_ROWS_NOTE = "rows are counted from 1 at the first row below the header"
_SMALLER = (
    "aggregate it to the per-leaf counts form (one row per leaf and size, with the number of groups), "
    "which is far smaller"
)


def _read_bytes(source: Source, max_bytes: int) -> tuple[bytes, str | None]:
    """The raw bytes of ``source`` and, when it has one, its file name."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), None
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise InputError(f"cannot open {str(path)!r}: {exc.strerror or exc}") from None
        _check_bytes(size, max_bytes, path.name)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
        name = path.name
    elif hasattr(source, "getvalue"):  # Streamlit's UploadedFile, io.BytesIO
        data, name = bytes(source.getvalue()), getattr(source, "name", None)
    elif hasattr(source, "read"):
        data, name = source.read(max_bytes + 1), getattr(source, "name", None)
        if isinstance(data, str):
            raise ParameterError("open the file in binary mode ('rb'): got text")
    else:
        raise ParameterError(f"cannot read an upload from a {type(source).__name__}")
    _check_bytes(len(data), max_bytes, name)
    return data, None if name is None else Path(str(name)).name


def _check_bytes(size: int, max_bytes: int, name: str | None) -> None:
    if size > max_bytes:
        raise InputError(
            f"{name or 'the file'} is {size / 2**20:,.1f} MB; uploads are limited to "
            f"{max_bytes / 2**20:,.0f} MB: {_SMALLER}"
        )


def _kind(data: bytes, name: str | None) -> str:
    """'parquet' or 'csv', from the content first (the magic number), then the name."""
    if data[:4] == b"PAR1":
        return "parquet"
    if name is not None and name.lower().endswith((".parquet", ".pq", ".parq")):
        raise InputError(f"{name} is named like a Parquet file but is not one (no Parquet signature)")
    return "csv"


def _decode(data: bytes, encoding: str, name: str) -> str:
    try:
        # utf-8-sig drops the byte-order mark that spreadsheet programs write.
        return data.decode("utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding)
    except LookupError:
        raise ParameterError(f"unknown text encoding {encoding!r}") from None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{name} is not valid {encoding} text: byte 0x{data[exc.start]:02x} on line {line} "
            f"(byte offset {exc.start}) cannot be decoded; save the file as UTF-8 (or CSV UTF-8) "
            f"or give its encoding"
        ) from None


def _read_csv(data: bytes, name: str, encoding: str, max_rows: int) -> pd.DataFrame:
    text = _decode(data, encoding, name)
    if not text.strip():
        raise InputError(f"{name} is empty: it has no header and no rows")
    if "\x00" in text:
        raise InputError(f"{name} contains NUL bytes: it is not a CSV text file (is it a spreadsheet or binary file?)")
    try:
        header = [c.strip() for c in next(csv.reader(io.StringIO(text)))]
    except (csv.Error, StopIteration):
        header = []
    # pandas would rename these silently ("size.1", "Unnamed: 2"): refuse them instead.
    duplicated = sorted({c for c in header if c and header.count(c) > 1})
    if duplicated:
        raise InputError(f"{name}: column name(s) {duplicated} appear more than once in the header")
    if any(not c for c in header):
        raise InputError(
            f"{name}: the header has {sum(not c for c in header)} empty column name(s); every column "
            f"needs a name (header: {header})"
        )
    try:
        # Everything as text: region codes keep their leading zeros ("01"), and the
        # hierarchy's validation reports non-numeric sizes with their rows.
        frame = pd.read_csv(
            io.StringIO(text),
            dtype=str,
            keep_default_na=False,
            na_values=[""],
            skipinitialspace=True,
            nrows=max_rows + 1,
            engine="c",
        )
    except pd.errors.EmptyDataError:
        raise InputError(f"{name} is empty: it has no header and no rows") from None
    except (pd.errors.ParserError, ValueError, csv.Error) as exc:
        raise InputError(f"{name} is not a well-formed CSV file: {_first_line(exc)}") from None
    return frame


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _read_parquet(data: bytes, name: str, max_rows: int) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    failures = (pa.ArrowException, OSError, ValueError, TypeError, KeyError)
    try:
        handle = pq.ParquetFile(io.BytesIO(data))
        rows = handle.metadata.num_rows
    except failures as exc:
        raise InputError(f"{name} is not a readable Parquet file: {_first_line(exc)}") from None
    # Checked from the footer, before the columns are decoded.
    if rows > max_rows:
        _too_many_rows(name, rows, max_rows)
    try:
        return handle.read().to_pandas()
    except failures as exc:
        raise InputError(f"{name} is not a readable Parquet file: {_first_line(exc)}") from None


def _too_many_rows(name: str, rows: int | str, max_rows: int) -> None:
    raise InputError(
        f"{name} has {rows if isinstance(rows, str) else f'{rows:,}'} rows; uploads are limited to "
        f"{max_rows:,} rows: {_SMALLER}"
    )


def read_table(
    source: Source,
    *,
    filename: str | None = None,
    encoding: str = "utf-8",
    max_bytes: int = MAX_UPLOAD_BYTES,
    max_rows: int = MAX_UPLOAD_ROWS,
) -> pd.DataFrame:
    """Read a CSV or Parquet upload into a DataFrame, for previewing and column mapping.

    Parameters
    ----------
    source : bytes, path or binary file object
        The file's content, its path, or an object with ``getvalue()`` or
        ``read()`` (such as Streamlit's ``UploadedFile``).
    filename : str, optional
        Name shown in messages (default: the source's own name, else "the upload").
    encoding : str
        Text encoding of a CSV file (default UTF-8, with or without a byte-order mark).
    max_bytes, max_rows : int
        Size limits; a larger file is refused with a message.

    Returns
    -------
    DataFrame
        CSV columns as text (the hierarchy's validation converts and checks
        numbers); Parquet columns with their stored types.  The index runs
        from 1, so validation messages name rows as a person counts them.

    Raises
    ------
    InputError
        For an unreadable, empty, badly encoded, malformed or too large file.
    ParameterError
        For a source that is not a file (or a file opened in text mode) or an unknown encoding.
    """
    data, own_name = _read_bytes(source, max_bytes)
    name = filename or own_name or "the upload"
    if not data:
        raise InputError(f"{name} is empty (0 bytes)")
    if _kind(data, filename or own_name) == "parquet":
        frame = _read_parquet(data, name, max_rows)
    else:
        frame = _read_csv(data, name, encoding, max_rows)
    if len(frame) > max_rows:
        _too_many_rows(name, f"more than {max_rows:,}", max_rows)
    frame.columns = [str(c).strip() for c in frame.columns]
    duplicated = sorted({c for c in frame.columns if list(frame.columns).count(c) > 1})
    if duplicated:
        raise InputError(f"{name}: column name(s) {duplicated} appear more than once")
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return frame


def _levels(levels: Sequence[str] | str | None) -> list[str]:
    if levels is None:
        return []
    if isinstance(levels, str):
        levels = levels.split(",")
    return [str(c).strip() for c in levels if str(c).strip()]


def table_to_hierarchy(
    frame: pd.DataFrame,
    *,
    form: str,
    levels: Sequence[str] | str | None = (),
    size: str = "size",
    count: str = "count",
    group: str = "group",
    name: str = "the upload",
    max_leaves: int = MAX_UPLOAD_LEAVES,
    groups: pd.DataFrame | None = None,
    groups_name: str = "the groups table",
) -> Hierarchy:
    """Build a :class:`Hierarchy` from a table read by :func:`read_table`, through the engine's validation.

    Parameters
    ----------
    frame : DataFrame
    form : {"persons", "groups", "counts"}
    levels : sequence of str or str
        Level columns, top down, root excluded (a comma-separated string is
        accepted); empty for a single region.
    size, count, group : str
        Columns holding the group size (groups, counts), the number of groups
        (counts) and the group id (persons).
    name : str
        File name for messages.
    max_leaves : int
        Largest number of leaf regions accepted.
    groups : DataFrame, optional
        Persons form only: the public groups table (the ``group`` column and
        the level columns, one row per group), read by :func:`read_table`.
        With it, the regions and every G come from this public table; without
        it they are taken from the persons rows, and G is not private.
    groups_name : str
        File name of ``groups`` for messages.

    Raises
    ------
    InputError
        Naming the problem and the first offending rows.
    ParameterError
        For an unknown form, a column given two roles, or a groups table with another form than persons.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ParameterError(f"expected a table (a pandas DataFrame) read by read_table, got {type(frame).__name__}")
    if form not in FORMS:
        raise ParameterError(f"unknown form {form!r}: choose persons, groups or counts")
    levels = _levels(levels)
    roles = {"size": size, "count": count, "group": group}
    needed = {role: roles[role] for role in FORMS[form]}
    clash = set(levels) & set(needed.values())
    if clash:
        raise ParameterError(
            f"{name}: column(s) {sorted(clash)} cannot be both a level and the "
            f"{', '.join(r for r, c in needed.items() if c in clash)} column"
        )
    missing = [c for c in [*levels, *needed.values()] if c not in frame.columns]
    if missing:
        roles_of = {c: r for r, c in needed.items()}
        described = ", ".join(f"'{c}' ({roles_of.get(c, 'level')})" for c in missing)
        raise InputError(f"{name}: no column {described}; the file's columns are {list(frame.columns)}")
    if len(levels) > MAX_DEPTH:
        raise InputError(f"{name}: at most {MAX_DEPTH} levels below the root are supported, got {len(levels)}")
    if groups is not None:
        if form != "persons":
            raise ParameterError(
                f"a public groups table goes with the persons form only; the {form} form is itself the groups table"
            )
        if not isinstance(groups, pd.DataFrame):
            raise ParameterError(f"groups must be a table (a DataFrame), got {type(groups).__name__}")
        absent = [c for c in [*levels, group] if c not in groups.columns]
        if absent:
            raise InputError(
                f"{groups_name}: no column {', '.join(repr(c) for c in absent)} (the groups table needs "
                f"the group id and the level columns); its columns are {list(groups.columns)}"
            )
    regions = frame if groups is None else groups
    if levels and len(regions):
        leaves = len(regions[levels].drop_duplicates())
        if leaves > max_leaves:
            raise InputError(
                f"{groups_name if groups is not None else name} has {leaves:,} leaf regions; uploads "
                f"are limited to {max_leaves:,} (every leaf "
                f"is estimated on its own): drop the lowest level or merge small regions"
            )
    try:
        if form == "persons":
            return Hierarchy.from_persons(frame, group=group, levels=levels, groups=groups)
        if form == "groups":
            return Hierarchy.from_groups(frame, size=size, levels=levels)
        return Hierarchy.from_counts(frame, size=size, count=count, levels=levels)
    except TableProblems as exc:
        raise _named(exc.problems, name, groups_name if groups is not None else None) from None
    except ValueError as exc:
        message = str(exc)
        if " in rows " in message or "(group " in message:
            message += f" ({_ROWS_NOTE})"
        if groups is not None and message.startswith(GROUPS_TABLE):
            # A problem of the groups table alone: name its file.
            raise InputError(f"{groups_name}: {message[len(GROUPS_TABLE) :].lstrip(':, ')}") from None
        if groups is not None:
            message = message.replace(f"the {GROUPS_TABLE}", groups_name)
        raise (type(exc) if isinstance(exc, CocovizError) else InputError)(f"{name}: {message}") from None
    except (TypeError, KeyError, OverflowError, MemoryError) as exc:
        # Odd column types (nested lists in Parquet, mixed objects) must not surface as tracebacks.
        raise InputError(f"{name}: cannot use this table ({type(exc).__name__}: {_first_line(exc)})") from None


def _named(problems: Sequence[str], name: str, groups_name: str | None) -> TableProblems:
    """The table's problems with its file name (and the groups table's), and how rows are counted.

    A problem of the public groups table names that file; when it is the only problem, the
    message opens with that file's name instead of the upload's.
    """
    named = []
    for problem in problems:
        if groups_name is not None and problem.startswith(GROUPS_TABLE):
            problem = f"{groups_name}: {problem[len(GROUPS_TABLE) :].lstrip(':, ')}"
        elif groups_name is not None:
            problem = problem.replace(f"the {GROUPS_TABLE}", groups_name)
        named.append(problem)
    note = f" ({_ROWS_NOTE})" if any(" in rows " in p or "(group " in p for p in named) else ""
    alone = len(named) == 1 and groups_name is not None and named[0].startswith(f"{groups_name}: ")
    return TableProblems(named, "" if alone else f"{name}: ", note)


def load_upload(
    source: Source,
    *,
    form: str | None = None,
    levels: Sequence[str] | str | None = (),
    size: str = "size",
    count: str = "count",
    group: str = "group",
    columns: Mapping[str, object] | None = None,
    filename: str | None = None,
    encoding: str = "utf-8",
    max_bytes: int = MAX_UPLOAD_BYTES,
    max_rows: int = MAX_UPLOAD_ROWS,
    max_leaves: int = MAX_UPLOAD_LEAVES,
    kind: str | None = None,
    groups: Source | pd.DataFrame | None = None,
) -> Hierarchy:
    """Read an uploaded CSV or Parquet file and build its :class:`Hierarchy`, or refuse it whole.

    Parameters
    ----------
    source : bytes, path or binary file object
        See :func:`read_table`.
    form : {"persons", "groups", "counts"}
        The table's form (default "groups"); ``kind`` is accepted as another
        name for it.
    levels, size, count, group : see :func:`table_to_hierarchy`
        Which columns play which role.
    columns : mapping, optional
        The same roles as one mapping, e.g. ``{"size": "persons",
        "levels": ["state", "county"]}``; overrides the keywords.
    filename, encoding, max_bytes, max_rows, max_leaves
        See :func:`read_table` and :func:`table_to_hierarchy`.
    groups : bytes, path, binary file object or DataFrame, optional
        Persons form only: the public groups table (the group id and level
        columns, one row per group), read like ``source``.  Without it each
        region's G is taken from the persons rows and is not private.

    Returns
    -------
    Hierarchy

    Raises
    ------
    InputError
        With a message naming the problem (and the first offending rows) for
        a file that cannot be read, is empty, too large, badly encoded, lacks
        a mapped column, or fails validation (text in numbers, negative or
        fractional sizes, a group in two regions, missing region labels, ...).

    Examples
    --------
    >>> persons = b"name,group,region\\nAlice,1,a\\nBob,1,a\\nEve,2,b\\n"
    >>> load_upload(persons, form="persons", levels=["region"]).histogram(())
    array([0, 1, 1])
    """
    if form is not None and kind is not None and form != kind:
        raise ParameterError(f"form {form!r} and kind {kind!r} disagree: give one")
    form = form or kind or "groups"
    if columns is not None:
        unknown = set(columns) - {"levels", "size", "count", "group"}
        if unknown:
            raise ParameterError(f"unknown column role(s) {sorted(unknown)}: use levels, size, count, group")
        levels = columns.get("levels", levels)  # type: ignore[assignment]
        size = str(columns.get("size", size))
        count = str(columns.get("count", count))
        group = str(columns.get("group", group))
    if form not in FORMS:
        raise ParameterError(f"unknown form {form!r}: choose persons, groups or counts")
    frame = read_table(source, filename=filename, encoding=encoding, max_bytes=max_bytes, max_rows=max_rows)
    groups_frame, groups_name = None, "the groups table"
    if groups is not None:
        if isinstance(groups, pd.DataFrame):
            groups_frame = groups
        else:
            groups_name = _source_name(groups, None, groups_name)
            groups_frame = read_table(
                groups, filename=groups_name, encoding=encoding, max_bytes=max_bytes, max_rows=max_rows
            )
    return table_to_hierarchy(
        frame,
        form=form,
        levels=levels,
        size=size,
        count=count,
        group=group,
        name=_source_name(source, filename, "the upload"),
        max_leaves=max_leaves,
        groups=groups_frame,
        groups_name=groups_name,
    )


def _source_name(source: Source, filename: str | None, default: str) -> str:
    """The file name shown in messages: ``filename``, else the source's own name, else ``default``."""
    name = (
        filename
        or getattr(source, "name", None)
        or (Path(source).name if isinstance(source, (str, os.PathLike)) else default)
    )
    return Path(str(name)).name
