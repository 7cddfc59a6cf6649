"""Two releases side by side: the level-at-once comparison equals the node-by-node one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cocoviz
from cocoviz.errors import InputError
from cocoviz.evaluate.compare import release_differences, same_nodes
from cocoviz.evaluate.metrics import emd
from cocoviz.hierarchy import node_label
from tests.unit.consistency.test_consistency import sparse_tree


def _per_node_differences(a, b) -> pd.DataFrame:
    """The comparison as it was first written, one histogram per node: the reference."""
    rows = []
    shape = a.plan.shape
    for level in range(shape.depth + 1):
        for node in shape.paths[level]:
            ha, hb = a.histogram(node), b.histogram(node)
            rows.append(
                {
                    "level": level,
                    "node": node_label(node),
                    "groups": int(ha.sum()),
                    "persons_a": a.persons(node),
                    "persons_b": b.persons(node),
                    "emd_between": int(emd(ha, hb)),
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("methods", [["Hc", "Hc", "Hc"], ["Hg", "Hc", "Hg"], ["Hc", "Hg", "naive"]])
def test_release_differences_equal_the_per_node_form(methods):
    tree = sparse_tree()
    a = cocoviz.estimate(tree, epsilons=[1, 0.5, 0.5], methods=methods, max_size=8, seed=1)
    b = cocoviz.estimate(tree, epsilons=[0.2, 0.2, 0.2], methods=["Hc"] * 3, max_size=8, seed=2)
    for x, y in ((a, b), (b, a), (a, a)):
        got = release_differences(x, y)
        pd.testing.assert_frame_equal(got, _per_node_differences(x, y), check_exact=True)
    assert np.all(release_differences(a, a)["emd_between"] == 0)


def test_release_differences_refuse_other_nodes():
    a = cocoviz.estimate(sparse_tree(), epsilons=[1, 1, 1], methods=["Hc"] * 3, max_size=8, seed=1)
    toy = cocoviz.estimate(cocoviz.load_dataset("toy"), epsilons=[1, 1], methods=["Hc"] * 2, max_size=8, seed=1)
    assert same_nodes(a, a) and not same_nodes(a, toy)
    with pytest.raises(InputError):
        release_differences(a, toy)
