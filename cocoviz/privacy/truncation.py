"""A privately chosen bound K (Wu et al.'s truncation, under our person-level neighbours).

Hc and naive measure K cells per node, so a bound K much larger than the data
costs noise cells and time, and one below the largest group truncates.  Here K
is chosen from the data with its own budget ε_K:

* ``"noisy-max"``: K̂ = max + X + ⌈ln(1/β)/ε_K⌉, with X double-geometric of
  scale 1/ε_K: the largest group size moves by at most one when one person is
  added or removed (Δ = 1).  K̂ truncates when X ≤ −m − 1, with probability
  α^(m+1) / (1 + α) < e^(−ε_K m) ≤ β for m = ⌈ln(1/β)/ε_K⌉ (α = e^(−ε_K)).  One K
  for the whole release, measured at the root.
* ``"noisy-max-per-node"``: the same at every node of every level that needs K;
  the nodes of a level are disjoint, so ε_K is charged once per level.
* ``"from-hg"``: no ε of its own.  The deepest Hg level above the levels that need K is
  measured first; each of its nodes gets K̂ = ⌈top⌉ + m, with ``top`` the last value of the
  least-squares isotonic fit of the node's noisy Hg (the largest size that fit releases) and m a
  public margin, and every node below takes its ancestor's K̂.  It is post-processing of a DP
  output, so it costs nothing — but K̂ is noisy, so truncation can still occur.  Honestly bounded:
  the fit's last value is max over i of the mean of the noisy y_i..y_G, at least y_G = max + X
  (Δ = 1), so K̂ truncates only if X ≤ −m − 1: with m = ⌈ln(1/β)/ε⌉ (double-geometric, as for
  noisy max) or m = ⌈σ·√(2 ln(1/β))⌉ (discrete Gaussian, sub-Gaussian with parameter σ: Canonne,
  Kamath and Steinke 2020, Corollary 9) that has probability ≤ β (:func:`hg_margin`).
* ``"svt"``: Wu's AboveThreshold over a public geometric grid θ_i = 2^i of
  candidate bounds: the queries "groups of size ≤ θ_i" (Δ = 1) against the
  public G, with threshold noise of scale 2/ε_K and query noise of scale 4/ε_K;
  K̂ is the first θ_i whose noisy count reaches the noisy threshold.  Kept for
  teaching and reproduction: it stops early and truncates often.

β bounds one K̂ (``k_beta_scope="node"``); with one K̂ per node, some node of a release of n
nodes truncates with probability up to n·β.  ``k_beta_scope="release"`` draws each K̂ with
β / n, so by a union bound the whole release truncates with probability ≤ β
(:meth:`cocoviz.Plan.truncation` states which, and the budget report shows it).

Every K̂ is clipped to [1, ceiling] with the public ceiling (the plan's
``max_size``).  A group above K̂ is truncated to K̂ — never refused, since a
refusal would tell the private maximum.  :func:`truncation_error` measures
what truncation alone costs, apart from the noise.

>>> noisy_max_bound(4, epsilon=1.0, beta=0.01, ceiling=100, noise=-2)  # 4 - 2 + ⌈ln 100⌉
7
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from cocoviz.core.runs import LevelRuns
from cocoviz.errors import ParameterError

__all__ = [
    "K_SELECT",
    "DEFAULT_K_BETA",
    "K_SENSITIVITY",
    "noisy_max_bound",
    "noisy_max_offset",
    "svt_grid",
    "svt_bound",
    "truncation_error",
    "truncated_nodes",
    "truncation_errors",
    "bound_from_release",
    "check_beta",
    "K_BETA_SCOPES",
    "hg_margin",
    "hg_bounds",
]

#: How K is chosen: a public input, or privately from the data.
K_SELECT = ("public", "noisy-max", "noisy-max-per-node", "svt", "from-hg")
#: What k_beta bounds: the truncation of each K̂ drawn, or of the whole release (union bound over the K̂).
K_BETA_SCOPES = ("node", "release")
#: The default probability that noisy max truncates.
DEFAULT_K_BETA = 1e-6
#: Sensitivity of the largest group size and of a count "groups of size ≤ θ" under our neighbours.
K_SENSITIVITY = 1


#: The smallest β accepted: ln(1/β) stays finite (690) and the offset ⌈ln(1/β)/ε⌉ an integer; below it 1/β
#: overflows to infinity.
MIN_BETA = 1e-300


def check_beta(beta: float) -> float:
    """β as a float in (0, 1)."""
    if isinstance(beta, bool) or not isinstance(beta, (int, float, np.floating)) or not MIN_BETA <= beta < 1:
        raise ParameterError(
            f"k_beta must be a number from {MIN_BETA:g} up to 1 (exclusive), got {beta!r}"
            + (" (ln(1/β) would be infinite)" if isinstance(beta, (float, np.floating)) and 0 < beta < MIN_BETA else "")
        )
    return float(beta)


def noisy_max_offset(epsilon: float, beta: float) -> int:
    """⌈ln(1/β)/ε⌉: the shift that makes noisy max truncate with probability at most β."""
    return math.ceil(math.log(1.0 / beta) / epsilon)


def noisy_max_bound(true_max: int, *, epsilon: float, beta: float, ceiling: int, noise: int) -> int:
    """K̂ = max + noise + ⌈ln(1/β)/ε⌉, clipped to [1, ceiling]; ``noise`` is the drawn X."""
    return int(min(max(int(true_max) + int(noise) + noisy_max_offset(epsilon, beta), 1), ceiling))


def svt_grid(ceiling: int) -> np.ndarray:
    """The public candidate bounds 1, 2, 4, …, up to the ceiling (the ceiling last).

    >>> svt_grid(10).tolist()
    [1, 2, 4, 8, 10]
    """
    grid = [1 << i for i in range(max(int(ceiling), 1).bit_length()) if (1 << i) < ceiling]
    return np.array([*grid, int(ceiling)], np.int64)


def svt_bound(
    counts_at_most: np.ndarray, groups: int, grid: np.ndarray, *, threshold_noise: int, query_noise: np.ndarray
) -> int:
    """AboveThreshold: the first θ_i with count(size ≤ θ_i) + ν_i ≥ G + ρ (the ceiling if none).

    ``counts_at_most[i]`` is the true number of groups of size ≤ ``grid[i]``;
    ``threshold_noise`` is ρ (scale 2/ε_K), ``query_noise`` the ν_i (scale 4/ε_K).
    """
    above = np.flatnonzero(np.asarray(counts_at_most) + np.asarray(query_noise) >= groups + threshold_noise)
    return int(grid[above[0]] if above.size else grid[-1])


def truncation_error(sizes: np.ndarray, counts: np.ndarray, bound: int) -> int:
    """Persons lost by counting every group above ``bound`` at ``bound``: Σ_{s>K} (s − K)·H[s].

    It is the emd between a node's histogram and its truncation, the error a
    release would make at that node with no noise at all.

    >>> truncation_error(np.array([1, 4, 9]), np.array([2, 1, 3]), 5)
    12
    """
    sizes = np.asarray(sizes, np.int64)
    over = sizes > bound
    return int(np.dot(sizes[over] - bound, np.asarray(counts, np.int64)[over]))


def truncation_errors(runs: LevelRuns, bounds: np.ndarray) -> np.ndarray:
    """:func:`truncation_error` of every node of a level at once, ``bounds`` holding each node's K.

    >>> from cocoviz.core.runs import aggregate_runs
    >>> runs = aggregate_runs(np.array([0, 0, 0, 1]), np.array([1, 4, 9, 3]), np.array([2, 1, 3, 5]), 3)
    >>> truncation_errors(runs, np.array([5, 1, 7])).tolist()
    [12, 10, 0]
    """
    lost = np.maximum(runs.sizes - np.asarray(bounds, np.int64)[runs.node_ids()], 0) * runs.counts
    total = np.concatenate([np.zeros(1, np.int64), np.cumsum(lost, dtype=np.int64)])
    return total[runs.ptr[1:]] - total[runs.ptr[:-1]]


def truncated_nodes(tree, level: int, bounds: np.ndarray) -> int:
    """How many nodes of ``level`` hold a group larger than their K (``bounds``, one per node).

    Reads the truth: for evaluation and simulation only, like :func:`truncation_error`.
    """
    return int(np.count_nonzero(truncation_errors(tree.runs(level), bounds)))


def bound_from_release(release, node: Sequence[str] = ()) -> int:
    """The largest released size at ``node`` of an Hg release: a K for later releases, at no ε.

    Free post-processing of a release already paid for.  It does not
    guarantee that no group is truncated: the released top size is noisy and
    isotonic-regressed, so it may fall below the true maximum.
    """
    h = release.histogram(node)
    return max(int(np.flatnonzero(h)[-1]) if h.any() else 1, 1)


def hg_margin(beta: float, *, epsilon: float | None = None, sigma2=None) -> int:
    """The margin m with P(X ≤ −m − 1) ≤ β for the noise X of an Hg cell (Δ = 1).

    Double-geometric of scale 1/ε: m = ⌈ln(1/β)/ε⌉ (P = α^(m+1)/(1+α) < e^(−εm) ≤ β).  Discrete
    Gaussian of variance parameter σ² (``sigma2``): m = ⌈σ√(2 ln(1/β))⌉ (P ≤ e^(−m²/(2σ²)) ≤ β).

    >>> hg_margin(0.01, epsilon=1.0), hg_margin(0.01, sigma2=1)
    (5, 4)
    """
    if (epsilon is None) == (sigma2 is None):
        raise ParameterError("hg_margin needs the ε of double-geometric noise or the σ² of a Gaussian, one of them")
    if epsilon is not None:
        return noisy_max_offset(epsilon, beta)
    return math.ceil(math.sqrt(2 * float(sigma2) * math.log(1.0 / beta)))


def hg_bounds(ptr: np.ndarray, values: np.ndarray, margin: int, ceiling: int) -> np.ndarray:
    """K̂ per node from noisy Hg answers (node k's are ``values[ptr[k]:ptr[k + 1]]``): ⌈top⌉ + ``margin``,
    clipped to [1, ``ceiling``], with top the last value of the node's least-squares isotonic fit,
    max over i of mean(y_i..y_G) (at least y_G; a node without groups gets 1).

    >>> hg_bounds(np.array([0, 3, 3]), np.array([1, 9, 4]), 2, 100).tolist()  # top = max(14/3, 13/2, 4)
    [9, 1]
    """
    ptr, values = np.asarray(ptr, np.int64), np.asarray(values, np.float64)
    out = np.ones(len(ptr) - 1, np.int64)
    for k in range(len(out)):
        y = values[ptr[k] : ptr[k + 1]]
        if y.size:
            suffix_means = np.cumsum(y[::-1]) / np.arange(1, y.size + 1)
            out[k] = min(max(math.ceil(suffix_means.max()) + int(margin), 1), int(ceiling))
    return out
