"""An upload's table as a :class:`~cocoviz.hierarchy.Hierarchy`: the three forms, their columns, every problem.

See :mod:`cocoviz.hierarchy.ingest` for the forms and what is refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pandas as pd

from cocoviz.errors import CocovizError, InputError, ParameterError
from cocoviz.hierarchy import Hierarchy
from cocoviz.hierarchy.ingest.files import MAX_UPLOAD_BYTES, MAX_UPLOAD_ROWS, ROWS_NOTE, Source, first_line, read_table
from cocoviz.hierarchy.tables import GROUPS_TABLE, TableProblems

__all__ = ["FORMS", "MAX_UPLOAD_LEAVES", "load_upload", "table_to_hierarchy"]

#: Roles of each form besides the level columns, with their default column names.
FORMS: dict[str, dict[str, str]] = {
    "persons": {"group": "group"},
    "groups": {"size": "size"},
    "counts": {"size": "size", "count": "count"},
}

#: Largest number of leaves accepted: every leaf is estimated on its own.
MAX_UPLOAD_LEAVES = 20_000
#: Rows named in a message, at most.
_SHOWN = 5


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
    for role in ("size", "count"):
        if role in needed:
            _refuse_rounded(frame, needed[role], role, name)
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
            message += f" ({ROWS_NOTE})"
        if groups is not None and message.startswith(GROUPS_TABLE):
            # A problem of the groups table alone: name its file.
            raise InputError(f"{groups_name}: {message[len(GROUPS_TABLE) :].lstrip(':, ')}") from None
        if groups is not None:
            message = message.replace(f"the {GROUPS_TABLE}", groups_name)
        raise (type(exc) if isinstance(exc, CocovizError) else InputError)(f"{name}: {message}") from None
    except (TypeError, KeyError, OverflowError, MemoryError) as exc:
        # Odd column types (nested lists in Parquet, mixed objects) must not surface as tracebacks.
        raise InputError(f"{name}: cannot use this table ({type(exc).__name__}: {first_line(exc)})") from None


def _refuse_rounded(frame: pd.DataFrame, column: str, role: str, name: str) -> None:
    """Refuse text numbers that are not whole but that a float would round to one ("2.0000000000000001").

    The builders convert text through float64, which keeps 15-17 digits: the text itself is checked here,
    exactly (only cells with a decimal point or an exponent, so a large file costs one vectorised scan).
    """
    values = frame[column]
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return  # Parquet's typed columns: nothing was rounded from text
    text = values[values.map(lambda v: isinstance(v, str))].astype(str)
    maybe = text[text.str.contains(r"[.eE]", regex=True)]
    rows = []
    for row, cell in maybe.items():
        try:
            exact = Decimal(cell.strip())
        except InvalidOperation:
            continue  # not a number: the builders name it
        if exact.is_finite() and exact != exact.to_integral_value() and float(exact).is_integer():
            rows.append((row, cell))
    if rows:
        what = {"size": "group size", "count": "number of groups"}[role]
        shown = ", ".join(str(r) for r, _ in rows[:_SHOWN])
        cells = ", ".join(repr(c) for _, c in rows[:_SHOWN])
        raise InputError(
            f"{name}: column '{column}': fractional {what} in rows {shown} ({cells}: not a whole number, "
            f"though a float would round it to one) ({ROWS_NOTE})"
        )


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
    note = f" ({ROWS_NOTE})" if any(" in rows " in p or "(group " in p for p in named) else ""
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
