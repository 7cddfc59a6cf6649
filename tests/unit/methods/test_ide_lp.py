"""Tao et al.'s stage 1 as a linear program: optimal (against the dual and sampled distributions), IDE on it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cocoviz
from cocoviz.errors import ParameterError
from cocoviz.methods.ide_lp import block_matrix, stage1_dual, stage1_lp
from cocoviz.methods.priors import ide, marginal_blocks


def _instance(rng, shape, pairs, scale):
    x = rng.dirichlet(np.ones(int(np.prod(shape))))
    parts = [marginal_blocks(shape, p) for p in pairs]
    targets = [np.array([x[b].sum() for b in part]) + rng.laplace(0, scale, len(part)) for part in parts]
    return parts, targets


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([(3, 3, 2), (2, 2, 2), (4, 3), (2, 3, 2)]),
    st.sampled_from([0.0, 0.02, 0.2, 1.0]),
)
def test_the_lp_optimum_equals_the_dual_and_z_attains_it(seed, shape, scale):
    rng = np.random.default_rng(seed)
    pairs = [(0, 1), (0, 2), (1, 2)] if len(shape) == 3 else [(0,), (1,), (0, 1)]
    parts, targets = _instance(rng, shape, pairs, scale)
    w = block_matrix(parts, np.arange(int(np.prod(shape))))
    y = np.concatenate(targets)
    z, best = stage1_lp(w, y)
    assert np.all(z >= 0) and abs(z.sum() - 1) < 1e-12
    assert abs(np.abs(w @ z - y).sum() - best) < 1e-7  # z attains the optimum reported
    assert abs(stage1_dual(w, y) - best) < 1e-6  # strong duality, independent formulation and solver
    # No distribution does better: random ones, vertices (point masses) and the true one
    others = np.vstack([rng.dirichlet(np.ones(w.shape[1]) * a, 200) for a in (0.1, 1.0, 10.0)] + [np.eye(w.shape[1])])
    assert np.abs(others @ w.T - y).sum(axis=1).min() >= best - 1e-9


def test_lp_ide_reaches_the_optimum_where_per_partition_fits_stall():
    # three overlapping noisy margins of a 3 × 3 × 2 table: the example
    rng = np.random.default_rng(7)
    parts, targets = _instance(rng, (3, 3, 2), [(0, 1), (0, 2), (1, 2)], 0.15)
    prior = np.full(18, 1 / 18)
    best = stage1_dual(block_matrix(parts, np.arange(18)), np.concatenate(targets))
    _, old = ide(prior, parts, targets, 600, stage1="partition")
    q, new = ide(prior, parts, targets, 600)
    assert abs(new.attrs["stage1_optimum"] - best) < 1e-6
    # the paper's stage 1: only IPF's slow approach to a boundary I-projection is left
    assert new["l1"].iloc[-1] - best < 1e-3 * best
    assert old["l1"].iloc[-1] > best * 1.05  # the per-partition fits stop above it
    assert np.all(q >= 0) and abs(q.sum() - 1) < 1e-12


def test_on_consistent_targets_both_stage_ones_give_the_same_i_projection():
    rng = np.random.default_rng(3)
    x = rng.dirichlet(np.ones(12))
    parts = [marginal_blocks((3, 2, 2), p) for p in [(0, 1), (1, 2)]]
    targets = [np.array([x[b].sum() for b in part]) for part in parts]
    prior = rng.dirichlet(np.ones(12))
    a, ra = ide(prior, parts, targets, 200, stage1="partition")
    b, rb = ide(prior, parts, targets, 200, stage1="lp")
    assert rb.attrs["stage1_optimum"] < 1e-9
    assert np.allclose(a, b, atol=1e-9) and rb["l1"].iloc[-1] < 1e-7


def test_lp_on_the_prior_support_leaves_unseen_cells_empty():
    parts = [marginal_blocks((3, 2), [0]), marginal_blocks((3, 2), [1])]
    targets = [np.array([0.2, 0.3, 0.5]), np.array([0.6, 0.4])]
    prior = np.array([1, 1, 1, 1, 0, 0], dtype=float)  # size 3 never seen
    q, report = ide(prior, parts, targets, 50, reduce_domain=True)
    assert q[4:].sum() == 0
    assert abs(report.attrs["stage1_optimum"] - 1.0) < 1e-9  # the 0.5 of row 3 must move: misfit 2 × 0.5


def test_ide_is_public_and_refuses_a_bad_stage1():
    assert "ide" in cocoviz.__all__ and cocoviz.ide is ide
    with pytest.raises(ParameterError, match="stage1"):
        ide([0.5, 0.5], [[[0], [1]]], [[0.5, 0.5]], 1, stage1="ipf")
    with pytest.raises(ParameterError, match="W must be"):
        stage1_lp(np.ones((2, 3)), [1.0])
