"""The stated variance of each estimated group size from an Hc or Hg fit (experimental; docs/notes/merge-variances.md).

Hg: :func:`hg_size_variances`, below; Hc: the rank-shift rule that follows.

Stated, not weighed by: the top-down merge keeps the paper's count rule as its weights
(``LevelEstimates.variances``); this one is ``StatedEstimates.stated`` (:mod:`cocoviz.accuracy.stated.topdown`,
computed on request).

Why not METHOD.md's ``4 / (ε² Ĥ[s])``: that is the variance of a *count* shared out over the
groups of one size, but what a user needs stated is the error of one group's *size*.  An Hc fit
that is off by δ at size s (in groups: its error is in rank units) gives the group of rank r
the size of rank r − δ.  Where sizes are dense (many groups per size) that moves a few groups
by one size; across a gap of L sizes (the sparse tail: outliers thousands apart) it moves a
group by the whole gap, so its error is of the order of L, not 2/ε: a count-scale variance
understates it there (``benchmarks/merge_calibration.py`` prints the calibration).

**The rule** (post-processing: reads the fitted runs and ε only).  With b the scale of one cell's
noise of Hc (Laplace of scale 1/ε at Δ = 1, variance 2/ε²; for the discrete Gaussian the ε of
equal variance), the mean squared size error of the groups of run j (size s_j, whole ranks
``lo_j … hi_j − 1``) is the plug-in

    V_j = Σ_k P(r + ½ + δ_jk ∈ run k) (s_k − s_j)²,  averaged over the ranks r of run j,

the estimated runs standing in for the true ones; ranks shifted below 0 get size 0, ranks
shifted above G the last size plus the last gap (a public stand-in for the unknown beyond); a node
of one run states the larger of that and the box (s, K] (docs/merge-variances.md, "Small Hc nodes").
δ_jk is Laplace of scale ``b / √L``, L the widest gap of sizes between runs j and k: to land in
run k a group's rank must be missed over every size in between, and over a gap of L sizes the
fit is flat, one isotonic block pooling L noisy cells (consecutive sizes: L = 1, scale b).  The
average over the whole ranks is a geometric series, so the cost is the number of pairs of runs
within about 40 b ranks of each other.  Dense runs (``Ĥ[s] ≫ b``) get about ``b / Ĥ[s]``; a lone
group after a long gap, almost nothing.  An earlier form (one scale b for every gap, a continuum
of ranks) stated the groups beyond a gap 10³–10⁶ times their realised error (housing-west,
Hc×Hc×Hc at ε = 1, counties: sizes 8–20 and above 200); with this one the realised mean squared
error is 0.4–1.6 times the stated per size class there (docs/merge-variances.md).

**The step inside a gap** (:func:`hc_step_variances`): the rank shift moves a group across its gap whole or not
at all, but the fit places a lone group's step inside the gap only as well as the noise lets it (the argmin of
the L1 fit's sign walk: about 19 at ε = 1 for a lone group, where the rank shift states about 0).  A run states
the larger of the two (:func:`hc_stated`): beside a short gap they describe the same crossing.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "hc_size_variances",
    "hc_node_variances",
    "hc_stated",
    "hc_step_variances",
    "hg_size_variances",
    "hg_stated_runs",
    "hg_parent_posterior",
    "hg_merged_stated",
    "pool_by_size",
    "short_side_walk",
    "HG_STEP_COEFFICIENT",
    "VARIANCE_FLOOR",
]

#: Added to every stated variance, so that a run no shift can leave (a node whose groups all share one size) still
#: states a positive one.  For positivity only: it must sit far below any rate a run can state (one misplaced group
#: in n, about 1/(ε n): 5·10⁻⁷ for a run of 10⁶ groups at ε = 1).  At 10⁻⁶ it was that rate, and tripled the
#: statement of Hawaiian's run of a million zeros (its Hc root's mean z² 0.33; docs/merge-variances.md, zcal3).
VARIANCE_FLOOR = 1e-12


def hc_size_variances(ptr, sizes, counts, scale: float, floor: float = 0.0, bounds=None) -> np.ndarray:
    """Per run of the nodes delimited by ``ptr`` (runs sorted by size within a node): the plug-in
    mean squared size error under a rank shift of Laplace(``scale``) noise, plus ``floor``.

    Two virtual runs take the ranks outside ``[0, G)``: size 0 below and, above, the last size
    plus the last gap (at least 1).  ``bounds``: each node's K (the public bound its Hc was measured to;
    ``None``: unknown).  With K (docs/merge-variances.md, "Small Hc nodes") a node of one run, which has no gap
    to repeat, states the larger of that and the box: its true sizes above s lie in (s, K], stood in for by their
    uniform's root mean square distance s + (K − s)/√3, reached across the fit's flat block of K − s cells (the
    fitted Hc is G from s to K − 1: scale b/√(K − s)).  Why: the slides' toy at ε = 0.1 (K = 10, four groups
    under noise of scale 10) mostly fits all four groups at one size, and the stand-in above size 0 was size 1.

    The toy's four groups fitted at size 0 under noise of scale 10, K unknown, then K = 10:

    >>> one, size, count = np.array([0, 1]), np.array([0]), np.array([4])
    >>> [round(float(hc_size_variances(one, size, count, 10.0, 0.0, k)[0]), 2) for k in (None, 10)]
    [0.41, 9.42]
    """
    from cocoviz.accuracy.stated._variance_kernels import hc_size_variances as kernel

    return kernel(*_node_runs(ptr, sizes, counts), float(scale), float(floor), _node_bounds(ptr, bounds))


def hc_step_variances(ptr, sizes, counts, scale: float, bounds=None) -> np.ndarray:
    """Per run of the nodes delimited by ``ptr``: the mean squared size error of its groups from where the fit puts
    their step inside a long gap of sizes (docs/merge-variances.md, "Small Hc nodes"; ``bounds``: K per node or
    None).

    The rank-shift rule (:func:`hc_size_variances`) moves a group across a gap whole, or not at all; but the fit
    places a lone group's step inside its gap only as well as the noise lets it.  The group of rank r takes the
    first size whose rounded fit exceeds r, i.e. whose L1 isotonic fit reaches t = r + ½, which by the switching
    relation is the argmin of a walk over the cells, ±1 each (the sign of y − t): below the run's first size a cell
    pushes the step down with probability p = P(noise ≥ r − lo + 1) = α^(r − lo + 1)/(1 + α) (the discrete Laplace
    of scale b, α = e^(−1/b); for the discrete Gaussian, b of equal variance), above it up with α^(hi − r)/(1 + α).
    Each side's minimum is geometric in depth, reached after a sum of ladder epochs (the walk with its drift
    reversed), so E[D²] of the argmin is a geometric series (ties between the sides halved).  Only a gap's empty
    sizes count (farther, the group enters the next run: the rank-shift rule's), and only a gap longer than four
    times the walk's scale 4p(1 − p)/(1 − 2p)² (shorter, the walk's displacement is that crossing); a side at the
    box's edge (below the first run, above the last one with K) ends there.  A lone group beside long gaps at
    ε = 1 (α = e^(−1), p = 0.269 on both sides): 18.9, checked against a simulation of the walk
    (tests/test_variances.py).

    >>> [round(float(v), 1) for v in hc_step_variances(np.array([0, 3]), [0, 300, 3000], [400, 1, 1], 1.0, 100_000)]
    [0.0, 18.9, 18.9]
    """
    from cocoviz.accuracy.stated._variance_kernels import hc_step_variances as kernel

    return kernel(*_node_runs(ptr, sizes, counts), float(scale), _node_bounds(ptr, bounds))


def _node_runs(ptr, sizes, counts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Hc kernels' run arrays, contiguous int64."""
    return tuple(np.ascontiguousarray(a, np.int64) for a in (ptr, sizes, counts))


def _node_bounds(ptr, bounds) -> np.ndarray:
    """K per node as the Hc kernels read it (∞ where none: no box)."""
    n_nodes = len(ptr) - 1
    if bounds is None:
        return np.full(n_nodes, np.inf)
    return np.ascontiguousarray(np.broadcast_to(np.asarray(bounds, np.float64), n_nodes))


def hc_stated(ptr, sizes, counts, scale: float, bounds=None, floor: float = VARIANCE_FLOOR) -> np.ndarray:
    """The stated variance of each Hc run: the larger of the rank-shift rule (:func:`hc_size_variances`) and the
    step inside a gap (:func:`hc_step_variances`), plus ``floor``.

    The larger, not the sum: where both count they describe overlapping errors, and summed they stated the slides'
    toy twice over (mean z² 0.50–0.77 over 2,000 trials); beside a long gap the rank shift is about 0 and the step
    is all there is (a lone
    group of white's counties at ε = 1: stated 3·10⁻⁵ against a realised 25; docs/merge-variances.md, "Small Hc
    nodes").
    """
    shift = hc_size_variances(ptr, sizes, counts, scale, 0.0, bounds)
    return np.maximum(shift, hc_step_variances(ptr, sizes, counts, scale, bounds)) + floor


def hc_node_variances(sizes: np.ndarray, counts: np.ndarray, epsilon: float, max_size: int | None = None) -> np.ndarray:
    """The variances of one node's Hc runs (sizes ascending) at budget ``epsilon`` (Δ = 1); ``max_size``: K, the
    bound the node's Hc was measured to (``None``: unknown, no box; :func:`hc_size_variances`).

    Dense runs: at each of their two boundaries (the virtual runs 0 below and 3 above count) about
    b/2 groups cross, by one size each.

    >>> hc_node_variances(np.array([1, 2]), np.array([1000, 1000]), 1.0).round(4)
    array([0.001, 0.001])

    A lone outlier 4,999 sizes above the rest does not jump the gap (the fit would have to miss by ½ over all of
    it, one isotonic block averaging 4,999 noisy cells), but its step lies inside the gap only as well as the
    noise lets the fit place it (:func:`hc_step_variances`; the run of 1,000 at size 1 likewise for its top
    groups).  Four sizes above, it also jumps now and then:

    >>> [round(float(v), 4) for v in hc_node_variances(np.array([1, 5000]), np.array([1000, 1]), 1.0)]
    [0.0109, 9.4303]
    >>> [round(float(v), 2) for v in hc_node_variances(np.array([1, 2, 6]), np.array([1000, 10, 1]), 1.0)]
    [0.0, 0.53, 5.89]
    """
    return hc_stated(np.array([0, len(sizes)]), sizes, counts, 1.0 / epsilon, max_size)


#: The coefficient ``k`` of the Hg rule's step term ``k s³`` (:func:`hg_size_variances`): fitted, not derived
#: (docs/merge-variances.md: 1.5 and 2 put 8 of 12 own-level rows of housing, white and taxi in 0.7–1.5, 1 put 5).
HG_STEP_COEFFICIENT = 1.5


def _rounding_variance(s2: np.ndarray) -> np.ndarray:
    """E[rint(e)²] for e ~ N(0, s²): the squared error of a block mean rounded to the nearest size."""
    from scipy.special import ndtr  # deferred, as cocoviz.methods.isotonic does: SciPy's import is heavy

    s = np.sqrt(np.asarray(s2, np.float64))
    k = np.arange(1, int(np.ceil(0.5 + 12 * (s.max() if s.size else 0))) + 1, dtype=np.float64)
    safe = np.where(s > 0, s, 1.0)[:, None]
    upper = ndtr(-(k - 0.5) / safe) - ndtr(-(k + 0.5) / safe)  # P(rint(e) = k), tails taken directly
    return np.where(s > 0, 2.0 * (upper * k * k).sum(axis=1), 0.0)


def hg_size_variances(variances: np.ndarray, floor: float = VARIANCE_FLOOR) -> np.ndarray:
    """The stated variance of Hg runs from the weights' block rule ``s² = 2Δ²/(|S| ε²)``.

    ``max(E[rint(e)²], min(k s³, s²))`` with e ~ N(0, s²), plus ``floor``.  Why: a block's size is its mean
    rounded, so a long block (small s²) is exact unless the fit misplaced the step next to it, and the block
    rule's s² overstates it by 10–100×; the rounding term alone, vanishing like e^(−1/(8s²)), understates the
    misplaced steps by as much.  Measured per block length on housing, white and taxi, the mean squared error
    of long blocks went as about s³ (``k`` = :data:`HG_STEP_COEFFICIENT`, fitted on those data; not derived),
    capped at s² for short blocks, whose rounding term takes over (a lone group: its noise, s² + 1/12).

    >>> [round(float(v), 6) for v in hg_size_variances(np.array([2.0, 0.02, 2e-6]), floor=0.0)]
    [2.083333, 0.004243, 0.0]
    """
    import pandas as pd

    variances = np.asarray(variances, np.float64)
    codes, values = pd.factorize(variances.ravel())  # one hash pass: a level holds few distinct block lengths
    values = np.asarray(values, np.float64)
    step = np.minimum(HG_STEP_COEFFICIENT * values**1.5, values)
    return (np.maximum(_rounding_variance(values), step) + floor)[codes].reshape(variances.shape)


def short_side_walk(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The argmin of a two-sided walk whose right side is short: ``E[D⁺]/σ²``, ``P(D⁺ > 0)`` and ``E[D⁻]/σ²``, per
    ``x = L/σ²``.

    The walk (docs/merge-variances.md, "Hg's steps"): drift ½ per rank away from the step on both sides, noise σ² per
    rank, the left side unbounded, the right side ``L`` ranks long (then the node ends).  D⁺ = the argmin's distance
    into the right side (0 when it lies left).  As Brownian motion, with ν = ½/σ the drift in noise units and
    λ = 2ν the rate of the left side's depth M_l (exponential), by the path decomposition at the right side's
    minimum (time θ, depth m, rise r after it: density 2 h(θ, m) h(L − θ, r) e^{ν(r − m) − ν²L/2}, h(t, a) the
    first-passage density a e^{−a²/2t}/√(2πt³)):

        E[D⁺] = E[θ (1 − e^{−λm})] = ∫_0^L θ · 2 [a(θ, ν) − a(θ, ν + λ)] b(L − θ, ν) dθ,
        a(t, c) = φ(ν√t)/√t − c e^{(c² − ν²)t/2} Φ(−c√t),   b(s, ν) = φ(ν√s)/√s + ν Φ(ν√s),

    and P(D⁺ > 0) = E[1 − e^{−λm}] = ∫ λ e^{−λm} P(M_r ≥ m) dm with P(M_r ≥ m) = Φ((−m − νL)/√L) +
    e^{−2νm} Φ((−m + νL)/√L).  D⁻ (the argmin's distance into the left side): the left side's minimum at depth m
    is reached after m/ν ranks on average, and wins where the right side's is shallower:
    E[D⁻] = ∫ (m/ν) λ e^{−λm} (1 − P(M_r ≥ m)) dm.  Scale-free: Brownian time scales as 1/ν² = 4σ², so all three
    depend on L/σ² only, and E[D±] are σ² times their values at σ² = 1.  At L → ∞ E[D±] → 3σ²/(8·¼) = 1.5σ² and
    P → ½ (the two-sided walk); at L ≪ 4σ² the right side, too short to go deep, rarely wins, and E[D⁻] → the
    one-sided 2σ².  Gauss–Legendre quadrature (θ = L sin²φ removes the endpoints' 1/√ singularities).

    >>> d, p, e = short_side_walk(np.array([0.2, 1e3]))
    >>> d.round(3).tolist(), p.round(3).tolist(), e.round(3).tolist()
    ([0.029, 1.5], [0.246, 0.5], [1.896, 1.5])
    """
    from scipy.special import erfcx, ndtr  # deferred: SciPy's import is heavy

    x = np.atleast_1d(np.asarray(x, np.float64))[:, None]
    nodes, weights = np.polynomial.legendre.leggauss(64)
    nu = 0.5  # scaled to σ² = 1: drift ½ per rank, L = x ranks, D⁺ in units of σ²
    lam = 2 * nu
    length = np.minimum(x, 40.0 / nu**2)  # the minimum lies beyond 40 walk scales with probability e^-40
    phi = (nodes + 1) * np.pi / 4
    theta = length * np.sin(phi) ** 2
    jacobian = 2 * length * np.sin(phi) * np.cos(phi) * weights * np.pi / 4
    root, rest = np.sqrt(theta), np.sqrt(np.maximum(x - theta, 0.0))
    density = np.exp(-0.5 * (nu * root) ** 2) / np.sqrt(2 * np.pi) / root
    c = nu + lam
    a_nu = density - nu * ndtr(-nu * root)
    a_c = density - c * np.exp(-0.5 * (nu * root) ** 2) * 0.5 * erfcx(c * root / np.sqrt(2))
    b = np.exp(-0.5 * (nu * rest) ** 2) / np.sqrt(2 * np.pi) / rest + nu * ndtr(nu * rest)
    dplus = (jacobian * theta * 2 * (a_nu - a_c) * b).sum(axis=1)
    depth_max = 40.0 / lam
    m = (nodes + 1) * depth_max / 2
    sq = np.sqrt(x)
    deeper = ndtr((-m - nu * x) / sq) + np.exp(-2 * nu * m) * ndtr((-m + nu * x) / sq)
    wins = (weights * depth_max / 2 * lam * np.exp(-lam * m) * deeper).sum(axis=1)
    dminus = (weights * depth_max / 2 * (m / nu) * lam * np.exp(-lam * m) * (1 - deeper)).sum(axis=1)
    return dplus, wins, dminus


def hg_stated_runs(
    ptr: np.ndarray,
    sizes: np.ndarray,
    counts: np.ndarray,
    variances: np.ndarray,
    noise_variance: float | None,
    floor: float = VARIANCE_FLOOR,
) -> np.ndarray:
    """The stated variance of each Hg run (before pooling): the step model where a node's sizes are resolved, the
    block rule (:func:`hg_size_variances`) elsewhere.  ``noise_variance``: σ², the variance of one cell's noise
    (2Δ²/ε²) of an L2 fit; ``None`` keeps the block rule everywhere (an L1 fit, whose crossings follow the signs of
    the noise, not its sums: not modelled).  Runs of a node sorted by size, as the fit gives them.

    **The step model** (docs/merge-variances.md, "Hg's steps").  The fit rounds to sizes ≤ v exactly the ranks before
    the argmin of the walk Σ (y_i − v − ½) (the switching relation of isotonic regression; the bound at 0 moves no
    crossing above 0), so the groups misplaced at the step between sizes v and v + 1 are the displacement D of the
    argmin of a two-sided random walk with drift ½ per rank away from the true step.  For Brownian motion with noise
    σ² per rank and drift μ on both sides, E[D⁺] = E[D⁻] = 3σ²/(8μ²): 1.5σ² groups at μ = ½, each one size off, released
    at the smaller size (D⁺) or the larger (D⁻).  That holds where both sizes of the step hold more groups than the
    walk's scale σ²/μ² = 4σ² ("resolved") and are consecutive: there the fitted staircase stands for the true one.
    A resolved size whose every step is resolved states 1.5σ² groups per step, shared among its runs by where they
    sit: a rank x groups inside the size's edge is misplaced when the displacement exceeds x, about ½ e^(−x/3σ²)
    (E[D⁺ | D⁺ > 0] = 3σ²), so the runs at the edges state more than a long block in the middle.  Every other size
    keeps the block rule, which it calibrates (a ramp of sizes or lone groups that the fit pools into blocks).  Why:
    the block rule's rounding terms of the short blocks at a step overstate a dense size by about 2× (housing's Hg
    root: mean z² 0.54 at ε = 1).

    **A short side** (docs/merge-variances.md, "A short side").  A node's first size, resolved, whose sizes above are
    all unresolved to the node's end (a zero run and a few groups above it) states its upper edge by the walk whose
    right side is only those N fitted groups long (:func:`short_side_walk`): E[D⁺] at L = N where the next size is
    consecutive; beside a gap, where the walk swallowed the short side's lowest ranks, E[D⁺ | D⁺ > 0] at
    L = N + itself.  Why: there the two-sided 1.5σ² and the block rule overstate the zero run 5–300 times (Hawaiian's
    states at ε = 0.1: mean z² 0.22 → 1.08, own fits).

    A node of one run keeps the block rule (no step to misplace in the plug-in).

    >>> stated = hg_stated_runs(np.array([0, 3]), np.array([1, 2, 3]), np.array([1000, 1000, 1000]),
    ...                         np.array([2e-3, 2e-3, 2e-3]), 2.0, floor=0.0)
    >>> (stated * 1000).round(3).tolist()  # 1.5σ² = 3 groups per step: 3, 6, 3 over 1,000 groups each
    [3.0, 6.0, 3.0]
    """
    runs = hg_size_variances(variances, floor=0.0)
    if len(runs) == 0 or noise_variance is None:
        return runs + floor
    from cocoviz.accuracy.stated._variance_kernels import hg_step_runs

    log_lo, log_step, table_d, table_p = _short_side_table()
    out = hg_step_runs(
        np.ascontiguousarray(ptr, np.int64),
        np.ascontiguousarray(sizes, np.int64),
        np.ascontiguousarray(counts, np.int64),
        float(noise_variance),
        runs,
        np.empty(len(runs), np.float64),
        log_lo,
        log_step,
        table_d,
        table_p,
    )
    return out + floor


@functools.lru_cache(maxsize=1)
def _short_side_table() -> tuple[float, float, np.ndarray, np.ndarray]:
    """:func:`short_side_walk` on a grid of log(L/σ²) (10⁻⁸ … 10⁴, 601 points: interpolation error below 10⁻³), once
    per process, for the kernel to interpolate."""
    log_x = np.linspace(np.log(1e-8), np.log(1e4), 601)
    d, p, _ = short_side_walk(np.exp(log_x))
    return float(log_x[0]), float(log_x[1] - log_x[0]), d, p


def pool_by_size(ptr: np.ndarray, sizes: np.ndarray, counts: np.ndarray, stated: np.ndarray) -> np.ndarray:
    """``stated`` replaced, on every run, by the count-weighted mean over the runs of its node and size.

    Why: a release is a histogram, so the groups of one node and one size are interchangeable and a stated
    variance can only be about all of them.  Kept per run (an Hg fit's long block and the short ones at
    its step, or a merged child's runs of different weights), it put the error where it was not: the merge
    hands a parent's correction to whichever groups of the size sit at the step in the children's joint
    order, not to the runs that erred (housing Hg×Hg states at ε = 1: mean z² 14 per run, 0.68 pooled).
    The pooled mean keeps the expected sum of z² over the node's groups of that size.  Runs of a node
    must be sorted by size.

    >>> pool_by_size(np.array([0, 3]), np.array([2, 2, 5]), np.array([3, 1, 1]), np.array([0.0, 4.0, 9.0]))
    array([1., 1., 9.])
    """
    sizes, counts = np.asarray(sizes), np.asarray(counts, np.float64)
    stated = np.asarray(stated, np.float64)
    n = len(sizes)
    if n == 0:
        return stated
    new = np.empty(n, bool)
    new[0] = True
    np.not_equal(sizes[1:], sizes[:-1], out=new[1:])
    first = np.asarray(ptr[:-1])
    new[first[first < n]] = True
    starts = np.flatnonzero(new)
    if len(starts) == n:
        return stated
    total = np.add.reduceat(counts, starts)
    mean = np.divide(np.add.reduceat(stated * counts, starts), total, out=np.zeros(len(starts)), where=total > 0)
    return np.repeat(mean, np.diff(np.append(starts, n)))


def hg_parent_posterior(
    parent_ptr: np.ndarray,
    parent_sizes: np.ndarray,
    parent_counts: np.ndarray,
    parent_stated: np.ndarray,
    node: np.ndarray,
    sizes: np.ndarray,
    noise: np.ndarray,
    merged: np.ndarray,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    lower_count: np.ndarray | None = None,
    upper_count: np.ndarray | None = None,
) -> np.ndarray:
    """Per group of an Hg child merged into its parent: the mean squared error of its merged size ``merged`` under
    the parent's released sizes as the prior of its true size and its own fitted size as the evidence
    (docs/notes/merge-variances.md, "Small Hg nodes").

    A child's groups are some of its parent's groups, so a child's group has the true size of one of them.  The
    parent's release (runs of ``node``: ``parent_sizes`` ascending, ``parent_counts``, ``parent_stated``) says how many
    there are of each size, each to within its stated variance; the child's Hg fit saw its group through its block's
    noise e ~ N(0, ``noise``) (the weights' ``2Δ²/(|S| ε²)``), rounded and clipped at 0 as the fit does.  So, over the
    parent's runs u::

        E[(merged − t)²] = Σ_u π_u ((merged − u)² + stated_u) / Σ_u π_u,   π_u = count_u · P(rint(max(0, u + e)) = size)

    (a fitted 0 is everything below ½), over the parent's runs with ``lower ≤ u ≤ upper`` only (default: all), the
    count of a run at ``lower`` (``upper``) at most ``lower_count`` (``upper_count``).  ∞ where no run of the parent
    could have given the child's size.  Where the child's noise is large against the
    parent's spread of sizes (small nodes at small ε) this is far below the child's own statement: its merged size is
    one of the parent's, and so is its truth.

    >>> ptr, sizes, counts, stated = np.array([0, 2]), np.array([1, 2]), np.array([300, 100]), np.array([0.0, 0.0])
    >>> hg_parent_posterior(ptr, sizes, counts, stated, np.array([0, 0]), np.array([1, 40]), np.array([1e-4, 1.0]),
    ...                     np.array([1, 2])).round(4).tolist()  # a long block at 1 is at 1; nothing is near 40
    [0.0, inf]
    >>> float(hg_parent_posterior(ptr, sizes, counts, stated, np.array([0]), np.array([0]), np.array([1e4]),
    ...                           np.array([1]))[0].round(3))  # noise-dominated: the prior, ¾ at 1 and ¼ at 2
    0.248
    """
    from cocoviz.accuracy.stated._variance_kernels import hg_parent_errors

    n = len(sizes)
    return hg_parent_errors(
        np.ascontiguousarray(parent_ptr, np.int64),
        np.ascontiguousarray(parent_sizes, np.int64),
        np.ascontiguousarray(parent_counts, np.float64),
        np.ascontiguousarray(parent_stated, np.float64),
        np.ascontiguousarray(node, np.int64),
        np.ascontiguousarray(sizes, np.int64),
        np.ascontiguousarray(noise, np.float64),
        np.ascontiguousarray(merged, np.float64),
        np.zeros(n, np.int64) if lower is None else np.ascontiguousarray(lower, np.int64),
        np.full(n, np.inf) if lower_count is None else np.ascontiguousarray(lower_count, np.float64),
        np.full(n, 1 << 62, np.int64) if upper is None else np.ascontiguousarray(upper, np.int64),
        np.full(n, np.inf) if upper_count is None else np.ascontiguousarray(upper_count, np.float64),
        np.empty(n, np.float64),
    )


def hg_merged_stated(stated, sa, sb, parents, node, children, bottom, merged) -> np.ndarray:
    """The merged statement ``stated`` of an Hg child's groups (:func:`cocoviz.accuracy.stated.merged.merge_stated`),
    capped where it states size errors (``max(sa, sb) ≥ 1``) by :func:`hg_parent_posterior` under ``parents`` (runs with
    ``ptr``, ``sizes``, ``counts``, ``stated``; ``node``: each pair's parent; ``children``: the Hg fit, with ``ptr``,
    ``sizes``, ``counts``, ``stated_runs`` and its blocks' noise ``variances``; ``bottom``: each pair's child run).
    Dense runs (misplaced groups, not size errors) keep ``stated``.

    Why: the merge rule keeps ``sb (1 − 1/m)`` of a child's own variance, but where that variance is the noise of a
    small node's blocks (σ² = 200 a rank at ε = 0.1) the merge replaces the child's size by the parent's at its rank,
    whose error is bounded by the spread of the parent's sizes, not by the child's noise (housing's counties under Hg
    states at ε = 0.1: squared error cut 2–5× by the merge, statement unmoved).  The prior stops at the child's own
    resolved blocks (noise below one size²) on either side, and holds of their size only the groups their steps
    misplaced (their stated variance times their groups): a group fitted above a child's long zero run is one of the
    parent's zeros only if that run's step misplaced it, whatever the parent's number of zeros (Hawaiian's states
    under its root at ε = 0.1: with the parent's whole histogram, mean z² 0.96 → 2.5).
    """
    from cocoviz.accuracy.stated._variance_kernels import resolved_between
    from cocoviz.accuracy.stated.merged import UNIT_ERRORS

    stated = np.asarray(stated, np.float64)
    pairs = np.flatnonzero(np.maximum(sa, sb) >= UNIT_ERRORS)
    if not len(pairs):
        return stated
    n = len(children.sizes)
    lower, lower_count, upper, upper_count = resolved_between(
        np.ascontiguousarray(children.ptr, np.int64), np.ascontiguousarray(children.sizes, np.int64),
        np.ascontiguousarray(children.variances, np.float64), np.asarray(children.stated_runs * children.counts, float),
        np.empty(n, np.int64), np.empty(n), np.empty(n, np.int64), np.empty(n),
    )  # fmt: skip
    runs = np.asarray(bottom)[pairs]
    cap = hg_parent_posterior(
        parents.ptr, parents.sizes, parents.counts, parents.stated, np.asarray(node)[pairs], children.sizes[runs],
        children.variances[runs], np.rint(np.asarray(merged)[pairs]), lower[runs], upper[runs], lower_count[runs],
        upper_count[runs],
    )  # fmt: skip
    out = stated.copy()
    out[pairs] = np.minimum(stated[pairs], np.maximum(cap, VARIANCE_FLOOR))
    return out
