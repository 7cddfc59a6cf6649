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

from cocoviz.hierarchy import node_labels
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
    frames = []
    for level in range(shape.depth + 1) if levels is None else levels:
        # A level at once on (nodes, classes, 2) arrays; the tables themselves are kept per node path.
        paths = shape.paths[level]
        est = np.stack([joint.table(path) for path in paths])
        true = np.stack([truth[path] for path in paths]).astype(np.int64)
        groups = true.sum(axis=(1, 2))
        g = np.maximum(groups, 1)
        err = est[:, :, 0].sum(axis=1) - true[:, :, 0].sum(axis=1)
        frames.append(
            pd.DataFrame(
                {
                    "level": np.full(len(paths), level, np.int64),
                    "node": node_labels(shape.node_codes, level).astype("str"),
                    "groups": groups,
                    "joint_l1": np.abs(est - true).sum(axis=(1, 2)) / g,
                    "size_l1": np.abs(est.sum(axis=2) - true.sum(axis=2)).sum(axis=1) / g,
                    "owners_error": err,
                    "tenure_l1": 2 * np.abs(err) / g,
                }
            )
        )
    if not frames:
        return pd.DataFrame(columns=EVALUATION_COLUMNS)
    return pd.concat(frames, ignore_index=True)
