"""The command line's shared fixture: a persons file and its public groups table, the ledger in a fresh folder."""

from __future__ import annotations

import pandas as pd
import pytest

#: Eight persons in five households, two states and four counties.
PERSONS = pd.DataFrame(
    {
        "hh": [1, 1, 2, 3, 3, 3, 4, 5],
        "state": ["CA", "CA", "CA", "OR", "OR", "OR", "OR", "OR"],
        "county": ["A", "A", "B", "L", "L", "L", "M", "M"],
    }
)


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A persons Parquet file and its public groups CSV in ``tmp_path`` (the working folder); the ledger there."""
    PERSONS.to_parquet(tmp_path / "persons.parquet")
    PERSONS.drop_duplicates("hh").to_csv(tmp_path / "households.csv", index=False)
    monkeypatch.setenv("COCOVIZ_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.chdir(tmp_path)
    return tmp_path
