"""The columnar file, format 2 (issue 26): chunks, any depth, small JSON, text, wide integers; format 1 refused."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import Hierarchy, InputError, estimate, load_measurements, load_release
from cocoviz.core.runs import aggregate_runs
from cocoviz.release.files import release_file
from cocoviz.release.release import level_runs
from tests.support import files as file_support

KEY = b"the data holder's key, 32 bytes"


def _tree(leaves_per_state: int = 2, depth: int = 2, labels=None) -> Hierarchy:
    """A tree of ``depth`` levels below the root; every state has ``leaves_per_state`` children per level."""
    rng = np.random.default_rng(3)
    names = labels or [f"{k}" for k in range(leaves_per_state)]
    paths = [("a",), ("b",)]
    for _ in range(depth - 1):
        paths = [(*p, n) for p in paths for n in names]
    rows = [(*p, int(x)) for p in paths for x in rng.integers(0, 7, 3)]
    levels = [f"l{k}" for k in range(depth)]
    return Hierarchy.from_groups(pd.DataFrame(rows, columns=[*levels, "size"]), size="size", levels=levels)


_same = file_support.same_release


@pytest.mark.parametrize(
    ("load", "tag", "expected"),
    [
        (load_release, "cocoviz-release/1", "cocoviz-release/2"),
        (load_measurements, "cocoviz-measurements/1", "cocoviz-measurements/2"),
    ],
)
def test_a_format_1_file_is_refused_naming_its_format(tmp_path, load, tag, expected):
    """Format 1 is no longer read: its file is refused with its format and the one expected, no traceback."""
    table = pa.table({"level": [0], "node": [0], "value": [1]})
    path = tmp_path / "old.parquet"
    pq.write_table(table.replace_schema_metadata({b"cocoviz": json.dumps({"format": tag}).encode()}), path)
    with pytest.raises(InputError, match=f"has format '{tag}', expected '{expected}'"):
        load(path)


@pytest.mark.parametrize("depth", [1, 2, 4, 7])
def test_chunked_levels_of_any_depth_load_identical_signed(tmp_path, monkeypatch, depth):
    monkeypatch.setattr(release_file, "CHUNK", 3)
    tree = _tree(2, depth)
    methods = (["Hc", "Hg"] * depth)[: depth + 1]
    release = estimate(tree, epsilons=[1.0] * (depth + 1), methods=methods, max_size=20,
                       k_select="noisy-max-per-node", k_epsilon=0.5, seed=1)  # fmt: skip
    release.save(tmp_path / "r.parquet", key=KEY)
    table = pq.read_table(tmp_path / "r.parquet")
    levels = table.column("level").to_pylist()
    assert sorted(set(levels)) == list(range(depth + 1)) and len(levels) > depth + 1  # levels span several rows
    assert pq.ParquetFile(tmp_path / "r.parquet").metadata.num_row_groups == len(levels)  # a row group per chunk
    assert _same(load_release(tmp_path / "r.parquet", key=KEY), release)
    monkeypatch.setattr(release_file, "CHUNK", 1 << 20)  # the signature does not depend on the chunking
    assert _same(load_release(tmp_path / "r.parquet", key=KEY), release)


def test_a_chunked_column_missing_in_part_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(release_file, "CHUNK", 2)
    release = estimate(_tree(3), epsilons=[1.0] * 3, methods=["Hg"] * 3, seed=0)
    release.save(tmp_path / "r.parquet")
    table = pq.read_table(tmp_path / "r.parquet")
    rows = table.to_pydict()
    last = len(rows["level"]) - 1
    rows["count"][last] = None
    file_support.write(tmp_path / "r.parquet", rows, json.loads(table.schema.metadata[b"cocoviz"]))
    with pytest.raises(InputError, match="column 'count' of level 2 is missing in part"):
        load_release(tmp_path / "r.parquet")


def test_the_json_holds_no_per_node_list(tmp_path):
    """Metadata of a tree with 8 leaves and of one with 800: the same size but for digits of node counts."""
    sizes = []
    for leaves in (4, 400):
        release = estimate(_tree(leaves), epsilons=[1.0] * 3, methods=["Hc", "Hg", "Hc"], max_size=30,
                           k_select="noisy-max-per-node", k_epsilon=0.5, seed=0)  # fmt: skip
        release.save(tmp_path / "r.parquet")
        _, meta = file_support.read(tmp_path / "r.parquet")
        assert "bounds" not in meta and set(meta["plan"]["shape"]) == {"levels", "public_groups"}
        sizes.append(len(json.dumps(meta)))
    assert sizes[1] <= sizes[0] + 20


def test_text_labels_round_trip(tmp_path):
    labels = ["é", "a b", "0", "中文", "x\x00", "\U0001f600"]
    release = estimate(_tree(depth=2, labels=labels), epsilons=[1.0] * 3, methods=["Hg"] * 3, seed=0)
    release.save(tmp_path / "r.parquet", key=KEY)
    again = load_release(tmp_path / "r.parquet", key=KEY)
    assert _same(again, release) and again.shape.same_as(release.shape)
    assert again.shape.digest() == release.shape.digest()


def test_wide_integers_are_stored_as_int64_and_read_back(tmp_path):
    levels = [{"label": np.array([0]), "value": np.array([2**40, -(2**35), 7])}, {"label": np.arange(3), "value": None}]
    release_file.write(tmp_path / "x.parquet", {"format": "x"}, levels, ("label", "value"), None)
    schema = pq.read_schema(tmp_path / "x.parquet")
    assert (
        str(schema.field("value").type.value_type) == "int64" and str(schema.field("label").type.value_type) == "int32"
    )
    table, meta = release_file.read_stored(tmp_path / "x.parquet", "x", ("x",), "test file")
    back = release_file.level_arrays(table, 2, ("label", "value"))
    assert back[0]["value"].tolist() == [2**40, -(2**35), 7] and back[1]["value"] is None
    assert back[1]["label"].tolist() == [0, 1, 2] and back[0]["label"].dtype == np.int64


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 3)), max_size=12), st.booleans())
def test_level_runs_is_aggregate_runs(runs, ordered):
    """Stored runs taken as they are when in order, summed and sorted otherwise: aggregate_runs either way."""
    if ordered:
        runs = sorted({(n, s): c for n, s, c in runs}.items())
        runs = [(n, s, c) for (n, s), c in runs]
    node, size, count = (np.array([r[i] for r in runs], np.int64) for i in range(3))
    got, want = level_runs(node, size, count, 4), aggregate_runs(node, size, count, 4)
    assert all(np.array_equal(getattr(got, a), getattr(want, a)) for a in ("ptr", "sizes", "counts"))
    assert got.sizes.dtype == want.sizes.dtype == np.int64
