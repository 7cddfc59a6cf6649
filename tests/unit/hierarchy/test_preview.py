"""An upload before it is accepted: proposed level columns and the hierarchy's preview."""

from __future__ import annotations

import pandas as pd
import pytest

from cocoviz.errors import InputError, ParameterError
from cocoviz.hierarchy.ingest import load_upload, read_table
from cocoviz.hierarchy.preview import hierarchy_preview, propose_levels


@pytest.mark.parametrize(
    "csv, form, roles, proposed",
    [
        (b"state,county,size\nCA,A,1\n", "groups", {}, ["state", "county"]),
        (b"size,state,count,county\n1,CA,2,A\n", "counts", {}, ["state", "county"]),
        (b"persons,zone\n1,z\n", "groups", {"size": "persons"}, ["zone"]),
        (b"size\n1\n", "groups", {}, []),
        (b"a,b,c,d,e,size\n1,2,3,4,5,1\n", "groups", {}, list("abcde")),
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


def test_a_persons_upload_whose_group_lies_in_two_regions_is_refused_by_its_rows_not_previewed_as_one_region():
    """Issue 27, item 13: the region column varying inside group 1 was dropped from the proposal."""
    csv = b"name,group,region\nAl,1,a\nBo,1,b\nCy,2,b\nDi,3,c\nEd,3,c\n"
    levels = propose_levels(read_table(csv), "persons")
    assert levels == ["region"]
    with pytest.raises(InputError, match=r"^p\.csv: column 'group': group\(s\) 1 .*group 1 in rows 1, 2"):
        load_upload(csv, form="persons", levels=levels, filename="p.csv")


@pytest.mark.parametrize(
    "csv, proposed",
    [
        # Ages and names vary inside most groups: persons' attributes, not regions.
        (b"age,group,region\n30,1,a\n31,1,a\n40,2,b\n41,2,b\n50,3,b\n", ["region"]),
        (b"name,group,region\nA,1,a\nB,1,a\nC,2,b\nD,2,b\n", ["region"]),
        # A region column with one bad group among several is proposed (and then refused by its rows).
        (b"group,region\n1,a\n1,a\n2,b\n2,b\n3,a\n3,b\n", ["region"]),
    ],
)
def test_persons_attributes_are_left_out_and_region_columns_kept(csv, proposed):
    assert propose_levels(read_table(csv), "persons") == proposed
