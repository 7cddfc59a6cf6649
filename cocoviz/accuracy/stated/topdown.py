"""The experimental stated errors of a release, computed on request from its fits and the consistency step's
matched pairs (docs/merge-variances.md).

**Experimental.**  Each released group's size carries a *stated variance*: a calibrated guess at its mean squared
error, computed from the release's estimates and public facts only (post-processing, no ε).  It is never read by
the release's arithmetic: a release is the same, bit for bit, with or without it.  Its rules are frozen: no new
dataset-specific patches or constants fitted on bundled data.  Measured limits (``benchmarks/merge_calibration.py``
and the 100-trial sweeps of docs/merge-variances.md): on workloads it was not tuned on, its mean z² ranges
0.39–1.19 by level (1 is calibrated), and computing it adds to a release's time (``benchmarks/scale.py`` prints the
added cost beside the release without it).

The steps, each one a reader of what the engine did:

1. :func:`fitted_stated`: a measured level's statements from its independent fit (Hc: the size variances of a rank
   shift, :func:`~cocoviz.accuracy.stated.variances.hc_stated`; Hg: the step model or the block rule,
   :func:`~cocoviz.accuracy.stated.variances.hg_stated_runs`, pooled per node and size; other methods: the merge's
   own variances).
2. :class:`TopDownStatements`: the reader :func:`cocoviz.consistency.top_down` hands every slice's
   :class:`~cocoviz.consistency.MatchedPairs` to.  Per pair it states the merged child's group
   (:func:`~cocoviz.accuracy.stated.merged.merge_stated`, shared among the children holding the size:
   :func:`~cocoviz.accuracy.stated.sharing.sharing_within`; capped for an Hg child:
   :func:`~cocoviz.accuracy.stated.variances.hg_merged_stated`) and the step's union at the parents' level
   (:func:`~cocoviz.accuracy.stated.released.step_stated`); the merged children's statements are handed down to
   the next step, and the released levels' are read at the end (:meth:`TopDownStatements.released`).
3. :func:`release_statements`: the whole thing for a plan's consistency (top-down, bottom-up or none).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from cocoviz.accuracy.stated.merged import merge_stated
from cocoviz.accuracy.stated.released import StepStatements, step_stated, union_levels, union_stated
from cocoviz.accuracy.stated.sharing import sharing_within
from cocoviz.accuracy.stated.variances import hc_stated, hg_merged_stated, hg_stated_runs, pool_by_size
from cocoviz.consistency import LevelEstimates, MatchedPairs, merge_children, top_down
from cocoviz.core.runs import LevelRuns, aggregate_weighted, sums_up
from cocoviz.methods.estimators import HC_SENSITIVITY, hg_noise_variance

__all__ = ["StatedEstimates", "fitted_stated", "TopDownStatements", "merged_statements", "release_statements"]


class StatedEstimates:
    """A level's :class:`~cocoviz.consistency.LevelEstimates` with the stated variance of each run's groups.

    ``stated``: pooled per node and size; ``stated_runs``: before that pooling (an Hg fit's rule, run by run), or
    None where there was no pooling (then :attr:`stated_runs` is ``stated``).
    """

    def __init__(self, estimates: LevelEstimates, stated: np.ndarray, stated_runs: np.ndarray | None = None):
        self.estimates = estimates
        self.ptr, self.sizes, self.counts = estimates.ptr, estimates.sizes, estimates.counts
        self.variances = estimates.variances
        self.stated, self._stated_runs = stated, stated_runs

    @property
    def stated_runs(self) -> np.ndarray:
        return self.stated if self._stated_runs is None else self._stated_runs

    @property
    def pooled(self) -> bool:
        """Whether the statements were pooled per size from run-by-run ones (an Hg fit's)."""
        return self._stated_runs is not None

    def node_ids(self) -> np.ndarray:
        return self.estimates.node_ids()

    def part(self, pairs_estimates: LevelEstimates, run_lo: int) -> StatedEstimates:
        """The statements of a slice of this level (its runs from ``run_lo``, its estimates ``pairs_estimates``)."""
        a, b = run_lo, run_lo + len(pairs_estimates.sizes)
        runs = None if self._stated_runs is None else self._stated_runs[a:b]
        return StatedEstimates(pairs_estimates, self.stated[a:b], runs)

    def released(self) -> tuple[LevelRuns, np.ndarray]:
        """The released runs (equal sizes of a node combined) and their groups' stated variance (float32)."""
        e = self.estimates
        return aggregate_weighted(e.node_ids(), e.sizes, e.counts, len(e.ptr) - 1, self.stated)


def fitted_stated(
    method: str, estimates: LevelEstimates, *, epsilon: float, p: int | None, bounds: np.ndarray | None
) -> StatedEstimates:
    """The statements of one level's independent fit from the fit and public facts only (no ε).

    ``method``: the level's method name; ``epsilon`` and ``p`` its budget and loss; ``bounds`` K per node (Hc).

    >>> est = LevelEstimates(np.array([0, 2]), np.array([1, 2]), np.array([500, 500]), np.array([0.004, 0.004]))
    >>> fitted_stated("naive", est, epsilon=1.0, p=None, bounds=None).stated.tolist()
    [0.004, 0.004]
    >>> bool((fitted_stated("Hc", est, epsilon=1.0, p=1, bounds=np.array([10])).stated < 1).all())
    True
    """
    ptr, sizes, counts, variances = estimates.ptr, estimates.sizes, estimates.counts, estimates.variances
    if method == "Hg":
        noise = hg_noise_variance(epsilon)
        runs = hg_stated_runs(ptr, sizes, counts, variances, noise if p == 2 else None)
        return StatedEstimates(estimates, pool_by_size(ptr, sizes, counts, runs), runs)
    if method == "Hc":
        return StatedEstimates(estimates, hc_stated(ptr, sizes, counts, HC_SENSITIVITY / epsilon, bounds))
    return StatedEstimates(estimates, np.asarray(variances, np.float64))


class TopDownStatements:
    """The reader of :func:`cocoviz.consistency.top_down`'s matched pairs that states every released level.

    Call it as ``top_down(estimates, parents, merge, on_pairs=statements)``, then
    :meth:`released` with the released levels.  ``fitted``: every level's :func:`fitted_stated`, root first.
    """

    def __init__(self, fitted: Sequence[StatedEstimates], merge: str):
        self.fitted, self.merge, self.last = list(fitted), merge, len(fitted) - 1
        self.steps = StepStatements(self.last)
        self._parents = self.fitted[0]  # the statements of the level whose merged groups are the parents
        self._level = 1
        self._merged: list[StatedEstimates] = []  # the merged children of the step in progress, slice by slice
        self._leaves: list[np.ndarray] = []  # the leaves' released statements, slice by slice

    def __call__(self, level: int, pairs: MatchedPairs) -> None:
        if level != self._level:  # the previous step is done: its merged children are the next step's parents
            self._parents = _concat(self._merged)
            self._merged, self._level = [], level
        parents = self._parents.part(pairs.parents, pairs.parent_run_lo)
        children = self.fitted[level].part(pairs.children, pairs.child_run_lo)
        stated = self._merged_stated(level, pairs, parents, children)
        if level == self.last:
            self._leaves.append(StatedEstimates(pairs.result, stated).released()[1])
        else:
            self._merged.append(StatedEstimates(pairs.result, stated))

    def _merged_stated(
        self, level: int, pairs: MatchedPairs, parents: StatedEstimates, children: StatedEstimates
    ) -> np.ndarray:
        """Per merged run of the slice, the stated variance of its groups; the step's union statements kept."""
        top, bottom, counts, order = pairs.top, pairs.bottom, pairs.counts, pairs.order
        va, vb = parents.variances[top], children.variances[bottom]
        sa, sb = parents.stated[top], children.stated[bottom]
        by_run = np.empty(len(order), np.int64)  # sharing, computed in the matching's order, back per child run
        by_run[order] = sharing_within(
            pairs.bot_ptr, children.sizes[order], pairs.child_of_run[order], children.stated[order]
        )
        stated = merge_stated(va, vb, sa, sb, self.merge, by_run[bottom], parents.stated_runs[top])
        del by_run
        node = pairs.parent_of_run[bottom]
        if children.pooled:  # an Hg child: its variances are its blocks' noise ("Small Hg nodes")
            stated = hg_merged_stated(stated, sa, sb, parents, node, children, bottom, pairs.merged)
        del sa, sb
        of = pairs.child_of_run
        union = union_stated(of, pairs.parent_of_run, children.sizes, children.counts, children.stated)
        at_parent = step_stated(parents, children, union, node, top, bottom, va, vb, self.merge, counts)
        del union
        self.steps.add(level - 1, node + pairs.parent_lo, np.rint(pairs.merged).astype(np.int64), counts, at_parent)
        # The merged runs' statements: a run combines pairs of one child, size and weight variance, and states
        # its groups' mean (which keeps the expected sum of z² over its groups).
        stated, count = stated[pairs.pair_order], counts[pairs.pair_order]
        if len(pairs.pair_order):
            weighted = np.add.reduceat(stated * count, pairs.run_starts)
            count = np.add.reduceat(count, pairs.run_starts)
            stated = np.divide(weighted, count, out=np.zeros_like(weighted), where=count > 0)
        merged = pairs.result
        # A child's runs of one size (split by the weights' variance) state one variance: their mean.
        return pool_by_size(merged.ptr, merged.sizes, merged.counts, stated)

    def released(self, levels: Sequence[LevelRuns], parents: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        """Per released level (``levels``: :func:`~cocoviz.consistency.top_down`'s), the stated variance of every
        run's groups (float32): the leaves' merged groups', and above them the step's union
        (:class:`~cocoviz.accuracy.stated.released.StepStatements`; a released size the step lacks keeps the
        leaves' pooled up)."""
        if self.last == 0:
            return [self.fitted[0].released()[1]]
        stated = np.concatenate(self._leaves)
        self._leaves = []
        means = sums_up(levels[self.last], parents, [len(r.ptr) - 1 for r in levels], stated)[1]
        return [self.steps.released(a, levels[a], means[a]) for a in range(self.last)] + [means[self.last]]


def merged_statements(
    parents: StatedEstimates, children: StatedEstimates, parent_of: np.ndarray, merge: str
) -> StatedEstimates:
    """One top-down step with statements: the merged children (:func:`~cocoviz.consistency.merge_children`) and the
    stated variance of each merged run's groups, as the next step reads them (no step statements kept).

    >>> root = StatedEstimates(LevelEstimates(np.array([0, 1]), np.array([2]), np.array([2]), np.array([1.0])),
    ...                        np.array([1.0]))
    >>> kids = StatedEstimates(LevelEstimates(np.array([0, 1, 2]), np.array([1, 4]), np.array([1, 1]),
    ...                                       np.array([1.0, 1.0])), np.array([1.0, 1.0]))
    >>> merged = merged_statements(root, kids, np.array([0, 0]), "weighted")
    >>> merged.sizes.tolist(), merged.stated.tolist()
    ([2, 3], [0.5, 0.5])
    """
    reader = TopDownStatements([parents, children, children], merge)  # a level below: the step's children are kept
    merge_children(parents.estimates, children.estimates, parent_of, merge, on_pairs=lambda pairs: reader(1, pairs))
    return _concat(reader._merged)


def _concat(parts: Sequence[StatedEstimates]) -> StatedEstimates:
    return StatedEstimates(
        LevelEstimates.concat([p.estimates for p in parts]),
        np.concatenate([p.stated for p in parts]) if len(parts) != 1 else parts[0].stated,
    )


def release_statements(
    consistency: str,
    merge: str,
    fitted: Sequence[StatedEstimates],
    parents: Sequence[np.ndarray | None],
    n_nodes: Sequence[int],
    run_top_down: Callable[[TopDownStatements], list[LevelRuns]] | None = None,
) -> tuple[list[LevelRuns], list[np.ndarray]]:
    """The released levels and every level's statements (float32 per released run, root first) under
    ``consistency``: ``"top-down"`` (:class:`TopDownStatements`; ``run_top_down(reader)`` runs the consistency
    step with it, by default :func:`~cocoviz.consistency.top_down` on the fits), ``"bottom-up"`` (the union's,
    :func:`~cocoviz.accuracy.stated.released.union_levels`) or ``"none"`` (each level's own fit's).

    A root of four groups over two leaves, every run stating 4 (whole-size errors) and weighed equally: the root
    states the textbook merge of its pairs, ``(4 + 4) / 4 = 2``; each leaf shares the root's correction with the
    other leaf (sizes 1 and 3 lie within one standard deviation, 2, of each other): ``4 · ½ + 2 / 2 = 3``.

    >>> root = LevelEstimates(np.array([0, 2]), np.array([1, 3]), np.array([2, 2]), np.array([1.0, 1.0]))
    >>> leaves = LevelEstimates(np.array([0, 1, 2]), np.array([1, 3]), np.array([2, 2]), np.array([1.0, 1.0]))
    >>> fitted = [StatedEstimates(root, np.full(2, 4.0)), StatedEstimates(leaves, np.full(2, 4.0))]
    >>> levels, stated = release_statements("top-down", "weighted", fitted, [None, np.array([0, 0])], [1, 2])
    >>> levels[0].sizes.tolist(), [s.tolist() for s in stated]
    ([1, 3], [[2.0, 2.0], [3.0, 3.0]])
    """
    if consistency == "top-down":
        reader = TopDownStatements(fitted, merge)
        if run_top_down is None:
            levels = top_down([f.estimates for f in fitted], parents, merge, on_pairs=reader)
        else:
            levels = run_top_down(reader)
        return levels, reader.released(levels, parents)
    if consistency == "none":
        released = [f.released() for f in fitted]
        return [r for r, _ in released], [s for _, s in released]
    return union_levels(fitted[-1], parents, n_nodes)
