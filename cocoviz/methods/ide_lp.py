"""Stage 1 of Tao, Bater & Machanavajjhala's estimator as the paper states it: one linear program.

The paper's eq. 2 asks for the answers ``y* = W z*`` of a distribution z* whose answers are
closest in L1 to **all** the noisy answers ỹ at once:

    minimise  ‖W z − ỹ‖₁   over  z ≥ 0,  Σ z = 1   (z = 0 off the domain given, e.g. the prior's support).

With slack variables ``e⁺, e⁻ ≥ 0`` it is the linear program

    min Σ(e⁺ + e⁻)   s.t.   W z − e⁺ + e⁻ = ỹ,   1ᵀz = 1,   z, e⁺, e⁻ ≥ 0,

solved here by HiGHS (``scipy.optimize.linprog(method="highs")``).  Its dual,

    max ỹᵀλ + μ   s.t.   Wᵀλ + μ·1 ≤ 0,   −1 ≤ λ ≤ 1,

has the same optimum (strong duality; both are feasible and the primal is bounded below by 0).
:func:`stage1_dual` solves that dual by HiGHS's interior-point method: an independent check of
optimality.  Fitting each partition's answers separately (Algorithm 1's per-partition fit) can
leave answers that no single distribution has when the partitions overlap; the LP cannot.

Everything here reads only noisy answers and public structure: post-processing, no budget.

>>> w = np.array([[1.0, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]])
>>> z, best = stage1_lp(w, [0.7, 0.5, 0.6, 0.1])
>>> round(best, 9), round(stage1_dual(w, [0.7, 0.5, 0.6, 0.1]), 9)
(0.5, 0.5)
"""

from __future__ import annotations

import numpy as np

from cocoviz.errors import ParameterError

__all__ = ["stage1_lp", "stage1_dual", "block_matrix"]


def block_matrix(partitions, cells: np.ndarray) -> np.ndarray:
    """The 0/1 workload matrix W: one row per block (partitions in order), one column per cell of ``cells``.

    >>> block_matrix([[[0, 1], [2]], [[1, 2]]], np.arange(3)).astype(int).tolist()
    [[1, 1, 0], [0, 0, 1], [0, 1, 1]]
    """
    cells = np.asarray(cells)
    rows = [np.isin(cells, np.asarray(b)) for part in partitions for b in part]
    return np.vstack(rows).astype(float) if rows else np.zeros((0, cells.size))


def _check(w: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    w = np.asarray(w, dtype=float)
    y = np.asarray(y, dtype=float)
    if w.ndim != 2 or w.shape[1] == 0 or y.shape != (w.shape[0],):
        raise ParameterError(f"W must be m × n with n ≥ 1 and ỹ of length m, got W {w.shape} and ỹ {y.shape}")
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(y))):
        raise ParameterError("W and ỹ must be finite")
    return w, y


def stage1_lp(w: object, y: object, *, prefer: object = None) -> tuple[np.ndarray, float]:
    """min ‖W z − ỹ‖₁ over distributions z (the paper's eq. 2), solved by HiGHS.

    Parameters
    ----------
    w : m × n workload matrix (rows: queries; columns: the cells z may use)
    y : m noisy answers
    prefer : m answers to stay near among the optima (the L1 optimum is seldom unique): a second LP
        minimises ``‖W z − prefer‖₁`` over the z whose misfit is within ``1e-9·(1 + optimum)`` of the
        optimum.  With the per-partition simplex fits here, a single partition's fit is returned as
        it is, and overlapping partitions keep as much of their own fit as the optimum allows.

    Returns
    -------
    z : an optimal distribution (n numbers ≥ 0 summing to 1; the LP's vertex, not unique in general)
    optimum : the minimal L1 misfit ‖W z − ỹ‖₁

    Examples
    --------
    >>> z, best = stage1_lp([[1.0, 0.0], [0.0, 1.0]], [0.9, 0.3])
    >>> round(best, 12), round(float(z.sum()), 12)
    (0.2, 1.0)
    """
    from scipy.optimize import linprog  # deferred: SciPy costs a fifth of a second at `import cocoviz`

    w, y = _check(w, y)
    m, n = w.shape
    eye = np.eye(m)
    res = linprog(
        np.concatenate([np.zeros(n), np.ones(2 * m)]),
        A_eq=np.block([[w, -eye, eye], [np.ones((1, n)), np.zeros((1, 2 * m))]]),
        b_eq=np.concatenate([y, [1.0]]),
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"stage-1 linear program failed: {res.message}")
    best, x = float(res.fun), res.x
    if prefer is not None:
        _, f = _check(w, prefer)
        cost = np.concatenate([np.zeros(n + 2 * m), np.ones(2 * m)])
        second = linprog(
            cost,
            A_eq=np.block(
                [
                    [w, -eye, eye, np.zeros((m, 2 * m))],
                    [w, np.zeros((m, 2 * m)), -eye, eye],
                    [np.ones((1, n)), np.zeros((1, 4 * m))],
                ]
            ),
            b_eq=np.concatenate([y, f, [1.0]]),
            A_ub=np.concatenate([np.zeros(n), np.ones(2 * m), np.zeros(2 * m)])[None, :],
            b_ub=[best + 1e-9 * (1.0 + best)],
            bounds=(0, None),
            method="highs",
        )
        if second.status == 0:  # else keep the first vertex (numerically the optimum face may be missed)
            x = second.x
    z = np.clip(x[:n], 0.0, None)
    z /= z.sum()
    return z, best


def stage1_dual(w: object, y: object) -> float:
    """The optimum of stage 1's dual, ``max ỹᵀλ + μ`` s.t. ``Wᵀλ + μ ≤ 0``, ``|λ| ≤ 1`` (HiGHS interior point).

    Equal to :func:`stage1_lp`'s optimum by strong duality; an independent formulation and solver,
    used to check it.

    >>> round(stage1_dual([[1.0, 0.0], [0.0, 1.0]], [0.9, 0.3]), 9)
    0.2
    """
    from scipy.optimize import linprog

    w, y = _check(w, y)
    m, n = w.shape
    res = linprog(
        -np.concatenate([y, [1.0]]),
        A_ub=np.hstack([w.T, np.ones((n, 1))]),
        b_ub=np.zeros(n),
        bounds=[(-1.0, 1.0)] * m + [(None, None)],
        method="highs-ipm",
    )
    if res.status != 0:  # pragma: no cover - the dual is feasible (λ = 0, μ = 0) and bounded
        raise RuntimeError(f"stage-1 dual failed: {res.message}")
    return float(-res.fun)
