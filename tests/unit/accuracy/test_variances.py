"""The Hc size variances: the closed form against brute-force quadrature of its definition; the Hg rule and
the pooling per node and size against their definitions."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from cocoviz.accuracy.stated.topdown import fitted_stated
from cocoviz.accuracy.stated.variances import (
    hc_node_variances,
    hc_size_variances,
    hc_step_variances,
    hg_merged_stated,
    hg_parent_posterior,
    hg_size_variances,
    hg_stated_runs,
    pool_by_size,
    short_side_walk,
)
from cocoviz.consistency import LevelEstimates
from cocoviz.methods.estimators import fit_hc, fit_hg


def stated_of(method: str, est, epsilon: float, p: int = 2, bound: int | None = None) -> np.ndarray:
    """The stated variances of one node's fit, as a release computes them on request (``stated=True``)."""
    level = LevelEstimates.from_nodes([est])
    bounds = None if bound is None else np.array([bound])
    return fitted_stated(method, level, epsilon=epsilon, p=p, bounds=bounds).stated


def brute(sizes, counts, b):
    """Σ_k P(r + ½ + δ ∈ run k) (s_k − s_j)², averaged over the whole ranks r of run j, term by term; δ ~ Laplace of
    scale b/√L, L the widest gap of sizes between run j and run k (1 for consecutive sizes); the virtual run above at
    the last size plus the last gap (at least 1)."""
    last = sizes[-1] + max(sizes[-1] - sizes[-2] if len(sizes) > 1 else sizes[-1], 1)
    return brute_with_top(sizes, counts, b, last, last - sizes[-1])


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(1, 40)), min_size=1, max_size=6, unique_by=lambda t: t[0]),
    st.sampled_from([0.1, 0.5, 1.0, 3.0]),
)
def test_closed_form_matches_quadrature(runs, epsilon):
    runs = sorted(runs)
    sizes = np.array([s for s, _ in runs])
    counts = np.array([c for _, c in runs])
    got = hc_size_variances(np.array([0, len(sizes)]), sizes, counts, 1 / epsilon)  # the rank shift alone
    np.testing.assert_allclose(got, brute(sizes, counts, 1 / epsilon), rtol=1e-9, atol=1e-12)


def test_hc_fit_states_the_size_variance_and_weighs_by_the_count_rule():
    # Ĥc = [2, 2, 4, 5, 5] -> Ĥ = [2, 0, 2, 1, 0]: runs (0, 2), (2, 2), (3, 1).
    est = fit_hc(np.array([2, 2, 4, 5]), groups=5, epsilon=1.0, p=1)
    np.testing.assert_array_equal(est.sizes, [0, 2, 3])
    np.testing.assert_allclose(est.variances, 4.0 / np.array([2, 2, 1]))  # the paper's model: the weights
    stated = stated_of("Hc", est, 1.0, 1, 4)  # K = 4
    np.testing.assert_array_equal(stated, hc_node_variances(est.sizes, est.counts, 1.0, 4))
    assert (stated > 0).all()


@pytest.mark.slow
@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(1e-6, 400.0), min_size=1, max_size=20))
def test_hg_rule_is_rounding_or_step_whichever_is_larger(s2):
    """``max(E[rint(e)²], min(1.5 s³, s²))``, e ~ N(0, s²): the rounding term by simulation-free quadrature."""
    s2 = np.array(s2)
    got = hg_size_variances(s2, floor=0.0)
    x = np.linspace(-0.5, 0.5, 2001)[:, None]
    k = np.arange(-400, 401)[None, :]
    rounding = []
    for v in s2:  # E[rint(e)²] = Σ_k k² P(e ∈ [k − ½, k + ½)), each cell integrated on a fine grid
        density = np.exp(-((k + x) ** 2) / (2 * v)) / np.sqrt(2 * np.pi * v)
        rounding.append(float((np.trapezoid(density, x[:, 0], axis=0) * k[0] ** 2).sum()))
    want = np.maximum(rounding, np.minimum(1.5 * s2**1.5, s2))
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-9)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3), st.integers(1, 9), st.floats(0, 10)), max_size=30))
def test_pooling_states_each_node_and_size_the_mean_of_its_runs(rows):
    rows = sorted(rows, key=lambda r: (r[0], r[1]))
    node = np.array([r[0] for r in rows], np.int64)
    sizes = np.array([r[1] for r in rows], np.int64)
    counts = np.array([r[2] for r in rows], np.int64)
    stated = np.array([r[3] for r in rows], np.float64)
    ptr = np.searchsorted(node, np.arange(4))
    got = pool_by_size(ptr, sizes, counts, stated)
    for n, s in set(zip(node.tolist(), sizes.tolist())):
        mine = (node == n) & (sizes == s)
        np.testing.assert_allclose(got[mine], (stated[mine] * counts[mine]).sum() / counts[mine].sum())


@pytest.mark.statistical
def test_hc_stated_variance_is_calibrated_per_size_class_on_a_long_tailed_node():
    """Simulated: the stated variance of dense sizes, of a sparse middle and of lone outliers each within 4x of
    the fit's realised mean squared size error.  The rule before whole ranks and gap-wide blocks stated the
    outliers' error 10³–10⁶ times too large (a group at size 60 'off by' the whole gap to 300)."""
    truth = {1: 400, 2: 300, 3: 150, 4: 80, 5: 40, 6: 15, 9: 4, 14: 2, 60: 1, 300: 1}
    h = np.zeros(400, np.int64)
    for size, count in truth.items():
        h[size] = count
    groups, cumulative = int(h.sum()), np.cumsum(h)
    true_sizes = np.repeat(np.arange(len(h)), h)
    classes = {"dense": (1, 6), "middle": (7, 20), "outliers": (21, 400)}
    sums = {c: [0.0, 0.0] for c in classes}
    rng = np.random.default_rng(7)
    q = 1 - np.exp(-1.0)  # double-geometric noise of ε = 1, as Hc is measured
    for _ in range(300):
        noisy = cumulative + rng.geometric(q, len(h)) - rng.geometric(q, len(h))
        est = fit_hc(noisy, groups=groups, epsilon=1.0, p=1)
        released = np.repeat(est.sizes, est.counts)
        stated = np.repeat(stated_of("Hc", est, 1.0, 1, len(noisy)), est.counts)
        for name, (a, b) in classes.items():
            mine = (released >= a) & (released <= b)
            sums[name][0] += ((released[mine] - true_sizes[mine]) ** 2).sum()
            sums[name][1] += stated[mine].sum()
    for name, (error, stated) in sums.items():
        assert 0.25 <= error / stated <= 4, (name, error, stated)


def test_hg_step_model_states_resolved_steps_and_keeps_the_block_rule_elsewhere():
    """σ² = 2 (ε = 1): a size of at least 4σ² = 8 groups is resolved; each resolved step (consecutive sizes, both
    resolved, one node) states 1.5σ² = 3 misplaced groups on each side.  Node 0: sizes 1, 2 (two runs), 3, then a
    gap to 5, 6; node 1: sizes 7, 8 (no step across nodes).  The block rule alone states a lone long block by its
    length only (size 1: 0.0042, a seventh of this)."""
    ptr = np.array([0, 6, 8])
    sizes = np.array([1, 2, 2, 3, 5, 6, 7, 8])
    counts = np.array([100, 150, 50, 50, 40, 100, 100, 100])
    lengths = np.array([100, 150, 10, 50, 40, 100, 100, 100])  # size 2's short block: 5 blocks of 10
    variances = 2.0 / lengths
    got = hg_stated_runs(ptr, sizes, counts, variances, 2.0, floor=0.0)
    pooled = pool_by_size(ptr, sizes, counts, got)
    block = hg_size_variances(variances, floor=0.0)
    np.testing.assert_allclose(pooled[[0, 1, 5, 6, 7]], [3 / 100, 6 / 200, 3 / 100, 3 / 100, 3 / 100])
    # Within a size, by position: each edge's 3 groups sit at the ranks next to it, e^(−x/3σ²) deep (size 2's
    # second run, the 50 groups at its upper edge, states about 3/50; its first, 150 at the lower edge, 3/150).
    cell = np.exp(-np.arange(200) / 6.0) - np.exp(-np.arange(1, 201) / 6.0)
    edges = 3 * (cell + cell[::-1]) / cell.sum()
    np.testing.assert_allclose(got[1:3] * counts[1:3], [edges[:150].sum(), edges[150:].sum()])
    # Beside a gap (3 | 5) and on the far side of it: the block rule.
    np.testing.assert_array_equal(got[[3, 4]], block[[3, 4]])
    assert pooled[0] > 7 * block[0]
    # An L1 fit (noise_variance None): the block rule everywhere.
    np.testing.assert_array_equal(hg_stated_runs(ptr, sizes, counts, variances, None, floor=0.0), block)


@pytest.mark.statistical
def test_hg_step_model_is_calibrated_on_a_staircase():
    """Simulated, 100 trials of a node of sizes 1–4 by the thousand at ε = 0.5 (double-geometric noise, as Hg is
    measured): mean z² over its groups 0.81 (the block rule: 0.65, out of 0.7–1.5: its short blocks' rounding terms
    at the steps count each misplaced group about twice)."""
    truth = np.repeat([1, 2, 3, 4], [3000, 4000, 2000, 1500])
    rng = np.random.default_rng(3)
    q = 1 - np.exp(-0.5)
    z2 = []
    for _ in range(100):
        noisy = truth + rng.geometric(q, truth.size) - rng.geometric(q, truth.size)
        est = fit_hg(noisy, groups=truth.size, epsilon=0.5)
        stated = np.repeat(stated_of("Hg", est, 0.5), est.counts)
        z2.append(((np.repeat(est.sizes, est.counts) - truth) ** 2 / stated).mean())
    assert 0.7 <= np.mean(z2) <= 1.5, np.mean(z2)


@pytest.mark.statistical
@pytest.mark.slow
def test_short_side_walk_against_a_monte_carlo_of_the_walk():
    """E[D⁺], P(D⁺ > 0) and E[D⁻] of the argmin of the two-sided walk (drift ½ per rank away from the step, Gaussian
    noise of variance σ² per rank, the left side long, the right side L ranks) against 10,000 seeded walks each, for
    short, middling and long right sides (L/σ² = 1, 5, 40): within 5% (D⁺, D⁻) and 0.03 (P; measured
    0.01–0.024 below: the discrete walk's minimum sits at the step itself now and then, the Brownian one never).
    At σ² = 20 the walk's scale is 4σ² = 80 ranks, close to the Brownian walk the formula integrates."""
    rng = np.random.default_rng(11)
    sigma2, left, walks = 20.0, 1_200, 10_000
    for length in (20, 100, 800):
        dplus, dminus, wins = 0.0, 0.0, 0
        for _ in range(walks // 2_000):
            right = np.cumsum(rng.normal(0.5, np.sqrt(sigma2), (2_000, length)), axis=1)
            back = np.cumsum(rng.normal(0.5, np.sqrt(sigma2), (2_000, left)), axis=1)
            walk = np.concatenate([back[:, ::-1], np.zeros((2_000, 1)), right], axis=1)
            argmin = walk.argmin(axis=1) - left
            dplus += np.maximum(argmin, 0).sum()
            dminus += np.maximum(-argmin, 0).sum()
            wins += (argmin > 0).sum()
        d, p, e = short_side_walk(np.array([length / sigma2]))
        assert abs(d[0] * sigma2 / (dplus / walks) - 1) < 0.05, (length, d[0] * sigma2, dplus / walks)
        assert abs(p[0] - wins / walks) < 0.03, (length, p[0], wins / walks)
        assert abs(e[0] * sigma2 / (dminus / walks) - 1) < 0.05, (length, e[0] * sigma2, dminus / walks)
    # The limits: a long right side gives the two-sided walk's 1.5σ² and ½; a short one almost never wins, and the
    # left side's argmin is then its own, 2σ² deep on average.
    d, p, e = short_side_walk(np.array([1e4, 1e-6]))
    np.testing.assert_allclose([d[0], p[0], e[0], e[1]], [1.5, 0.5, 1.5, 2.0], rtol=1e-4)
    assert d[1] < 1e-6 and p[1] < 1e-3


def hawaiian_state(zeros: int) -> np.ndarray:
    """A node shaped like a Hawaiian state: a run of zeros and 150 groups above it, 37% ones, a tail to 30."""
    sizes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 18, 22, 30]
    counts = [55, 23, 15, 11, 7, 5, 4, 4, 3, 3, 2, 5, 5, 4, 4]
    return np.concatenate([np.zeros(zeros, np.int64), np.repeat(sizes, counts)])


@pytest.mark.slow
def test_a_zero_run_beside_a_short_side_states_what_the_short_walk_misplaces():
    """A run of 2,000 zeros with 150 groups above it at ε = 0.1 (σ² = 200: the zeros are resolved, 4σ² = 800, and
    nothing above them is): 3,000 seeded trials (double-geometric noise, as Hg is measured).  The zero run states
    the short walk's E[D⁺] (cocoviz.accuracy.stated.variances.short_side_walk at L = the fitted groups above it;
    beside a gap, the
    swallowed fixed point): 115 groups' worth a trial against 28 of squared error realised, mean z² 1.15 over the
    zeros and 1.33 over the node (the block rule before it: 485 stated, 0.08 and 0.46; this test fails on it).
    Heavy-tailed: the zero run errs most in the trials where the walk swallows most of the short side, which are the
    trials whose fitted short side is shortest (per seed, 500 trials of a 15,000-zero node: 0.90–1.99)."""
    truth = hawaiian_state(2_000)
    rng = np.random.default_rng(1)
    q = 1 - np.exp(-0.1)
    z2, zeros = [], [0.0, 0]
    for _ in range(3_000):
        noisy = truth + rng.geometric(q, truth.size) - rng.geometric(q, truth.size)
        est = fit_hg(noisy, groups=truth.size, epsilon=0.1)
        released = np.repeat(est.sizes, est.counts)
        z = (released - truth) ** 2 / np.repeat(stated_of("Hg", est, 0.1), est.counts)
        z2.append(z.mean())
        zeros[0] += z[released == 0].sum()
        zeros[1] += (released == 0).sum()
    assert 0.7 <= np.mean(z2) <= 1.5, np.mean(z2)
    assert 0.7 <= zeros[0] / zeros[1] <= 1.5, zeros[0] / zeros[1]


# --- Small Hg nodes: an Hg child's merged statement within its parent's sizes (docs/merge-variances.md) ---


def test_hg_parent_posterior_against_a_monte_carlo_of_its_model():
    """The closed form (cocoviz.accuracy.stated.variances.hg_parent_posterior) against its definition drawn: true
    sizes from the
    parent's histogram, a block's noise N(0, s²) added, rounded and clipped at 0 as the Hg fit does; per fitted size,
    the mean of (merged − truth)² over the draws that gave it (400,000 draws, fitted sizes seen 2,000 times or more).
    Noise small, comparable and large against the spread."""
    sizes, counts = np.array([1, 2, 3, 5, 9]), np.array([400, 300, 150, 100, 50])
    ptr = np.array([0, len(sizes)])
    rng = np.random.default_rng(7)
    truth = rng.choice(sizes, size=400_000, p=counts / counts.sum())
    for noise in (0.3, 4.0, 100.0):
        fitted = np.rint(np.maximum(truth + rng.normal(0.0, np.sqrt(noise), truth.size), 0.0)).astype(np.int64)
        for value in np.unique(fitted):
            seen = truth[fitted == value]
            if seen.size < 2_000:
                continue
            merged = np.array([2.0, float(value)])
            stated = hg_parent_posterior(
                ptr, sizes, counts, np.zeros(len(sizes)), np.zeros(2, np.int64), np.array([value, value]),
                np.array([noise, noise]), merged,
            )  # fmt: skip
            for m, got in zip(merged, stated):
                err = (m - seen) ** 2  # within four standard errors of the draws' mean
                tolerance = 4 * err.std() / np.sqrt(err.size) + 1e-3 * (err.mean() + 1e-3)
                assert abs(got - err.mean()) <= tolerance, (noise, value, m, got, err.mean())
    # The parent's own statement of each size adds in, weighted by the same posterior; a size no run can give: ∞.
    with_stated = hg_parent_posterior(ptr, sizes, counts, np.full(5, 0.5), np.array([0]), np.array([3]),
                                      np.array([4.0]), np.array([3.0]))  # fmt: skip
    without = hg_parent_posterior(ptr, sizes, counts, np.zeros(5), np.array([0]), np.array([3]), np.array([4.0]),
                                  np.array([3.0]))  # fmt: skip
    np.testing.assert_allclose(with_stated - without, 0.5)
    far = hg_parent_posterior(ptr, sizes, counts, np.zeros(5), np.array([0]), np.array([60]), np.array([1.0]),
                              np.array([9.0]))  # fmt: skip
    assert np.isinf(far[0])


def test_hg_merged_stated_caps_size_errors_only():
    """Dense runs (both statements below 1 size²) keep the merge rule's; size errors take the smaller of the two; the
    prior stops at the child's resolved blocks (block noise below 1 size²) on either side, and holds of their size only
    the groups they misplaced (here none: the child's block at 1 states 0)."""
    parents = SimpleNamespace(ptr=np.array([0, 3]), sizes=np.array([0, 1, 2]), counts=np.array([9_000, 300, 100]),
                              stated=np.zeros(3))  # fmt: skip
    noisy = SimpleNamespace(ptr=np.array([0, 3]), sizes=np.array([1, 2, 3]), counts=np.array([400, 1, 1]),
                            variances=np.array([0.5, 1e4, 1e4]), stated_runs=np.array([0.0, 60.0, 60.0]))  # fmt: skip
    stated = np.array([0.2, 50.0, 0.1])
    out = hg_merged_stated(stated, np.full(3, 0.01), np.array([0.5, 60.0, 60.0]), parents, np.zeros(3, np.int64),
                           noisy, np.arange(3), np.array([1.0, 1.0, 0.0]))  # fmt: skip
    assert out[0] == 0.2  # dense: unchanged
    assert abs(out[1] - 1.0) < 1e-9  # noise above the child's exact block at 1: of the parent's sizes, only 2
    assert out[2] == 0.1  # the merge rule's statement is already the smaller (the posterior's: (0 − 2)² = 4)
    # Without the child's resolved block at 1 the parent's 9,000 zeros would be the prior: the same group would state
    # less than the ones and twos it is.
    loose = SimpleNamespace(ptr=noisy.ptr, sizes=noisy.sizes, counts=noisy.counts, variances=np.array([5.0, 1e4, 1e4]),
                            stated_runs=noisy.stated_runs)  # fmt: skip
    out = hg_merged_stated(stated, np.full(3, 0.01), np.full(3, 60.0), parents, np.zeros(3, np.int64), loose,
                           np.arange(3), np.array([0.0, 0.0, 2.0]))  # fmt: skip
    assert out[1] < 0.1


def test_a_group_above_a_childs_zero_run_is_a_parents_zero_only_if_the_run_misplaced_it():
    """Hawaiian's shape: a parent of 9,000 zeros and 300 ones; a child with a long zero run (block noise 0.01) whose
    steps misplaced 5 groups (stated 0.005 over 1,000), and a noisy run at 1 above it, merged to 0.  Of the parent's
    zeros the prior holds only those 5, so the group states about (0 − 1)² = 1, not the 0.03 of the parent's whole
    histogram (under which the child's noisy groups would be zeros 30 to 1)."""
    parents = SimpleNamespace(ptr=np.array([0, 2]), sizes=np.array([0, 1]), counts=np.array([9_000, 300]),
                              stated=np.zeros(2))  # fmt: skip
    child = SimpleNamespace(ptr=np.array([0, 2]), sizes=np.array([0, 1]), counts=np.array([1_000, 2]),
                            variances=np.array([0.01, 100.0]), stated_runs=np.array([0.005, 100.0]))  # fmt: skip
    out = hg_merged_stated(np.array([50.0]), np.array([0.01]), np.array([100.0]), parents, np.array([0]), child,
                           np.array([1]), np.array([0.0]))  # fmt: skip
    noise = 10.0
    # P(rint(max(0, u + e)) = 1), e ~ N(0, 100), for u = 0 and u = 1
    zeros = 5 * (norm.cdf(1.5 / noise) - norm.cdf(0.5 / noise))
    ones = 300 * (norm.cdf(0.5 / noise) - norm.cdf(-0.5 / noise))
    np.testing.assert_allclose(out, ones / (zeros + ones), rtol=1e-9)
    whole = hg_parent_posterior(parents.ptr, parents.sizes, parents.counts, parents.stated, np.array([0]),
                                np.array([1]), np.array([100.0]), np.array([0.0]))  # fmt: skip
    assert whole[0] < 0.05


# --- Small Hc nodes (branch hcsmall): the box [0, K] bounds the rank-shift rule's run above --------------------------


def brute_bounded(sizes, counts, b, bound):
    """:func:`brute` with the box: a node of one run states the larger of the stand-in since stop 31 (capped at K)
    and s + (K − s)/√3 reached across the K − s cells of the fit's flat block (docs/merge-variances.md, "Small Hc
    nodes")."""
    top = sizes[-1] + max(sizes[-1] - sizes[-2] if len(sizes) > 1 else sizes[-1], 1)
    if len(sizes) == 1 and sizes[0] < bound < top:
        top = bound
    out = brute_with_top(sizes, counts, b, top, max(top - sizes[-1], 1))
    if len(sizes) == 1 and sizes[0] < bound:
        box = brute_with_top(sizes, counts, b, sizes[0] + (bound - sizes[0]) / np.sqrt(3), bound - sizes[0])
        out = np.maximum(out, box)
    return out


def brute_with_top(sizes, counts, b, top, top_gap):
    """:func:`brute`'s sum with the virtual run above at size ``top``, reached across a gap of ``top_gap``."""
    hi = np.cumsum(counts).astype(float)
    lo = hi - counts
    s = np.concatenate([[0], sizes, [top]]).astype(float)
    gaps = np.append(np.diff(s[:-1]), top_gap)  # gaps[i]: between s[i] and s[i + 1]
    edges = np.concatenate([[-np.inf], lo, [hi[-1], np.inf]])

    def cdf(x, scale):
        return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / scale), 1 - 0.5 * np.exp(-np.maximum(x, 0) / scale))

    out = []
    for j in range(1, len(sizes) + 1):
        r = lo[j - 1] + np.arange(counts[j - 1]) + 0.5
        total = 0.0
        for k in range(len(s)):
            if k == j:
                continue
            scale = b / np.sqrt(max(gaps[min(j, k) : max(j, k)].max(), 1.0))
            p = cdf(edges[k + 1] - r, scale) - cdf(edges[k] - r, scale)
            total += p.mean() * (s[k] - s[j]) ** 2
        out.append(total)
    return np.array(out)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 12), st.integers(1, 6)), min_size=1, max_size=4, unique_by=lambda t: t[0]),
    st.sampled_from([0.1, 0.5, 1.0]),
    st.integers(0, 16),
)
def test_bounded_closed_form_matches_quadrature(runs, epsilon, extra):
    runs = sorted(runs)
    sizes = np.array([s for s, _ in runs])
    counts = np.array([c for _, c in runs])
    bound = int(sizes[-1]) + extra  # K is at least the largest fitted size
    got = hc_size_variances(np.array([0, len(sizes)]), sizes, counts, 1 / epsilon, 0.0, bound)
    np.testing.assert_allclose(got, brute_bounded(sizes, counts, 1 / epsilon, bound), rtol=1e-9, atol=1e-12)


def test_k_moves_no_rank_shift_of_a_node_of_many_runs():
    """A node of many runs: its rank shift is the stand-in's since stop 31, whatever K (even one at K)."""
    sizes, counts, ptr = np.array([0, 1, 2, 5, 40]), np.array([500, 80, 40, 6, 1]), np.array([0, 5])
    for epsilon in (0.1, 1.0):
        free = hc_size_variances(ptr, sizes, counts, 1 / epsilon)
        for bound in (40, 100_000):
            np.testing.assert_array_equal(hc_size_variances(ptr, sizes, counts, 1 / epsilon, 0.0, bound), free)


def small_node_z2(truth: np.ndarray, bound: int, epsilon: float, trials: int, seed: int) -> float:
    """Mean z² of an Hc fit's stated variance over seeded trials (double-geometric noise, as Hc is measured), groups
    paired by rank, truth sorted."""
    h = np.bincount(truth, minlength=bound + 1)
    cumulative = np.cumsum(h)[:-1]
    rng = np.random.default_rng(seed)
    q = 1 - np.exp(-epsilon)
    z2 = 0.0
    for _ in range(trials):
        noisy = cumulative + rng.geometric(q, bound) - rng.geometric(q, bound)
        est = fit_hc(noisy, groups=truth.size, epsilon=epsilon, p=1)
        released = np.repeat(est.sizes, est.counts)
        z2 += ((released - truth) ** 2 / np.repeat(stated_of("Hc", est, epsilon, 1, bound), est.counts)).mean()
    return z2 / trials


def test_the_toy_root_under_dominating_noise_states_what_its_fit_misses():
    """The slides' toy (sizes 1, 1, 2, 4; K = 10) at ε = 0.1: noise of scale 10 over four groups, so the fit mostly
    puts all four at one size.  3,000 seeded trials: mean z² 0.79 (1.81 with the stand-in above a lone run of size s
    at 2s, at least 1: a fit of four zeros, realised 5.5, stated 0.41; this test fails on it)."""
    z2 = small_node_z2(np.array([1, 1, 2, 4]), 10, 0.1, 3_000, 3)
    assert 0.7 <= z2 <= 1.5, z2


def test_the_toy_regions_under_dominating_noise_state_what_their_fits_miss():
    """The toy's two regions (sizes 1, 4 and 1, 2; K = 10) at ε = 0.1 and ε = 1, 3,000 seeded trials each: mean z²
    0.70 and 0.73 at ε = 0.1 (2.77 and 1.23 before: this test fails on it), 0.96 and 0.81 at ε = 1 (1.68, 1.17)."""
    for epsilon in (0.1, 1.0):
        z2 = np.mean([small_node_z2(np.array(t), 10, epsilon, 3_000, 5) for t in ([1, 4], [1, 2])])
        assert 0.7 <= z2 <= 1.5, (epsilon, z2)


def test_the_step_inside_a_gap_matches_a_simulated_walk():
    """A lone group beside long gaps at ε = 1: its step is the argmin of a two-sided walk, ±1 a cell, −1 with
    probability p = α/(1 + α) on each side (α = e^−1), simulated (20,000 seeded walks of 400 cells a side) against
    the closed form.  A run's top groups beside a gap: the same walk, drifting faster with depth."""
    got = hc_step_variances(np.array([0, 3]), np.array([0, 300, 3000]), np.array([400, 1, 1]), 1.0, 100_000)
    alpha = np.exp(-1.0)
    p = alpha / (1 + alpha)
    rng = np.random.default_rng(0)
    walks, cells = 20_000, 400
    sides = np.cumsum(np.where(rng.random((2, walks, cells)) < p, -1, 1), axis=2)
    depth = np.minimum(sides.min(axis=2), 0)
    at = np.where(depth < 0, np.argmax(sides == depth[..., None], axis=2) + 1, 0)  # first cell at the minimum
    coin = rng.random(walks) < 0.5
    d = np.where(depth[0] < depth[1], at[0], np.where(depth[1] < depth[0], at[1], np.where(coin, at[0], at[1])))
    assert abs(got[1] / np.mean(d.astype(float) ** 2) - 1) < 0.05, (got[1], np.mean(d.astype(float) ** 2))
    assert 0.01 < got[0] < 0.05  # the zero run's top groups step into the gap above: about 19/400 at most
    consecutive = hc_step_variances(np.array([0, 2]), np.array([0, 1]), np.array([1000, 1000]), 1.0, 2)
    np.testing.assert_array_equal(consecutive, [0.0, 0.0])  # no gap to step into: the rank shift's alone


def test_a_small_county_with_a_long_zero_run_and_lone_groups_states_its_errors():
    """A county like white's at ε = 1 (K = 5,000 here, for speed): 380 zeros, 35 groups of sizes 1–40 and three lone
    groups at 300, 1,073 and 3,841.  1,000 seeded fits: mean z² 0.91.  Before the step inside a gap the lone groups
    stated about 0 (3.7 on average, against a realised 28) and the node's mean z² was 2,515 (this test fails on it):
    the rank shift moves a group across its gap whole or not at all, and a lone group's gap is too wide to cross."""
    truth = np.repeat([0, 1, 2, 3, 5, 8, 13, 20, 40, 300, 1073, 3841], [380, 10, 8, 6, 4, 3, 2, 1, 1, 1, 1, 1])
    z2 = small_node_z2(truth, 5_000, 1.0, 1_000, 6)
    assert 0.7 <= z2 <= 1.5, z2
