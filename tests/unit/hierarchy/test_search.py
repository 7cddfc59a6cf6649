"""cocoviz.hierarchy.search: the node finder against brute force over every node's path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz.core.nodes import LabelColumns, NodeCodes
from cocoviz.hierarchy.search import EXACT, PREFIX, SUBSTRING, LabelIndex, find_nodes, parse_query


def build(paths: list[tuple[str, ...]]) -> NodeCodes:
    return NodeCodes.build(LabelColumns.from_paths(paths, len(paths[0])))[0]


def brute_force(nodes: NodeCodes, query: str, limit: int) -> tuple[list[tuple[int, int, int]], int]:
    """Every node's (kind, level, index) by Python string operations on its path, best first."""
    parts = parse_query(query)
    found = []
    if not parts:
        return [], 0
    for level in range(1, nodes.depth + 1):
        for k in range(nodes.size(level)):
            path = nodes.path(level, k)
            if len(path) < len(parts):
                continue
            kinds = []
            for part, label in zip(parts, path[len(path) - len(parts) :]):
                label = label.lower()
                kind = PREFIX if label.startswith(part) else SUBSTRING if part in label else 3
                kinds.append(EXACT if label == part else kind)
            if max(kinds) < 3:
                found.append((max(kinds), level, k))
    found.sort()
    return found[:limit], len(found)


def as_triples(hits) -> list[tuple[int, int, int]]:
    return list(zip(hits.kinds.tolist(), hits.levels.tolist(), hits.indices.tolist()))


STATES = [("Texas", "Harris", "0100"), ("Texas", "Travis", "0100"), ("Texas", "Harris", "0200"),
          ("Harrison", "Ames", "0100"), ("Ohio", "Harris", "0300"), ("Ohio", "Allen", "1100")]  # fmt: skip


def test_ranking_exact_then_prefix_then_substring_shallow_first():
    nodes = build(STATES)
    hits = find_nodes(nodes, "Harris")
    shown = [(nodes.path(lvl, k), kind) for lvl, k, kind in zip(hits.levels, hits.indices, hits.kinds)]
    assert shown == [(("Ohio", "Harris"), EXACT), (("Texas", "Harris"), EXACT), (("Harrison",), PREFIX)]
    assert [nodes.path(lvl, k) for lvl, k in zip(*_hits(nodes, "arr"))] == [
        ("Harrison",), ("Ohio", "Harris"), ("Texas", "Harris")
    ]  # fmt: skip


def _hits(nodes, query, limit=50):
    hits = find_nodes(nodes, query, limit)
    return hits.levels, hits.indices


def test_a_path_names_a_node_through_its_ancestors_and_a_code_prefix_finds_deep_nodes():
    nodes = build(STATES)
    assert [nodes.path(lvl, k) for lvl, k in zip(*_hits(nodes, "texas / harris"))] == [("Texas", "Harris")]
    assert [nodes.path(lvl, k) for lvl, k in zip(*_hits(nodes, "Harris/01"))] == [("Texas", "Harris", "0100")]
    # A trailing "/" lists the children of what comes before it.
    assert [nodes.path(lvl, k) for lvl, k in zip(*_hits(nodes, "Ohio /"))] == [("Ohio", "Allen"), ("Ohio", "Harris")]
    assert find_nodes(nodes, "01").kinds.tolist() == [PREFIX] * 3
    assert find_nodes(nodes, "0100").kinds.tolist() == [EXACT] * 3


def test_limit_caps_the_results_and_total_counts_all():
    nodes = build(STATES)
    hits = find_nodes(nodes, "0", limit=2)
    assert len(hits) == 2 and hits.total == 6
    assert len(find_nodes(nodes, "0", limit=0)) == 0 and find_nodes(nodes, "  ").total == 0
    assert find_nodes(nodes, "nowhere").total == 0


def test_a_slash_inside_a_label_is_escaped_and_case_is_ignored():
    nodes = build([("a/b", "C"), ("a", "b/c")])
    assert [nodes.path(lvl, k) for lvl, k in zip(*_hits(nodes, "A\\/B / c"))] == [("a/b", "C")]
    assert [nodes.path(lvl, k) for lvl, k in zip(*_hits(nodes, "a / b\\/c"))] == [("a", "b/c")]


def test_the_index_is_built_once_per_hierarchy():
    nodes = build(STATES)
    assert not LabelIndex.built(nodes)
    assert LabelIndex.of(nodes) is LabelIndex.of(nodes) and LabelIndex.built(nodes)
    # ASCII levels are held as bytes (a quarter of the memory); a query beyond ASCII finds nothing there.
    assert [a.dtype.kind for a in LabelIndex.of(nodes).folded[1:]] == ["S"] * 3 and find_nodes(nodes, "é").total == 0
    mixed = build([("Évry", "x"), ("evry", "y")])
    assert LabelIndex.of(mixed).folded[1].dtype.kind == "U"
    assert [mixed.path(lvl, k) for lvl, k in zip(*_hits(mixed, "évry"))] == [("Évry",)]
    assert as_triples(find_nodes(LabelIndex.build(nodes), "har")) == as_triples(find_nodes(nodes, "har"))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(*[st.sampled_from(["ab", "Abc", "b", "ca", "a/b", "É", "ab c"])] * 3), min_size=1, max_size=25),
    st.lists(st.sampled_from(["a", "b", "ab", "c", "É", "é", "/", " ", "\\/", "x"]), min_size=1, max_size=4),
    st.integers(0, 8),
)
def test_matches_brute_force(paths, words, limit):
    nodes = build(paths)
    query = "".join(words)
    expected, total = brute_force(nodes, query, limit)
    hits = find_nodes(nodes, query, limit)
    assert as_triples(hits) == expected and hits.total == total


@pytest.mark.parametrize("query", ["Texas", "harris / 0"])
def test_hits_are_integer_arrays(query):
    hits = find_nodes(build(STATES), query)
    assert hits.levels.dtype == np.int64 and hits.indices.dtype == np.int64


def _folded_reference(labels: np.ndarray) -> np.ndarray:
    """The index's folded labels as first built: fixed-width unicode, lower-cased, then bytes if all ASCII."""
    text = labels.astype(str) if len(labels) else np.zeros(0, str)
    cased = ~np.strings.isdigit(text)
    if cased.any():
        text[cased] = np.strings.lower(text[cased])
    try:
        return text.astype(np.bytes_)
    except UnicodeEncodeError:
        return text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="aZq09 -/_ÉéßİΣ@[`{", max_size=6), min_size=1, max_size=12))
def test_the_folded_labels_equal_their_first_form(labels):
    nodes = build([(label, "x") for label in labels] + [("AB", "000123"), ("ab", "Tract 9")])
    index = LabelIndex.build(nodes)
    for lvl in range(1, nodes.depth + 1):
        expected = _folded_reference(nodes.labels[lvl])
        assert index.folded[lvl].dtype == expected.dtype and index.folded[lvl].tolist() == expected.tolist()
