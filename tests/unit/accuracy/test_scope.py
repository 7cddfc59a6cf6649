"""A band's scope: per node, or every node of a level at once (c_node = c^(1/n)); the whole release's frame."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cocoviz import ParameterError, estimate
from cocoviz.accuracy.intervals.scope import ACCURACY_COLUMNS, accuracy_frame, node_confidence
from cocoviz.hierarchy import Hierarchy
from cocoviz.hierarchy.tree import node_label


@pytest.fixture(scope="module")
def tree():
    rng = np.random.default_rng(5)
    regions = np.repeat(list("abcdef"), 40)
    return Hierarchy.from_groups(
        pd.DataFrame({"region": regions, "size": rng.integers(0, 9, regions.size)}), size="size", levels=["region"]
    )


@pytest.mark.parametrize("c, n", [(0.9, 1), (0.9, 6), (0.5, 3221), (0.999, 52)])
def test_level_confidence_multiplies_back_to_the_statement(c, n):
    assert node_confidence(c, "level", n) ** n == pytest.approx(c, rel=1e-12)
    assert node_confidence(c, "node", n) == c


def test_bad_scope_and_confidence_are_refused_by_name(tree):
    release = estimate(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10, seed=1)
    with pytest.raises(ParameterError, match="scope must be one of"):
        release.intervals(("a",), scope="region")
    with pytest.raises(ParameterError, match="confidence"):
        accuracy_frame(release, confidence=0)


def test_level_scope_is_the_node_band_at_the_per_node_confidence(tree):
    release = estimate(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10, seed=1)
    c_node = 0.9 ** (1 / 6)
    level = release.intervals(("c",), 0.9, scope="level")
    plain = release.intervals(("c",), c_node)
    pd.testing.assert_frame_equal(level, plain)
    assert level.attrs["scope"] == "level" and level.attrs["confidence"] == 0.9
    assert level.attrs["node_confidence"] == pytest.approx(c_node) and level.attrs["level_nodes"] == 6
    assert "all 6 nodes of level 1 at once" in level.attrs["note"]
    node = release.intervals(("c",), 0.9)
    assert node.attrs["scope"] == "node" and "per node" in node.attrs["note"]
    # wider at the level's scope, never narrower
    assert (level["cumulative_low"] <= node["cumulative_low"]).all()
    assert (level["cumulative_high"] >= node["cumulative_high"]).all()
    # the root is alone on its level: both scopes agree
    pd.testing.assert_frame_equal(release.intervals((), 0.9, scope="level"), release.intervals((), 0.9))


@pytest.mark.parametrize("scope", ["node", "level"])
def test_accuracy_frame_is_every_node_frame_at_its_stretches(tree, scope):
    release = estimate(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10, seed=2)
    frame = accuracy_frame(release, confidence=0.8, scope=scope)
    assert tuple(frame.columns) == ACCURACY_COLUMNS and frame.attrs["scope"] == scope
    for level in (0, 1):
        expected = 0.8 if scope == "node" else 0.8 ** (1 / (1 + 5 * level))
        assert frame.attrs["node_confidence"][level] == pytest.approx(expected)
        for node in release.nodes(level):
            full = release.intervals(node, 0.8, scope=scope)
            rows = frame[(frame["level"] == level) & (frame["node"] == node_label(node))]
            assert rows["size"].iat[0] == 0 and rows["size_to"].iat[-1] == full["size"].iat[-1]
            assert (rows["size"].to_numpy()[1:] == rows["size_to"].to_numpy()[:-1] + 1).all()
            # every dropped size repeats its row's cumulative bounds, with no released group
            for row in rows.itertuples():
                part = full[(full["size"] >= row.size) & (full["size"] <= row.size_to)]
                assert (part["cumulative_low"] == row.cumulative_low).all()
                assert (part["cumulative_high"] == row.cumulative_high).all()
                assert (part["count"].iloc[1:] == 0).all()
                assert (part["count_high"].iloc[1:] == row.cumulative_high - row.cumulative_low).all()
                assert (part["count_low"].iloc[1:] == 0).all()
            kept = full.set_index("size").loc[rows["size"]]
            for column in ACCURACY_COLUMNS[4:]:
                assert (kept[column].to_numpy() == rows[column].to_numpy()).all(), column


def test_levels_without_a_band_are_named_not_raised(tree):
    release = estimate(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=10, consistency="bottom-up", seed=0)
    frame = accuracy_frame(release)
    assert set(frame["level"]) == {1} and "not measured" in frame.attrs["skipped"][0]
    assert math.isclose(frame.attrs["confidence"], 0.9)


def test_with_its_measurements_an_hg_level_is_bounded_from_the_runs(tree):
    from cocoviz import Plan, measure, post_process
    from cocoviz.accuracy.intervals.bands import truth_covered

    plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10)
    measurements = measure(plan, tree, seed=7)
    release = post_process(plan, measurements)
    for scope in ("node", "level"):
        runs = release.intervals((), 0.9, scope=scope, measurements=measurements)
        cells = release.intervals((), 0.9, scope=scope)
        assert runs.attrs["band"] == "runs" and cells.attrs["band"] == "cells"
        assert runs.attrs["guarantee"] >= runs.attrs["node_confidence"] and runs.attrs["scope"] == scope
        assert truth_covered(runs, *tree.runs(0).node(0))
        assert (runs["count_high"] - runs["count_low"]).sum() < (cells["count_high"] - cells["count_low"]).sum()
    leaf = release.intervals(("a",), 0.9, scope="level", measurements=measurements)  # an Hc level: unchanged
    pd.testing.assert_frame_equal(leaf, release.intervals(("a",), 0.9, scope="level"))
    frame = accuracy_frame(release, measurements=measurements)
    assert frame.attrs["band"] == {0: "runs", 1: "cells"}
    root = frame[frame["level"] == 0]
    full = release.intervals((), measurements=measurements).set_index("size").loc[root["size"]]
    assert (full["count_low"].to_numpy() == root["count_low"].to_numpy()).all()


def test_hg_bands_say_which_scale_they_are_meaningful_on(tree):
    from cocoviz import Plan, measure, post_process

    plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10)
    measurements = measure(plan, tree, seed=7)
    release = post_process(plan, measurements)
    for given in (None, measurements):
        hg = release.intervals((), 0.9, measurements=given)
        assert hg.attrs["meaningful_for"].startswith("sorted sizes and cumulative counts")
        assert "meaningful for the sorted sizes and for cumulative counts" in hg.attrs["note"]
        assert "per node" in hg.attrs["note"]  # the scope's sentence still ends it
    hc = release.intervals(("a",), 0.9)
    assert "sorted sizes" not in hc.attrs["note"] and "sorted" not in hc.attrs["meaningful_for"]
    frame = accuracy_frame(release)
    assert frame.attrs["hg_levels"] == [0] and "On Hg levels" in frame.attrs["note"]
    all_hc = estimate(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=10, seed=0)
    assert accuracy_frame(all_hc).attrs["hg_levels"] == [] and "Hg" not in accuracy_frame(all_hc).attrs["note"]
