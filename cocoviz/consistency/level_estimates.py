"""One level's estimated runs with their two variances (:class:`LevelEstimates`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cocoviz.core.runs import LevelRuns, aggregate_runs, aggregate_weighted
from cocoviz.methods.estimators import GroupEstimate

__all__ = ["LevelEstimates"]


class LevelEstimates:
    """The estimated runs of every node of one level (CSR, like :class:`LevelRuns`), with variances.

    ``variances``: the paper's model, which the top-down merge weighs by and orders runs by; ``stated``:
    the calibrated variance of each run's group sizes (issue 24, docs/merge-variances.md), stated to
    users and never used by the merge's arithmetic, so releases do not depend on it.  Without a better
    model ``stated`` is ``variances`` itself.  ``stated_runs``: the stated variance of each run before it was
    pooled per node and size (an Hg fit's block rule, run by run), read only by
    :func:`~cocoviz.consistency.merge.merge_stated` for a parent's part; without one, ``stated``.
    """

    def __init__(
        self,
        ptr: np.ndarray,
        sizes: np.ndarray,
        counts: np.ndarray,
        variances: np.ndarray,
        stated: np.ndarray | None = None,
        stated_runs: np.ndarray | None = None,
    ):
        self.ptr, self.sizes, self.counts, self.variances = ptr, sizes, counts, variances
        # Shared, not copied, when there is no better model: neither array is ever written in place.
        self.stated = np.asarray(variances, np.float64) if stated is None else stated
        self._stated_runs = stated_runs

    @property
    def stated_runs(self) -> np.ndarray:
        return self.stated if self._stated_runs is None else self._stated_runs

    @classmethod
    def from_nodes(cls, estimates: Sequence[GroupEstimate]) -> LevelEstimates:
        ptr = np.zeros(len(estimates) + 1, np.int64)
        np.cumsum([len(e.sizes) for e in estimates], out=ptr[1:])

        def cat(name, dtype):
            return (
                np.concatenate([getattr(e, name) for e in estimates]).astype(dtype) if estimates else np.zeros(0, dtype)
            )

        stated = (
            np.concatenate([e.variances if e.stated is None else e.stated for e in estimates]).astype(np.float64)
            if estimates
            else np.zeros(0, np.float64)
        )
        runs = None  # before pooling (Hg): only where some node has it
        if any(e.stated_runs is not None for e in estimates):
            runs = np.concatenate(
                [next(a for a in (e.stated_runs, e.stated, e.variances) if a is not None) for e in estimates]
            ).astype(np.float64)
        return cls(ptr, cat("sizes", np.int64), cat("counts", np.int64), cat("variances", np.float64), stated, runs)

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
            ptr,
            *(np.concatenate([getattr(p, name) for p in parts]) for name in ("sizes", "counts", "variances", "stated")),
            None if all(p._stated_runs is None for p in parts) else np.concatenate([p.stated_runs for p in parts]),
        )

    def node_ids(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.ptr) - 1), np.diff(self.ptr))

    def runs(self) -> LevelRuns:
        """Sizes and counts only, equal sizes of a node combined."""
        return aggregate_runs(self.node_ids(), self.sizes, self.counts, len(self.ptr) - 1)

    def released(self, stated_out: list | None) -> LevelRuns:
        """:meth:`runs`; with ``stated_out`` (a list) the stated variance of every run's groups appended to it."""
        if stated_out is None:
            return self.runs()
        runs, stated = aggregate_weighted(self.node_ids(), self.sizes, self.counts, len(self.ptr) - 1, self.stated)
        stated_out.append(stated)
        return runs
