"""Wu et al.'s strategies for prefix sums of one region, as baselines that measure directly.

The workload is ``P(j) = Σ_{s ≤ j} w_s·H[s]`` for ``j = 1..J`` (J public), with
``w_s = min(s, τ)``: the persons in groups of size at most j, their sizes
truncated at τ (Wu's truncation; τ = None means none, ``w_s = s``).  Wu's
record is our group, its value the group's size, Wu's x our H, Wu's τ our K.
Every strategy measures a linear query ``M·h`` of the bucketed histogram
``h = (H[0], ..., H[J], #groups larger than J)`` with double-geometric noise
of scale Δ/ε, and turns it into ``P̂(1..J)`` (optionally followed by L2
isotonic regression with ``P ≥ 0``, as Wu does: P is non-decreasing).

Two neighbour models (:data:`NEIGHBOURS`):

* ``"person"`` (ours; G public): one group's size moves by one, i.e. h changes
  by ``e_{b+1} − e_b`` for some bucket ``b = 0..J`` (sizes above J stay in
  bucket J+1).  Δ = max_b ‖M(e_{b+1} − e_b)‖₁.
* ``"record"`` (Wu's): one group of any size v is added or removed, h changes
  by ``±e_b``; Δ = max_b ‖M e_b‖₁ (the largest column norm).  Truncation bounds
  the weight a group carries, so Δ of weighted queries falls with τ.

Derivations (``d`` = LCA depth, ``h`` = ⌈log₂ J⌉ the height of the dyadic tree over sizes 1..J):

* ``identity`` (Wu's Identity, our naive): H[0..J].  Person: a move touches
  cells b and b+1 (one of them when b = J): **Δ = 2**.  Record: **Δ = 1**.
  τ changes only the weights of the answer, not Δ.
* ``workload`` (Wu's Workload, also "cumulative": the prefix sums themselves,
  one noise scale): P(1..J).  Person, move b → b+1: P(b) loses w_b (the group
  leaves the prefix at the boundary j = b) and P(j > b) gains w_{b+1} − w_b =
  [b < τ]; L1 = w_b + (J − b)[b < τ] = J for b < τ, τ for b ≥ τ, so **Δ = J**
  whatever τ.  Record, a group of size v ≤ J: w_v added to P(v..J), L1 =
  min(v, τ)(J + 1 − v), **Δ = t(J + 1 − t), t = min(τ, ⌊(J+1)/2⌋)**
  (⌊(J+1)²/4⌋ untruncated).
* ``sqm`` (Wu's SQM): ε/J per query, each P(j) with its own Δ_j.  Person:
  |ΔP(j)| is w_j (b = j) or [b < τ] (b < j): **Δ_j = min(j, τ)**.  Record:
  a group of size v ≤ j adds w_v: **Δ_j = min(j, τ)**.  The budget records one
  charge on P(j)/Δ_j with Δ = J (the composition bound; its true L1 is smaller).
* ``tamm`` (hierarchical on counts, Wu's TaMM): the dyadic interval counts of
  H[1..J].  Person: a move b → b+1 inside 1..J changes the 2(h − d) intervals
  below the LCA by ±1; b = 0 or b = J changes one root-to-leaf path (h + 1):
  **Δ = max(2h, h + 1)**.  Record: one path, **Δ = h + 1**.
* ``timm`` (hierarchical on weighted counts, Wu's TiMM): the dyadic interval
  sums of w_s·H[s].  Record: one path times w_v, **Δ = (h + 1)·min(J, τ)**.
  Person: **Δ = max over b** of (h + 1)·w_1 (b = 0), (h + 1)·w_J (b = J) and
  (d + 1)[b < τ] + (h − d)(w_b + w_{b+1}) (1 ≤ b < J); computed exactly.
* ``total`` (:func:`direct_total`): Σ_s w_s·H[s] over all sizes.  Person:
  w_{s+1} − w_s ≤ 1, **Δ = 1**.  Record: **Δ = τ** (unbounded without τ).

The hierarchical strategies ``tamm`` and ``timm`` use the plain dyadic strategy
over the size intervals (padded to a power of two, intervals clipped to 1..J)
and least squares (its pseudo-inverse); they stay as baselines.

* ``greedyh`` (Wu's TaMM with GreedyH): the same dyadic interval counts of
  H[1..J], each level l scaled by the weight c_l that
  :func:`cocoviz.methods.wu.greedy_h` chooses for the weighted workload
  ``P = tril·diag(w)`` and the neighbour relation (its expected error is never
  above the plain dyadic strategy's).  **Δ = Δ(A)** of the weighted strategy A
  (:func:`cocoviz.methods.wu.greedy.strategy_delta`; record: Σ c_l = 1).  A row
  ``c_l·q + Lap(Δ/ε)`` is ``c_l·(q + Lap(Δ/(ε c_l)))``, so each level's integer
  counts get double-geometric noise of scale ``Δ/(ε c_l)`` and the answer is
  the weighted least-squares fit ``A⁺(c ⊙ ỹ)``.  A level of weight 0 is not
  measured.

A threshold τ chosen from the data spends budget of its own:
:func:`trunc_svt_tau` (Wu's TruncSVT, record level) and :func:`recursive_tau` (Chen and Zhou's
recursive mechanism as Wu use it; record or person level) are re-exported here from
:mod:`cocoviz.methods.wu`.  ``tests/test_sums.py``
checks every Δ against :func:`matrix_sensitivity` and by brute force over
every neighbour of small random histograms.

>>> from cocoviz.privacy.noise import FastSampler
>>> h = np.array([0, 2, 1, 0, 1])          # two groups of 1, one of 2, one of 4
>>> prefix_sums(h, 4).tolist()
[2, 4, 4, 8]
>>> est = answer(h, 1.0, 4, FastSampler(0), strategy="workload")
>>> est.charges[0].sensitivity, len(est.estimate(isotonic=True))
(4, 4)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cocoviz.core.memory import check_cells
from cocoviz.errors import InputError, ParameterError
from cocoviz.hierarchy.tables import MAX_GROUP_SIZE
from cocoviz.methods.isotonic import isotonic as _isotonic
from cocoviz.methods.wu import (
    RecursiveChoice,
    TauChoice,
    greedy_h,
    recursive_tau,
    recursive_tau_pmf,
    strategy_error,
    svt_grid,
    trunc_svt_pmf,
    trunc_svt_tau,
)
from cocoviz.methods.wu.greedy import dyadic_levels, level_rows, strategy_delta
from cocoviz.privacy.budget import Charge
from cocoviz.privacy.noise import check_epsilon

__all__ = [
    "NEIGHBOURS",
    "STRATEGIES",
    "SumEstimate",
    "answer",
    "direct_total",
    "prefix_sums",
    "buckets",
    "sensitivity",
    "weights",
    "strategy_query",
    "matrix_sensitivity",
    "query_matrix",
    "dyadic_matrix",
    "greedy_h",
    "strategy_error",
    "trunc_svt_tau",
    "trunc_svt_pmf",
    "svt_grid",
    "TauChoice",
    "recursive_tau",
    "recursive_tau_pmf",
    "RecursiveChoice",
    "dyadic_levels",
]

#: Neighbour models: ``person`` (one group's size ± 1, G public) and ``record`` (one group added or removed).
NEIGHBOURS = ("person", "record")


def _check(J: int, neighbours: str, tau: int | None) -> None:
    if isinstance(J, bool) or not isinstance(J, (int, np.integer)) or J < 1:
        raise ParameterError(f"J must be a whole number >= 1, got {J!r}")
    check_cells(int(J) + 2, f"the workload P(1..J) with J = {int(J):,}", "give J up to the largest size of interest")
    if neighbours not in NEIGHBOURS:
        raise ParameterError(f"neighbours must be one of {NEIGHBOURS}, got {neighbours!r}")
    if tau is not None and (
        isinstance(tau, bool) or not isinstance(tau, (int, np.integer)) or not 1 <= tau <= MAX_GROUP_SIZE
    ):
        raise ParameterError(f"τ must be a whole number from 1 to {MAX_GROUP_SIZE:,} or None, got {tau!r}")


def weights(n: int, tau: int | None) -> np.ndarray:
    """``w_s = min(s, τ)`` for s = 0..n-1 (τ = None: ``w_s = s``)."""
    s = np.arange(n, dtype=np.int64)
    return s if tau is None else np.minimum(s, tau)


def _histogram(h: object) -> np.ndarray:
    try:
        h = np.asarray(h)
    except (TypeError, ValueError, OverflowError):
        h = np.asarray([None])
    if h.ndim != 1 or (h.size and (h.dtype.kind not in "iu" or h.min() < 0)):
        raise InputError("a histogram must be a 1-d array of non-negative integer counts")
    return h


def buckets(h: np.ndarray, J: int) -> np.ndarray:
    """``(H[0], ..., H[J], #groups larger than J)`` from a histogram H[0..] of any length."""
    _check(J, "person", None)
    h = _histogram(h)
    if h.ndim != 1 or (h.size and (h.min() < 0 or not np.issubdtype(h.dtype, np.integer))):
        raise InputError("a histogram must be a 1-d array of non-negative integer counts")
    out = np.zeros(J + 2, np.int64)
    out[: min(h.size, J + 1)] = h[: J + 1]
    out[J + 1] = h[J + 1 :].sum()
    return out


def prefix_sums(h: np.ndarray, J: int, tau: int | None = None) -> np.ndarray:
    """The true workload ``P(j) = Σ_{s ≤ j} min(s, τ)·H[s]``, j = 1..J."""
    _check(J, "person", tau)
    b = buckets(h, J)
    return np.cumsum(weights(J + 1, tau) * b[: J + 1])[1:]


def _height(J: int) -> int:
    return max(0, math.ceil(math.log2(J)))


def dyadic_sums(v: np.ndarray) -> np.ndarray:
    """Sums of ``v`` over the dyadic intervals of its positions, root first, intervals clipped to ``len(v)``.

    >>> dyadic_sums(np.array([1, 2, 3])).tolist()   # [0,4), [0,2), [2,4), [0], [1], [2]
    [6, 3, 3, 1, 2, 3]
    """
    n, height = len(v), _height(len(v))
    padded = np.zeros(2**height, np.int64)
    padded[:n] = v
    parts = []
    for level in range(height + 1):
        width = 2 ** (height - level)
        parts.append(padded.reshape(-1, width).sum(axis=1)[: math.ceil(n / width)])
    return np.concatenate(parts)


@functools.lru_cache(maxsize=16)
def dyadic_matrix(n: int) -> np.ndarray:
    """The 0-1 strategy matrix of :func:`dyadic_sums` (rows: intervals, columns: positions); read-only."""
    check_cells(2 * n * n, f"the dyadic strategy matrix over {n:,} sizes", "give a smaller J (or another strategy)")
    matrix = np.stack([dyadic_sums(row) for row in np.eye(n, dtype=np.int64)], axis=1)
    matrix.flags.writeable = False
    return matrix


@functools.lru_cache(maxsize=16)
def _dyadic_pinv(n: int) -> np.ndarray:
    pinv = np.linalg.pinv(dyadic_matrix(n).astype(np.float64))  # a pure function of n, memoised
    pinv.flags.writeable = False
    return pinv


@dataclass(frozen=True)
class Strategy:
    """One strategy: its measured query of the buckets h, its Δ, and its answer from the noisy query."""

    name: str
    quantity: str
    query: Callable[[np.ndarray, int, np.ndarray], np.ndarray]  # (h, J, w) -> true measurement
    answer: Callable[[np.ndarray, int, np.ndarray], np.ndarray]  # (noisy, J, w) -> P̂(1..J)
    delta: Callable[[int, str, int | None], float | np.ndarray]  # (J, neighbours, τ) -> Δ


def _delta_timm_person(J: int, tau: int | None) -> int:
    height, w = _height(J), weights(J + 1, tau)
    ends = (height + 1) * max(w[1], w[J])
    if J == 1:
        return int(ends)
    b = np.arange(1, J)
    lca = height - np.array([int(p ^ (p + 1)).bit_length() for p in b - 1])
    inner = (lca + 1) * (w[b + 1] > w[b]) + (height - lca) * (w[b] + w[b + 1])
    return int(max(ends, inner.max()))


def _delta_workload_record(J: int, tau: int | None) -> int:
    t = (J + 1) // 2 if tau is None else min(tau, (J + 1) // 2)
    return t * (J + 1 - t)


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in [
        Strategy(
            "identity",
            "H[0..J]",
            lambda h, J, w: h[: J + 1],
            lambda y, J, w: np.cumsum(w * y)[1:],
            lambda J, nb, tau: 2 if nb == "person" else 1,
        ),
        Strategy(
            "sqm",
            "P(j)/Δ_j, j=1..J (SQM: ε/J per query)",
            lambda h, J, w: np.cumsum(w * h[: J + 1])[1:],
            lambda y, J, w: y.astype(np.float64),
            lambda J, nb, tau: np.minimum(np.arange(1, J + 1), tau or J),
        ),
        Strategy(
            "workload",
            "P(1..J)",
            lambda h, J, w: np.cumsum(w * h[: J + 1])[1:],
            lambda y, J, w: y.astype(np.float64),
            lambda J, nb, tau: J if nb == "person" else _delta_workload_record(J, tau),
        ),
        Strategy(
            "tamm",
            "dyadic interval counts of H[1..J]",
            lambda h, J, w: dyadic_sums(h[1 : J + 1]),
            lambda y, J, w: np.cumsum(w[1:] * (_dyadic_pinv(J) @ y)),
            lambda J, nb, tau: max(2 * _height(J), _height(J) + 1) if nb == "person" else _height(J) + 1,
        ),
        Strategy(
            "timm",
            "dyadic interval sums of min(s,τ)·H[s], s=1..J",
            lambda h, J, w: dyadic_sums(w[1:] * h[1 : J + 1]),
            lambda y, J, w: np.cumsum(_dyadic_pinv(J) @ y),
            lambda J, nb, tau: _delta_timm_person(J, tau) if nb == "person" else (_height(J) + 1) * min(J, tau or J),
        ),
    ]
}
STRATEGIES["greedyh"] = Strategy(
    "greedyh",
    "GreedyH-weighted dyadic interval counts of H[1..J]",
    lambda h, J, w: dyadic_sums(h[1 : J + 1]),
    lambda y, J, w: np.cumsum(w[1:] * y),  # y: the weighted least-squares fit of H[1..J] (see answer)
    lambda J, nb, tau: _greedy(J, nb, tau)[1],
)
STRATEGIES["cumulative"] = STRATEGIES["workload"]  # noise on the prefix sums directly: Wu's Workload


@functools.lru_cache(maxsize=64)
def _greedy(J: int, neighbours: str, tau: int | None) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """GreedyH for the weighted prefix sums: (A, Δ(A), each row's level weight, A's pseudo-inverse); read-only."""
    a = greedy_h(int(J), weights(J + 1, tau)[1:].astype(np.float64), neighbours=neighbours)
    rows = level_rows(int(J))
    first = np.cumsum([0] + [m.shape[0] for m in rows[:-1]])
    scale = np.concatenate([np.full(m.shape[0], a[f].max()) for f, m in zip(first, rows)])
    pinv = np.linalg.pinv(a)
    for x in (a, scale, pinv):
        x.flags.writeable = False
    return a, strategy_delta(a, neighbours), scale, pinv


def _strategy(name: str) -> Strategy:
    if name not in STRATEGIES:
        raise ParameterError(f"unknown strategy {name!r}; choose from {tuple(STRATEGIES)}")
    return STRATEGIES[name]


def sensitivity(strategy: str, J: int, neighbours: str = "person", tau: int | None = None) -> float | np.ndarray:
    """The declared L1 sensitivity Δ of ``strategy``'s measured query (an array of Δ_j for ``sqm``).

    >>> sensitivity("workload", 10), sensitivity("workload", 10, "record"), sensitivity("workload", 10, "record", 2)
    (10, 30, 18)
    >>> sensitivity("sqm", 4, "record", tau=2).tolist(), sensitivity("tamm", 8), sensitivity("identity", 8, "record")
    ([1, 2, 2, 2], 6, 1)
    """
    _check(J, neighbours, tau)
    return _strategy(strategy).delta(J, neighbours, tau)


def strategy_query(strategy: str, h: np.ndarray, J: int, tau: int | None = None) -> np.ndarray:
    """The true (noiseless) measured query of ``strategy`` on histogram ``h``."""
    _check(J, "person", tau)
    return _strategy(strategy).query(buckets(h, J), J, weights(J + 1, tau))


def query_matrix(strategy: str, J: int, tau: int | None = None) -> np.ndarray:
    """``M`` with ``strategy_query(h) = M @ buckets(h)``: its columns are the queries of the unit buckets."""
    _check(J, "person", tau)
    check_cells((int(J) + 2) ** 2, f"the query matrix of J = {int(J):,}", "give a smaller J")
    return np.stack([strategy_query(strategy, np.eye(J + 2, dtype=np.int64)[b], J, tau) for b in range(J + 2)], axis=1)


def matrix_sensitivity(matrix: np.ndarray, neighbours: str) -> tuple[float, np.ndarray]:
    """Δ of ``matrix @ h`` from its columns: max ‖M(e_{b+1} − e_b)‖₁ (person) or max_b ‖M e_b‖₁ (record).

    Returns the L1 sensitivity of the whole vector and, for comparison with ``sqm``, of each row.

    >>> total, rows = matrix_sensitivity(query_matrix("workload", 4), "person")
    >>> int(total), rows.tolist()
    (4, [1, 2, 3, 4])
    """
    change = np.diff(matrix, axis=1) if neighbours == "person" else matrix
    return np.abs(change).sum(axis=0).max().item(), np.abs(change).max(axis=1)


@dataclass(frozen=True)
class SumEstimate:
    """A strategy's noisy answer: ``raw`` P̂(1..J) (or a total) before inference, and its budget charges."""

    strategy: str
    raw: np.ndarray
    charges: tuple[Charge, ...]

    def estimate(self, isotonic: bool = False) -> np.ndarray:
        """P̂(1..J); with ``isotonic`` its L2 isotonic fit with P ≥ 0 (post-processing)."""
        if not isotonic:
            return self.raw
        return _isotonic(np.asarray(self.raw, np.float64), p=2, lower=0.0)


def answer(
    h: np.ndarray,
    epsilon: float,
    J: int,
    sampler,
    *,
    strategy: str,
    neighbours: str = "person",
    tau: int | None = None,
    key: Sequence[int] = (0,),
    level: int = 0,
    node: tuple = (),
) -> SumEstimate:
    """Answer P(1..J) of histogram ``h`` with ``strategy`` under ε-DP for ``neighbours``.

    Parameters
    ----------
    h : the region's histogram H[0..] (any length; sizes above J go to one bucket)
    epsilon : the budget this region's measurement spends
    J : public bound of the workload (queries j = 1..J)
    sampler : a :class:`~cocoviz.privacy.noise.FastSampler` or ``SecureSampler``; noise scale Δ/ε
    strategy : a name in :data:`STRATEGIES`
    neighbours, tau : the neighbour model and the truncation threshold (None: none)
    key : the noise stream's key (e.g. ``(level, node, strategy)``)

    >>> from cocoviz.privacy.noise import FastSampler
    >>> est = answer(np.array([0, 2, 1, 0, 1]), 1e6, 4, FastSampler(1), strategy="tamm")
    >>> est.raw.round(6).tolist(), est.charges[0].scale   # ε = 1e6: no noise; Δ = max(2h, h + 1) = 4
    ([2.0, 4.0, 4.0, 8.0], 4e-06)
    """
    _check(J, neighbours, tau)
    epsilon = check_epsilon(epsilon)
    plan = _strategy(strategy)
    w = weights(J + 1, tau)
    true = plan.query(buckets(h, J), J, w)
    delta = plan.delta(J, neighbours, tau)
    if plan.name == "greedyh":  # per level: c_l·(counts + noise of scale Δ/(ε c_l)), then weighted least squares
        a, delta, scale, pinv = _greedy(int(J), neighbours, tau)
        noisy = np.zeros(len(true))
        for c in np.unique(scale[scale > 0]):
            rows = np.flatnonzero(scale == c)
            noisy[rows] = c * sampler.draw(true[rows], float(delta / (epsilon * c)), (*key, 1000 + int(rows[0])))
        charge = Charge(level, node, plan.quantity, len(true), float(delta), epsilon)
        return SumEstimate(plan.name, np.asarray(plan.answer(pinv @ noisy, J, w), np.float64), (charge,))
    if plan.name == "sqm":  # ε/J per query, each with its own Δ_j: scale Δ_j·J/ε
        noisy = np.array([sampler.draw(true[j : j + 1], float(delta[j]) * J / epsilon, (*key, j))[0] for j in range(J)])
        charge = Charge(level, node, plan.quantity, J, J, epsilon)
    else:
        noisy = sampler.draw(true, float(delta) / epsilon, tuple(key))
        charge = Charge(level, node, plan.quantity, len(true), int(delta), epsilon)
    return SumEstimate(plan.name, np.asarray(plan.answer(noisy, J, w), np.float64), (charge,))


def direct_total(
    h: np.ndarray,
    epsilon: float,
    sampler,
    *,
    neighbours: str = "person",
    tau: int | None = None,
    key: Sequence[int] = (0,),
    level: int = 0,
    node: tuple = (),
) -> SumEstimate:
    """Total persons Σ_s min(s, τ)·H[s] plus noise of scale Δ/ε: Δ = 1 (person), τ (record).

    >>> from cocoviz.privacy.noise import FastSampler
    >>> est = direct_total(np.array([0, 2, 1, 0, 1]), 1.0, FastSampler(0), neighbours="record", tau=3)
    >>> est.charges[0].sensitivity, est.charges[0].scale
    (3, 3.0)
    """
    _check(1, neighbours, tau)
    epsilon = check_epsilon(epsilon)
    if neighbours == "record" and tau is None:
        raise ParameterError("a total under record-level neighbours needs a truncation τ (its Δ is τ)")
    delta = 1 if neighbours == "person" else int(tau)
    h = buckets(h, max(len(_histogram(h)), 1))[:-1]  # checked, with one spare zero cell
    true = np.array([int(np.dot(weights(len(h), tau), h))])
    noisy = sampler.draw(true, delta / epsilon, tuple(key))
    return SumEstimate("total", noisy.astype(np.float64), (Charge(level, node, "persons", 1, delta, epsilon),))
