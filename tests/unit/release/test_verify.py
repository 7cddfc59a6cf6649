"""Files that check themselves (issue 27, item 2): load_release refuses a file that lies; a keyed signature."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cocoviz import Hierarchy, InputError, ParameterError, estimate, load_release, select_mix
from cocoviz.privacy.noise import OpenDPSampler, SecureSampler
from cocoviz.release.verify import sampler_names
from tests.support import files as file_support

KEY = b"the data holder's key, 32 bytes"


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


def _edit_meta(src, dst, edit) -> None:
    file_support.edit_file(src, dst, lambda rows, meta: edit(meta))


_same = file_support.same_release


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


def _last(rows, column, change):
    """``change(values)`` applied to the deepest level's list of ``column`` (values of the leaves or their runs)."""
    rows[column][-1] = change(list(rows[column][-1]))


@pytest.mark.parametrize(
    "change, reason",
    [
        (lambda r: _last(r, "count", lambda c: [x + 3 for x in c]), "count above its node's G|not its public G"),
        (lambda r: _last(r, "count", lambda c: [*c[:-1], -1]), "negative size or count"),
        (lambda r: r["level"].__setitem__(0, 7), "not levels 0 to 2 in order"),
        (lambda r: _last(r, "node", lambda c: [x + 10 for x in c]), "node ids outside"),
        (lambda r: _last(r, "size", lambda c: c[:-1]), "a node, size and count each"),
        (lambda r: r.pop("size"), "lacks the column"),
        (lambda r: r["count"].__setitem__(1, None), "a node, size and count each"),
        (lambda r: r["groups"].__setitem__(0, None), "lacks the labels, label, parent or groups"),
        (lambda r: _last(r, "parent", lambda c: [x + 5 for x in c]), "out of range"),
        (lambda r: _last(r, "label", lambda c: [0] * len(c)), "two nodes with one path"),
        (lambda r: _last(r, "labels", lambda c: c[::-1]), "not sorted and distinct"),
        (lambda r: r["labels"].__setitem__(0, ["x"]), "root is not one node"),
        (lambda r: [r[c].pop() for c in r], "rows are not levels 0 to 2|names 2 levels below the root"),
    ],
)
def test_a_file_whose_arrays_were_edited_is_refused(saved, tmp_path, change, reason):
    _, src, _ = saved["plain"]
    file_support.edit_file(src, tmp_path / "x.parquet", lambda rows, meta: change(rows))
    with pytest.raises(InputError, match=reason):
        load_release(tmp_path / "x.parquet")


@pytest.mark.parametrize(
    "column, value, reason",
    [("count", 2.5, "not whole numbers"), ("label", 2**40, "out of range"), ("groups", 2**63 + 5, "too large")],
)
def test_a_column_of_another_type_is_refused(saved, tmp_path, column, value, reason):
    _, src, _ = saved["plain"]
    rows, meta = file_support.read(src)
    rows[column][-1] = [value] * len(rows[column][-1])
    value_type = pa.float64() if isinstance(value, float) else pa.uint64() if value >= 2**63 else pa.int64()
    file_support.write(tmp_path / "x.parquet", rows, meta, {column: pa.large_list(value_type)})
    with pytest.raises(InputError, match=reason):
        load_release(tmp_path / "x.parquet")


def test_one_run_moved_breaks_a_parent_sum_and_is_refused(saved, tmp_path):
    _, src, _ = saved["plain"]
    # The first leaf's first run one size up: the leaf keeps its G, its parent no longer sums.
    change = lambda rows, meta: rows["size"][2].__setitem__(0, rows["size"][2][0] + 1)  # noqa: E731
    file_support.edit_file(src, tmp_path / "x.parquet", change)
    with pytest.raises(InputError, match="not the sum of its children"):
        load_release(tmp_path / "x.parquet")


def test_a_changed_g_and_a_claim_of_public_g_are_refused(saved, tmp_path):
    _, src, _ = saved["plain"]
    file_support.edit_file(src, tmp_path / "g.parquet", lambda rows, meta: rows["groups"][2].__setitem__(0, 99))
    with pytest.raises(InputError, match="sum of its children's"):
        load_release(tmp_path / "g.parquet")

    def leaf_and_parents(rows, meta):  # G changed along one branch, so the shape still adds up: the runs do not
        for level in rows["groups"]:
            level[0] += 1

    file_support.edit_file(src, tmp_path / "h.parquet", leaf_and_parents)
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
    + [("budget", "total"), ("plan", "levels"), ("plan", "public_groups"), ("plan", "k_beta")],
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
    named = "name its levels" if inner == "shape" else inner  # the shape's entry names the levels
    assert inner is None or named in str(refused.value)


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
_RUN_FIELDS = ("node", "size", "count")


def _load_or_refused(path, **key):
    try:
        return load_release(path, **key)
    except InputError:
        return None


def _edited(saved, tmp_path, name, data, signed: bool):
    """One random edit of the saved release ``name``: (the release, the edit, what loads or None if refused)."""
    release, plain, with_key = saved[name]
    src = with_key if signed else plain
    rows, meta = file_support.read(src)
    edit = data.draw(file_support.edits(copy.deepcopy(meta), rows, _RUN_FIELDS))
    file_support.apply_edit(src, tmp_path / "x.parquet", edit, _RUN_FIELDS)
    return release, edit, _load_or_refused(tmp_path / "x.parquet", **({"key": KEY} if signed else {}))


@pytest.mark.parametrize("name", ["plain", "private K", "none", "selected", "G from the data"])
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_signed_file_edited_in_any_stored_field_loads_identical_or_is_refused(saved, tmp_path, name, data):
    release, _, loaded = _edited(saved, tmp_path, name, data, signed=True)
    assert loaded is None or _same(loaded, release)


#: The fields whose edits the checks themselves refuse, signature or not: the budget, the sampler (unless
#: renamed to another of cocoviz's samplers), ε, K's choice, publicness of G, the format; in the columns G, the
#: runs' nodes and counts, and a run dropped or repeated.  (Labels, parents, p, the merge, sizes within a node,
#: a private K ... need the signature.)
_GUARDED = (
    ("format",),
    ("budget",),
    ("plan", "epsilons"),
    ("plan", "k_select"),
    ("plan", "k_epsilon"),
    ("plan", "shape", "public_groups"),
)


def _guarded(edit) -> bool:
    kind, where, what = edit
    if kind in ("drop run", "repeat run"):
        return True
    if kind in ("drop node", "repeat node"):
        return False
    if kind == "cell":
        return where in ("node", "count", "groups") and what[-1] != 0
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


def test_a_rewrite_that_changes_nothing_loads_identical_signed_or_not(saved, tmp_path):
    """The edits above go through file_support's rewrite: unedited, it must give back the very release."""
    release, plain, signed = saved["private K"]
    file_support.edit_file(plain, tmp_path / "u.parquet", lambda rows, meta: None)
    file_support.edit_file(signed, tmp_path / "s.parquet", lambda rows, meta: None)
    assert _same(load_release(tmp_path / "u.parquet"), release)
    assert _same(load_release(tmp_path / "s.parquet", key=KEY), release)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_compiled_parent_sum_check_agrees_with_aggregating_the_children(data):
    """verify._sums_children (compiled, no sort) says what aggregating the children and comparing says, on parent
    levels it takes (sorted, counts > 0) and on children in any order, with zero counts and sizes the parent lacks."""
    from cocoviz.core.runs import LevelRuns, aggregate_runs
    from cocoviz.release.verify import _sums_children

    n_parents = data.draw(st.integers(1, 4))
    parent = np.sort(np.array(data.draw(st.lists(st.integers(0, n_parents - 1), min_size=1, max_size=8))))
    runs = st.lists(st.tuples(st.integers(0, len(parent) - 1), st.integers(0, 5), st.integers(0, 3)), max_size=20)
    child = data.draw(runs)
    node, size, count = (np.array([r[i] for r in child], np.int64).reshape(-1) for i in range(3))
    # Children as a LevelRuns whose runs keep the drawn order within each node (sizes maybe repeated, counts maybe 0).
    order = np.argsort(node, kind="stable")
    ptr = np.zeros(len(parent) + 1, np.int64)
    np.cumsum(np.bincount(node, minlength=len(parent)), out=ptr[1:])
    below = LevelRuns(ptr, size[order], count[order])
    truth = aggregate_runs(parent[node], size, count, n_parents)
    edit = data.draw(st.sampled_from(["none", "count", "size", "drop"]))
    sizes, counts = truth.sizes.copy(), truth.counts.copy()
    if edit != "none" and counts.size:
        k = data.draw(st.integers(0, counts.size - 1))
        if edit == "count":
            counts[k] += 1
        elif edit == "size" and (k + 1 == sizes.size or sizes[k] + 1 < sizes[k + 1]):
            sizes[k] += 1
        elif edit == "drop":
            counts[k] = 0
    above = LevelRuns(truth.ptr, sizes, counts)
    summed = aggregate_runs(parent[below.node_ids()], below.sizes, below.counts, n_parents)
    expected = (
        np.array_equal(summed.ptr, above.ptr)
        and np.array_equal(summed.sizes, above.sizes)
        and np.array_equal(summed.counts, above.counts)
    )
    assert _sums_children(above, below, parent) == expected
    assert expected == (edit == "none" or not counts.size or (edit == "size" and np.array_equal(sizes, truth.sizes)))
