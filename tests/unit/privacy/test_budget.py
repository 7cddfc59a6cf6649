"""The budget report: composition, totals, the text report, JSON round trip."""

from __future__ import annotations

import pytest

from cocoviz.privacy.budget import Budget, Charge, double_geometric_variance


def test_budget_composition_and_report():
    budget = Budget(
        (
            Charge(0, (), "Hc[0..9]", 10, 1.0, 1.0),
            Charge(1, ("a",), "Hg", 4, 1.0, 0.5),
            Charge(1, ("b",), "Hg", 3, 1.0, 0.7),  # parallel: the level costs its largest ε
            Charge(None, (), "scores", 2, 6.0, 0.2),  # a whole-data measurement adds up
        ),
        extra=(("selection", 0.3),),
        sampler="test sampler",
        notes=("a note",),
    )
    assert budget.per_level() == {0: 1.0, 1: 0.7}
    assert budget.total == pytest.approx(1.0 + 0.7 + 0.2 + 0.3)
    assert budget.cells == 19
    frame = budget.to_frame()
    assert list(frame["scale"]) == pytest.approx([1.0, 2.0, 1.0 / 0.7, 30.0])
    assert list(frame["node"]) == ["(root)", "a", "b", "(root)"]
    assert list(frame["noise_variance"]) == pytest.approx([double_geometric_variance(s) for s in frame["scale"]])
    text = budget.describe()
    assert text.startswith("total ε spent: 2.2")
    assert "sampler: test sampler" in text and "note: a note" in text
    assert "level 0: ε = 1" in text and "level 1: ε = 0.7" in text and "selection: ε = 0.3" in text
    assert "level 1: Hg on 1 node(s), 4 cells, Δ = 1, scale Δ/ε = 2" in text
    assert "whole data: scores on 1 node(s), 2 cells, Δ = 6, scale Δ/ε = 30" in text
    assert Budget().total == 0.0 and Budget().summary().empty
    assert Budget.from_dict(budget.to_dict()) == budget


def test_with_sampler_keeps_the_charges():
    budget = Budget((Charge(0, (), "Hg", 4, 1.0, 0.5),))
    spent = budget.with_sampler("fast", ("n",))
    assert spent.charges == budget.charges and spent.sampler == "fast" and spent.notes == ("n",)
