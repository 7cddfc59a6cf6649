"""Everything after the noisy measurements: per-node fits, consistency, the release.

:func:`post_process` reads a :class:`~cocoviz.measure.measurements.Measurements` and the
plan's public facts, never the private tree: isotonic regression and rounding
per node (:func:`fit_level`), then the plan's consistency — the paper's
top-down matching and merging with back-substitution, bottom-up sums, or
none.  Being post-processing, it costs no ε.

**The parent prior** (Hcp levels with ``prior="parent"``): a node's prior is its parent's
*released* histogram, so level l + 1 is fitted only after level l is consistent
(:func:`release_levels`): under top-down the parent's merged groups (what the matching hands
down), otherwise its own estimate.  The child's estimate then depends on the parent's, and
merging the two by inverse variance would count the parent's information twice.  **Rule:** such a
child's variances carry only what its own measurement says, its bucket counts: the within-bucket
term is the uniform's ``(w² − 1)/12``, whatever the parent's shape inside the bucket
(:mod:`cocoviz.methods.hcp`).  Its sizes still follow the parent's shape, but weigh in the merge only
as much as bucket-level information does (``parent_correction=False`` turns the rule off, for
experiments).

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> from cocoviz.measure.measurements import measure
>>> from cocoviz.plan import Plan
>>> tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}),
...                              size="size", levels=["region"])
>>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=8)
>>> release = post_process(plan, measure(plan, tree, seed=0))
>>> release.is_consistent(), release.budget.total == plan.cost().total
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from cocoviz.accuracy.intervals.bands import LevelBands, measurement_bands
from cocoviz.consistency import LevelEstimates, merge_children, top_down
from cocoviz.core.runs import LevelRuns, sums_up
from cocoviz.measure.measurements import LevelMeasurement, Measurements, level_bounds
from cocoviz.measure.schedule import check_workers, has_level_kernels, map_level, map_nodes
from cocoviz.methods.estimators import GroupEstimate
from cocoviz.plan import Plan
from cocoviz.release.release import Release
from cocoviz.release.verify import check_measurements

__all__ = [
    "post_process",
    "fit_level",
    "fit_nodes",
    "node_fitter",
    "level_fitter",
    "consistent_levels",
    "release_levels",
    "release_of",
    "fitted_on_parent",
]


def _prior_of(plan: Plan, level: int, k: int, parent: LevelEstimates | None, correction: bool) -> dict:
    """The Hcp fit's prior arguments for node ``k`` of ``level`` (``parent``: the parent level's estimates)."""
    if plan.prior.kind != "parent":
        return {"prior": plan.prior.for_node(plan.shape.paths[level][k])}
    if level == 0 or parent is None:  # the root has no parent: uniform
        return {}
    up = int(plan.shape.parent_index(level)[k])
    lo, hi = parent.ptr[up], parent.ptr[up + 1]
    return {"prior": (parent.sizes[lo:hi], parent.counts[lo:hi].astype(np.float64)), "parent_prior": correction}


def node_fitter(
    plan: Plan,
    level: int,
    bounds: np.ndarray | None = None,
    parent: LevelEstimates | None = None,
    *,
    parent_correction: bool = True,
) -> Callable[[int, np.ndarray], GroupEstimate]:
    """``fit(k, noisy)``: node ``k`` of ``level``'s estimate from its noisy answer and public facts only.

    ``bounds`` is the K of each node the answers were measured with; ``parent`` the parent level's
    released estimates, for Hcp levels with the parent prior.
    """
    method, p, eps = plan.level_method(level), plan.ps[level], plan.fit_epsilon(level)
    groups = plan.shape.group_counts(level)

    def fit(k: int, noisy: np.ndarray) -> GroupEstimate:
        bound = int(bounds[k]) if bounds is not None else None
        extra = _prior_of(plan, level, k, parent, parent_correction) if method.name == "Hcp" else {}
        return method.fit(noisy, groups=int(groups[k]), epsilon=eps, p=p, max_size=bound, **extra)

    return fit


def fit_nodes(
    plan: Plan,
    level: int,
    lo: int,
    noisy: np.ndarray,
    ptr: np.ndarray,
    bounds: np.ndarray | None = None,
    parent: LevelEstimates | None = None,
    threads: int | None = 1,
    *,
    parent_correction: bool = True,
) -> LevelEstimates:
    """The estimates of nodes ``lo, lo + 1, ...`` of ``level`` (a batch of :func:`cocoviz.measure.schedule.map_level`)
    from their noisy answers, the segments ``ptr`` of ``noisy``, and public facts only.

    Hc and Hg batches are one compiled call; the other methods go node by node, on ``threads`` threads.
    ``bounds`` is K per node of the level; ``parent`` the parent level's released estimates (Hcp levels with
    the parent prior).
    """
    if has_level_kernels(plan.level_method(level)):
        return level_fitter(plan, level)(lo, lo + len(ptr) - 1, noisy, ptr)
    fit = node_fitter(plan, level, bounds, parent, parent_correction=parent_correction)
    fits = map_nodes(lambda s: fit(lo + s, noisy[ptr[s] : ptr[s + 1]]), len(ptr) - 1, threads)
    return LevelEstimates.from_nodes(fits)


def fit_level(
    plan: Plan,
    measured: LevelMeasurement,
    workers: int | None = None,
    parent: LevelEstimates | None = None,
    *,
    parent_correction: bool = True,
) -> LevelEstimates:
    """Independent estimates of every node of one level from its noisy answers and public G, batch by batch
    (:func:`cocoviz.measure.schedule.map_level`, :func:`fit_nodes`).

    ``parent`` is the parent level's released estimates, for Hcp levels with the parent prior.
    """

    def batch(lo: int, hi: int, threads: int | None) -> LevelEstimates:
        ptr = measured.ptr[lo : hi + 1]
        noisy = measured.values[ptr[0] : ptr[-1]]
        return fit_nodes(
            plan, measured.level, lo, noisy, ptr - ptr[0], measured.bounds, parent, threads,
            parent_correction=parent_correction,
        )  # fmt: skip

    return LevelEstimates.concat(map_level(plan, measured.level, measured.bounds, batch, workers=workers))


def level_fitter(plan: Plan, level: int) -> Callable[[int, int, np.ndarray, np.ndarray], LevelEstimates]:
    """``fit(lo, hi, noisy, ptr)``: the estimates of nodes ``lo..hi-1`` of a level with whole-level kernels
    (Hc, Hg), from their noisy answers (segments ``ptr``) and public G only."""
    method, p, eps = plan.level_method(level), plan.ps[level], plan.fit_epsilon(level)
    groups = plan.shape.group_counts(level)

    def fit(lo: int, hi: int, noisy: np.ndarray, ptr: np.ndarray) -> LevelEstimates:
        return method.level_fit(noisy, ptr, groups=groups[lo:hi], epsilon=eps, p=p)

    return fit


def consistent_levels(
    plan: Plan,
    estimates: Sequence[LevelEstimates | None],
    *,
    stated: bool = False,
    bounds: Sequence[np.ndarray | None] | None = None,
) -> tuple[list[LevelRuns], list[np.ndarray | None]]:
    """The released runs of every level from the measured levels' estimates, by the plan's consistency, and
    per level the experimental stated variance of every released run's groups (float32; None per level unless
    ``stated``).

    ``stated``: compute the statements (:func:`cocoviz.accuracy.stated.topdown.release_statements`;
    post-processing, no ε), reading the fits and, under top-down, the pairs the consistency step matched; the
    released runs are the same either way.  ``bounds``: K per node of each level the answers were measured with
    (None: the plan's public K), which the Hc statements read.
    """
    shape = plan.shape
    parents = [None] + [shape.parent_index(level) for level in range(1, shape.depth + 1)]
    n_nodes = [shape.n_nodes(level) for level in range(shape.depth + 1)]
    if stated:
        from cocoviz.accuracy.stated.topdown import fitted_stated, release_statements

        fitted = [
            fitted_stated(
                plan.level_method(level).name,
                e,
                epsilon=plan.fit_epsilon(level),
                p=plan.ps[level],
                bounds=level_bounds(plan, level, None if bounds is None else bounds[level]),
            )
            for level, e in enumerate(estimates)
            if e is not None
        ]
        if plan.consistency == "bottom-up":  # only the leaves are measured
            fitted = [None] * shape.depth + fitted
        levels, statements = release_statements(plan.consistency, plan.merge, fitted, parents, n_nodes)
        if plan.consistency == "bottom-up":  # the release's runs are the leaves' summed up, as without statements
            levels = sums_up(estimates[shape.depth].runs(), parents, n_nodes)[0]
        return levels, statements
    if plan.consistency == "top-down":
        levels = top_down(estimates, parents, plan.merge)
    elif plan.consistency == "none":
        levels = [e.runs() for e in estimates]
    else:
        levels = sums_up(estimates[shape.depth].runs(), parents, n_nodes)[0]
    return levels, [None] * len(levels)


def release_levels(
    plan: Plan,
    fit: Callable[[int, LevelEstimates | None], LevelEstimates],
    *,
    stated: bool = False,
    bounds: Sequence[np.ndarray | None] | None = None,
) -> tuple[list[LevelRuns], list[np.ndarray | None]]:
    """The released runs of every level, with ``fit(level, parent)`` giving a measured level's estimates, and
    their stated variances (:func:`consistent_levels`: None per level unless ``stated``).

    Without the parent prior the levels are fitted independently (``parent`` None).  With it,
    level by level: each level sees its parent level's released estimates (the merged groups
    under top-down, else the parent's own), and consistency runs on the estimates so fitted.
    """
    estimates: list[LevelEstimates | None] = [None] * (plan.shape.depth + 1)
    if plan.prior.kind != "parent":
        for level in plan.measured_levels():
            estimates[level] = fit(level, None)
        return consistent_levels(plan, estimates, stated=stated, bounds=bounds)
    current = None
    for level in plan.measured_levels():  # every level: bottom-up refuses the parent prior
        estimates[level] = fit(level, current)
        if plan.consistency == "top-down" and level:
            current = merge_children(current, estimates[level], plan.shape.parent_index(level), plan.merge)
        else:
            current = estimates[level]
    return consistent_levels(plan, estimates, stated=stated, bounds=bounds)


def fitted_on_parent(plan: Plan, level: int) -> bool:
    """Whether ``level``'s fit reads the parent level's released estimates (Hcp with the parent prior): such a
    level can only be fitted after the level above is consistent, in :func:`release_levels`."""
    return plan.prior.kind == "parent" and plan.level_method(level).name == "Hcp"


def release_of(
    plan: Plan,
    fits: Sequence[LevelEstimates | LevelMeasurement | None],
    budget,
    *,
    bounds: Sequence[np.ndarray | None],
    bands: Sequence[LevelBands | None],
    workers: int | None = None,
    stated: bool = False,
    fitted: Callable[[int, LevelEstimates], None] | None = None,
) -> Release:
    """The release of every measured level's estimates, or of its noisy answers where it was not yet fitted.

    The post-processing both :func:`post_process` (every level a measurement) and :func:`cocoviz.estimate`
    (most levels already fitted by the level step) end with: a :class:`~cocoviz.measure.measurements.LevelMeasurement`
    is fitted here (:func:`fit_level`, on its parent level's released estimates when :func:`fitted_on_parent`),
    then the plan's consistency (:func:`release_levels`) and the :class:`~cocoviz.release.release.Release`.

    Parameters
    ----------
    plan : the plan measured
    fits : per level, its estimates, its measurement, or None (not measured)
    budget : the measurement's budget (:attr:`~cocoviz.measure.measurements.Measurements.budget`)
    bounds : K per node of each level the answers were measured with (None where none)
    bands : per level, the envelopes of its noisy answers for :meth:`~cocoviz.Release.intervals` (or None)
    workers : threads per level for the fits here; never changes the result
    stated : also compute the experimental stated errors
    fitted : called as ``fitted(level, estimates)`` when a measurement is fitted here
    """

    def fit(level: int, parent: LevelEstimates | None) -> LevelEstimates:
        got = fits[level]
        if isinstance(got, LevelMeasurement):
            got = fit_level(plan, got, workers, parent)
            if fitted is not None:
                fitted(level, got)
        return got

    levels, statements = release_levels(plan, fit, stated=stated, bounds=bounds)
    return Release(plan, levels, budget, bounds=bounds, bands=bands, stated=statements if stated else None)


def post_process(
    plan: Plan, measurements: Measurements, *, workers: int | None = None, stated: bool = False
) -> Release:
    """The release of ``measurements``: never reads private data, costs no ε.

    Parameters
    ----------
    plan : the plan the measurements were made for
    measurements : what :func:`cocoviz.measure` returned
    workers : threads per level for the per-node fits; never changes the result
    stated : also compute the experimental stated errors (:meth:`~cocoviz.Release.stated_errors`,
        :mod:`cocoviz.accuracy.stated.topdown`); off by default, they never change the released numbers

    Raises
    ------
    ParameterError
        Measurements that are not the plan's (:func:`cocoviz.release.verify.check_measurements`: budget,
        levels, methods, ε, K, cells per node, whole values within ±2**53), named.
    """
    check_measurements(plan, measurements)
    return release_of(
        plan,
        measurements.levels,
        measurements.budget,
        bounds=[None if m is None else m.bounds for m in measurements.levels],
        bands=[measurement_bands(m) for m in measurements.levels],
        workers=check_workers(workers),
        stated=stated,
    )
