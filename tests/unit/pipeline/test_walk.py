"""The walk of a tree through ``estimate``: plan → measure → post-process → release, never back to a stage left."""

from __future__ import annotations

import functools

import pandas as pd
import pytest

from cocoviz import estimate, measure, post_process
from cocoviz.plan import Plan
from cocoviz.privacy.noise import FastSampler
from cocoviz.release import post_process as post
from tests.support.digests import three_levels

STAGES = ["plan", "measure", "post-process", "release"]

CASES = {
    "top-down": dict(epsilons=[0.5, 1.0, 2.0], methods=["Hg", "Hc", "Hg"], max_size=200),
    "bottom-up": dict(epsilons=[0.5, 1.0, 2.0], methods=["Hc", "Hc", "Hg"], max_size=200, consistency="bottom-up"),
    "parent prior": dict(epsilons=[0.5, 1.0, 2.0], methods=["Hc", "Hcp", "Hcp"], max_size=160, prior="parent"),
    "from-hg": dict(epsilons=[0.5, 1.0, 2.0], methods=["Hg", "Hg", "Hc"], max_size=200, k_select="from-hg"),
    "noisy max per node": dict(
        epsilons=[1.0] * 3, methods=["Hc"] * 3, max_size=400, k_select="noisy-max-per-node", k_epsilon=0.5
    ),
}


@pytest.fixture(scope="module")
def tree():
    return three_levels()


def traced(monkeypatch) -> list[str]:
    """The stages entered, in order (repeats folded): the plan's build, every noise draw, the start of
    post-processing (its consistency or a fit of noisy answers) and the release's construction."""
    events: list[str] = []

    def logged(stage, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not events or events[-1] != stage:
                events.append(stage)
            return fn(*args, **kwargs)

        return wrapper

    build = Plan.build.__func__
    monkeypatch.setattr(Plan, "build", classmethod(logged("plan", build)))
    for name in ("draw", "draw_level", "draw_gaussian"):
        monkeypatch.setattr(FastSampler, name, logged("measure", getattr(FastSampler, name)))
    for name in ("release_levels", "fit_level"):
        monkeypatch.setattr(post, name, logged("post-process", getattr(post, name)))
    monkeypatch.setattr(post, "Release", logged("release", post.Release))
    return events


@pytest.mark.parametrize("case", sorted(CASES))
def test_estimate_walks_plan_measure_post_process_release(monkeypatch, tree, case):
    expected = estimate(tree, seed=5, **CASES[case])
    events = traced(monkeypatch)
    release = estimate(tree, seed=5, **CASES[case])
    assert events == STAGES, events
    pd.testing.assert_frame_equal(release.to_frame(), expected.to_frame())


@pytest.mark.parametrize("case", ["top-down", "parent prior"])
def test_a_memoised_walk_is_the_same_walk(monkeypatch, tree, case):
    """With every level memoised no noise is drawn (the K noise neither: a public K), and nothing goes back."""
    cache: dict = {}
    expected = estimate(tree, seed=5, level_cache=cache, **CASES[case])
    events = traced(monkeypatch)
    again = estimate(tree, seed=5, level_cache=cache, **CASES[case])
    assert events == ["plan", "post-process", "release"], events
    pd.testing.assert_frame_equal(again.to_frame(), expected.to_frame())
    assert [b is None for b in again.bands] == [b is None for b in expected.bands]


@pytest.mark.parametrize("case", ["top-down", "parent prior", "from-hg"])
def test_one_call_and_two_steps_give_the_same_bands(tree, case):
    """The levels fitted by the level step, and those fitted in post-processing from their answers, carry the
    bands ``post_process(measure(...))`` gives them."""
    plan = Plan.build(tree, **CASES[case])
    one = estimate(tree, seed=4, **CASES[case])
    two = post_process(plan, measure(plan, tree, seed=4))
    pd.testing.assert_frame_equal(one.to_frame(), two.to_frame())
    assert [b is None for b in one.bands] == [b is None for b in two.bands]
    for level in range(tree.depth + 1):
        for node in tree.nodes(level)[:3]:
            pd.testing.assert_frame_equal(one.intervals(node), two.intervals(node))
