"""Integer level columns as one BIGINT per row: the leaf's path in mixed radix, read back by arithmetic.

Grouping persons by household with one least and one greatest key per
household, instead of a least and a greatest label per level, keeps the
aggregate state of 128M households narrow (``benchmarks/ingest.py``); two
rows share a key exactly when they share every label.  Each level's digit is
its label minus the least label of that level in the tables given, its radix
the span of those labels; the extremes come from one ``MIN`` / ``MAX`` query
(which DuckDB answers from a Parquet file's footer).  A row with a missing
label has a NULL key.

>>> import duckdb
>>> from cocoviz.io.database import Database, sql
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

import numpy as np

from cocoviz.io.database import Database

__all__ = ["LeafKey"]

_LIMIT = 2**62  # keys and their spans stay clear of BIGINT's overflow


def _q(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


@dataclass(frozen=True)
class LeafKey:
    """The mixed-radix key of ``levels``: digit ``j`` is ``label - lows[j]``, below ``radices[j]``."""

    levels: list[str]
    lows: list[int]
    radices: list[int]

    @classmethod
    def of(cls, db: Database, relations: Sequence[str], levels: Sequence[str]) -> LeafKey | None:
        """The key covering every label of ``levels`` in ``relations`` (integer columns, checked by the caller);
        None when the labels span too much for one BIGINT."""
        levels = list(levels)
        lows: list[int | None] = [None] * len(levels)
        highs: list[int | None] = [None] * len(levels)
        for relation in relations:
            if not levels:
                break
            # As text: an extreme past 2**53 must not pass through a float on its way.
            extremes = ", ".join(
                f"CAST(MIN({_q(c)}) AS VARCHAR) AS l{j}, CAST(MAX({_q(c)}) AS VARCHAR) AS h{j}"
                for j, c in enumerate(levels)
            )
            row = db.query(f"SELECT {extremes} FROM {relation} AS p").iloc[0]
            for j in range(len(levels)):
                low, high = row[f"l{j}"], row[f"h{j}"]
                if isinstance(low, str):
                    lows[j] = int(low) if lows[j] is None else min(lows[j], int(low))
                    highs[j] = int(high) if highs[j] is None else max(highs[j], int(high))
        lows = [0 if x is None else x for x in lows]
        radices = [1 if h is None else h - low + 1 for low, h in zip(lows, highs)]
        span = 1
        for radix in radices:
            span *= radix
        if span >= _LIMIT or any(abs(x) >= _LIMIT for x in lows):
            return None
        return cls(levels, lows, radices)

    def sql(self, alias: str = "p") -> str:
        """The key of a row of ``alias`` (NULL where a label is missing)."""
        key = "CAST(0 AS BIGINT)"
        for col, low, radix in zip(self.levels, self.lows, self.radices):
            key = f"({key} * {radix} + (CAST({alias}.{_q(col)} AS BIGINT) - ({low})))"
        return key

    def labels(self, keys: np.ndarray) -> list[np.ndarray]:
        """Each level's labels (int64) of ``keys``."""
        rest = np.asarray(keys, np.int64).copy()
        out = []
        for low, radix in zip(reversed(self.lows), reversed(self.radices)):
            out.append(rest % radix + low)
            rest //= radix
        return out[::-1]
