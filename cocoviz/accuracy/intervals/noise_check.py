"""Whether a level's stored envelopes can come from its plan's noise: the check that a file's plan was not changed.

A release file keeps, per banded level, the envelopes of the noisy answers ``y = t + Z`` (:class:`LevelBands`: the
running max ``M`` from the left and the running min ``m`` from the right; a naive level's noisy counts whole,
:class:`LevelCounts`), with ``t`` non-decreasing (Hc, Hcp: cumulative counts in ``[0, G]``; Hg: sorted sizes ≥ 0)
and ``Z`` i.i.d. of the plan's law (:meth:`~cocoviz.plan.Plan.level_noise`).  An unsigned file can be edited: lower
its plan's ε (and budget) and it claims more privacy than its noise gave.  The envelopes then show less noise than
the plan's law makes, and two necessary relations, each failing for an honest file with probability at most
:data:`FALSE_REFUSAL`, catch it.

**Not too much noise** (a raised ε: the plan claims less noise than was drawn).  For i ≤ j ≤ k, ``M_j − m_j =
y_i − y_k = (t_i − t_k) + Z_i − Z_k ≤ 2 max |Z|`` as t is non-decreasing; with ``a`` = :func:`half_width` at
confidence ``1 − FALSE_REFUSAL`` over the level's cells, ``max_j (M_j − m_j) ≤ 2a`` unless the noise is beyond ±a
somewhere.  A naive count ``y_s = H_s + Z_s`` with ``0 ≤ H_s ≤ G`` lies in ``[−a, G + a]``.

**Not too little noise** (a lowered ε).  Over the disjoint pairs of cells ``(j, j + 1)``, j odd, ``1 ≤ j ≤ n − 3``
(never cell 0 or n − 1), ``M_{j+1} ≥ max(y_j, y_{j+1})`` and ``m_j ≤ min(y_j, y_{j+1})``, so

    Σ_pairs (M_{j+1} − m_j)  ≥  Σ_pairs |y_{j+1} − y_j|  ≥  Σ_pairs |Z_{j+1} − Z_j| − R,

with ``R ≥ t_{n−1} − t_0`` summed over the nodes.  The right-hand sum is of independent terms of a known law: on a
grid of step ``c`` (a 64th of the law's scale b or σ) ``|Z − Z'| ≥ c·g(A + A'')`` with ``A = ⌊Z/c⌋`` and ``A''`` an
independent copy, whose law is exact, and a Chernoff bound ``P(Σ ≤ x) ≤ min_μ e^{μx/c} E[e^{−μ g}]^pairs`` says
how unlikely a sum as small as the file's is.  ``R``: G for Hc and Hcp; for Hg, whose sizes have no public bound,
``t_{n−1} − t_0 ≤ (M_{n−1} − m_0) + Z_0 − Z_{n−1}``, and the sum over nodes of ``Z_0 − Z_{n−1}`` is below ``u`` but
with probability ``FALSE_REFUSAL/2`` (Chernoff again, from the law's moment generating function: the
double-geometric's in closed form, the discrete Gaussian's ``≤ exp(λ²σ²/2)``, Canonne, Kamath and Steinke 2020).
The level is refused when the bound is below ``FALSE_REFUSAL/2``.  A naive level: ``Σ_s |y_s| + G ≥ Σ_s |Z_s|``.

The envelopes are loose where the truth is flat: there ``M_{j+1} − m_j`` is the spread of the extremes of all the
cells on either side (about ``2b ln n``), not of two cells, so an honest file's sum sits well above what the
pairs need, and only a change of ε by orders of magnitude is seen.

Neither relation reads the data; they hold for any truth.  Their power grows with the level's cells: a 1000× lower
ε is refused on a level of a few thousand noisy cells, while a tiny level (the slides' toy) can hide any change.
Stated variances are not checked: their rules (:mod:`cocoviz.accuracy.stated`) state close to nothing for some runs
at any ε (a long Hg block, a lone group after a long gap), so no bound in ε holds for every honest file.

>>> import numpy as np
>>> from cocoviz.accuracy.intervals.bands import LevelBands
>>> rng = np.random.default_rng(0)
>>> y = np.sort(rng.integers(0, 50, 2000)) + rng.laplace(0, 0.5, 2000).round().astype(int)  # noise of ε = 2
>>> bands = LevelBands.of("Hg", y, np.array([0, 1000, 2000]))
>>> noise_problem(bands, 0.5, np.array([1000, 1000])) is None  # its plan says ε = 2
True
>>> noise_problem(bands, 500.0, np.array([1000, 1000]))  # its plan says ε = 0.002
'235× narrower'
>>> noise_problem(bands, 0.01, np.array([1000, 1000]))  # its plan says ε = 100
'8× wider'
"""

from __future__ import annotations

import math

import numpy as np

from cocoviz.accuracy.intervals.widths import half_width, tail_probability
from cocoviz.privacy.noise import GaussianNoise

__all__ = ["FALSE_REFUSAL", "noise_problem"]

#: The largest probability that an honest level fails one of the two relations (module docstring).
FALSE_REFUSAL = 1e-9
_CUMULATIVE = ("Hc", "Hcp")


def _scale(noise: float | GaussianNoise) -> float:
    return math.sqrt(float(noise.sigma2)) if isinstance(noise, GaussianNoise) else float(noise)


def _at_least(noise: float | GaussianNoise, k: np.ndarray) -> np.ndarray:
    """``P(Z ≥ k)`` of the (symmetric) law, for whole ``k`` of either sign."""
    tails = np.asarray(tail_probability(noise, np.abs(k) - (k >= 1)), np.float64)  # P(|Z| > |k| − [k ≥ 1])
    return np.where(k >= 1, tails / 2, 1 - tails / 2)


def _upper_law(noise: float | GaussianNoise, c: int, naive: bool) -> tuple[np.ndarray, np.ndarray]:
    """Values and probabilities of a whole ``S`` with ``c·S`` at most a pair's ``(Z − Z')⁺`` (a naive cell's
    ``|Z|``), exact on a grid of step ``c``; the mass past ±40 scales is put at 0 (a smaller sum: still a bound)."""
    span = int(math.ceil(40 * _scale(noise) / c)) + 2
    if naive:  # S = ⌊|Z|/c⌋
        i = np.arange(span + 2, dtype=np.int64)
        tails = np.asarray(tail_probability(noise, np.maximum(i * c - 1, 0)), np.float64)  # P(|Z| ≥ i c), i ≥ 1
        tails[0] = 1.0
        pmf, values = tails[:-1] - tails[1:], i[:-1]
    else:  # A = ⌊Z/c⌋, A'' = ⌊−Z'/c⌋ (an independent copy, Z' symmetric): c s ≤ Z − Z' < c (s + 2), s = A + A''
        i = np.arange(-span, span + 2, dtype=np.int64)
        at_least = _at_least(noise, i * c)
        a = at_least[:-1] - at_least[1:]  # P(A = i), i = −span..span
        pmf = np.convolve(a, a)
        s = np.arange(len(pmf), dtype=np.int64) - 2 * span
        values = np.abs(s) if c == 1 else np.where(s >= 0, s, np.maximum(-s - 2, 0))  # |Z − Z'| ≥ c · values
        pmf, values = pmf[values > 0], values[values > 0]
    pmf = np.clip(pmf, 0.0, None)
    return np.append(values, 0).astype(np.float64), np.append(pmf, max(0.0, 1.0 - float(pmf.sum())))


def _sum_below(held: float, terms: int, noise: float | GaussianNoise, naive: bool) -> float:
    """A Chernoff bound on ``P(Σ_terms (Z − Z')⁺ ≤ held)`` (naive: ``Σ |Z|``) for i.i.d. terms of the law."""
    if terms <= 0:
        return 1.0
    c = max(1, math.ceil(_scale(noise) / 64))
    values, pmf = _upper_law(noise, c, naive)
    best = 0.0
    for mu in np.geomspace(1e-5, 20, 300):
        log_mgf = math.log(max(float(pmf @ np.exp(-mu * values)), 1e-300))
        best = min(best, mu * held / c + terms * log_mgf)
    return math.exp(best)


def _mean(noise: float | GaussianNoise, naive: bool) -> float:
    """``E (Z − Z')⁺`` (naive: ``E |Z|``) on the grid of :func:`_upper_law`, for the messages' ratio."""
    c = max(1, math.ceil(_scale(noise) / 64))
    values, pmf = _upper_law(noise, c, naive)
    return c * float(pmf @ values)


def _sum_tail(noise: float | GaussianNoise, terms: int, p: float) -> float:
    """A ``u`` with ``P(Z_1 + … + Z_terms ≥ u) ≤ p`` for i.i.d. ``Z`` of the law (symmetric), by Chernoff."""
    if terms <= 0:
        return 0.0
    if isinstance(noise, GaussianNoise):  # E e^{λZ} ≤ e^{λ²σ²/2}
        return math.sqrt(2 * terms * float(noise.sigma2) * math.log(1 / p))
    b = float(noise)
    best = math.inf
    for x in np.linspace(0.01, 0.99, 99):  # λ = x/b < 1/b, where the double-geometric's MGF is finite
        log_mgf = (
            2 * math.log(-math.expm1(-1 / b)) - math.log(-math.expm1((x - 1) / b)) - math.log(-math.expm1(-(x + 1) / b))
        )
        best = min(best, (terms * log_mgf + math.log(1 / p)) * b / x)
    return best


def _ratio(r: float) -> str:
    """``r`` for a message: the ratios are rough (the envelopes' spread against the law's), so below 1.5 none."""
    if r < 1.5:
        return ""
    return (f"{r:,.0f}" if r >= 10 else f"{r:.2g}") + "× "


def _positions(cells: np.ndarray, ptr: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Every step's cell in the level's concatenated cells (nodes in order)."""
    offsets = np.zeros(len(cells) + 1, np.int64)
    np.cumsum(cells, out=offsets[1:])
    return np.repeat(offsets[:-1], np.diff(ptr)) + at.astype(np.int64)


def _counts_problem(bands, noise, groups: np.ndarray) -> str | None:
    values = bands.values.astype(np.int64)
    cells = bands.cells.astype(np.int64)
    if not values.size:
        return None
    a = half_width(noise, int(values.size), 1 - FALSE_REFUSAL)
    ceiling = np.repeat(groups.astype(np.int64), cells)
    beyond = float(np.max(np.maximum(-values - a, values - ceiling - a)))
    if beyond > 0:
        return f"{_ratio((beyond + a) / max(a, 1))}wider"
    held = (float(np.abs(values).sum()) + float(groups[cells > 0].sum())) * (1 + 1e-12)
    if _sum_below(held, int(values.size), noise, naive=True) <= FALSE_REFUSAL:
        expected = _mean(noise, naive=True) * values.size
        return f"{_ratio(expected / max(float(np.abs(values).sum()), 1.0))}narrower"
    return None


def noise_problem(bands, noise: float | GaussianNoise, groups: np.ndarray) -> str | None:
    """Why a level's stored envelopes cannot come from noise ``noise`` (module docstring), or None.

    Parameters
    ----------
    bands : LevelBands or LevelCounts
        The level's envelopes (a naive level's counts), as stored.
    noise : float or GaussianNoise
        The plan's law of the level's noise (:meth:`~cocoviz.plan.Plan.level_noise`).
    groups : ndarray
        Every node's public G.

    Returns
    -------
    str or None
        How the envelopes differ from what the noise makes ("N× narrower", "N× wider", or without the rough
        ratio N when it is below 1.5); None when both relations hold.
    """
    groups = np.asarray(groups, np.int64)
    if bands.method == "naive":
        return _counts_problem(bands, noise, groups)
    cells = bands.cells.astype(np.int64)
    total = int(cells.sum())
    if total == 0:
        return None
    up_pos = _positions(cells, bands.up_ptr, bands.up_at)
    down_pos = _positions(cells, bands.down_ptr, bands.down_at)
    up_value = bands.up_value.astype(np.float64)
    down_value = bands.down_value.astype(np.float64)

    def high(g: np.ndarray) -> np.ndarray:
        return up_value[np.searchsorted(up_pos, g, side="right") - 1]

    def low(g: np.ndarray) -> np.ndarray:
        return down_value[np.searchsorted(down_pos, g, side="right") - 1]

    # Not too much noise: M − m is constant between the steps of either envelope.
    breaks = np.union1d(up_pos, down_pos)
    a = half_width(noise, total, 1 - FALSE_REFUSAL)
    spread = float(np.max(high(breaks) - low(breaks)))
    if spread > 2 * a:
        return f"{_ratio(spread / max(2 * a, 1))}wider"

    # Not too little: Σ over the odd pairs (j, j + 1), 1 ≤ j ≤ n − 3, of M_{j+1} − m_j, segment by segment.
    offsets = np.zeros(len(cells) + 1, np.int64)
    np.cumsum(cells, out=offsets[1:])
    paired = cells >= 4
    pairs = int(((cells[paired] - 2) // 2).sum())
    if pairs == 0:
        return None
    starts = offsets[:-1][paired]
    ends = starts + cells[paired] - 2  # j < n − 2
    js = np.union1d(np.union1d(up_pos - 1, down_pos), np.concatenate([starts + 1, ends]))
    node = np.searchsorted(offsets[:-1], js, side="right") - 1
    inside = node >= 0
    js, node = js[inside], node[inside]
    local = js - offsets[node]
    nxt = np.append(js[1:], np.iinfo(np.int64).max // 2) - offsets[node]
    stop = np.minimum(nxt, cells[node] - 2)
    ok = (cells[node] >= 4) & (local >= 1) & (local < stop)
    odd = (stop[ok] // 2 - local[ok] // 2).astype(np.float64)
    gap = np.maximum(high(js[ok] + 1) - low(js[ok]), 0.0)
    seen = float(odd @ gap)
    if bands.method in _CUMULATIVE:
        rise, slack = float(groups[paired].sum()), 0.0
    else:  # Hg: the observed range of each node, and the endpoints' noise bounded with probability 1 − p/2
        rise = float((high(offsets[1:][paired] - 1) - low(starts)).sum())
        slack = _sum_tail(noise, 2 * int(paired.sum()), FALSE_REFUSAL / 2)
    held = (seen + rise + slack) * (1 + 1e-12)
    if _sum_below(held, pairs, noise, naive=False) <= FALSE_REFUSAL / 2:
        expected = _mean(noise, naive=False) * pairs  # the ratio: the noise's spread seen, past the test's slack
        return f"{_ratio(expected / max(seen, 1.0))}narrower"
    return None
