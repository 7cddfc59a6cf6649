"""The published object: consistency check, private-only table, save / load round trip."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cocoviz import Budget, InputError, Plan, Release, estimate, load_release
from cocoviz.hierarchy import LevelRuns
from tests.support.engine import random_trees, release_options


def level(*nodes):
    """LevelRuns from one ``{size: count}`` dict per node."""
    ptr = np.cumsum([0] + [len(n) for n in nodes])
    return LevelRuns(
        ptr,
        np.array([s for n in nodes for s in sorted(n)], np.int64),
        np.array([n[s] for n in nodes for s in sorted(n)], np.int64),
    )


@pytest.mark.parametrize(
    "root, a, b, consistent",
    [
        ({1: 2, 2: 2}, {1: 1, 2: 1}, {1: 1, 2: 1}, True),
        ({1: 3, 2: 1}, {1: 1, 2: 1}, {1: 1, 2: 1}, False),  # same sizes, counts differ from the children's sum
        ({1: 2, 3: 2}, {1: 1, 2: 1}, {1: 1, 2: 1}, False),  # sizes differ
        ({1: 2, 2: 2}, {1: 1, 2: 1}, {1: 3, 2: -1}, False),  # a negative count (G still 2)
        ({1: 3, 2: 2}, {1: 2, 2: 1}, {1: 1, 2: 1}, False),  # sums agree but G is not kept
    ],
)
def test_is_consistent_on_crafted_releases(toy_public_tree, root, a, b, consistent):
    plan = Plan.build(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=10)
    release = Release(plan, [level(root), level(a, b)], Budget())
    assert release.is_consistent() == consistent


def test_a_release_holds_no_private_data(toy_public_tree):
    release = estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0)
    assert not hasattr(release, "tree")
    assert not any(type(v).__name__ == "Hierarchy" for v in vars(release).values())
    frame = release.to_frame()
    assert list(frame.columns) == ["level", "node", "size", "count"]
    assert not any("true" in c for c in frame.columns)
    assert frame.groupby("level")["count"].sum().tolist() == [4, 4]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_save_and_load_round_trip_exactly(tmp_path, data):
    rt = data.draw(random_trees())
    release = estimate(rt.tree, **data.draw(release_options(rt.tree.depth + 1, rt.tree.max_size)))
    path = tmp_path / "release.parquet"
    release.save(path)
    again = load_release(path)
    pd.testing.assert_frame_equal(again.to_frame(), release.to_frame())
    for lvl in range(rt.tree.depth + 1):
        for name in ("ptr", "sizes", "counts"):
            np.testing.assert_array_equal(getattr(again.runs(lvl), name), getattr(release.runs(lvl), name))
    assert again.plan == release.plan
    assert again.budget == release.budget and again.budget.total == release.budget.total
    assert again.parameters() == release.parameters()
    assert again.is_consistent() == release.is_consistent()


def test_load_refuses_what_is_not_a_release(tmp_path):
    path = tmp_path / "other.parquet"
    pd.DataFrame({"x": [1]}).to_parquet(path)
    with pytest.raises(InputError, match="not a saved cocoviz release"):
        load_release(path)
    with pytest.raises(InputError, match="not a saved cocoviz release"):
        load_release(tmp_path / "missing.parquet")


def test_histogram_and_children_sum(toy_public_tree):
    release = estimate(toy_public_tree, epsilons=[1e6, 1e6], methods=["Hc", "Hg"], max_size=10, seed=0)
    np.testing.assert_array_equal(release.histogram(()), [0, 2, 1, 0, 1])
    np.testing.assert_array_equal(release.children_sum(()), [0, 2, 1, 0, 1])
    assert release.children_sum(("a",)) is None
    with pytest.raises(KeyError):
        release.histogram(("zz",))
    assert "ε spent 2e+06" in repr(release)


def test_children_sum_is_the_sum_of_the_childrens_histograms_also_when_inconsistent():
    from cocoviz.datasets import load_dataset

    tree = load_dataset("taxi")
    release = estimate(tree, epsilons=[0.5] * 3, methods=["Hg"] * 3, consistency="none", seed=1)
    for level in range(tree.depth):
        for node in tree.nodes(level):
            hists = [release.histogram(c) for c in tree.children(node)]
            expected = np.zeros(max(len(release.histogram(node)), *map(len, hists)), np.int64)
            for h in hists:
                expected[: len(h)] += h
            np.testing.assert_array_equal(release.children_sum(node), expected)


def _union_up(runs_per_node: dict, ancestor) -> dict:
    """Brute force of the union's statement (cocoviz.accuracy.stated.released): ``{(node, size): (dense, sparse,
    count)}``,
    dense and sparse the node's Σ stated·count over runs stating < 1 and ≥ 1, into ``{(ancestor, size): stated}``:
    the nodes' dense sums in quadrature, their sparse sums linearly, over the union's groups."""
    out: dict = {}
    for (node, size), (dense, sparse, mass) in runs_per_node.items():
        key = (ancestor(node), size)
        q, s, m = out.get(key, (0.0, 0.0, 0))
        out[key] = (q + dense * dense, s + sparse, m + mass)
    return {key: (np.sqrt(q) + s) / m for key, (q, s, m) in out.items() if m}


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_each_released_run_states_its_groups_variance_from_the_fits_alone(data):
    """estimate and post_process state the same variances; a level's own fit's (none), or, bottom-up, the
    leaves' own at the leaves and their union's above (dense runs in quadrature), brute force; stated_errors is
    their square root beside the runs."""
    from cocoviz import measure, post_process
    from cocoviz.accuracy.stated.topdown import fitted_stated
    from cocoviz.measure.measurements import level_bounds
    from cocoviz.release.post_process import fit_level

    rt = data.draw(random_trees())
    options = data.draw(release_options(rt.tree.depth + 1, rt.tree.max_size))
    release = estimate(rt.tree, **options, stated=True)
    plan = release.plan
    measurements = measure(plan, rt.tree, seed=options["seed"])
    split = post_process(plan, measurements, stated=True)
    cache: dict = {}
    cached = [estimate(rt.tree, **options, level_cache=cache, stated=stated) for stated in (False, True)][-1]
    plain = estimate(rt.tree, **options)  # without the statements: the same release, and none stated
    pd.testing.assert_frame_equal(plain.to_frame(), release.to_frame())
    assert all(s is None for s in plain.stated)
    for other in (split, cached):
        for a, b in zip(release.stated, other.stated):
            np.testing.assert_array_equal(a, b)
    if options["consistency"] != "top-down":
        depth = rt.tree.depth
        for level in plan.measured_levels() if options["consistency"] == "none" else [depth]:
            est = fit_level(plan, measurements.levels[level])
            bounds = level_bounds(plan, level, measurements.levels[level].bounds)
            method, epsilon = plan.level_method(level).name, plan.fit_epsilon(level)
            own_stated = fitted_stated(method, est, epsilon=epsilon, p=plan.ps[level], bounds=bounds)
            runs_of_fit = [((int(n), int(s)), (float(v) * c, int(c))) for n, s, c, v in
                           zip(est.node_ids(), est.sizes, est.counts, own_stated.stated)]  # fmt: skip
            own: dict = {}
            for key, (weight, mass) in runs_of_fit:  # a fit may hold two runs of one size (split by variance)
                d, s, m = own.get(key, (0.0, 0.0, 0))
                dense = weight < 1.0 * mass  # stated < 1: misplaced groups, added in quadrature above the node
                own[key] = (d + weight * dense, s + weight * (not dense), m + mass)
            stated = {k: (d + s) / m for k, (d, s, m) in own.items() if m}
            ancestor = np.arange(plan.shape.n_nodes(level))
            above = range(level, -1, -1) if options["consistency"] == "bottom-up" else [level]
            for up in above:
                if up < level:
                    ancestor = plan.shape.parent_index(up + 1)[ancestor]
                    stated = _union_up(own, lambda n, a=ancestor: int(a[n]))
                runs = release.runs(up)
                got = release.stated[up]
                keys = list(zip(runs.node_ids().tolist(), runs.sizes.tolist()))
                assert sorted(keys) == sorted(stated)
                np.testing.assert_allclose(got, [stated[k] for k in keys], rtol=1e-5)
    for level in range(rt.tree.depth + 1):
        node = plan.shape.paths[level][0]
        frame = release.stated_errors(node)
        sizes, counts = release.runs(level).node(0)
        assert frame["size"].tolist() == sizes.tolist() and frame["count"].tolist() == counts.tolist()
        np.testing.assert_allclose(frame["stated_se"] ** 2, frame["stated_variance"])


def test_stated_errors_are_refused_where_the_release_does_not_carry_them(tmp_path, toy_public_tree):
    from cocoviz import ParameterError

    release = estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0, stated=True)
    assert (release.stated_errors(("a",))["stated_se"] > 0).all()
    release.save(tmp_path / "r.parquet", stated=False)
    with pytest.raises(ParameterError, match="not computed for this release"):
        load_release(tmp_path / "r.parquet").stated_errors(("a",))


def test_a_release_made_without_stated_errors_says_so_and_saves_none(tmp_path, toy_public_tree):
    """The default: no statements computed; asked for them, the release names the way to get them."""
    from cocoviz import ParameterError

    release = estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0)
    assert release.stated == [None, None]
    with pytest.raises(ParameterError, match=r"stated=True"):
        release.stated_errors(("a",))
    release.save(tmp_path / "r.parquet")
    assert load_release(tmp_path / "r.parquet").stated == [None, None]


def test_a_saved_release_states_the_same_errors_and_its_signature_covers_them(tmp_path, toy_public_tree):
    from cocoviz import InputError
    from tests.support import files as file_support

    release = estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0, stated=True)
    key = "a data holder's key of 16+ bytes"
    release.save(tmp_path / "r.parquet", key=key)
    loaded = load_release(tmp_path / "r.parquet", key=key)
    for mine, theirs in zip(release.stated, loaded.stated):
        assert theirs.dtype == np.float32 and np.array_equal(mine, theirs)
    pd.testing.assert_frame_equal(loaded.stated_errors(("a",)), release.stated_errors(("a",)))

    def nudge(rows, meta):
        rows["stated"][1][0] *= 2

    file_support.edit_file(tmp_path / "r.parquet", tmp_path / "e.parquet", nudge)
    with pytest.raises(InputError, match="signature does not match"):
        load_release(tmp_path / "e.parquet", key=key)
    assert load_release(tmp_path / "e.parquet").stated[1][0] == 2 * release.stated[1][0]  # unsigned: read as is


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda rows, meta: rows["stated"][1].__setitem__(0, -1.0), "not one finite, non-negative"),
        (lambda rows, meta: rows["stated"][1].__setitem__(0, float("nan")), "not one finite, non-negative"),
        (lambda rows, meta: rows["stated"][1].pop(), "not one finite, non-negative"),
        (lambda rows, meta: rows["stated"].__setitem__(1, None), "level 1 are missing"),
        (lambda rows, meta: meta.__setitem__("stated", [True]), "one true or false per level"),
        (lambda rows, meta: meta.__setitem__("stated", [False, True]), "level 0 are unannounced"),
    ],
)
def test_malformed_stated_variances_are_refused_by_name(tmp_path, toy_public_tree, change, words):
    from cocoviz import InputError
    from tests.support import files as file_support

    estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0, stated=True).save(
        tmp_path / "r.parquet"
    )
    file_support.edit_file(tmp_path / "r.parquet", tmp_path / "e.parquet", change)
    with pytest.raises(InputError, match=words):
        load_release(tmp_path / "e.parquet")
