"""Tenure on the housing stand-in (cocoviz.datasets.tenure): deterministic, size-dependent, with a drifted past."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cocoviz.datasets import generate_housing
from cocoviz.datasets.tenure import (
    OWNER_DRIFT,
    OWNER_RATE,
    owner_rate,
    previous_census_tenure,
    previous_tenure_table,
    tenure_table,
)
from cocoviz.errors import InputError, ParameterError
from cocoviz.hierarchy import Hierarchy

LEVELS = ["state", "county"]


@pytest.fixture(scope="module")
def counts():
    return generate_housing(0.01, 0, only_states=["OR", "WA"])


def test_owners_and_renters_split_every_count_deterministically(counts):
    table = tenure_table(counts, seed=0)
    assert list(table.columns) == [*LEVELS, "size", "owners", "renters"]
    merged = table.merge(counts.astype({"state": str, "county": str}), on=[*LEVELS, "size"])
    assert len(merged) == len(counts) and np.array_equal(merged["owners"] + merged["renters"], merged["count"])
    assert (table["owners"] >= 0).all() and (table["renters"] >= 0).all()
    assert table.equals(tenure_table(counts, seed=0))
    assert not table["owners"].equals(tenure_table(counts, seed=1)["owners"])


def test_a_hierarchy_and_its_counts_table_give_the_same_tenure(counts):
    tree = Hierarchy.from_counts(counts, size="size", count="count", levels=LEVELS)
    assert tenure_table(tree, seed=2).equals(tenure_table(counts, seed=2))


def test_a_county_does_not_depend_on_which_other_counties_are_drawn(counts):
    whole = tenure_table(counts, seed=0)
    alone = tenure_table(counts[counts["state"] == "OR"], seed=0)
    assert whole[whole["state"] == "OR"].reset_index(drop=True).equals(alone)


def test_the_owner_rate_depends_on_size(counts):
    table = tenure_table(counts, seed=0)
    small = table[table["size"] <= 7].groupby("size")[["owners", "renters"]].sum()
    rate = small["owners"] / (small["owners"] + small["renters"])
    assert rate.loc[2] - rate.loc[1] > 0.1  # two-person households own far more often than singles
    assert np.allclose(rate.to_numpy(), OWNER_RATE, atol=0.06)  # county effects average out
    assert owner_rate(np.array([1, 2]), 0.3).tolist() == pytest.approx(
        [1 / (1 + (1 - r) / r * np.exp(-0.3)) for r in OWNER_RATE[:2]]
    )


def test_the_previous_census_has_more_owners_and_keeps_each_county_lean(counts):
    now = tenure_table(counts, seed=0)
    before = previous_tenure_table(counts, seed=1)
    assert before["owners"].dtype == np.float64
    assert before["owners"].sum() / counts["count"].sum() > now["owners"].sum() / counts["count"].sum() + 0.02
    by_county = [t.groupby("county")[["owners", "renters"]].sum() for t in (now, before)]
    shares = [t["owners"] / t.sum(axis=1) for t in by_county]
    assert np.corrcoef(*shares)[0, 1] > 0.7  # the place effect persists across censuses (none: about 0)
    none = previous_tenure_table(counts, seed=1, owner_drift=0.0)
    assert before["owners"].sum() > none["owners"].sum() and OWNER_DRIFT > 0


def test_previous_census_tenure_of_the_bundled_housing():
    prev = previous_census_tenure("housing-west", scale=0.0005)
    assert set(prev["state"]) == {"AK", "CA", "HI", "OR", "WA"}
    assert (prev["owners"] > 0).all() and (prev["renters"] > 0).all()
    with pytest.raises(ParameterError, match="housing"):
        previous_census_tenure("taxi")


def test_bad_inputs_are_refused(counts):
    with pytest.raises(ParameterError, match="seed"):
        tenure_table(counts, seed=-1)
    with pytest.raises(ParameterError, match="Hierarchy or a counts table"):
        tenure_table([1, 2, 3])
    with pytest.raises(InputError, match="no column"):
        tenure_table(counts.drop(columns="count"), levels=LEVELS)
    with pytest.raises(InputError, match="whole numbers"):
        tenure_table(pd.DataFrame({"r": ["a"], "size": [1], "count": [1.5]}))
