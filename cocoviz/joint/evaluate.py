"""The joint tables against the truth, per region: for the data holder, never for publication.

Reads the private tenure table (exploration, not private).  Per node:

* ``joint_l1`` — Tao et al.'s metric, the L1 distance of the joint distributions,
  ``‖T̂ / G − T / G‖₁`` over the size classes × tenure cells (0 … 2);
* ``size_l1`` — the size margin's ``‖n̂ − n‖₁ / G``;
* ``owners_error`` — ``Ô − O`` (whole households) and ``tenure_l1`` = ``2 |Ô − O| / G``, the
  tenure margin's L1 distance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.hierarchy import node_label
from cocoviz.joint.domain import node_tables
from cocoviz.joint.estimate import JointRelease

__all__ = ["EVALUATION_COLUMNS", "true_tables", "evaluate_joint"]

EVALUATION_COLUMNS = ["level", "node", "groups", "joint_l1", "size_l1", "owners_error", "tenure_l1"]


def true_tables(table: pd.DataFrame, joint: JointRelease) -> dict[tuple[str, ...], np.ndarray]:
    """The true ``(classes, 2)`` table of every node of the joint release's hierarchy (private)."""
    return node_tables(table, list(joint.shape.levels), joint.edges)


def evaluate_joint(table: pd.DataFrame, joint: JointRelease, levels: list[int] | None = None) -> pd.DataFrame:
    """One row per node (of ``levels``, default all): the errors of the module docstring."""
    truth = true_tables(table, joint)
    shape = joint.shape
    rows = []
    for level in range(shape.depth + 1) if levels is None else levels:
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
