"""The stated variance of released upper levels (cocoviz.released_stated, docs/merge-variances.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cocoviz.released_stated
from cocoviz.consistency import LevelEstimates, top_down
from cocoviz.hierarchy import Hierarchy
from cocoviz.measure import measure
from cocoviz.merge_rules import merge_stated
from cocoviz.plan import Plan
from cocoviz.postprocess import post_process
from cocoviz.released_stated import StepStatements, between_boundaries, union_stated
from cocoviz.runs import LevelRuns, aggregate_weighted


def _tree(regions: int = 6) -> Hierarchy:
    """Regions of dense small sizes (each size held by hundreds of groups in every region): the regions'
    boundary errors are independent and cancel in the root's union."""
    rows = []
    for r in range(regions):
        for size, count in ((1, 400 + 10 * r), (2, 300), (3, 200 - 5 * r), (4, 120), (5, 60), (6, 30)):
            rows.append({"region": f"r{r}", "size": size, "count": count})
    return Hierarchy.from_counts(pd.DataFrame(rows), size="size", count="count", levels=["region"])


def _root_z2(release, tree) -> float:
    """Mean z² of the released root's groups (paired by rank with the truth) under ``release.stated[0]``."""
    runs = release.runs(0)
    truth = np.repeat(*tree.runs(0).node(0))
    size = np.repeat(runs.sizes, runs.counts)
    stated = np.repeat(release.stated[0].astype(np.float64), runs.counts)
    return float(np.mean((size - truth) ** 2 / stated))


def _pooled_root(release, tree) -> np.ndarray:
    """The old statement: the leaves' statements pooled linearly per root size (what was released before)."""
    leaves = release.runs(1)
    return aggregate_weighted(np.zeros(len(leaves.sizes), np.int64), leaves.sizes, leaves.counts, 1, release.stated[1])[
        1
    ]


@pytest.mark.parametrize(
    ("consistency", "methods"), [("top-down", ["Hc", "Hc"]), ("bottom-up", ["Hc", "Hc"]), ("top-down", ["Hg", "Hc"])]
)
def test_the_released_root_states_its_union_where_the_regions_errors_cancel(consistency, methods):
    """Over seeded trials the released root's mean z² under its statement is about 1 (0.5–1.6 over 30 trials:
    0.81, 0.69, 0.66); the leaves' statements pooled linearly (the rule before) overstate it several times (mean z²
    0.14, 0.28, 0.29)."""
    tree = _tree()
    plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=methods, max_size=8, consistency=consistency)
    new, old = [], []
    for t in range(30):
        release = post_process(plan, measure(plan, tree, seed=(7, t)))
        new.append(_root_z2(release, tree))
        release.stated[0] = _pooled_root(release, tree).astype(np.float32)
        old.append(_root_z2(release, tree))
    assert 0.5 <= np.mean(new) <= 1.6, (np.mean(new), np.mean(old))
    assert np.mean(old) < 0.45, (np.mean(new), np.mean(old))


def test_union_stated_adds_dense_count_errors_in_quadrature_and_whole_size_errors_linearly():
    """Hand-made runs: node 0 holds size 2 twice (one count error: 40·0.05 + 60·0.05 = 5 misplaced groups), node 1
    holds size 2 (100·0.09 = 9) and size 7 (stated 3: whole sizes), node 2 (another ancestor) size 2 alone."""
    node = np.array([0, 0, 1, 1, 2])
    up = np.array([0, 0, 0, 0, 1])
    sizes = np.array([2, 2, 2, 7, 2])
    counts = np.array([40, 60, 100, 2, 50])
    stated = np.array([0.05, 0.05, 0.09, 3.0, 0.2])
    got = union_stated(node, up, sizes, counts, stated)
    size_two = np.sqrt(5.0**2 + 9.0**2) / 200
    np.testing.assert_allclose(got, [size_two, size_two, size_two, 3.0, 0.2], rtol=1e-12)
    # Whole-size runs of two nodes pool linearly: (2·3 + 1·6) / 3; a dense run beside them adds its own.
    got = union_stated(np.array([0, 1, 2]), np.zeros(3, np.int64), np.array([7, 7, 7]), np.array([2, 1, 10]),
                       np.array([3.0, 6.0, 0.5]))  # fmt: skip
    np.testing.assert_allclose(got, np.full(3, (12.0 + 5.0) / 13), rtol=1e-12)


def test_one_child_states_its_own():
    assert union_stated(np.zeros(2, np.int64), np.zeros(2, np.int64), np.array([1, 3]), np.array([10, 1]),
                        np.array([0.1, 2.0])).tolist() == [0.1, 2.0]  # fmt: skip


@pytest.mark.parametrize("lookup_runs", [1, 2, 1 << 20])
def test_step_statements_state_the_count_weighted_mean_per_node_and_size_and_fall_back_where_absent(
    lookup_runs, monkeypatch
):
    """Two slices of segments (parents 0 and then 1, merged sizes unsorted within a parent); the released runs
    of parent 1 include a size (7) no segment holds: it keeps the fallback (the leaves' pooled statement)."""
    monkeypatch.setattr(cocoviz.released_stated, "_LOOKUP_RUNS", lookup_runs)  # the look-up in passes, or one
    steps = StepStatements(1)
    steps.add(0, np.array([0, 0, 0]), np.array([4, 1, 4]), np.array([1, 3, 3]), np.array([2.0, 0.3, 4.0]))
    steps.add(0, np.array([1, 1]), np.array([1, 1]), np.array([2, 0]), np.array([0.6, 50.0]))
    runs = LevelRuns(np.array([0, 2, 4]), np.array([1, 4, 1, 7]), np.array([3, 4, 2, 1]))
    got = steps.released(0, runs, np.array([9.0, 9.0, 9.0, 5.0]))
    np.testing.assert_allclose(got, [0.3, (2.0 + 3 * 4.0) / 4, 0.6, 5.0], rtol=1e-6)
    assert got.dtype == np.float32


def _four_regions() -> Hierarchy:
    rows = []
    for r in range(4):
        for size, count in ((1, 400 + 10 * r), (2, 300), (3, 200 - 5 * r), (4, 120), (5, 60), (6, 30), (9, 2), (12, 1)):
            rows.append({"region": f"r{r}", "size": size, "count": count})
    return Hierarchy.from_counts(pd.DataFrame(rows), size="size", count="count", levels=["region"])


#: The released root's statement on branch ``released-upper`` (the rule that carried every ancestor's statement
#: through every deeper step), at commit 5adf5f5, on :func:`_four_regions` with the seeds below (float32 as
#: stored, written out as float64).
BRANCH_ROOT = {
    ("top-down", ("Hc", "Hc"), "weighted", 1): [
        0.0005776745383627713,
        0.0008016017964109778,
        0.0012428981717675924,
        0.0019989944994449615,
        0.003997988998889923,
        0.015371814370155334,
        1.1532564163208008,
        0.4101407527923584,
        1.379884123802185,
        0.8775127530097961,
        0.9028580188751221,
        1.145439624786377,
    ],
    ("top-down", ("Hg", "Hc"), "weighted", 1): [
        0.12512803077697754,
        0.0016659306129440665,
        0.0014488730812445283,
        0.002605187939479947,
        0.00439743185415864,
        0.02279777266085148,
        0.04036355018615723,
        0.38239189982414246,
        0.46058160066604614,
        0.4805341362953186,
        0.6264219284057617,
        1.856392741203308,
    ],
    ("top-down", ("Hg", "Hg"), "weighted", 2): [
        0.6486110091209412,
        0.004532961640506983,
        0.004991680383682251,
        0.00784313678741455,
        0.013202437199652195,
        0.033120349049568176,
        0.11369694769382477,
        0.7129629850387573,
        0.6151715517044067,
        2.750429391860962,
        0.7129629254341125,
    ],
    ("top-down", ("Hc", "Hg"), "average", 1): [
        0.07245761901140213,
        0.0036438789684325457,
        0.005163096822798252,
        0.00892020482569933,
        0.013361981138586998,
        0.027530908584594727,
        0.06241924688220024,
        0.5061864852905273,
        0.3935350179672241,
        0.40596070885658264,
        0.6633057594299316,
        0.7935478091239929,
        0.6417554616928101,
    ],
    ("bottom-up", ("Hg", "Hg"), "weighted", 1): [
        0.5832246541976929,
        0.0011740504996851087,
        0.0025252525229007006,
        0.003841229248791933,
        0.006289307959377766,
        0.012658228166401386,
        0.010490700602531433,
        0.5832246541976929,
        0.1627063751220703,
        0.5832246541976929,
        0.41240209341049194,
        0.5832246541976929,
    ],
}


@pytest.mark.parametrize(("consistency", "methods", "merge", "seed"), list(BRANCH_ROOT))
def test_at_depth_one_the_step_rule_states_what_the_branch_carried(consistency, methods, merge, seed):
    """At depth 1 the step root → leaves is the only one, so the step rule is the branch's rule: the same numbers
    (to float32 precision: the two sum in different orders), top-down (weighted and average, Hc and Hg) and
    bottom-up."""
    tree = _four_regions()
    plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=list(methods), max_size=16, consistency=consistency,
                      merge=merge)  # fmt: skip
    release = post_process(plan, measure(plan, tree, seed=seed))
    np.testing.assert_allclose(release.stated[0], BRANCH_ROOT[consistency, methods, merge, seed], rtol=3e-7)


@pytest.mark.parametrize("merge", ["weighted", "average"])
def test_top_down_states_the_smaller_side_where_the_root_and_its_childrens_union_agree(merge):
    """A root of one run (size 2, 200 groups) and two children of 100 groups of size 2: every pair agrees.  Weighted,
    the root wins both and the released size misplaces at most its 0.004 · 200 = 0.8 groups, not the union's
    √(3² + 1²) = 3.16.  Under the plain average the root states the m = 1 merge pair by pair (the bound was measured
    worse there): half the pairs the union's rate."""
    root = LevelEstimates(np.array([0, 1]), np.array([2]), np.array([200]), np.array([0.01]), np.array([0.004]))
    kids = LevelEstimates(np.array([0, 1, 2]), np.array([2, 2]), np.array([100, 100]), np.array([0.04, 0.02]),
                          np.array([0.03, 0.01]))  # fmt: skip
    parents = [None, np.array([0, 0])]
    stated: list = []
    top_down([root, kids], parents, merge, stated)
    union = np.sqrt(3.0**2 + 1.0**2) / 200
    want = merge_stated(np.array([0.01] * 2), np.array([0.04, 0.02]), np.array([0.004] * 2), np.full(2, union),
                        merge, 1).mean()  # fmt: skip
    np.testing.assert_allclose(stated[0], [0.004 if merge == "weighted" else want], rtol=1e-6)
    # The leaves keep the merge's own statement (sharing m = 2).
    leaves = merge_stated(np.array([0.01] * 2), np.array([0.04, 0.02]), np.array([0.004] * 2), np.array([0.03, 0.01]),
                          merge, 2)  # fmt: skip
    np.testing.assert_allclose(stated[1], leaves, rtol=1e-6)


def test_an_hg_roots_children_union_is_not_charged_to_the_pairs_its_long_block_wins():
    """An Hg root's size 1: a long block (900 groups, run stated 0.001) and a short block at the step (100, 0.05;
    pooled 0.0059); two children of 500 groups stating 0.02 each (their union: √(10² + 10²) = 14.1 misplaced
    groups).  Every pair agrees, so the released size misplaces at most the root's 5.9 groups: 0.0059.  The rule
    before charged the union's whole error to the long block's pairs (0.0142, 2.4 times more: housing's, white's
    and taxi's Hg roots over Hg children read 0.27–0.51)."""
    root = LevelEstimates(np.array([0, 2]), np.array([1, 1]), np.array([900, 100]), np.array([0.01, 0.1]),
                          np.array([0.0059, 0.0059]), np.array([0.001, 0.05]))  # fmt: skip
    kids = LevelEstimates(np.array([0, 1, 2]), np.array([1, 1]), np.array([500, 500]), np.array([0.04, 0.04]),
                          np.array([0.02, 0.02]))  # fmt: skip
    stated: list = []
    top_down([root, kids], [None, np.array([0, 0])], "weighted", stated)
    np.testing.assert_allclose(stated[0], [0.0059], rtol=1e-5)


def test_between_boundaries_moves_the_bound_by_the_disagreeing_pairs_each_side_wins():
    """One parent and size: 900 pairs the parent wins (its run 0.001), 10 it loses that disagree by a size and 90 it
    loses that agree (its short block, 0.05); the union states 0.02 (20 groups).  The released boundary moves
    from the parent's (5.9 groups off) only through the 10 disagreeing pairs: min(20, 5.9 + 10, 20 + 0) = 15.9,
    the parent's pairs stating their run (0.9) and its 100 lost pairs the rest (0.15 each)."""
    key, counts, off, runs = (
        np.zeros(3, np.int64),
        np.array([900.0, 10.0, 90.0]),
        np.array([0, 1, 0], bool),
        np.array([0.001, 0.05, 0.05]),
    )
    got = between_boundaries(key, counts, np.array([1.0, 0.0, 0.0]), off, runs, np.full(3, 0.02))
    np.testing.assert_allclose(got, [0.001, 0.15, 0.15], rtol=1e-12)
    # The union's side bounded the same way: the parent wins the 10 disagreeing pairs, the union 0.002 (2 groups).
    got = between_boundaries(key, counts, np.array([1.0, 1.0, 0.0]), off, runs, np.full(3, 0.002))
    bound = min(5.9, 2.0 + 10.0)  # the larger side's 5.9: the boundary lies between the two
    np.testing.assert_allclose((got * counts).sum(), bound, rtol=1e-12)


def test_a_lone_group_keeps_the_m1_merge():
    """A root's lone group of size 9 stated exact (10⁻⁹) and a child's (0.5, whose weight wins the pair): the bound
    would state the smaller side, 10⁻⁹ (housing's Hg×Hc×Hc root read 10⁵ on such a group); a lone group is no run's
    boundary, so it keeps the m = 1 merge: the child's 0.5."""
    root = LevelEstimates(np.array([0, 2]), np.array([2, 9]), np.array([200, 1]), np.array([0.01, 0.01]),
                          np.array([0.004, 1e-9]))  # fmt: skip
    kids = LevelEstimates(np.array([0, 2, 3]), np.array([2, 9, 2]), np.array([100, 1, 100]),
                          np.array([0.04, 0.001, 0.04]), np.array([0.03, 0.5, 0.01]))  # fmt: skip
    stated: list = []
    top_down([root, kids], [None, np.array([0, 0])], "weighted", stated)
    assert stated[0][1] == pytest.approx(0.5, rel=1e-6)


def test_a_household_of_a_trillion_members_does_not_size_the_scratch_tables():
    """The compiled passes index tables by size: a size of 2⁴⁰ is taken by its rank among the sizes (the same
    statements as any sizes in the same order), not as a table of 2⁴⁰ entries (a MemoryError under a cap)."""
    node, up = np.array([0, 0, 1, 1]), np.array([0, 0, 0, 0])
    counts, stated = np.array([100, 1, 50, 1]), np.array([0.01, 9.0, 0.02, 4.0])
    huge = union_stated(node, up, np.array([2, 2**40, 2, 2**40 + 7]), counts, stated)
    small = union_stated(node, up, np.array([2, 3, 2, 4]), counts, stated)
    np.testing.assert_array_equal(huge, small)
    block = np.array([0, 0, 1])
    np.testing.assert_array_equal(
        cocoviz.released_stated._groups(block, np.array([5, 2**40, 2**41])),
        cocoviz.released_stated._groups(block, np.array([5, 6, 7])),
    )
