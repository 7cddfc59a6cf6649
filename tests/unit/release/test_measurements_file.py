"""The noisy-measurement file: round trip to an identical release, contents, checks and signatures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cocoviz import (
    Hierarchy,
    InputError,
    ParameterError,
    Plan,
    load_measurements,
    measure,
    post_process,
    save_measurements,
)
from cocoviz.release.files.measurements_file import MEASUREMENTS_FORMAT
from tests.support import files as file_support
from tests.support.engine import random_trees, release_options

KEY = b"0123456789abcdef-holder"


def same_release(a, b) -> None:
    assert a.to_frame().equals(b.to_frame())
    assert a.budget == b.budget and a.plan == b.plan
    assert a.chosen_bounds() == b.chosen_bounds()


@st.composite
def plans(draw, tree):
    """A plan for ``tree`` under pure ε or zCDP, with a public or private K."""
    n = tree.depth + 1
    options = draw(release_options(n, tree.max_size))
    seed = options.pop("seed")
    if draw(st.booleans()):
        options["rhos"] = [e * e / 2 for e in options.pop("epsilons")]
    k_select = draw(st.sampled_from(["public", "noisy-max", "noisy-max-per-node", "from-hg"]))
    if k_select == "from-hg":
        options["methods"][0] = "Hg"
        options["consistency"] = draw(st.sampled_from(["top-down", "none"]))
    if k_select != "public":
        options.update(k_select=k_select, k_epsilon=None if k_select == "from-hg" else 0.5)
    return Plan.build(tree, **options), seed


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_post_process_of_the_loaded_file_is_the_release(tmp_path, data):
    rt = data.draw(random_trees())
    plan, seed = data.draw(plans(rt.tree))
    measurements = measure(plan, rt.tree, seed=seed)
    path = tmp_path / "m.parquet"
    signed = data.draw(st.booleans())
    save_measurements(measurements, path, key=KEY if signed else None)
    again = load_measurements(path, key=KEY if signed else None)
    same_release(post_process(plan, again), post_process(plan, measurements))
    for a, b in zip(again.levels, measurements.levels):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a.values, b.values)
            np.testing.assert_array_equal(a.ptr, b.ptr)


def test_the_file_holds_noisy_answers_and_public_facts_only(tmp_path, toy_public_tree):
    plan = Plan.build(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10)
    measurements = measure(plan, toy_public_tree, seed=3)
    save_measurements(measurements, tmp_path / "m.parquet")
    rows, meta = file_support.read(tmp_path / "m.parquet")
    assert list(rows) == ["level", "labels", "label", "parent", "groups", "K", "value"]
    assert set(meta) == {"format", "contents", "statement", "plan", "budget"}
    assert meta["format"] == MEASUREMENTS_FORMAT
    assert meta["statement"] == {"sampler": measurements.budget.sampler, "accounting": "pure-ε", "epsilon": 2.0}
    assert meta["plan"]["shape"] == {"levels": ["region"], "public_groups": True}  # the nodes are columns
    assert rows["groups"] == [list(g) for g in plan.shape.groups]
    assert rows["labels"] == [[], ["a", "b"]] and rows["label"] == [[0], [0, 1]] and rows["parent"] == [[], [0, 0]]
    # The values are the noisy answers: the toy's true Hg at the root plus noise, never the truth itself.
    assert rows["value"] == [m.values.tolist() for m in measurements.levels]


def test_zcdp_file_states_rho(tmp_path, toy_public_tree):
    plan = Plan.build(toy_public_tree, total_rho=0.5, methods=["Hg", "Hc"], max_size=10)
    save_measurements(measure(plan, toy_public_tree, seed=1), tmp_path / "m.parquet")
    _, meta = file_support.read(tmp_path / "m.parquet")
    assert meta["statement"]["accounting"] == "zCDP" and meta["statement"]["rho"] == 0.5
    assert load_measurements(tmp_path / "m.parquet").budget.total_rho == 0.5


@pytest.fixture
def saved(tmp_path, toy_public_tree):
    plan = Plan.build(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10)
    path = tmp_path / "m.parquet"
    save_measurements(measure(plan, toy_public_tree, seed=2), path, key=KEY)
    return path


def rewrite(path, edit_meta=None, edit_columns=None, types=None):
    rows, meta = file_support.read(path)
    if edit_meta:
        edit_meta(meta)
    if edit_columns:
        edit_columns(rows)
    file_support.write(path, rows, meta, types)


def _set(key, value):
    return lambda meta: meta.__setitem__(key, value)


@pytest.mark.parametrize(
    ("edit_meta", "edit_columns", "reason"),
    [
        (_set("format", "cocoviz-release/1"), None, "has format 'cocoviz-release/1'"),
        (lambda m: m.pop("plan"), None, "lacks the plan"),
        (lambda m: m["plan"].pop("methods"), None, "its plan lacks 'methods'"),
        (lambda m: m["plan"].__setitem__("epsilons", [1.0, -1.0]), None, "not a valid plan"),
        (lambda m: m["budget"].__setitem__("sampler", "secure"), None, "none of cocoviz's samplers"),
        (lambda m: m["budget"].__setitem__("total", 0.5), None, "not the one its plan costs"),
        (lambda m: m["statement"].__setitem__("epsilon", 0.5), None, "statement"),
        (None, lambda c: c["K"].__setitem__(1, [3, 3]), "not its plan's measurements"),
        (None, lambda c: c["K"].__setitem__(0, [10]), "K per node at level 0, whose release has none"),
        (
            None,
            lambda c: c["value"].__setitem__(1, c["value"][1][:-1]),
            "level 1 holds 19 answers, its plan's query 20",
        ),
        (None, lambda c: c["value"].__setitem__(0, None), "lacks the answers of level 0"),
        (None, lambda c: c["level"].__setitem__(0, 5), "not levels 0 to 1 in order"),
        (None, lambda c: c["label"][1].__setitem__(1, 9), "out of range"),
        (None, lambda c: c["value"][0].__setitem__(0, 2**60), "beyond"),
        (None, lambda c: c.pop("value"), "lacks the column"),
    ],
)
def test_an_edited_or_malformed_file_is_refused_by_name(saved, edit_meta, edit_columns, reason):
    rewrite(saved, edit_meta, edit_columns)
    with pytest.raises(InputError, match=reason):
        load_measurements(saved)


def test_answers_that_are_not_whole_numbers_are_refused(saved):
    rewrite(saved, edit_columns=lambda c: c["value"].__setitem__(0, [0.5] * len(c["value"][0])),
            types={"value": pa.large_list(pa.float64())})  # fmt: skip
    with pytest.raises(InputError, match="not whole numbers"):
        load_measurements(saved)


def test_a_signed_file_refuses_any_edit_the_checks_cannot_see(saved):
    load_measurements(saved, key=KEY)
    rewrite(saved, edit_columns=lambda c: c["value"][0].__setitem__(0, c["value"][0][0] + 1))
    load_measurements(saved)  # still a valid file of noisy answers: only the signature can tell
    with pytest.raises(InputError, match="signature does not match"):
        load_measurements(saved, key=KEY)
    with pytest.raises(InputError, match="signature does not match"):
        load_measurements(saved, key=b"another key of 16 bytes")


def test_not_a_file_and_bad_arguments(tmp_path, toy_public_tree):
    (tmp_path / "x.parquet").write_text("nope")
    with pytest.raises(InputError, match="not a saved cocoviz noisy-measurement file"):
        load_measurements(tmp_path / "x.parquet")
    plan = Plan.build(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10)
    m = measure(plan, toy_public_tree, seed=2)
    with pytest.raises(ParameterError, match="at least 16 bytes"):
        save_measurements(m, tmp_path / "m.parquet", key=b"short")
    with pytest.raises(ParameterError, match="empty path"):
        save_measurements(m, "")
    assert not (tmp_path / "m.parquet").exists()


def test_a_failed_save_leaves_the_previous_file(tmp_path, toy_public_tree, monkeypatch):
    plan = Plan.build(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=10)
    path = tmp_path / "m.parquet"
    save_measurements(measure(plan, toy_public_tree, seed=2), path)
    before = path.read_bytes()

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full_disk)
    with pytest.raises(OSError, match="No space"):
        save_measurements(measure(plan, toy_public_tree, seed=5), path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["m.parquet"]


def test_a_file_without_rows_is_refused_by_name(saved):
    rewrite(saved, edit_columns=lambda c: [c.__setitem__(k, v[:0]) for k, v in list(c.items())])
    with pytest.raises(InputError, match="rows are not levels 0 to 1"):
        load_measurements(saved)


def test_loaded_answers_are_writable_arrays_like_measures(saved):
    again = load_measurements(saved)
    assert all(m.values.flags.writeable for m in again.levels if m is not None)


def _same_measurements(a, b) -> bool:
    return (
        a.plan == b.plan
        and a.budget == b.budget
        and all(
            (x is None and y is None)
            or (
                x is not None
                and y is not None
                and np.array_equal(x.ptr, y.ptr)
                and np.array_equal(x.values, y.values)
                and (x.bounds is None) == (y.bounds is None)
                and (x.bounds is None or np.array_equal(x.bounds, y.bounds))
            )
            for x, y in zip(a.levels, b.levels)
        )
    )


@pytest.fixture(scope="module")
def signed_private_k(tmp_path_factory):
    """A signed file of a 3-level tree, with K per node chosen privately (Hcp, Hc and a level without K)."""
    rows = [("a", "a1", 1), ("a", "a1", 3), ("a", "a2", 2), ("b", "b1", 4), ("b", "b1", 1), ("b", "b2", 2)]
    tree = Hierarchy.from_groups(pd.DataFrame(rows, columns=["st", "co", "size"]), size="size", levels=["st", "co"])
    plan = Plan.build(
        tree, epsilons=[1.0] * 3, methods=["Hcp", "Hc", "Hg"], max_size=10, k_select="noisy-max-per-node",
        k_epsilon=0.5,
    )  # fmt: skip
    measurements = measure(plan, tree, seed=2)
    path = tmp_path_factory.mktemp("m") / "m.parquet"
    save_measurements(measurements, path, key=KEY)
    return measurements, path


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_signed_file_edited_in_any_stored_field_loads_identical_or_is_refused(signed_private_k, tmp_path, data):
    measurements, src = signed_private_k
    rows, meta = file_support.read(src)
    edit = data.draw(file_support.edits(meta, rows, ("value",)))
    file_support.apply_edit(src, tmp_path / "x.parquet", edit, ("value",))
    try:
        loaded = load_measurements(tmp_path / "x.parquet", key=KEY)
    except InputError:
        return
    assert _same_measurements(loaded, measurements)
