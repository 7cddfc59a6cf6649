"""NodeCodes.locate and children: binary searches that equal a scan of the level, sorted or not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz.core.nodes import LabelColumns, NodeCodes
from cocoviz.errors import UnknownNode

paths_strategy = st.lists(st.tuples(*[st.sampled_from("abcd")] * 3), min_size=1, max_size=40)


def _scan(nodes: NodeCodes, path) -> int:
    """locate by one pass over each level (its first form)."""
    k = 0
    for lvl, label in enumerate(path, start=1):
        lab = list(nodes.labels[lvl])
        if label not in lab:
            raise UnknownNode(path)
        hit = np.flatnonzero((nodes.codes[lvl] == lab.index(label)) & (nodes.parents[lvl] == k))
        if not len(hit):
            raise UnknownNode(path)
        k = int(hit[0])
    return k


def _shuffled(nodes: NodeCodes, seed: int) -> NodeCodes:
    """The same tree with every level's nodes in a random order (parents renumbered): no longer sorted."""
    rng = np.random.default_rng(seed)
    codes, parents, where = [nodes.codes[0]], [nodes.parents[0]], np.zeros(1, np.int64)
    for lvl in range(1, nodes.depth + 1):
        order = rng.permutation(nodes.size(lvl))
        codes.append(nodes.codes[lvl][order])
        parents.append(where[nodes.parents[lvl][order]])
        where = np.empty(len(order), np.int64)
        where[order] = np.arange(len(order))
    return NodeCodes(nodes.labels, tuple(codes), tuple(parents))


@settings(max_examples=60, deadline=None)
@given(paths_strategy, st.integers(0, 3))
def test_locate_and_children_equal_a_scan(paths, seed):
    built, _ = NodeCodes.build(LabelColumns.from_paths(paths, 3))
    for nodes in (built, _shuffled(built, seed)):
        for lvl in range(nodes.depth + 1):
            for k in range(nodes.size(lvl)):
                path = nodes.path(lvl, k)
                assert nodes.locate(path) == _scan(nodes, path) == k
                if lvl < nodes.depth:
                    assert nodes.children(lvl, k).tolist() == np.flatnonzero(nodes.parents[lvl + 1] == k).tolist()
        for missing in (("e",), ("a", "e"), ("a", "b", "c", "d"), (paths[0][0], "e", "a")):
            with pytest.raises(UnknownNode):
                nodes.locate(missing)


def test_locate_on_narrow_codes_at_their_limit():
    # 300 nodes under one parent: codes and parents int16, the last parent index at int8's edge.
    paths = [(f"p{k:03d}", "x") for k in range(128)] + [("p127", f"c{k:03d}") for k in range(300)]
    nodes, _ = NodeCodes.build(LabelColumns.from_paths(paths, 2))
    assert nodes.parents[2].dtype == np.int8 and nodes.codes[2].dtype == np.int16
    assert nodes.locate(("p127", "x")) == nodes.size(2) - 1 and nodes.locate(("p127", "c299")) == nodes.size(2) - 2
    assert nodes.children(1, 127).tolist() == list(range(nodes.size(2) - 301, nodes.size(2)))
