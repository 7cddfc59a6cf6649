"""One documented rule for text against integer ids across the persons and groups tables (in every source
form): a text id matches an integer id exactly when it is the integer's decimal spelling; ``"01"``,
``"1.0"`` and ``" 1"`` do not match ``1`` (the persons whose group is then unlisted are refused, rows named).
Inside one column, ``1`` and ``"1"`` together are refused (tests/unit/hierarchy/ingest/test_sources.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from cocoviz.hierarchy import Hierarchy
from cocoviz.hierarchy.tables import TableProblems

PERSONS = pd.DataFrame({"hh": [1, 1, 2], "s": ["a", "a", "b"]})


def _forms(tmp_path, ids):
    PERSONS.to_parquet(tmp_path / "p.parquet")
    groups = pd.DataFrame({"hh": ids, "s": ["a", "b"]})
    groups.to_csv(tmp_path / "g.csv", index=False)
    for persons in (str(tmp_path / "p.parquet"), PERSONS):
        for listed in (str(tmp_path / "g.csv"), groups):
            yield persons, listed


def test_the_decimal_spelling_matches_in_every_form(tmp_path):
    for persons, listed in _forms(tmp_path, ["1", "2"]):
        assert Hierarchy.from_persons(persons, group="hh", levels=["s"], groups=listed).groups(()) == 2


@pytest.mark.parametrize("spelling", ["01", "1.0", " 1", "+1"])
def test_any_other_spelling_does_not_match_and_is_refused(tmp_path, spelling):
    for persons, listed in _forms(tmp_path, [spelling, "2"]):
        with pytest.raises(TableProblems, match=r"column 'hh': group\(s\)"):
            Hierarchy.from_persons(persons, group="hh", levels=["s"], groups=listed)
