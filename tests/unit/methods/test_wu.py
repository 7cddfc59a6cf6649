"""Wu et al.'s TruncSVT (exact law, privacy on neighbours) and GreedyH (never above dyadic, brute force)."""

import itertools

import numpy as np
import pytest

from cocoviz.errors import ParameterError
from cocoviz.methods.wu import greedy_h, strategy_error, svt_grid, trunc_svt_pmf, trunc_svt_tau
from cocoviz.methods.wu.greedy import dyadic_levels, level_rows, strategy_delta
from cocoviz.privacy.noise import FastSampler
from tests.support.neighbours import record_neighbours


# ------------------------------------------------------------ GreedyH
@pytest.mark.parametrize("neighbours", ["record", "person"])
def test_greedy_h_is_never_above_the_dyadic_strategy(neighbours):
    rng = np.random.default_rng(5)
    for J in [1, 2, 3, 5, 8, 13, 16, 24]:
        for weights in (None, np.minimum(np.arange(1, J + 1), rng.integers(1, J + 1)).astype(float)):
            w = np.tril(np.ones((J, J))) * (1.0 if weights is None else weights[None, :])
            a = greedy_h(J, weights, neighbours=neighbours)
            assert strategy_error(a, w, neighbours) <= strategy_error(dyadic_levels(J), w, neighbours) * (1 + 1e-12)
            assert a.shape == dyadic_levels(J).shape and (a >= 0).all()
            if neighbours == "record":
                assert strategy_delta(a, "record") == pytest.approx(1.0)  # level weights sum to 1


@pytest.mark.parametrize("J", [2, 3, 4])
@pytest.mark.parametrize("neighbours", ["record", "person"])
def test_greedy_h_matches_a_brute_force_search_on_tiny_j(J, neighbours):
    w = np.tril(np.ones((J, J)))
    rows = level_rows(J)
    grid = [0.0, *np.geomspace(1 / 16, 16, 33)]
    best = min(
        strategy_error(np.vstack([c * m for c, m in zip(cs, rows)]), w, neighbours)
        for cs in itertools.product(grid, repeat=len(rows))
        if cs[-1] > 0
    )
    # the grid holds the optimum here (a ratio of weights 1); the line search stops within 1e-3 on log c
    assert strategy_error(greedy_h(J, neighbours=neighbours), w, neighbours) <= best * (1 + 1e-4)


def test_strategy_error_is_the_expected_squared_error():
    # Monte Carlo: A x + Laplace(Δ/ε), weighted least squares, W x̂ − W x; E‖·‖² = 2 (Δ/ε)² tr(W (AᵀA)⁻¹ Wᵀ)
    rng = np.random.default_rng(1)
    J, eps = 5, 0.5
    a = greedy_h(J)
    w = np.tril(np.ones((J, J)))
    noise = rng.laplace(0, strategy_delta(a) / eps, (20_000, a.shape[0]))
    err = (w @ np.linalg.pinv(a) @ noise.T) ** 2
    assert err.sum(axis=0).mean() == pytest.approx(2 / eps**2 * strategy_error(a, w), rel=0.05)


def test_greedy_h_refusals():
    with pytest.raises(ParameterError, match="J must be"):
        greedy_h(0)
    with pytest.raises(ParameterError, match="weights"):
        greedy_h(3, np.ones(2))
    with pytest.raises(ParameterError, match="neighbours"):
        strategy_delta(np.eye(2), "household")


# ------------------------------------------------------------ TruncSVT
H = np.bincount([1] * 12 + [2] * 6 + [3] * 3 + [6] * 2 + [11])


def test_grid_and_noiseless_choice():
    assert svt_grid(1, 2, 64).tolist() == [1, 2, 4, 8, 16, 32, 64]
    # ε huge: the first θ_i with #(≤ θ_i) ≥ ρ n; 24 records, ρ n = 21.6: 12, 18, 21, 23 → θ = 8
    assert trunc_svt_tau(H, 1e6, FastSampler(0), rho=0.9, ceiling=64).tau == 8
    choice = trunc_svt_tau(H, 1.0, FastSampler(0), ceiling=64)
    assert [c.epsilon for c in choice.charges] == [0.5, 0.5] and sum(c.sensitivity for c in choice.charges) == 2
    with pytest.raises(ParameterError, match="ρ"):
        trunc_svt_tau(H, 1.0, FastSampler(0), rho=1.5)
    with pytest.raises(ParameterError, match="histogram"):
        trunc_svt_tau(np.array([1, -1]), 1.0, FastSampler(0))


def test_sampler_follows_the_exact_law():
    n, eps = 20_000, 1.0
    pmf = trunc_svt_pmf(H, eps, rho=0.9, ceiling=64)
    assert pmf.sum() == pytest.approx(1, abs=1e-12)
    seen = np.bincount(
        [trunc_svt_tau(H, eps, FastSampler(7), rho=0.9, ceiling=64, key=(t,)).index for t in range(n)],
        minlength=pmf.size,
    )
    se = np.sqrt(pmf * (1 - pmf) / n)
    assert np.all(np.abs(seen / n - pmf) <= 5 * se + 1e-9)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_exact_privacy_on_every_neighbour(eps):
    """The exact law of τ on D and on every D' one record away: ratio ≤ e^ε (brute force over neighbours)."""
    rng = np.random.default_rng(int(eps * 10))
    worst = 0.0
    for h in [H, rng.integers(0, 3, 9), np.array([0, 5])]:
        p = trunc_svt_pmf(h, eps, rho=0.8, ceiling=16)
        for g in record_neighbours(h, 17):
            q = trunc_svt_pmf(g, eps, rho=0.8, ceiling=16)
            keep = (p > 1e-12) & (q > 1e-12)
            worst = max(worst, float(np.abs(np.log(p[keep] / q[keep])).max()))
    assert worst <= eps + 1e-9
    assert worst > 0.2 * eps  # the check can fail: the law does move with the data
