"""Are the variances calibrated?  Mean (error)² / V per level, over many seeded trials.

Every estimated group carries two variances (:class:`cocoviz.consistency.LevelEstimates`): ``variances``,
the paper's model, which the weighted merge weighs by, and ``stated`` (:mod:`cocoviz.accuracy.stated.variances`
for Hc and Hg, :func:`cocoviz.accuracy.stated.merged.merge_stated` after a merge), the one stated to users.
Calibrated means ``z² = (estimate − truth)² / V`` averages about 1 over a level's groups; both
are measured, so the weights' miscalibration stays visible.
:func:`calibration` pairs each node's estimated groups with its true groups by rank (sorted sizes,
the pairing of the emd), at every level after the top-down merge (the root: its own fit), and
pools z² over all groups and trials.  All groups count: the dense small sizes (mostly exact, with
tiny variances) and the sparse tail (rarely exact, with large ones) alike.  This reads the private
tree: evaluation only.  ``benchmarks/merge_calibration.py`` prints it for every dataset.

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> from cocoviz.plan import Plan
>>> tree = Hierarchy.from_counts(pd.DataFrame({"r": list("aabb"), "size": [1, 30, 2, 40], "count": [50, 5, 40, 5]}),
...                              size="size", count="count", levels=["r"])
>>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=64)
>>> columns = list(calibration(tree, plan, trials=2).columns)
>>> columns[:8]
['level', 'groups', 'z2', 'z2_low', 'z2_high', 'z2_own', 'z2_weights', 'z2_weights_own']
>>> columns[8:]
['z2_released', 'z2_released_low', 'z2_released_high']

``z2_released`` scores what is published: each level's *released* histogram (the leaves' merged groups, summed
up: back-substitution, :func:`cocoviz.release.post_process.release_levels` on the same fits) against the release's
stated variance of that level (``Release.stated``), paired by rank as above.  At the leaves it is ``z2``; above
them the union of the children's groups, whose errors partly cancel, so the leaves' statements pooled
up overstate it (docs/merge-variances.md, "Released upper levels").
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from cocoviz.accuracy.stated.topdown import StatedEstimates, fitted_stated, merged_statements
from cocoviz.consistency import LevelEstimates
from cocoviz.measure.measurements import level_bounds, measure
from cocoviz.plan import Plan
from cocoviz.release.post_process import fit_level, release_levels

__all__ = ["calibration", "level_z2"]


def level_z2(tree, level: int, est: StatedEstimates, max_size: int, which: str = "stated") -> np.ndarray:
    """z² of every group of ``level`` against its ``which`` variance (``"stated"`` or ``"variances"``):
    estimated and true groups of each node paired by rank, equal sizes in the order the runs are stored,
    which is the order the merge matches them in (merged levels: by the weights' variance; an Hg fit's
    runs: by rank, its blocks in order; sorting an Hg fit's equal sizes by variance instead would move
    its longest block onto the ranks next to the neighbouring size).  The stated variances are pooled per
    node and size, so their score does not depend on it."""
    runs = tree.runs(level)
    out = []
    for k in range(runs.n_nodes):
        sizes, counts = runs.node(k)
        truth = np.repeat(np.minimum(sizes, max_size), counts)
        lo, hi = est.ptr[k], est.ptr[k + 1]
        size = np.repeat(est.sizes[lo:hi], est.counts[lo:hi])
        var = np.repeat(getattr(est, which)[lo:hi], est.counts[lo:hi])
        order = np.argsort(size, kind="stable")
        out.append((size[order] - truth) ** 2 / var[order])
    return np.concatenate(out) if out else np.zeros(0)


def calibration(tree, plan: Plan, *, trials: int, seed: int = 0) -> pd.DataFrame:
    """Per level: groups scored, mean z² of the stated variance after the merge (``z2``) and of the level's
    own fit (``z2_own``), and the same of the weights' variances (``z2_weights``, ``z2_weights_own``).

    ``z2_low``, ``z2_high``: a 95% bootstrap interval of ``z2`` over trials (the trials' means resampled;
    every trial scores the same groups, so ``z2`` is their mean).  Why: where almost every group is exact
    (Hawaiian's zeros) the mean rests on rare errors, and a few trials do not pin it down.
    Trial t measures with seed ``(seed, t)``.  ``z2_released`` (with ``z2_released_low``, ``_high``): the released
    level against ``Release.stated`` (module docstring), with the plan's consistency and merge, on the same fits.
    """
    cols = ("z2", "z2_own", "z2_weights", "z2_weights_own", "z2_released")
    # Per level and column, each trial's (sum of z², groups): every trial scores the same groups, so the
    # means and the bootstrap need no more, and memory stays one level's groups whatever the trials.
    sums: dict[str, dict[int, list[float]]] = {c: {} for c in cols}
    groups: dict[int, int] = {}
    for t in range(trials):
        measured = measure(plan, tree, seed=(seed, t))
        current = None
        fits: dict[int, LevelEstimates] = {}
        for level in plan.measured_levels():  # bottom-up: the leaves alone, z2 their own fit's
            fits[level] = fit_level(plan, measured.levels[level], 1, None)
            fitted = fitted_stated(
                plan.level_method(level).name,
                fits[level],
                epsilon=plan.fit_epsilon(level),
                p=plan.ps[level],
                bounds=level_bounds(plan, level, measured.levels[level].bounds),
            )
            if level == 0 or plan.consistency != "top-down":
                current = fitted
            else:
                current = merged_statements(current, fitted, plan.shape.parent_index(level), plan.merge)
            for col, est, which in zip(
                cols[:4], (current, fitted) * 2, ("stated", "stated", "variances", "variances"), strict=True
            ):
                z2 = level_z2(tree, level, est, plan.max_size, which)
                groups[level] = z2.size
                sums[col].setdefault(level, []).append(float(z2.sum()))

        def fit(level: int, parent: LevelEstimates | None, fits=fits, measured=measured) -> LevelEstimates:
            return fits[level] if parent is None else fit_level(plan, measured.levels[level], 1, parent)

        bounds = [None if m is None else m.bounds for m in measured.levels]
        levels, stated = release_levels(plan, fit, stated=True, bounds=bounds)
        for level, runs in enumerate(levels):
            released = SimpleNamespace(ptr=runs.ptr, sizes=runs.sizes, counts=runs.counts, stated=stated[level])
            z2 = level_z2(tree, level, released, plan.max_size)
            groups[level] = z2.size
            sums["z2_released"].setdefault(level, []).append(float(z2.sum()))
    rows = []
    for level in sorted(sums["z2_released"]):
        n = groups[level]
        trial_means = {
            c: np.asarray(sums[c][level]) / n if n and level in sums[c] else np.full(trials, np.nan) for c in cols
        }
        low, high = _bootstrap_interval(trial_means["z2"])
        released_low, released_high = _bootstrap_interval(trial_means["z2_released"])
        rows.append(
            {
                "level": level,
                "groups": n,
                "z2": float(trial_means["z2"].mean()) if n else float("nan"),
                "z2_low": low,
                "z2_high": high,
                **{c: float(trial_means[c].mean()) if n else float("nan") for c in cols[1:]},
                "z2_released_low": released_low,
                "z2_released_high": released_high,
            }
        )
    return pd.DataFrame(rows)


def _bootstrap_interval(trial_means: np.ndarray, replicates: int = 4000, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``trial_means`` (seeded: the same trials give the same interval)."""
    if trial_means.size < 2:
        value = float(trial_means.mean()) if trial_means.size else float("nan")
        return value, value
    rng = np.random.default_rng(0)
    means = trial_means[rng.integers(0, trial_means.size, size=(replicates, trial_means.size))].mean(axis=1)
    tail = (1.0 - level) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail))
