"""The region tree and its queries: nodes, children, runs and histograms of every level.

The builders' table checks live in :mod:`cocoviz.hierarchy.tables`; the runs
form in :mod:`cocoviz.core.runs`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.core.memory import DENSE_AVOID, check_cells
from cocoviz.core.nodes import LabelColumns, NodeCodes
from cocoviz.core.runs import LevelRuns, aggregate_runs
from cocoviz.errors import InputError, ParameterError
from cocoviz.hierarchy import tables

__all__ = ["Hierarchy", "node_label", "node_labels", "node_path", "path_columns", "ROOT_LABEL"]

Path = tuple[str, ...]


ROOT_LABEL = "(root)"


def node_label(path: Sequence[str]) -> str:
    r"""Readable name of a node: ``"(root)"`` or its labels joined by ``/``, for display.

    A node's identity is its path, the tuple of labels; the name stands for it one to one: a ``/`` or
    ``\`` inside a label is escaped with ``\`` (and a lone label ``(root)`` as ``\(root)``), so two nodes
    never share a name and :func:`node_path` reads the path back.

    >>> node_label(("a", "b/c")), node_label(("a/b", "c")), node_label(())
    ('a/b\\/c', 'a\\/b/c', '(root)')
    >>> node_path(node_label(("a/b", "c"))), node_path("(root)")
    (('a/b', 'c'), ())
    """
    if not len(path):
        return ROOT_LABEL
    name = "/".join(str(label).replace("\\", "\\\\").replace("/", "\\/") for label in path)
    return "\\" + name if name == ROOT_LABEL else name


def node_path(label: str) -> Path:
    """The path a :func:`node_label` name stands for (its inverse)."""
    if label == ROOT_LABEL:
        return ()
    parts, current, escaped = [], [], False
    for char in label:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "/":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return tuple(parts)


def node_labels(nodes: NodeCodes, level: int) -> pd.Series:
    r""":func:`node_label` of every node of ``level``, made from the integer codes without a Python object per
    node: each level's distinct labels are escaped once, then joined per node in Arrow (a text column of 8M
    block names costs about 200 MB there, several GB as Python strings).

    >>> columns = LabelColumns.from_paths([("a/b", "c"), ("a", "b/c"), ("(root)", "x")], 2)
    >>> nodes = NodeCodes.build(columns)[0]
    >>> node_labels(nodes, 2).tolist() == [node_label(p) for p in nodes.paths(2)]
    True
    >>> node_labels(nodes, 1).tolist(), node_labels(nodes, 0).tolist()
    (['\\(root)', 'a', 'a\\/b'], ['(root)'])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    dtype = pd.ArrowDtype(pa.string())
    if level == 0:
        return pd.Series([ROOT_LABEL] * nodes.size(0), dtype=dtype)
    parts, k = [], np.arange(nodes.size(level))
    for lvl in range(level, 0, -1):
        escaped = [str(x).replace("\\", "\\\\").replace("/", "\\/") for x in nodes.labels[lvl]]
        if lvl == 1 and level == 1:
            escaped = ["\\" + x if x == ROOT_LABEL else x for x in escaped]
        parts.append(pa.array(escaped, pa.string()).take(pa.array(nodes.codes[lvl][k])))
        k = nodes.parents[lvl][k]
    joined = pc.binary_join_element_wise(*parts[::-1], "/")
    return pd.Series(pd.arrays.ArrowExtensionArray(joined))


def path_columns(labels: Sequence[str], level_names: Sequence[str]) -> pd.DataFrame:
    """The paths behind :func:`node_label` names as one column per level below the root (empty below a
    node's own level): the tuple of labels in a table's form, for files read by other programs.

    >>> labels = ["(root)", node_label(("a/b",)), node_label(("a", "b/c"))]
    >>> path_columns(labels, ["(root)", "state", "county"]).to_dict("list")
    {'state': ['', 'a/b', 'a'], 'county': ['', '', 'b/c']}
    """
    paths = [node_path(label) for label in labels]
    return pd.DataFrame(
        {name: [p[k] if len(p) > k else "" for p in paths] for k, name in enumerate(level_names[1:])},
        index=range(len(paths)),
    )


def _take_nodes(runs: LevelRuns, nodes: np.ndarray) -> LevelRuns:
    """The runs of ``nodes`` (indices into ``runs``), in that order."""
    lo = runs.ptr[nodes]
    lengths = runs.ptr[nodes + 1] - lo
    ptr = np.zeros(len(nodes) + 1, np.int64)
    np.cumsum(lengths, out=ptr[1:])
    take = np.repeat(lo - ptr[:-1], lengths) + np.arange(ptr[-1])
    return LevelRuns(ptr, runs.sizes[take], runs.counts[take])


def _is_sorted_runs(runs: LevelRuns) -> bool:
    """Whether every count is positive and sizes rise strictly within every node (as aggregate_runs leaves them)."""
    if not np.all(runs.counts > 0) or (len(runs.sizes) and runs.sizes.min() < 0):
        return False
    node = runs.node_ids()
    same = node[1:] == node[:-1]
    return bool(np.all(np.diff(runs.sizes)[same] > 0))


def _is_level(level: object) -> bool:
    return isinstance(level, (int, np.integer)) and not isinstance(level, (bool, np.bool_))


class Hierarchy:
    """A public region hierarchy with the private group sizes of its leaves.

    Build one with :meth:`from_persons`, :meth:`from_groups` or
    :meth:`from_counts`; the constructor itself takes already-validated leaf
    runs and is not meant to be called directly.

    Parameters
    ----------
    levels : sequence of str
        Names of the levels below the root, top down (may be empty).
    leaf_paths : list of tuple of str, or LabelColumns
        Path of every leaf, in a fixed order (as tuples, or as per-level label
        codes, :class:`~cocoviz.core.nodes.LabelColumns`, which builds without a
        Python object per leaf).
    leaf_runs : LevelRuns
        Runs of the leaves, aligned with ``leaf_paths``.
    public_groups : bool
        Whether the regions and every G come from a public Groups table (see
        :attr:`public_groups`); the caller vouches for it.  Default False.
    """

    def __init__(
        self,
        levels: Sequence[str],
        leaf_paths: list[Path] | LabelColumns,
        leaf_runs: LevelRuns,
        *,
        public_groups: bool = False,
    ):
        self._public_groups = bool(public_groups)
        self.levels: tuple[str, ...] = tuple(levels)
        depth = len(self.levels)
        if not isinstance(leaf_paths, LabelColumns):
            leaf_paths = LabelColumns.from_paths(leaf_paths, depth)
        # Nodes of each level in sorted path order, so that every release is
        # reproducible whatever the row order of the input; integer arrays only.
        self._nodes, leaf_order = NodeCodes.build(leaf_paths)
        self._paths = [self._nodes.paths(lvl) for lvl in range(depth + 1)]
        # Runs of every level from the leaves up.
        runs = [None] * (depth + 1)
        n_leaves = self._nodes.size(depth)
        if leaf_runs.n_nodes == n_leaves and _is_sorted_runs(leaf_runs):
            # Distinct leaves whose runs are already sorted: only their order changes.
            inverse = np.empty(n_leaves, np.int64)
            inverse[leaf_order] = np.arange(n_leaves)
            runs[depth] = _take_nodes(leaf_runs, inverse)
        else:
            leaf_of_run = leaf_order[leaf_runs.node_ids()]
            runs[depth] = aggregate_runs(leaf_of_run, leaf_runs.sizes, leaf_runs.counts, n_leaves)
        for lvl in range(depth, 0, -1):
            below = runs[lvl]
            runs[lvl - 1] = aggregate_runs(
                self._nodes.parents[lvl][below.node_ids()], below.sizes, below.counts, self._nodes.size(lvl - 1)
            )
        self._runs: list[LevelRuns] = runs
        if runs[0].groups()[0] == 0:
            # Leaves of G = 0 are regions like any other, but a tree of no group at all has nothing to release.
            raise InputError("the table holds no groups: every leaf counts 0 groups")

    # ----------------------------------------------------------------- building
    @classmethod
    def from_counts(cls, df: pd.DataFrame, *, size: str, count: str, levels: Sequence[str]) -> Hierarchy:
        """Build from per-leaf counts: one row per leaf and size with its number of groups.

        Any number of levels below the root; a leaf listed only with 0 groups is a
        node of G = 0, kept in the tree, measured and released like any other.

        Parameters
        ----------
        df : DataFrame, Polars or Arrow frame, path or glob, or ``cocoviz.hierarchy.ingest.sql(...)``
            One row per (leaf, size); rows repeating a (leaf, size) pair add up.
        size, count : str
            Columns holding the group size and the number of groups of that size.
        levels : sequence of str
            Level columns, top down (root excluded).

        Raises
        ------
        InputError
            Naming the column and the first offending rows for missing,
            non-numeric (text, booleans, complex numbers, lists), infinite,
            negative, fractional or too large sizes or counts (see
            :data:`~cocoviz.hierarchy.tables.MAX_GROUP_SIZE`,
            :data:`~cocoviz.hierarchy.tables.MAX_GROUPS` and
            :data:`~cocoviz.hierarchy.tables.MAX_PERSONS`, which also bound
            the sums), missing, empty or ambiguous region labels (``1`` and
            ``"1"`` in one column), an empty table or one of no groups at all.  A leaf whose rows all
            count 0 groups is a region with G = 0 (an empty census block).
        ParameterError
            For column arguments that cannot name a column.
        """
        from cocoviz.hierarchy.ingest import aggregate, sources  # the io package builds on this one: imported when used

        if sources.is_external(df):
            return cls(*aggregate.counts_leaves(df, size=size, count=count, levels=levels), public_groups=True)
        return cls(*tables.counts_table(df, size=size, count=count, levels=levels), public_groups=True)

    @classmethod
    def from_groups(cls, df: pd.DataFrame, *, size: str, levels: Sequence[str]) -> Hierarchy:
        """Build from a groups table: one row per group with its region and size (0 allowed).

        ``df`` may also be a Polars or Arrow frame, a path or glob of Parquet / CSV
        files, or ``cocoviz.hierarchy.ingest.sql(...)`` (aggregated where it lives).

        >>> groups = pd.DataFrame({"state": ["a", "a", "b"], "size": [4, 1, 2]})
        >>> Hierarchy.from_groups(groups, size="size", levels=["state"]).groups(())
        3
        """
        from cocoviz.hierarchy.ingest import aggregate, sources  # the io package builds on this one: imported when used

        if sources.is_external(df):
            return cls(*aggregate.groups_leaves(df, size=size, levels=levels), public_groups=True)
        return cls(*tables.groups_table(df, size=size, levels=levels), public_groups=True)

    @classmethod
    def from_persons(
        cls, df: pd.DataFrame, *, group: str, levels: Sequence[str], groups: pd.DataFrame | None = None
    ) -> Hierarchy:
        """Build from a persons table: one row per person with its group id and region.

        A group's size is its number of rows; a group must lie in one leaf.

        Parameters
        ----------
        df : DataFrame, Polars or Arrow frame, path or glob, or ``cocoviz.hierarchy.ingest.sql(...)``
            The private Persons table.  Anything but a pandas frame is aggregated
            where it lives (DuckDB for frames and Parquet / CSV files, the database
            for :func:`cocoviz.hierarchy.ingest.sql`), with the same checks; see
            :mod:`cocoviz.hierarchy.ingest.aggregate`.
        group : str
            Column of the group id (in ``df`` and in ``groups``).
        levels : sequence of str
            Level columns, top down (root excluded), in ``df`` and in ``groups``.
        groups : DataFrame, frame, path or ``cocoviz.hierarchy.ingest.sql(...)``, optional
            The public Groups table (from any place, not necessarily the
            persons'): one row per group, its id and its region (the same
            level columns).  With it, the regions and every node's G
            come from this public table: a listed group with no person has
            size 0, and a person whose group is not listed, or lies in another
            region than the one listed, is refused.  **Without it, G and the
            list of regions are taken from the private rows**: a release then
            keeps each G exactly, so a person added in a new group is seen with
            certainty; :attr:`public_groups` is False for such a tree.

        Examples
        --------
        >>> persons = pd.DataFrame({"group": [1, 1, 2], "region": ["a", "a", "b"]})
        >>> listed = pd.DataFrame({"group": [1, 2, 3], "region": ["a", "b", "b"]})
        >>> tree = Hierarchy.from_persons(persons, group="group", levels=["region"], groups=listed)
        >>> tree.histogram(("b",)), tree.public_groups
        (array([1, 1]), True)
        """
        from cocoviz.hierarchy.ingest import aggregate, sources  # the io package builds on this one: imported when used

        if sources.is_external(df) or sources.is_external(groups):
            leaves = aggregate.persons_leaves(df, group=group, levels=levels, groups=groups)
        else:
            leaves = tables.persons_table(df, group=group, levels=levels, groups=groups)
        return cls(*leaves, public_groups=groups is not None)

    # ------------------------------------------------------------------ queries
    @property
    def public_groups(self) -> bool:
        """Whether the regions and every node's G come from a public Groups table (read-only).

        True for :meth:`from_counts` and :meth:`from_groups` (their rows are
        the Groups table) and for :meth:`from_persons` with ``groups=``; False
        for :meth:`from_persons` without it, whose G are taken from the
        private rows and are therefore not protected by the release.
        """
        return self._public_groups

    @property
    def node_codes(self) -> NodeCodes:
        """Every level's nodes as read-only integer arrays (labels, codes, parents), in node order."""
        return self._nodes

    @property
    def depth(self) -> int:
        """Number of levels below the root."""
        return len(self.levels)

    def nodes(self, level: int) -> list[Path]:
        """Paths of the nodes at ``level`` (0 = root), in a fixed sorted order."""
        self._check_level(level)
        return list(self._paths[level])

    def children(self, node: Sequence[str]) -> list[Path]:
        """Paths of the children of ``node`` (empty for a leaf)."""
        return self._nodes.child_paths(node)

    def locate(self, node: Sequence[str]) -> tuple[int, int]:
        """Level of ``node`` and its index within that level (:meth:`~cocoviz.core.nodes.NodeCodes.find`)."""
        return self._nodes.find(node)

    def runs(self, level: int) -> LevelRuns:
        """The true ``(size, count)`` runs of every node at ``level``."""
        self._check_level(level)
        return self._runs[level]

    def parents(self, level: int) -> np.ndarray:
        """For every node at ``level`` (>= 1), the index of its parent one level up."""
        if not _is_level(level) or not 1 <= level <= self.depth:
            raise ParameterError(f"level must be between 1 and {self.depth}, got {level}")
        return self._nodes.parents[level]

    def node_runs(self, node: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Sizes and counts of the groups of ``node``."""
        level, k = self.locate(node)
        return self._runs[level].node(k)

    def histogram(self, node: Sequence[str]) -> np.ndarray:
        """True count-of-counts histogram H of ``node``: ``H[j]`` groups of size ``j``.

        The array runs from size 0 to the node's largest group size.
        """
        sizes, counts = self.node_runs(node)
        check_cells(int(sizes[-1]) + 1, f"the dense histogram of {node_label(node)}", DENSE_AVOID)
        h = np.zeros(int(sizes[-1]) + 1, np.int64)
        h[sizes] = counts
        return h

    def groups(self, node: Sequence[str]) -> int:
        """Public number of groups G of ``node``."""
        return int(self.node_runs(node)[1].sum())

    def persons(self, node: Sequence[str] = ()) -> int:
        """Number of persons in ``node`` (private; for data cards and checks)."""
        sizes, counts = self.node_runs(node)
        return int(np.dot(sizes, counts))

    @property
    def max_size(self) -> int:
        """Largest group size anywhere (private: a public bound K must not be derived from it)."""
        return int(self._runs[0].sizes[-1])

    def summary(self) -> dict:
        """Groups, persons, distinct sizes, levels and node counts, for data cards."""
        root = self._runs[0]
        return {
            "groups": int(root.counts.sum()),
            "persons": int(np.dot(root.sizes, root.counts)),
            "distinct_sizes": int(len(root.sizes)),
            "max_size": self.max_size,
            "levels": list(self.levels),
            "nodes_per_level": [len(p) for p in self._paths],
        }

    # ----------------------------------------------------------- restructuring
    def keep_levels(self, levels: Sequence[str]) -> Hierarchy:
        """A coarser hierarchy with only the named levels (in their original order).

        Dropping the lowest levels makes the deepest kept level the leaves;
        dropping a middle level attaches its children to their grandparent.

        >>> persons = pd.DataFrame({"group": [1, 2], "s": ["a", "b"], "c": ["x", "y"]})
        >>> Hierarchy.from_persons(persons, group="group", levels=["s", "c"]).keep_levels(["s"]).depth
        1
        """
        unknown = [x for x in levels if x not in self.levels]
        if unknown:
            raise ParameterError(f"unknown level(s) {unknown}; this hierarchy has {list(self.levels)}")
        keep = [i for i, name in enumerate(self.levels) if name in set(levels)]
        leaves = self._runs[self.depth]
        columns = self._leaf_columns(range(self.depth + 1))
        kept = LabelColumns(tuple(columns.codes[i] for i in keep), tuple(columns.labels[i] for i in keep), columns.n)
        leaf_map, distinct = kept.distinct()
        runs = aggregate_runs(leaf_map[leaves.node_ids()], leaves.sizes, leaves.counts, distinct.n)
        return Hierarchy([self.levels[i] for i in keep], distinct, runs, public_groups=self.public_groups)

    def subtree(self, node: Sequence[str]) -> Hierarchy:
        """The part of the hierarchy below ``node``, with ``node`` as its root.

        Used for regional cuts such as the paper's West Coast: build a
        hierarchy whose first level is the region, then take its subtree.
        """
        level, k = self.locate(node)
        leaves = self._runs[self.depth]
        # Leaves whose ancestor at `level` is the chosen node, and their runs.
        inside = np.flatnonzero(self._nodes.ancestors(self.depth, level) == k)
        runs = _take_nodes(leaves, inside)
        columns = self._leaf_columns(range(level + 1, self.depth + 1)).take(inside)
        return Hierarchy(self.levels[level:], columns, runs, public_groups=self.public_groups)

    def _leaf_columns(self, levels: range) -> LabelColumns:
        """The labels of every leaf at the given levels (1-based), as codes into each level's labels."""
        nodes, depth = self._nodes, self.depth
        codes = []
        for lvl in levels:
            if lvl == 0:
                continue
            codes.append(nodes.codes[lvl][nodes.ancestors(depth, lvl)])
        labels = tuple(nodes.labels[lvl] for lvl in levels if lvl)
        return LabelColumns(tuple(codes), labels, nodes.size(depth))

    def _check_level(self, level: int) -> None:
        if not _is_level(level) or not 0 <= level <= self.depth:
            raise ParameterError(f"level must be between 0 and {self.depth}, got {level}")

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"Hierarchy(levels={list(self.levels)}, nodes={s['nodes_per_level']}, "
            f"groups={s['groups']:,}, distinct_sizes={s['distinct_sizes']:,})"
        )
