"""An upload before it is accepted: the level columns proposed from its table, and its hierarchy in brief.

A state/county/size file loaded without naming its levels would become one
region; :func:`propose_levels` names them instead, and :func:`hierarchy_preview`
shows what the chosen columns make (nodes and groups per level, example
nodes), so that a wrong choice is seen before anything is released.

>>> from cocoviz.hierarchy.ingest import load_upload, read_table
>>> csv = b"state,county,size\\nCA,Alameda,3\\nCA,Marin,1\\nOR,Lane,0\\nOR,Lane,2\\n"
>>> propose_levels(read_table(csv), "groups")
['state', 'county']
>>> tree = load_upload(csv, levels=["state", "county"])
>>> hierarchy_preview(tree).to_dict("list")  # doctest: +NORMALIZE_WHITESPACE
{'level': [0, 1, 2], 'name': ['(root)', 'state', 'county'], 'nodes': [1, 2, 3],
 'groups per node': ['4', '2', '1 to 2'], 'examples': ['(root)', 'CA · OR', 'CA/Alameda · CA/Marin · OR/Lane']}
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.errors import ParameterError
from cocoviz.hierarchy import Hierarchy, node_label

__all__ = ["EXAMPLES", "ID_MIN_ROWS", "id_like_columns", "guess_group_column", "propose_levels", "hierarchy_preview"]

#: Example nodes shown per level.
EXAMPLES = 3
#: Tables shorter than this are too small to tell an id column from regions that hold one row each.
ID_MIN_ROWS = 10
#: Words that name a group id column (persons form), lowercase.
GROUP_WORDS = ("group", "household", "hh", "family", "dwelling", "trip", "ride")


def id_like_columns(frame: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """The ``columns`` with one row per value (an id such as ``household_id``, not a region), in a table of at
    least :data:`ID_MIN_ROWS` rows.

    >>> frame = pd.DataFrame({"household_id": range(12), "state": ["a", "b"] * 6, "size": [1] * 12})
    >>> id_like_columns(frame, ["household_id", "state"])
    ['household_id']
    """
    if len(frame) < ID_MIN_ROWS:
        return []
    return [c for c in columns if int(frame[c].nunique(dropna=False)) == len(frame)]


def guess_group_column(frame: pd.DataFrame, *, exclude: Sequence[str] = ()) -> str | None:
    """Persons form: the column most likely to hold the group id — one whose values repeat (a group has
    several persons; a person id does not repeat), named like a group (household, hh, family…) first, else
    the repeating column with the most distinct values (regions have fewer).  None when no column repeats.

    >>> persons = pd.DataFrame({"pid": range(6), "hh": [1, 1, 2, 2, 3, 3], "state": list("aaabbb")})
    >>> guess_group_column(persons)
    'hh'
    >>> guess_group_column(persons.rename(columns={"hh": "unit"}))
    'unit'
    """
    counts = {str(c): int(frame[c].nunique(dropna=False)) for c in frame.columns if str(c) not in set(exclude)}
    repeated = [c for c, n in counts.items() if 1 < n < len(frame)]
    if not repeated:
        return None
    named = [c for c in repeated if any(w in c.lower() for w in GROUP_WORDS)]
    return max(named or repeated, key=lambda c: counts[c])


def propose_levels(
    frame: pd.DataFrame, form: str, *, size: str = "size", count: str = "count", group: str = "group"
) -> list[str]:
    """The level columns to propose for ``frame``: every column that is not the size, count or group
    column, in the table's order.

    In the persons form a column of the persons' own attributes (a name, an age) is left out: one whose
    values are all different, or that varies inside more than half of the groups of two persons or more
    (when there are two such groups or more).  A column that varies inside a few groups only is a region
    column with groups in two regions: it is proposed, and loading the table refuses those groups by their
    rows, instead of the file being previewed as one region.  In every form an id-like column
    (:func:`id_like_columns`) is left out too.

    >>> persons = pd.DataFrame({"name": list("ABC"), "group": [1, 1, 2], "region": list("aab")})
    >>> propose_levels(persons, "persons")
    ['region']
    >>> propose_levels(persons.assign(region=list("abb")), "persons")  # group 1 in regions a and b
    ['region']
    """
    if form not in ("persons", "groups", "counts"):
        raise ParameterError(f"unknown form {form!r}: choose persons, groups or counts")
    roles = {size, count, group}
    columns = [str(c) for c in frame.columns if str(c) not in roles]
    # An id column (one row per value) would make a level of one-row nodes: never proposed.
    columns = [c for c in columns if c not in set(id_like_columns(frame, columns))]
    if form == "persons" and group in frame.columns and len(frame):
        text = frame[[group, *columns]].astype(str)
        within = text.groupby(group, sort=False).nunique()
        shared = (text.groupby(group, sort=False).size() >= 2).to_numpy()
        columns = [c for c in columns if not _person_attribute(text[c], within[c].to_numpy(), shared)]
    return columns


def _person_attribute(values: pd.Series, distinct_within: np.ndarray, shared: np.ndarray) -> bool:
    """Whether a persons-table column describes persons rather than regions (see :func:`propose_levels`)."""
    if len(values) >= 2 and values.nunique() == len(values):
        return True
    varies = distinct_within[shared] > 1
    return len(varies) >= 2 and 2 * int(varies.sum()) > len(varies)


def hierarchy_preview(
    tree: Hierarchy, level_names: Sequence[str] | None = None, examples: int = EXAMPLES
) -> pd.DataFrame:
    """One row per level: its name, number of nodes, groups per node (fewest to most) and example nodes.

    ``level_names`` names the levels, root first (default: ``(root)`` and the level columns).
    """
    names = list(level_names) if level_names is not None else ["(root)", *tree.levels]
    rows = []
    for level in range(tree.depth + 1):
        nodes = tree.nodes(level)
        groups = tree.runs(level).groups()
        low, high = int(np.min(groups)), int(np.max(groups))
        shown = " · ".join(node_label(p) for p in nodes[:examples])
        rows.append(
            {
                "level": level,
                "name": names[level],
                "nodes": len(nodes),
                "groups per node": f"{low:,}" if low == high else f"{low:,} to {high:,}",
                "examples": shown + (f" · … ({len(nodes) - examples:,} more)" if len(nodes) > examples else ""),
            }
        )
    return pd.DataFrame(rows)
