"""The rows a refusal names are chosen by their values, not by where a parallel scan happens to find them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cocoviz.hierarchy import Hierarchy
from cocoviz.hierarchy.tables import TableProblems


def _message(frame: pd.DataFrame, path: Path) -> str:
    frame.to_parquet(path, row_group_size=4)
    with pytest.raises(TableProblems) as caught:
        Hierarchy.from_persons(str(path), group="group", levels=["state"])
    return str(caught.value)


def test_same_bad_rows_in_any_row_order_name_the_same_examples(tmp_path):
    groups = np.arange(1, 61)
    frame = pd.DataFrame({"group": groups, "state": [None if g % 2 else "CA" for g in groups]})
    messages = {
        _message(frame, tmp_path / "sorted.parquet"),
        _message(frame.iloc[::-1], tmp_path / "reversed.parquet"),
        _message(frame.sample(frac=1, random_state=3), tmp_path / "shuffled.parquet"),
    }
    assert len(messages) == 1, messages
    (message,) = messages
    assert "missing region label, in 30 rows" in message
    shown = [int(x) for x in message.split("group=")[1:] for x in [x.split(",")[0]]]
    assert shown == sorted(shown) and len(shown) == len(set(shown))
