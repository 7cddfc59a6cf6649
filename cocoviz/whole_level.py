"""Whole-level queries and fits: every node of a level in one compiled call, not one Python call per node.

A level's nodes are consecutive segments of one array (``ptr``), as in
:class:`~cocoviz.runs.LevelRuns`.  For the methods with compiled level kernels
(Hc and Hg, :data:`LEVEL_METHODS`) the query of a run of nodes is one call
(:func:`query_nodes`), their noise one keyed draw, and their fit one call
(:func:`fit_nodes`): the same numbers, seed for seed, as node by node, because
each cell's noise is keyed by (seed, level, node, cell) and the fit of a
segment does not look at its neighbours.

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

from cocoviz.consistency import LevelEstimates
from cocoviz.estimators import HC_SENSITIVITY, HG_SENSITIVITY
from cocoviz.runs import LevelRuns

__all__ = [
    "LEVEL_METHODS",
    "node_batches",
    "query_nodes",
    "fit_nodes",
    "stream_hg_node",
    "join_segments",
    "CHUNK_CELLS",
]

#: Methods whose query and fit have compiled whole-level kernels; the others go node by node.
LEVEL_METHODS = ("Hc", "Hg")

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


def query_nodes(method: str, runs: LevelRuns, lo: int, hi: int, bounds: np.ndarray | None) -> tuple:
    """The true answers of nodes ``lo..hi-1`` (private: called by :mod:`cocoviz.measure` only), with their ``ptr``.

    Hc: ``Hc[0..K_k-1]`` per node (``bounds`` holds K per node of the level); Hg: the sorted sizes.
    """
    r0, r1 = runs.ptr[lo], runs.ptr[hi]
    sizes, counts = runs.sizes[r0:r1], runs.counts[r0:r1]
    run_ptr = runs.ptr[lo : hi + 1] - r0
    if method == "Hg":
        before = np.concatenate([[0], np.cumsum(counts)])
        return np.repeat(sizes, counts), before[run_ptr]
    from cocoviz._level_kernels import hc_values

    k = np.asarray(bounds[lo:hi], np.int64)
    ptr = _ptr(k)
    out = np.empty(int(ptr[-1]), np.int64)
    hc_values(sizes, counts, run_ptr, k, ptr, out)
    return out, ptr


def fit_nodes(
    method: str, noisy: np.ndarray, ptr: np.ndarray, *, groups: np.ndarray, epsilon: float, p: int
) -> LevelEstimates:
    """The estimates of consecutive nodes from their noisy answers and public G (post-processing only).

    The same as :func:`cocoviz.estimators.fit_hc` / :func:`~cocoviz.estimators.fit_hg` node by
    node, except that a block mean exactly halfway between two sizes rounds to even (the
    node-by-node fit takes SciPy's running mean, which may fall an ulp either side).
    """
    from cocoviz._level_kernels import fit_hc_segments, fit_hg_segments

    noisy = np.ascontiguousarray(noisy, np.int64)
    if method == "Hg":
        parts = fit_hg_segments(noisy, ptr, p, 2 * HG_SENSITIVITY**2 / epsilon**2)
    else:
        parts = fit_hc_segments(noisy, ptr, np.asarray(groups, np.int64), p, 4 * HC_SENSITIVITY**2 / epsilon**2)
    return LevelEstimates(*parts)


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
    chunks: the result is :func:`fit_nodes`' on the whole vector, exactly.  With
    ``threads`` > 1 the next chunks are drawn on other threads while this one is fitted
    (only for a ``draw`` that is safe to call from several threads at once).
    """
    from cocoviz._level_kernels import hg_blocks_to_runs, hg_values, pava_push

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
            block_sum, block_len, top = pava_push(values, block_sum, block_len, top)
            if k + threads < n_chunks:  # only now: its buffer is the one just fitted
                ahead.append(pool.submit(noisy_chunk, k + threads))
    means, lengths = block_sum[:top] / block_len[:top], block_len[:top].copy()
    del block_sum, block_len
    out_sizes, out_counts, out_vars = np.empty(top, np.int64), np.empty(top, np.int64), np.empty(top, np.float64)
    at = hg_blocks_to_runs(means, lengths, 2 * HG_SENSITIVITY**2 / epsilon**2, out_sizes, out_counts, out_vars, 0)
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
