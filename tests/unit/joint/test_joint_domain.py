"""node_tables on integer codes equals its first, row-by-row form."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz.joint.domain import SIZE_EDGES, node_tables, size_classes


def _per_row_tables(table: pd.DataFrame, levels, edges=SIZE_EDGES) -> dict:
    """node_tables as first written: one Python tuple per row and level (the reference)."""
    n = len(edges)
    cls = size_classes(table["size"].to_numpy(), edges)
    values = table[["owners", "renters"]].to_numpy()
    labels = [table[c].astype(str).to_numpy() for c in levels]
    out = {}
    for depth in range(len(levels) + 1):
        keys = list(zip(*labels[:depth])) if depth else [()] * len(table)
        uniq = sorted(set(keys))
        index = {k: i for i, k in enumerate(uniq)}
        rows = np.fromiter((index[k] for k in keys), np.int64, len(keys))
        acc = np.zeros((len(uniq), n, 2), values.dtype)
        np.add.at(acc, (rows, cls), values)
        out.update({tuple(k): acc[i] for i, k in enumerate(uniq)})
    return out


def _assert_same(got: dict, expected: dict) -> None:
    assert list(got) == list(expected)
    for key, t in expected.items():
        assert got[key].dtype == t.dtype and np.array_equal(got[key], t)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["b", "a", "É", "a/b"]), st.integers(0, 3), st.integers(0, 12), st.integers(0, 5)),
        min_size=1,
        max_size=30,
    ),
    st.booleans(),
)
def test_node_tables_equal_the_per_row_form(rows, floats):
    table = pd.DataFrame(rows, columns=["state", "county", "size", "owners"])
    table["renters"] = table["owners"] * 2 + 1
    if floats:
        table[["owners", "renters"]] = table[["owners", "renters"]] * 0.5
        table["county"] = table["county"].astype("category")
    for levels in ([], ["state"], ["state", "county"], ["county", "state"]):
        _assert_same(node_tables(table, levels), _per_row_tables(table, levels))


@pytest.mark.parametrize("levels", [[], ["state"]])
def test_node_tables_of_an_empty_table(levels):
    table = pd.DataFrame({"state": pd.Series([], dtype=str), "size": [], "owners": [], "renters": []})
    _assert_same(node_tables(table, levels), _per_row_tables(table, levels))


def _per_node_evaluation(table: pd.DataFrame, joint) -> pd.DataFrame:
    """evaluate_joint as first written: one row tuple per node (the reference)."""
    from cocoviz.hierarchy import node_label
    from cocoviz.joint.evaluate import EVALUATION_COLUMNS, true_tables

    truth = true_tables(table, joint)
    shape = joint.shape
    rows = []
    for level in range(shape.depth + 1):
        for path in shape.paths[level]:
            est, true = joint.table(path), truth[path].astype(np.int64)
            g = max(int(true.sum()), 1)
            err = int(est[:, 0].sum() - true[:, 0].sum())
            rows.append(
                (
                    level,
                    node_label(path),
                    int(true.sum()),
                    float(np.abs(est - true).sum() / g),
                    float(np.abs(est.sum(axis=1) - true.sum(axis=1)).sum() / g),
                    err,
                    2 * abs(err) / g,
                )
            )
    return pd.DataFrame(rows, columns=EVALUATION_COLUMNS)


@pytest.mark.parametrize("prior", ["independent", "uniform"])
def test_evaluate_joint_equals_the_per_node_form(prior):
    from cocoviz.datasets.tenure import tenure_table
    from cocoviz.hierarchy import Hierarchy
    from cocoviz.joint import estimate_joints, evaluate_joint

    rng = np.random.default_rng(5)
    groups = pd.DataFrame({"leaf": rng.integers(0, 12, 400), "size": rng.geometric(0.4, 400)})
    groups["state"], groups["county"] = "s" + (groups["leaf"] // 5).astype(str), "c" + groups["leaf"].astype(str)
    groups.loc[:3, "size"] = 0  # a few empty groups
    tree = Hierarchy.from_groups(groups, size="size", levels=["state", "county"])
    table = tenure_table(tree, seed=3)
    _, _, joints = estimate_joints(
        tree, table, {prior: prior}, size_epsilons=[1.0] * 3, tenure_epsilons=[0.5] * 3, max_size=tree.max_size, seed=2
    )
    got, expected = evaluate_joint(table, joints[prior]), _per_node_evaluation(table, joints[prior])
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
