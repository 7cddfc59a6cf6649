"""Error measures: earthmover's distance, error by size, and the omniscient yardstick."""

from __future__ import annotations

import numpy as np

from cocoviz.core.histograms import pad
from cocoviz.core.runs import LevelRuns

__all__ = ["emd", "emd_runs", "emd_level", "error_by_size", "omniscient_emd"]


def emd(h1: np.ndarray, h2: np.ndarray) -> int:
    """Earthmover's distance between two count-of-counts histograms.

    The number of persons to add to or remove from groups to turn one into
    the other: ``sum_j |Hc1[j] - Hc2[j]|`` over a common length.

    >>> emd(np.array([0, 2, 1, 0, 1]), np.array([0, 1, 2, 1]))
    2
    """
    n = max(len(h1), len(h2))
    return int(np.abs(np.cumsum(pad(np.asarray(h1), n)) - np.cumsum(pad(np.asarray(h2), n))).sum())


def emd_runs(sizes1: np.ndarray, counts1: np.ndarray, sizes2: np.ndarray, counts2: np.ndarray) -> int:
    """:func:`emd` on the sparse (size, count) form, in time linear in the runs.

    >>> emd_runs(np.array([1, 2, 4]), np.array([2, 1, 1]), np.array([1, 2, 3]), np.array([1, 2, 1]))
    2
    """

    def one(s, c):
        return LevelRuns(np.array([0, len(s)], np.int64), np.asarray(s, np.int64), np.asarray(c, np.int64))

    return int(emd_level(one(sizes1, counts1), one(sizes2, counts2))[0])


def emd_level(a: LevelRuns, b: LevelRuns) -> np.ndarray:
    """emd of every node between two sets of runs over the same nodes.

    Between consecutive sizes present in either histogram both cumulative
    histograms are flat, so each gap contributes ``|Hc_a - Hc_b| * gap``;
    the last size of a node counts once (a common length ending there).
    """
    n_nodes = a.n_nodes
    node = np.concatenate([a.node_ids(), b.node_ids()])
    size = np.concatenate([a.sizes, b.sizes])
    weight = np.concatenate([a.counts, -b.counts])
    order = np.lexsort((size, node))
    node, size, weight = node[order], size[order], weight[order]
    running = np.cumsum(weight)
    # Restart the running difference at every node.
    first = np.searchsorted(node, np.arange(n_nodes))
    before = np.where(first > 0, running[np.maximum(first - 1, 0)], 0)
    running -= np.repeat(before, np.bincount(node, minlength=n_nodes))
    gap = np.ones(len(size), np.int64)
    same = node[1:] == node[:-1]
    gap[:-1][same] = size[1:][same] - size[:-1][same]
    return np.bincount(node, weights=np.abs(running) * gap, minlength=n_nodes).astype(np.int64)


def error_by_size(h_true: np.ndarray, h_est: np.ndarray) -> np.ndarray:
    """Per-size error ``|Ĥc[s] - Hc[s]|``; it sums to the emd (paper, Figure 1)."""
    n = max(len(h_true), len(h_est))
    return np.abs(np.cumsum(pad(np.asarray(h_est), n)) - np.cumsum(pad(np.asarray(h_true), n)))


def omniscient_emd(distinct_sizes: int | np.ndarray, epsilon: float) -> float | np.ndarray:
    """The omniscient yardstick of a node: D / ε, D its number of distinct group sizes.

    The paper's omniscient algorithm knows which sizes exist at a node and adds
    Laplace noise of scale 1/ε only to the count of each of them; each noisy
    count is off by 1/ε in expectation, so its emd is about D/ε (METHOD.md).
    The best of Hc and Hg lands near it on the full-size stand-ins.

    >>> omniscient_emd(np.array([3, 10]), 0.5)
    array([ 6., 20.])
    """
    return (
        np.asarray(distinct_sizes, np.float64) / float(epsilon)
        if np.ndim(distinct_sizes)
        else float(distinct_sizes) / float(epsilon)
    )
