"""One level's estimated runs with the variances the merge weighs by (:class:`LevelEstimates`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cocoviz.core.runs import LevelRuns, aggregate_runs
from cocoviz.methods.estimators import GroupEstimate

__all__ = ["LevelEstimates"]


class LevelEstimates:
    """The estimated runs of every node of one level (CSR, like :class:`LevelRuns`), with their variances.

    ``variances``: the paper's model of each run's group sizes (METHOD.md, "Variance of each estimated group
    size"), which the top-down merge weighs by and orders runs by.

    >>> est = LevelEstimates(np.array([0, 2, 3]), np.array([1, 4, 2]), np.array([3, 1, 2]), np.array([0.5, 2.0, 1.0]))
    >>> est.node_ids().tolist(), est.runs().sizes.tolist()
    ([0, 0, 1], [1, 4, 2])
    """

    def __init__(self, ptr: np.ndarray, sizes: np.ndarray, counts: np.ndarray, variances: np.ndarray):
        self.ptr, self.sizes, self.counts, self.variances = ptr, sizes, counts, variances

    @classmethod
    def from_nodes(cls, estimates: Sequence[GroupEstimate]) -> LevelEstimates:
        ptr = np.zeros(len(estimates) + 1, np.int64)
        np.cumsum([len(e.sizes) for e in estimates], out=ptr[1:])

        def cat(name, dtype):
            return (
                np.concatenate([getattr(e, name) for e in estimates]).astype(dtype) if estimates else np.zeros(0, dtype)
            )

        return cls(ptr, cat("sizes", np.int64), cat("counts", np.int64), cat("variances", np.float64))

    @classmethod
    def concat(cls, parts: Sequence[LevelEstimates]) -> LevelEstimates:
        """The estimates of consecutive runs of nodes, joined in order."""
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls(np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64))
        offsets = np.cumsum([0] + [len(p.sizes) for p in parts[:-1]])
        ptr = np.concatenate([[0]] + [p.ptr[1:] + o for p, o in zip(parts, offsets)]).astype(np.int64)
        return cls(
            ptr, *(np.concatenate([getattr(p, name) for p in parts]) for name in ("sizes", "counts", "variances"))
        )

    def node_ids(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.ptr) - 1), np.diff(self.ptr))

    def runs(self) -> LevelRuns:
        """Sizes and counts only, equal sizes of a node combined."""
        return aggregate_runs(self.node_ids(), self.sizes, self.counts, len(self.ptr) - 1)
