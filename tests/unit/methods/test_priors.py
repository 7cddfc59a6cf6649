"""cocoviz.methods.priors: IDE (Tao, Bater & Machanavajjhala) — exact examples, Theorem 3.1 and refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy.optimize import linprog, minimize

from cocoviz.errors import ParameterError, PrivacyError
from cocoviz.methods.priors import ide, kl_divergence, marginal_blocks, share_buckets, simplex_l1_fit, update

# ------------------------------------------------------------------ strategies

weights = st.floats(0.0, 1.0, allow_nan=False)
positive = st.floats(0.01, 1.0, allow_nan=False)


@st.composite
def partitions(draw, min_cells: int = 2, max_cells: int = 6, prior=weights):
    """(prior, blocks, targets, z): a random partition of a small domain, feasible targets W z."""
    n = draw(st.integers(min_cells, max_cells))
    raw = draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n))
    ids = sorted({r for r in raw if r >= 0})
    blocks = [[j for j in range(n) if raw[j] == i] for i in ids]
    p = draw(st.lists(prior, min_size=n, max_size=n).filter(lambda v: sum(v) > 0.05))
    z = np.asarray(draw(st.lists(weights, min_size=n, max_size=n).filter(lambda v: sum(v) > 0.05)))
    z = z / z.sum()
    return np.asarray(p), blocks, np.array([z[b].sum() for b in blocks]), z


def block_sums(q: np.ndarray, blocks) -> np.ndarray:
    return np.array([q[b].sum() for b in blocks])


# ------------------------------------------------------------------ the exact examples


def test_definition_3_1_cases_1_and_3():
    np.testing.assert_allclose(update([0.5, 0.3, 0.2], [[0]], [0.2]), [0.2, 0.48, 0.32], atol=1e-15)


def test_definition_3_1_case_4():
    np.testing.assert_allclose(update([1, 0, 0], [[0]], [0.4]), [0.4, 0.3, 0.3], atol=1e-15)


def test_tiny_prior_masses_do_not_overflow():
    np.testing.assert_allclose(update([1.0, 5e-324], [[0], [1]], [0.5, 0.5]), [0.5, 0.5])
    np.testing.assert_allclose(update([1.0, 5e-324, 5e-324], [[0]], [0.5]), [0.5, 0.25, 0.25])


def test_definition_3_1_case_2_and_zero_targets():
    np.testing.assert_allclose(update([0.9, 0.1, 0, 0], [[0, 1], [2, 3]], [0.5, 0.5]), [0.45, 0.05, 0.25, 0.25])
    np.testing.assert_allclose(update([0.5, 0.3, 0.2], [[0, 1]], [0.0]), [0, 0, 1])


@given(
    st.lists(weights, min_size=1, max_size=8).filter(lambda v: sum(v) > 0),
    st.lists(weights, min_size=8, max_size=8).filter(lambda v: sum(v) > 0),
)
def test_identity_workload_returns_the_targets(prior, raw):
    y = np.asarray(raw[: len(prior)]) + 1e-3
    y /= y.sum()
    np.testing.assert_allclose(update(prior, [[j] for j in range(len(prior))], y), y, atol=1e-15)


def test_share_buckets_example():
    got = share_buckets([0, 0.4, 0.2, 0.2, 0.1, 0.1, 0, 0], [[0], [1], [2, 3], [4, 5, 6, 7]], [1, 3, 4, 2], 10)
    assert got.tolist() == [1, 3, 2, 2, 1, 1, 0, 0]


def test_ipf_on_two_by_two():
    rows, cols = marginal_blocks((2, 2), [0]), marginal_blocks((2, 2), [1])
    q, report = ide([0.25] * 4, [rows, cols], [[0.6, 0.4], [0.5, 0.5]], iterations=4)
    np.testing.assert_allclose(q, [0.3, 0.3, 0.2, 0.2], atol=1e-15)
    assert report["kl"].iloc[-1] == pytest.approx(0.0201355, abs=5e-8)
    q, report = ide([0.25] * 4, [rows, cols], [[0.6, 0.4], [0.7, 0.3]], iterations=4)
    np.testing.assert_allclose(q, [0.42, 0.18, 0.28, 0.12], atol=1e-15)
    assert list(report.columns) == ["iteration", "partition", "l1", "kl"]
    assert report["partition"].isna().tolist() == [True] + [False] * 4
    assert report["partition"].iloc[1:].tolist() == [0, 1, 0, 1]


# ------------------------------------------------------------------ stage 1: the simplex L1 fit


def l1_optimum(y: np.ndarray, total: float, at_most: bool) -> float:
    """min ‖x − y‖₁ over x ≥ 0, Σx = total (≤ with at_most), by linear programming."""
    n = y.size
    eye = np.eye(n)
    a_ub = np.block([[eye, -eye], [-eye, -eye]])
    b_ub = np.concatenate([y, -y])
    row = np.concatenate([np.ones(n), np.zeros(n)])[None, :]
    res = linprog(
        np.concatenate([np.zeros(n), np.ones(n)]),
        A_ub=np.vstack([a_ub, row]) if at_most else a_ub,
        b_ub=np.append(b_ub, total) if at_most else b_ub,
        A_eq=None if at_most else row,
        b_eq=None if at_most else [total],
        bounds=(0, None),
        method="highs",
    )
    assert res.status == 0
    return float(res.fun)


@given(st.lists(st.floats(-2, 2, allow_nan=False), min_size=1, max_size=12), st.floats(0, 3), st.booleans())
def test_simplex_projection_is_an_l1_optimum(raw, total, at_most):
    y = np.asarray(raw)
    x = simplex_l1_fit(y, total, at_most=at_most)
    assert np.all(x >= 0)
    assert x.sum() <= total + 1e-9 if at_most else x.sum() == pytest.approx(total, abs=1e-9)
    assert np.abs(x - y).sum() == pytest.approx(l1_optimum(y, total, at_most), abs=1e-7)


@pytest.mark.slow
def test_simplex_l1_fit_seeded_batch():
    rng = np.random.default_rng(20210601)
    for _ in range(200):
        y = rng.laplace(0.1, 0.3, rng.integers(1, 15))
        for at_most in (False, True):
            x = simplex_l1_fit(y, 1.0, at_most=at_most)
            assert np.abs(x - y).sum() == pytest.approx(l1_optimum(y, 1.0, at_most), abs=1e-7)


# ------------------------------------------------------------------ the update: constraints, Theorem 3.1


@given(partitions())
def test_update_meets_its_block_constraints(case):
    p, blocks, y, _ = case
    q = update(p, blocks, y)
    assert np.all(q >= 0)
    assert abs(q.sum() - 1) <= 1e-12
    assert np.abs(block_sums(q, blocks) - y).max(initial=0) <= 1e-12


def kl_optimum(p: np.ndarray, blocks, y: np.ndarray, start: np.ndarray) -> float:
    """min KL(q‖p) over distributions with the block sums y, by SLSQP.

    Cells the targets force to 0 (a block whose target is 0; the cells outside the blocks when the blocks' targets
    already sum to 1) add nothing to KL and are left out, so SLSQP never starts on an empty feasible corner."""
    forced = np.zeros(p.size, bool)
    for b, t in zip(blocks, y):
        forced[b] |= t <= 0
    outside = ~np.isin(np.arange(p.size), [j for b in blocks for j in b])
    if abs(float(np.sum(y)) - 1) < 1e-12:
        forced |= outside
    if forced.any():
        keep = np.flatnonzero(~forced)
        index = {j: k for k, j in enumerate(keep)}
        kept = [([index[j] for j in b], t) for b, t in zip(blocks, y) if t > 0]
        start = np.where(forced, 0, start)[keep]
        start = start / start.sum() if start.sum() > 0 else np.full(keep.size, 1 / keep.size)
        return kl_optimum(p[keep], [b for b, _ in kept], np.array([t for _, t in kept]), start)
    n = p.size
    covered = sum(len(b) for b in blocks) == n  # then Σq = 1 follows from the blocks (SLSQP wants full rank)
    cons = [] if covered else [{"type": "eq", "fun": lambda q: q.sum() - 1, "jac": lambda q: np.ones(n)}]
    for b, t in zip(blocks, y):
        mask = np.isin(np.arange(n), b).astype(float)
        cons.append({"type": "eq", "fun": lambda q, m=mask, t=t: m @ q - t, "jac": lambda q, m=mask: m})
    eps = 1e-300

    def kl(q):
        return float(np.sum(q * np.log(np.maximum(q, eps) / p)))

    def grad(q):
        return np.log(np.maximum(q, eps) / p) + 1

    res = minimize(
        kl,
        start,
        jac=grad,
        constraints=cons,
        bounds=[(0, 1)] * n,
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert res.success, res.message
    assert abs(res.x.sum() - 1) < 1e-8 and np.abs(block_sums(res.x, blocks) - y).max(initial=0) < 1e-8
    return float(res.fun)


@given(partitions(prior=positive))
@example(case=(np.ones(5), [[2, 3], [0, 4]], np.array([1.0, 0.0]), np.array([0.0, 0.0, 0.0, 1.0, 0.0])))
def test_update_is_the_kl_projection(case):
    """Theorem 3.1: among distributions meeting the partition's targets, the update has the least KL to p."""
    p, blocks, y, z = case
    p = p / p.sum()
    q = update(p, blocks, y)
    assert kl_divergence(q, p) <= kl_divergence(z, p) + 1e-12  # z meets the same targets
    assert kl_divergence(q, p) <= kl_optimum(p, blocks, y, z) + 1e-7
    # Equation 3: q/p is constant on every block and on the rest (one Lagrange multiplier each).
    rest = [j for j in range(p.size) if not any(j in b for b in blocks)]
    for cells in [*blocks, rest]:
        ratio = q[cells] / p[cells]
        if len(cells):
            assert ratio.max() - ratio.min() <= 1e-9 * max(1.0, ratio.max())


# ------------------------------------------------------------------ IDE


def joint_margins(x: np.ndarray, shape, pairs):
    parts = [marginal_blocks(shape, axes) for axes in pairs]
    return parts, [block_sums(x, b) for b in parts]


@pytest.mark.slow
@given(st.integers(0, 2**32 - 1))
def test_ide_converges_on_consistent_targets(seed):
    rng = np.random.default_rng(seed)
    shape = (3, 2, 3)
    x = rng.dirichlet(np.ones(18))
    parts, targets = joint_margins(x, shape, [(0, 1), (0, 2), (1, 2)])
    prior = rng.dirichlet(np.ones(18))
    q, report = ide(prior, parts, targets, iterations=3 * 150)
    assert report["l1"].iloc[-1] < 1e-6
    assert report["l1"].iloc[-1] < report["l1"].iloc[0]
    assert np.all(np.isfinite(report["kl"]))
    assert abs(q.sum() - 1) < 1e-12


def test_ide_with_a_prior_that_has_the_joint_recovers_it():
    rng = np.random.default_rng(7)
    x = rng.dirichlet(np.ones(12))
    parts, targets = joint_margins(x, (3, 2, 2), [(0, 1), (0, 2), (1, 2)])
    q, report = ide(x * 5, parts, targets, iterations=6)  # not normalised: normalised by ide
    np.testing.assert_allclose(q, x, atol=1e-14)
    assert report["kl"].abs().max() < 1e-12


def test_ide_fits_noisy_targets_and_reports_the_given_ones():
    parts = [marginal_blocks((2, 2), [0]), marginal_blocks((2, 2), [1])]
    q, report = ide([0.25] * 4, parts, [[0.8, -0.1], [0.5, 0.5]], iterations=2)
    # rows fit by the simplex projection: [0.95, 0.05] (as L1-optimal as [1, 0]: cost 0.3 either way)
    np.testing.assert_allclose(q, [0.475, 0.475, 0.025, 0.025], atol=1e-15)
    assert report["l1"].iloc[-1] == pytest.approx(0.3)


def test_ide_partition_that_does_not_cover_fits_at_most_one():
    q, _ = ide([0.25] * 4, [[[0], [1]]], [[0.7, 0.6]], iterations=1)
    assert q[:2].sum() == pytest.approx(1.0) and q[2:].sum() == 0
    q, _ = ide([0.25] * 4, [[[0], [1]]], [[0.2, 0.3]], iterations=1)
    np.testing.assert_allclose(q, [0.2, 0.3, 0.25, 0.25])


def test_reduce_domain_makes_unseen_cells_impossible():
    prior = [0.5, 0.5, 0.0]  # the prior never saw cell 2
    parts = [[[0], [1], [2]]]
    q, report = ide(prior, parts, [[0.2, 0.3, 0.5]], iterations=1)
    np.testing.assert_allclose(q, [0.2, 0.3, 0.5])
    assert report["kl"].iloc[-1] == np.inf
    q, report = ide(prior, parts, [[0.2, 0.3, 0.5]], iterations=1, reduce_domain=True)
    np.testing.assert_allclose(q, [0.45, 0.55, 0.0])  # [0.2, 0.3] fit onto the support's simplex
    assert np.isfinite(report["kl"]).all()


def test_ide_zero_iterations_is_the_prior():
    q, report = ide({0: 2, 3: 2}, [[[0, 1], [2, 3]]], [[0.5, 0.5]], iterations=0)
    assert q.tolist() == [0.5, 0, 0, 0.5] and len(report) == 1


# ------------------------------------------------------------------ share_buckets


@given(st.lists(weights, min_size=1, max_size=10).filter(lambda v: sum(v) > 0), st.data())
def test_share_buckets_keeps_every_bucket_total(prior, data):
    n = len(prior)
    cut = sorted(set(data.draw(st.lists(st.integers(1, n - 1), max_size=3)))) if n > 1 else []
    buckets = [list(range(a, b)) for a, b in zip([0, *cut], [*cut, n])]
    counts = data.draw(st.lists(st.integers(0, 50), min_size=len(buckets), max_size=len(buckets)))
    got = share_buckets(prior, buckets, counts, sum(counts))
    assert got.dtype == np.int64 and np.all(got >= 0) and got.sum() == sum(counts)
    assert [int(got[b].sum()) for b in buckets] == counts
    for b, c in zip(buckets, counts):  # every cell within 1 of its real-valued share
        w = np.asarray(prior, dtype=float)[b]
        share = c * w / w.sum() if w.sum() > 0 else np.full(len(b), c / len(b))
        assert np.all(np.abs(got[b] - share) < 1)


def test_share_buckets_ties_go_to_the_lower_index():
    assert share_buckets([1, 1, 1], [[0, 1, 2]], [2], 2).tolist() == [1, 1, 0]
    assert share_buckets([0, 0, 0, 1], [[0, 1, 2], [3]], [1, 0], 1).tolist() == [1, 0, 0, 0]


def test_share_buckets_refuses_counts_that_miss_g():
    with pytest.raises(ParameterError, match="not to G"):
        share_buckets([1, 1], [[0], [1]], [1, 2], 4)
    with pytest.raises(ParameterError, match="whole numbers"):
        share_buckets([1, 1], [[0], [1]], [1.5, 2], 4)


# ------------------------------------------------------------------ refusals and normalisation


def test_a_hierarchy_prior_is_refused(toy_tree):
    for fn in (
        lambda p: update(p, [[0]], [0.5]),
        lambda p: ide(p, [[[0]]], [[0.5]], 1),
        lambda p: share_buckets(p, [[0]], [1], 1),
    ):
        with pytest.raises(PrivacyError, match="true data"):
            fn(toy_tree)


@pytest.mark.parametrize(
    "prior",
    [
        pd.Series([0.5, 0.5]),
        pd.DataFrame({"share": [0.5, 0.5]}),
        "0.5,0.5",
        [0.5, "0.5"],
        object(),
        np.array(["a", "b"]),
        [True, False],
    ],
)
def test_objects_that_are_not_plain_numbers_are_refused(prior):
    with pytest.raises(PrivacyError, match="plain"):
        update(prior, [[0]], [0.5])


@pytest.mark.parametrize("prior", [[0.5, -0.1], [np.nan, 1.0], [np.inf, 1.0], [0, 0], [], np.ones((2, 2))])
def test_bad_prior_values_are_refused(prior):
    with pytest.raises(ParameterError):
        update(prior, [[0]], [0.5])


def test_a_prior_is_normalised_and_a_mapping_is_a_prior():
    np.testing.assert_allclose(update([5, 3, 2], [[0]], [0.2]), update([0.5, 0.3, 0.2], [[0]], [0.2]))
    np.testing.assert_allclose(update({0: 0.5, 1: 0.3, 2: 0.2}, [[0]], [0.2]), [0.2, 0.48, 0.32])


@pytest.mark.parametrize(
    "blocks, targets, match",
    [
        ([[0], [0, 1]], [0.2, 0.3], "overlaps"),
        ([[0], []], [0.2, 0.3], "non-empty"),
        ([[0], [5]], [0.2, 0.3], "outside"),
        ([[0]], [1.2], "sum ≤ 1"),
        ([[0]], [-0.1], "≥ 0"),
        ([[0, 1], [2]], [0.5, 0.4], "must sum to 1"),
        ([[0]], [0.2, 0.3], "one per block"),
    ],
)
def test_bad_partitions_and_targets_are_refused(blocks, targets, match):
    with pytest.raises(ParameterError, match=match):
        update([0.5, 0.3, 0.2], blocks, targets)


def test_bad_ide_arguments_are_refused():
    with pytest.raises(ParameterError, match="iterations"):
        ide([1, 1], [[[0]]], [[0.5]], -1)
    with pytest.raises(ParameterError, match="one target vector per partition"):
        ide([1, 1], [[[0]]], [], 1)
