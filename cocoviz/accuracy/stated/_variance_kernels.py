"""Numba kernel of :mod:`cocoviz.accuracy.stated.variances` (imported lazily: ``import cocoviz`` does not load
numba)."""

from __future__ import annotations

import math

import numba
import numpy as np

#: Ranks farther than this many Laplace scales (of the widest gap crossed) contribute less than e^-40 of their gap².
WINDOW = 40.0


@numba.njit(cache=True, inline="always")
def _tails(x, c, b):  # pragma: no cover - compiled
    """Σ P(δ > x + i) over i = 0 … c − 1, for x > 0 (Laplace of scale b): a geometric series; 0 at infinity."""
    if x == np.inf:
        return 0.0
    return 0.5 * np.exp(-x / b) * np.expm1(-c / b) / np.expm1(-1.0 / b)


@numba.njit(cache=True, inline="always")
def _above(last, before, bound):  # pragma: no cover - compiled
    """The virtual run above a node's last run (size ``last``; ``before`` the size under it, −1 for a node of one
    run): its size and the gap a shift crosses to reach it: the last size plus the last gap (plus its size for one
    run; at least 1), capped at K (``bound``) for a node of one run below K.

    Not capped for a node of many runs, though no size exceeds K: a fitted run at or near K of a few groups is often
    the fit's own error (cells near K whose noise pulled the fit under G), and capped it stated 0.61 where the
    stand-in past K stated 1.23 (tests/test_released_stated.py's regions, K = 8), under the merge's threshold of size
    errors, whose released root then stated 10⁻¹² for the group (docs/merge-variances.md, "Small Hc nodes").
    """
    top = last + max(last - before if before >= 0.0 else last, 1.0)
    if before < 0.0 and last < bound < top:
        top = bound
    return top, max(top - last, 1.0)


@numba.njit(cache=True, inline="always")
def _box_above(last, bound):  # pragma: no cover - compiled
    """A node of one run (size ``last``), which has no gap to repeat, against the box: its true sizes above lie in
    (last, K], stood in for by their uniform's root mean square distance last + (K − last)/√3, reached across the
    fit's flat block of K − last cells (the fitted Hc is G from ``last`` to K − 1: scale b/√(K − last))."""
    if bound == np.inf or last >= bound:
        return last, 1.0
    return last + (bound - last) / np.sqrt(3.0), max(bound - last, 1.0)


@numba.njit(cache=True)
def _run_total(j, n, lo, hi, size, top_gap, b):  # pragma: no cover - compiled
    """Σ_k P(r + ½ + δ ∈ run k) (s_k − s_j)² averaged over the ranks of run j (1 … n; 0 and n + 1 virtual)."""
    h = hi[j] - lo[j]
    total = 0.0
    # Runs above: P(r + δ ∈ [lo_k, hi_k)) averaged over r ∈ [lo_j, hi_j).
    widest = 1.0
    for k in range(j + 1, n + 2):
        widest = max(widest, size[k] - size[k - 1] if k <= n else top_gap)
        bk = b / np.sqrt(widest)  # the fit's error over the widest gap crossed on the way to run k
        # Farther runs are more ranks away and behind a gap at least as wide: none contributes more.
        if lo[k] - hi[j] > WINDOW * bk:
            break
        p = (_tails(lo[k] - hi[j] + 0.5, h, bk) - _tails(hi[k] - hi[j] + 0.5, h, bk)) / h
        d = size[k] - size[j]
        total += max(p, 0.0) * d * d
    widest = 1.0
    for k in range(j - 1, -1, -1):
        widest = max(widest, size[k + 1] - size[k])
        bk = b / np.sqrt(widest)  # the fit's error over the widest gap crossed on the way to run k
        if lo[j] - hi[k] > WINDOW * bk:
            break
        p = (_tails(lo[j] - hi[k] + 0.5, h, bk) - _tails(lo[j] - lo[k] + 0.5, h, bk)) / h
        d = size[k] - size[j]
        total += max(p, 0.0) * d * d
    return total


@numba.njit(cache=True)
def hc_size_variances(ptr, sizes, counts, scale, floor, bounds):  # pragma: no cover - compiled
    """Per run, the plug-in mean squared size error under a rank shift of Laplace noise.

    A group lands in run k only if the fitted cumulative misses its rank over every gap of sizes between its run
    and run k.  Over a gap of L sizes the fit is flat, one isotonic block averaging the noise of L cells, so its
    error has the scale ``scale / √L`` (the Laplace of the block mean's variance, 2 scale²/L); the widest gap
    crossed sets the shift's scale.  Consecutive sizes (L = 1) keep ``scale``.  Ranks are whole: the group of
    rank r sits at r + ½ and moves when the shift carries that centre across a run's edge (a sum over the run's
    ranks, in closed form), not a continuum of ranks up to the edge, whose nearest points any shift, however
    small, would carry over.

    ``ptr`` delimits each node's runs (sorted by size); ``floor`` is added to every variance.
    Two virtual runs take the ranks outside ``[0, G)``: size 0 below (the smallest size there is)
    and, above, the last size plus the last gap (its size for a node of one run; at least 1), so a node
    whose fit put all its groups at one size still states its doubt.  ``bounds``: each node's K (``inf``:
    unknown); a node of one run states the larger of :func:`_above`'s stand-in and the box's (:func:`_box_above`).
    """
    out = np.empty(sizes.size, np.float64)
    b = scale
    for node in range(ptr.size - 1):
        r0, r1 = ptr[node], ptr[node + 1]
        n = r1 - r0
        if n == 0:
            continue
        lo = np.empty(n + 2, np.float64)
        hi = np.empty(n + 2, np.float64)
        size = np.empty(n + 2, np.float64)
        acc = 0.0
        lo[0], hi[0], size[0] = -np.inf, 0.0, 0.0
        for j in range(n):
            lo[j + 1] = acc
            acc += counts[r0 + j]
            hi[j + 1] = acc
            size[j + 1] = sizes[r0 + j]
        lo[n + 1], hi[n + 1] = acc, np.inf
        size[n + 1], top_gap = _above(size[n], size[n - 1] if n > 1 else -1.0, bounds[node])
        for j in range(1, n + 1):
            out[r0 + j - 1] = _run_total(j, n, lo, hi, size, top_gap, b) + floor
        if n == 1 and bounds[node] != np.inf:  # the box's stand-in, where it states more (a small node)
            size[2], top_gap = _box_above(size[1], bounds[node])
            out[r0] = max(out[r0], _run_total(1, 1, lo, hi, size, top_gap, b) + floor)
    return out


@numba.njit(cache=True, inline="always")
def _short_side(x, log_lo, log_step, table_d, table_p):  # pragma: no cover - compiled
    """``short_side_walk`` at ``x = L/σ²``, interpolated in log x on its table (beyond it: its limits)."""
    if x <= 0.0:
        return 0.0, 0.0
    t = (np.log(x) - log_lo) / log_step
    if t <= 0.0:
        return table_d[0] * x / np.exp(log_lo), table_p[0] * x / np.exp(log_lo)  # both vanish with L
    last = table_d.size - 1
    if t >= last:
        return table_d[last], table_p[last]
    i = int(t)
    f = t - i
    return table_d[i] + f * (table_d[i + 1] - table_d[i]), table_p[i] + f * (table_p[i + 1] - table_p[i])


@numba.njit(cache=True, inline="always")
def _edge_share(total, depth, count, size, beta):  # pragma: no cover - compiled
    """Of ``total`` misplaced groups spread as e^(−x/β) from an edge over a size of ``size`` groups, those of the run
    of ``count`` groups starting ``depth`` groups in (the shares telescope: the difference at the run's two ends)."""
    if total <= 0.0:
        return 0.0
    return total * np.exp(-depth / beta) * -np.expm1(-count / beta) / -np.expm1(-size / beta)


@numba.njit(cache=True)
def hg_step_runs(
    ptr, sizes, counts, noise_variance, block, out, log_lo, log_step, table_d, table_p
):  # pragma: no cover
    """The Hg step model per run (:func:`cocoviz.accuracy.stated.variances.hg_stated_runs`), the block rule ``block``
    elsewhere.

    A size of a node is resolved when it holds at least 4σ² groups; one whose neighbouring sizes in its node are
    consecutive and resolved states 1.5σ² misplaced groups per neighbour, shared among its runs by
    ½ e^(−x/3σ²), x a rank's distance from that edge (the shares telescope: a run's is its two ends' difference).
    A resolved first size (a zero run) whose sizes above are all unresolved up to the node's end (the short side,
    N fitted groups) states on that edge the short walk's E[D⁺] instead (``table_d``, ``table_p``:
    :func:`cocoviz.accuracy.stated.variances.short_side_walk` on a grid of log(L/σ²) from ``log_lo`` by
    ``log_step``): at L = N
    when the next size is consecutive (the step is seen); beside a gap the walk swallowed the short side's lowest
    ranks, so it states
    E[D⁺ | D⁺ > 0] at L = N + that (a fixed point: the swallowed ranks are the short side's too).
    """
    beta = 3.0 * noise_variance
    edge = 1.5 * noise_variance
    enough = 4.0 * noise_variance
    first = np.empty(sizes.size + 1, np.int64)  # per node: its distinct sizes' first runs, values and counts
    value = np.empty(sizes.size, np.int64)
    n = np.empty(sizes.size, np.float64)
    for node in range(ptr.size - 1):
        r0, r1 = ptr[node], ptr[node + 1]
        m = 0
        for r in range(r0, r1):
            if r == r0 or sizes[r] != sizes[r - 1]:
                first[m] = r
                value[m] = sizes[r]
                n[m] = 0.0
                m += 1
            n[m - 1] += counts[r]
        first[m] = r1
        for k in range(m):
            g, e = first[k], first[k + 1]
            has_prev, has_next = k > 0, k + 1 < m
            resolved = n[k] >= enough
            prev_ok = has_prev and value[k] - value[k - 1] == 1 and n[k - 1] >= enough
            next_ok = has_next and value[k + 1] - value[k] == 1 and n[k + 1] >= enough
            ok = resolved and (has_prev or has_next) and (prev_ok or not has_prev) and (next_ok or not has_next)
            lower = edge if has_prev else 0.0
            upper = edge if has_next else 0.0
            lower_beta, upper_beta = beta, beta
            short = 0.0
            if resolved and not has_prev and has_next and n[k + 1] < enough:
                j = k + 1
                while j < m and n[j] < enough:
                    short += n[j]
                    j += 1
                if j < m:  # a resolved size above: the walk goes on past the short side, with more drift (not modelled)
                    short = 0.0
            if short > 0.0:
                d, p = _short_side(short / noise_variance, log_lo, log_step, table_d, table_p)
                if value[k + 1] - value[k] == 1:
                    upper = d * noise_variance
                    upper_beta = max(noise_variance * d / p, 1.0) if p > 0.0 else 1.0
                else:
                    length = short
                    upper = 0.0
                    for _ in range(60):
                        d, p = _short_side(length / noise_variance, log_lo, log_step, table_d, table_p)
                        upper = noise_variance * d / p if p > 0.0 else 0.0
                        if abs(short + upper - length) <= 1e-9 * (1.0 + length):
                            break
                        length = short + upper
                    upper_beta = max(upper, 1.0)
                ok = True
            if ok:
                lo = 0.0
                for r in range(g, e):
                    hi = lo + counts[r]
                    misplaced = _edge_share(lower, lo, counts[r], n[k], lower_beta)
                    misplaced += _edge_share(upper, n[k] - hi, counts[r], n[k], upper_beta)
                    out[r] = misplaced / counts[r]
                    lo = hi
            else:
                for r in range(g, e):
                    out[r] = block[r]
    return out


@numba.njit(cache=True, inline="always")
def _ladder(p):  # pragma: no cover - compiled
    """One side of the step's walk, ±1 a cell, −1 with probability ``p`` < ½: the ratio ρ = p/(1 − p) of its
    geometric depth (P(depth ≥ k) = ρ^k) and the mean and variance of the cells between its new minima."""
    q = 1.0 - p
    drift = q - p
    return p / q, 1.0 / drift, 4.0 * p * q / drift**3


@numba.njit(cache=True)
def _side(rho_a, mean_a, var_a, cells_a, end_a, rho_b, mean_b, cells_b, end_b):  # pragma: no cover - compiled
    """E[min(D, cells_a)² ; side a's minimum deeper than side b's, ties halved], D the argmin's distance.

    Side a's depth is k ≥ 1 with probability (1 − ρ_a) ρ_a^k, reached after k ladder epochs (E[T_k²] =
    k var + k² mean²).  A side that ends (``end``: the box's edge, beyond which the walk has no cells) cannot go
    deeper than its cells allow, about ``cells / mean`` ladders; a side inside the node goes on into the next run,
    where the group's error is the rank-shift rule's, so only its ``cells`` count here.  A side shorter than four
    times the walk's scale 4p(1 − p)/(1 − 2p)² (``var/mean``) counts nothing: there the walk's displacement is the
    group crossing into the next run, which the rank shift states (the two together stated the slides' toy at
    ε = 1 0.67 where the rank shift alone stated 0.91).
    """
    if cells_a < 4.0 * var_a / mean_a:
        return 0.0
    total = 0.0
    depth_b = cells_b / mean_b if end_b else np.inf
    reach_a = cells_a / mean_a
    x = rho_a
    xb = rho_b  # ρ_b^k
    k = 1
    while x > 1e-14:
        if end_a and k > reach_a:
            break
        deeper_b = xb if k <= depth_b else 0.0  # P(K_b ≥ k)
        tie = deeper_b - (xb * rho_b if k + 1 <= depth_b else 0.0)  # P(K_b = k)
        square = min(k * var_a + k * k * mean_a * mean_a, cells_a * cells_a)
        total += (1.0 - rho_a) * x * (1.0 - deeper_b + 0.5 * tie) * square
        x *= rho_a
        xb *= rho_b
        k += 1
    return total


@numba.njit(cache=True)
def hc_step_variances(ptr, sizes, counts, scale, bounds):  # pragma: no cover - compiled
    """Per run, the mean squared size error of its groups from where the fit puts their step inside a gap.

    The group of rank r takes the first size whose rounded fit exceeds r, i.e. whose L1 isotonic fit reaches
    t = r + ½.  By the switching relation that is the argmin of a walk over the cells, ±1 each (the sign of y − t):
    below the run's first size the truth is its first rank lo, so a cell there pushes the step down with
    probability p = P(noise ≥ r − lo + 1) = α^(r−lo+1)/(1 + α) (discrete Laplace, α = e^(−1/b)); above, with
    P(noise ≤ r − hi) = α^(hi−r)/(1 + α).  Each side's minimum is geometric in depth and reached after a sum of
    ladder epochs (the walk with its drift reversed), so E[D²] of the argmin is a geometric series in closed form
    (ties between the sides halved).  Only the cells inside a gap count, at most the gap's empty sizes on each side
    (below the first run: its size; above the last: K − 1 − its size, none without K): farther, the group enters
    the next run, which the rank-shift rule states.  Consecutive sizes: nothing.
    """
    out = np.zeros(sizes.size, np.float64)
    alpha = np.exp(-1.0 / scale)
    window = int(WINDOW * scale) + 1  # ranks deeper inside a run move with probability below e^-40
    # Each side's walk depends on the rank's depth d from the run's edge only: tabulated once (d > window: p ≈ 0).
    rho = np.zeros(window + 2)
    mean = np.ones(window + 2)
    var = np.zeros(window + 2)
    for d in range(1, window + 2):
        rho[d], mean[d], var[d] = _ladder(alpha**d / (1.0 + alpha))
    for node in range(ptr.size - 1):
        r0, r1 = ptr[node], ptr[node + 1]
        acc = 0
        for j in range(r0, r1):
            n = counts[j]
            lo, hi = acc, acc + n
            acc = hi
            below = float(sizes[j] - sizes[j - 1] - 1) if j > r0 else float(sizes[j])
            if j + 1 < r1:
                above = float(sizes[j + 1] - sizes[j] - 1)
            elif bounds[node] == np.inf:
                above = 0.0
            else:
                above = max(bounds[node] - 1.0 - sizes[j], 0.0)
            first, last = j == r0, j + 1 == r1 and bounds[node] != np.inf  # sides that end at the box
            if (below <= 0.0 and above <= 0.0) or n == 0:
                continue
            total = 0.0
            edge = min(hi, lo + window)
            for part in range(2):  # the run's lower edge, then its upper one (its middle cannot move)
                start, stop = (lo, edge) if part == 0 else (max(edge, hi - window), hi)
                for r in range(start, stop):
                    dl, dh = min(r - lo + 1, window + 1), min(hi - r, window + 1)
                    if below > 0.0:
                        total += _side(rho[dl], mean[dl], var[dl], below, first, rho[dh], mean[dh], above, last)
                    if above > 0.0:
                        total += _side(rho[dh], mean[dh], var[dh], above, last, rho[dl], mean[dl], below, first)
            out[j] = total / n
    return out


#: :func:`hg_parent_errors`: parent sizes farther than this many noise scales from a child's fitted size carry a
#: likelihood below 10⁻¹⁵ of the nearest.
POSTERIOR_WIDTH = 8.0


@numba.njit(cache=True, inline="always")
def _normal_between(a, b):  # pragma: no cover - compiled
    """P(a < Z ≤ b) for a standard normal Z (a ≤ b, either may be infinite), from the nearer tail: no cancellation."""
    if a >= 0.0:
        return 0.5 * (math.erfc(a / math.sqrt(2.0)) - math.erfc(b / math.sqrt(2.0)))
    if b <= 0.0:
        return 0.5 * (math.erfc(-b / math.sqrt(2.0)) - math.erfc(-a / math.sqrt(2.0)))
    return 1.0 - 0.5 * (math.erfc(-a / math.sqrt(2.0)) + math.erfc(b / math.sqrt(2.0)))


@numba.njit(cache=True)
def hg_parent_errors(
    ptr, sizes, counts, stated, node, value, noise, merged, lower, lower_count, upper, upper_count, out
):  # pragma: no cover - compiled
    """Per merged pair (:func:`cocoviz.accuracy.stated.variances.hg_parent_posterior`): the posterior mean of
    ``(merged − u)² +
    stated(u)`` over the runs u of the parent ``node`` (``ptr``, ``sizes`` ascending within a node, ``counts``,
    ``stated``) with ``lower ≤ u ≤ upper``, weighted by ``count × P(rint(max(0, u + e)) = value)``, e ~ N(0,
    ``noise``), the count of a run at ``lower`` (``upper``) at most ``lower_count`` (``upper_count``); ∞ where no
    such run of the parent could have given ``value`` (or there is no noise)."""
    for i in range(value.size):
        s = math.sqrt(noise[i]) if noise[i] > 0.0 else 0.0
        lo, hi = ptr[node[i]], ptr[node[i] + 1]
        if s == 0.0 or hi == lo:
            out[i] = np.inf
            continue
        v = float(value[i])
        reach = 0.5 + POSTERIOR_WIDTH * s
        j = lo + np.searchsorted(sizes[lo:hi], math.ceil(v - reach)) if v > 0.0 else lo
        end = lo + np.searchsorted(sizes[lo:hi], math.floor(v + reach), side="right")
        weight, total = 0.0, 0.0
        last_u, likelihood = -1.0, 0.0
        for k in range(j, end):
            if sizes[k] < lower[i] or sizes[k] > upper[i]:
                continue
            count = counts[k]
            if sizes[k] == lower[i]:
                count = min(count, lower_count[i])
            if sizes[k] == upper[i]:
                count = min(count, upper_count[i])
            u = float(sizes[k])
            if u != last_u:  # an Hg parent holds several runs of a size (its blocks): one likelihood per size
                low = (v - 0.5 - u) / s if v > 0.0 else -np.inf  # the fit clips at 0: a run at 0 is all below ½
                likelihood, last_u = _normal_between(low, (v + 0.5 - u) / s), u
            p = count * likelihood
            weight += p
            total += p * ((merged[i] - u) ** 2 + stated[k])
        out[i] = total / weight if weight > 0.0 else np.inf
    return out


@numba.njit(cache=True)
def resolved_between(ptr, sizes, variances, misplaced, lower, lower_count, upper, upper_count):  # pragma: no cover
    """Per run of the nodes ``ptr`` (sizes ascending within a node): the size of the nearest run of a smaller size
    (``lower``; 0 if none) and of a larger size (``upper``; 2⁶² if none) whose block noise ``variances`` is below one
    size², in its node, with that run's ``misplaced`` groups (``lower_count``, ``upper_count``; ∞ if none)."""
    for node in range(ptr.size - 1):
        r0, r1 = ptr[node], ptr[node + 1]
        below, below_count, size, count = np.int64(0), np.inf, np.int64(0), np.inf
        for r in range(r0, r1):
            if r > r0 and sizes[r] != sizes[r - 1]:
                below, below_count = size, count
            lower[r], lower_count[r] = below, below_count
            if variances[r] < 1.0:
                size, count = sizes[r], misplaced[r]
        above, above_count, size, count = np.int64(1) << 62, np.inf, np.int64(1) << 62, np.inf
        for r in range(r1 - 1, r0 - 1, -1):
            if r < r1 - 1 and sizes[r] != sizes[r + 1]:
                above, above_count = size, count
            upper[r], upper_count[r] = above, above_count
            if variances[r] < 1.0:
                size, count = sizes[r], misplaced[r]
    return lower, lower_count, upper, upper_count
