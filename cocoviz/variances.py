"""The stated variance of each estimated group size from an Hc fit (issue 24, docs/merge-variances.md).

Stated, not weighed by: the top-down merge keeps the paper's count rule as its weights
(``LevelEstimates.variances``); this one is ``LevelEstimates.stated``.

Why not METHOD.md's ``4 / (ε² Ĥ[s])``: that is the variance of a *count* shared out over the
groups of one size, but what a user needs stated is the error of one group's *size*.  An Hc fit
that is off by δ at size s (in groups: its error is in rank units) gives the group of rank r
the size of rank r − δ.  Where sizes are dense (many groups per size) that moves a few groups
by one size; across a gap of L sizes (the sparse tail: outliers thousands apart) it moves a
group by the whole gap, so its error is of the order of L, not 2/ε.  Measured on the bundled
housing (``benchmarks/merge_calibration.py``), the old rule gives mean (error)²/V of 2–14 on
the large groups and far more on the full-size data (tao-e5: median 751 at ε = 1).

**The rule** (post-processing: reads the fitted runs and ε only).  With δ the noise of one
cell of Hc (Laplace of scale b = 1/ε at Δ = 1, variance 2/ε²; for the discrete Gaussian the ε
of equal variance), the mean squared size error of the groups of run j (size s_j, ranks
``[lo_j, hi_j)``) is the plug-in

    V_j = Σ_k P(r + δ ∈ run k) (s_k − s_j)²,  averaged over the ranks r of run j,

the estimated runs standing in for the true ones; ranks shifted below 0 get size 0, ranks
shifted above G the last size plus the last gap (a public stand-in for the unknown beyond).
For Laplace noise the average over r has a closed form (the integral of the CDF), so
the cost is the number of pairs of runs within about 40 b ranks of each other.  Dense runs
(``Ĥ[s] ≫ b``) get about ``b / Ĥ[s]``, lone groups after a gap L about ``P(|δ| > ½) L²``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["hc_size_variances", "hc_node_variances", "VARIANCE_FLOOR"]

#: Added to every variance, so that a run no shift can leave (a node whose groups all share one
#: size) still has a positive variance for the merge's weights.
VARIANCE_FLOOR = 1e-6


def hc_size_variances(ptr, sizes, counts, scale: float, floor: float = 0.0) -> np.ndarray:
    """Per run of the nodes delimited by ``ptr`` (runs sorted by size within a node): the plug-in
    mean squared size error under a rank shift of Laplace(``scale``) noise, plus ``floor``.

    Two virtual runs take the ranks outside ``[0, G)``: size 0 below and, above, the last size
    plus the last gap (at least 1).
    """
    from cocoviz._variance_kernels import hc_size_variances as kernel

    return kernel(
        np.ascontiguousarray(ptr, np.int64),
        np.ascontiguousarray(sizes, np.int64),
        np.ascontiguousarray(counts, np.int64),
        float(scale),
        float(floor),
    )


def hc_node_variances(sizes: np.ndarray, counts: np.ndarray, epsilon: float) -> np.ndarray:
    """The variances of one node's Hc runs (sizes ascending) at budget ``epsilon`` (Δ = 1).

    Dense runs: at each of their two boundaries (the virtual runs 0 below and 3 above count) about
    b/2 groups cross, by one size each.

    >>> hc_node_variances(np.array([1, 2]), np.array([1000, 1000]), 1.0).round(4)
    array([0.001, 0.001])

    A lone outlier 4,999 sizes above the rest moves the whole gap down, or as far up, with
    P(|δ| > ½) ≈ 0.6:

    >>> [round(float(v)) for v in hc_node_variances(np.array([1, 5000]), np.array([1000, 1]), 1.0)]
    [26285, 15796693]
    """
    return hc_size_variances(np.array([0, len(sizes)]), sizes, counts, 1.0 / epsilon, VARIANCE_FLOOR)
