"""Files that check themselves (issue 27, item 2): load_release refuses a file that lies; a keyed signature."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cocoviz import Hierarchy, InputError, ParameterError, estimate, load_release, select_mix
from cocoviz.noise import OpenDPSampler, SecureSampler
from cocoviz.verify import sampler_names

KEY = b"the data holder's key, 32 bytes"
_META = b"cocoviz"


def _tree() -> Hierarchy:
    rng = np.random.default_rng(3)
    rows = [(s, f"{s}{c}", int(x)) for s in "ab" for c in range(2) for x in rng.integers(0, 7, 6)]
    return Hierarchy.from_groups(pd.DataFrame(rows, columns=["st", "co", "size"]), size="size", levels=["st", "co"])


def _releases() -> dict:
    tree = _tree()
    persons = Hierarchy.from_persons(
        pd.DataFrame({"group": [1, 1, 2, 3], "st": ["a", "a", "b", "b"]}), group="group", levels=["st"]
    )
    return {
        "plain": estimate(tree, epsilons=[1, 0.5, 2], methods=["Hc", "Hg", "naive"], max_size=8, seed=1),
        "private K": estimate(
            tree,
            epsilons=[1, 1, 1],
            methods=["Hc", "Hg", "Hc"],
            max_size=20,
            k_select="noisy-max-per-node",
            k_epsilon=0.5,
            seed=2,
        ),
        "none": estimate(tree, epsilons=[1, 1, 1], methods=["Hg", "Hc", "Hc"], max_size=8, consistency="none", seed=3),
        "selected": select_mix(
            tree, [["Hc", "Hc", "Hc"], ["Hg", "Hg", "Hg"]], epsilons=[1, 1, 1], epsilon_select=0.5, max_size=8, seed=0
        ),
        "G from the data": estimate(persons, epsilons=[1, 1], methods=["Hg", "Hc"], max_size=5, seed=4),
    }


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Every release saved twice, unsigned and signed: ``{name: (release, unsigned path, signed path)}``."""
    folder = tmp_path_factory.mktemp("releases")
    out = {}
    for k, (name, release) in enumerate(_releases().items()):
        plain, signed = folder / f"{k}.parquet", folder / f"{k}-signed.parquet"
        release.save(plain)
        release.save(signed, key=KEY)
        out[name] = (release, plain, signed)
    return out


def _read(path):
    table = pq.read_table(path)
    return table, json.loads(table.schema.metadata[_META])


def _write(path, table, meta) -> None:
    pq.write_table(table.replace_schema_metadata({_META: json.dumps(meta).encode()}), path)


def _edit_meta(src, dst, edit) -> None:
    table, meta = _read(src)
    edit(meta)
    _write(dst, table, meta)


def _edit_column(src, dst, name, values) -> None:
    table, meta = _read(src)
    i = table.column_names.index(name)
    _write(dst, table.set_column(i, name, pa.array(values)), meta)


def _same(a, b) -> bool:
    return (
        a.plan == b.plan
        and a.budget == b.budget
        and a.selection == b.selection
        and a.chosen_bounds() == b.chosen_bounds()
        and a.to_frame().equals(b.to_frame())
    )


# ------------------------------------------------------------ every kind of release loads back
KINDS = {
    "noisy-max": dict(methods=["Hc", "Hc", "naive"], max_size=30, k_select="noisy-max", k_epsilon=0.5),
    "per node": dict(methods=["Hcp", "Hg", "Hc"], max_size=30, k_select="noisy-max-per-node", k_epsilon=0.5),
    "svt": dict(methods=["Hc", "Hcp", "naive"], max_size=30, k_select="svt", k_epsilon=0.5),
    "parent prior": dict(methods=["Hcp", "Hcp", "Hcp"], max_size=30, prior="parent"),
    "bottom-up": dict(methods=["Hc", "Hc", "Hc"], max_size=8, consistency="bottom-up"),
    "secure": dict(methods=["Hc", "Hg", "Hc"], max_size=8, sampler="secure"),
    "opendp": dict(methods=["Hg", "Hg", "Hg"], sampler="opendp"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_of_release_loads_back_identical_signed_or_not(tmp_path, kind):
    options = {"seed": 5, **KINDS[kind]} if "sampler" not in KINDS[kind] else KINDS[kind]
    release = estimate(_tree(), epsilons=[1, 1, 1], **options)
    release.save(tmp_path / "u.parquet")
    release.save(tmp_path / "s.parquet", key=KEY.decode())
    assert _same(load_release(tmp_path / "u.parquet"), release)
    assert _same(load_release(tmp_path / "s.parquet", key=KEY.decode()), release)


def test_a_selection_with_a_private_k_loads_back(tmp_path):
    release = select_mix(
        _tree(), [["Hc"] * 3, ["Hg"] * 3], epsilons=[1, 1, 1], epsilon_select=0.5, max_size=30,
        k_select="noisy-max", k_epsilon=0.3, seed=0,
    )  # fmt: skip
    release.save(tmp_path / "x.parquet")
    assert _same(load_release(tmp_path / "x.parquet"), release)


# ------------------------------------------------------------ the reproductions
def test_a_file_whose_charges_and_sampler_were_edited_is_refused(saved, tmp_path):
    release, src, _ = saved["plain"]
    assert release.budget.total == 3.5

    def cheaper_and_secure(meta):
        for charge in meta["budget"]["charges"]:
            charge[5] = 0.001
        meta["budget"]["sampler"] = "secure"
        meta["budget"]["total"] = 0.003

    _edit_meta(src, tmp_path / "x.parquet", cheaper_and_secure)
    with pytest.raises(InputError, match="sampler 'secure' is none of cocoviz's samplers"):
        load_release(tmp_path / "x.parquet")

    def cheaper(meta):  # the sampler's full name, so only the charges lie
        for charge in meta["budget"]["charges"]:
            charge[5] = 0.001
        meta["budget"]["sampler"] = SecureSampler.name
        meta["budget"]["total"] = 0.003

    _edit_meta(src, tmp_path / "y.parquet", cheaper)
    with pytest.raises(
        InputError, match=r"budget is not the one its plan costs \(ε 0.003 stored, 3.5 by the plan; charges, total"
    ):
        load_release(tmp_path / "y.parquet")

    _edit_meta(src, tmp_path / "z.parquet", lambda meta: meta["budget"].update(total=0.003))
    with pytest.raises(InputError, match=r"\(ε 0.003 stored, 3.5 by the plan; total differ\)"):
        load_release(tmp_path / "z.parquet")


@pytest.mark.parametrize(
    "change, reason",
    [
        (lambda t: t.assign(count=t["count"] + 3), "count above its node's G|not its public G"),
        (lambda t: t.assign(count=np.where(t.index == len(t) - 1, -1, t["count"])), "negative size or count"),
        (lambda t: t.assign(level=np.where(t.index == 0, 7, t["level"])), "runs at level 7"),
        (lambda t: t.assign(node=np.where(t["level"] == 2, t["node"] + 10, t["node"])), "node ids outside"),
        (lambda t: t.assign(count=t["count"].astype(float) + 0.5), "not whole numbers"),
        (lambda t: t.drop(columns="size"), "lacks the column"),
        (lambda t: pd.concat([t, t[["node"]]], axis=1), "not a saved cocoviz release"),  # a column twice
    ],
)
def test_a_file_whose_histograms_were_edited_is_refused(saved, tmp_path, change, reason):
    _, src, _ = saved["plain"]
    table, meta = _read(src)
    frame = change(table.to_pandas())
    columns = [pa.array(frame.iloc[:, i].to_numpy()) for i in range(frame.shape[1])]
    _write(tmp_path / "x.parquet", pa.Table.from_arrays(columns, names=list(frame.columns)), meta)
    with pytest.raises(InputError, match=reason):
        load_release(tmp_path / "x.parquet")


def test_one_run_moved_breaks_a_parent_sum_and_is_refused(saved, tmp_path):
    _, src, _ = saved["plain"]
    table, meta = _read(src)
    frame = table.to_pandas()
    leaf = frame.index[frame["level"] == 2][0]
    frame.loc[leaf, "size"] += 1  # the leaf keeps its G; its parent no longer sums
    _write(tmp_path / "x.parquet", pa.Table.from_pandas(frame, preserve_index=False), meta)
    with pytest.raises(InputError, match="not the sum of its children"):
        load_release(tmp_path / "x.parquet")


def test_a_changed_g_and_a_claim_of_public_g_are_refused(saved, tmp_path):
    _, src, _ = saved["plain"]
    _edit_meta(src, tmp_path / "g.parquet", lambda m: m["plan"]["shape"]["groups"][2].__setitem__(0, 99))
    with pytest.raises(InputError, match="sum of its children's"):
        load_release(tmp_path / "g.parquet")

    def leaf_and_parents(meta):  # G changed along one branch, so the shape still adds up: the runs do not
        for level in meta["plan"]["shape"]["groups"]:
            level[0] += 1

    _edit_meta(src, tmp_path / "h.parquet", leaf_and_parents)
    with pytest.raises(InputError, match="budget is not the one its plan costs|not its public G"):
        load_release(tmp_path / "h.parquet")
    _, src, _ = saved["G from the data"]

    def secure_and_public(meta):
        meta["plan"]["shape"]["public_groups"] = True
        meta["budget"]["sampler"] = SecureSampler.name

    _edit_meta(src, tmp_path / "p.parquet", secure_and_public)
    with pytest.raises(InputError, match="budget is not the one its plan costs"):  # the note on G is gone
        load_release(tmp_path / "p.parquet")
    _edit_meta(src, tmp_path / "s.parquet", lambda m: m["budget"].update(sampler=OpenDPSampler.name))
    with pytest.raises(InputError, match="G came from private rows"):
        load_release(tmp_path / "s.parquet")


@pytest.mark.parametrize(
    "part, inner",
    [("plan", None), ("budget", None), ("plan", "shape"), ("plan", "epsilons"), ("budget", "charges")]
    + [("budget", "total"), ("plan", "levels"), ("plan", "groups"), ("plan", "public_groups"), ("plan", "k_beta")],
)
def test_a_missing_part_is_refused_by_name_never_a_key_error(saved, tmp_path, part, inner):
    _, src, _ = saved["plain"]

    def drop(meta):
        if inner is None:
            del meta[part]
        else:
            for d in (meta[part], meta[part].get("shape", {})):
                d.pop(inner, None)

    _edit_meta(src, tmp_path / "x.parquet", drop)
    with pytest.raises(InputError) as refused:
        load_release(tmp_path / "x.parquet")
    assert "refused" in str(refused.value) and "KeyError" not in str(refused.value)
    assert inner is None or inner in str(refused.value)  # the missing field is named


# ------------------------------------------------------------ signatures
def test_a_signed_file_loads_with_its_key_and_is_refused_without_the_right_one(saved, tmp_path):
    release, plain, signed = saved["private K"]
    assert _same(load_release(signed, key=KEY), release)
    assert _same(load_release(signed), release)  # the checks still run without a key
    with pytest.raises(InputError, match="signature does not match"):
        load_release(signed, key=b"another key of 32 bytes, not it")
    with pytest.raises(InputError, match="carries no HMAC-SHA256 signature"):
        load_release(plain, key=KEY)
    with pytest.raises(ParameterError, match="at least 16 bytes"):
        release.save(tmp_path / "x.parquet", key="short")
    with pytest.raises(ParameterError, match="bytes or text"):
        load_release(signed, key=3)


def test_only_a_signature_shows_a_relabelled_sampler(saved, tmp_path):
    """A fast release relabelled secure keeps every check: only the holder's key sees it."""
    release, plain, signed = saved["plain"]
    relabel = lambda meta: meta["budget"].update(sampler=SecureSampler.name)  # noqa: E731
    _edit_meta(plain, tmp_path / "u.parquet", relabel)
    assert load_release(tmp_path / "u.parquet").sampler == SecureSampler.name  # undetectable unsigned
    _edit_meta(signed, tmp_path / "s.parquet", relabel)
    with pytest.raises(InputError, match="signature does not match"):
        load_release(tmp_path / "s.parquet", key=KEY)


# ------------------------------------------------------------ any edit: identical or refused
def _fields(value, path=()):
    """Every stored field of the metadata: (path, value) for every dict member, list element and scalar."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _fields(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _fields(v, (*path, i))


def _new_value(old):
    near = []
    if isinstance(old, (int, float)) and not isinstance(old, bool):
        near = [st.sampled_from([old + 1, old - 1, -old, old * 1000, old / 2, float(old)])]
    return st.one_of(
        *near,
        st.none(),
        st.booleans(),
        st.integers(-(2**64), 2**64),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=4),
        st.sampled_from(sorted(sampler_names())),
        st.lists(st.integers(-1, 3), max_size=3),
        st.just({}),
    )


@st.composite
def edits(draw, meta: dict, n_rows: int):
    """One edit of a stored field: a metadata field set or deleted, one cell of a column changed, a run dropped
    or repeated."""
    if draw(st.booleans()):
        fields = [(p, v) for p, v in _fields(meta) if p]  # the signature too
        path, old = draw(st.sampled_from(fields))
        if draw(st.integers(0, 4)) == 0:
            return ("delete", path, None)
        return ("set", path, draw(_new_value(old)))
    row = draw(st.integers(0, n_rows - 1))
    if draw(st.integers(0, 3)) == 0:
        return (draw(st.sampled_from(["drop row", "repeat row"])), "count", (row, 0))
    column = draw(st.sampled_from(["level", "node", "size", "count"]))
    return ("cell", column, (row, draw(st.integers(-3, 3))))


def _apply(src, dst, edit) -> None:
    table, meta = _read(src)
    kind, where, what = edit
    if kind in ("drop row", "repeat row"):
        rows = np.arange(table.num_rows)
        row = what[0]
        table = table.take(np.delete(rows, row) if kind == "drop row" else np.insert(rows, row, row))
    elif kind == "cell":
        values = table.column(where).to_numpy().copy()
        row, delta = what
        values[row] += delta
        table = table.set_column(table.column_names.index(where), where, pa.array(values))
    else:
        *up, last = where
        holder = meta
        for k in up:
            holder = holder[k]
        if kind == "delete":
            del holder[last]
        else:
            holder[last] = what
    _write(dst, table, meta)


def _load_or_refused(path, **key):
    try:
        return load_release(path, **key)
    except InputError:
        return None


def _edited(saved, tmp_path, name, data, signed: bool):
    """One random edit of the saved release ``name``: (the release, the edit, what loads or None if refused)."""
    release, plain, with_key = saved[name]
    src = with_key if signed else plain
    table, meta = _read(src)
    edit = data.draw(edits(copy.deepcopy(meta), table.num_rows))
    _apply(src, tmp_path / "x.parquet", edit)
    return release, edit, _load_or_refused(tmp_path / "x.parquet", **({"key": KEY} if signed else {}))


@pytest.mark.parametrize("name", ["plain", "private K", "none", "selected", "G from the data"])
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_signed_file_edited_in_any_stored_field_loads_identical_or_is_refused(saved, tmp_path, name, data):
    release, _, loaded = _edited(saved, tmp_path, name, data, signed=True)
    assert loaded is None or _same(loaded, release)


#: The fields whose edits the checks themselves refuse, signature or not: the budget, the sampler (unless
#: renamed to another of cocoviz's samplers), ε, K's choice, G, its publicness, the histograms' levels, nodes
#: and counts, the format.  (Labels, p, the merge, sizes within a node ... need the signature.)
_GUARDED = (
    ("format",),
    ("budget",),
    ("plan", "epsilons"),
    ("plan", "k_select"),
    ("plan", "k_epsilon"),
    ("plan", "shape", "groups"),
    ("plan", "shape", "public_groups"),
)


def _guarded(edit) -> bool:
    kind, where, what = edit
    if kind in ("drop row", "repeat row"):
        return True
    if kind == "cell":
        return where != "size" and what[1] != 0
    if where[:2] == ("budget", "sampler") and isinstance(what, str) and what in sampler_names():
        return False
    return any(where[: len(g)] == g for g in _GUARDED)


@pytest.mark.parametrize("name", ["plain", "private K", "none", "selected", "G from the data"])
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_an_unsigned_file_edited_in_its_budget_or_invariants_loads_identical_or_is_refused(saved, tmp_path, name, data):
    release, edit, loaded = _edited(saved, tmp_path, name, data, signed=False)
    if _guarded(edit):
        assert loaded is None or _same(loaded, release)
    elif loaded is not None:  # whatever else was edited, what loads keeps every invariant and the plan's cost
        assert loaded.budget.total == loaded.plan.cost().total or loaded.selection is not None
        assert loaded.plan.consistency == "none" or loaded.is_consistent()
