"""How a level's nodes are worked through: batches of consecutive nodes, and the threads that share them.

Every stage that goes over a level — :func:`cocoviz.measure` (noisy answers), :func:`cocoviz.post_process`
(fits) and the fused step of :func:`cocoviz.estimate` and Dask (:mod:`cocoviz.pipeline.level_step`) — calls
:func:`map_level`, so they cut a level into the same batches and share it among threads the same way.  Noise
is keyed by (seed, level, node, cell) and each node's fit looks at that node only, so neither the batches nor
the threads ever change a seeded result; with a secure sampler (no keys, one generator) everything runs on one
thread, in node order.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cocoviz.errors import ParameterError
from cocoviz.methods import whole_level

__all__ = [
    "check_workers",
    "map_nodes",
    "map_level",
    "level_batches",
    "level_threads",
    "batch_threads",
    "has_level_kernels",
    "PARALLEL_NODES",
]

#: Levels with at least this many nodes are measured and fitted on two threads (where the machine has two cores).
PARALLEL_NODES = 8
_WORKERS = min(2, os.cpu_count() or 1)

#: Below this many noise cells per node a level runs on one thread: the pool's overhead per node then
#: outweighs the work it shares (30,000 leaves of about 5,000 cells: 10 s serial, 13-14 s on 2 threads).
_THREAD_CELLS = 20_000


def check_workers(workers: object) -> int | None:
    """``workers`` as None or a whole number >= 1 (bools, text and numbers below 1 refused)."""
    if workers is not None and (
        isinstance(workers, (bool, np.bool_)) or not isinstance(workers, (int, np.integer)) or workers < 1
    ):
        raise ParameterError(f"workers must be None or a whole number of threads >= 1, got {workers!r}")
    return None if workers is None else int(workers)


def map_nodes(fn: Callable[[int], object], n: int, workers: int | None) -> list:
    """``[fn(0), ..., fn(n - 1)]``, on threads for a level with many nodes.

    Every node's noise is keyed, so the result never depends on the threads.
    """
    workers = (_WORKERS if n >= PARALLEL_NODES else 1) if workers is None else workers
    if workers <= 1:
        return [fn(k) for k in range(n)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, range(n)))


def has_level_kernels(method) -> bool:
    """Whether ``method`` queries and fits a run of nodes in one compiled call (Hc, Hg), not node by node."""
    return method.level_query is not None and method.level_fit is not None


def _cells(plan, level: int, bounds: np.ndarray | None) -> np.ndarray:
    method = plan.level_method(level)
    return bounds if bounds is not None else method.cells(plan.shape.group_counts(level), plan.max_size)


def level_threads(plan, level: int, bounds: np.ndarray | None, workers: int | None, secure: bool = False) -> int | None:
    """Threads for a level's nodes: one with a secure sampler (one OS-keyed generator per sampler), else
    the caller's ``workers``, else the pool's default when the level's nodes are heavy enough to share."""
    if secure:
        return 1
    if workers is not None:
        return workers
    return None if float(np.mean(_cells(plan, level, bounds))) >= _THREAD_CELLS else 1


def batch_threads(n_batches: int, workers: int | None, secure: bool = False) -> int:
    """Threads for a level's batches of nodes: each batch is millions of cells of compiled work that
    releases the GIL, so two batches or more share the pool; one with the secure sampler."""
    if secure:
        return 1
    return workers if workers is not None else min(_WORKERS, n_batches)


def level_batches(
    plan, level: int, bounds: np.ndarray | None, nodes: tuple[int, int] | None = None
) -> list[tuple[int, int]]:
    """The level's nodes (``lo..hi-1`` when ``nodes`` is given) cut into runs of bounded total cells
    (:func:`cocoviz.methods.whole_level.node_batches`, at most :data:`~cocoviz.methods.whole_level.CHUNK_CELLS` a
    batch).

    ``bounds`` is K per node for the methods that need one (their cells), else the cells are the method's.
    """
    cells = _cells(plan, level, bounds)
    lo, hi = nodes if nodes is not None else (0, len(cells))
    return [(lo + a, lo + b) for a, b in whole_level.node_batches(cells[lo:hi], whole_level.CHUNK_CELLS)]


def map_level(
    plan,
    level: int,
    bounds: np.ndarray | None,
    work: Callable[[int, int, int | None], object],
    *,
    workers: int | None = None,
    secure: bool = False,
    nodes: tuple[int, int] | None = None,
) -> list:
    """``[work(lo, hi, threads) for each batch (lo, hi) of the level]``, in node order.

    A method with level kernels (Hc, Hg) shares its batches among threads (``threads`` is then 1: a batch
    is one compiled call); the others go batch after batch, and ``threads`` is how many threads may share
    a batch's nodes.  ``secure``: a sampler without keys, so one thread and node order throughout.

    Parameters
    ----------
    plan : Plan
    level : the level
    bounds : K per node for the methods that need one (None: the plan's public K)
    work : called once per batch; its results are returned in order
    workers : the caller's threads (None: the defaults); never changes a seeded result
    secure : whether the noise comes from a sampler without keys
    nodes : only the nodes ``lo..hi-1`` of the level (a Dask subtree)

    Examples
    --------
    >>> import pandas as pd
    >>> from cocoviz.hierarchy import Hierarchy
    >>> from cocoviz.plan import Plan
    >>> tree = Hierarchy.from_groups(pd.DataFrame({"r": list("aabb"), "size": [4, 1, 2, 1]}), size="size", levels=["r"])
    >>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hg", "naive"], max_size=8)
    >>> map_level(plan, 0, None, lambda lo, hi, threads: (lo, hi, threads))
    [(0, 1, 1)]
    >>> map_level(plan, 1, None, lambda lo, hi, threads: (lo, hi))
    [(0, 2)]
    """
    batches = level_batches(plan, level, bounds, nodes)
    if has_level_kernels(plan.level_method(level)):
        threads = batch_threads(len(batches), workers, secure)
        return map_nodes(lambda b: work(*batches[b], 1), len(batches), threads)
    threads = level_threads(plan, level, bounds, workers, secure)
    if threads is None:  # the pool's default, chosen on all the nodes: a batch may be a few heavy ones
        n = nodes[1] - nodes[0] if nodes is not None else len(plan.shape.paths[level])
        threads = _WORKERS if n >= PARALLEL_NODES else 1
    return [work(lo, hi, threads) for lo, hi in batches]
