"""Table validation and the three builders' shared work: from a table to leaf runs.

Each builder checks its table whole and returns what
:class:`~cocoviz.hierarchy.Hierarchy` is built from: the level names, the path
of every leaf and the leaf runs.  A bad table is refused with every problem
found, each with its column and first offending rows, in one
:class:`TableProblems` (an :class:`~cocoviz.errors.InputError`):

>>> bad = pd.DataFrame({"r": ["a", "b", None], "size": ["1", "-2", "abc"]}, index=[1, 2, 3])
>>> groups_table(bad, size="size", levels=["r"])
Traceback (most recent call last):
...
cocoviz.hierarchy.tables.TableProblems: 3 problems:
- column 'r': missing region label in rows 3
- column 'size': group size must be a number; not a number in rows 3 ('abc')
- column 'size': negative group size in rows 2

Problems that only a readable table can have (a group in two regions, totals
above the limits) are looked for once every column is readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import numpy as np
import pandas as pd

from cocoviz.core.nodes import LabelColumns
from cocoviz.core.runs import LevelRuns, aggregate_runs
from cocoviz.errors import InputError, ParameterError

__all__ = [
    "refuse",
    "power_text",
    "check_roles",
    "leaves_of",
    "MAX_GROUPS",
    "MAX_GROUP_SIZE",
    "MAX_PERSONS",
    "MAX_PROBLEMS",
    "TableProblems",
    "counts_table",
    "groups_table",
    "persons_table",
    "problems_message",
]

Path = tuple[str, ...]
Leaves = tuple[list[str], LabelColumns, LevelRuns]

#: Most groups in one region.  The root is a region, so this bounds the whole
#: table.  Group counts meet in products inside the compiled matching and
#: estimators; 2**40 (about 1.1 trillion, thousands of times the paper's
#: largest data) leaves every such quantity far inside int64.
MAX_GROUPS = 2**40
#: Largest group size (persons in one group), for the same reason.
MAX_GROUP_SIZE = 2**40
#: Most persons (the sum of size x count) in the whole table: persons are
#: counted in int64, so the total must stay below 2**63.
MAX_PERSONS = 2**62

SHOWN_ROWS = 5
#: Most problems one refusal lists; the others are counted.
MAX_PROBLEMS = 10

#: How messages name the optional public groups table of the persons form.
GROUPS_TABLE = "groups table"

_SHOWN_VALUES = 3
# Scalar types a number column or a label column may hold (bool is an int subclass: refused apart).
_NUMBER_TYPES = (str, int, float, np.integer, np.floating, Decimal)
_LABEL_TYPES = (str, int, float, np.integer, np.floating)
_BOOL_TYPES = (bool, np.bool_)
# pandas.api.types.infer_dtype results that need no element-by-element look.
_PLAIN_NUMBERS = {"string", "integer", "floating", "mixed-integer-float", "decimal", "empty"}
_PLAIN_LABELS = {"string", "integer", "floating", "mixed-integer-float", "empty"}

Problems = list[str]


class TableProblems(InputError):
    """Every problem found in one table, refused at once.

    ``problems`` holds one message per problem (column, problem, first rows);
    the exception's text is :func:`problems_message` of them.
    """

    def __init__(self, problems: Sequence[str], lead: str = "", note: str = "") -> None:
        self.problems = tuple(problems)
        super().__init__(problems_message(self.problems, lead, note))


def problems_message(problems: Sequence[str], lead: str = "", note: str = "") -> str:
    """One problem as itself; several as a count and a list (the first :data:`MAX_PROBLEMS`).

    ``lead`` opens the message (e.g. the file name); ``note`` follows the problem, or the count.

    >>> print(problems_message(["column 'size': negative group size in rows 2"], "f.csv: "))
    f.csv: column 'size': negative group size in rows 2
    >>> print(problems_message(["a in rows 1", "b in rows 2"], "f.csv: ", " (rows from 1)"))
    f.csv: 2 problems (rows from 1):
    - a in rows 1
    - b in rows 2
    """
    if len(problems) == 1:
        return f"{lead}{problems[0]}{note}"
    shown = list(problems[:MAX_PROBLEMS])
    more = len(problems) - len(shown)
    return (
        f"{lead}{len(problems)} problems{note}:"
        + "".join(f"\n- {p}" for p in shown)
        + (f"\n- and {more} more" if more else "")
    )


def refuse(problems: Problems) -> None:
    """Raise :class:`TableProblems` naming every problem found (nothing if there is none)."""
    if problems:
        raise TableProblems(problems)


def _rows(mask: np.ndarray, index: pd.Index) -> str:
    """The first offending row labels, for error messages."""
    labels = [str(x) for x in index[np.asarray(mask)][:SHOWN_ROWS]]
    more = int(np.count_nonzero(mask)) - len(labels)
    return ", ".join(labels) + (f" (and {more} more)" if more > 0 else "")


def _values(raw: pd.Series, mask: np.ndarray) -> str:
    """The first distinct offending values, for error messages."""
    shown = list(dict.fromkeys(str(v) for v in raw.to_numpy(dtype=object)[np.asarray(mask)]))[:_SHOWN_VALUES]
    return ", ".join(repr(v) for v in shown)


def power_text(limit: int) -> str:
    """A limit that is a power of two as text, e.g. ``2**20 = 1,048,576``, for refusals."""
    return f"2**{limit.bit_length() - 1} = {limit:,}"


def check_roles(levels: Sequence[str], **roles: object) -> None:
    """Refuse column arguments that cannot name a column (a bad argument, not a bad table)."""
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence):
        raise ParameterError(f"levels must be a list of column names, got {levels!r}")
    for role, col in [*((f"levels[{k}]", c) for k, c in enumerate(levels)), *roles.items()]:
        if isinstance(col, _BOOL_TYPES) or not isinstance(col, (str, int, np.integer)):
            raise ParameterError(f"{role} must be a column name, got {col!r}")


def _require_columns(df: pd.DataFrame, columns: Sequence[str], where: str | None = None) -> None:
    """Refuse a table without the columns to check (``where`` names a second table; None: the main one)."""
    lead = f"{where}: " if where else ""
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"{lead}expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"{lead}missing column(s) {missing}; the table has {list(df.columns)}")
    if len(columns) != len(set(columns)):
        raise InputError(f"a column is given two roles: {list(columns)}")
    repeated = [c for c in columns if int((df.columns == c).sum()) > 1]
    if repeated:
        raise InputError(f"{lead}column(s) {repeated} appear more than once in the table")
    if len(df) == 0:
        raise InputError(f"{lead or 'the '}table is empty: it has no rows")


def _odd_elements(raw: pd.Series, allowed: tuple[type, ...], plain: set[str]) -> np.ndarray:
    """Mask of the entries that are neither missing nor of an ``allowed`` (non-boolean) type."""
    kind = pd.api.types.infer_dtype(raw, skipna=True)
    if kind in plain:
        return np.zeros(len(raw), bool)
    values = raw.to_numpy(dtype=object)
    missing = pd.isna(raw).to_numpy()
    return np.fromiter(
        ((not m) and (isinstance(v, _BOOL_TYPES) or not isinstance(v, allowed)) for v, m in zip(values, missing)),
        bool,
        len(values),
    )


def _scalars(
    df: pd.DataFrame, col: str, allowed: tuple[type, ...], plain: set[str], must: str, problems: Problems
) -> tuple[pd.Series, np.ndarray] | None:
    """Column ``col`` (categories unwrapped) and the mask of its entries that are not text or numbers
    (booleans, complex numbers, lists, dates, ...), each reported; None for a column of such a type
    as a whole.  ``must`` opens the message."""
    raw = df[col]
    if isinstance(raw.dtype, pd.CategoricalDtype):
        raw = raw.astype(object)
    if raw.dtype == object or pd.api.types.is_string_dtype(raw.dtype):
        odd = _odd_elements(raw, allowed, plain)
        if odd.any():
            names = ", ".join(sorted({type(v).__name__ for v in raw.to_numpy(dtype=object)[odd]}))
            problems.append(f"{must}, not {names}, in rows {_rows(odd, df.index)}")
        return raw, odd
    if pd.api.types.is_bool_dtype(raw.dtype) or not (
        pd.api.types.is_integer_dtype(raw.dtype) or pd.api.types.is_float_dtype(raw.dtype)
    ):
        kind = "true/false" if pd.api.types.is_bool_dtype(raw.dtype) else str(raw.dtype)
        problems.append(
            f"{must}, not {kind}: the whole column is {raw.dtype} (rows {_rows(np.ones(len(raw), bool), df.index)})"
        )
        return None
    return raw, np.zeros(len(raw), bool)


def _labels(df: pd.DataFrame, col: str, what: str, lead: str, problems: Problems) -> pd.Series | None:
    """Column ``col`` as text labels, or None after reporting its missing entries, values that are not
    text or numbers, and distinct values that would print alike (``1`` and ``"1"``)."""
    found = len(problems)
    raw = df[col]
    if isinstance(raw.dtype, pd.CategoricalDtype) and pd.api.types.infer_dtype(raw.cat.categories) == "string":
        # Text categories: nothing to check but missing rows, and the column as text costs a row's code.
        missing = raw.cat.codes.to_numpy() < 0
        if missing.any():
            problems.append(f"{lead}column '{col}': missing {what} in rows {_rows(missing, df.index)}")
            return None
        return raw
    must = f"{lead}column '{col}': a {what} must be text or a number"
    scalars = _scalars(df, col, _LABEL_TYPES, _PLAIN_LABELS, must, problems)
    if scalars is None:
        return None
    raw, odd = scalars
    missing = raw.isna().to_numpy() & ~odd
    if missing.any():
        problems.append(f"{lead}column '{col}': missing {what} in rows {_rows(missing, df.index)}")
    if not (raw.dtype == object or pd.api.types.is_string_dtype(raw.dtype)):
        return raw if len(problems) == found else None  # numbers: no per-row text
    text = raw.astype(str)
    if raw.dtype == object and pd.api.types.infer_dtype(raw, skipna=True) != "string":
        usable = ~(odd | missing)
        distinct = pd.Series(pd.unique(raw.to_numpy(dtype=object)[usable]))
        printed = distinct.astype(str)
        alike = printed.duplicated(keep=False).to_numpy()
        if alike.any():
            first = printed[alike].iloc[0]
            values = distinct[alike & printed.eq(first).to_numpy()].tolist()[:_SHOWN_VALUES]
            rows = _rows(text.eq(first).to_numpy() & usable, df.index)
            problems.append(
                f"{lead}column '{col}': values {', '.join(repr(v) for v in values)} are different "
                f"but print as the same {what} {first!r} (rows {rows}); store the column as text"
            )
    return text if len(problems) == found else None


def _check_levels(df: pd.DataFrame, levels: Sequence[str], problems: Problems, where: str | None = None) -> list[str]:
    """The level columns, each checked as region labels (problems reported in ``problems``)."""
    levels = list(levels)
    lead = f"{where}, " if where else ""
    for col in levels:
        text = _labels(df, col, "region label", lead, problems)
        if text is None:
            continue
        if isinstance(text.dtype, pd.CategoricalDtype):  # blank categories, then their rows
            blank_category = np.asarray(text.cat.categories.str.strip() == "")
            blank = blank_category[text.cat.codes.to_numpy()] if blank_category.any() else np.zeros(len(text), bool)
        elif text.dtype == object or pd.api.types.is_string_dtype(text.dtype):
            blank = text.str.strip().eq("").to_numpy()
        else:
            continue
        if blank.any():
            problems.append(f"{lead}column '{col}': empty region label in rows {_rows(blank, df.index)}")
    return levels


def _nonnegative_integers(df: pd.DataFrame, col: str, what: str, limit: int, problems: Problems) -> np.ndarray | None:
    """Column ``col`` as int64, or None after reporting its missing, non-numeric (booleans, complex
    numbers, lists, ...), infinite, negative, fractional entries and entries above ``limit``, each
    kind with its rows; nothing is coerced."""
    found = len(problems)
    scalars = _scalars(
        df, col, _NUMBER_TYPES, _PLAIN_NUMBERS, f"column '{col}': {what} must be a whole number", problems
    )
    if scalars is None:
        return None
    raw, odd = scalars
    # Entries already reported as odd are left out of the checks below.
    usable = raw.where(~odd) if odd.any() else raw
    try:
        values = pd.to_numeric(usable, errors="coerce")
    except (TypeError, ValueError, OverflowError) as exc:
        problems.append(f"column '{col}': {what} must be a whole number ({exc})")
        return None
    missing = raw.isna().to_numpy()
    if missing.any():
        problems.append(f"column '{col}': missing {what} in rows {_rows(missing, df.index)}")
    text = values.isna().to_numpy() & usable.notna().to_numpy()
    if text.any():
        problems.append(
            f"column '{col}': {what} must be a number; not a number in rows {_rows(text, df.index)} "
            f"({_values(raw, text)})"
        )
    as_float = values.to_numpy(dtype=np.float64, na_value=np.nan)
    finite = np.isfinite(as_float)
    checks = [
        (np.isinf(as_float), f"infinite {what}"),
        (finite & (as_float < 0), f"negative {what}"),
        (finite & (as_float != np.floor(as_float)), f"fractional {what}"),
    ]
    for mask, problem in checks:
        if mask.any():
            problems.append(f"column '{col}': {problem} in rows {_rows(mask, df.index)}")
    large = finite & (as_float > limit)
    if large.any():
        problems.append(
            f"column '{col}': {what} too large in rows {_rows(large, df.index)}; "
            f"at most {power_text(limit)} is supported"
        )
    if len(problems) > found:
        return None
    # Every value is now a whole number <= 2**40, exact in float64.
    return as_float.astype(np.int64)


def _check_totals(df: pd.DataFrame, sizes: np.ndarray, counts: np.ndarray, size: str, count: str | None) -> None:
    """Refuse a table whose groups or persons, summed, pass :data:`MAX_GROUPS` or :data:`MAX_PERSONS`.

    Sums are taken in float64 first: their relative error is far below what
    separates the limits from 2**63, so the exact int64 sums that follow never
    overflow.
    """
    problems: Problems = []
    rows = _rows(counts > 0, df.index)
    if counts.sum(dtype=np.float64) > MAX_GROUPS:
        where = f"column '{count}'" if count is not None else "the table"
        problems.append(
            f"{where}: {counts.sum(dtype=np.float64):,.0f} groups in all (rows {rows}); at most "
            f"{power_text(MAX_GROUPS)} groups are supported in one region, the root included"
        )
    if np.dot(sizes.astype(np.float64), counts.astype(np.float64)) > MAX_PERSONS:
        columns = f"columns '{size}' and '{count}'" if count is not None else f"column '{size}'"
        problems.append(
            f"{columns}: more than {power_text(MAX_PERSONS)} persons in all (rows {rows}); that many are not supported"
        )
    refuse(problems)


def counts_table(df: pd.DataFrame, *, size: str, count: str, levels: Sequence[str]) -> Leaves:
    """Leaves of a per-leaf counts table (see :meth:`Hierarchy.from_counts`)."""
    check_roles(levels, size=size, count=count)
    _require_columns(df, [*levels, size, count])
    problems: Problems = []
    levels = _check_levels(df, levels, problems)
    sizes = _nonnegative_integers(df, size, "group size", MAX_GROUP_SIZE, problems)
    counts = _nonnegative_integers(df, count, "number of groups", MAX_GROUPS, problems)
    refuse(problems)
    _check_totals(df, sizes, counts, size, count)
    return leaves_of(df, levels, sizes, counts)


def groups_table(df: pd.DataFrame, *, size: str, levels: Sequence[str]) -> Leaves:
    """Leaves of a groups table (see :meth:`Hierarchy.from_groups`)."""
    check_roles(levels, size=size)
    _require_columns(df, [*levels, size])
    problems: Problems = []
    levels = _check_levels(df, levels, problems)
    sizes = _nonnegative_integers(df, size, "group size", MAX_GROUP_SIZE, problems)
    refuse(problems)
    counts = np.ones(len(sizes), np.int64)
    _check_totals(df, sizes, counts, size, None)
    return leaves_of(df, levels, sizes, counts)


def persons_table(df: pd.DataFrame, *, group: str, levels: Sequence[str], groups: pd.DataFrame | None = None) -> Leaves:
    """Leaves of a persons table (see :meth:`Hierarchy.from_persons`).

    With ``groups`` (the public Groups table: group id and level columns) the
    leaves and every G come from ``groups``; without it from the persons rows.
    """
    check_roles(levels, group=group)
    _require_columns(df, [*levels, group])
    problems: Problems = []
    levels = _check_levels(df, levels, problems)
    _labels(df, group, "group id", "", problems)
    if groups is not None:
        _require_columns(groups, [*levels, group], GROUPS_TABLE)
        _check_levels(groups, levels, problems, GROUPS_TABLE)
        _labels(groups, group, "group id", f"{GROUPS_TABLE}, ", problems)
    refuse(problems)
    # Every column as integer codes once (text only per distinct value): no per-row Python string.
    gid, gid_text = _ids(df[group])
    person = LabelColumns.from_frame(df, levels)
    if groups is not None:
        return _persons_in_public_groups(df, (gid, gid_text), person, group, levels, groups)
    leaf, leaf_paths = person.distinct()
    n_groups = len(gid_text)
    leaf_of_group = np.empty(n_groups, np.int64)
    leaf_of_group[gid] = leaf
    moved = leaf != leaf_of_group[gid]
    if moved.any():
        split = np.flatnonzero(np.bincount(gid[moved], minlength=n_groups))  # first seen first, as codes are
        bad = gid == split[0]
        shown = ", ".join(str(g) for g in gid_text[split[:SHOWN_ROWS]])
        raise TableProblems(
            [
                f"column '{group}': group(s) {shown} appear in more than one region "
                f"(group {gid_text[split[0]]} in rows {_rows(bad, df.index)}); a group must lie in one leaf"
            ]
        )
    sizes = np.bincount(gid, minlength=n_groups).astype(np.int64)
    return levels, leaf_paths, aggregate_runs(leaf_of_group, sizes, np.ones(n_groups, np.int64), leaf_paths.n)


def _ids(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Group ids as codes (first seen first) and the distinct ids: integers kept as integers (text only for
    a message), anything else as its text, as the level labels are."""
    if pd.api.types.is_integer_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        codes, uniques = pd.factorize(column.to_numpy())
        return np.asarray(codes, np.int64), np.asarray(uniques)
    ids = LabelColumns.from_frame(column.to_frame(), [column.name])
    return ids.codes[0], ids.labels[0]


def _text(ids: np.ndarray) -> np.ndarray:
    return ids if ids.dtype == object else ids.astype(str).astype(object)


def _persons_in_public_groups(
    df: pd.DataFrame,
    ids: tuple[np.ndarray, np.ndarray],
    person: LabelColumns,
    group: str,
    levels: list[str],
    groups: pd.DataFrame,
) -> Leaves:
    """Sizes of the public groups, counted from the persons rows; a group with no person has size 0."""
    where = GROUPS_TABLE
    gid, gid_text = ids
    pid, pid_text = _ids(groups[group])
    public = LabelColumns.from_frame(groups, levels)
    listed = np.bincount(pid, minlength=len(pid_text))
    if (listed > 1).any():
        twice = np.flatnonzero(listed > 1)
        first = pid_text[twice[0]]
        shown = ", ".join(str(g) for g in pid_text[twice[:SHOWN_ROWS]])
        raise TableProblems(
            [
                f"{where}, column '{group}': group id(s) {shown} listed more than once "
                f"(group {first} in rows {_rows(pid == twice[0], groups.index)}); "
                f"each group must be listed once, with its region"
            ]
        )
    row_of_group = np.empty(len(pid_text), np.int64)
    row_of_group[pid] = np.arange(len(pid))
    # Persons' group ids matched to the listed ones as text, one distinct value at a time.
    if pid_text.dtype.kind in "iu" and gid_text.dtype.kind in "iu":
        code = pd.Index(pid_text).get_indexer(gid_text)
    else:
        code = pd.Index(_text(pid_text)).get_indexer(_text(gid_text))
    position = np.where(code >= 0, row_of_group[np.maximum(code, 0)], -1)[gid]
    unknown = position < 0
    problems: Problems = []
    if unknown.any():
        shown = ", ".join(str(g) for g in pd.unique(gid_text[gid[unknown]])[:SHOWN_ROWS])
        problems.append(
            f"column '{group}': group(s) {shown} in rows {_rows(unknown, df.index)} are not in the "
            f"{where}; every person's group must be listed there"
        )
    if levels:
        moved = np.zeros(person.n, bool)
        at = np.maximum(position, 0)
        for j in range(len(levels)):
            same = pd.Index(public.labels[j]).get_indexer(person.labels[j])
            their = np.where(same >= 0, same, -1)[person.codes[j]]
            moved |= their != public.codes[j][at]
        moved &= ~unknown
        if moved.any():
            first = int(np.flatnonzero(moved)[0])
            bad = gid[first]
            rows = moved & (gid == bad)
            here = "/".join(str(person.labels[j][person.codes[j][first]]) for j in range(len(levels)))
            there = "/".join(str(public.labels[j][public.codes[j][position[first]]]) for j in range(len(levels)))
            problems.append(
                f"column '{group}': group {gid_text[bad]} lies in region {there} in the {where} but persons "
                f"in rows {_rows(rows, df.index)} place it in {here}; a group must lie in one leaf"
            )
    refuse(problems)
    sizes = np.bincount(position, minlength=len(pid)).astype(np.int64)
    leaf, leaf_paths = public.distinct()
    return levels, leaf_paths, aggregate_runs(leaf, sizes, np.ones(len(pid), np.int64), leaf_paths.n)


def leaves_of(df: pd.DataFrame, levels: list[str], sizes: np.ndarray, counts: np.ndarray) -> Leaves:
    # Leaf labels as integer codes per level: no Python object per row or per leaf.
    """The leaves of checked rows: level names, leaf paths and the runs (size, count) of each leaf."""
    leaf, leaf_paths = LabelColumns.from_frame(df, levels).distinct()
    return levels, leaf_paths, aggregate_runs(leaf, sizes, counts, leaf_paths.n)
