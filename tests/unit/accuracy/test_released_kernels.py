"""The compiled passes of cocoviz.accuracy.stated.released against plain Python references, on random runs."""

from __future__ import annotations

import numpy as np
import pytest

from cocoviz.accuracy.stated.merged import UNIT_ERRORS
from cocoviz.accuracy.stated.released import _by_node_size, _groups, union_stated


def _runs(seed: int, nodes: int = 12, sorted_sizes: bool = True):
    rng = np.random.default_rng(seed)
    per_node = rng.integers(0, 6, nodes)
    node = np.repeat(np.arange(nodes), per_node)
    sizes = rng.integers(0, 7, len(node))
    if sorted_sizes:
        sizes = np.concatenate([np.sort(sizes[node == k]) for k in range(nodes)]).astype(np.int64)
    counts = rng.integers(0, 50, len(node)).astype(np.float64)
    stated = np.where(rng.random(len(node)) < 0.7, rng.random(len(node)) * 0.5, 1 + rng.random(len(node)) * 4)
    up = np.sort(rng.integers(0, 4, nodes))[node]
    return node, up, sizes, counts, stated


def _union_reference(node, up, sizes, counts, stated):
    out = np.zeros(len(sizes))
    for a in set(up.tolist()):
        for s in set(sizes[up == a].tolist()):
            members = (up == a) & (sizes == s)
            n = counts[members].sum()
            dense_per_node = {}
            linear = 0.0
            for i in np.flatnonzero(members):
                if stated[i] < UNIT_ERRORS:
                    dense_per_node[node[i]] = dense_per_node.get(node[i], 0.0) + counts[i] * stated[i]
                else:
                    linear += counts[i] * stated[i]
            quadrature = np.sqrt(sum(v * v for v in dense_per_node.values()))
            out[members] = (quadrature + linear) / (n if n > 0 else 1.0)
    return out


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("sorted_sizes", [True, False])
def test_union_stated_equals_the_reference(seed, sorted_sizes):
    node, up, sizes, counts, stated = _runs(seed, sorted_sizes=sorted_sizes)
    np.testing.assert_allclose(
        union_stated(node, up, sizes, counts, stated), _union_reference(node, up, sizes, counts, stated), rtol=1e-12
    )
    as_float32 = union_stated(node, up, sizes, counts, stated, np.float32)
    assert as_float32.dtype == np.float32


@pytest.mark.parametrize("seed", range(10))
def test_groups_number_pairs_in_lexicographic_order(seed):
    node, _, sizes, _, _ = _runs(seed)
    codes = _groups(node, sizes)
    pairs = sorted(set(zip(node.tolist(), sizes.tolist(), strict=True)))
    rank = {p: i for i, p in enumerate(pairs)}
    assert codes.tolist() == [rank[p] for p in zip(node.tolist(), sizes.tolist(), strict=True)]


@pytest.mark.parametrize("seed", range(10))
def test_runs_out_of_node_order_take_the_hash_pass_and_agree(seed):
    node, up, sizes, counts, stated = _runs(seed)
    order = np.random.default_rng(seed).permutation(len(node))
    node, up, sizes, counts, stated = node[order], up[order], sizes[order], counts[order], stated[order]
    np.testing.assert_allclose(
        union_stated(node, up, sizes, counts, stated), _union_reference(node, up, sizes, counts, stated), rtol=1e-12
    )


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("sorted_nodes", [True, False])
def test_by_node_size_sums_each_pair_in_node_then_size_order(seed, sorted_nodes):
    node, _, sizes, counts, stated = _runs(seed, sorted_sizes=False)
    if not sorted_nodes:  # the hash pass
        order = np.random.default_rng(seed).permutation(len(node))
        node, sizes, counts, stated = node[order], sizes[order], counts[order], stated[order]
    pairs = sorted(p for p in set(zip(node.tolist(), sizes.tolist(), strict=True)))
    expected = []
    for k, s in pairs:
        members = (node == k) & (sizes == s)
        if counts[members].sum() > 0:
            expected.append((k, s, counts[members].sum(), (stated[members] * counts[members]).sum()))
    got = _by_node_size(node, sizes, counts, stated)
    assert [(int(a), int(b)) for a, b in zip(got[0], got[1], strict=True)] == [e[:2] for e in expected]
    np.testing.assert_allclose(got[2], [e[2] for e in expected], rtol=1e-12)
    np.testing.assert_allclose(got[3], [e[3] for e in expected], rtol=1e-12)
