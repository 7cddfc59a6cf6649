"""Per-node estimators: naive, Hg (ranked) and Hc (cumulative), split at the privacy seam.

Each method is two functions.  Its *query* (``query_hc`` ...) computes the
vector that is measured from one node's true groups, given as ``(sizes,
counts)`` runs: only :func:`cocoviz.measure.measurements.measure` calls it.  Its *fit*
(``fit_hc`` ...) turns the noisy vector, with public facts only (G, ε, p, K),
into a :class:`GroupEstimate`: integral, non-negative runs whose counts add up
to the node's public G, each with the variance estimate of METHOD.md used
later for merging.  Fits never see private data.

The Hc and Hg fits of one node are the whole-level kernels' (:mod:`cocoviz.methods.whole_level`) on one segment:
one implementation per method; SciPy's isotonic regression (:mod:`cocoviz.methods.isotonic`) is the tests' oracle.

Sensitivities (one person added to or removed from one group):

* naive, H[0..K] truncated at K: Δ = 2 (one group leaves size j, enters j ± 1);
* Hg, the sorted sizes: Δ = 1 (one entry moves by one);
* Hc[0..K-1]: Δ = 1 (one cumulative count moves by one; Hc[K] = G is public).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "GroupEstimate",
    "query_naive",
    "query_hc",
    "query_hg",
    "fit_naive",
    "fit_hc",
    "fit_hg",
    "project_simplex",
    "largest_remainder",
    "NAIVE_SENSITIVITY",
    "HG_SENSITIVITY",
    "hg_noise_variance",
    "HC_SENSITIVITY",
]

NAIVE_SENSITIVITY = 2
HG_SENSITIVITY = 1
HC_SENSITIVITY = 1


def hg_noise_variance(epsilon: float) -> float:
    """σ² = 2Δ²/ε², the variance of one cell of Hg's noise: the block rule's numerator (``σ²/|S|`` per block) and
    the scale of the step model (:func:`cocoviz.accuracy.stated.variances.hg_stated_runs`).

    >>> hg_noise_variance(0.5)
    8.0
    """
    return 2 * HG_SENSITIVITY**2 / epsilon**2


@dataclass(frozen=True)
class GroupEstimate:
    """Estimated groups of one node as runs sorted by size.

    ``counts[r]`` groups have estimated size ``sizes[r]`` and variance
    ``variances[r]``; a size may repeat when its groups carry different
    variances.  ``variances`` is the paper's model, the merge's weights (the
    experimental stated errors are computed from the estimate on request:
    :mod:`cocoviz.accuracy.stated`).
    """

    sizes: np.ndarray
    counts: np.ndarray
    variances: np.ndarray

    @property
    def groups(self) -> int:
        return int(self.counts.sum())


def truncated_histogram(sizes: np.ndarray, counts: np.ndarray, max_size: int) -> np.ndarray:
    """H[0..K], groups larger than K counted at K."""
    h = np.zeros(max_size + 1, np.int64)
    np.add.at(h, np.minimum(sizes, max_size), counts)
    return h


def _from_histogram(h: np.ndarray, variance_numerator: float, epsilon: float) -> GroupEstimate:
    """Runs of an estimated H, each with variance ``numerator / (ε² · count)``."""
    sizes = np.flatnonzero(h)
    counts = h[sizes]
    return GroupEstimate(sizes.astype(np.int64), counts.astype(np.int64), variance_numerator / (epsilon**2 * counts))


def project_simplex(v: np.ndarray, total: float) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{x >= 0, sum x = total}`` (exact, O(n log n)).

    >>> project_simplex(np.array([3., -1., 1.]), 2.0)
    array([2., 0., 0.])
    """
    v = np.asarray(v, np.float64)
    if total <= 0:
        return np.zeros_like(v)
    u = np.sort(v)[::-1]
    excess = np.cumsum(u) - total
    rank = np.arange(1, len(u) + 1)
    rho = np.flatnonzero(u - excess / rank > 0)[-1]
    theta = excess[rho] / (rho + 1)
    return np.maximum(v - theta, 0.0)


def largest_remainder(x: np.ndarray, total: int) -> np.ndarray:
    """Integers that sum to ``total``: floors, plus one for the largest fractional parts.

    Ties go to the lower index, so the result is deterministic.

    >>> largest_remainder(np.array([0.5, 1.25, 0.25]), 2)
    array([1, 1, 0])
    """
    floors = np.floor(x)
    short = int(total - floors.sum())
    out = floors.astype(np.int64)
    if short > 0:
        order = np.argsort(-(x - floors), kind="stable")
        out[order[:short]] += 1
    return out


def query_naive(sizes: np.ndarray, counts: np.ndarray, max_size: int) -> np.ndarray:
    """H[0..K], groups larger than K counted at K (Δ = 2: one group leaves size j, enters j ± 1)."""
    return truncated_histogram(sizes, counts, max_size)


def query_hc(sizes: np.ndarray, counts: np.ndarray, max_size: int) -> np.ndarray:
    """Hc[0..K-1] of the truncated H (Δ = 1); Hc[K] = G is public and not measured."""
    return np.cumsum(truncated_histogram(sizes, counts, max_size))[:-1]


def query_hg(sizes: np.ndarray, counts: np.ndarray, max_size: int | None = None) -> np.ndarray:
    """Hg, the G group sizes sorted ascending (Δ = 1: one entry moves by one); needs no K."""
    return np.repeat(np.asarray(sizes, np.int64), counts)


def fit_naive(
    noisy: np.ndarray, *, groups: int, epsilon: float, p: int | None = None, max_size: int | None = None
) -> GroupEstimate:
    """Simplex projection of noisy H[0..K] onto G groups, then largest-remainder integers.

    Variance per group: the noisy H[s] has variance ≈ 2·(2/ε)², shared by the
    Ĥ[s] groups estimated at size s: ``8 / (ε² Ĥ[s])`` (decision: the Hc
    rule of METHOD.md with the naive mechanism's scale).

    >>> fit_naive(np.array([1, 2, -1, 1]), groups=3, epsilon=1.0).counts
    array([1, 2])
    """
    h_hat = largest_remainder(project_simplex(noisy, groups), groups)
    return _from_histogram(h_hat, 2 * NAIVE_SENSITIVITY**2, epsilon)


def fit_hc(noisy: np.ndarray, *, groups: int, epsilon: float, p: int = 1, max_size: int | None = None) -> GroupEstimate:
    """Bounded isotonic regression of noisy Hc[0..K-1] into [0, G], rounding, Hc[K] = G.

    Variance per group (the merge's weights): the estimated H[s] = Hc[s] - Hc[s-1]
    has variance ≈ 2 · 2/ε², shared by its Ĥ[s] groups: ``4 / (ε² Ĥ[s])``.

    >>> est = fit_hc(np.array([0, 2, 2, 3]), groups=4, epsilon=1.0, p=1)  # Hc = [0, 2, 2, 3, 4]
    >>> est.sizes, est.counts
    (array([1, 3, 4]), array([2, 1, 1]))
    """
    from cocoviz.methods._level_kernels import fit_hc_segments

    noisy = np.ascontiguousarray(noisy, np.int64)
    numerator = 2 * 2 * HC_SENSITIVITY**2 / epsilon**2
    _, sizes, counts, variances = fit_hc_segments(noisy, np.array([0, noisy.size]), np.array([groups]), p, numerator)
    return GroupEstimate(sizes, counts, variances)


def fit_hg(noisy: np.ndarray, *, groups: int, epsilon: float, p: int = 2, max_size: int | None = None) -> GroupEstimate:
    """Isotonic regression of noisy Hg with x ≥ 0, rounding, runs per block.

    Variance per group (the merge's weights): ``2 / (|S_i| ε²)`` where S_i is the
    block (run of equal fitted values, before rounding) holding group i.

    >>> fit_hg(np.array([3, 1, 2, 6]), groups=4, epsilon=1.0, p=2).sizes
    array([2, 6])
    """
    from cocoviz.methods._level_kernels import fit_hg_segments

    noisy = np.ascontiguousarray(noisy, np.int64)
    _, sizes, counts, variances = fit_hg_segments(noisy, np.array([0, noisy.size]), p, hg_noise_variance(epsilon))
    return GroupEstimate(sizes, counts, variances)
