"""A plan file holds one budget, nests a bounded depth, and is refused by name otherwise."""

from __future__ import annotations

import json

import pytest

from cocoviz.errors import InputError
from cocoviz.plan import Plan, Shape
from cocoviz.plan.files import MAX_NESTING, read_plan_file

SHAPE = Shape((), (((),),), ((),), ((4,),))


@pytest.mark.parametrize(
    "budget",
    [
        {"epsilons": [1.0], "total_epsilon": 1.0},
        {"rhos": [0.1], "epsilons": [1.0]},
        {"rhos": [0.1], "total_rho": 0.1},
        {"total_epsilon": 1.0, "total_rho": 0.1},
    ],
)
def test_two_budgets_are_refused(tmp_path, budget):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({**budget, "methods": ["Hg"]}))
    with pytest.raises(InputError, match="gives two budgets"):
        Plan.load(path, shape=SHAPE)


def test_a_saved_zcdp_plan_loads_and_a_lowered_epsilon_beside_its_rho_is_refused(tmp_path):
    plan = Plan.build(SHAPE, rhos=[0.125], methods=["Hg"])
    plan.save(tmp_path / "plan.json")
    assert Plan.load(tmp_path / "plan.json") == plan
    data = json.loads((tmp_path / "plan.json").read_text())
    data["epsilons"] = [0.002]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="do not follow from them"):
        Plan.load(tmp_path / "bad.json")


def test_a_split_without_a_total_is_refused(tmp_path):
    (tmp_path / "plan.json").write_text(json.dumps({"epsilons": [1.0], "split": "equal", "methods": ["Hg"]}))
    with pytest.raises(InputError, match="'split' shares a total"):
        read_plan_file(tmp_path / "plan.json")


@pytest.mark.parametrize("suffix, deep", [(".json", "[" * 100_000 + "]" * 100_000), (".toml", None)])
def test_deep_nesting_is_refused_not_a_recursion_error(tmp_path, suffix, deep):
    path = tmp_path / f"plan{suffix}"
    if suffix == ".json":
        path.write_text('{"epsilons": [1.0], "methods": ["Hg"], "shape": ' + deep + "}")
    else:
        path.write_text('epsilons = [1.0]\nmethods = ["Hg"]\nsplit = ' + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(InputError, match=f"nests arrays or tables .* deep; a plan nests at most {MAX_NESTING}"):
        Plan.load(path, shape=SHAPE)
