"""A release file carries its interval bands: the loaded release's intervals are the in-memory release's, exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cocoviz import CocovizError, Hierarchy, InputError, ParameterError, estimate, load_release
from cocoviz.release.files import band_columns, release_file
from tests.support import files as file_support

KEY = b"the data holder's key, 32 bytes"


@st.composite
def hierarchies(draw) -> Hierarchy:
    """A random tree of 1 to 3 levels below the root, fan-out 1 to 3, 0 to 6 groups per leaf of sizes 0 to 9."""
    depth = draw(st.integers(1, 3))
    paths = [()]
    for _ in range(depth):
        paths = [(*p, f"n{c}") for p in paths for c in range(draw(st.integers(1, 3)))]
    rows = [(*p, s) for p in paths for s in draw(st.lists(st.integers(0, 9), max_size=6))]
    if not rows:
        rows = [(*paths[0], 1)]
    levels = [f"l{k}" for k in range(depth)]
    return Hierarchy.from_groups(pd.DataFrame(rows, columns=[*levels, "size"]), size="size", levels=levels)


def _intervals(release, node, confidence):
    """The node's intervals frame, or the refusal's message."""
    try:
        return release.intervals(node, confidence)
    except ParameterError as exc:
        return str(exc)


def _same_intervals(a, b, confidence) -> None:
    for level in range(a.shape.depth + 1):
        for node in a.shape.paths[level]:
            x, y = _intervals(a, node, confidence), _intervals(b, node, confidence)
            if isinstance(x, str):
                assert x == y
            else:
                assert x.equals(y) and x.attrs == y.attrs, node
                assert [x[c].dtype for c in x] == [y[c].dtype for c in y]


def _same_bands(a, b) -> None:
    for mine, theirs in zip(a.bands, b.bands):
        assert type(mine) is type(theirs)
        if mine is not None:
            for name, value in vars(mine).items():
                other = getattr(theirs, name)
                assert (
                    (value == other)
                    if isinstance(value, str)
                    else (value.dtype == other.dtype and np.array_equal(value, other))
                ), name


@settings(max_examples=25, deadline=None)
@given(hierarchies(), st.data())
def test_a_loaded_release_gives_the_in_memory_releases_intervals_exactly(tmp_path_factory, tree, data):
    depth = tree.depth + 1
    methods = data.draw(st.lists(st.sampled_from(["Hc", "Hg", "Hcp", "naive"]), min_size=depth, max_size=depth))
    options = dict(
        methods=methods,
        max_size=data.draw(st.integers(10, 14)),
        consistency=data.draw(st.sampled_from(["top-down", "bottom-up", "none"])),
        seed=data.draw(st.integers(0, 2**16)),
    )
    if data.draw(st.booleans()):
        options["rhos"] = [0.5] * depth
    else:
        options["epsilons"] = [1.0] * depth
    if data.draw(st.booleans()) and "rhos" not in options:
        options.update(k_select="noisy-max-per-node", k_epsilon=0.5)
    release = estimate(tree, **options)
    key = KEY if data.draw(st.booleans()) else None
    path = tmp_path_factory.mktemp("bands") / "r.parquet"
    release.save(path, key=key)
    again = load_release(path, key=key)
    _same_bands(release, again)
    _same_intervals(release, again, data.draw(st.sampled_from([0.5, 0.9, 0.99])))
    for mine, theirs in zip(release.stated, again.stated):  # the stated variances travel with the bands
        assert (mine is None and theirs is None) or (theirs.dtype == np.float32 and np.array_equal(mine, theirs))


def _toy_release():
    tree = Hierarchy.from_groups(pd.DataFrame({"s": list("aabbb"), "size": [1, 3, 2, 2, 5]}), size="size", levels=["s"])
    return estimate(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=8, seed=4)


def test_bands_are_int32_columns_where_they_fit_and_named_in_the_json(tmp_path):
    release = _toy_release()
    release.save(tmp_path / "r.parquet")
    schema = pq.read_schema(tmp_path / "r.parquet")
    for field in band_columns.BAND_FIELDS:
        assert str(schema.field(field).type.value_type) == "int32", field
    _, meta = file_support.read(tmp_path / "r.parquet")
    assert meta["bands"] == ["Hg", "Hc"]


def test_files_without_bands_still_load_and_refuse_intervals_as_before(tmp_path):
    release = _toy_release()
    release.save(tmp_path / "r.parquet", bands=False)
    assert "band_cells" not in pq.read_schema(tmp_path / "r.parquet").names
    loaded = load_release(tmp_path / "r.parquet")
    assert file_support.same_release(loaded, release) and loaded.bands == [None, None]
    with pytest.raises(ParameterError, match="from a file.*load_measurements"):
        loaded.intervals(("a",))
    # A release that carries no bands at all writes no band columns (the file of before).
    release.bands = [None, None]
    release.save(tmp_path / "none.parquet")
    assert "band_cells" not in pq.read_schema(tmp_path / "none.parquet").names


def _edited(tmp_path, change, key=None) -> Path:
    _toy_release().save(tmp_path / "r.parquet", key=key)
    file_support.edit_file(tmp_path / "r.parquet", tmp_path / "e.parquet", change)
    return tmp_path / "e.parquet"


def test_the_signature_covers_the_bands(tmp_path):
    def nudge(rows, meta):
        rows["band_up_value"][1] = [v + 1 for v in rows["band_up_value"][1]]

    def strip(rows, meta):
        for f in band_columns.BAND_FIELDS:
            del rows[f]
        del meta["bands"]

    for change in (nudge, strip):
        with pytest.raises(InputError, match="signature does not match"):
            load_release(_edited(tmp_path, change, KEY), key=KEY)
    assert load_release(_edited(tmp_path, strip)).bands == [None, None]  # unsigned: a file without bands


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda rows, meta: rows["band_cells"].__setitem__(1, [9, 9]), "not over the cells"),
        (lambda rows, meta: rows["band_up_at"].__setitem__(1, [1] + rows["band_up_at"][1][1:]), "start at 0"),
        (lambda rows, meta: rows["band_down_value"].__setitem__(1, rows["band_down_value"][1][::-1]), "rise"),
        (lambda rows, meta: rows["band_up_value"][0].__setitem__(-1, 2**60), "2\\*\\*53"),
        (lambda rows, meta: rows["band_up_steps"].__setitem__(1, [0, 0]), "steps per node"),
        (lambda rows, meta: meta.__setitem__("bands", ["Hc", "Hc"]), "not of a level"),
        (lambda rows, meta: meta.__setitem__("bands", ["Hg"]), "one entry per level"),
        (lambda rows, meta: meta.__setitem__("bands", [None, "Hc"]), "without a method"),
        (lambda rows, meta: rows["band_values"].__setitem__(1, [1, 2]), "band_values, which Hc bands have none of"),
    ],
)
def test_malformed_bands_are_refused_by_name(tmp_path, change, words):
    path = _edited(tmp_path, change)
    with pytest.raises(InputError, match=words):
        load_release(path)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(band_columns.BAND_FIELDS), st.integers(0, 1), st.integers(-3, 3), st.integers(0, 8))
def test_any_edit_of_a_band_column_is_refused_or_loads_without_a_traceback(tmp_path_factory, field, level, by, at):
    """Nothing read is trusted: an edited band loads (its intervals then computed or refused by name) or is refused."""
    folder = tmp_path_factory.mktemp("edit")

    def change(rows, meta):
        values = rows[field][level]
        if values is None:
            rows[field][level] = [by]
        elif values:
            values[at % len(values)] += by
        else:
            values.append(by)

    try:
        loaded = load_release(_edited(folder, change))
    except InputError:
        return
    for level_ in (0, 1):
        for node in loaded.shape.paths[level_]:
            try:
                frame = loaded.intervals(node)
            except CocovizError:
                continue
            assert (frame["cumulative_low"] <= frame["cumulative_high"]).all()


def test_release_file_keeps_the_chunked_band_columns(tmp_path, monkeypatch):
    """Band columns longer than a chunk span rows like every other column and load identical."""
    monkeypatch.setattr(release_file, "CHUNK", 2)
    release = _toy_release()
    release.save(tmp_path / "r.parquet", key=KEY)
    assert len(pq.read_table(tmp_path / "r.parquet").column("level")) > 2
    again = load_release(tmp_path / "r.parquet", key=KEY)
    _same_bands(release, again)
    _same_intervals(release, again, 0.9)
