"""Integer level columns as one BIGINT per row: the leaf's path in mixed radix, read back by arithmetic.

Grouping persons by household with one least and one greatest key per
household, instead of a least and a greatest label per level, keeps the
aggregate state of 128M households narrow (``benchmarks/ingest.py``); two
rows share a key exactly when they share every label.  Each level's digit is
its label minus the least label of that level in the tables given, its radix
the span of those labels; the extremes come from one ``MIN`` / ``MAX`` query
(which DuckDB answers from a Parquet file's footer).  A row with a missing
label has a NULL key.  :func:`keyed_runs` is the aggregation of
:mod:`cocoviz.hierarchy.ingest.aggregate` on these keys, for the tables
:mod:`cocoviz.hierarchy.ingest.dense` does not count (ids that are text or
sparse, a database, or a table with a problem to name).

>>> import duckdb
>>> from cocoviz.hierarchy.ingest.database import Database, sql
>>> con = duckdb.connect()
>>> _ = con.execute("CREATE TABLE t AS SELECT * FROM (VALUES (6, 75), (6, 1), (41, 39)) AS v(state, county)")
>>> key = LeafKey.of(Database(sql(con, "t")), ["t"], ["state", "county"])
>>> key.radices
[36, 75]
>>> codes = con.execute(f"SELECT {key.sql()} FROM t AS p").fetchnumpy()
>>> [c.tolist() for c in key.labels(list(codes.values())[0])]
[[6, 6, 41], [75, 1, 39]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from cocoviz.hierarchy.ingest.database import Database, is_duckdb
from cocoviz.hierarchy.ingest.sources import sql_string

__all__ = [
    "CHECKS",
    "SMALL",
    "PASS_ROWS",
    "SPREAD_PASS_ROWS",
    "LeafKey",
    "keyed_runs",
    "quote",
    "runs_of",
    "sum_if",
]

_LIMIT = 2**62  # keys and their spans stay clear of BIGINT's overflow


def quote(name: str) -> str:
    """A column name as an SQL identifier."""
    return '"' + str(name).replace('"', '""') + '"'


def sum_if(condition: str, value: str = "1") -> str:
    """SQL: the sum of ``value`` over the rows where ``condition`` holds, as a BIGINT."""
    return f"CAST(SUM(CASE WHEN {condition} THEN {value} ELSE 0 END) AS BIGINT)"


@dataclass(frozen=True)
class LeafKey:
    """The mixed-radix key of ``levels``: digit ``j`` is ``label - lows[j]``, below ``radices[j]``."""

    levels: list[str]
    lows: list[int]
    radices: list[int]

    #: Rows of the tables given, and the least and greatest group id when it is an integer (for :func:`_parts`).
    rows: int = 0
    ids: tuple[int, int] | None = None

    @classmethod
    def of(
        cls, db: Database, relations: Sequence[str], levels: Sequence[str], ids: str | None = None
    ) -> LeafKey | None:
        """The key covering every label of ``levels`` in ``relations`` (integer columns, checked by the caller);
        None when the labels span too much for one BIGINT.  ``ids``: an integer group column to take the
        extremes of in the same query."""
        levels = list(levels)
        cols = levels if ids is None else [*levels, ids]
        lows: list[int | None] = [None] * len(cols)
        highs: list[int | None] = [None] * len(cols)
        rows = 0
        for relation in relations:
            # As text: an extreme past 2**53 must not pass through a float on its way.
            extremes = "".join(
                f", CAST(MIN({quote(c)}) AS VARCHAR) AS l{j}, CAST(MAX({quote(c)}) AS VARCHAR) AS h{j}"
                for j, c in enumerate(cols)
            )
            row = db.query(f"SELECT COUNT(*) AS n{extremes} FROM {relation} AS p").iloc[0]
            rows += int(row["n"])
            for j in range(len(cols)):
                low, high = row[f"l{j}"], row[f"h{j}"]
                if isinstance(low, str):
                    lows[j] = int(low) if lows[j] is None else min(lows[j], int(low))
                    highs[j] = int(high) if highs[j] is None else max(highs[j], int(high))
        found = None if ids is None or lows[-1] is None else (lows[-1], highs[-1])
        lows, highs = lows[: len(levels)], highs[: len(levels)]
        lows = [0 if x is None else x for x in lows]
        radices = [1 if h is None else h - low + 1 for low, h in zip(lows, highs)]
        span = 1
        for radix in radices:
            span *= radix
        if span >= _LIMIT or any(abs(x) >= _LIMIT for x in lows):
            return None
        return cls(levels, lows, radices, rows, found)

    def sql(self, alias: str = "p") -> str:
        """The key of a row of ``alias`` (NULL where a label is missing)."""
        key = "CAST(0 AS BIGINT)"
        for col, low, radix in zip(self.levels, self.lows, self.radices):
            key = f"({key} * {radix} + (CAST({alias}.{quote(col)} AS BIGINT) - ({low})))"
        return key

    def labels(self, keys: np.ndarray) -> list[np.ndarray]:
        """Each level's labels (int64) of ``keys``."""
        rest = np.asarray(keys, np.int64).copy()
        out = []
        for low, radix in zip(reversed(self.lows), reversed(self.radices)):
            out.append(rest % radix + low)
            rest //= radix
        return out[::-1]


_MISSING = -1  # the key of a row with a missing label in the first query: below every key of a leaf


def _sizes(people: Any, public: Any, group: str, key: LeafKey, exact: bool, part: str = "TRUE") -> str:
    """SQL per group id: its rows t, those of the groups table l, least and greatest key; if ``exact``, also its
    rows with every label nn, with a missing label's key NULL, else that key is ``_MISSING``.  Only the rows
    of both tables where ``part`` holds (a condition on the group id of alias ``p``: see :func:`_parts`).

    Persons and the groups table meet in one grouping of both (``UNION ALL``), not in a join: one hash table
    of the groups instead of two and a join of them (128M households spill; see benchmarks/ingest.py).
    """
    g = f"p.{quote(group)}"
    if public is not None and public.kinds[group] != people.kinds[group]:
        g = f"CAST({g} AS VARCHAR)"  # compared as text, as _same does
    k = key.sql("p") if exact else f"COALESCE({key.sql('p')}, {_MISSING})"
    rows = f"SELECT {g} AS g, {k} AS k{', CAST(NULL AS INTEGER) AS s' * (public is not None)}"
    rows += f" FROM {people.relation} AS p WHERE {part}"
    if public is not None:
        rows += f" UNION ALL SELECT {g} AS g, {k} AS k, 1 AS s FROM {public.relation} AS p WHERE {part}"
    listed = ", COUNT(u.s) AS l" if public is not None else ""
    nn = ", COUNT(u.k) AS nn" if exact else ""
    return f"SELECT u.g AS g, COUNT(*) AS t{listed}{nn}, MIN(u.k) AS lo, MAX(u.k) AS hi FROM ({rows}) AS u GROUP BY u.g"


# Rows (persons and groups table together) grouped per pass, when the group ids are integers.  Grouped at
# once, 134M households spilled 2.8 GB to disk under the 3 GB limit; in passes nothing spills, and smaller
# hash tables cost less per row: 330M persons took 65 CPU seconds in 4 passes, 57 in 10, 53 in 20, with peaks
# of 2.1, 1.3 and 0.8 GB (the two queries alone, one run each at load average 5 to 10).
PASS_ROWS = 20_000_000


# Rows (persons and groups table together) per pass when they come in no group order (see :func:`_parts`).
# Each such pass reads every row again, which costs more than a light spill: 9.9M shuffled persons with their
# groups table (13.9M rows, 4.0M groups) under a 300 MB engine limit took 6.1 CPU s in one grouping, 8.3 in 2
# spread passes, 9.8 in 3; under 150 MB (where the plain group-by ran out of memory) 10.0 and 10.2.  So they
# are taken only where the engine's 3 GB would be about that short for one grouping: some 37 bytes a group
# or less, about 80M groups, 250M rows with the groups table (benchmarks/ingest.py --spill-check).  Nor does a
# narrow scratch copy (id, key) grouped in passes pay: on 30M shuffled persons it cost 6.1 CPU s in 2 passes
# and 6.3 in 4, copy included, against 6.6 for one grouping.  On a shuffled file the cost is the grouping's
# random access to its hash table, not the reading.
SPREAD_PASS_ROWS = 250_000_000


def _parts(tables: Sequence[Any], group: str, key: LeafKey) -> list[str]:
    """Conditions on the group id of alias ``p`` that split the groups into passes, whatever the row order.

    Each group lies in exactly one pass (a missing id in the first), so the passes' runs and checks add up
    to those of one pass.  Two kinds of pass, chosen from the Parquet footers:

    - rows in group order (census microdata): integer ids (``key.ids``) cut into equal ranges of values, of
      ``PASS_ROWS`` rows or so; each pass reads only the row groups its range can meet, the others skipped by
      their footer statistics (:func:`_read_once`);
    - rows in any other order, frames, or text ids: the groups spread over passes by their id (its residue
      modulo the number of passes, or a hash of its text), of ``SPREAD_PASS_ROWS`` rows or so.  Each pass
      reads every row but keeps only its share of the groups, so no grouping outgrows memory far enough to
      spill heavily (a light spill costs less than a pass).

    A database other than the embedded engine (it manages its own memory) takes one pass, as does any table
    of at most ``PASS_ROWS`` rows (or ``SPREAD_PASS_ROWS`` for the second kind).
    """
    n = -(-key.rows // PASS_ROWS)
    if n <= 1 or not is_duckdb(tables[0].db.connection):
        return ["TRUE"]
    g = f"p.{quote(group)}"
    if key.ids is not None:
        low, high = key.ids
        step = (high - low) // n + 1
        cuts = [low + i * step for i in range(1, n) if low + i * step <= high]
        if cuts and _read_once(tables, group, cuts):
            bands = [f"{g} >= {a} AND {g} < {b}" for a, b in zip(cuts, cuts[1:])]
            return [f"({g} < {cuts[0]} OR {g} IS NULL)", *bands, f"{g} >= {cuts[-1]}"]
    return _spread(g, -(-key.rows // SPREAD_PASS_ROWS), key.ids is not None)


def _spread(g: str, n: int, integer: bool) -> list[str]:
    """``n`` conditions on the group id ``g`` that put each group (its every row, in either table) in exactly
    one of them: integer ids by their residue modulo ``n`` (the same value in any integer type), others by a
    hash of their text (as the tables' ids are compared when their types differ); a missing id in the first."""
    if n <= 1:
        return ["TRUE"]
    share = f"(({g} % {n}) + {n}) % {n}" if integer else f"hash(CAST({g} AS VARCHAR)) % {n}"
    # hash(NULL) is a number: a missing id is kept out of every pass but the first by name.
    return [f"({g} IS NULL OR {share} = 0)", *(f"({g} IS NOT NULL AND {share} = {i})" for i in range(1, n))]


_REREAD = 1.5  # passes are taken when, all together, they read at most this many times the rows


def _read_once(tables: Sequence[Any], group: str, cuts: Sequence[int]) -> bool:
    """Whether passes cut at ``cuts`` read every table's rows about once (at most ``_REREAD`` times), as the
    group id's minimum and maximum per Parquet row group say; False for a table without such statistics."""
    edges = np.array([-np.inf, *cuts, np.inf])
    for table in tables:
        if table.files is None:
            return False
        stats = table.db.query(
            "SELECT row_group_num_rows AS n, stats_min_value AS lo, stats_max_value AS hi "
            f"FROM parquet_metadata({sql_string(table.files)}) WHERE path_in_schema = {sql_string(group)}"
        )
        if stats.empty or stats[["lo", "hi"]].isna().any(axis=None):
            return False
        lo = np.array([float(v) for v in stats["lo"]])
        hi = np.array([float(v) for v in stats["hi"]])
        # A row group is read by every pass whose range [edges[i], edges[i + 1]) meets [lo, hi].
        first = np.searchsorted(edges, lo, side="right") - 1
        last = np.searchsorted(edges, hi, side="right") - 1
        rows = stats["n"].to_numpy(np.float64)
        if ((last - first + 1) * rows).sum() > _REREAD * rows.sum():
            return False
    return True


#: Sizes 0 .. SMALL - 1 are counted in columns of one row per leaf; larger ones in a row each.
SMALL = 8

#: The totals of the checks :func:`keyed_runs` counts, without and with the public groups table (besides
#: ``nulls`` and ``qnulls``, the rows with a missing label).
CHECKS = {
    False: ("null_group", "split"),
    True: ("null_group", "qnull_group", "repeated", "unknown", "moved"),
}


def _leaf_sizes_sql(key: str, n: str, listed: str = "TRUE") -> tuple[str, str]:
    """SQL over one row per group (its leaf key ``key``, size ``n``, and whether it is ``listed``): the select
    list ``k, b, c, c0, ...`` of :func:`runs_of` and the grouping it needs.

    A leaf's groups of each small size are counted in a column of their own (``c0`` ...); a larger size in a
    row of its own (``b`` is that size, else -1; -2 for groups not listed, counted in no run).
    """
    bucket = f"CASE WHEN NOT ({listed}) THEN -2 WHEN {n} < {SMALL} THEN -1 ELSE {n} END"
    small = "".join(f", {sum_if(f'{n} = {i}')} AS c{i}" for i in range(SMALL))
    return f"{key} AS k, {bucket} AS b, {sum_if(listed)} AS c{small}", f"{key}, {bucket}"


def runs_of(raw: pd.DataFrame, key: LeafKey) -> pd.DataFrame:
    """The runs ``(a0, a1, ..., n, c)`` of rows ``k, b, c, c0, ...`` (as :func:`keyed_runs` groups them), runs
    of 0 left out.

    A NULL key (a group of missing labels only, refused by its count of missing labels) reads as 0.
    """
    k = pd.to_numeric(raw["k"]).fillna(0).to_numpy(np.int64)
    b = raw["b"].to_numpy(np.int64)
    rows, large = np.flatnonzero(b == -1), np.flatnonzero(b >= 0)
    # Each candidate run's row of ``raw``: labels are read once a row, then gathered.
    which = np.concatenate([np.repeat(rows, SMALL), large])
    sizes = np.concatenate([np.tile(np.arange(SMALL), rows.size), b[large]])
    smalls = raw[[f"c{i}" for i in range(SMALL)]].to_numpy(np.int64)[rows].ravel()
    counts = np.concatenate([smalls, raw["c"].to_numpy(np.int64)[large]])
    keep = counts > 0
    which = which[keep]
    runs = pd.DataFrame({f"a{j}": a[which] for j, a in enumerate(key.labels(k))})
    return runs.assign(n=sizes[keep], c=counts[keep])


def keyed_runs(people: Any, public: Any, group: str, key: LeafKey) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The runs ``(a0, a1, ..., n, c)`` of the persons (``people``, with the groups table ``public`` or None) and
    the totals of every check, named and counted as :mod:`cocoviz.hierarchy.ingest.aggregate`'s per-level SQL counts
    them.

    ``people`` and ``public`` are that module's tables (``relation``, ``kinds`` per column, ``db``).  A group
    listed twice is refused as such, not also as moved; a group with a missing label, for that label, not also
    as being in two leaves.

    Groups are counted per leaf with one column per small size: grouping by (leaf, size) made a hash table
    of leaves x sizes that took as long as the grouping of the persons (benchmarks/ingest.py).  The first
    query keeps three numbers per group (four with the groups table); a second, exact one runs only when the
    first finds a missing label.
    """
    if public is None:
        n, listed = "sz.t", "TRUE"
        expressions = [("sz.g IS NULL", n), ("sz.g IS NOT NULL AND sz.lo <> sz.hi", "1")]
    else:
        n, listed = "sz.t - sz.l", "sz.l > 0"
        known = "sz.g IS NOT NULL AND sz.l"
        expressions = [
            ("sz.g IS NULL", n),
            ("sz.g IS NULL", "sz.l"),
            (f"{known} > 1", "1"),
            (f"{known} = 0", n),
            (f"{known} = 1 AND sz.lo <> sz.hi", n),
        ]
    checks = dict(zip(CHECKS[public is not None], expressions))
    sizes, grouping = _leaf_sizes_sql("sz.lo", n, listed)
    counted = "".join(f"{sum_if(*check)} AS {name}, " for name, check in checks.items())

    parts = _parts([people] if public is None else [people, public], group, key)

    def query(exact: bool) -> pd.DataFrame:
        nulls = "CAST(SUM(sz.t - sz.nn) AS BIGINT)" if exact else sum_if(f"sz.lo = {_MISSING}")
        # A leaf's runs may come from several passes: the tree's builder adds up equal (leaf, size) runs.
        return pd.concat(
            [
                people.db.query(
                    f"WITH sz AS ({_sizes(people, public, group, key, exact, part)}) "
                    f"SELECT {sizes}, {counted}{nulls} AS nulls FROM sz GROUP BY {grouping}"
                )
                for part in parts
            ],
            ignore_index=True,
        )

    # A missing label shows as a least key of _MISSING, with no count of labelled rows to keep per group; only
    # then (a refusal) are the groups counted again with it, so that its group's other checks count as before.
    raw = query(exact=False)
    if int(raw["nulls"].sum()):
        raw = query(exact=True)
    totals = raw[[*checks, "nulls"]].sum().to_frame().T
    totals["qnulls"] = totals["nulls"]  # a missing label in either table: each is then counted on its own
    return runs_of(raw, key), totals
