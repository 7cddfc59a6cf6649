"""End to end through ``estimate``: releases over random hierarchies and method mixes, caches, threads, noise."""

from __future__ import annotations

import copy
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from cocoviz import Hierarchy, emd, estimate, evaluate, size_errors
from cocoviz.hierarchy import node_label
from cocoviz.measure.schedule import PARALLEL_NODES
from cocoviz.methods.estimators import fit_hc, fit_hg
from cocoviz.privacy.budget import double_geometric_variance
from cocoviz.privacy.noise import FastSampler
from tests.support.engine import padded, random_trees, release_options

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


def independently_consistent(tree: Hierarchy, release) -> bool:
    """Every node: non-negative integer counts summing to its G, and (if internal) = Σ of its children."""
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
    assert a.budget == b.budget


def check_release(tree: Hierarchy, release, opts: dict) -> None:
    n_levels = tree.depth + 1
    eps = list(opts["epsilons"])
    for node in all_nodes(tree):
        h = release.histogram(node)
        assert h.dtype.kind == "i"
        assert (h >= 0).all()
        assert h.sum() == tree.groups(node)
        assert size_errors(tree, release, node).sum() == emd(tree.histogram(node), h)
    mine = independently_consistent(tree, release)
    assert release.is_consistent() == mine
    if opts["consistency"] != "none":
        assert mine
        for node in all_nodes(tree):
            if tree.children(node):
                h = release.histogram(node)
                np.testing.assert_array_equal(release.children_sum(node)[: len(h)], h)
    used = [opts["methods"][-1]] if opts["consistency"] == "bottom-up" else opts["methods"]
    if "Hg" not in used:
        assert all(len(release.histogram(n)) <= opts["max_size"] + 1 for n in all_nodes(tree))
    # evaluate(): the emd column is the emd of the dense histograms; the yardstick is D/ε.
    errors = evaluate(tree, release)
    assert len(errors) == len(all_nodes(tree))
    for row, node in zip(errors.itertuples(index=False), all_nodes(tree)):
        assert row.emd == emd(tree.histogram(node), release.histogram(node))
        assert row.groups == tree.groups(node)
        assert row.sizes == np.count_nonzero(tree.histogram(node))
        assert row.omniscient == pytest.approx(row.sizes / row.epsilon)
    # The budget: exactly the plan's cost; Σ ε per level, or all of it on the leaves (bottom-up).
    budget = release.budget
    assert budget.charges == release.plan.cost().charges
    assert budget.total == pytest.approx(math.fsum(eps))
    if opts["consistency"] == "bottom-up":
        assert budget.per_level() == {tree.depth: pytest.approx(math.fsum(eps))}
        measured = {tree.depth: (opts["methods"][-1], math.fsum(eps))}
    else:
        assert budget.per_level() == pytest.approx({k: e for k, e in enumerate(eps)})
        measured = {k: (opts["methods"][k], eps[k]) for k in range(n_levels)}
    assert sorted(c.level for c in budget.charges) == sorted(measured)
    for c in budget.charges:
        method, e = measured[c.level]
        nodes = tree.nodes(c.level)
        assert c.nodes == len(nodes) and c.node == (nodes[0] if len(nodes) == 1 else ())
        assert c.epsilon == pytest.approx(e)
        assert c.sensitivity == SENSITIVITY[method]
        assert c.scale == pytest.approx(SENSITIVITY[method] / e)
        per_node = {"Hc": opts["max_size"], "naive": opts["max_size"] + 1}
        assert c.cells == sum(per_node.get(method) or tree.groups(n) for n in nodes)
    # The long table agrees with the histograms and holds private output only.
    table = release.to_frame()
    assert list(table.columns) == ["level", "node", "size", "count"]
    path_of = {node_label(n): n for n in all_nodes(tree)}
    assert set(table["node"]) == set(path_of)
    for (level, node), part in table.groupby(["level", "node"]):
        path = path_of[node]
        assert len(path) == level
        np.testing.assert_array_equal(release.histogram(path)[part["size"]], part["count"])
        assert part["count"].sum() == tree.groups(path)


# ------------------------------------------------------------------ the slides' example
def test_toy_release(toy_public_tree):
    release = estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0)
    assert release.is_consistent()
    assert release.budget.total == 2.0
    check_release(
        toy_public_tree,
        release,
        {"epsilons": [1.0, 1.0], "methods": ["Hc", "Hg"], "max_size": 10, "consistency": "top-down"},
    )
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
    opts_before = copy.deepcopy(opts)
    frame_before = rt.frame.copy(deep=True)
    runs_before = snapshot(tree)
    release = estimate(tree, **opts)
    check_release(tree, release, opts)
    assert opts == opts_before
    pd.testing.assert_frame_equal(rt.frame, frame_before)
    assert_same_snapshot(snapshot(tree), runs_before)
    assert_identical(release, estimate(tree, **opts))


@settings(max_examples=80)
@given(st.data())
def test_level_cache_gives_the_uncached_release_and_reuses_unchanged_levels(data):
    rt = data.draw(random_trees())
    tree = rt.tree
    cache: dict = {}
    first = data.draw(release_options(tree.depth + 1, tree.max_size))
    second = dict(
        first,
        epsilons=[first["epsilons"][0] * 2, *first["epsilons"][1:]],
        merge=data.draw(st.sampled_from(["weighted", "average"])),
        consistency=data.draw(st.sampled_from(["top-down", "none", first["consistency"]])),
    )
    for opts in (first, second, first):
        assert_identical(estimate(tree, **opts, level_cache=cache), estimate(tree, **opts))
    measured = {"bottom-up": 1}.get(first["consistency"], tree.depth + 1)
    assert len(cache) <= measured + (tree.depth + 1)  # the third call reused everything
    if first["consistency"] != "bottom-up" and second["consistency"] != "bottom-up" and tree.depth:
        assert len(cache) == tree.depth + 2  # only the root's ε changed: the levels below were fitted once


def test_level_cache_is_not_used_with_the_secure_sampler_or_an_rng(toy_public_tree):
    cache: dict = {}
    estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, secure=True, level_cache=cache)
    estimate(
        toy_public_tree,
        epsilons=[1.0, 1.0],
        methods=["Hc", "Hg"],
        max_size=10,
        rng=np.random.default_rng(0),
        level_cache=cache,
    )
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
    assert (evaluate(tree, release)["emd"] == 0).all()


@settings(max_examples=30)
@given(random_trees(max_depth=0), st.integers(0, 1000), st.sampled_from(["Hc", "Hg", "naive"]))
def test_root_only_top_down_equals_independent(rt, seed, method):
    kwargs = dict(epsilons=[0.3], methods=[method], max_size=rt.tree.max_size + 2, seed=seed)
    a = estimate(rt.tree, consistency="top-down", **kwargs)
    b = estimate(rt.tree, consistency="none", **kwargs)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())


def wide_tree() -> Hierarchy:
    """12 leaves under 3 states, enough nodes for the threaded path."""
    rng = np.random.default_rng(4)
    rows = [(s, f"{s}{c}", int(size)) for s in "pqr" for c in range(4) for size in rng.integers(0, 9, 15)]
    return Hierarchy.from_groups(
        pd.DataFrame(rows, columns=["state", "county", "size"]), size="size", levels=["state", "county"]
    )


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_threads_do_not_change_a_seeded_release(workers):
    tree = wide_tree()
    assert len(tree.nodes(2)) >= PARALLEL_NODES
    kwargs = dict(epsilons=[0.5, 0.5, 0.5], methods=["Hc", "Hg", "Hc"], max_size=12, seed=8)
    assert_identical(estimate(tree, **kwargs), estimate(tree, workers=workers, **kwargs))


def test_noise_is_keyed_by_level_and_node():
    """Changing only the root's method leaves every county's independent estimate unchanged,
    and a level's noise does not depend on what was measured before it."""
    tree = wide_tree()
    kwargs = dict(epsilons=[0.5, 0.5, 0.5], max_size=12, seed=8, consistency="none")
    a = estimate(tree, methods=["Hc", "Hg", "Hc"], **kwargs)
    b = estimate(tree, methods=["Hg", "Hg", "Hc"], **kwargs)
    assert not np.array_equal(a.histogram(()), b.histogram(()))  # the root did change
    for level in (1, 2):
        for node in tree.nodes(level):
            np.testing.assert_array_equal(a.histogram(node), b.histogram(node))


def test_seed_and_rng_reproduce_and_seeds_differ():
    tree = wide_tree()
    kwargs = dict(epsilons=[0.5, 0.5, 0.5], methods=["Hc", "Hc", "Hg"], max_size=12)
    assert_identical(
        estimate(tree, rng=np.random.default_rng(3), **kwargs), estimate(tree, rng=np.random.default_rng(3), **kwargs)
    )
    a, b = estimate(tree, seed=3, **kwargs), estimate(tree, seed=4, **kwargs)
    assert not a.to_frame().equals(b.to_frame())
    assert not estimate(tree, seed=(3, 1), **kwargs).to_frame().equals(a.to_frame())


# ------------------------------------------------------------------ noise actually applied
@pytest.fixture
def noise_log(monkeypatch):
    """Every (values, scale, key, noisy) the fast sampler handled (a whole-level draw: key of its first node)."""
    log = []
    draw, draw_level = FastSampler.draw, FastSampler.draw_level

    inside_draw = []

    def recording(self, values, scale, key):
        inside_draw.append(True)  # draw() goes through draw_level(): log the call once
        try:
            out = draw(self, values, scale, key)
        finally:
            inside_draw.pop()
        log.append((np.array(values, copy=True), scale, tuple(key), out.copy()))
        return out

    def recording_level(self, values, ptr, scale, level, query=0, first_node=0, offset=0, out=None):
        before = np.array(values, copy=True)
        result = draw_level(self, values, ptr, scale, level, query, first_node, offset, out)
        if not inside_draw:
            log.append((before, scale, (level, first_node, query), result.copy()))
        return result

    monkeypatch.setattr(FastSampler, "draw", recording)
    monkeypatch.setattr(FastSampler, "draw_level", recording_level)
    return log


@pytest.mark.parametrize("method, delta", [("Hc", 1), ("Hg", 1), ("naive", 2)])
def test_realised_noise_has_scale_delta_over_epsilon(noise_log, method, delta):
    counts = pd.DataFrame({"size": np.arange(100), "n": np.full(100, 1000)})  # G = 100,000
    tree = Hierarchy.from_counts(counts, size="size", count="n", levels=[])
    epsilon = 0.5
    release = estimate(tree, epsilons=[epsilon], methods=[method], max_size=100_000, seed=21)
    assert release.is_consistent()
    ((values, scale, key, noisy),) = noise_log
    assert scale == delta / epsilon and key == (0, 0, 0)
    assert len(values) == {"Hc": 100_000, "Hg": 100_000, "naive": 100_001}[method]
    assert (noisy - values).var() == pytest.approx(double_geometric_variance(delta / epsilon), rel=0.03)
    assert abs((noisy - values).mean()) < 0.1


@pytest.mark.parametrize("method", ["Hc", "Hg"])
def test_release_fits_with_the_planned_p(noise_log, method):
    rng = np.random.default_rng(13)
    tree = Hierarchy.from_groups(pd.DataFrame({"size": rng.integers(0, 30, 400)}), size="size", levels=[])
    released = {}
    for p in (1, 2):
        noise_log.clear()
        release = estimate(tree, epsilons=[0.2], methods=[method], p=p, max_size=40, seed=1, consistency="none")
        ((_, _, _, noisy),) = noise_log
        fit = fit_hc if method == "Hc" else fit_hg
        est = fit(noisy, groups=400, epsilon=0.2, p=p, max_size=40)
        want = np.zeros(int(est.sizes.max()) + 1, np.int64)
        np.add.at(want, est.sizes, est.counts)
        np.testing.assert_array_equal(release.histogram(()), want)
        assert release.parameters()["p"] == [p]
        released[p] = release.histogram(())
    assert not np.array_equal(released[1], released[2])  # or the test proves nothing


def test_error_shrinks_as_epsilon_grows():
    tree = wide_tree()
    mean_emd = {}
    for eps in (0.1, 0.3, 1.0, 3.0, 100.0):
        emds = [
            evaluate(tree, estimate(tree, epsilons=[eps] * 3, methods=["Hc", "Hg", "Hc"], max_size=12, seed=s))[
                "emd"
            ].mean()
            for s in range(5)
        ]
        mean_emd[eps] = float(np.mean(emds))
    assert mean_emd[0.1] > mean_emd[0.3] > mean_emd[1.0] > mean_emd[3.0] > 0
    assert mean_emd[3.0] < mean_emd[0.1] / 10
    assert mean_emd[100.0] == 0.0  # noise scale 1/100: P(noise ≠ 0) ≈ 2e-44 per cell


# ------------------------------------------------------------------ budget report
@pytest.mark.parametrize("consistency", ["top-down", "none", "bottom-up"])
def test_budget_report(consistency):
    tree = wide_tree()
    release = estimate(
        tree, epsilons=[0.5, 0.25, 1.0], methods=["Hc", "Hg", "naive"], max_size=12, consistency=consistency, seed=0
    )
    budget = release.budget
    assert budget.total == pytest.approx(1.75)
    text = budget.describe()
    assert text.startswith("total ε spent: 1.75")
    assert "sampler: fast: Philox counter streams" in text and "not for release" in text
    ev = evaluate(tree, release)
    if consistency == "bottom-up":
        assert budget.per_level() == {2: 1.75}
        assert "level 2: H[0..12] on 12 node(s), 156 cells, Δ = 2, scale Δ/ε = 1.14286" in text
        assert list(ev["epsilon"].unique()) == [1.75]
    else:
        assert budget.per_level() == {0: 0.5, 1: 0.25, 2: 1.0}
        assert "level 0: Hc[0..11] on 1 node(s), 12 cells, Δ = 1, scale Δ/ε = 2" in text
        assert f"level 1: Hg on 3 node(s), {tree.groups(()):,} cells, Δ = 1, scale Δ/ε = 4" in text
        assert "level 2: H[0..12] on 12 node(s), 156 cells, Δ = 2, scale Δ/ε = 2" in text
        assert list(ev.groupby("level")["epsilon"].first()) == [0.5, 0.25, 1.0]


def test_secure_release_reports_the_sampler(toy_public_tree):
    release = estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, secure=True)
    assert release.is_consistent()
    assert release.sampler.startswith("secure: exact discrete Laplace")
    assert "AES-CTR" in release.budget.describe()
    assert release.parameters()["sampler"] == release.sampler
    same = estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, sampler="secure")
    assert same.sampler == release.sampler
    opendp = estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, sampler="opendp")
    assert opendp.sampler.startswith("opendp: OpenDP") and "OpenDP" in opendp.budget.describe()


def test_secure_release_truncates_at_a_public_k_instead_of_refusing(toy_public_tree):
    """A refusal would tell the largest group; a secure release counts groups above K at K."""
    release = estimate(toy_public_tree, epsilons=[1e6, 1e6], methods=["Hc", "Hc"], max_size=2, secure=True)
    np.testing.assert_array_equal(release.histogram(()), [0, 2, 2])
    assert "count as size K" in release.budget.describe()


def test_compile_kernels_compiles_every_numba_kernel():
    # In a fresh interpreter no kernel has a compiled signature until something calls it.
    code = """
import sys
from cocoviz import compile_kernels
assert "numba" not in sys.modules  # import cocoviz does not load numba
from cocoviz.methods import _isotonic_kernels as iso
from cocoviz.consistency import _matching_kernels as match
kernels = [iso.slope_trick, iso.integer_span, iso.backward, iso.slope_trick_counts, match.match_level]
assert not any(k.signatures for k in kernels)
compile_kernels()
missing = [k.__name__ for k in kernels if not k.signatures]
assert not missing, missing
print(len(kernels))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == 5


def test_progress_counts_the_measured_levels_and_changes_nothing(toy_public_tree):
    calls = []
    opts = dict(epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10, seed=3)
    release = estimate(toy_public_tree, progress=lambda done, total: calls.append((done, total)), **opts)
    assert calls == [(0, 2), (1, 2), (2, 2)]
    pd.testing.assert_frame_equal(release.to_frame(), estimate(toy_public_tree, **opts).to_frame())
    calls.clear()
    estimate(toy_public_tree, consistency="bottom-up", progress=lambda d, t: calls.append((d, t)), **opts)
    assert calls == [(0, 1), (1, 1)]
