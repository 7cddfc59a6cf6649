"""The one per-level step: measure a batch of a level's nodes, fit it, keep only its estimates.

:func:`cocoviz.measure` and :func:`cocoviz.post_process` go over a level in the batches of
:func:`cocoviz.measure.schedule.map_level`, the first keeping every noisy answer (a publishable
:class:`~cocoviz.measure.measurements.Measurements`), the second fitting them.  :func:`estimate_level` is the same two
halves on the same batches, fused: each batch is measured (:func:`cocoviz.measure.measurements.measure_nodes`) and at
once
fitted (:func:`cocoviz.release.post_process.fit_nodes`), and only its estimates — what the consistency step needs —
are kept, so memory is bounded per batch however many nodes the level has.  :func:`cocoviz.estimate` calls it
for every level it measures and fits here (:class:`~cocoviz.pipeline.estimate.LevelSources`), and
:mod:`cocoviz.pipeline.distributed` for each state's subtree on a Dask worker.  Noise is
keyed by (seed, level, node, cell), so the fused step's release is ``post_process(measure(...))``'s, seed for
seed.

The data's way: plan → measure → post-process → release.  This module stands after them all (it imports
both halves); nothing before it imports it.

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> from cocoviz.measure.measurements import measure, open_sampler
>>> from cocoviz.plan import Plan
>>> from cocoviz.release.post_process import fit_level
>>> tree = Hierarchy.from_groups(pd.DataFrame({"r": list("aabb"), "size": [4, 1, 2, 1]}), size="size", levels=["r"])
>>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hg", "naive"], max_size=8)
>>> fused = estimate_level(plan, tree, 1, open_sampler(3), None)
>>> two_steps = fit_level(plan, measure(plan, tree, seed=3).levels[1])
>>> bool((fused.sizes == two_steps.sizes).all() and (fused.counts == two_steps.counts).all())
True
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cocoviz.accuracy.intervals.bands import BAND_METHODS, LevelBands
from cocoviz.consistency import LevelEstimates
from cocoviz.measure.measurements import draw_nodes, level_bounds, measure_nodes
from cocoviz.measure.schedule import batch_threads, has_level_kernels, level_batches, map_level
from cocoviz.methods import whole_level
from cocoviz.plan import Plan
from cocoviz.release.post_process import fit_nodes

__all__ = ["estimate_level"]


def estimate_level(
    plan: Plan,
    tree,
    level: int,
    sampler,
    bounds: np.ndarray | None,
    workers: int | None = None,
    nodes: tuple[int, int] | None = None,
    parent: LevelEstimates | None = None,
    bands_out: list | None = None,
) -> LevelEstimates:
    """A level's estimates, measured and fitted batch by batch: reads private data.

    At most a batch's noisy answers per thread are held at once, and an Hg node (p = 2) larger than a
    batch is streamed in chunks (:func:`cocoviz.methods.whole_level.stream_hg_node`): the whole country's root never
    holds its noisy vector.

    Parameters
    ----------
    plan : Plan
    tree : Hierarchy, or anything with the level's ``runs(level)`` (a Dask subtree's)
    level : a level the plan measures
    sampler : the measurement's sampler (:func:`cocoviz.measure.measurements.open_sampler`)
    bounds : K per node of the level (:func:`cocoviz.measure.measurements.choose_bounds`); None: the plan's public K
    workers : threads (None: the defaults of :func:`cocoviz.measure.schedule.map_level`); never changes the result.
        With a secure sampler (Hc, Hg) batches are drawn on this thread in node order while the batch before
        is fitted on a second one; ``workers=1`` fits each batch before the next is drawn (the same result)
    nodes : only the nodes ``lo..hi-1`` (a subtree's); their estimates are returned
    parent : the parent level's released estimates, for Hcp levels with the parent prior
    bands_out : a list that receives the level's :class:`~cocoviz.accuracy.intervals.bands.LevelBands` (the envelopes
    of its
        noisy answers, for :meth:`~cocoviz.Release.intervals`; None for a method without bands)

    Returns
    -------
    LevelEstimates
        The independent estimates of the level's nodes (of ``nodes`` when given), in node order.
    """
    bounds = level_bounds(plan, level, bounds)
    method, groups = plan.level_method(level), plan.shape.group_counts(level)

    banded = bands_out is not None and method.name in BAND_METHODS

    def streamed(lo: int, hi: int) -> bool:
        return method.name == "Hg" and plan.ps[level] == 2 and hi - lo == 1 and groups[lo] > whole_level.CHUNK_CELLS

    def draw(lo: int, hi: int, threads: int | None) -> tuple[np.ndarray, np.ndarray, LevelBands | None]:
        noisy, ptr = measure_nodes(plan, tree, level, sampler, lo, hi, bounds, threads)
        return noisy, ptr, LevelBands.of(method.name, noisy, ptr) if banded else None

    def fit(lo: int, noisy: np.ndarray, ptr: np.ndarray, threads: int | None) -> LevelEstimates:
        return fit_nodes(plan, level, lo, noisy, ptr, bounds, parent, threads)

    def batch(lo: int, hi: int, threads: int | None) -> tuple[LevelEstimates, LevelBands | None]:
        if streamed(lo, hi):
            return _stream_hg(plan, tree, level, sampler, lo, workers, banded)
        noisy, ptr, bands = draw(lo, hi, threads)
        return fit(lo, noisy, ptr, threads), bands

    if sampler.secure and has_level_kernels(method) and workers != 1:
        parts = _drawn_then_fitted(level_batches(plan, level, bounds, nodes), streamed, batch, draw, fit)
    else:
        parts = map_level(plan, level, bounds, batch, workers=workers, secure=sampler.secure, nodes=nodes)
    if bands_out is not None:
        bands_out.append(LevelBands.concat([b for _, b in parts]) if banded and parts else None)
    return LevelEstimates.concat([e for e, _ in parts])


def _drawn_then_fitted(batches, streamed, batch, draw, fit) -> list:
    """A secure sampler's level (one generator, so one drawing thread in node order): each batch is drawn
    here while the one before is fitted on a second thread.  The draws, their order and every fit are those
    of batch after batch; at most two batches' noisy answers are held at once."""
    parts: list = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        fitting = None  # (its index in parts, the future of its estimates)
        for lo, hi in batches:
            if streamed(lo, hi):
                parts.append(batch(lo, hi, 1))
                continue
            noisy, ptr, bands = draw(lo, hi, 1)
            if fitting is not None:
                parts[fitting[0]] = (fitting[1].result(), parts[fitting[0]][1])
            parts.append((None, bands))
            fitting = (len(parts) - 1, pool.submit(fit, lo, noisy, ptr, 1))
            del noisy, ptr
        if fitting is not None:
            parts[fitting[0]] = (fitting[1].result(), parts[fitting[0]][1])
    return parts


def _stream_hg(
    plan: Plan, tree, level: int, sampler, k: int, workers: int | None, banded: bool
) -> tuple[LevelEstimates, LevelBands | None]:
    """Node ``k``'s Hg estimate (L2) and bands, measured and fitted chunk by chunk."""
    scale = plan.level_noise(level)
    chunks: list = []

    def draw(values: np.ndarray, offset: int) -> np.ndarray:
        noisy = draw_nodes(sampler, values, np.array([0, len(values)]), scale, level, k, offset)
        if banded:
            chunks.append((offset, LevelBands.of("Hg", noisy, np.array([0, len(noisy)]))))
        return noisy

    threads = batch_threads(2, workers, sampler.secure)  # the chunks' keyed draws are independent
    estimates = whole_level.stream_hg_node(
        *tree.runs(level).node(k),
        draw,
        epsilon=plan.fit_epsilon(level),
        chunk=whole_level.CHUNK_CELLS,
        threads=threads,
    )
    return estimates, LevelBands.of_chunks("Hg", chunks) if banded else None
