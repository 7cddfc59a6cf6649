"""Everything after the noisy measurements: per-node fits, consistency, the release.

:func:`post_process` reads a :class:`~cocoviz.measure.Measurements` and the
plan's public facts, never the private tree: isotonic regression and rounding
per node (:func:`fit_level`), then the plan's consistency — the paper's
top-down matching and merging with back-substitution, bottom-up sums, or
none.  Being post-processing, it costs no ε.

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> from cocoviz.measure import measure
>>> from cocoviz.plan import Plan
>>> tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}),
...                              size="size", levels=["region"])
>>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=8)
>>> release = post_process(plan, measure(plan, tree, seed=0))
>>> release.is_consistent(), release.budget.total == plan.cost().total
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence

from cocoviz.consistency import LevelEstimates, top_down
from cocoviz.errors import ParameterError
from cocoviz.measure import LevelMeasurement, Measurements, map_nodes
from cocoviz.plan import Plan
from cocoviz.release import Release
from cocoviz.runs import LevelRuns, aggregate_runs

__all__ = ["post_process", "fit_level", "consistent_levels"]


def fit_level(plan: Plan, measured: LevelMeasurement, workers: int | None = None) -> LevelEstimates:
    """Independent estimates of every node of one level from its noisy answers and public G."""
    method, p = plan.level_method(measured.level), plan.ps[measured.level]
    groups = plan.shape.group_counts(measured.level)

    def one(k: int):
        bound = int(measured.bounds[k]) if measured.bounds is not None else None
        return method.fit(measured.node(k), groups=int(groups[k]), epsilon=measured.epsilon, p=p, max_size=bound)

    return LevelEstimates.from_nodes(map_nodes(one, measured.n_nodes, workers))


def consistent_levels(plan: Plan, estimates: Sequence[LevelEstimates | None]) -> list[LevelRuns]:
    """The released runs of every level from the measured levels' estimates, by the plan's consistency."""
    shape = plan.shape
    parents = [None] + [shape.parent_index(level) for level in range(1, shape.depth + 1)]
    if plan.consistency == "top-down":
        return top_down(estimates, parents, plan.merge)
    if plan.consistency == "none":
        return [e.runs() for e in estimates]
    levels = [estimates[shape.depth].runs()]
    for level in range(shape.depth, 0, -1):
        below = levels[0]
        levels.insert(
            0, aggregate_runs(parents[level][below.node_ids()], below.sizes, below.counts, len(shape.paths[level - 1]))
        )
    return levels


def post_process(plan: Plan, measurements: Measurements, *, workers: int | None = None) -> Release:
    """The release of ``measurements``: never reads private data, costs no ε.

    Parameters
    ----------
    plan : the plan the measurements were made for
    measurements : what :func:`cocoviz.measure` returned
    workers : threads per level for the per-node fits; never changes the result
    """
    if not isinstance(measurements, Measurements):
        raise ParameterError(
            f"post_process needs the Measurements that measure() returned, got {type(measurements).__name__}"
        )
    if measurements.plan != plan:
        raise ParameterError("these measurements were made for another plan")
    estimates = [None if m is None else fit_level(plan, m, workers) for m in measurements.levels]
    bounds = [None if m is None else m.bounds for m in measurements.levels]
    return Release(plan, consistent_levels(plan, estimates), measurements.budget, bounds=bounds)
