"""The one registry of estimation methods: what each measures, at what sensitivity (Δ₁ and Δ₂), and how it is
fitted; the dashboard's pickers, the plan's validation and cost, and the docs read it.

>>> METHODS["Hc"].sensitivity, METHODS["Hg"].default_p, sorted(METHODS)
(1, 2, ['Hc', 'Hcp', 'Hg', 'naive'])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from cocoviz.methods.estimators import (
    HC_SENSITIVITY,
    HG_SENSITIVITY,
    NAIVE_SENSITIVITY,
    fit_hc,
    fit_hg,
    fit_naive,
    query_hc,
    query_hg,
    query_naive,
)
from cocoviz.methods.hcp import HCP_SENSITIVITY, fit_hcp, hcp_grid, query_hcp
from cocoviz.methods.whole_level import fit_hc_nodes, fit_hg_nodes, query_hc_nodes, query_hg_nodes
from cocoviz.privacy.accounting import gaussian_sigma2
from cocoviz.privacy.noise import discrete_gaussian_variance

__all__ = ["Method", "METHODS", "CONSISTENCY", "MERGES", "DEFAULT_MAX_SIZE", "MAX_K", "gaussian_epsilon"]

CONSISTENCY = ("top-down", "bottom-up", "none")
#: The ways two estimates of one group's size merge in the top-down step
#: (:func:`cocoviz.consistency.merge.merge_estimates`): inverse-variance weighted, or the plain average.
MERGES = ("weighted", "average")

#: The paper's conservative public bound on group size.
DEFAULT_MAX_SIZE = 100_000
#: The largest K a plan accepts: Hc and naive measure K cells per node (80 MB of noise per node at 10M).
MAX_K = 10_000_000


@dataclass(frozen=True)
class Method:
    """One estimation method: what it measures, at what sensitivity, and how it is fitted.

    ``query`` reads a node's private ``(sizes, counts)`` runs (only
    :func:`cocoviz.measure` calls it); ``fit`` turns the noisy answer and public
    facts into estimated groups.  ``level_query`` and ``level_fit``, where a method
    has them, do the same for a run of consecutive nodes in one compiled call
    (:mod:`cocoviz.methods.whole_level`); without them a level goes node by node.  ``k_cells``
    gives a node's noise cells from the public bound K (None: one cell per group, G), ``name_vector``
    the measured vector's name from K and whether K is chosen privately.  Adding a method is one
    :data:`METHODS` entry: nothing here switches on a method's name.

    >>> doubled = Method("X", 1, None, True, query_hc, fit_hc, k_cells=lambda k: 2 * k)
    >>> doubled.cells(np.array([3, 5]), 10).tolist(), doubled.quantity(10)
    ([20, 20], 'X')
    """

    name: str
    sensitivity: int
    default_p: int | None
    needs_k: bool
    query: Callable[..., np.ndarray] = field(repr=False)
    fit: Callable[..., object] = field(repr=False)
    summary: str = ""
    experimental: bool = False
    level_query: Callable[..., tuple] | None = field(default=None, repr=False)
    level_fit: Callable[..., object] | None = field(default=None, repr=False)
    #: Δ₂², the squared L2 sensitivity under the person neighbours (a whole number: the query is integral).
    l2_squared: int = 1
    #: Noise cells per node from K; None for a method that measures one cell per group (G).
    k_cells: Callable[[int], int] | None = field(default=None, repr=False)
    #: The measured vector's name from K and whether K is chosen privately; None: the method's name.
    name_vector: Callable[[int, bool], str] | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.needs_k != (self.k_cells is not None):
            raise ValueError(f"method {self.name!r}: needs_k must say whether k_cells is given")

    @property
    def l2_sensitivity(self) -> float:
        """Δ₂: the L2 sensitivity the discrete Gaussian's σ² = Δ₂²/(2ρ) is set by (brute-forced in the tests)."""
        return math.sqrt(self.l2_squared)

    def quantity(self, max_size: int, private_k: bool = False) -> str:
        """The measured vector's name, as the budget report shows it (K̂ when K is chosen privately)."""
        if self.name_vector is None:
            return self.name
        return self.name_vector(max_size, private_k and self.needs_k)

    def cells(self, groups: np.ndarray, max_size: int) -> np.ndarray:
        """Noise cells per node: ``k_cells(K)`` for a method measured at K (K for Hc, K + 1 for naive, the grid's
        size for Hcp), else G."""
        groups = np.asarray(groups, np.int64)
        if self.k_cells is None:
            return groups.copy()
        return np.full(groups.shape, self.k_cells(max_size), np.int64)

    def cells_at(self, bounds: np.ndarray) -> np.ndarray:
        """Noise cells per node of a method measured at K, with K per node ``bounds``: ``k_cells`` of each.

        >>> METHODS["naive"].cells_at(np.array([4, 9, 4])).tolist()
        [5, 10, 5]
        """
        if self.k_cells is None:
            raise ValueError(f"method {self.name!r} is not measured at K")
        distinct, at = np.unique(np.asarray(bounds, np.int64), return_inverse=True)
        return np.array([self.k_cells(int(k)) for k in distinct], np.int64)[at.reshape(-1)]


def _hc_vector(k: int, private_k: bool) -> str:
    return f"Hc[0..K̂-1], K̂ ≤ {k:,}" if private_k else f"Hc[0..{k - 1}]"


def _naive_vector(k: int, private_k: bool) -> str:
    return f"H[0..K̂], K̂ ≤ {k:,}" if private_k else f"H[0..{k}]"


def _hcp_vector(k: int, private_k: bool) -> str:
    return f"Hc at the grid of K̂ ≤ {k:,}" if private_k else f"Hc at {len(hcp_grid(k))} grid points < {k:,}"


def _hcp_cells(k: int) -> int:
    return len(hcp_grid(k))


#: The method registry; the dashboard's pickers, validation, the plan's cost and the docs read it.
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "Hc",
            HC_SENSITIVITY,
            1,
            True,
            query_hc,
            fit_hc,
            "cumulative counts Hc[0..K-1], bounded isotonic regression (best on dense data)",
            level_query=query_hc_nodes,
            level_fit=fit_hc_nodes,
            k_cells=int,
            name_vector=_hc_vector,
        ),
        Method(
            "Hg",
            HG_SENSITIVITY,
            2,
            False,
            query_hg,
            fit_hg,
            "the sorted group sizes, isotonic regression (best on sparse data with large groups)",
            level_query=query_hg_nodes,
            level_fit=fit_hg_nodes,
        ),
        Method(
            "naive",
            NAIVE_SENSITIVITY,
            None,
            True,
            query_naive,
            fit_naive,
            "noisy H[0..K] projected onto G groups (the paper's strawman)",
            l2_squared=2,  # one group moves from size s to s ± 1: two cells change by 1
            k_cells=lambda k: k + 1,
            name_vector=_naive_vector,
        ),
        Method(
            "Hcp",
            HCP_SENSITIVITY,
            1,
            True,
            query_hcp,
            fit_hcp,
            "experimental: Hc at a public grid of tens of sizes, buckets shared by a public prior (Tao et al.)",
            experimental=True,
            k_cells=_hcp_cells,
            name_vector=_hcp_vector,
        ),
    )
}


def gaussian_epsilon(rho: float, method: Method) -> float:
    """The ε whose Laplace noise (variance ≈ 2/ε² at Δ = 1) has the variance of the discrete Gaussian that
    spends ``rho`` on ``method``: √(2 / Var), Var computed exactly (below σ² when σ is small).

    The fits' variances (Hg: 2/(|S| ε²), Hc: 4/(ε² Ĥ)) and so the merge weights are those of the noise
    actually drawn.
    """
    variance = discrete_gaussian_variance(float(gaussian_sigma2(rho, method.l2_squared)))
    return math.sqrt(2 / variance)
