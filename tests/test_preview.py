"""An upload before it is accepted: proposed level columns and the hierarchy's preview."""

from __future__ import annotations

import pandas as pd
import pytest

from cocoviz.errors import ParameterError
from cocoviz.hierarchy import MAX_DEPTH
from cocoviz.io import load_upload, read_table
from cocoviz.preview import hierarchy_preview, propose_levels


@pytest.mark.parametrize(
    "csv, form, roles, proposed",
    [
        (b"state,county,size\nCA,A,1\n", "groups", {}, ["state", "county"]),
        (b"size,state,count,county\n1,CA,2,A\n", "counts", {}, ["state", "county"]),
        (b"persons,zone\n1,z\n", "groups", {"size": "persons"}, ["zone"]),
        (b"size\n1\n", "groups", {}, []),
        (b"a,b,c,d,e,size\n1,2,3,4,5,1\n", "groups", {}, list("abcd")[:MAX_DEPTH]),
        # Persons: the person's name varies inside group 1, the region does not.
        (b"name,group,region,town\nA,1,a,x\nB,1,a,x\nC,2,b,y\n", "persons", {}, ["region", "town"]),
    ],
)
def test_every_column_but_the_roles_is_proposed_in_order(csv, form, roles, proposed):
    assert propose_levels(read_table(csv), form, **roles) == proposed


def test_the_proposal_loads_and_its_preview_counts_nodes_per_level():
    csv = b"state,county,size\n" + b"".join(f"s{i % 3},c{i % 7},{i % 5}\n".encode() for i in range(40))
    frame = read_table(csv)
    levels = propose_levels(frame, "groups")
    tree = load_upload(csv, levels=levels)
    preview = hierarchy_preview(tree, ["West", "state", "county"], examples=2)
    assert preview["name"].tolist() == ["West", "state", "county"]
    assert preview["nodes"].tolist() == [1, 3, 21] == tree.summary()["nodes_per_level"]
    assert preview.loc[0, "groups per node"] == "40"
    assert preview.loc[1, "examples"] == "s0 · s1 · … (1 more)"
    assert preview.loc[2, "examples"].startswith("s0/c0 · s0/c1 · … (19 more)")


def test_unknown_form_is_refused():
    with pytest.raises(ParameterError, match="unknown form"):
        propose_levels(pd.DataFrame({"a": [1]}), "households")
