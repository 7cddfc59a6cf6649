"""Chen and Zhou's recursive mechanism as Wu's threshold: definition by brute force, exact privacy, the sampler."""

import itertools
import math

import numpy as np
import pytest

from cocoviz.errors import ParameterError
from cocoviz.methods.wu import recursive_grid, recursive_index, recursive_tau, recursive_tau_pmf
from cocoviz.methods.wu.recursive import lower_sum
from cocoviz.privacy.noise import FastSampler
from cocoviz.sums import recursive_tau as exported
from tests.support.neighbours import person_neighbours, record_neighbours

H = np.bincount([1] * 12 + [2] * 6 + [3] * 3 + [6] * 2 + [11])


def _brute_index(w: list[int], beta: float) -> int:
    """i* from the general definition: G(j) = min over subsets of size j of max_p q(P') − q(P' ∖ p), q a sum."""
    n = len(w)

    def ls(subset) -> float:
        total = sum(w[p] for p in subset)
        return max((total - (total - w[p]) for p in subset), default=0)

    g = [min(ls(s) for s in itertools.combinations(range(n), j)) for j in range(n + 1)]
    for i in range(n + 1):
        log_g = math.log(g[n - i]) if g[n - i] > 0 else -math.inf
        if log_g < beta * i:
            return i
    raise AssertionError("i = n always qualifies (G(0) = 0)")


@pytest.mark.parametrize("beta", [0.1, 0.5, 1.0])
def test_index_is_the_subset_definition(beta):
    rng = np.random.default_rng(int(beta * 10))
    for _ in range(60):
        w = rng.integers(0, 30, rng.integers(0, 8)).tolist()
        assert recursive_index(np.bincount(w, minlength=1), beta) == _brute_index(w, beta), w


def test_part_two_is_truncation():
    """min over P' ⊆ P of Σ_{P'} w + |P ∖ P'|·Δ equals Σ min(w, Δ) (Wu's Appendix A.5), by brute force."""
    rng = np.random.default_rng(3)
    for _ in range(40):
        w = rng.integers(0, 20, rng.integers(1, 7)).tolist()
        delta = float(rng.integers(0, 15))
        brute = min(
            sum(w[p] for p in keep) + (len(w) - len(keep)) * delta
            for j in range(len(w) + 1)
            for keep in itertools.combinations(range(len(w)), j)
        )
        assert lower_sum(w, delta) == brute


@pytest.mark.parametrize("relation", ["record", "person"])
@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_exact_privacy_on_every_neighbour(relation, eps):
    """The exact law of τ on D and on every D' one record (or one person) away: ratio ≤ e^ε."""
    rng = np.random.default_rng(int(eps * 10))
    params = dict(beta=0.4, shift=1.0, ceiling=40)
    worst = 0.0
    data = [H, np.array([0, 5]), np.array([0, 0, 0, 0, 0, 0, 0, 3])] + [rng.integers(0, 3, 12) for _ in range(6)]
    for h in data:
        p = recursive_tau_pmf(h, eps, **params)
        near = record_neighbours(h, 14) if relation == "record" else person_neighbours(h)
        for g in near:
            q = recursive_tau_pmf(g, eps, **params)
            keep = (p > 1e-13) & (q > 1e-13)
            assert np.array_equal(p > 1e-13, q > 1e-13)
            worst = max(worst, float(np.abs(np.log(p[keep] / q[keep])).max()))
    assert worst <= eps + 1e-9
    assert worst > 0.5 * eps  # the check can fail: the law does move with the data


def test_index_moves_by_at_most_one_between_neighbours():
    rng = np.random.default_rng(11)
    for beta in (0.05, 0.3, 1.0):
        for _ in range(40):
            h = rng.integers(0, 4, rng.integers(1, 30))
            i = recursive_index(h, beta)
            for g in itertools.chain(record_neighbours(h, len(h) + 2), person_neighbours(h)):
                assert abs(recursive_index(g, beta) - i) <= 1


def test_sampler_follows_the_exact_law():
    n, eps, params = 20_000, 1.0, dict(beta=0.4, shift=1.0, ceiling=40)
    pmf = recursive_tau_pmf(H, eps, **params)
    assert pmf.sum() == pytest.approx(1, abs=1e-12)
    grid = recursive_grid(**params)
    sampler = FastSampler(7)
    taus = [recursive_tau(H, eps, sampler, key=(0, t, 0), **params).tau for t in range(n)]
    seen = np.bincount(np.searchsorted(grid, taus), minlength=grid.size)
    se = np.sqrt(pmf * (1 - pmf) / n)
    assert np.all(np.abs(seen / n - pmf) <= 5 * se + 1e-9)


def test_empirical_privacy_on_neighbouring_data():
    """Sampled τ on D and on a D' one record away whose i* differs: the observed log-ratio stays within ε + noise."""
    n, eps, params = 20_000, 1.0, dict(beta=0.4, shift=1.0, ceiling=40)
    grid = recursive_grid(**params)
    d2 = next(g for g in record_neighbours(H, 14) if recursive_index(g, 0.4) != recursive_index(H, 0.4))
    freq = []
    for seed, h in ((1, H), (2, d2)):
        taus = [recursive_tau(h, eps, FastSampler(seed), key=(0, t, 0), **params).tau for t in range(n)]
        freq.append(np.bincount(np.searchsorted(grid, taus), minlength=grid.size) / n)
    a, b = freq
    keep = (a > 0.02) & (b > 0.02)  # cells with enough draws for a stable ratio
    assert keep.sum() >= 3
    ratio = np.abs(np.log(a[keep] / b[keep]))
    assert ratio.max() <= eps + 0.15
    assert ratio.max() > 0.3  # the data do move the law


def test_noiseless_choice_charge_and_refusals():
    choice = exported(H, 1e6, FastSampler(0), beta=0.4, ceiling=64)
    i_star = recursive_index(H, 0.4)
    assert choice.index == i_star and choice.tau == math.floor(math.exp(0.4 * i_star + 1))
    (charge,) = choice.charges
    assert (charge.sensitivity, charge.epsilon, charge.cells) == (1, 1e6, 1)
    assert "record" in charge.relation
    assert "person" in recursive_tau(H, 1.0, FastSampler(0), neighbours="person").charges[0].relation
    with pytest.raises(ParameterError, match="β"):
        recursive_tau(H, 1.0, FastSampler(0), beta=0)
    with pytest.raises(ParameterError, match="histogram"):
        recursive_tau(np.array([1, -1]), 1.0, FastSampler(0))
    with pytest.raises(ParameterError, match="neighbours"):
        recursive_tau(H, 1.0, FastSampler(0), neighbours="household")
