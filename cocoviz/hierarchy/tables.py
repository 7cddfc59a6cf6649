"""Table validation and the three builders' shared work: from a table to leaf runs.

Each builder checks its table whole (named column, first offending rows and the
problem) and returns what :class:`~cocoviz.hierarchy.Hierarchy` is built from:
the level names, the path of every leaf and the leaf runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.errors import InputError
from cocoviz.runs import LevelRuns, aggregate_runs

__all__ = ["MAX_DEPTH", "counts_table", "groups_table", "persons_table"]

Path = tuple[str, ...]
Leaves = tuple[list[str], list[Path], LevelRuns]

#: Levels below the root that a hierarchy may have.
MAX_DEPTH = 4

SHOWN_ROWS = 5

#: How messages name the optional public groups table of the persons form.
GROUPS_TABLE = "groups table"


def _rows(mask: np.ndarray, index: pd.Index) -> str:
    """The first offending row labels, for error messages."""
    labels = [str(x) for x in index[np.asarray(mask)][:SHOWN_ROWS]]
    more = int(np.count_nonzero(mask)) - len(labels)
    return ", ".join(labels) + (f" (and {more} more)" if more > 0 else "")


def _require_columns(df: pd.DataFrame, columns: Sequence[str], where: str | None = None) -> None:
    """``where`` names a second table in messages (None: the main table)."""
    lead = f"{where}: " if where else ""
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"{lead}expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InputError(f"{lead}missing column(s) {missing}; the table has {list(df.columns)}")
    if len(columns) != len(set(columns)):
        raise InputError(f"a column is given two roles: {list(columns)}")
    if len(df) == 0:
        raise InputError(f"{lead or 'the '}table is empty: it has no rows")


def _check_levels(df: pd.DataFrame, levels: Sequence[str], where: str | None = None) -> list[str]:
    levels = list(levels)
    if len(levels) > MAX_DEPTH:
        raise InputError(f"at most {MAX_DEPTH} levels below the root are supported, got {len(levels)}: {levels}")
    lead = f"{where}, " if where else ""
    for col in levels:
        missing = df[col].isna().to_numpy()
        if missing.any():
            raise InputError(f"{lead}column '{col}': missing region label in rows {_rows(missing, df.index)}")
        blank = df[col].astype(str).str.strip().eq("").to_numpy()
        if blank.any():
            raise InputError(f"{lead}column '{col}': empty region label in rows {_rows(blank, df.index)}")
    return levels


def _nonnegative_integers(df: pd.DataFrame, col: str, what: str) -> np.ndarray:
    """Column ``col`` as int64, refusing missing, non-numeric, fractional or negative entries."""
    raw = df[col]
    values = pd.to_numeric(raw, errors="coerce")
    bad = values.isna().to_numpy() & raw.notna().to_numpy()
    if bad.any():
        raise ValueError(f"column '{col}': {what} must be a number; not a number in rows {_rows(bad, df.index)}")
    missing = values.isna().to_numpy()
    if missing.any():
        raise ValueError(f"column '{col}': missing {what} in rows {_rows(missing, df.index)}")
    as_float = values.to_numpy(dtype=np.float64)
    infinite = ~np.isfinite(as_float)
    if infinite.any():
        raise ValueError(f"column '{col}': infinite {what} in rows {_rows(infinite, df.index)}")
    negative = as_float < 0
    if negative.any():
        raise ValueError(f"column '{col}': negative {what} in rows {_rows(negative, df.index)}")
    fractional = as_float != np.floor(as_float)
    if fractional.any():
        raise ValueError(f"column '{col}': fractional {what} in rows {_rows(fractional, df.index)}")
    if (as_float > 2**62).any():
        raise ValueError(f"column '{col}': {what} too large in rows {_rows(as_float > 2**62, df.index)}")
    return values.to_numpy().astype(np.int64)


def counts_table(df: pd.DataFrame, *, size: str, count: str, levels: Sequence[str]) -> Leaves:
    """Leaves of a per-leaf counts table (see :meth:`Hierarchy.from_counts`)."""
    _require_columns(df, [*levels, size, count])
    levels = _check_levels(df, levels)
    sizes = _nonnegative_integers(df, size, "group size")
    counts = _nonnegative_integers(df, count, "number of groups")
    return _leaves(df, levels, sizes, counts)


def groups_table(df: pd.DataFrame, *, size: str, levels: Sequence[str]) -> Leaves:
    """Leaves of a groups table (see :meth:`Hierarchy.from_groups`)."""
    _require_columns(df, [*levels, size])
    levels = _check_levels(df, levels)
    sizes = _nonnegative_integers(df, size, "group size")
    return _leaves(df, levels, sizes, np.ones(len(sizes), np.int64))


def persons_table(df: pd.DataFrame, *, group: str, levels: Sequence[str],
                  groups: pd.DataFrame | None = None) -> Leaves:
    """Leaves of a persons table (see :meth:`Hierarchy.from_persons`).

    With ``groups`` (the public Groups table: group id and level columns) the
    leaves and every G come from ``groups``; without it from the persons rows.
    """
    _require_columns(df, [*levels, group])
    levels = _check_levels(df, levels)
    missing = df[group].isna().to_numpy()
    if missing.any():
        raise InputError(f"column '{group}': missing group id in rows {_rows(missing, df.index)}")
    keys = df[[group, *levels]].astype(str) if levels else df[[group]].astype(str)
    if groups is not None:
        return _persons_in_public_groups(df, keys, group, levels, groups)
    if levels:
        places = keys.groupby(group, sort=False)[levels].nunique()
        split = places.index[(places > 1).any(axis=1).to_numpy()]
        if len(split):
            bad = keys[group].isin(split[:1]).to_numpy()
            shown = ", ".join(str(g) for g in split[:SHOWN_ROWS])
            raise InputError(f"column '{group}': group(s) {shown} appear in more than one region "
                             f"(group {split[0]} in rows {_rows(bad, df.index)}); a group must lie in one leaf")
    sizes = keys.groupby([group, *levels], sort=False).size().reset_index(name="__size")
    return _leaves(sizes, levels, sizes["__size"].to_numpy(np.int64), np.ones(len(sizes), np.int64))


def _persons_in_public_groups(df: pd.DataFrame, keys: pd.DataFrame, group: str, levels: list[str],
                              groups: pd.DataFrame) -> Leaves:
    """Sizes of the public groups, counted from the persons rows; a group with no person has size 0."""
    where = GROUPS_TABLE
    _require_columns(groups, [*levels, group], where)
    _check_levels(groups, levels, where)
    missing = groups[group].isna().to_numpy()
    if missing.any():
        raise InputError(f"{where}, column '{group}': missing group id in rows {_rows(missing, groups.index)}")
    public = groups[[group, *levels]].astype(str) if levels else groups[[group]].astype(str)
    repeated = public[group].duplicated(keep=False).to_numpy()
    if repeated.any():
        first = public[group].to_numpy()[repeated][0]
        shown = ", ".join(pd.unique(public[group].to_numpy()[repeated])[:SHOWN_ROWS])
        raise InputError(f"{where}, column '{group}': group id(s) {shown} listed more than once "
                         f"(group {first} in rows {_rows(public[group].eq(first).to_numpy(), groups.index)}); "
                         f"each group must be listed once, with its region")
    position = pd.Index(public[group]).get_indexer(keys[group])
    unknown = position < 0
    if unknown.any():
        shown = ", ".join(pd.unique(keys[group].to_numpy()[unknown])[:SHOWN_ROWS])
        raise InputError(f"column '{group}': group(s) {shown} in rows {_rows(unknown, df.index)} are not in the "
                         f"{where}; every person's group must be listed there")
    if levels:
        moved = np.zeros(len(keys), bool)
        for col in levels:
            moved |= keys[col].to_numpy() != public[col].to_numpy()[position]
        if moved.any():
            first = int(np.flatnonzero(moved)[0])
            gid = keys[group].iloc[first]
            rows = moved & keys[group].eq(gid).to_numpy()
            here = "/".join(keys[levels].iloc[first])
            there = "/".join(public[levels].iloc[position[first]])
            raise InputError(f"column '{group}': group {gid} lies in region {there} in the {where} but persons "
                             f"in rows {_rows(rows, df.index)} place it in {here}; a group must lie in one leaf")
    sizes = np.bincount(position, minlength=len(public)).astype(np.int64)
    return _leaves(public, levels, sizes, np.ones(len(public), np.int64))


def _leaves(df: pd.DataFrame, levels: list[str], sizes: np.ndarray, counts: np.ndarray) -> Leaves:
    if levels:
        labels = df[levels].astype(str)
        codes, uniques = pd.MultiIndex.from_frame(labels).factorize()
        leaf_paths = [tuple(p) for p in uniques]
    else:
        codes = np.zeros(len(df), np.int64)
        leaf_paths = [()]
    codes = np.asarray(codes, np.int64)
    return levels, leaf_paths, aggregate_runs(codes, sizes, counts, len(leaf_paths))
