"""Plan.save / Plan.load: TOML and JSON round trips, hand-written plans, and bad content refused by field."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cocoviz import CocovizError, InputError, ParameterError, Plan, Shape
from tests.support.engine import random_trees, release_options

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _shape(labels: list[str], groups: list[int]) -> Shape:
    """A two-level shape whose node labels are ``labels`` (distinct), with G per leaf."""
    leaves = [(label,) for label in labels]
    return Shape(("region",), (((),), leaves), ((), (0,) * len(leaves)), ((sum(groups),), groups))


@SETTINGS
@given(data=st.data(), suffix=st.sampled_from([".toml", ".json"]))
def test_round_trip_of_random_plans(tmp_path, data, suffix):
    rt = data.draw(random_trees())
    opts = data.draw(release_options(rt.tree.depth + 1, rt.tree.max_size))
    opts.pop("seed")
    private = data.draw(st.sampled_from(["public", "noisy-max", "svt"]))
    if private != "public":
        opts.update(k_select=private, k_epsilon=data.draw(st.sampled_from([0.1, 0.5])))
    plan = Plan.build(rt.tree, **opts)
    path = tmp_path / f"plan{suffix}"
    plan.save(path)
    loaded = Plan.load(path)
    assert loaded == plan
    assert loaded.cost() == plan.cost()
    assert Plan.load(path, shape=plan.shape) == plan
    assert Plan.build(plan.shape, **plan.options()) == plan


@SETTINGS
@given(
    labels=st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=4, unique=True),
    eps=st.floats(1e-3, 50, allow_nan=False),
    suffix=st.sampled_from([".toml", ".json"]),
)
def test_round_trip_keeps_any_label_text(tmp_path, labels, eps, suffix):
    """Quotes, backslashes, control characters, DEL and non-ASCII labels survive the TOML writer."""
    shape = _shape(labels, list(range(1, len(labels) + 1)))
    plan = Plan.build(shape, epsilons=[eps, eps / 3], methods=["naive", "Hg"], max_size=7, merge="average")
    path = tmp_path / f"plan{suffix}"
    plan.save(path)
    assert Plan.load(path) == plan


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_round_trip_of_hcp_priors(tmp_path, suffix):
    shape = _shape(["a", "b"], [2, 2])
    for prior in ("parent", np.array([0, 5, 2, 1.5]), {("a",): np.array([0, 3, 1.0]), ("b",): np.array([0, 0, 1.0])}):
        plan = Plan.build(shape, epsilons=[1.0, 1.0], methods=["Hcp", "Hcp"], max_size=10, prior=prior)
        plan.save(tmp_path / f"plan{suffix}")
        assert Plan.load(tmp_path / f"plan{suffix}") == plan


def test_toml_file_is_readable_and_hand_written_plans_load(tmp_path):
    shape = _shape(["a", "b"], [2, 2])
    plan = Plan.build(shape, epsilons=[0.5, 1.0], methods=["naive", "Hc"], max_size=10)
    plan.save(tmp_path / "plan.toml")
    text = (tmp_path / "plan.toml").read_text()
    assert 'methods = ["naive", "Hc"]' in text and "p = [0, 1]" in text and "k_epsilon" not in text
    assert "[shape]" in text and "[prior]" in text
    (tmp_path / "mine.toml").write_text('epsilons = [0.5, 1.0]\nmethods = ["naive", "Hc"]\nmax_size = 10\n')
    assert Plan.load(tmp_path / "mine.toml", shape=shape) == plan


@pytest.mark.parametrize(
    ("content", "field", "error"),
    [
        ('epsilons = [1.0, 1.0]\nmethods = ["Hc", "Hg"]\nmax_size = "ten"\n', "max_size", InputError),
        ('epsilons = [1.0, "x"]\nmethods = ["Hc", "Hg"]\n', "epsilons", InputError),
        ('epsilons = [1.0, -1.0]\nmethods = ["Hc", "Hg"]\n', "ε of level 1", ParameterError),
        ('epsilons = [1.0, 1.0]\nmethods = ["Hc", "Hx"]\n', "method of level 1", ParameterError),
        ('epsilons = [1.0, 1.0]\nmethods = ["Hc", "Hg"]\np = [3, 2]\n', "p of level 0", ParameterError),
        ('epsilons = [1.0, 1.0]\nmethods = ["Hc", "Hg"]\nepsilon = 3\n', "'epsilon'", InputError),
        ('methods = ["Hc", "Hg"]\n', "'epsilons'", InputError),
        ('epsilons = [1.0]\nmethods = ["Hc", "Hc"]\n', "epsilons has 1 entries", ParameterError),
        ('epsilons = [1.0, 1.0]\nmethods = ["Hc", "Hg"]\nconsistency = "sideways"\n', "consistency", ParameterError),
        ('epsilons = [1.0, 1.0]\nmethods = ["Hc", "Hg"]\nk_select = "svt"\n', "k_epsilon", ParameterError),
        ('epsilons = [1.0, 1.0]\nmethods = ["Hc", "Hg"]\nformat = "other/2"\n', "'format'", InputError),
        ('epsilons = [1.0, 1.0]\nmethods = ["Hc", "Hg"]\nshape = {levels = 3}\n', "'shape'", InputError),
        ("epsilons = [1.0, \n", "not valid TOML", InputError),
    ],
)
def test_bad_content_is_refused_naming_the_field(tmp_path, content, field, error):
    path = tmp_path / "plan.toml"
    path.write_text(content)
    with pytest.raises(error) as caught:
        Plan.load(path, shape=_shape(["a", "b"], [2, 2]))
    assert field in str(caught.value) and "plan.toml" in str(caught.value)


def test_a_saved_plan_refuses_another_shape_and_a_broken_shape(tmp_path):
    plan = Plan.build(_shape(["a", "b"], [2, 2]), epsilons=[1.0, 1.0], methods=["Hg", "Hg"])
    plan.save(tmp_path / "plan.json")
    with pytest.raises(InputError, match="'shape': written for another hierarchy"):
        Plan.load(tmp_path / "plan.json", shape=_shape(["a", "b"], [2, 3]))
    data = json.loads((tmp_path / "plan.json").read_text())
    data["shape"]["parents"] = [[], [5, 0]]
    (tmp_path / "broken.json").write_text(json.dumps(data))
    with pytest.raises(CocovizError, match="field 'shape'"):
        Plan.load(tmp_path / "broken.json")
    with pytest.raises(InputError, match="has no field 'shape'"):
        (tmp_path / "bare.json").write_text('{"epsilons": [1.0, 1.0], "methods": ["Hg", "Hg"]}')
        Plan.load(tmp_path / "bare.json")
    with pytest.raises(InputError, match=r"\.toml or \.json"):
        plan.save(tmp_path / "plan.yaml")
