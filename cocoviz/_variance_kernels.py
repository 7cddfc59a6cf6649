"""Numba kernel of :mod:`cocoviz.variances` (imported lazily: ``import cocoviz`` does not load numba)."""

from __future__ import annotations

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


@numba.njit(cache=True)
def hc_size_variances(ptr, sizes, counts, scale, floor):  # pragma: no cover - compiled
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
    whose fit put all its groups at one size still states its doubt.
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
        last = size[n]
        lo[n + 1], hi[n + 1] = acc, np.inf
        size[n + 1] = last + max(last - size[n - 1] if n > 1 else last, 1.0)
        for j in range(1, n + 1):
            h = hi[j] - lo[j]
            total = 0.0
            # Runs above: P(r + δ ∈ [lo_k, hi_k)) averaged over r ∈ [lo_j, hi_j).
            widest = 1.0
            for k in range(j + 1, n + 2):
                widest = max(widest, size[k] - size[k - 1])
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
            out[r0 + j - 1] = total + floor
    return out


@numba.njit(cache=True)
def hg_step_runs(ptr, sizes, counts, noise_variance, block, out):  # pragma: no cover - compiled
    """The Hg step model per run (:func:`cocoviz.variances.hg_stated_runs`), the block rule ``block`` elsewhere.

    A size of a node is resolved when it holds at least 4σ² groups; one whose neighbouring sizes in its node are
    consecutive and resolved states 1.5σ² misplaced groups per neighbour, shared among its runs by
    ½ e^(−x/3σ²), x a rank's distance from that edge (the shares telescope: a run's is its two ends' difference).
    """
    beta = 3.0 * noise_variance
    edge = 1.5 * noise_variance
    enough = 4.0 * noise_variance
    for node in range(ptr.size - 1):
        r0, r1 = ptr[node], ptr[node + 1]
        g = r0
        has_prev = False
        prev_size = 0
        prev_n = 0.0
        while g < r1:
            e = g
            n = 0.0
            while e < r1 and sizes[e] == sizes[g]:
                n += counts[e]
                e += 1
            has_next = e < r1
            ok = n >= enough and (has_prev or has_next)
            if has_prev:
                ok = ok and sizes[g] - prev_size == 1 and prev_n >= enough
            if has_next and ok:
                f = e
                next_n = 0.0
                while f < r1 and sizes[f] == sizes[e]:
                    next_n += counts[f]
                    f += 1
                ok = sizes[e] - sizes[g] == 1 and next_n >= enough
            if ok:
                whole = -np.expm1(-n / beta)
                lo = 0.0
                for r in range(g, e):
                    hi = lo + counts[r]
                    part = -np.expm1(-counts[r] / beta)
                    misplaced = 0.0
                    if has_prev:
                        misplaced += edge * np.exp(-lo / beta) * part / whole
                    if has_next:
                        misplaced += edge * np.exp(-(n - hi) / beta) * part / whole
                    out[r] = misplaced / counts[r]
                    lo = hi
            else:
                for r in range(g, e):
                    out[r] = block[r]
            has_prev = True
            prev_size = sizes[g]
            prev_n = n
            g = e
    return out
