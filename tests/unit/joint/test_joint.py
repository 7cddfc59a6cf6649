"""Size × tenure tables (cocoviz.joint): sensitivity by brute force, the seam, IDE's margins, consistency."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import cocoviz
from cocoviz.core.shape import Shape
from cocoviz.datasets.tenure import tenure_table
from cocoviz.errors import InputError, ParameterError, PrivacyError
from cocoviz.hierarchy import Hierarchy
from cocoviz.joint import (
    PERSON_SENSITIVITY,
    TENURE_QUERY,
    TENURE_SENSITIVITY,
    TenureMeasurements,
    class_counts,
    consistent_owners,
    estimate_joint,
    estimate_joints,
    evaluate_joint,
    fit_table,
    joint_budget,
    least_squares_owners,
    measure_tenure,
    node_tables,
    owner_counts,
    prior_tables,
    split_total,
    tenure_cost,
)
from cocoviz.measure.measurements import GROUPS_FROM_DATA
from cocoviz.methods.priors import ide, marginal_blocks
from cocoviz.privacy.accounting import zcdp_epsilon
from cocoviz.privacy.budget import HOUSEHOLDS
from cocoviz.privacy.noise import FastSampler, GaussianNoise, discrete_gaussian_variance

# Small group-level data: (state, county, size, owner?) per group; sizes 0 allowed (G is public).
GROUPS = pd.DataFrame(
    {
        "state": ["a", "a", "a", "a", "b", "b", "b"],
        "county": ["a1", "a1", "a2", "a2", "b1", "b1", "b2"],
        "size": [0, 2, 1, 3, 1, 1, 2],
        "owner": [1, 0, 1, 1, 0, 1, 0],
    }
)
LEVELS = ["state", "county"]


def _tenure(groups: pd.DataFrame) -> pd.DataFrame:
    """The per-leaf tenure table of a group-level table."""
    g = groups.assign(owners=groups["owner"], renters=1 - groups["owner"])
    return g.groupby([*LEVELS, "size"], as_index=False)[["owners", "renters"]].sum()


def _shape(groups: pd.DataFrame) -> Shape:
    return Shape.of(Hierarchy.from_groups(groups[[*LEVELS, "size"]], size="size", levels=LEVELS))


def _margins(groups: pd.DataFrame) -> np.ndarray:
    return np.concatenate(owner_counts(_tenure(groups), _shape(groups)))


def _person_neighbours(groups: pd.DataFrame):
    """Every dataset one person away: one person added to or removed from one group."""
    for i in range(len(groups)):
        for step in (1, -1):
            if groups.loc[i, "size"] + step >= 0:
                other = groups.copy()
                other.loc[i, "size"] += step
                yield other


# ------------------------------------------------------------ sensitivity
def test_tenure_margin_has_sensitivity_zero_under_person_neighbours_by_brute_force():
    base = _margins(GROUPS)
    changes = list(_person_neighbours(GROUPS))
    assert len(changes) == 13  # 7 groups × (add, remove) minus the size-0 group's removal
    deltas = [np.abs(_margins(other) - base).sum() for other in changes]
    assert max(deltas) == 0 == PERSON_SENSITIVITY  # O per node never moves: the margin is as public as G


@pytest.mark.slow
def test_tenure_margin_has_sensitivity_one_per_node_when_a_tenure_may_flip():
    shape = _shape(GROUPS)
    base = owner_counts(_tenure(GROUPS), shape)
    worst = 0
    for i in range(len(GROUPS)):
        flipped = GROUPS.copy()
        flipped.loc[i, "owner"] = 1 - flipped.loc[i, "owner"]
        for other in [flipped, *_person_neighbours(flipped)]:  # a flip, alone or with a person changed
            moved = owner_counts(_tenure(other), shape)
            per_node = [np.abs(m - b) for m, b in zip(moved, base)]
            worst = max(worst, max(int(d.max()) for d in per_node))
            assert all(int(d.sum()) == 1 for d in per_node)  # one node per level, by one
    assert worst == TENURE_SENSITIVITY == 1


def _household_neighbours(groups: pd.DataFrame):
    """Every dataset one household record away: its tenure flipped, one person added or removed, or both."""
    for i in range(len(groups)):
        for flip, step in itertools.product((0, 1), (0, 1, -1)):
            if (flip or step) and groups.loc[i, "size"] + step >= 0:
                other = groups.copy()
                other.loc[i, "owner"] = (other.loc[i, "owner"] + flip) % 2
                other.loc[i, "size"] += step
                yield other


def test_tenure_margin_has_l2_sensitivity_one_per_level_under_household_records_by_brute_force():
    """The zCDP margin's Δ₂: per level, the L2 norm of the change of every node's O, over every neighbour."""
    shape = _shape(GROUPS)
    base = owner_counts(_tenure(GROUPS), shape)
    changes = list(_household_neighbours(GROUPS))
    assert len(changes) == 7 + 13 + 13  # a flip alone; a person alone; both (the size-0 group cannot lose one)
    worst = max(
        float(np.sqrt(((moved - b) ** 2).sum()))
        for other in changes
        for moved, b in zip(owner_counts(_tenure(other), shape), base)
    )
    assert worst == TENURE_SENSITIVITY == 1
    cost = tenure_cost(shape, rhos=[0.5, 0.5, 0.5])
    assert all(c.noise == "gaussian" and c.sensitivity == worst and c.relation == HOUSEHOLDS for c in cost.charges)


# ------------------------------------------------------------------- data
@pytest.fixture(scope="module")
def tree():
    rng = np.random.default_rng(5)
    rows = []
    for state, counties in {"s1": 3, "s2": 2}.items():
        for c in range(counties):
            sizes = np.concatenate([rng.geometric(0.4, 300), [25, 40]])
            s, n = np.unique(sizes, return_counts=True)
            rows.append(pd.DataFrame({"state": state, "county": f"{state}-{c}", "size": s, "count": n}))
    return Hierarchy.from_counts(pd.concat(rows), size="size", count="count", levels=LEVELS)


@pytest.fixture(scope="module")
def table(tree):
    return tenure_table(tree, seed=3)


def _release(tree, eps=1.0, seed=0):
    return cocoviz.estimate(tree, epsilons=[eps] * 3, methods=["Hc"] * 3, max_size=100, seed=seed)


# ------------------------------------------------------------- measuring
def test_measure_is_keyed_deterministic_and_apart_from_the_engine(tree, table):
    shape = Shape.of(tree)
    a = measure_tenure(shape, table, [0.5, 1.0, 2.0], seed=4)
    b = measure_tenure(shape, table, [0.5, 1.0, 2.0], seed=4)
    c = measure_tenure(shape, table, [0.5, 1.0, 2.0], seed=5)
    assert all(np.array_equal(x, y) for x, y in zip(a.owners, b.owners))
    assert not all(np.array_equal(x, y) for x, y in zip(a.owners, c.owners))
    exact = owner_counts(table, shape)
    sampler = FastSampler(4)
    engine = []
    for level, eps in enumerate([0.5, 1.0, 2.0]):
        for k, o in enumerate(exact[level]):
            assert a.owners[level][k] == sampler.draw(np.array([o]), 1 / eps, (level, k, TENURE_QUERY))[0]
            engine.append(sampler.draw(np.array([o]), 1 / eps, (level, k, 0))[0])
    assert TENURE_QUERY not in (0, 1, 2) and not np.array_equal(np.concatenate(a.owners), engine)
    rows = a.budget.to_frame()
    # One charge per level: one cell per node.
    assert (rows["sensitivity"] == 1).all() and rows["cells"].tolist() == rows["nodes"].tolist() == [1, 2, 5]
    assert np.allclose(rows["scale"], 1 / rows["epsilon"])
    assert a.budget.total == pytest.approx(3.5) and "Δ = 0" in a.budget.notes[0]
    assert tenure_cost(shape, [0.5, 1.0, 2.0]).total == a.budget.total  # known before any noise


def test_a_zcdp_tenure_margin_draws_the_discrete_gaussian_of_its_rho(tree, table):
    shape, rhos = Shape.of(tree), [0.5, 1.0, 2.0]
    a = measure_tenure(shape, table, rhos=rhos, seed=4)
    exact = owner_counts(table, shape)
    sampler = FastSampler(4)
    for level, rho in enumerate(rhos):
        sigma2 = Fraction(TENURE_SENSITIVITY**2) / (2 * Fraction(rho))  # σ² = Δ₂²/(2ρ), exactly
        assert a.noise(level) == GaussianNoise(sigma2) and a.scale(level) == pytest.approx((1 / (2 * rho)) ** 0.5)
        assert a.variance(level) == discrete_gaussian_variance(float(sigma2))
        for k, o in enumerate(exact[level]):
            assert a.owners[level][k] == sampler.draw(np.array([o]), GaussianNoise(sigma2), (level, k, TENURE_QUERY))[0]
    secure = measure_tenure(shape, table, rhos=rhos, sampler="secure")  # the exact discrete Gaussian, for release
    assert secure.budget.sampler.startswith("secure") and secure.budget.total_rho == 3.5
    laplace = measure_tenure(shape, table, [1.0] * 3, seed=4)
    assert not all(np.array_equal(x, y) for x, y in zip(a.owners, laplace.owners))
    # Its ρ in the budget, known before any noise, under the household-records neighbours.
    budget = a.budget
    assert (
        budget.accounting == "zCDP" and budget.total_rho == 3.5 and budget.per_level_rho() == {0: 0.5, 1: 1.0, 2: 2.0}
    )
    assert budget.epsilon_delta() == zcdp_epsilon(3.5, 1e-10) and budget.delta == 1e-10
    assert {c.relation for c in budget.charges} == {HOUSEHOLDS}
    assert [c.rho for c in budget.charges] == rhos and [c.epsilon for c in budget.charges] == [None] * 3
    assert tenure_cost(shape, rhos=rhos).with_sampler(budget.sampler, budget.notes[1:]) == budget
    assert "discrete Gaussian σ" in budget.describe() and f"neighbours: {HOUSEHOLDS}" in budget.describe()
    assert cocoviz.Budget.from_dict(budget.to_dict()) == budget
    with pytest.raises(ParameterError, match="epsilons .* or rhos"):
        measure_tenure(shape, table, [1.0] * 3, rhos=rhos, seed=0)
    with pytest.raises(ParameterError, match="epsilons .* or rhos"):
        tenure_cost(shape)
    with pytest.raises(cocoviz.BudgetError, match="ρ of level 1"):
        measure_tenure(shape, table, rhos=[0.5, 0.0, 1.0], seed=0)


def test_measure_refuses_a_table_of_other_households(tree, table):
    shape = Shape.of(tree)
    with pytest.raises(InputError, match="differ from the hierarchy's G"):
        measure_tenure(shape, table.assign(owners=table["owners"] + 1), [1.0] * 3, seed=0)
    with pytest.raises(InputError, match="leaves"):
        measure_tenure(shape, table[table["county"] != "s1-0"], [1.0] * 3, seed=0)
    with pytest.raises(ParameterError, match="one tenure ε per level"):
        measure_tenure(shape, table, [1.0, 1.0], seed=0)
    with pytest.raises(ParameterError, match="Shape"):
        measure_tenure(tree, table, [1.0] * 3, seed=0)


# Issue 27, item 3: the joint path carries every sampler it used; its margin refuses what the size release does.
def test_a_fast_tenure_margin_beside_a_secure_size_release_is_labelled_fast(tree, table):
    secure = cocoviz.estimate(tree, epsilons=[1.0] * 3, methods=["Hc"] * 3, max_size=100, sampler="secure")
    fast = measure_tenure(secure, table, [1.0] * 3, seed=0, sampler="fast")
    joint = estimate_joint(secure, fast, "independent")
    assert joint.samplers == {"size release": secure.sampler, "tenure margin": fast.budget.sampler}
    assert joint.sampler.startswith("fast") and "secure" in joint.sampler and "not for release" in joint.sampler
    assert joint.budget.sampler == joint.sampler
    # The other way round, and both secure.
    margin = measure_tenure(secure, table, [1.0] * 3, sampler="secure")
    assert estimate_joint(_release(tree), margin).sampler.startswith("fast")
    both = estimate_joint(secure, margin)
    assert both.sampler == secure.sampler and both.sampler.startswith("secure")
    opendp = measure_tenure(secure, table, [1.0] * 3, sampler="opendp")
    mixed = estimate_joint(secure, opendp).sampler
    assert mixed.startswith("secure samplers") and "opendp" in mixed


def test_a_secure_tenure_margin_refuses_g_from_private_rows():
    persons = pd.DataFrame({"group": [1, 1, 2], "state": ["a", "a", "b"], "county": ["x", "x", "y"]})
    private = Hierarchy.from_persons(persons, group="group", levels=LEVELS)
    table = pd.DataFrame(
        {"state": ["a", "b"], "county": ["x", "y"], "size": [2, 1], "owners": [1, 0], "renters": [0, 1]}
    )
    shape = Shape.of(private)
    for sampler in ("secure", "opendp"):
        with pytest.raises(PrivacyError, match="public groups table"):
            measure_tenure(shape, table, [1.0] * 3, sampler=sampler)
    with pytest.raises(PrivacyError, match="public groups table"):
        cocoviz.estimate(private, epsilons=[1.0] * 3, methods=["Hg"] * 3, secure=True)
    # Exploration: measured, with the note that G came from the data, carried into the joint table.
    noisy = measure_tenure(shape, table, [1.0] * 3, seed=0)
    assert GROUPS_FROM_DATA in noisy.budget.notes
    release = cocoviz.estimate(private, epsilons=[1.0] * 3, methods=["Hg"] * 3, seed=0)
    joint = estimate_joint(release, noisy)
    assert joint.budget.notes.count(GROUPS_FROM_DATA) == 1


# -------------------------------------------------------- the margin's consistency
def test_consistent_owners_are_whole_bounded_and_add_up(tree, table):
    shape = Shape.of(tree)
    noisy = measure_tenure(shape, table, [0.05, 0.05, 0.05], seed=1)  # much noise: clipping and shifting work
    owners = consistent_owners(noisy)
    for level in range(3):
        groups = shape.group_counts(level)
        assert owners[level].dtype == np.int64 and np.all((owners[level] >= 0) & (owners[level] <= groups))
    for level in (1, 2):
        sums = np.bincount(shape.parent_index(level), weights=owners[level], minlength=len(owners[level - 1]))
        assert np.array_equal(sums, owners[level - 1])
    none = consistent_owners(noisy, "none")
    assert np.array_equal(none[2], np.clip(noisy.owners[2], 0, shape.group_counts(2)))


def test_least_squares_is_exact_without_noise_and_uses_every_count(tree, table):
    shape = Shape.of(tree)
    exact = owner_counts(table, shape)
    quiet = TenureMeasurements(shape, (1e6,) * 3, tuple(exact), tenure_cost(shape, [1e6] * 3))
    assert all(np.allclose(a, b) for a, b in zip(least_squares_owners(quiet), exact))
    # One leaf's noisy count off by 9: the estimate moves it back part of the way, using the parents.
    shifted = [e.copy() for e in exact]
    shifted[2][0] += 9
    ls = least_squares_owners(TenureMeasurements(shape, (1.0,) * 3, tuple(shifted), quiet.budget))
    assert exact[2][0] < ls[2][0] < exact[2][0] + 9


def test_least_squares_weighs_by_the_gaussian_variances_under_zcdp(tree, table):
    shape = Shape.of(tree)
    exact = owner_counts(table, shape)
    shifted = [e.copy() for e in exact]
    shifted[2][0] += 9
    budget = tenure_cost(shape, rhos=[1.0] * 3)

    def moved_back(rhos):
        ls = least_squares_owners(TenureMeasurements(shape, None, tuple(shifted), budget, tuple(rhos)))
        return exact[2][0] + 9 - ls[2][0]

    # The leaf's own count weighs more as its ρ grows (its variance 1/(2ρ) falls): it is moved back less.
    assert 0 < moved_back([1.0, 1.0, 4.0]) < moved_back([1.0, 1.0, 1.0]) < moved_back([1.0, 1.0, 0.25]) < 9


def test_split_total_keeps_caps_and_total():
    rng = np.random.default_rng(0)
    for _ in range(200):
        caps = rng.integers(0, 20, 6)
        total = int(rng.integers(0, caps.sum() + 1))
        x = split_total(total, rng.normal(5, 8, 6), caps)
        assert x.sum() == total and np.all((x >= 0) & (x <= caps))
    with pytest.raises(ParameterError, match="cannot split"):
        split_total(10, np.zeros(2), np.array([3, 3]))


# ---------------------------------------------------------------- IDE
def test_ide_keeps_both_margins_when_feasible_and_uniform_is_independence():
    rng = np.random.default_rng(2)
    blocks = [marginal_blocks((7, 2), [0]), marginal_blocks((7, 2), [1])]
    for _ in range(20):
        n = rng.integers(0, 50, 7)
        owners = int(rng.integers(0, n.sum() + 1))
        prior = rng.random((7, 2)) + 0.01
        t = fit_table(n, owners, prior)
        assert np.array_equal(t.sum(axis=1), n) and t[:, 0].sum() == owners and (t >= 0).all()
        g = n.sum()
        targets = [n / g, np.array([owners, g - owners]) / g]
        q, report = ide(prior.ravel(), blocks, targets, 60)
        assert report["l1"].iloc[-1] < 1e-9  # both margins, as distributions
        u, _ = ide(np.ones(14), blocks, targets, 2)
        assert np.allclose(u.reshape(7, 2), np.outer(n / g, [owners / g, 1 - owners / g]), atol=1e-12)
        ind, uni = fit_table(n, owners, "independent"), fit_table(n, owners, "uniform")
        assert np.abs(ind - uni).max() <= 1  # the same table up to ties in the rounding


def test_a_prior_equal_to_the_truth_gives_the_truth_back():
    truth = np.array([[30, 10], [5, 25], [8, 8], [0, 3]])
    assert np.array_equal(fit_table(truth.sum(axis=1), int(truth[:, 0].sum()), truth.astype(float)), truth)


def test_post_processing_refuses_private_data_as_a_prior(tree, table):
    release = _release(tree)
    noisy = measure_tenure(release.plan.shape, table, [1.0] * 3, seed=0)
    for bad in (tree, table):
        with pytest.raises(PrivacyError):
            estimate_joint(release, noisy, bad)
        with pytest.raises(PrivacyError):
            fit_table(np.array([3, 2]), 2, bad)
    per_node = {p: table for p in release.plan.shape.paths[0]}
    with pytest.raises(PrivacyError):
        estimate_joint(release, noisy, per_node)
    with pytest.raises(PrivacyError):
        estimate_joint(tree, noisy)
    with pytest.raises(ParameterError, match="no table for node"):
        estimate_joint(release, noisy, {(): np.ones((7, 2))})


def test_joint_release_margins_budget_and_determinism(tree, table):
    shape = Shape.of(tree)
    release = _release(tree, seed=9)
    noisy = measure_tenure(release.plan.shape, table, [0.5] * 3, seed=9)
    truth = node_tables(table, LEVELS)
    prior = prior_tables(table.assign(owners=table["owners"] * 1.2), shape)
    joint = estimate_joint(release, noisy, prior)
    owners = consistent_owners(noisy)
    for level in range(3):
        for k, path in enumerate(shape.paths[level]):
            t = joint.table(path)
            assert t.dtype == np.int64 and (t >= 0).all() and t.sum() == shape.group_counts(level)[k]
            assert np.array_equal(t.sum(axis=1), class_counts(*release.runs(level).node(k)))  # the released sizes
            assert joint.owners(path) == owners[level][k]
        for path in shape.paths[level][:-1] if level < 2 else []:
            kids = shape.children(path)
            assert np.array_equal(sum(joint.size_margin(c) for c in kids), joint.size_margin(path))
            assert sum(joint.owners(c) for c in kids) == joint.owners(path)
    assert joint.budget.total == pytest.approx(release.budget.total + 1.5)
    again = estimate_joint(_release(tree, seed=9), measure_tenure(shape, table, [0.5] * 3, seed=9), prior)
    assert all(np.array_equal(joint.tables[p], again.tables[p]) for p in joint.tables)
    frame = evaluate_joint(table, joint)
    assert len(frame) == 8 and (frame["joint_l1"] >= frame["size_l1"] - 1e-12).all()
    assert set(truth) == set(joint.tables)
    assert set(joint.to_frame()["tenure"]) == {"owner", "renter"}


def test_at_huge_epsilon_the_truth_prior_recovers_the_truth(tree, table):
    release = cocoviz.estimate(tree, epsilons=[1e6] * 3, methods=["Hc"] * 3, max_size=100, seed=0)
    noisy = measure_tenure(release.plan.shape, table, [1e6] * 3, seed=0)
    truth = {p: t.astype(float) for p, t in node_tables(table, LEVELS).items()}
    frame = evaluate_joint(table, estimate_joint(release, noisy, truth))
    assert np.allclose(frame[["joint_l1", "size_l1", "tenure_l1"]].to_numpy(), 0)
    independent = evaluate_joint(table, estimate_joint(release, noisy, "independent"))
    assert np.allclose(independent[["size_l1", "tenure_l1"]].to_numpy(), 0)


@pytest.mark.parametrize(
    "size, tenure",
    [
        ({"size_rhos": [0.5, 1.0, 2.0]}, {"tenure_rhos": [0.25, 0.25, 1.0]}),
        ({"size_rhos": [0.5, 1.0, 2.0]}, {"tenure_epsilons": [0.5, 0.5, 1.0]}),
        ({"size_epsilons": [1.0] * 3}, {"tenure_rhos": [0.25, 0.25, 1.0]}),
        ({"size_epsilons": [1.0] * 3}, {"tenure_epsilons": [0.5, 0.5, 1.0]}),
    ],
)
def test_the_joint_budget_equals_its_cost_in_every_accounting(tree, table, size, tenure):
    """The joint release's budget is the size plan's cost and the tenure margin's, composed, known before any noise;
    in zCDP when either part is (a pure-ε part counts ε²/2), with the total ρ and its (ε, δ) reading."""
    shape = Shape.of(tree)
    plan_budget = {k.removeprefix("size_"): v for k, v in size.items()}
    cost = joint_budget(
        cocoviz.Plan.build(tree, **plan_budget, methods=["Hc"] * 3, max_size=100).cost(),
        tenure_cost(shape, tenure.get("tenure_epsilons"), rhos=tenure.get("tenure_rhos")),
    )
    release, noisy, joints = estimate_joints(
        tree, table, {"independent": "independent"}, **size, **tenure, max_size=100, seed=2
    )
    budget = joints["independent"].budget
    zcdp = "size_rhos" in size or "tenure_rhos" in tenure
    assert budget.accounting == cost.accounting == ("zCDP" if zcdp else "pure-ε")
    assert budget.total == cost.total and budget.total_rho == cost.total_rho and budget.delta == cost.delta == 1e-10
    assert budget.per_level_rho() == cost.per_level_rho() and budget.charges == cost.charges
    if zcdp:
        tenure_rho = sum(tenure.get("tenure_rhos") or [e * e / 2 for e in tenure["tenure_epsilons"]])
        assert budget.total_rho == pytest.approx(release.budget.total_rho + tenure_rho)
        assert budget.epsilon_delta() == zcdp_epsilon(budget.total_rho, 1e-10) == budget.total
        assert "total ρ spent" in budget.describe()
    else:
        assert budget.total == pytest.approx(3.0 + 2.0)
    for path, t in joints["independent"].tables.items():
        assert t.sum() == shape.group_counts(len(path))[shape.paths[len(path)].index(path)]


def test_the_joint_budget_refuses_two_deltas(tree, table):
    shape = Shape.of(tree)
    size = cocoviz.Plan.build(tree, rhos=[1.0] * 3, methods=["Hc"] * 3, max_size=100, delta=1e-6).cost()
    with pytest.raises(ParameterError, match="different δ"):
        joint_budget(size, tenure_cost(shape, rhos=[1.0] * 3))
    assert joint_budget(size, tenure_cost(shape, rhos=[1.0] * 3, delta=1e-6)).delta == 1e-6


@pytest.mark.parametrize("iterations", [0, 1])
def test_few_iterations_still_keep_the_margins(iterations):
    n, owners = np.array([10, 0, 7]), 9
    t = fit_table(n, owners, np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), iterations)
    assert np.array_equal(t.sum(axis=1), n) and t[:, 0].sum() == owners


def test_brute_force_covers_every_group_and_direction():
    pairs = {(i, s) for i, s in itertools.product(range(len(GROUPS)), (1, -1)) if GROUPS.loc[i, "size"] + s >= 0}
    assert len(pairs) == len(list(_person_neighbours(GROUPS)))
