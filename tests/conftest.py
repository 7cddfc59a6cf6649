"""Shared fixtures and the Hypothesis profile for the tests.

* ``toy_persons`` / ``toy_tree``: the slides' Persons table (Alice ... Nick).
* Strategies (random hierarchies, release options) live in
  ``engine_support.py``, which test modules import.

Hypothesis runs derandomized (a fixed example sequence, so CI is
deterministic) and without deadlines (numba compiles on first use).  Set
``HYPOTHESIS_PROFILE=explore`` to search with fresh random examples.
"""

from __future__ import annotations

import os
import tempfile

import pandas as pd
import pytest
from hypothesis import HealthCheck, settings

from cocoviz.hierarchy import Hierarchy

settings.register_profile(
    "cocoviz",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "explore",
    derandomize=False,
    deadline=None,
    max_examples=500,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "cocoviz"))

# No test writes the user's own privacy ledger: the default file is a fresh one per test run
# (tests that count entries set COCOVIZ_LEDGER to their own tmp path).
os.environ["COCOVIZ_LEDGER"] = os.path.join(tempfile.mkdtemp(prefix="cocoviz-ledger-"), "ledger.sqlite")
# The dashboard's time estimates use the fixed rate: a gate such as "compute it anyway" must not open or
# close with the machine's load (tests of the calibration itself unset this).
os.environ["COCOVIZ_TIMING"] = "fixed"

#: The slides' Persons table: group sizes 4, 2, 1, 1; groups 1 and 3 in region a.
TOY_PERSONS = pd.DataFrame(
    {
        "person": ["Alice", "Bob", "Carol", "Dave", "Eve", "Frank", "Judy", "Nick"],
        "group": [1, 1, 1, 1, 2, 2, 3, 4],
        "region": ["a", "a", "a", "a", "b", "b", "a", "b"],
    }
)


@pytest.fixture
def toy_persons() -> pd.DataFrame:
    return TOY_PERSONS.copy()


@pytest.fixture
def toy_tree() -> Hierarchy:
    return Hierarchy.from_persons(TOY_PERSONS.copy(), group="group", levels=["region"])


#: The same groups as a public groups table with their sizes (G and regions public).
TOY_GROUPS = pd.DataFrame({"group": [1, 2, 3, 4], "region": ["a", "b", "a", "b"], "size": [4, 2, 1, 1]})


@pytest.fixture
def toy_public_tree() -> Hierarchy:
    """The toy data with public G: built from the groups table (a secure release may use it)."""
    return Hierarchy.from_groups(TOY_GROUPS.copy(), size="size", levels=["region"])
