"""End to end: releases over random hierarchies and method mixes, budget report, errors, selection."""

from __future__ import annotations

import subprocess
import sys

import copy
import doctest
import math

import numpy as np
import pandas as pd
import pytest
from engine_support import padded, random_trees, release_options
from hypothesis import event, given, settings
from hypothesis import strategies as st

import cocoviz.release
from cocoviz import Hierarchy, emd, estimate, select_mix
from cocoviz.estimators import estimate_hc, estimate_hg
from cocoviz.hierarchy import LevelRuns, node_label
from cocoviz.mechanisms import Budget, FastSampler, SecureSampler, double_geometric_variance

SENSITIVITY = {"Hc": 1.0, "Hg": 1.0, "naive": 2.0}


# ------------------------------------------------------------------ helpers
def all_nodes(tree: Hierarchy) -> list[tuple]:
    return [n for level in range(tree.depth + 1) for n in tree.nodes(level)]


def snapshot(tree: Hierarchy) -> list:
    return [(r.ptr.copy(), r.sizes.copy(), r.counts.copy()) for r in (tree.runs(lvl) for lvl in range(tree.depth + 1))]


def assert_same_snapshot(a, b):
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)


def independently_consistent(release) -> bool:
    """Every node: non-negative integer counts summing to its G, and (if internal) = Σ of its children."""
    tree = release.tree
    for node in all_nodes(tree):
        h = release.histogram(node)
        if h.dtype.kind != "i" or (h < 0).any() or h.sum() != tree.groups(node):
            return False
        kids = tree.children(node)
        if kids:
            hists = [release.histogram(k) for k in kids]
            n = max(len(h), *(len(x) for x in hists))
            if not np.array_equal(sum(padded(x, n) for x in hists), padded(h, n)):
                return False
    return True


def assert_identical(a, b):
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    pd.testing.assert_frame_equal(a.budget.to_frame(), b.budget.to_frame())


def check_release(tree: Hierarchy, release, opts: dict) -> None:
    n_levels = tree.depth + 1
    eps = list(opts["epsilons"])
    # Every node: integral, non-negative, G kept.
    for node in all_nodes(tree):
        h = release.histogram(node)
        assert h.dtype.kind == "i"
        assert (h >= 0).all()
        assert h.sum() == tree.groups(node)
        assert release.error_by_size(node).sum() == emd(tree.histogram(node), h)
    # Consistency, by the release's own check and by an independent one.
    mine = independently_consistent(release)
    assert release.is_consistent() == mine
    if opts["consistency"] != "none":
        assert mine
        for node in all_nodes(tree):
            if tree.children(node):
                h = release.histogram(node)
                np.testing.assert_array_equal(release.children_sum(node)[:len(h)], h)
    # Sizes stay within K when no level can produce a size above it.
    used = [opts["methods"][-1]] if opts["consistency"] == "bottom-up" else opts["methods"]
    if "Hg" not in used:
        assert all(len(release.histogram(n)) <= opts["max_size"] + 1 for n in all_nodes(tree))
    # errors(): the emd column is the emd of the dense histograms.
    errors = release.errors()
    assert len(errors) == len(all_nodes(tree))
    for row, node in zip(errors.itertuples(index=False), all_nodes(tree)):
        assert row.emd == emd(tree.histogram(node), release.histogram(node))
        assert row.groups == tree.groups(node)
        assert row.omniscient == pytest.approx(row.groups / row.epsilon)
    # The budget: Σ ε per level (top-down, none) or all of it on the leaves (bottom-up).
    budget = release.budget
    assert budget.total == pytest.approx(math.fsum(eps))
    if opts["consistency"] == "bottom-up":
        assert budget.per_level() == {tree.depth: pytest.approx(math.fsum(eps))}
        measured = {tree.depth: (opts["methods"][-1], math.fsum(eps))}
    else:
        assert budget.per_level() == pytest.approx({k: e for k, e in enumerate(eps)})
        measured = {k: (opts["methods"][k], eps[k]) for k in range(n_levels)}
    frame = budget.to_frame()
    assert sorted(frame["level"]) == sorted(lvl for lvl in measured for _ in tree.nodes(lvl))
    for m in budget.measurements:
        method, e = measured[m.level]
        assert m.epsilon == pytest.approx(e)
        assert m.sensitivity == SENSITIVITY[method]
        assert m.scale == pytest.approx(SENSITIVITY[method] / e)
        assert m.cells == {"Hc": opts["max_size"], "naive": opts["max_size"] + 1,
                           "Hg": tree.groups(m.node)}[method]
    # The long table agrees with the histograms.
    table = release.to_frame()
    path_of = {node_label(n): n for n in all_nodes(tree)}
    assert set(table["node"]) == set(path_of)
    for (level, node), part in table.groupby(["level", "node"]):
        path = path_of[node]
        assert len(path) == level
        assert part["private_count"].sum() == tree.groups(path)
        np.testing.assert_array_equal(
            padded(tree.histogram(path), part["size"].max() + 1)[part["size"]], part["true_count"])


# ------------------------------------------------------------------ the slides' example
def test_toy_release(toy_tree):
    release = estimate(toy_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0)
    assert release.is_consistent()
    assert release.budget.total == 2.0
    check_release(toy_tree, release, {"epsilons": [1.0, 1.0], "methods": ["Hc", "Hg"], "max_size": 10,
                                      "consistency": "top-down"})
    assert release.parameters()["epsilon_spent"] == 2.0
    assert release.parameters()["p"] == [1, 2]  # the defaults: Hc p = 1, Hg p = 2


def test_toy_release_leaves_the_persons_table_alone(toy_persons):
    before = toy_persons.copy(deep=True)
    tree = Hierarchy.from_persons(toy_persons, group="group", levels=["region"])
    estimate(tree, epsilons=[0.5, 0.5], methods=["Hg", "Hg"], seed=1)
    pd.testing.assert_frame_equal(toy_persons, before)


# ------------------------------------------------------------------ property-based, over random hierarchies
@settings(max_examples=120)
@given(st.data())
def test_random_releases(data):
    rt = data.draw(random_trees())
    tree = rt.tree
    opts = data.draw(release_options(tree.depth + 1, tree.max_size))
    event(f"depth {tree.depth}")
    event(f"consistency {opts['consistency']}")
    event(f"methods {'/'.join(sorted(set(opts['methods'])))}")
    event(f"threaded: {max(len(tree.nodes(lvl)) for lvl in range(tree.depth + 1)) >= 8}")
    opts_before = copy.deepcopy(opts)
    frame_before = rt.frame.copy(deep=True)
    runs_before = snapshot(tree)
    release = estimate(tree, **opts)
    check_release(tree, release, opts)
    # Nothing the caller passed in was changed.
    assert opts == opts_before
    pd.testing.assert_frame_equal(rt.frame, frame_before)
    assert_same_snapshot(snapshot(tree), runs_before)
    # Same seed, same release.
    assert_identical(release, estimate(tree, **opts))


@settings(max_examples=80)
@given(st.data())
def test_level_cache_gives_the_uncached_release_and_reuses_unchanged_levels(data):
    rt = data.draw(random_trees())
    tree = rt.tree
    cache: dict = {}
    first = data.draw(release_options(tree.depth + 1, tree.max_size))
    # A second release that differs in the root's ε, and maybe in merge and consistency.
    second = dict(first, epsilons=[first["epsilons"][0] * 2, *first["epsilons"][1:]],
                  merge=data.draw(st.sampled_from(["weighted", "average"])),
                  consistency=data.draw(st.sampled_from(["top-down", "none", first["consistency"]])))
    for opts in (first, second, first):
        assert_identical(estimate(tree, **opts, level_cache=cache), estimate(tree, **opts))
    measured = {"bottom-up": 1}.get(first["consistency"], tree.depth + 1)
    assert len(cache) <= measured + (tree.depth + 1)   # the third call reused everything
    if first["consistency"] != "bottom-up" and second["consistency"] != "bottom-up" and tree.depth:
        # Only the root's ε changed: the levels below it were measured once.
        assert len(cache) == tree.depth + 2


def test_level_cache_is_not_used_with_the_secure_sampler_or_an_rng(toy_tree):
    cache: dict = {}
    estimate(toy_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, secure=True, level_cache=cache)
    estimate(toy_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, rng=np.random.default_rng(0),
             level_cache=cache)
    assert cache == {}


@settings(max_examples=40)
@given(st.data())
def test_huge_epsilon_releases_the_truth(data):
    rt = data.draw(random_trees())
    tree = rt.tree
    opts = data.draw(release_options(tree.depth + 1, tree.max_size))
    opts["epsilons"] = [1000.0] * (tree.depth + 1)  # noise scale ≤ 1/500: P(noise ≠ 0) ≈ e^-500
    release = estimate(tree, **opts)
    for node in all_nodes(tree):
        np.testing.assert_array_equal(release.histogram(node), tree.histogram(node))
    assert (release.errors()["emd"] == 0).all()


@settings(max_examples=30)
@given(random_trees(max_depth=0), st.integers(0, 1000), st.sampled_from(["Hc", "Hg", "naive"]))
def test_root_only_top_down_equals_independent(rt, seed, method):
    kwargs = dict(epsilons=[0.3], methods=[method], max_size=rt.tree.max_size + 2, seed=seed)
    assert_identical(estimate(rt.tree, consistency="top-down", **kwargs),
                     estimate(rt.tree, consistency="none", **kwargs))


def wide_tree() -> Hierarchy:
    """12 leaves under 3 states, enough nodes for the threaded path."""
    rng = np.random.default_rng(4)
    rows = [(s, f"{s}{c}", int(size)) for s in "pqr" for c in range(4) for size in rng.integers(0, 9, 15)]
    return Hierarchy.from_groups(pd.DataFrame(rows, columns=["state", "county", "size"]), size="size",
                                 levels=["state", "county"])


def test_threaded_estimation_does_not_change_the_release(monkeypatch):
    tree = wide_tree()
    assert len(tree.nodes(2)) >= cocoviz.release._PARALLEL_NODES
    kwargs = dict(epsilons=[0.5, 0.5, 0.5], methods=["Hc", "Hg", "Hc"], max_size=12, seed=8)
    threaded = estimate(tree, **kwargs)
    assert_identical(threaded, estimate(tree, **kwargs))
    monkeypatch.setattr(cocoviz.release, "_PARALLEL_NODES", 10**9)
    assert_identical(threaded, estimate(tree, **kwargs))


def test_seed_and_rng_agree_and_seeds_differ():
    tree = wide_tree()
    kwargs = dict(epsilons=[0.5, 0.5, 0.5], methods=["Hc", "Hc", "Hg"], max_size=12)
    assert_identical(estimate(tree, seed=3, **kwargs), estimate(tree, rng=np.random.default_rng(3), **kwargs))
    a, b = estimate(tree, seed=3, **kwargs), estimate(tree, seed=4, **kwargs)
    assert not a.to_frame().equals(b.to_frame())


# ------------------------------------------------------------------ noise actually applied
class RecordingSampler(FastSampler):
    """A FastSampler that keeps every (values, scale, noisy) it handled."""

    def __init__(self, rng, log=None):
        super().__init__(rng)
        self.log = [] if log is None else log

    def spawn(self, n):
        return [RecordingSampler(child, self.log) for child in self.rng.spawn(n)]

    def __call__(self, values, scale):
        out = super().__call__(values, scale)
        self.log.append((np.array(values, copy=True), scale, out.copy()))
        return out


@pytest.mark.parametrize("method, delta", [("Hc", 1), ("Hg", 1), ("naive", 2)])
def test_realised_noise_has_scale_delta_over_epsilon(monkeypatch, method, delta):
    log = []
    monkeypatch.setattr(cocoviz.release, "FastSampler", lambda rng: RecordingSampler(rng, log))
    counts = pd.DataFrame({"size": np.arange(100), "n": np.full(100, 1000)})  # G = 100,000
    tree = Hierarchy.from_counts(counts, size="size", count="n", levels=[])
    epsilon = 0.5
    release = estimate(tree, epsilons=[epsilon], methods=[method], max_size=100_000, seed=21)
    assert release.is_consistent()
    ((values, scale, noisy),) = log
    assert scale == delta / epsilon
    assert len(values) == {"Hc": 100_000, "Hg": 100_000, "naive": 100_001}[method]
    assert (noisy - values).var() == pytest.approx(double_geometric_variance(delta / epsilon), rel=0.03)
    assert abs((noisy - values).mean()) < 0.1


@pytest.mark.parametrize("method", ["Hc", "Hg"])
def test_release_runs_the_estimator_with_the_planned_p(monkeypatch, method):
    log = []
    monkeypatch.setattr(cocoviz.release, "FastSampler", lambda rng: RecordingSampler(rng, log))
    rng = np.random.default_rng(13)
    tree = Hierarchy.from_groups(pd.DataFrame({"size": rng.integers(0, 30, 400)}), size="size", levels=[])
    released = {}
    for p in (1, 2):
        log.clear()
        release = estimate(tree, epsilons=[0.2], methods=[method], p=p, max_size=40, seed=1, consistency="none")
        ((values, scale, noisy),) = log
        replay = lambda v, **kw: noisy.copy()  # the same noise, straight into the estimator
        sizes, counts = tree.node_runs(())
        est = (estimate_hc(sizes, counts, epsilon=0.2, max_size=40, p=p, measure=replay) if method == "Hc"
               else estimate_hg(sizes, counts, epsilon=0.2, p=p, measure=replay))
        want = np.zeros(int(est.sizes.max()) + 1, np.int64)
        np.add.at(want, est.sizes, est.counts)
        np.testing.assert_array_equal(release.histogram(()), want)
        assert release.parameters()["p"] == [p]
        released[p] = release.histogram(())
    # Same seed, same noise: p = 1 and p = 2 must give different fits here, or the test proves nothing.
    assert not np.array_equal(released[1], released[2])


def test_error_shrinks_as_epsilon_grows():
    tree = wide_tree()
    mean_emd = {}
    for eps in (0.1, 0.3, 1.0, 3.0, 100.0):
        emds = [estimate(tree, epsilons=[eps] * 3, methods=["Hc", "Hg", "Hc"], max_size=12, seed=s)
                .errors()["emd"].mean() for s in range(5)]
        mean_emd[eps] = float(np.mean(emds))
    assert mean_emd[0.1] > mean_emd[0.3] > mean_emd[1.0] > mean_emd[3.0] > 0
    assert mean_emd[3.0] < mean_emd[0.1] / 10
    assert mean_emd[100.0] == 0.0  # noise scale 1/100: P(noise ≠ 0) ≈ 2e-44 per cell


# ------------------------------------------------------------------ budget report
@pytest.mark.parametrize("consistency", ["top-down", "none", "bottom-up"])
def test_budget_report(consistency):
    tree = wide_tree()
    release = estimate(tree, epsilons=[0.5, 0.25, 1.0], methods=["Hc", "Hg", "naive"], max_size=12,
                       consistency=consistency, seed=0)
    budget = release.budget
    assert budget.total == pytest.approx(1.75)
    text = budget.describe()
    assert text.startswith("total ε spent: 1.75")
    assert "sampler fast: numpy PCG64" in text and "not for release" in text
    if consistency == "bottom-up":
        assert budget.per_level() == {2: 1.75}
        assert "level 2: naive" not in text  # the quantity is named, not the method
        assert "level 2: H[0..12] on 12 node(s), 156 cells, Δ = 2, scale Δ/ε = 1.14286" in text
        assert list(release.errors()["epsilon"].unique()) == [1.75]
    else:
        assert budget.per_level() == {0: 0.5, 1: 0.25, 2: 1.0}
        assert "level 0: Hc[0..11] on 1 node(s), 12 cells, Δ = 1, scale Δ/ε = 2" in text
        assert f"level 1: Hg on 3 node(s), {tree.groups(()):,} cells, Δ = 1, scale Δ/ε = 4" in text
        assert "level 2: H[0..12] on 12 node(s), 156 cells, Δ = 2, scale Δ/ε = 2" in text
        assert list(release.errors().groupby("level")["epsilon"].first()) == [0.5, 0.25, 1.0]


def test_secure_release_reports_the_opendp_sampler(toy_tree):
    release = estimate(toy_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, secure=True)
    assert release.is_consistent()
    assert release.sampler == SecureSampler.name
    assert release.budget.samplers == [SecureSampler.name]
    assert "OpenDP" in release.budget.describe()
    assert release.parameters()["sampler"] == SecureSampler.name


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("change, problem", [
    ({"epsilons": [0.0, 1.0]}, "ε of level 0 must be a finite number > 0"),
    ({"epsilons": [1.0, -1.0]}, "ε of level 1 must be a finite number > 0"),
    ({"epsilons": [float("inf"), 1.0]}, "ε of level 0 must be a finite number > 0"),
    ({"epsilons": [1.0, float("nan")]}, "ε of level 1 must be a finite number > 0"),
    ({"epsilons": ["one", 1.0]}, "ε of level 0 must be a number"),
    ({"epsilons": "1.0"}, "epsilons must be a sequence"),
    ({"epsilons": 1.0}, "epsilons must be a sequence"),
    ({"epsilons": [1.0]}, "epsilons has 1 entries but the hierarchy has 2 levels"),
    ({"epsilons": [1.0, 1.0, 1.0]}, "epsilons has 3 entries"),
    ({"methods": ["Hc"]}, "methods has 1 entries but the hierarchy has 2 levels"),
    ({"methods": ["Hc", "hist"]}, "method of level 1 must be one of"),
    ({"p": 3}, "p of level 0 must be 1 or 2"),
    ({"p": [1, 0]}, "p of level 1 must be 1 or 2"),
    ({"p": [1]}, "p has 1 entries"),
    ({"max_size": 3}, "below the largest group size"),
    ({"max_size": 0}, "whole number >= 1"),
    ({"max_size": 4.5}, "whole number >= 1"),
    ({"consistency": "sideways"}, "consistency must be one of"),
    ({"merge": "median"}, "merge must be one of"),
])
def test_bad_release_parameters(toy_tree, change, problem):
    kwargs = {"epsilons": [1.0, 1.0], "methods": ["Hc", "Hg"], "max_size": 10, "seed": 0, **change}
    with pytest.raises(ValueError, match=problem):
        estimate(toy_tree, **kwargs)


def test_k_below_largest_size_is_fine_for_hg_only(toy_tree):
    release = estimate(toy_tree, epsilons=[1.0, 1.0], methods=["Hg", "Hg"], max_size=2, seed=0)
    assert release.is_consistent()


def level(*nodes):
    """LevelRuns from one ``{size: count}`` dict per node."""
    ptr = np.cumsum([0] + [len(n) for n in nodes])
    return LevelRuns(ptr, np.array([s for n in nodes for s in sorted(n)], np.int64),
                     np.array([n[s] for n in nodes for s in sorted(n)], np.int64))


@pytest.mark.parametrize("root, a, b, consistent", [
    ({1: 2, 2: 2}, {1: 1, 2: 1}, {1: 1, 2: 1}, True),
    ({1: 3, 2: 1}, {1: 1, 2: 1}, {1: 1, 2: 1}, False),   # same sizes, counts differ from the children's sum
    ({1: 2, 3: 2}, {1: 1, 2: 1}, {1: 1, 2: 1}, False),   # sizes differ
    ({1: 2, 2: 2}, {1: 1, 2: 1}, {1: 3, 2: -1}, False),  # a negative count (G still 2)
    ({1: 3, 2: 2}, {1: 2, 2: 1}, {1: 1, 2: 1}, False),   # sums agree but G is not kept
])
def test_is_consistent_on_crafted_releases(toy_tree, root, a, b, consistent):
    plan = estimate(toy_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=10, seed=0).plan
    release = cocoviz.release.Release(toy_tree, [level(root), level(a, b)], Budget(), plan, "none")
    assert release.is_consistent() == consistent


# ------------------------------------------------------------------ algorithm selection
def test_select_mix(toy_tree):
    candidates = [("Hc", "Hc"), ("Hg", "Hg"), ("Hc", "Hg")]
    sel = select_mix(toy_tree, candidates, epsilons=[0.5, 1.0], epsilon_select=0.25, max_size=10, seed=2)
    assert sel.budget.total == pytest.approx(3 * 1.5 + 0.25)
    assert sel.release is sel.releases[sel.chosen]
    assert tuple(sel.release.plan.methods) == sel.candidates[sel.chosen]
    assert [tuple(r.plan.methods) for r in sel.releases] == candidates
    assert sel.chosen == int(np.argmin(sel.noisy_scores))
    assert all(r.is_consistent() and r.budget.total == pytest.approx(1.5) for r in sel.releases)
    (m,) = sel.budget.measurements  # the noisy scores: one per candidate
    assert (m.level, m.cells, m.epsilon, m.sensitivity) == (None, 3, 0.25, 4.0)
    text = sel.budget.describe()
    assert "candidate 1: Hc x Hc: ε = 1.5" in text and "whole data" in text
    again = select_mix(toy_tree, candidates, epsilons=[0.5, 1.0], epsilon_select=0.25, max_size=10, seed=2)
    assert again.chosen == sel.chosen
    np.testing.assert_array_equal(again.noisy_scores, sel.noisy_scores)


def test_select_mix_picks_the_lowest_total_emd():
    tree = wide_tree()
    candidates = [("Hg", "Hg", "Hg"), ("Hc", "Hc", "Hc"), ("naive", "naive", "naive")]
    # A huge selection budget makes the noise on the scores vanish (scale 6/10^6).
    sel = select_mix(tree, candidates, epsilons=[0.2, 0.2, 0.2], epsilon_select=1e6, max_size=12, seed=5)
    totals = [int(r.errors()["emd"].sum()) for r in sel.releases]
    np.testing.assert_array_equal(sel.noisy_scores, totals)
    assert len(set(totals)) == 3
    assert sel.chosen == int(np.argmin(totals))


def test_select_mix_bad_input(toy_tree):
    with pytest.raises(ValueError, match="at least one candidate"):
        select_mix(toy_tree, [], epsilons=[1.0, 1.0], epsilon_select=1.0, max_size=10)
    with pytest.raises(ValueError, match="ε of the selection must be a finite number > 0"):
        select_mix(toy_tree, [("Hc", "Hc")], epsilons=[1.0, 1.0], epsilon_select=0, max_size=10)


def test_doctests():
    assert doctest.testmod(cocoviz.release).failed == 0


def test_compile_kernels_compiles_every_numba_kernel():
    # In a fresh interpreter no kernel has a compiled signature until something calls it.
    code = """
from cocoviz import compile_kernels, consistency, isotonic
# The kernels Python calls (consistency._append is compiled inside _match_level).
kernels = [isotonic._slope_trick, isotonic._integer_span, isotonic._backward, isotonic._slope_trick_counts,
           consistency._match_level]
assert not any(k.signatures for k in kernels)
compile_kernels()
missing = [k.__name__ for k in kernels if not k.signatures]
assert not missing, missing
print(len(kernels))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == 5


def test_errors_are_computed_once_and_handed_out_as_copies(toy_tree):
    release = estimate(toy_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=4)
    first = release.errors()
    first["emd"] = -1                                  # a caller scribbling on its frame
    again = release.errors()
    assert (again["emd"] >= 0).all()
    assert again["emd"].tolist() == estimate(toy_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10,
                                             seed=4).errors()["emd"].tolist()
    assert release.level_errors()["max_emd"].tolist() == again.groupby("level")["emd"].max().tolist()
