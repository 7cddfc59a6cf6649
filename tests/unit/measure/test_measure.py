"""The privacy seam: measure reads the data, post_process never does; keyed noise; privacy checks."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pandas as pd
import pytest

from cocoviz import (
    METHODS,
    Hierarchy,
    InputError,
    Measurements,
    ParameterError,
    Plan,
    PrivacyError,
    Shape,
    estimate,
    measure,
    post_process,
)
from cocoviz.measure.measurements import GROUPS_FROM_DATA, measure_level, open_sampler


def wide_tree() -> Hierarchy:
    rng = np.random.default_rng(4)
    rows = [(s, f"{s}{c}", int(size)) for s in "pqr" for c in range(4) for size in rng.integers(0, 9, 15)]
    return Hierarchy.from_groups(
        pd.DataFrame(rows, columns=["state", "county", "size"]), size="size", levels=["state", "county"]
    )


@pytest.mark.parametrize("consistency", ["top-down", "none", "bottom-up"])
@pytest.mark.parametrize("methods", [["Hc", "Hg", "Hc"], ["Hg", "naive", "Hg"]])
def test_measure_then_post_process_is_estimate(consistency, methods):
    tree = wide_tree()
    opts = dict(epsilons=[0.5, 0.25, 1.0], methods=methods, max_size=12, consistency=consistency)
    plan = Plan.build(tree, **opts)
    measurements = measure(plan, tree, seed=5)
    release = post_process(plan, measurements)
    one_call = estimate(tree, seed=5, **opts)
    pd.testing.assert_frame_equal(release.to_frame(), one_call.to_frame())
    assert release.budget == one_call.budget == measurements.budget
    measured = [m is not None for m in measurements.levels]
    assert measured == ([False, False, True] if consistency == "bottom-up" else [True] * 3)


def test_post_process_never_reads_the_tree(monkeypatch):
    tree = wide_tree()
    plan = Plan.build(tree, epsilons=[0.5, 0.5, 0.5], methods=["Hc", "Hg", "Hc"], max_size=12)
    measurements = measure(plan, tree, seed=2)
    want = estimate(tree, epsilons=[0.5, 0.5, 0.5], methods=["Hc", "Hg", "Hc"], max_size=12, seed=2).to_frame()
    # The measurements carry no private object: pickled, they hold no Hierarchy.
    assert b"Hierarchy" not in pickle.dumps(measurements)
    # Every way into a tree fails from here on; post-processing still gives the release.
    for name in [n for n in dir(Hierarchy) if not n.startswith("__")]:
        monkeypatch.setattr(Hierarchy, name, property(lambda self: pytest.fail("post_process read the tree")))
    restored = pickle.loads(pickle.dumps(measurements))
    pd.testing.assert_frame_equal(post_process(plan, restored).to_frame(), want)


def test_post_process_refuses_what_is_not_its_measurements():
    tree = wide_tree()
    plan = Plan.build(tree, epsilons=[0.5, 0.5, 0.5], methods=["Hc", "Hg", "Hc"], max_size=12)
    other = Plan.build(tree, epsilons=[0.5, 0.5, 1.0], methods=["Hc", "Hg", "Hc"], max_size=12)
    with pytest.raises(ParameterError, match="Measurements that measure"):
        post_process(plan, tree)
    with pytest.raises(ParameterError, match="another plan"):
        post_process(plan, measure(other, tree, seed=0))


# Issue 27, item 11: post_process checks its measurements against the plan.
def _with_level(measurements, at, **change):
    levels = list(measurements.levels)
    levels[at] = dataclasses.replace(levels[at], **change)
    return dataclasses.replace(measurements, levels=tuple(levels))


@pytest.mark.parametrize(
    "change, reason",
    [
        (lambda m: {"values": m.values[:-3], "ptr": np.r_[m.ptr[:-1], m.ptr[-1] - 3]}, "cells for node"),
        (lambda m: {"values": m.values[:-3]}, "offsets from 0"),
        (lambda m: {"values": np.where(np.arange(m.values.size) == 0, np.nan, m.values)}, "NaN"),
        (lambda m: {"values": np.where(np.arange(m.values.size) == 0, 4e18, m.values)}, "beyond"),
        (lambda m: {"values": np.where(np.arange(m.values.size) == 0, 4 * 10**18, m.values)}, "beyond"),
        (lambda m: {"values": m.values + 0.5}, "fractions"),
        (lambda m: {"values": m.values.astype(str)}, "vector of numbers"),
        (lambda m: {"noise": 2 * m.noise}, "with noise double-geometric scale"),
        (lambda m: {"method": "Hg"}, "the plan has 'Hc'"),
        (lambda m: {"bounds": m.bounds + 1}, "K per node"),
        (lambda m: {"level": 0}, "not the plan's measurements"),
    ],
)
def test_post_process_refuses_measurements_that_are_not_the_plans(change, reason):
    tree = wide_tree()
    plan = Plan.build(tree, epsilons=[0.5, 0.5, 0.5], methods=["Hc", "Hg", "Hc"], max_size=12)
    measurements = measure(plan, tree, seed=0)
    post_process(plan, measurements)
    bad = _with_level(measurements, 2, **change(measurements.levels[2]))
    with pytest.raises(ParameterError, match=reason):
        post_process(plan, bad)


def test_post_process_refuses_a_forged_budget_or_a_missing_level():
    tree = wide_tree()
    plan = Plan.build(tree, epsilons=[0.5, 0.5, 0.5], methods=["Hc", "Hg", "Hc"], max_size=12)
    measurements = measure(plan, tree, seed=0)
    cheap = dataclasses.replace(measurements.budget, charges=measurements.budget.charges[:1])
    with pytest.raises(ParameterError, match="budget is not their plan's"):
        post_process(plan, dataclasses.replace(measurements, budget=cheap))
    relabelled = measurements.budget.with_sampler("secure")
    with pytest.raises(ParameterError, match="none of cocoviz's samplers"):
        post_process(plan, dataclasses.replace(measurements, budget=dataclasses.replace(relabelled, sampler="secure")))
    with pytest.raises(ParameterError, match="lack level 1"):
        post_process(
            plan, dataclasses.replace(measurements, levels=(measurements.levels[0], None, measurements.levels[2]))
        )
    with pytest.raises(ParameterError, match="one entry per level"):
        post_process(plan, dataclasses.replace(measurements, levels=measurements.levels[:2]))


def test_measure_refuses_a_tree_the_plan_was_not_built_for(toy_public_tree):
    plan = Plan.build(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10)
    with pytest.raises(InputError, match="another hierarchy"):
        measure(plan, wide_tree(), seed=0)


def test_measurements_hold_the_declared_noisy_answers(toy_public_tree):
    plan = Plan.build(toy_public_tree, epsilons=[1e6, 1.0], methods=["Hc", "Hg"], max_size=6)
    m = measure(plan, toy_public_tree, seed=0)
    assert isinstance(m, Measurements)
    np.testing.assert_array_equal(m.levels[0].node(0), [0, 2, 3, 3, 4, 4])  # Hc[0..K-1] with no noise
    assert [m.levels[1].node(k).size for k in range(2)] == [2, 2]  # Hg: G cells per node
    assert m.levels[1].method == "Hg" and m.levels[1].noise == METHODS["Hg"].sensitivity / 1.0


def test_keyed_noise_does_not_depend_on_order_or_threads():
    tree = wide_tree()
    plan = Plan.build(tree, epsilons=[0.5, 0.5, 0.5], methods=["Hc", "Hg", "Hc"], max_size=12)
    serial = measure(plan, tree, seed=9, workers=1)
    threaded = measure(plan, tree, seed=9, workers=2)
    for a, b in zip(serial.levels, threaded.levels):
        np.testing.assert_array_equal(a.values, b.values)
    # One level measured alone draws what it drew inside the whole measurement.
    noise = open_sampler(9)
    alone = measure_level(plan, tree, 2, noise, workers=1)
    np.testing.assert_array_equal(alone.values, serial.levels[2].values)


# ------------------------------------------------------------------ the privacy holes, closed
def neighbours(toy_persons):
    """The toy persons, and the same with one person added in a new group (Zoe, group 5, region b)."""
    more = pd.concat([toy_persons, pd.DataFrame({"person": ["Zoe"], "group": [5], "region": ["b"]})], ignore_index=True)
    return toy_persons, more


def test_persons_alone_give_g_from_the_data_and_no_secure_release(toy_persons):
    trees = [Hierarchy.from_persons(p, group="group", levels=["region"]) for p in neighbours(toy_persons)]
    # Without a public groups table, G is read from the rows: neighbours have different public facts.
    assert [t.groups(()) for t in trees] == [4, 5]
    for tree in trees:
        assert not tree.public_groups
        with pytest.raises(PrivacyError, match="public groups table"):
            estimate(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hg"], secure=True)
        release = estimate(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hg"], seed=0)
        assert GROUPS_FROM_DATA in release.budget.notes
        assert "not private" in release.budget.describe()


def test_a_public_groups_table_makes_neighbours_share_their_public_facts(toy_persons):
    groups = pd.DataFrame({"group": [1, 2, 3, 4, 5], "region": ["a", "b", "a", "b", "b"]})
    trees = [
        Hierarchy.from_persons(p, group="group", levels=["region"], groups=groups) for p in neighbours(toy_persons)
    ]
    assert [t.groups(()) for t in trees] == [5, 5]  # group 5 has size 0 before Zoe joins
    plans = [Plan.build(t, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10) for t in trees]
    assert plans[0] == plans[1]
    for tree in trees:
        assert tree.public_groups
        release = estimate(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10, secure=True)
        assert release.is_consistent() and GROUPS_FROM_DATA not in release.budget.notes


# Issue 27, item 1: the guard is the tree's, and a plan's shape is compared with the tree's in full.
def _private_rows_tree() -> Hierarchy:
    return Hierarchy.from_persons(pd.DataFrame({"group": [1, 1, 2], "s": ["a", "a", "b"]}), group="group", levels=["s"])


@pytest.mark.parametrize("claim", [None, True, False])
def test_a_hand_made_shape_cannot_forge_public_g_for_a_secure_release(claim):
    tree = _private_rows_tree()
    s = Shape.of(tree)
    args = (s.levels, s.paths, s.parents, s.groups)
    shape = Shape(*args) if claim is None else Shape(*args, public_groups=claim)  # None: the reproduction
    plan = Plan.build(shape, epsilons=[1, 1], methods=["Hg", "Hg"])
    for secure in ({"sampler": "secure"}, {"sampler": "opendp"}, {"secure": True}):
        with pytest.raises(PrivacyError, match="public groups table"):
            post_process(plan, measure(plan, tree, **secure))
    with pytest.raises(PrivacyError, match="public groups table"):
        estimate(tree, epsilons=[1, 1], methods=["Hg", "Hg"], secure=True)
    if claim:  # exploration: the plan claims public G, the tree says otherwise: another hierarchy
        with pytest.raises(InputError, match="public_groups True vs False"):
            measure(plan, tree, seed=0)
    else:
        assert GROUPS_FROM_DATA in post_process(plan, measure(plan, tree, seed=0)).budget.notes


def test_shapes_compare_in_full_and_claim_public_g_only_when_told(toy_public_tree):
    shape = Shape.of(toy_public_tree)
    assert shape.public_groups
    args = (shape.levels, shape.paths, shape.parents, shape.groups)
    assert not Shape(*args).public_groups  # no silent claim
    assert Shape(*args, public_groups=True).same_as(shape)
    assert not Shape(*args).same_as(shape) and not shape.same_as(Shape(*args))
    with pytest.raises(ParameterError, match="public_groups"):
        Shape(*args, public_groups="yes")
    # A plan on a shape that does not claim public G is refused for the public tree (flag differs).
    plan = Plan.build(Shape(*args), epsilons=[1, 1], methods=["Hg", "Hg"])
    with pytest.raises(InputError, match="public_groups False vs True"):
        measure(plan, toy_public_tree, seed=0)
    assert plan != Plan.build(toy_public_tree, epsilons=[1, 1], methods=["Hg", "Hg"])


def test_a_tree_that_does_not_say_its_g_is_public_is_not_public(toy_public_tree):
    class Quiet:  # a tree-like object without the flag
        def __getattr__(self, name):
            if name == "public_groups":
                raise AttributeError(name)
            return getattr(toy_public_tree, name)

    assert not Shape.of(Quiet()).public_groups


def test_k_below_the_largest_group(toy_public_tree):
    # Exploration: refused, naming the private maximum and saying it was read from the data.
    with pytest.raises(ParameterError, match=r"largest group size in the data \(4; read from the private data"):
        estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=3, seed=0)
    # Hg needs no K.
    assert estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hg", "Hg"], max_size=2, seed=0).is_consistent()


def test_secure_release_never_reads_the_private_maximum(toy_public_tree, monkeypatch):
    monkeypatch.setattr(Hierarchy, "max_size", property(lambda self: pytest.fail("read the private maximum")))
    release = estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=3, secure=True)
    assert release.is_consistent()
