"""TruncSVT: Wu et al.'s private truncation threshold τ at the record level.

A *record* is one group (Wu's tuple), its value the group's size; neighbours add or remove one
record (Wu's relation).  The mechanism, with its budget ε split as ``ε_n = split·ε`` and
``ε_s = (1 − split)·ε``:

1. ``ñ = n + X`` with X double-geometric of scale ``1/ε_n``: n, the number of records, moves by
   one between neighbours (Δ = 1), so this is ε_n-DP.
2. AboveThreshold (Dwork & Roth, Algorithm 1) over the public grid ``θ_i = ⌊θ₀·β^i⌋`` (up to a
   public ceiling): the queries ``c_i = #{records with value ≤ θ_i}`` each move by at most one
   (Δ = 1), the threshold ``ρ·ñ`` is a function of the released ñ, the threshold noise η has
   scale ``2/ε_s`` and each query noise ν_i scale ``4/ε_s``.  The first i with ``c_i + ν_i ≥ ρ·ñ + η``
   gives ``τ = θ_i`` (the ceiling if none): ε_s-DP (Dwork & Roth, Theorem 3.23; the proof uses only
   the ratio of the noise's pmf under integer shifts of 1 and 2, so double-geometric noise keeps it).

By sequential composition τ is ε-DP, and whatever is then measured with τ spends its own budget:
**the threshold's ε counts** in any comparison.  :func:`trunc_svt_pmf` gives τ's exact
distribution (noise tails cut below 1e-15), for tests against the sampler and of ``e^ε`` between
neighbours.

Wu's parameter values are not legible in the copy of the paper we hold (its symbols are lost);
the defaults here (ρ = 0.95, θ₀ = 1, β = 2, split ½) are ours and are stated in every experiment.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cocoviz.core.memory import check_cells
from cocoviz.errors import ParameterError
from cocoviz.privacy.budget import Charge
from cocoviz.privacy.noise import check_epsilon

__all__ = ["RECORDS", "TauChoice", "svt_grid", "trunc_svt_tau", "trunc_svt_pmf"]

#: The neighbour relation of TruncSVT (Wu's).
RECORDS = "records: one group (record) added or removed"


@dataclass(frozen=True)
class TauChoice:
    """A private threshold: ``tau``, the grid index it stopped at (``len(grid) - 1`` if none), ñ and the charges."""

    tau: int
    index: int
    n_noisy: int
    charges: tuple[Charge, ...]


def svt_grid(theta0: float = 1.0, beta: float = 2.0, ceiling: int = 1 << 16) -> np.ndarray:
    """The public candidates ``⌊θ₀·β^i⌋`` (distinct, increasing), the ceiling last.

    >>> svt_grid(1, 2, 20).tolist(), svt_grid(3, 1.5, 12).tolist()
    ([1, 2, 4, 8, 16, 20], [3, 4, 6, 10, 12])
    """
    if not (theta0 >= 1 and beta > 1 and math.isfinite(theta0 * beta)):
        raise ParameterError(f"TruncSVT needs θ₀ ≥ 1 and β > 1, got θ₀ = {theta0!r}, β = {beta!r}")
    if isinstance(ceiling, bool) or not isinstance(ceiling, (int, np.integer)) or ceiling < 1:
        raise ParameterError(f"the ceiling must be a whole number ≥ 1, got {ceiling!r}")
    grid, i = [], 0
    while (t := math.floor(theta0 * beta**i)) < ceiling:
        if not grid or t > grid[-1]:
            grid.append(t)
        i += 1
    return np.array([*grid, int(ceiling)], np.int64)


def _counts(h: object, grid: np.ndarray) -> tuple[np.ndarray, int]:
    h = np.asarray(h)
    if h.ndim != 1 or h.dtype.kind not in "iu" or np.any(h < 0):
        raise ParameterError("h must be a 1-D histogram of whole numbers ≥ 0 (h[s] records of value s)")
    cum = np.cumsum(h.astype(np.int64))
    return cum[np.minimum(grid, h.size - 1)] if h.size else np.zeros(grid.size, np.int64), int(cum[-1] if h.size else 0)


def _check(epsilon: float, rho: float, split: float) -> tuple[float, float]:
    epsilon = check_epsilon(epsilon)
    if not 0 < rho <= 1:
        raise ParameterError(f"ρ (the share of records kept whole) must be in (0, 1], got {rho!r}")
    if not 0 < split < 1:
        raise ParameterError(f"the budget split must be in (0, 1), got {split!r}")
    return split * epsilon, (1 - split) * epsilon


def trunc_svt_tau(
    h: object,
    epsilon: float,
    sampler,
    *,
    rho: float = 0.95,
    theta0: float = 1.0,
    beta: float = 2.0,
    ceiling: int = 1 << 16,
    split: float = 0.5,
    key: Sequence[int] = (0,),
    level: int = 0,
    node: tuple = (),
) -> TauChoice:
    """Wu's TruncSVT: the first grid value below which a noisy share ρ of the noisy record count lies.

    Parameters
    ----------
    h : the histogram of record values (h[s] records of value s)
    epsilon : the threshold's whole budget (ñ and AboveThreshold together)
    sampler : a :class:`~cocoviz.privacy.noise.FastSampler` or ``SecureSampler``
    rho, theta0, beta, ceiling : Wu's ratio and geometric grid (:func:`svt_grid`)
    split : the share of ε spent on ñ
    key : the noise streams' key (three streams are derived from it)

    Returns
    -------
    TauChoice, with a charge for ñ and one for AboveThreshold (relation :data:`RECORDS`)

    Examples
    --------
    >>> from cocoviz.privacy.noise import FastSampler
    >>> h = np.bincount([1] * 60 + [2] * 30 + [5] * 9 + [40])   # 100 records
    >>> trunc_svt_tau(h, 1e6, FastSampler(0), rho=0.9).tau        # ε huge: the 90 % point of the grid
    2
    >>> trunc_svt_tau(h, 1e6, FastSampler(0), rho=0.99).tau
    8
    """
    eps_n, eps_s = _check(epsilon, rho, split)
    grid = svt_grid(theta0, beta, ceiling)
    counts, n = _counts(h, grid)
    n_noisy = int(sampler.draw(np.array([n]), 1.0 / eps_n, (*key, 0))[0])
    eta = int(sampler.draw(np.zeros(1, np.int64), 2.0 / eps_s, (*key, 1))[0])
    noisy = sampler.draw(counts, 4.0 / eps_s, (*key, 2))
    above = np.flatnonzero(noisy >= rho * n_noisy + eta)
    index = int(above[0]) if above.size else grid.size - 1
    charges = (
        Charge(level, node, "records ñ (TruncSVT)", 1, 1, eps_n, relation=RECORDS),
        Charge(
            level,
            node,
            "AboveThreshold: records of value ≤ θ_i (TruncSVT)",
            int(grid.size),
            1,
            eps_s,
            noise_scale=4.0 / eps_s,
            relation=RECORDS,
        ),
    )
    return TauChoice(int(grid[index]), index, n_noisy, charges)


def _dg(scale: float, tail: float = 1e-15) -> tuple[np.ndarray, np.ndarray, float]:
    alpha = math.exp(-1.0 / scale)
    width = int(math.ceil(math.log(tail) / math.log(alpha))) + 1
    check_cells(2 * width + 1, f"the exact law at noise scale {scale:g}", "give a larger ε")
    k = np.arange(-width, width + 1)
    return k, (1 - alpha) / (1 + alpha) * alpha ** np.abs(k), alpha


def _dg_cdf(k: np.ndarray, alpha: float) -> np.ndarray:
    """P(X ≤ k) of the double-geometric law with parameter α (k whole)."""
    k = np.asarray(k, np.float64)
    return np.where(k >= 0, 1 - alpha ** (np.abs(k) + 1) / (1 + alpha), alpha ** np.abs(k) / (1 + alpha))


def trunc_svt_pmf(
    h: object,
    epsilon: float,
    *,
    rho: float = 0.95,
    theta0: float = 1.0,
    beta: float = 2.0,
    ceiling: int = 1 << 16,
    split: float = 0.5,
) -> np.ndarray:
    """The exact law of :func:`trunc_svt_tau`'s grid index (the pmf over ``svt_grid(...)``).

    Sums over ñ's and η's noise (cut where the tails are below 1e-15) of the product of the query
    noises' cdfs.

    >>> h = np.bincount([1] * 60 + [2] * 30 + [5] * 9 + [40])
    >>> p = trunc_svt_pmf(h, 1.0, rho=0.9, ceiling=64)
    >>> round(float(p.sum()), 9), int(p.argmax())
    (1.0, 1)
    """
    eps_n, eps_s = _check(epsilon, rho, split)
    grid = svt_grid(theta0, beta, ceiling)
    counts, n = _counts(h, grid)
    xs, px, _ = _dg(1.0 / eps_n)
    es, pe, _ = _dg(2.0 / eps_s)
    _, _, a4 = _dg(4.0 / eps_s)
    threshold = (rho * (n + xs)[:, None] + es[None, :]).ravel()  # every (ñ, η)
    weight = (px[:, None] * pe[None, :]).ravel()
    # ν_i ≥ T − c_i  ⇔  ν_i ≥ ⌈T − c_i⌉
    need = np.ceil(threshold[:, None] - counts[None, :] - 1e-12)
    above = 1 - _dg_cdf(need - 1, a4)
    below = np.cumprod(np.hstack([np.ones((threshold.size, 1)), 1 - above[:, :-1]]), axis=1)
    stop = below * above
    stop[:, -1] = below[:, -1]  # none above: the ceiling
    return weight @ stop
