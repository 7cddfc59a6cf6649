"""The public domain of the joint tables: size classes × tenure, and per-node tables of a leaf table.

A joint table of one region is a ``(classes, 2)`` array: rows are the public size classes
(:data:`SIZE_EDGES`: ≤1, 2, 3, 4, 5, 6, 7+ by default), columns owners and renters.  Flattened
row-major it is the cell vector IDE works on.

>>> size_classes(np.array([0, 1, 2, 7, 9000])).tolist()
[0, 0, 1, 6, 6]
>>> class_labels()
['≤1', '2', '3', '4', '5', '6', '7+']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.core.nodes import LabelColumns, NodeCodes
from cocoviz.errors import InputError, ParameterError

__all__ = [
    "SIZE_EDGES",
    "TENURES",
    "size_classes",
    "class_labels",
    "class_counts",
    "leaf_owners",
    "node_tables",
    "prior_tables",
]

#: Lower edges of the public size classes: [0, 2), {2}, ..., {6}, [7, ∞).
SIZE_EDGES = (0, 2, 3, 4, 5, 6, 7)
#: The characteristic's values, the table's columns.
TENURES = ("owner", "renter")


def _edges(edges: Sequence[int]) -> np.ndarray:
    e = np.asarray(edges, np.int64)
    if e.ndim != 1 or e.size == 0 or e[0] != 0 or np.any(np.diff(e) <= 0):
        raise ParameterError(f"size class edges must start at 0 and increase, got {list(edges)}")
    return e


def size_classes(sizes: np.ndarray, edges: Sequence[int] = SIZE_EDGES) -> np.ndarray:
    """The class index of every size (the last class is open-ended)."""
    return np.searchsorted(_edges(edges), np.asarray(sizes, np.int64), side="right") - 1


def class_labels(edges: Sequence[int] = SIZE_EDGES) -> list[str]:
    """Readable labels of the classes: ``"≤1"``, ``"2"``, ``"3–4"``, ``"7+"``."""
    e = _edges(edges)
    out = []
    for k, lo in enumerate(e):
        if k == e.size - 1:
            out.append(f"{lo}+")
        else:
            hi = int(e[k + 1]) - 1
            out.append(f"≤{hi}" if lo == 0 and hi > 0 else (str(lo) if hi == lo else f"{lo}–{hi}"))
    return out


def class_counts(sizes: np.ndarray, counts: np.ndarray, edges: Sequence[int] = SIZE_EDGES) -> np.ndarray:
    """Groups per size class from ``(size, count)`` runs (e.g. a released node's runs); int for int counts.

    >>> class_counts(np.array([1, 2, 9]), np.array([3, 4, 1])).tolist()
    [3, 4, 0, 0, 0, 0, 1]
    """
    n = _edges(edges).size
    counts = np.asarray(counts)
    out = np.zeros(n, np.int64 if counts.dtype.kind in "iu" else np.float64)
    np.add.at(out, size_classes(sizes, edges), counts)
    return out


def _check_table(table: pd.DataFrame, levels: Sequence[str]) -> None:
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"a tenure table must be a DataFrame, got {type(table).__name__}")
    missing = [c for c in [*levels, "size", "owners", "renters"] if c not in table.columns]
    if missing:
        raise InputError(f"the tenure table has no column(s) {missing}")


def leaf_owners(table: pd.DataFrame, levels: Sequence[str]) -> pd.DataFrame:
    """Owners and groups per leaf path (a frame indexed by the level columns, as text)."""
    _check_table(table, levels)
    keyed = table.assign(**{c: table[c].astype(str) for c in levels}, groups=table["owners"] + table["renters"])
    if not levels:
        return pd.DataFrame({"owners": [keyed["owners"].sum()], "groups": [keyed["groups"].sum()]}, index=[()])
    return keyed.groupby(list(levels), sort=True, observed=True)[["owners", "groups"]].sum()


def node_tables(
    table: pd.DataFrame, levels: Sequence[str], edges: Sequence[int] = SIZE_EDGES
) -> dict[tuple[str, ...], np.ndarray]:
    """Per node path (root, every level), the ``(classes, 2)`` table of owners and renters.

    ``table`` has the level columns, ``size``, ``owners`` and ``renters`` per leaf and size: the
    private truth of :func:`cocoviz.datasets.tenure.tenure_table` (int) or a public previous census
    of :func:`~cocoviz.datasets.tenure.previous_tenure_table` (float).
    """
    _check_table(table, levels)
    n = _edges(edges).size
    cls = size_classes(table["size"].to_numpy(), edges)
    values = table[["owners", "renters"]].to_numpy()
    if not len(table):
        return {}
    # The rows' paths as integer codes, sorted as tuples of str sort: one Python tuple per node, none per row.
    nodes, leaf = NodeCodes.build(LabelColumns.from_frame(table, levels))
    out: dict[tuple[str, ...], np.ndarray] = {}
    for depth in range(len(levels) + 1):
        acc = np.zeros((nodes.size(depth), n, 2), values.dtype)
        np.add.at(acc, (nodes.ancestors(len(levels), depth)[leaf], cls), values)
        out.update(zip(nodes.paths(depth), acc))
    return out


def prior_tables(
    table: pd.DataFrame, shape: object, edges: Sequence[int] = SIZE_EDGES
) -> dict[tuple[str, ...], np.ndarray]:
    """A public table (e.g. a previous census) per node of ``shape``; nodes it lacks get a uniform table.

    ``shape`` is the hierarchy's public :class:`~cocoviz.core.shape.Shape` (its levels and nodes).
    """
    tables = node_tables(table, list(shape.levels), edges)
    n = _edges(edges).size
    return {path: np.asarray(tables.get(path, np.ones((n, 2))), np.float64) for paths in shape.paths for path in paths}
