"""How well Hcp's variance estimates cover its errors, with and without the parent-prior rule.

:func:`merged_leaves` runs a plan's top-down pass by hand to keep what a release drops: every
leaf group's merged size *and variance*.  :func:`coverage` pairs the estimated groups of a node
with its true groups by rank (sorted sizes, the pairing that the emd uses) and reports the share
of groups within ``z`` standard deviations and the mean of ``(error)² / V`` (1 when the variances
are calibrated; above 1 they are too small).  Groups of true size ≤ ``DENSE_TOP`` (8) are left
out by default: they are their own buckets and nearly always exact, so they would hide the
rest.  This reads the private tree: evaluation only.

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> from cocoviz.plan import Plan
>>> tree = Hierarchy.from_counts(pd.DataFrame({"r": list("aabb"), "size": [1, 30, 2, 40], "count": [50, 5, 40, 5]}),
...                              size="size", count="count", levels=["r"])
>>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hcp"], max_size=64, prior="parent")
>>> sorted(coverage(tree, plan, seed=0))
['covered', 'groups', 'z2']
"""

from __future__ import annotations

import numpy as np

from cocoviz.consistency import LevelEstimates, merge_children
from cocoviz.measure.measurements import measure
from cocoviz.methods.hcp import DENSE_TOP
from cocoviz.plan import Plan
from cocoviz.release.post_process import fit_level

__all__ = ["merged_leaves", "coverage"]


def merged_leaves(tree, plan: Plan, seed, *, parent_correction: bool = True) -> list[LevelEstimates]:
    """Per level, the estimates after the top-down merge (the root's own), fitted level by level.

    ``parent_correction=False`` drops the parent-prior rule (:mod:`cocoviz.release.post_process`).
    """
    measured = measure(plan, tree, seed=seed)
    levels, current = [], None
    for level in range(plan.shape.depth + 1):
        own = fit_level(plan, measured.levels[level], 1, current, parent_correction=parent_correction)
        current = own if level == 0 else merge_children(current, own, plan.shape.parent_index(level), plan.merge)
        levels.append(current)
    return levels


def coverage(
    tree,
    plan: Plan,
    seed,
    *,
    level: int | None = None,
    z: float = 2.0,
    parent_correction: bool = True,
    above: int = DENSE_TOP,
) -> dict:
    """Share of groups (true size > ``above``) with ``|merged − true| ≤ z σ``, and mean (error)²/V.

    ``level`` None: the leaves.  Returns ``covered``, ``z2`` and ``groups`` (how many were scored).
    """
    level = plan.shape.depth if level is None else level
    est = merged_leaves(tree, plan, seed, parent_correction=parent_correction)[level]
    runs = tree.runs(level)
    hits, z2, n = 0, 0.0, 0
    for k in range(runs.n_nodes):
        sizes, counts = runs.node(k)
        truth = np.repeat(np.minimum(sizes, plan.max_size), counts)
        lo, hi = est.ptr[k], est.ptr[k + 1]
        size = np.repeat(est.sizes[lo:hi], est.counts[lo:hi])
        var = np.repeat(est.variances[lo:hi], est.counts[lo:hi])
        order = np.lexsort((var, size))
        err, var = (size[order] - truth), np.maximum(var[order], 1e-12)
        keep = truth > above
        hits += int((np.abs(err) <= z * np.sqrt(var))[keep].sum())
        z2 += float((err[keep] ** 2 / var[keep]).sum())
        n += int(keep.sum())
    return {"covered": hits / max(n, 1), "z2": z2 / max(n, 1), "groups": n}
