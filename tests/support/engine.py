"""Hypothesis strategies and helpers shared by the engine's tests (imported, unlike conftest).

* ``random_trees()``: random hierarchies (depth 0-3, random fan-out, sizes
  including 0, random counts), each with its truth computed independently of
  :class:`~cocoviz.hierarchy.Hierarchy`.
* ``release_options()``: budgets and method mixes for :func:`cocoviz.estimate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from cocoviz.consistency import LevelEstimates
from cocoviz.hierarchy import Hierarchy
from cocoviz.methods.estimators import GroupEstimate

#: Child labels; reused under every parent, so equal labels under different
#: parents (("a", "b") and ("b", "b")) are exercised.
LABELS = ("a", "b", "c")


@dataclass
class RandomTree:
    """A random hierarchy with the truth kept on the side, as plain dicts."""

    tree: Hierarchy
    frame: pd.DataFrame  # the from_counts input: level columns, "size", "count"
    levels: list[str]
    leaves: dict[tuple, dict[int, int]] = field(default_factory=dict)  # leaf path -> {size: count}

    def truth(self, node: tuple) -> np.ndarray:
        """H of ``node`` summed from the leaves below it, from size 0 to its largest size."""
        total: dict[int, int] = {}
        for path, runs in self.leaves.items():
            if path[: len(node)] == tuple(node):
                for s, c in runs.items():
                    total[s] = total.get(s, 0) + c
        sizes = [s for s, c in total.items() if c > 0]
        h = np.zeros(max(sizes) + 1, np.int64)
        for s in sizes:
            h[s] = total[s]
        return h

    def all_nodes(self) -> list[tuple]:
        return sorted({p[:k] for p in self.leaves for k in range(len(self.levels) + 1)})


@st.composite
def random_trees(draw, max_depth: int = 3, max_size: int = 6, max_fanout: int = 3, max_runs: int = 4) -> RandomTree:
    """A random hierarchy built with ``Hierarchy.from_counts`` from shuffled rows.

    Rows may repeat a (leaf, size) pair (their counts add up) and may have a
    zero count, but every leaf has at least one group.
    """
    depth = draw(st.sampled_from(range(max_depth + 1)))
    levels = [f"level{k + 1}" for k in range(depth)]

    def expand(prefix: tuple) -> list[tuple]:
        if len(prefix) == depth:
            return [prefix]
        fanout = draw(st.integers(1, max_fanout))
        return [leaf for i in range(fanout) for leaf in expand(prefix + (LABELS[i],))]

    rows, leaves = [], {}
    for leaf in expand(()):
        first = draw(st.tuples(st.integers(0, max_size), st.integers(1, 4)))
        more = draw(st.lists(st.tuples(st.integers(0, max_size), st.integers(0, 4)), max_size=max_runs - 1))
        runs: dict[int, int] = {}
        for size, count in [first, *more]:
            rows.append((*leaf, size, count))
            runs[size] = runs.get(size, 0) + count
        leaves[leaf] = {s: c for s, c in runs.items() if c > 0}
    rows = draw(st.permutations(rows))
    frame = pd.DataFrame(rows, columns=[*levels, "size", "count"])
    tree = Hierarchy.from_counts(frame, size="size", count="count", levels=levels)
    return RandomTree(tree, frame, levels, leaves)


@st.composite
def release_options(draw, n_levels: int, largest: int) -> dict:
    """Keyword arguments for ``estimate``: ε, method and p per level, K, consistency, merge, seed."""
    methods = [draw(st.sampled_from(["Hc", "Hg", "naive"])) for _ in range(n_levels)]
    return {
        "epsilons": draw(st.lists(st.sampled_from([0.05, 0.3, 1.0, 4.0]), min_size=n_levels, max_size=n_levels)),
        "methods": methods,
        "p": draw(
            st.one_of(
                st.none(),
                st.sampled_from([1, 2]),
                st.lists(st.sampled_from([1, 2]), min_size=n_levels, max_size=n_levels),
            )
        ),
        "max_size": max(largest, 1) + draw(st.integers(0, 3)),
        "consistency": draw(st.sampled_from(["top-down", "bottom-up", "none"])),
        "merge": draw(st.sampled_from(["weighted", "average"])),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


def padded(h: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, np.int64)
    out[: len(h)] = h
    return out


def assert_same_hierarchy(a: Hierarchy, b: Hierarchy) -> None:
    """Two hierarchies are one: the same levels, public groups, nodes and (size, count) runs at every level."""
    assert a.levels == b.levels and a.public_groups == b.public_groups
    for level in range(len(a.levels) + 1):
        assert a.nodes(level) == b.nodes(level)
        ra, rb = a.runs(level), b.runs(level)
        for x, y in [(ra.ptr, rb.ptr), (ra.sizes, rb.sizes), (ra.counts, rb.counts)]:
            np.testing.assert_array_equal(x, y)


def est(hg, var=1.0) -> GroupEstimate:
    """A GroupEstimate holding the sorted sizes ``hg``, every group with variance ``var``."""
    sizes, counts = np.unique(np.asarray(hg, np.int64), return_counts=True)
    return GroupEstimate(sizes, counts, np.full(len(sizes), float(var)))


@st.composite
def estimate_trees(draw):
    """Random independent estimates on a random 2- or 3-level tree, with G agreeing per node."""
    depth = draw(st.integers(1, 2))
    parents = [None]
    n_nodes = [1]
    for _ in range(1, depth + 1):
        kids = draw(st.lists(st.integers(1, 3), min_size=n_nodes[-1], max_size=n_nodes[-1]))
        parents.append(np.repeat(np.arange(n_nodes[-1]), kids))
        n_nodes.append(sum(kids))
    leaf_groups = draw(st.lists(st.integers(1, 5), min_size=n_nodes[-1], max_size=n_nodes[-1]))
    groups = [None] * depth + [np.array(leaf_groups)]
    for level in range(depth, 0, -1):
        groups[level - 1] = np.bincount(parents[level], weights=groups[level], minlength=n_nodes[level - 1]).astype(int)
    estimates = []
    for level in range(depth + 1):
        nodes = []
        for g in groups[level]:
            hg = draw(st.lists(st.integers(0, 8), min_size=int(g), max_size=int(g)))
            var = draw(st.sampled_from([0.1, 1.0, 7.0]))
            nodes.append(est(hg, var))
        estimates.append(LevelEstimates.from_nodes(nodes))
    return estimates, parents, groups
