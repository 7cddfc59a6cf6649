"""Method "Hcp" (experimental): cumulative counts on a public grid, shared out by a public prior.

Kuo et al.'s Hc measures Hc[j] for every j < K (K cells, sensitivity 1).  **Hcp** measures Hc
only at a public grid of boundaries ``g_1 < ... < g_m < K`` (tens of cells instead of K), fits
them like Hc (bounded isotonic regression into [0, G], rounding, Hc[K] = G public), differences
them into **bucket counts**, and shares each bucket's count across its sizes in proportion to a
public prior (Tao et al.'s :func:`cocoviz.methods.priors.share_buckets`: uniform where the prior is zero
on a bucket, Definition 3.1 case 2; largest remainders keep every bucket total and G).

**The grid** (:func:`hcp_grid`, derived from K alone): every size 0..8, then the powers
``2^(k/4)`` rounded (10, 11, 13, 16, 19, 23, 27, 32, 38, 45, 54, 64, ...: four boundaries per
doubling), keeping those below K.  K = 100,000 gives 63 cells.  The buckets are {0}, {1}, ...,
{8}, then ``(g_i, g_{i+1}]``, the last ``(g_m, K]``.

**Sensitivity 1.** One person added to or removed from one group moves it from size s to s ± 1
(both counted at K when ≥ K).  Hc[g] = #groups of size ≤ g changes only for g = min(s, s ± 1)
and only if that g is a boundary: at most one cell moves, by one (``tests/test_hcp.py`` checks
every one-person change by brute force).

**Variance per group** (for the top-down merge; in neither paper, a decision).  For bucket b with
estimated count ĉ_b, width w_b (sizes in it) and n_b noisy endpoints (1 for the first and last
bucket, whose other end, 0 or G, is public; else 2)::

    V_b = 2 n_b w_b² / (ε² max(ĉ_b, 1))  +  W_b

The first term is the Hc rule (METHOD.md: ``4 / (ε² Ĥ[s])`` when w_b = 1) for the bucket count's
noise spread over the bucket's groups, scaled by w_b² because a count error moves a group across
a boundary by about a bucket's width, not by one.  ``W_b`` is the within-bucket uncertainty: the
variance of the prior restricted to the bucket (``(w_b² − 1) / 12``, the uniform's, where the
prior has no mass on it).  When the prior is the parent's release (``parent_prior=True``), W_b is
the uniform's whatever the prior says: the within-bucket shape is the parent's information, and
merging it back into the parent must not count it twice (see :mod:`cocoviz.release.post_process`).

>>> hcp_grid(20).tolist()
[0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 13, 16, 19]
>>> noisy = query_hcp(np.array([1, 2, 9, 12]), np.array([3, 2, 1, 1]), 20)
>>> est = fit_hcp(noisy, groups=7, epsilon=1e6, max_size=20)   # next to no noise: uniform prior
>>> est.sizes.tolist(), est.counts.tolist()
([1, 2, 9, 12], [3, 2, 1, 1])
"""

from __future__ import annotations

import numpy as np

from cocoviz.errors import ParameterError
from cocoviz.methods.estimators import GroupEstimate
from cocoviz.methods.isotonic import isotonic
from cocoviz.methods.priors import share_buckets

__all__ = [
    "HCP_SENSITIVITY",
    "DENSE_TOP",
    "hcp_grid",
    "hcp_buckets",
    "query_hcp",
    "fit_hcp",
    "share_counts",
    "bucket_variances",
]

HCP_SENSITIVITY = 1
#: Every size up to this one is its own bucket.
DENSE_TOP = 8
#: Boundaries per doubling above DENSE_TOP.
PER_DOUBLING = 4


def hcp_grid(max_size: int) -> np.ndarray:
    """The public boundaries g_1 < ... < g_m < K at which Hc is measured (from K alone).

    >>> len(hcp_grid(100_000)), hcp_grid(100_000)[-3:].tolist()
    (63, [65536, 77936, 92682])
    """
    max_size = int(max_size)
    if max_size < 1:
        raise ParameterError(f"the Hcp grid needs K ≥ 1, got {max_size}")
    top = int(np.ceil(PER_DOUBLING * np.log2(max(max_size, 2)))) + 1
    geometric = np.rint(2.0 ** (np.arange(PER_DOUBLING * 3, top) / PER_DOUBLING)).astype(np.int64)
    grid = np.unique(np.concatenate([np.arange(DENSE_TOP + 1), geometric]))
    return grid[grid < max_size]


def hcp_buckets(max_size: int, grid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """First and last size of every bucket: ``[0, g_1], (g_1, g_2], ..., (g_m, K]``.

    ``grid`` overrides :func:`hcp_grid` (increasing boundaries in [0, K), the first one 0).

    >>> [b.tolist() for b in hcp_buckets(12)]
    [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12], [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12]]
    >>> [b.tolist() for b in hcp_buckets(7, np.array([0, 1, 3]))]
    [[0, 1, 2, 4], [0, 1, 3, 7]]
    """
    grid = hcp_grid(max_size) if grid is None else np.asarray(grid, np.int64)
    last = np.append(grid, int(max_size))
    first = np.concatenate([[0], grid + 1])
    return first, last


def query_hcp(sizes: np.ndarray, counts: np.ndarray, max_size: int) -> np.ndarray:
    """Hc at the grid's boundaries, groups larger than K counted at K (Δ = 1)."""
    sizes = np.minimum(np.asarray(sizes, np.int64), int(max_size))
    at_most = np.concatenate([[0], np.cumsum(np.asarray(counts, np.int64))])
    return at_most[np.searchsorted(sizes, hcp_grid(max_size), side="right")]


def _dense_prior(prior, max_size: int) -> np.ndarray:
    """The prior as weights over sizes 0..K (None: uniform)."""
    if prior is None:
        return np.ones(max_size + 1)
    sizes, weights = prior
    dense = np.zeros(max_size + 1)
    np.add.at(dense, np.minimum(np.asarray(sizes, np.int64), max_size), weights)
    return dense


def bucket_variances(
    counts: np.ndarray,
    prior: np.ndarray,
    max_size: int,
    epsilon: float,
    *,
    parent_prior: bool = False,
    grid: np.ndarray | None = None,
) -> np.ndarray:
    """V_b of every bucket (module docstring): count noise spread over its groups, plus W_b.

    >>> bucket_variances(np.array([2, 0, 3, 5, 1]), np.ones(5), 4, 1.0).round(3).tolist()   # unit buckets: Hc's rule
    [1.0, 4.0, 1.333, 0.8, 2.0]
    """
    first, last = hcp_buckets(max_size, grid)
    width = (last - first + 1).astype(np.float64)
    ends = np.full(len(first), 2.0)
    ends[0] -= 1
    ends[-1] -= 1
    uniform = (width**2 - 1) / 12
    labels = np.repeat(np.arange(len(first)), last - first + 1)
    sizes = np.arange(max_size + 1, dtype=np.float64)
    mass = np.bincount(labels, prior, len(first))
    safe = np.where(mass > 0, mass, 1.0)
    mean = np.bincount(labels, prior * sizes, len(first)) / safe
    second = np.bincount(labels, prior * sizes**2, len(first)) / safe
    within = np.where(mass > 0, np.maximum(second - mean**2, 0.0), uniform)
    if parent_prior:
        within = uniform
    return 2 * ends * width**2 / (epsilon**2 * np.maximum(counts, 1)) + within


def fit_hcp(
    noisy: np.ndarray,
    *,
    groups: int,
    epsilon: float,
    p: int = 1,
    max_size: int,
    prior: tuple[np.ndarray, np.ndarray] | None = None,
    parent_prior: bool = False,
    grid: np.ndarray | None = None,
) -> GroupEstimate:
    """Bucket counts from noisy Hc at the grid, shared across sizes by ``prior``, with V_b per group.

    Parameters
    ----------
    noisy : noisy Hc at :func:`hcp_grid` ``(max_size)``
    groups, epsilon, p, max_size : public G, the level's ε, the isotonic loss, K
    prior : ``(sizes, weights)`` of a public prior (None: uniform over 0..K)
    parent_prior : the prior is the parent's release: W_b is the uniform's (module docstring)
    grid : boundaries instead of :func:`hcp_grid` (for tests and teaching; a plan always uses the default)

    Examples
    --------
    Tao's example of :func:`~cocoviz.methods.priors.share_buckets`, through the fit (next to no noise):

    >>> prior = (np.arange(8), np.array([0, .4, .2, .2, .1, .1, 0, 0]))
    >>> est = fit_hcp(np.array([1, 4, 8]), groups=10, epsilon=1e6, max_size=7, prior=prior, grid=np.array([0, 1, 3]))
    >>> est.sizes.tolist(), est.counts.tolist()
    ([0, 1, 2, 3, 4, 5], [1, 3, 2, 2, 1, 1])
    """
    grid = hcp_grid(max_size) if grid is None else np.asarray(grid, np.int64)
    if len(noisy) != len(grid):
        raise ParameterError(f"Hcp with K = {max_size} measures {len(grid)} cells, got {len(noisy)}")
    hc = np.empty(len(grid) + 1, np.int64)
    hc[:-1] = np.rint(isotonic(noisy, p=p, lower=0, upper=groups))  # rounding keeps it non-decreasing
    hc[-1] = groups
    counts = np.diff(hc, prepend=0)
    return share_counts(
        counts, groups=groups, epsilon=epsilon, max_size=max_size, prior=prior, parent_prior=parent_prior, grid=grid
    )


def share_counts(
    counts: np.ndarray,
    *,
    groups: int,
    epsilon: float,
    max_size: int,
    prior: tuple[np.ndarray, np.ndarray] | None = None,
    parent_prior: bool = False,
    grid: np.ndarray | None = None,
) -> GroupEstimate:
    """Whole bucket counts (one per :func:`hcp_buckets` bucket) to runs with V_b: the fit after rounding.

    >>> share_counts(np.array([1, 3, 4, 2]), groups=10, epsilon=1.0, max_size=7).counts.tolist()
    Traceback (most recent call last):
    cocoviz.errors.ParameterError: Hcp with K = 7 has 8 buckets, got 4 counts
    """
    first, last = hcp_buckets(max_size, grid)
    if len(counts) != len(first):
        raise ParameterError(f"Hcp with K = {max_size} has {len(first)} buckets, got {len(counts)} counts")
    dense = _dense_prior(prior, max_size)
    if not dense.sum() > 0:  # an all-zero prior (e.g. a parent released with no groups): uniform
        dense = np.ones(max_size + 1)
    h = share_buckets(dense, [np.arange(a, b + 1) for a, b in zip(first, last)], counts, int(groups))
    v = bucket_variances(counts, dense, max_size, epsilon, parent_prior=parent_prior, grid=grid)
    sizes = np.flatnonzero(h)
    bucket_of = np.searchsorted(last, sizes)
    return GroupEstimate(sizes.astype(np.int64), h[sizes].astype(np.int64), v[bucket_of].astype(np.float64))
