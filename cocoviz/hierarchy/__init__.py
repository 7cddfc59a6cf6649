"""Region hierarchies and their true count-of-counts histograms.

A :class:`Hierarchy` holds, for every leaf region, the groups it contains as
runs of ``(size, count)``: ``count`` groups have exactly ``size`` members.
Equal-sized groups are interchangeable for every quantity the method needs, so
this compact form is all that is kept; memory grows with the number of
distinct sizes per leaf, not with the number of groups.

Nodes are addressed by their path from the root: ``()`` is the root,
``("CA",)`` a state, ``("CA", "Alameda")`` a county.  Level labels are
stored as strings.

The package has two parts: :mod:`cocoviz.hierarchy.tree` (the tree and its
queries) and :mod:`cocoviz.hierarchy.tables` (validation of the three table
forms); the runs themselves are :mod:`cocoviz.core.runs`.  Every name is importable
from ``cocoviz.hierarchy``.

Examples
--------
>>> import pandas as pd
>>> persons = pd.DataFrame({"group": [1, 1, 1, 1, 2, 2, 3, 4],
...                         "region": list("aaaabbab")})
>>> tree = Hierarchy.from_persons(persons, group="group", levels=["region"])
>>> tree.histogram(())
array([0, 2, 1, 0, 1])
>>> tree.histogram(("a",))
array([0, 1, 0, 0, 1])
"""

from cocoviz.core.runs import LevelRuns, aggregate_runs
from cocoviz.hierarchy.tables import MAX_GROUP_SIZE, MAX_GROUPS, MAX_PERSONS
from cocoviz.hierarchy.tree import Hierarchy, node_label, node_labels, node_path, path_columns

__all__ = [
    "Hierarchy",
    "LevelRuns",
    "MAX_GROUPS",
    "MAX_GROUP_SIZE",
    "MAX_PERSONS",
    "aggregate_runs",
    "node_label",
    "node_labels",
    "node_path",
    "path_columns",
]
