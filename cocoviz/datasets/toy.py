"""The slides' toy example: eight persons in four groups and two regions."""

from __future__ import annotations

import pandas as pd

__all__ = ["toy_persons", "toy_groups", "RECIPE"]

#: What the toy example holds, for its data card.
RECIPE = (
    "Eight persons (Alice, Bob, Carol, Dave, Eve, Frank, Judy, Nick) in four groups and two regions: "
    "group 1 (Alice, Bob, Carol, Dave) and group 3 (Judy) in region a, group 2 (Eve, Frank) and group 4 "
    "(Nick) in region b. Stored in the persons form, with its public groups table (group -> region), so G "
    "and the regions are public inputs."
)


def toy_persons() -> pd.DataFrame:
    """The slides' Persons table: 8 persons in groups 1–4, regions a and b.

    Region a holds group 1 (Alice, Bob, Carol, Dave) and group 3 (Judy);
    region b holds group 2 (Eve, Frank) and group 4 (Nick).  At the root,
    H = [0, 2, 1, 0, 1]: two groups of size 1, one of 2, one of 4.

    Examples
    --------
    >>> toy_persons().groupby("group").size().tolist()
    [4, 2, 1, 1]
    """
    return pd.DataFrame(
        {
            "person": ["Alice", "Bob", "Carol", "Dave", "Eve", "Frank", "Judy", "Nick"],
            "group": [1, 1, 1, 1, 2, 2, 3, 4],
            "region": ["a", "a", "a", "a", "b", "b", "a", "b"],
        }
    )


def toy_groups() -> pd.DataFrame:
    """The toy's public groups table: every group and its region (not its size, which is private).

    Examples
    --------
    >>> toy_groups().to_dict("list")
    {'group': [1, 2, 3, 4], 'region': ['a', 'b', 'a', 'b']}
    """
    return pd.DataFrame({"group": [1, 2, 3, 4], "region": ["a", "b", "a", "b"]})
