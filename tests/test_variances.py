"""The Hc size variances: the closed form against brute-force quadrature of its definition."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz.estimators import fit_hc
from cocoviz.variances import VARIANCE_FLOOR, hc_node_variances


def brute(sizes, counts, b, points=4000):
    """Σ_k P(r + δ ∈ run k) (s_k − s_j)², averaged over r ∈ [lo_j, hi_j) on a fine grid; δ ~ Laplace(b)."""
    hi = np.cumsum(counts).astype(float)
    lo = hi - counts
    last = sizes[-1] + max(sizes[-1] - sizes[-2] if len(sizes) > 1 else sizes[-1], 1)
    s = np.concatenate([[0], sizes, [last]]).astype(float)
    edges = np.concatenate([[-np.inf], lo, [hi[-1], np.inf]])  # run k holds [edges[k], edges[k + 1])

    def cdf(x):
        return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / b), 1 - 0.5 * np.exp(-np.maximum(x, 0) / b))

    out = []
    for j in range(len(sizes)):
        r = lo[j] + (np.arange(points) + 0.5) / points * counts[j]
        p = cdf(edges[1:, None] - r) - cdf(edges[:-1, None] - r)
        out.append(float((p.mean(axis=1) * (s - s[j + 1]) ** 2).sum()))
    return np.array(out)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(1, 40)), min_size=1, max_size=6, unique_by=lambda t: t[0]),
    st.sampled_from([0.1, 0.5, 1.0, 3.0]),
)
def test_closed_form_matches_quadrature(runs, epsilon):
    runs = sorted(runs)
    sizes = np.array([s for s, _ in runs])
    counts = np.array([c for _, c in runs])
    got = hc_node_variances(sizes, counts, epsilon) - VARIANCE_FLOOR
    np.testing.assert_allclose(got, brute(sizes, counts, 1 / epsilon), rtol=2e-3, atol=1e-9)


def test_hc_fit_states_the_size_variance_and_weighs_by_the_count_rule():
    # Ĥc = [2, 2, 4, 5, 5] -> Ĥ = [2, 0, 2, 1, 0]: runs (0, 2), (2, 2), (3, 1).
    est = fit_hc(np.array([2, 2, 4, 5]), groups=5, epsilon=1.0, p=1)
    np.testing.assert_array_equal(est.sizes, [0, 2, 3])
    np.testing.assert_allclose(est.variances, 4.0 / np.array([2, 2, 1]))  # the paper's model: the weights
    np.testing.assert_array_equal(est.stated, hc_node_variances(est.sizes, est.counts, 1.0))
    assert (est.stated > 0).all()
