"""A secure tenure margin is a draw of its own in the privacy ledger, recorded before its noise."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cocoviz.datasets.tenure import tenure_table
from cocoviz.errors import InputError
from cocoviz.hierarchy import Hierarchy
from cocoviz.joint import measure_tenure
from cocoviz.measure.ledger import Ledger
from cocoviz.measure.recording import NOT_RECORDED
from cocoviz.plan import Shape


@pytest.fixture
def tree():
    rng = np.random.default_rng(5)
    rows = [("s1", "c1", int(s)) for s in rng.integers(1, 5, 20)]
    rows += [("s2", "c2", int(s)) for s in rng.integers(1, 5, 9)]
    counts = pd.DataFrame(rows, columns=["state", "county", "size"]).value_counts().rename("count").reset_index()
    return Hierarchy.from_counts(counts, size="size", count="count", levels=["state", "county"])


def test_a_secure_tenure_margin_is_recorded(tree, tmp_path):
    book = Ledger(tmp_path / "ledger.sqlite")
    table = tenure_table(tree, seed=3)
    shape = Shape.of(tree)
    measured = measure_tenure(shape, table, rhos=[0.5, 0.5, 0.5], sampler="secure", ledger=book)
    (entry,) = book.entries().itertuples()
    assert entry.status == "complete" and entry.accounting == "zCDP" and entry.rho == measured.budget.total_rho
    with pytest.raises(InputError, match="tenure margin"):
        book.plan(entry.id)
    skipped = measure_tenure(shape, table, [1.0] * 3, sampler="secure", ledger=False)
    assert NOT_RECORDED in skipped.budget.notes and len(book.entries()) == 1
    measure_tenure(shape, table, [1.0] * 3, seed=0, ledger=book)  # exploration: not recorded
    assert len(book.entries()) == 1
