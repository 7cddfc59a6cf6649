"""Datasets: the toy example, generators (deterministic, calibrated), bundle, cards, CLI."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cocoviz import datasets
from cocoviz.cli.main import main
from cocoviz.core.histograms import ranked
from cocoviz.datasets import (
    DATA_DIR,
    DEFAULT_DATASET,
    PAPER_FIGURES,
    bundled_names,
    dataset,
    dataset_card,
    dataset_names,
    generate,
    load_dataset,
)
from cocoviz.datasets.geography import WEST_COAST, county_weights, states
from cocoviz.datasets.housing import generate_housing
from cocoviz.hierarchy import Hierarchy

REQUIRED = ["toy", "housing", "housing-west", "white", "hawaiian", "taxi"]


def figures(table: pd.DataFrame) -> tuple[int, int, int]:
    sizes, counts = table["size"].to_numpy(), table["count"].to_numpy()
    return int(counts.sum()), int(np.dot(sizes, counts)), int(np.unique(sizes).size)


def same_runs(a: Hierarchy, b: Hierarchy) -> bool:
    if a.levels != b.levels or a.summary() != b.summary():
        return False
    return all(
        a.nodes(lvl) == b.nodes(lvl)
        and all(
            np.array_equal(x, y)
            for x, y in zip(
                (a.runs(lvl).ptr, a.runs(lvl).sizes, a.runs(lvl).counts),
                (b.runs(lvl).ptr, b.runs(lvl).sizes, b.runs(lvl).counts),
            )
        )
        for lvl in range(a.depth + 1)
    )


# ----------------------------------------------------------------------- toy
def test_toy_is_the_slides_example():
    tree = load_dataset("toy")
    assert tree.levels == ("region",)
    assert tree.histogram(()).tolist() == [0, 2, 1, 0, 1]
    assert ranked(tree.histogram(())).tolist() == [1, 1, 2, 4]
    assert tree.histogram(("a",)).tolist() == [0, 1, 0, 0, 1]  # Alice-Dave, Judy
    assert tree.histogram(("b",)).tolist() == [0, 1, 1]  # Eve and Frank, Nick
    assert tree.summary()["persons"] == 8


def test_toy_file_matches_the_code():
    persons = datasets.toy_persons()
    assert persons["person"].tolist() == ["Alice", "Bob", "Carol", "Dave", "Eve", "Frank", "Judy", "Nick"]
    on_disk = pd.read_csv(DATA_DIR / "toy.csv")
    pd.testing.assert_frame_equal(on_disk, persons)


def test_toy_has_no_scale():
    with pytest.raises(ValueError, match="fixed"):
        load_dataset("toy", scale=0.5)


# ------------------------------------------------------------------ registry
def test_names_and_default():
    names = dataset_names()
    assert names[0] == "toy"
    assert set(REQUIRED) <= set(names)
    assert DEFAULT_DATASET in names


@pytest.mark.parametrize("bad", ["nope", "", None, 3])
def test_unknown_dataset(bad):
    with pytest.raises(ValueError, match="unknown dataset"):
        load_dataset(bad)


@pytest.mark.parametrize("scale", [0, -1, math.nan, math.inf, 11, "big"])
def test_bad_scale(scale):
    with pytest.raises(ValueError, match="scale"):
        load_dataset("housing", scale=scale)


@pytest.mark.parametrize("seed", [-1, 1.5, True, "0"])
def test_bad_seed(seed):
    with pytest.raises(ValueError, match="seed"):
        generate("taxi", scale=0.01, seed=seed)


# ---------------------------------------------------------------- generators
@pytest.mark.slow
@pytest.mark.parametrize(
    "name, scale",
    [
        ("housing", 0.002),
        ("white", 0.005),
        ("hawaiian", 0.005),
        ("taxi", 0.05),
        ("housing-west", 0.01),
        ("white-west", 0.02),
    ],
)
def test_deterministic_for_a_seed(name, scale):
    a = generate(name, scale=scale, seed=7)
    b = generate(name, scale=scale, seed=7)
    pd.testing.assert_frame_equal(a, b)
    c = generate(name, scale=scale, seed=8)
    assert not (len(a) == len(c) and (a["count"].to_numpy() == c["count"].to_numpy()).all())


@pytest.mark.parametrize("family", ["housing", "white", "hawaiian"])
def test_west_coast_is_the_same_states_of_the_national_data(family):
    national = load_dataset(family, scale=0.01, seed=3)
    west = load_dataset(f"{family}-west", scale=0.01, seed=3)
    assert west.nodes(1) == [(s,) for s in sorted(WEST_COAST)]
    for state in WEST_COAST:
        assert same_runs(national.subtree((state,)), west.subtree((state,)))


@pytest.mark.parametrize(
    "name, scale, tol", [("housing", 0.01, 0.05), ("white", 0.02, 0.05), ("taxi", 0.05, 0.05), ("hawaiian", 0.05, 0.15)]
)
def test_groups_and_persons_scale_linearly(name, scale, tol):
    table = generate(name, scale=scale, seed=0)
    groups, persons, distinct = figures(table)
    paper_groups, paper_persons, paper_distinct = PAPER_FIGURES[name]
    assert groups == pytest.approx(paper_groups * scale, rel=0.01)
    if name == "housing":
        # The 2,600 outliers (mean size 5,000.5) are kept whole; the households' persons scale.
        outliers = 52 * 50 * 5000.5
        assert persons == pytest.approx(outliers + (paper_persons - outliers) * scale, rel=tol)
        bulk = table[table["size"] <= 100]
        persons = int(np.dot(bulk["size"], bulk["count"]))
        paper_persons -= outliers
    # Sparse Hawaiian data: a few blocks hold many persons, so its persons vary more at small scale.
    assert persons == pytest.approx(paper_persons * scale, rel=tol)
    assert 0 < distinct <= paper_distinct * 1.05


@pytest.mark.slow
@pytest.mark.parametrize("name", ["housing", "white", "hawaiian", "taxi"])
def test_paper_figures_at_scale_one(name):
    """The three figures of the paper's Table 2 within 5% (a few seconds: counts form, not groups)."""
    got = figures(generate(name, scale=1.0, seed=0))
    for ours, paper in zip(got, PAPER_FIGURES[name]):
        assert ours == pytest.approx(paper, rel=0.05)


def test_housing_recipe():
    table = generate("housing", scale=0.05, seed=1)
    assert table["state"].nunique() == 52 and table["county"].nunique() > 1800
    tree = load_dataset("housing", scale=0.05, seed=1)
    assert tree.summary()["nodes_per_level"] == [1, 52, 3221]
    ca = tree.histogram(("CA",))
    # The tail past 7 keeps a roughly constant ratio between neighbouring sizes.
    ratios = ca[8:13] / ca[7:12]
    assert np.all((ratios > 0.3) & (ratios < 0.8))
    assert tree.max_size <= 10_000
    # Outliers: 50 per state at every scale up to 1; a few are small enough to hide in the bulk.
    big = table.loc[table["size"] > 100, "count"].sum()
    assert 52 * 50 * 0.97 < big <= 52 * 50
    # The previous recipe scaled them too: 2.5 per state on average here.
    scaled = generate_housing(0.05, 1, outliers="scaled")
    big = scaled.loc[scaled["size"] > 100, "count"].sum()
    assert 52 * 50 * 0.05 * 0.5 < big < 52 * 50 * 0.05 * 1.6


def _tail(table: pd.DataFrame, above: int) -> pd.DataFrame:
    part = table[table["size"] > above]
    return part.sort_values(["state", "county", "size"], ignore_index=True).astype({"state": str, "county": str})


@pytest.mark.parametrize("scale", [0.004, 0.028, 0.3])
def test_housing_outliers_survive_scaling(scale):
    """The largest groups of a scaled draw are the full-size draw's: same count, sizes and counties."""
    full = generate_housing(1.0, 4, only_states=WEST_COAST)
    scaled = generate_housing(scale, 4, only_states=WEST_COAST)
    tail_full, tail_scaled = _tail(full, 100), _tail(scaled, 100)
    pd.testing.assert_frame_equal(tail_scaled, tail_full, check_categorical=False)
    # 5 states x 50 outliers, about 1% of them of size <= 100: nothing else is above 100.
    assert 0.95 * 250 < tail_full["count"].sum() <= 250
    assert (
        scaled["size"].max() == full["size"].max()
        and scaled["size"].nlargest(50).tolist() == full["size"].nlargest(50).tolist()
    )


def test_housing_bulk_is_scaled_by_the_factor():
    full = generate_housing(1.0, 5, only_states=WEST_COAST)
    scaled = generate_housing(0.028, 5, only_states=WEST_COAST)
    for table in (full, scaled):
        table["bulk"] = table["size"] <= 100
    by_size_full = full[full["bulk"]].groupby("size")["count"].sum()
    by_size_scaled = scaled[scaled["bulk"]].groupby("size")["count"].sum()
    # Every bulk size from 1 to 7 (millions of groups at full size) scaled by 0.028 within 1%.
    ratio = by_size_scaled.loc[1:7] / by_size_full.loc[1:7]
    assert np.allclose(ratio, 0.028, rtol=0.01)
    # The outliers are the only groups > 100: same count at both scales.
    assert full.loc[~full["bulk"], "count"].sum() == scaled.loc[~scaled["bulk"], "count"].sum()


def test_housing_outlier_recipe_is_checked():
    with pytest.raises(ValueError, match="outliers"):
        generate_housing(0.01, 0, only_states=["DC"], outliers="some")


def test_every_county_keeps_a_group_at_tiny_scale():
    tree = load_dataset("housing", scale=1e-4, seed=0)
    assert tree.summary()["nodes_per_level"] == [1, 52, 3221]
    assert min(tree.groups(node) for node in tree.nodes(2)) >= 1


def test_county_sizes_do_not_depend_on_the_seed():
    assert sum(len(s.counties) for s in states()) == 3221
    assert np.isclose(county_weights("CA").sum(), 1.0) and len(county_weights("CA")) == 58
    assert "Los Angeles County" in next(s for s in states() if s.postal == "CA").counties


def test_race_data_dense_white_sparse_hawaiian_concentrated_in_hawaii():
    white = load_dataset("white", scale=0.05, seed=0)
    hawaiian = load_dataset("hawaiian", scale=0.05, seed=0)
    assert white.groups(()) == hawaiian.groups(())  # the same blocks
    sizes, counts = white.node_runs(())
    assert counts[sizes >= 100].sum() > 0.03 * counts.sum()  # many blocks with hundreds of persons
    assert sizes.max() > 1000
    h_all, h_hi = hawaiian.histogram(()), hawaiian.histogram(("HI",))
    assert h_all[0] > 0.98 * h_all.sum()  # mostly zero
    assert 1 - h_hi[0] / h_hi.sum() > 10 * (1 - h_all[0] / h_all.sum())


def test_taxi_shape():
    tree = load_dataset("taxi")
    assert tree.nodes(1) == [("Lower Manhattan",), ("Upper Manhattan",)]
    assert len(tree.nodes(2)) == 28
    midtown = tree.histogram(("Lower Manhattan", "Midtown-Midtown South"))
    assert midtown[0] == 0 and 2000 < len(midtown) < 10_000  # heavy tail to a few thousand pickups


def test_only_states_rejects_unknown_codes():
    with pytest.raises(ValueError, match="unknown state"):
        datasets.generate_housing(0.01, 0, only_states=["CA", "XX"])
    with pytest.raises(ValueError, match="unknown state"):
        datasets.generate_race("white", 0.01, 0, only_states=["XX"])
    with pytest.raises(ValueError, match="race"):
        datasets.generate_race("green", 0.01, 0)


# -------------------------------------------------------------------- bundle
@pytest.mark.parametrize("name", bundled_names())
def test_bundled_file_is_small_and_reproducible(name):
    spec = dataset(name)
    path = DATA_DIR / spec.filename
    assert path.exists() and path.stat().st_size <= 10 * 2**20
    bundled = load_dataset(name)
    assert same_runs(bundled, spec.build(generate(name)))


def test_default_dataset_is_the_papers_west_coast_housing_at_full_size():
    """Figure 6's winner at the root moves with the number of households (data/README.md): the default
    is bundled at the paper's size, three levels (that the file is exactly that draw is
    test_bundled_file_is_small_and_reproducible's)."""
    s = load_dataset(DEFAULT_DATASET).summary()
    assert DEFAULT_DATASET == "housing-west"
    assert dataset(DEFAULT_DATASET).bundle_scale == 1.0
    assert s["nodes_per_level"] == [1, 5, 167]
    assert 30e6 <= s["groups"] <= 40e6


def test_whole_data_folder_is_small():
    assert sum(p.stat().st_size for p in DATA_DIR.iterdir()) < 5 * 2**20


def test_load_is_cached_and_seed_regenerates():
    assert load_dataset("taxi") is load_dataset("taxi")
    other = load_dataset("housing-west", seed=1)
    assert other.summary()["groups"] == pytest.approx(load_dataset("housing-west").summary()["groups"], rel=0.01)
    assert not same_runs(other, load_dataset("housing-west"))


@pytest.mark.slow
def test_write_bundle_round_trip(tmp_path):
    written = datasets.write_bundle(tmp_path, full_scale=False)
    names = {p.name for p, _ in written}
    assert {"README.md", "toy.csv", "housing.parquet"} <= names
    for name in ("toy", "housing-west", "taxi"):
        assert same_runs(load_dataset(name, data_dir=tmp_path), load_dataset(name))


# --------------------------------------------------------------------- cards
@pytest.mark.parametrize("name", dataset_names())
def test_card_is_computed_from_the_data(name):
    card = dataset_card(name)
    s = load_dataset(name).summary()
    for key in ("groups", "persons", "distinct_sizes", "nodes_per_level", "max_size"):
        assert card[key] == s[key]
    assert card["level_names"][1:] == list(load_dataset(name).levels)
    assert card["imitates"] and card["recipe"] and card["description"]
    assert card["public_max_size"] >= s["max_size"]


def test_readme_carries_every_card_with_current_figures():
    text = (DATA_DIR / "README.md").read_text(encoding="utf-8")
    assert "python -m cocoviz data --bundle" in text
    for name in bundled_names():
        card = dataset_card(name)
        assert f"`{name}`" in text
        assert f"**Groups** {card['groups']:,}; **persons** {card['persons']:,}" in text


def test_west_cards_name_their_root():
    assert dataset_card("housing-west")["level_names"] == ["West Coast", "state", "county"]
    assert dataset_card("taxi")["level_names"] == ["Manhattan", "half", "neighbourhood"]


# ----------------------------------------------------------------------- CLI
def test_cli_generates_and_prints_the_three_figures(tmp_path, capsys):
    out = tmp_path / "taxi.parquet"
    assert main(["data", "taxi", "--scale", "0.1", "--seed", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "groups" in printed and "persons" in printed and "distinct sizes" in printed and "paper" in printed
    table = pd.read_parquet(out)
    assert list(table.columns) == ["half", "neighbourhood", "size", "count"]
    pd.testing.assert_frame_equal(table, generate("taxi", scale=0.1, seed=2), check_categorical=False)


def test_cli_list_card_and_errors(capsys):
    assert main(["data", "--list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in REQUIRED)
    assert main(["data", "toy", "--card"]) == 0
    assert "Alice" in capsys.readouterr().out
    assert main(["data"]) == 2
    assert "name a dataset" in capsys.readouterr().err
    assert main(["data", "taxi", "--scale", "-1"]) == 2
    assert "scale" in capsys.readouterr().err


# ------------------------------------------------------------ census scale
def test_census_geography_has_published_like_counts_at_scale_1():
    from cocoviz.datasets.census import _geography

    tracts = sum(int(_geography(k, 1.0)[0][-1]) for k in range(len(states())))
    groups = sum(int(_geography(k, 1.0)[2][-1]) for k in range(len(states())))
    assert 80_000 <= tracts <= 90_000 and 230_000 <= groups <= 255_000


def test_census_splits_the_housing_draw_and_tracts_sum_the_block_groups():
    bgs = datasets.generate_census(0.002, 3, only_states=["DC", "VT"])
    tracts = datasets.generate_census(0.002, 3, level="tract", only_states=["DC", "VT"])
    assert list(bgs.columns) == ["state", "county", "tract", "blockgroup", "size", "count"]
    assert (bgs["count"] > 0).all() and (tracts["count"] > 0).all()
    summed = bgs.groupby(["state", "county", "tract", "size"], observed=True)["count"].sum()
    mine = tracts.set_index(["state", "county", "tract", "size"])["count"].sort_index()
    pd.testing.assert_series_equal(summed.sort_index(), mine, check_names=False, check_index_type=False)
    # Every county's runs are the housing generator's, split further (same draw per state and county).
    from cocoviz.datasets.census import _housing_scale

    county = datasets.generate_housing(_housing_scale(0.002), 3, only_states=["DC", "VT"])
    by_county = bgs.groupby(["state", "county", "size"], observed=True)["count"].sum()
    expected = county[county["count"] > 0].set_index(["state", "county", "size"])["count"]
    assert by_county.sort_index().to_dict() == expected.sort_index().to_dict()
    # Deterministic from the seed; another seed differs.
    pd.testing.assert_frame_equal(bgs, datasets.generate_census(0.002, 3, only_states=["DC", "VT"]))
    assert not bgs.equals(datasets.generate_census(0.002, 4, only_states=["DC", "VT"]))


def test_census_blocks_split_the_block_groups_and_list_every_empty_block():
    from cocoviz.datasets.census import EMPTY_BLOCKS, _blocks

    states_ = ["DC", "VT"]
    blocks = datasets.generate_census(0.002, 3, level="block", only_states=states_)
    bgs = datasets.generate_census(0.002, 3, only_states=states_)
    assert list(blocks.columns) == ["state", "county", "tract", "blockgroup", "block", "size", "count"]
    keys = ["state", "county", "tract", "blockgroup", "size"]
    summed = blocks[blocks["count"] > 0].groupby(keys, observed=True)["count"].sum()
    assert summed.sort_index().to_dict() == bgs.set_index(keys)["count"].sort_index().to_dict()
    # Every block of the geography is a leaf; the empty ones are listed by one row of 0 groups.
    leaves = blocks.groupby(keys[:4] + ["block"], observed=True)["count"].sum()
    index = {s.postal: k for k, s in enumerate(states())}
    assert len(leaves) == sum(int(_blocks(index[s], 0.002)[0][-1]) for s in states_)
    empty = leaves == 0
    assert (blocks.loc[blocks["count"] == 0].groupby(keys[:4] + ["block"], observed=True).size() == 1).all()
    assert empty.sum() == (blocks["count"] == 0).sum() and 0.5 * EMPTY_BLOCKS < empty.mean() < 2 * EMPTY_BLOCKS
    assert ((leaves > 0) & (leaves <= 5)).sum() > 0.1 * len(leaves)
    pd.testing.assert_frame_equal(blocks, datasets.generate_census(0.002, 3, level="block", only_states=states_))
    assert not blocks.equals(datasets.generate_census(0.002, 4, level="block", only_states=states_))
    tree = datasets.dataset("housing-us-blocks").build(blocks)
    assert tree.depth == 5 and (tree.runs(5).groups() == 0).sum() == empty.sum()


def test_census_split_is_multinomial():
    from cocoviz.datasets.census import split_runs

    rng = np.random.default_rng(5)
    weights = np.array([0.5, 0.3, 0.2, 0.1, 0.9])
    ptr = np.array([0, 3, 5])
    item, bin_, count = split_runs(rng, np.full(4000, 100), ptr, weights, np.repeat([0, 1], 2000))
    assert np.array_equal(np.bincount(item, weights=count), np.full(4000, 100.0))
    first = bin_[item < 2000]
    assert first.max() < 3 and bin_[item >= 2000].min() >= 3
    share = np.bincount(bin_, weights=count, minlength=5) / np.array([2e5, 2e5, 2e5, 2e5, 2e5])
    # Means within 1% (about 10 standard errors of these totals).
    assert np.allclose(share, weights, atol=0.01)


def test_census_datasets_are_registered_and_not_bundled():
    for name, depth in (("housing-us-tracts", 3), ("housing-us-blockgroups", 4), ("housing-us-blocks", 5)):
        assert name in dataset_names() and name not in bundled_names()
        spec = dataset(name)
        assert not spec.bundled and not (DATA_DIR / spec.filename).exists()
        tree = load_dataset(name, scale=0.001, seed=1)
        assert tree.depth == depth and tree.levels[-1] == ("tract", "blockgroup", "block")[depth - 3]
        assert tree.summary()["nodes_per_level"][2] == 3221
        assert dataset_card(name)["file"] is None


def test_cli_generates_a_census_dataset(tmp_path, capsys):
    out = tmp_path / "bg.parquet"
    assert main(["data", "housing-us-blockgroups", "--scale", "0.001", "--out", str(out)]) == 0
    assert "blockgroup" in capsys.readouterr().out
    assert list(pd.read_parquet(out).columns)[:4] == ["state", "county", "tract", "blockgroup"]
