"""Persons counted per group in a table indexed by the group id: one read of the rows, in any row order.

When the group ids are integers spread over a range not much wider than the rows (census and survey
microdata number their households), each group's persons and leaf key are kept at ``id - low`` in an array
(:mod:`cocoviz.hierarchy.ingest._dense_kernels`), fed by the engine's scan of two columns (the id and the
row's leaf key, :class:`~cocoviz.hierarchy.ingest.leaf_key.LeafKey`).  A row costs one access to that
array, whatever the row order, where a hash aggregation costs a hash, a probe and one update per aggregate;
the engine then groups the groups by (leaf, size), work proportional to the groups, not the rows.

This path only counts clean tables.  At the first row that is not (a missing id or label, a group in two
leaves, a group listed twice, a person whose group is not listed or lies elsewhere there) it gives up, and
:func:`~cocoviz.hierarchy.ingest.leaf_key.keyed_runs` counts everything in SQL, naming every problem with
its counts and rows: a refusal is the same whichever path saw the table first.

The ids are taken in passes of at most :data:`PASS_IDS` ids (16 bytes each while counted: 134M households,
a census, in one pass of 2.1 GB); a pass reads only the rows whose id is in its range (the engine skips the
row groups the footers rule out; a file in no id order is read once per pass).

>>> import pyarrow as pa
>>> from cocoviz.hierarchy.ingest import dense
>>> from cocoviz.hierarchy import Hierarchy
>>> persons = pa.table({"hh": [3, 1, 3, 2], "state": [7, 7, 7, 8]})
>>> try:
...     dense.MIN_ROWS = 0  # for this example: the path is taken from 1M rows on
...     tree = Hierarchy.from_persons(persons, group="hh", levels=["state"])
... finally:
...     dense.MIN_ROWS = 1_000_000
>>> tree.histogram((7,)).tolist()
[0, 1, 1]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from cocoviz.hierarchy.ingest.leaf_key import CHECKS, SMALL, LeafKey, quote, runs_of

__all__ = ["MIN_ROWS", "PASS_IDS", "SPREAD", "dense_runs"]

#: Fewest rows (both tables) for this path: below, the SQL path's fixed costs are smaller than numba's.
MIN_ROWS = 1_000_000
#: Most ids per pass: 16 bytes an id while the rows are counted (2.2 GB).
PASS_IDS = 140_000_000
#: The id range may be at most this many times the rows: sparser ids take the SQL path (a hash of the ids).
SPREAD = 4
#: Rows the engine hands over at a time.
BATCH_ROWS = 1 << 20

_ID_LIMIT = 2**62  # ids within this magnitude are exact as BIGINT, and so are their differences


def dense_runs(people: Any, public: Any, group: str, key: LeafKey) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The runs and check totals of :func:`~cocoviz.hierarchy.ingest.leaf_key.keyed_runs`, counted through an
    array indexed by the group id; None where this path does not apply or the table is not clean (then
    ``keyed_runs`` counts it).

    ``people`` and ``public`` (or None) are :mod:`cocoviz.hierarchy.ingest.aggregate`'s tables in an embedded
    DuckDB; ``key.ids`` the least and greatest id of both (integer ids), ``key.rows`` their rows.
    """
    import duckdb

    if key.ids is None or key.rows < MIN_ROWS or not isinstance(people.db.connection, duckdb.DuckDBPyConnection):
        return None
    low, high = key.ids
    if max(abs(low), abs(high)) >= _ID_LIMIT or high - low + 1 > SPREAD * key.rows:
        return None
    from cocoviz.hierarchy.ingest import _dense_kernels as kernels

    span = high - low + 1
    passes = -(-span // PASS_IDS)
    step = -(-span // passes)
    found = []
    try:
        for first in range(low, high + 1, step):
            last = min(first + step, high + 1)
            # One pass takes every row (a missing id included, which stops it); several take their own ids.
            where = "TRUE" if passes == 1 else f"{quote(group)} >= {first} AND {quote(group)} < {last}"
            if first == low and passes > 1:
                where = f"({where} OR {quote(group)} IS NULL)"
            state = np.zeros((last - first, 2), np.int64)
            state[:, 1] = kernels.EMPTY
            if public is not None and not _feed(public, group, key, where, first, state, kernels.list_groups):
                return None
            if not _feed(people, group, key, where, first, state, kernels.count_persons, public is not None):
                return None
            found.append(_leaf_sizes(*kernels.leaf_sizes(state, SMALL)))
            del state
    except duckdb.Error:
        return None  # the SQL path reads the table again, and names what the engine could not read
    totals = pd.DataFrame({name: [0] for name in (*CHECKS[public is not None], "nulls", "qnulls")})
    return runs_of(pd.concat(found, ignore_index=True), key), totals


def _feed(table: Any, group: str, key: LeafKey, where: str, low: int, state: np.ndarray, kernel, *args) -> bool:
    """``table``'s rows where ``where`` holds, as (id, leaf key), through ``kernel(ids, keys, low, state, *args)``;
    False at a missing value or when the kernel stops."""
    text = f"SELECT CAST(p.{quote(group)} AS BIGINT) AS g, {key.sql('p')} AS k FROM {table.relation} AS p"
    rows = table.db.connection.sql(f"{text} WHERE {where}")
    # ``to_arrow_reader`` in newer DuckDB, ``fetch_arrow_reader`` in older (deprecated where both exist).
    reader = (rows.to_arrow_reader if hasattr(rows, "to_arrow_reader") else rows.fetch_arrow_reader)(BATCH_ROWS)
    for batch in reader:
        ids, keys = batch.column(0), batch.column(1)
        if ids.null_count or keys.null_count:
            return False
        if not kernel(ids.to_numpy(), keys.to_numpy(), low, state, *args):
            return False
    return True


def _leaf_sizes(keys: np.ndarray, counts: np.ndarray, large_keys: np.ndarray, large_sizes: np.ndarray) -> pd.DataFrame:
    """Rows ``k, b, c, c0, ...`` of :func:`~cocoviz.hierarchy.ingest.leaf_key.runs_of`: a row per leaf of its
    groups' small sizes (``counts``), and one per leaf and larger size (the groups ``large_keys, large_sizes``)."""
    order = np.lexsort((large_sizes, large_keys))
    large_keys, large_sizes = large_keys[order], large_sizes[order]
    first = np.flatnonzero(np.diff(large_keys, prepend=-2) | np.diff(large_sizes, prepend=-2))
    small = pd.DataFrame(counts, columns=[f"c{i}" for i in range(SMALL)])
    rows = pd.concat([pd.DataFrame({"k": keys, "b": -1, "c": counts.sum(axis=1)}), small], axis=1)
    large = pd.DataFrame({"k": large_keys[first], "b": large_sizes[first], "c": np.diff(first, append=order.size)})
    return pd.concat([rows, large.assign(**{f"c{i}": 0 for i in range(SMALL)})], ignore_index=True)
