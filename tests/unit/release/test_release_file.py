"""The columnar file, format 2 (issue 26): chunks, any depth, small JSON, text, wide integers; format 1 still read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import Hierarchy, InputError, Plan, estimate, load_measurements, load_release, measure, post_process
from cocoviz.core.runs import aggregate_runs
from cocoviz.release.files import release_file
from cocoviz.release.release import level_runs
from tests.support import files as file_support

KEY = b"the data holder's key, 32 bytes"
FILES = Path(__file__).resolve().parents[2] / "support" / "data"


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


def _format1_tree() -> Hierarchy:
    """The tree the format-1 files in tests/files were written for (by the format-1 writer, before format 2)."""
    rng = np.random.default_rng(3)
    rows = [(s, f"{s}{c}", int(x)) for s in "ab" for c in range(2) for x in rng.integers(0, 7, 6)]
    return Hierarchy.from_groups(pd.DataFrame(rows, columns=["st", "co", "size"]), size="size", levels=["st", "co"])


def test_a_format_1_release_still_loads_identical_and_its_signature_holds():
    path = FILES / "release-v1.parquet"
    assert json.loads(pq.read_table(path).schema.metadata[b"cocoviz"])["format"] == "cocoviz-release/1"
    release = estimate(
        _format1_tree(), epsilons=[1, 1, 1], methods=["Hc", "Hg", "Hc"], max_size=20,
        k_select="noisy-max-per-node", k_epsilon=0.5, seed=2,
    )  # fmt: skip
    assert _same(load_release(path, key=KEY), release)
    assert _same(load_release(path), release)
    with pytest.raises(InputError, match="signature does not match"):
        load_release(path, key=b"another key of 32 bytes, not it")


def test_a_format_1_measurement_file_still_loads_and_post_processes_to_the_release():
    path = FILES / "measurements-v1.parquet"
    tree = _format1_tree()
    plan = Plan.build(
        tree, epsilons=[1, 1, 1], methods=["Hc", "Hg", "Hcp"], max_size=20, k_select="noisy-max-per-node",
        k_epsilon=0.5,
    )  # fmt: skip
    measurements = measure(plan, tree, seed=4)
    again = load_measurements(path, key=KEY)
    assert _same(post_process(plan, again), post_process(plan, measurements))


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
