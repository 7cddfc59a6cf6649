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
    (:mod:`cocoviz.methods.whole_level`); without them a level goes node by node.  Adding
    a method is one :data:`METHODS` entry.
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

    @property
    def l2_sensitivity(self) -> float:
        """Δ₂: the L2 sensitivity the discrete Gaussian's σ² = Δ₂²/(2ρ) is set by (brute-forced in the tests)."""
        return math.sqrt(self.l2_squared)

    def quantity(self, max_size: int, private_k: bool = False) -> str:
        """The measured vector's name, as the budget report shows it (K̂ when K is chosen privately)."""
        if private_k and self.needs_k:
            return {
                "Hc": f"Hc[0..K̂-1], K̂ ≤ {max_size:,}",
                "naive": f"H[0..K̂], K̂ ≤ {max_size:,}",
                "Hcp": f"Hc at the grid of K̂ ≤ {max_size:,}",
            }[self.name]
        return {
            "Hc": f"Hc[0..{max_size - 1}]",
            "naive": f"H[0..{max_size}]",
            "Hcp": f"Hc at {len(hcp_grid(max_size))} grid points < {max_size:,}",
        }.get(self.name, self.name)

    def cells(self, groups: np.ndarray, max_size: int) -> np.ndarray:
        """Noise cells per node: K for Hc, K + 1 for naive, G for Hg, the grid's size for Hcp."""
        groups = np.asarray(groups, np.int64)
        if not self.needs_k:
            return groups.copy()
        if self.name == "Hcp":
            return np.full(groups.shape, len(hcp_grid(max_size)), np.int64)
        return np.full(groups.shape, max_size + (self.name == "naive"), np.int64)


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
