"""An empirical (ε, δ) audit of the Gaussian path on neighbouring toy data.

Two datasets one person apart; the plan's zCDP noise (``plan.level_noise``) drawn many times on each
one's Hg and Hc answers.  For every threshold event {X_i >= c} and {X_i <= c} of the cell that differs,
DP at the (ε, δ) the plan claims (``Budget.epsilon_delta``) needs P₁(S) <= e^ε P₀(S) + δ both ways.  We
check it with exact binomial confidence bounds (Clopper-Pearson, α = 1e-6 over all events): the real
sampler must pass, and a sampler drawing 0.5× its noise (σ halved) must be caught.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from cocoviz import Hierarchy, Plan
from cocoviz.privacy.accounting import zcdp_epsilon
from cocoviz.privacy.noise import FastSampler, GaussianNoise, SecureSampler

pytestmark = pytest.mark.statistical

ALPHA = 1e-6
DELTA = 1e-3  # an audit can only see δ well above 1/draws
DRAWS = 200_000


def bounds(hits: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson lower and upper bounds of binomial proportions, each side at ``alpha``."""
    lower = np.where(hits > 0, beta.ppf(alpha, hits, n - hits + 1), 0.0)
    upper = np.where(hits < n, beta.isf(alpha, hits + 1, n - hits), 1.0)
    return lower, upper


def violations(a: np.ndarray, b: np.ndarray, epsilon: float, delta: float) -> int:
    """Threshold events whose probability under one input surely exceeds e^ε × the other's plus δ."""
    lo, hi = int(min(a.min(), b.min())), int(max(a.max(), b.max()))
    cuts = np.arange(lo, hi + 1)
    events = []
    for x in (a, b):
        s = np.sort(x)
        above = len(s) - np.searchsorted(s, cuts, side="left")  # #{X >= c}
        below = np.searchsorted(s, cuts, side="right")  # #{X <= c}
        events.append(np.concatenate([above, below]))
    alpha = ALPHA / (4 * len(events[0]))
    (lo_a, hi_a), (lo_b, hi_b) = (bounds(e, len(a), alpha) for e in events)
    bad = (lo_a > math.exp(epsilon) * hi_b + delta) | (lo_b > math.exp(epsilon) * hi_a + delta)
    return int(bad.sum())


def neighbours():
    """The toy data and the same data with one person added to one group (size 2 -> 3)."""
    groups = pd.DataFrame({"region": list("aaabb"), "size": [1, 2, 4, 0, 2]})
    other = groups.copy()
    other.loc[1, "size"] = 3
    return (Hierarchy.from_groups(g, size="size", levels=["region"]) for g in (groups, other))


def answers(plan: Plan, tree) -> np.ndarray:
    runs = tree.runs(0)
    bound = plan.max_size if plan.level_method(0).needs_k else None
    return plan.level_method(0).query(*runs.node(0), bound)


@pytest.mark.parametrize("method", ["Hg", "Hc"])
@pytest.mark.parametrize("rho", [0.05, 0.5])
@pytest.mark.parametrize("kind", ["fast", "secure"])
def test_gaussian_path_passes_the_audit_and_half_noise_fails(method, rho, kind):
    tree, other = neighbours()
    plan = Plan.build(tree, rhos=[rho, rho], methods=[method, method], max_size=6)
    epsilon = zcdp_epsilon(plan.cost().per_level_rho()[0], DELTA)  # the root level's (ε, δ), the one audited
    a, b = answers(plan, tree), answers(plan, other)
    cell = int(np.flatnonzero(a != b)[0])
    assert np.abs(a - b).sum() == 1  # one cell, by one: Δ₂ = 1
    noise = plan.level_noise(0)
    sampler = FastSampler(seed=31) if kind == "fast" else SecureSampler()

    def draws(values: np.ndarray, noise: GaussianNoise, key: int) -> np.ndarray:
        tiled = np.tile(values, DRAWS)
        return sampler.draw(tiled, noise, (0, key, 0)).reshape(DRAWS, -1)[:, cell]

    assert violations(draws(a, noise, 0), draws(b, noise, 1), epsilon, DELTA) == 0
    half = GaussianNoise(noise.sigma2 / 4)  # 0.5× the noise: σ halved, ρ four times what is claimed
    assert violations(draws(a, half, 2), draws(b, half, 3), epsilon, DELTA) > 0
