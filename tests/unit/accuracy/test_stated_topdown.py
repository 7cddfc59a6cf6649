"""The experimental stated errors under top-down consistency (cocoviz.accuracy.stated.topdown): read from the pairs
the consistency step matched, never changing the release; sharing, the merge's statement, slices."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cocoviz.accuracy.stated.released
import cocoviz.consistency
import cocoviz.consistency.orders
import cocoviz.consistency.slices
from cocoviz.accuracy.stated.merged import merge_stated
from cocoviz.accuracy.stated.sharing import SHARING_CAP, _sharing, sharing_within
from cocoviz.accuracy.stated.topdown import StatedEstimates, TopDownStatements, release_statements
from cocoviz.consistency import LevelEstimates, top_down
from cocoviz.consistency.merge import merge_estimates
from tests.support.engine import estimate_trees


def stated_top_down(fitted, parents, merge):
    """The released levels and their statements under top-down (what ``post_process(..., stated=True)`` runs)."""
    n_nodes = [len(f.ptr) - 1 for f in fitted]
    return release_statements("top-down", merge, fitted, parents, n_nodes)


class MergedLeaves(TopDownStatements):
    """Also keeps the merged leaves' runs and statements (before they are pooled into the released runs)."""

    leaves: list

    def _merged_stated(self, level, pairs, parents, children):
        stated = super()._merged_stated(level, pairs, parents, children)
        if level == self.last:
            self.leaves = [*getattr(self, "leaves", []), (pairs.result, stated)]
        return stated


@settings(max_examples=60, deadline=None)
@given(estimate_trees(), st.sampled_from(["weighted", "average"]), st.integers(0, 2**31))
def test_the_stated_variance_never_changes_the_release(tree, merge, seed):
    estimates, parents, _ = tree
    rng = np.random.default_rng(seed)
    fitted = [StatedEstimates(e, rng.uniform(0.01, 50, len(e.sizes))) for e in estimates]
    levels, statements = stated_top_down(fitted, parents, merge)
    for a, b in zip(top_down(estimates, parents, merge), levels):
        for name in ("ptr", "sizes", "counts"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    for runs, stated in zip(levels, statements):
        assert stated.shape == runs.sizes.shape and np.all(stated > 0)


def test_top_down_hands_each_slice_its_matched_pairs():
    """The pairs a slice matched cover every group of its parents once, and each merged run is its pairs' sum."""
    root = LevelEstimates(np.array([0, 2]), np.array([1, 3]), np.array([2, 2]), np.array([1.0, 4.0]))
    kids = LevelEstimates(np.array([0, 2, 3]), np.array([1, 2, 4]), np.array([1, 1, 2]), np.array([2.0, 2.0, 1.0]))
    seen = []
    top_down([root, kids], [None, np.array([0, 0])], "weighted", on_pairs=lambda level, pairs: seen.append(pairs))
    (pairs,) = seen
    np.testing.assert_array_equal(np.bincount(pairs.top, weights=pairs.counts), root.counts)
    np.testing.assert_array_equal(np.bincount(pairs.bottom, weights=pairs.counts), kids.counts)
    np.testing.assert_array_equal(
        np.add.reduceat(pairs.counts[pairs.pair_order], pairs.run_starts), pairs.result.counts
    )
    want = merge_estimates(root.sizes[pairs.top], root.variances[pairs.top], kids.sizes[pairs.bottom],
                           kids.variances[pairs.bottom])[0]  # fmt: skip
    np.testing.assert_array_equal(pairs.merged, want)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 5)), max_size=30))
def test_sharing_counts_the_children_holding_a_size(rows):
    rows = sorted(set(rows), key=lambda r: r[0])  # runs in child order; a child's parent is child % 2
    child = np.array([r[0] for r in rows], np.int64)
    sizes = np.array([r[1] for r in rows], np.int64)
    parent = child % 2
    order = cocoviz.consistency.orders.parent_size_order(parent, sizes)
    bot_ptr = np.zeros(3, np.int64)  # two parents, 0 and 1
    np.cumsum(np.bincount(parent, minlength=2), out=bot_ptr[1:])
    got = _sharing(bot_ptr, sizes[order], child[order])
    want = [len({c for c, s in zip(child, sizes) if c % 2 == p and s == z}) for p, z in zip(parent, sizes)]
    np.testing.assert_array_equal(got, np.array(want, np.int64)[order])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 30), st.sampled_from([0.1, 0.9, 1.0, 4.0, 30.0, 400.0])),
        max_size=40,
    )
)
def test_sharing_within_counts_the_children_holding_a_size_within_one_standard_deviation(rows):
    by_key = {(c, s): v for c, s, v in rows}  # one run per child and size; a child's parent is child % 2
    rows = sorted(((c, s, v) for (c, s), v in by_key.items()), key=lambda r: r[0])
    child = np.array([r[0] for r in rows], np.int64)
    sizes = np.array([r[1] for r in rows], np.int64)
    stated = np.array([r[2] for r in rows], np.float64)
    parent = child % 2
    order = cocoviz.consistency.orders.parent_size_order(parent, sizes)
    bot_ptr = np.zeros(3, np.int64)
    np.cumsum(np.bincount(parent, minlength=2), out=bot_ptr[1:])
    got = sharing_within(bot_ptr, sizes[order], child[order], stated[order])
    radius = [int(np.sqrt(v)) if v >= 1 else 0 for v in stated]
    want = [
        min(
            max(
                len({c for c, s in zip(child, sizes) if c % 2 == p and abs(s - z) <= r}),
                len({c for c, s in zip(child, sizes) if c % 2 == p and s == z}),
            ),
            max(SHARING_CAP, len({c for c, s in zip(child, sizes) if c % 2 == p and s == z})),
        )
        for p, z, r in zip(parent, sizes, radius)
    ]
    np.testing.assert_array_equal(got, np.array(want, np.int64)[order])


def test_a_sparse_tail_merged_under_many_children_keeps_most_of_its_own_variance():
    """Housing's counties at ε = 0.1 (Hc): beyond size 100 the merge left the realised error as it was and
    stated it 20 times smaller, each tail size being held by one county.  Ten children whose one tail group
    each lies within the others' error radius share the parent's correction ten ways."""
    parent = LevelEstimates(np.array([0, 1]), np.array([1000]), np.array([10]), np.array([100.0]))
    sizes = np.array([1000 + 2 * c for c in range(10)])
    kids = LevelEstimates(np.arange(11), sizes, np.ones(10, np.int64), np.full(10, 100.0))
    fitted = [StatedEstimates(parent, np.array([400.0])), StatedEstimates(kids, np.full(10, 400.0))]
    _, statements = stated_top_down(fitted, [None, np.zeros(10, np.int64)], "weighted")
    alone = merge_stated(np.array([100.0]), np.array([100.0]), np.array([400.0]), np.array([400.0]), "weighted", 1)
    assert alone[0] == pytest.approx(200.0)  # the textbook merge: as if the pair were the same group
    np.testing.assert_allclose(statements[1], 400.0 * 0.9 + 200.0 / 10, rtol=1e-6)  # float32 as released


@given(
    st.floats(0.01, 100),
    st.floats(0.01, 100),
    st.floats(1, 100),
    st.floats(0.01, 100),
    st.integers(1, 6),
    st.sampled_from(["weighted", "average"]),
)
def test_merge_stated(va, vb, sa, sb, m, how):
    """Size errors (a stated variance ≥ 1): the linear rule."""
    va, vb, sa, sb = (np.array([x]) for x in (va, vb, sa, sb))
    got = merge_stated(va, vb, sa, sb, how, m)
    # The stated variance lies between the combination's error and the child's own.
    w = vb / (va + vb) if how == "weighted" else 0.5
    combined = w * w * sa + (1 - w) ** 2 * sb
    assert min(combined[0], sb[0]) - 1e-9 <= got[0] <= max(combined[0], sb[0]) + 1e-9
    if m == 1:
        np.testing.assert_allclose(got, combined)
    # Stated = the weights' variances (size errors: ≥ 1) and m = 1: the textbook merge of merge_estimates.
    va, vb = va + 1, vb + 1
    np.testing.assert_allclose(merge_stated(va, vb, va, vb, how, 1), merge_estimates(va, va, vb, vb, how)[1])


def test_an_hg_parents_short_blocks_stay_off_the_pairs_its_long_block_wins():
    """An Hg parent's size is a long block (nearly exact) and short ones at the step (often wrong), so its stated
    variance, pooled per size, is mostly theirs; the merge reads each run's own (``stated_runs``): the long block
    wins its pairs (w > ½) and passes its own small error, the short ones lose theirs to the children (w < ½).
    On the pooled value the children's merged groups read 9·10⁻³, 60 times their error."""
    from cocoviz.accuracy.stated.variances import pool_by_size

    ptr, sizes, counts = np.array([0, 2]), np.array([5, 5]), np.array([1000, 10])
    runs = np.array([1e-4, 0.9])
    parent = StatedEstimates(LevelEstimates(ptr, sizes, counts, 2.0 / counts), pool_by_size(ptr, sizes, counts, runs),
                             runs)  # fmt: skip
    children = LevelEstimates(np.array([0, 1, 2]), np.array([5, 5]), np.array([505, 505]), np.full(2, 4 / 505))
    reader = MergedLeaves([parent, StatedEstimates(children, np.full(2, 1e-4))], "weighted")
    top_down([parent.estimates, children], [None, np.array([0, 0])], "weighted", on_pairs=reader)
    assert parent.stated[0] > 8e-3 and parent.stated_runs[0] == 1e-4
    ((merged, stated),) = reader.leaves
    assert np.all(stated < 2e-4), stated


def _pooled(node_of_run, sizes, counts, stated) -> dict:
    """Brute force: per (node, size), the count-weighted mean of ``stated`` over the runs."""
    total: dict = {}
    for key in zip(node_of_run.tolist(), sizes.tolist(), counts.tolist(), stated.tolist()):
        weight, mass = total.get(key[:2], (0.0, 0))
        total[key[:2]] = (weight + key[3] * key[2], mass + key[2])
    return {key: weight / mass for key, (weight, mass) in total.items() if mass}


@settings(max_examples=40, deadline=None)
@given(estimate_trees(), st.sampled_from(["weighted", "average"]), st.integers(1, 6), st.integers(0, 2**16))
def test_top_down_states_each_released_run_pooled_from_the_merged_leaves(tree, merge, slice_runs, seed):
    """Per level, the stated variance of every released run, in slices or whole; the runs themselves unchanged.
    At the leaves: the count-weighted mean over the merged leaves' runs of its node and size.  Above: the mean
    over the step A → A + 1's matched segments of its node and merged size of their statement of the union
    (cocoviz.accuracy.stated.released.step_stated), every released run of the leaves' parents found there; a size the
    step lacks (higher up) keeps the leaves' pooled."""
    estimates, parents, _ = tree
    rng = np.random.default_rng(seed)
    # Stated apart from the weights' variances, so the test sees which one is carried.
    fitted = [
        StatedEstimates(e, rng.uniform(0.1, 9.0, len(e.sizes)) * rng.choice([0.01, 1.0], len(e.sizes)))
        for e in estimates
    ]
    whole = MergedLeaves(fitted, merge)  # one slice per level (the trees are small): the step's pairs collected
    steps: list[dict] = [{} for _ in range(len(estimates) - 1)]

    def collect(level, node, size, count, value):
        for key in zip(node.tolist(), size.tolist(), count.tolist(), value.tolist()):
            weight, mass = steps[level].get(key[:2], (0.0, 0))
            steps[level][key[:2]] = (weight + key[3] * key[2], mass + key[2])

    whole.steps.add = collect
    top_down(estimates, parents, merge, on_pairs=whole)
    steps = [{key: weight / mass for key, (weight, mass) in step.items() if mass} for step in steps]
    if len(estimates) > 1:
        ((leaves, leaf_stated),) = whole.leaves
    else:
        leaves, leaf_stated = estimates[0], fitted[0].stated
    owner = leaves.node_ids()
    saved = cocoviz.consistency.slices.CONSISTENCY_SLICE_RUNS, cocoviz.accuracy.stated.released.STEP_SEGMENTS
    # In slices, and the step's statement in passes of whole parents within them.
    cocoviz.consistency.slices.CONSISTENCY_SLICE_RUNS = cocoviz.accuracy.stated.released.STEP_SEGMENTS = slice_runs
    try:
        released, stated = stated_top_down(fitted, parents, merge)
    finally:
        cocoviz.consistency.slices.CONSISTENCY_SLICE_RUNS, cocoviz.accuracy.stated.released.STEP_SEGMENTS = saved
    plain = top_down(estimates, parents, merge)
    assert len(stated) == len(released) == len(plain)
    last = len(released) - 1
    for level in range(last, -1, -1):
        runs = released[level]
        np.testing.assert_array_equal(runs.sizes, plain[level].sizes)
        np.testing.assert_array_equal(runs.counts, plain[level].counts)
        expected = _pooled(owner, leaves.sizes, leaves.counts, leaf_stated)
        if level < last:
            if level == last - 1:
                assert set(expected) <= set(steps[level])
            expected = {key: steps[level].get(key, pooled) for key, pooled in expected.items()}
        got = dict(zip(zip(runs.node_ids().tolist(), runs.sizes.tolist()), stated[level].tolist()))
        assert got.keys() == expected.keys() and stated[level].dtype == np.float32
        np.testing.assert_allclose([got[k] for k in expected], list(expected.values()), rtol=1e-5)
        if level:
            owner = parents[level][owner]


@given(
    st.floats(0.01, 100),
    st.floats(0.01, 100),
    st.floats(1e-6, 0.99),
    st.floats(1e-6, 0.99),
    st.integers(1, 6),
    st.sampled_from(["weighted", "average"]),
)
def test_merge_stated_misplaced_groups(va, vb, sa, sb, m, how):
    """Dense runs (both stated variances < 1): the side with the larger weight takes a unit disagreement whole,
    the parent's rate arrives undiluted and the child's kept part adds in quadrature."""
    got = merge_stated(np.array([va]), np.array([vb]), np.array([sa]), np.array([sb]), how, m)[0]
    w = vb / (va + vb) if how == "weighted" else 0.5
    merged = np.sqrt(sb * sb * (1 - 1 / m) + sa * sa)
    assert max(sa, sb * np.sqrt(1 - 1 / m)) - 1e-12 <= merged <= sa + sb + 1e-12
    want = merged if w > 0.5 else sb if w < 0.5 else (merged + sb) / 2
    assert got == pytest.approx(want, rel=1e-12)


def test_a_release_without_stated_errors_computes_none(monkeypatch, toy_public_tree):
    """Off the hot path: with the default ``stated=False`` no statement rule runs (each one here refuses)."""
    import cocoviz.accuracy.stated.released as released
    import cocoviz.accuracy.stated.topdown as topdown
    import cocoviz.accuracy.stated.variances as variances
    from cocoviz import estimate, measure, post_process

    def refuse(*args, **kwargs):
        raise AssertionError("a stated-error rule ran")

    for module, names in (
        (topdown, ("fitted_stated", "hc_stated", "hg_stated_runs", "merge_stated", "step_stated", "union_stated")),
        (variances, ("hc_stated", "hg_stated_runs", "pool_by_size", "hg_merged_stated")),
        (released, ("union_levels", "step_stated", "union_stated")),
    ):
        for name in names:
            monkeypatch.setattr(module, name, refuse)
    for consistency in ("top-down", "bottom-up", "none"):
        opts = dict(epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0, consistency=consistency)
        release = estimate(toy_public_tree, **opts)
        assert release.stated == [None, None]
        plan = release.plan
        assert post_process(plan, measure(plan, toy_public_tree, seed=0)).to_frame().equals(release.to_frame())
    with pytest.raises(AssertionError, match="rule ran"):
        estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0, stated=True)


def test_consistency_imports_no_later_stage():
    """Algorithm 1 reads as the paper's: cocoviz.consistency imports nothing from accuracy, release or pipeline
    (lazy imports included), and no statement reaches it."""
    import ast
    from pathlib import Path

    package = Path(cocoviz.consistency.__file__).parent
    later = ("cocoviz.accuracy", "cocoviz.release", "cocoviz.pipeline", "cocoviz.evaluate")
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(later), (path.name, node.module)
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith(later) for a in node.names), path.name
        assert "stated" not in path.read_text().replace("statement", ""), path.name
