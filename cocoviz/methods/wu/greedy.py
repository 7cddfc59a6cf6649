"""GreedyH: a hierarchical strategy whose levels are weighted to the workload (Wu et al. take it from ektelo).

The strategy measures the counts of the dyadic intervals over J buckets (a binary tree, root
first, intervals clipped to J), the rows of level l scaled by a weight ``c_l ≥ 0`` (the leaves'
``c > 0``, so every bucket is estimable).  Answers come from weighted least squares, so the
expected total squared error of the workload W under Laplace noise of scale Δ/ε is

    E‖W x̂ − W x‖² = (2/ε²) · Δ(A)² · tr(W (AᵀA)⁻¹ Wᵀ),

with Δ(A) the strategy's L1 sensitivity for the neighbour relation: ``record`` (a bucket's count
± 1: the largest column norm, ``Σ_l c_l``) or ``person`` (one record moves to the next bucket:
``max_b ‖A(e_{b+1} − e_b)‖₁``, with the buckets below 1 and above J outside the strategy).
:func:`strategy_error` is the factor ``Δ(A)² · tr(W (AᵀA)⁻¹ Wᵀ)``; scaling A does not change it.

:func:`greedy_h` starts from the plain dyadic strategy (every ``c_l = 1``) and improves one level's
weight at a time (a bounded search on log c_l, and c_l = 0 for inner levels) while the error falls:
**its error is never above the dyadic strategy's**, by construction.  This is a greedy choice of
level weights in the spirit of ektelo's GreedyH (which also weights the tree's levels for the
workload), written here from that description rather than ported; the weights are normalised so
that ``Σ_l c_l = 1`` (record Δ = 1).

>>> a, w = greedy_h(4), np.tril(np.ones((4, 4)))
>>> a.shape, bool(strategy_error(a, w) <= strategy_error(dyadic_levels(4), w))
((7, 4), True)
"""

from __future__ import annotations

import math

import numpy as np

from cocoviz.core.memory import check_cells
from cocoviz.errors import ParameterError

__all__ = ["dyadic_levels", "level_rows", "strategy_delta", "strategy_error", "greedy_h"]


def level_rows(J: int) -> list[np.ndarray]:
    """The dyadic intervals over J buckets by level (root first), each level a 0/1 matrix (intervals × J).

    >>> [m.astype(int).tolist() for m in level_rows(3)]
    [[[1, 1, 1]], [[1, 1, 0], [0, 0, 1]], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]]
    """
    if isinstance(J, bool) or not isinstance(J, (int, np.integer)) or J < 1:
        raise ParameterError(f"J must be a whole number ≥ 1, got {J!r}")
    check_cells(4 * int(J) * int(J), f"the hierarchical strategy over {int(J):,} buckets", "give a smaller J")
    height = max(0, math.ceil(math.log2(J)))
    out = []
    for level in range(height + 1):
        width = 2 ** (height - level)
        starts = np.arange(0, J, width)
        cols = np.arange(J)
        out.append((cols[None, :] // width == starts[:, None] // width).astype(np.float64))
    return out


def dyadic_levels(J: int, weights: np.ndarray | None = None) -> np.ndarray:
    """The stacked strategy with level weights (all 1: the plain dyadic strategy)."""
    rows = level_rows(J)
    c = np.ones(len(rows)) if weights is None else np.asarray(weights, np.float64)
    return np.vstack([w * m for w, m in zip(c, rows)])


def strategy_delta(a: np.ndarray, neighbours: str = "record") -> float:
    """L1 sensitivity of ``A @ x``: max column norm (record) or max ‖A(e_{b+1} − e_b)‖₁ over b = 0..J (person)."""
    a = np.asarray(a, np.float64)
    if neighbours == "record":
        return float(np.abs(a).sum(axis=0).max())
    if neighbours == "person":
        padded = np.hstack([np.zeros((a.shape[0], 1)), a, np.zeros((a.shape[0], 1))])
        return float(np.abs(np.diff(padded, axis=1)).sum(axis=0).max())
    raise ParameterError(f"neighbours must be 'record' or 'person', got {neighbours!r}")


def strategy_error(a: np.ndarray, workload: np.ndarray, neighbours: str = "record") -> float:
    """``Δ(A)² · tr(W (AᵀA)⁻¹ Wᵀ)``: the expected total squared error of W over 2/ε² (∞ if A is singular).

    >>> round(strategy_error(np.eye(3), np.tril(np.ones((3, 3)))), 9)   # identity: Σ_j j
    6.0
    """
    from cocoviz.methods.wu._greedy_kernels import trace_inverse_form  # deferred: numba loads on first use

    a = np.asarray(a, np.float64)
    w = np.asarray(workload, np.float64)
    gram = a.T @ a
    floor = 1e-6 * math.sqrt(max(float(np.diag(gram).max()), 1e-300))  # a bucket barely measured: singular
    trace = trace_inverse_form(np.ascontiguousarray(gram), np.ascontiguousarray(w.T), floor)
    return math.inf if not math.isfinite(trace) else strategy_delta(a, neighbours) ** 2 * float(trace)


def greedy_h(J: int, weights: np.ndarray | None = None, *, neighbours: str = "record", sweeps: int = 6) -> np.ndarray:
    """The greedy level-weighted hierarchical strategy for the prefix-sum workload over J buckets.

    Parameters
    ----------
    J : the number of buckets (sizes 1..J)
    weights : the workload's per-bucket weights ``w`` (W = lower-triangular ones · diag(w): Wu's
        weighted prefix sums, e.g. ``min(s, τ)``); None for plain prefix counts
    neighbours : the relation whose Δ the error uses (``record`` or ``person``)
    sweeps : passes over the levels

    Returns
    -------
    numpy.ndarray (intervals × J), its level weights summing to 1

    Examples
    --------
    >>> a = greedy_h(8)
    >>> w = np.tril(np.ones((8, 8)))
    >>> round(strategy_error(a, w) / strategy_error(dyadic_levels(8), w), 3)
    0.41
    """
    from scipy.optimize import minimize_scalar  # deferred: SciPy at import costs a fifth of a second

    from cocoviz.methods.wu._greedy_kernels import trace_inverse_form  # deferred: numba loads on first use

    if neighbours not in ("record", "person"):
        raise ParameterError(f"neighbours must be 'record' or 'person', got {neighbours!r}")
    rows = level_rows(J)
    w = np.tril(np.ones((J, J)))
    if weights is not None:
        weights = np.asarray(weights, np.float64)
        if weights.shape != (J,) or not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ParameterError(f"weights must be {J} finite numbers ≥ 0, got shape {weights.shape}")
        w = w * weights[None, :]

    grams = np.stack([m.T @ m for m in rows])  # AᵀA = Σ_l c_l² L_lᵀL_l
    moves = np.stack([np.abs(np.diff(np.pad(m, ((0, 0), (1, 1))), axis=1)).sum(axis=0) for m in rows])
    wt = np.ascontiguousarray(w.T)

    def error(c: np.ndarray) -> float:  # strategy_error of the stacked strategy, from the per-level parts
        delta = float(c.sum()) if neighbours == "record" else float((c @ moves).max())
        gram = np.tensordot(c * c, grams, axes=1)
        trace = trace_inverse_form(gram, wt, 1e-6 * math.sqrt(float(np.diag(gram).max())))
        return math.inf if not math.isfinite(trace) else delta**2 * float(trace)

    c = np.ones(len(rows))
    best = error(c)
    for _ in range(int(sweeps)):
        before = best
        for level in range(len(rows)):
            trial = c.copy()

            def at(log_c, level=level, trial=trial):
                trial[level] = math.exp(log_c)
                return error(trial)

            centre = math.log(c[level]) if c[level] > 0 else math.log(c.max()) - 2  # a dropped level may return
            res = minimize_scalar(at, bounds=(centre - 4, centre + 4), method="bounded", options={"xatol": 1e-3})
            if res.fun < best * (1 - 1e-12):
                c[level], best = math.exp(res.x), float(res.fun)
            if level < len(rows) - 1:  # an inner level may go
                trial = c.copy()
                trial[level] = 0.0
                if (e := error(trial)) < best * (1 - 1e-12):
                    c, best = trial, e
        if best > before * (1 - 1e-9):
            break
    c = c / c.sum()
    return np.vstack([x * m for x, m in zip(c, rows)])
