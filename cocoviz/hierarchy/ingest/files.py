"""Reading an upload's bytes: CSV or Parquet into a DataFrame, refused whole when it cannot be read.

Size limits (:data:`MAX_UPLOAD_BYTES`, :data:`MAX_UPLOAD_ROWS`), the encoding and the
file's kind are checked here; what the table means is :mod:`cocoviz.hierarchy.ingest.uploads`' concern.
"""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from pathlib import Path
from typing import IO

import pandas as pd

from cocoviz.errors import InputError, ParameterError

__all__ = [
    "Source",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_ROWS",
    "MAX_UPLOAD_COLUMNS",
    "ROWS_NOTE",
    "read_table",
    "first_line",
]

Source = bytes | bytearray | memoryview | str | os.PathLike | IO[bytes]

#: Largest file accepted (bytes).  Per-leaf counts make far larger data fit under it.
MAX_UPLOAD_BYTES = 200 * 2**20
#: Largest number of rows accepted.
MAX_UPLOAD_ROWS = 5_000_000
#: Largest number of columns accepted: a table needs its level columns and two or three more; a wider
#: header is not a hierarchy, and refusing it before pandas parses it keeps a small file from costing much.
MAX_UPLOAD_COLUMNS = 1_000

ROWS_NOTE = "rows are counted from 1 at the first row below the header"
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
        value, name = source.getvalue(), getattr(source, "name", None)
        if isinstance(value, str):
            raise ParameterError("an upload is bytes: got text (io.StringIO); give io.BytesIO, the bytes or a path")
        data = bytes(value)
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
    _check_width(len(header), name)
    # pandas would rename these silently ("size.1", "Unnamed: 2"): refuse them instead.
    duplicated = _duplicates(c for c in header if c)
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
        raise InputError(f"{name} is not a well-formed CSV file: {first_line(exc)}") from None
    return frame


def _duplicates(names) -> list[str]:
    """The names that occur more than once, sorted, in one pass (4,000 columns: 4,000 steps, not 16 million)."""
    return sorted(c for c, n in Counter(names).items() if n > 1)


def _check_width(columns: int, name: str) -> None:
    if columns > MAX_UPLOAD_COLUMNS:
        raise InputError(
            f"{name} has {columns:,} columns; uploads are limited to {MAX_UPLOAD_COLUMNS:,} (a table needs its "
            f"level columns and the size, count or group column): keep only those columns"
        )


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _read_parquet(data: bytes, name: str, max_rows: int) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    failures = (pa.ArrowException, OSError, ValueError, TypeError, KeyError)
    try:
        handle = pq.ParquetFile(io.BytesIO(data))
        rows = handle.metadata.num_rows
        columns = handle.metadata.num_columns
    except failures as exc:
        raise InputError(f"{name} is not a readable Parquet file: {first_line(exc)}") from None
    _check_width(columns, name)
    # Checked from the footer, before the columns are decoded.
    if rows > max_rows:
        _too_many_rows(name, rows, max_rows)
    try:
        return handle.read().to_pandas()
    except failures as exc:
        raise InputError(f"{name} is not a readable Parquet file: {first_line(exc)}") from None


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
    duplicated = _duplicates(frame.columns)
    if duplicated:
        raise InputError(f"{name}: column name(s) {duplicated} appear more than once")
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return frame
