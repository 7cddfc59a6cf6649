"""Wu et al.'s systems for sum queries: private truncation thresholds (TruncSVT, the recursive mechanism) and GreedyH.

:mod:`cocoviz.sums` answers the prefix-sum workload with these; this package holds the pieces that
are mechanisms or strategies of their own.
"""

from cocoviz.methods.wu.greedy import greedy_h, strategy_error
from cocoviz.methods.wu.recursive import (
    RecursiveChoice,
    recursive_grid,
    recursive_index,
    recursive_tau,
    recursive_tau_pmf,
)
from cocoviz.methods.wu.truncation import TauChoice, svt_grid, trunc_svt_pmf, trunc_svt_tau

__all__ = [
    "RecursiveChoice",
    "recursive_grid",
    "recursive_index",
    "recursive_tau",
    "recursive_tau_pmf",
    "TauChoice",
    "svt_grid",
    "trunc_svt_tau",
    "trunc_svt_pmf",
    "greedy_h",
    "strategy_error",
]
