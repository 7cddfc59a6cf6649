"""Dask for work beyond one machine: experiment sweeps task by task, and a release's lower levels per state.

Both jobs take a ``dask.distributed.Client`` (a ``LocalCluster``'s or a remote
scheduler's: ``Client("tcp://scheduler:8786")``).  Dask is optional: it is
imported only when a client is given.

* :func:`map_tasks` runs independent tasks (the experiment sweeps' releases,
  each seeded by its trial) on the cluster and returns their results in task
  order: the same as running them here.
* :func:`estimate_subtrees` measures and fits the levels below the states per
  state subtree on the workers, each with the one per-level step of a local release
  (:func:`cocoviz.pipeline.level_step.estimate_level`); the root and the states stay here, and so
  does consistency, which needs every level (and so do Hcp levels with the parent prior,
  whose fit needs the consistent level above).  The fast sampler keys each cell's noise
  by (seed, level, node, cell) with the node's index in its whole level, so a
  seeded release is bit-identical to the local one.  A secure sampler is never
  shipped (its state would repeat on every worker): each task opens its own,
  from the worker's operating system.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from cocoviz.consistency import LevelEstimates
from cocoviz.core.runs import LevelRuns
from cocoviz.errors import ParameterError
from cocoviz.pipeline.level_step import estimate_level
from cocoviz.plan import Plan
from cocoviz.privacy.noise import make_sampler
from cocoviz.release.post_process import fitted_on_parent

__all__ = ["map_tasks", "estimate_subtrees", "subtree_ranges", "check_client"]


def check_client(client) -> None:
    """Refuse anything but a ``dask.distributed.Client``, naming what was given."""
    try:
        from dask.distributed import Client
    except ImportError as err:  # pragma: no cover - dask is installed with the tests
        raise ParameterError("client= needs Dask: pip install 'dask[distributed]'") from err
    if not isinstance(client, Client):
        raise ParameterError(f"client must be a dask.distributed.Client, got {type(client).__name__}")


def _call(fn, task, shared):
    return fn(task, *shared)


def map_tasks(
    client, fn: Callable, tasks: Sequence, shared: tuple, progress: Callable[[int, int], None] | None = None
) -> list:
    """``[fn(task, *shared) for task in tasks]`` on the cluster, in task order; ``shared`` is sent once."""
    from dask.distributed import as_completed

    check_client(client)
    total = len(tasks)
    if progress is not None:
        progress(0, total)
    if not total:
        return []
    [shared_future] = client.scatter([shared], broadcast=True, hash=False)
    futures = [client.submit(_call, fn, task, shared_future, pure=False) for task in tasks]
    index = {f.key: k for k, f in enumerate(futures)}
    results: list = [None] * total
    for done, future in enumerate(as_completed(futures), start=1):
        results[index[future.key]] = future.result()
        if progress is not None:
            progress(done, total)
    return results


def subtree_ranges(plan: Plan, top: int, level: int) -> np.ndarray:
    """For every node of ``top``, the range ``[lo, hi)`` of its descendants at ``level`` (contiguous: nodes
    are sorted by path), as an array of shape ``(nodes of top, 2)``."""
    ancestor = np.arange(len(plan.shape.paths[level]))
    for lvl in range(level, top, -1):
        ancestor = plan.shape.parent_index(lvl)[ancestor]
    n_top = len(plan.shape.paths[top])
    return np.stack(
        [np.searchsorted(ancestor, np.arange(n_top)), np.searchsorted(ancestor, np.arange(n_top), "right")], 1
    )


class _SubtreeRuns:
    """The runs of one subtree, indexed like the whole tree's levels (other nodes empty): what the level
    kernels read, shipped to a worker instead of the whole tree."""

    def __init__(self, levels: dict[int, LevelRuns]):
        self._levels = levels

    def runs(self, level: int) -> LevelRuns:
        return self._levels[level]


def _slice_runs(runs: LevelRuns, lo: int, hi: int) -> LevelRuns:
    """``runs`` with every node outside ``[lo, hi)`` emptied (the level's node indices kept)."""
    r0, r1 = runs.ptr[lo], runs.ptr[hi]
    ptr = np.clip(runs.ptr, r0, r1) - r0
    return LevelRuns(ptr, runs.sizes[r0:r1].copy(), runs.counts[r0:r1].copy())


def _subtree_task(task, plan: Plan, sampler, bounds: dict) -> dict[int, LevelEstimates]:
    subtree, ranges = task
    noise = make_sampler(sampler) if isinstance(sampler, str) else sampler
    return {
        level: estimate_level(plan, subtree, level, noise, bounds.get(level), workers=1, nodes=(lo, hi))
        for level, (lo, hi) in ranges.items()
    }


def estimate_subtrees(
    plan: Plan, tree, sampler, bounds: Sequence[np.ndarray | None], client, *, top: int = 1, skip: Sequence = ()
) -> dict[int, LevelEstimates]:
    """The estimates of every measured level below ``top`` (the states), one task per ``top`` node.

    Not of the levels fitted on their parent's release (Hcp with the parent prior,
    :func:`~cocoviz.release.post_process.fitted_on_parent`): their fit needs the consistent level above, so the
    caller fits them, in order; nor of the levels in ``skip`` (those the caller took already, from-hg's source level
    among them, which it measured whole to take K from: measured again here it would be drawn twice).

    Returns ``{level: LevelEstimates}`` for those levels; the caller fits the others and runs
    consistency.  ``sampler`` is the release's: the fast one is shipped as it is (its noise is
    keyed), a secure one by name, opened anew by each task.
    """
    check_client(client)
    wanted = [lvl for lvl in plan.measured_levels() if lvl > top and lvl not in skip]
    levels = [lvl for lvl in wanted if not fitted_on_parent(plan, lvl)]
    if not levels or plan.shape.depth <= top:
        return {}
    ranges = {lvl: subtree_ranges(plan, top, lvl) for lvl in levels}
    tasks = []
    for k in range(len(plan.shape.paths[top])):
        own = {lvl: (int(ranges[lvl][k, 0]), int(ranges[lvl][k, 1])) for lvl in levels}
        subtree = _SubtreeRuns({lvl: _slice_runs(tree.runs(lvl), *own[lvl]) for lvl in levels})
        tasks.append((subtree, own))
    shipped = sampler.kind if sampler.secure else sampler
    per_task = map_tasks(client, _subtree_task, tasks, (plan, shipped, {lvl: bounds[lvl] for lvl in levels}))
    return {lvl: LevelEstimates.concat([part[lvl] for part in per_task]) for lvl in levels}
