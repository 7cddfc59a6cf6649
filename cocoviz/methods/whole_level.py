"""Whole-level queries and fits: every node of a level in one compiled call, not one Python call per node.

A level's nodes are consecutive segments of one array (``ptr``), as in
:class:`~cocoviz.core.runs.LevelRuns`.  For the methods with compiled level kernels
(Hc and Hg: a :class:`~cocoviz.plan.Method`'s ``level_query`` and ``level_fit``) the query
of a run of nodes is one call, their noise one keyed draw, and their fit one call: the same
numbers, seed for seed, as node by node, because each cell's noise is keyed by (seed, level,
node, cell) and the fit of a segment does not look at its neighbours.

:func:`node_batches` cuts a level into runs of nodes of bounded total size, so
memory stays bounded however large the level; a single node larger than the
bound is fitted in chunks where the fit allows it (Hg under L2:
:func:`stream_hg_node`), so the whole country's root never holds its noisy
vector.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cocoviz.core.runs import LevelRuns
from cocoviz.methods.estimators import HC_SENSITIVITY, hg_noise_variance
from cocoviz.methods.level_estimates import LevelEstimates

__all__ = [
    "node_batches",
    "query_hc_nodes",
    "query_hg_nodes",
    "fit_hc_nodes",
    "fit_hg_nodes",
    "stream_hg_node",
    "join_segments",
    "CHUNK_CELLS",
]

#: Cells of one batch of nodes (or one chunk of a large Hg node): 8 bytes each for the noisy
#: answers, so about 32 MB per batch and per thread.
CHUNK_CELLS = 1 << 22


def node_batches(cells: np.ndarray, max_cells: int = CHUNK_CELLS) -> list[tuple[int, int]]:
    """Runs ``[lo, hi)`` of consecutive nodes whose cells add up to at most ``max_cells`` (or one node).

    >>> node_batches(np.array([3, 3, 3, 10, 1]), max_cells=6)
    [(0, 2), (2, 3), (3, 4), (4, 5)]
    """
    ends = np.cumsum(np.asarray(cells, np.int64))
    batches, lo, base = [], 0, 0
    while lo < len(ends):
        hi = max(int(np.searchsorted(ends, base + max_cells, side="right")), lo + 1)
        batches.append((lo, hi))
        base, lo = int(ends[hi - 1]), hi
    return batches


def _node_runs(runs: LevelRuns, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The runs of nodes ``lo..hi-1``: sizes, counts and each node's first run (from 0)."""
    r0, r1 = runs.ptr[lo], runs.ptr[hi]
    return runs.sizes[r0:r1], runs.counts[r0:r1], runs.ptr[lo : hi + 1] - r0


def query_hg_nodes(runs: LevelRuns, lo: int, hi: int, bounds: np.ndarray | None = None) -> tuple:
    """Hg of nodes ``lo..hi-1``, their sorted sizes, with their ``ptr`` (private: :mod:`cocoviz.measure.measurements`
    only)."""
    sizes, counts, run_ptr = _node_runs(runs, lo, hi)
    before = np.concatenate([[0], np.cumsum(counts)])
    return np.repeat(sizes, counts), before[run_ptr]


def query_hc_nodes(runs: LevelRuns, lo: int, hi: int, bounds: np.ndarray) -> tuple:
    """``Hc[0..K_k-1]`` of nodes ``lo..hi-1`` (``bounds``: K per node of the level), with their ``ptr``
    (private: :mod:`cocoviz.measure.measurements` only)."""
    from cocoviz.methods._level_kernels import hc_values

    sizes, counts, run_ptr = _node_runs(runs, lo, hi)
    k = np.asarray(bounds[lo:hi], np.int64)
    ptr = _ptr(k)
    out = np.empty(int(ptr[-1]), np.int64)
    hc_values(sizes, counts, run_ptr, k, ptr, out)
    return out, ptr


# The fits below run :func:`cocoviz.methods.estimators.fit_hg` / :func:`~cocoviz.methods.estimators.fit_hc`'s kernels
# over consecutive nodes, from their noisy answers and public G (post-processing only); a block mean exactly
# halfway between two sizes rounds to even.


def fit_hg_nodes(noisy: np.ndarray, ptr: np.ndarray, *, groups: np.ndarray, epsilon: float, p: int) -> LevelEstimates:
    """Hg estimates of the nodes whose noisy answers are the segments ``ptr`` of ``noisy``."""
    from cocoviz.methods._level_kernels import fit_hg_segments

    noisy = np.ascontiguousarray(noisy, np.int64)
    noise = hg_noise_variance(epsilon)
    return LevelEstimates(*fit_hg_segments(noisy, ptr, p, noise))  # the weights: the block rule


def fit_hc_nodes(noisy: np.ndarray, ptr: np.ndarray, *, groups: np.ndarray, epsilon: float, p: int) -> LevelEstimates:
    """Hc estimates of the nodes whose noisy answers are the segments ``ptr`` of ``noisy`` (``groups``: G each)."""
    from cocoviz.methods._level_kernels import fit_hc_segments

    noisy = np.ascontiguousarray(noisy, np.int64)
    groups = np.asarray(groups, np.int64)
    # The weights: the kernel's count rule.
    return LevelEstimates(*fit_hc_segments(noisy, ptr, groups, p, 4 * HC_SENSITIVITY**2 / epsilon**2))


def stream_hg_node(
    sizes: np.ndarray,
    counts: np.ndarray,
    draw: Callable[[np.ndarray, int], np.ndarray],
    *,
    epsilon: float,
    chunk: int = CHUNK_CELLS,
    threads: int = 1,
) -> LevelEstimates:
    """One node's Hg estimate under L2, measured and fitted in chunks of ``chunk`` groups.

    ``draw(values, offset)`` adds the node's noise to its cells ``offset, offset + 1, ...``
    (keyed, so chunks do not change it).  The pool-adjacent-violators stack is all the
    fit keeps between chunks, so memory is the stack (16 bytes per block) and a few
    chunks: the result is :func:`fit_hg_nodes`' on the whole vector, exactly.  The next
    ``threads`` chunks are drawn on other threads, in chunk order, while this one is fitted
    (``threads`` > 1 only for a ``draw`` that is safe to call from several threads at once).
    """
    from cocoviz.methods._level_kernels import hg_blocks_to_runs, hg_values, pava_push

    sizes, counts = np.asarray(sizes, np.int64), np.asarray(counts, np.int64)
    total = int(np.sum(counts))

    # A chunk in flight on each thread and one being fitted: threads + 1 buffers, reused (no page faults).
    buffers = [np.empty(min(chunk, total), np.int64) for _ in range(max(threads, 1) + 1)]

    def noisy_chunk(k: int) -> np.ndarray:
        start = k * chunk
        values = buffers[k % len(buffers)][: min(start + chunk, total) - start]
        hg_values(sizes, counts, start, start + values.size, values)
        return draw(values, start)

    block_sum = np.empty(1024, np.int64)
    block_len = np.empty(1024, np.int64)
    top = 0
    n_chunks = -(-total // chunk)
    threads = max(threads, 1)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        ahead = [pool.submit(noisy_chunk, k) for k in range(min(threads, n_chunks))]
        for k in range(n_chunks):
            values = ahead.pop(0).result()
            if k + threads < n_chunks:  # its buffer is chunk k - 1's, already fitted: drawn while chunk k is fitted
                ahead.append(pool.submit(noisy_chunk, k + threads))
            block_sum, block_len, top = pava_push(values, block_sum, block_len, top)
    means, lengths = block_sum[:top] / block_len[:top], block_len[:top].copy()
    del block_sum, block_len
    out_sizes, out_counts, out_vars = np.empty(top, np.int64), np.empty(top, np.int64), np.empty(top, np.float64)
    noise = hg_noise_variance(epsilon)
    at = hg_blocks_to_runs(means, lengths, noise, out_sizes, out_counts, out_vars, 0)
    return LevelEstimates(np.array([0, at]), out_sizes[:at], out_counts[:at], out_vars[:at])


def join_segments(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """One ``(values, ptr)`` from the ``(values, ptr)`` of consecutive runs of nodes.

    >>> join_segments([(np.array([1, 2, 3]), np.array([0, 1, 3])), (np.array([4]), np.array([0, 1]))])
    (array([1, 2, 3, 4]), array([0, 1, 3, 4]))
    """
    if not parts:
        return np.zeros(0, np.int64), np.zeros(1, np.int64)
    values = np.concatenate([v for v, _ in parts])
    bases = np.cumsum([0] + [len(v) for v, _ in parts[:-1]])
    ptr = np.concatenate([[0]] + [p[1:] + base for (_, p), base in zip(parts, bases)]).astype(np.int64)
    return values, ptr


def _ptr(lengths: np.ndarray) -> np.ndarray:
    ptr = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=ptr[1:])
    return ptr
