"""Fuzzing the table side: random and adversarial tables through the three builders and the upload loaders.

Every input is either refused with a :class:`~cocoviz.errors.CocovizError` whose message names the
problem's column, or gives a valid tree (G >= 1 in every leaf, every parent the sum of its children)
whose release is consistent.  Parameters (ε, p, K, seed) are fuzzed elsewhere.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import cocoviz
from cocoviz import sums
from cocoviz.core.runs import LevelRuns
from cocoviz.errors import CocovizError
from cocoviz.hierarchy import Hierarchy, aggregate_runs
from cocoviz.hierarchy.ingest import read_table, table_to_hierarchy
from cocoviz.joint import estimate_joint, measure_tenure
from cocoviz.methods.priors import ide, simplex_l1_fit, update
from cocoviz.plan import Plan
from cocoviz.privacy.noise import FastSampler
from cocoviz.release.release import Release, load_release
from tests.support.capped import run_capped

LEVELS = ["L1", "L2"]
#: Messages that are about the whole table rather than one column.
_TABLE_WIDE = ("table is empty", "table holds no groups")

_adversarial_numbers = st.sampled_from(
    [
        0,
        1,
        2,
        3,
        -1,
        -(2**31),
        2**31,
        2**40,
        2**40 + 1,
        2**62,
        2**63 - 1,
        math.nan,
        math.inf,
        -math.inf,
        1.5,
        -0.0,
        True,
        False,
        None,
        "3",
        " 4",
        "x",
        "",
        "1e3",
        "0x10",
        1 + 2j,
        [1],
    ]
)
numbers = st.one_of(st.integers(0, 6), st.integers(0, 6), _adversarial_numbers)
labels = st.one_of(
    st.sampled_from(["a", "b", "é", "東京", "a b", "1"]),
    st.sampled_from(["", " ", None, math.nan, 1, 0, -1, 1.0, True, ["a"], "🙂"]),
)
# CSV cells are text: the same adversarial values as they come out of a file.
cells = st.one_of(
    st.sampled_from(["a", "b", "é", "東京", "0", "1", "2", "3"]),
    st.sampled_from(
        [
            "",
            " ",
            "-1",
            "2147483648",
            "4611686018427387904",
            "1099511627777",
            "nan",
            "inf",
            "1.5",
            "True",
            "x,y",
            '"q"',
            "🙂",
            "1e3",
        ]
    ),
)


def _column(values: list) -> pd.Series:
    """A column as pandas would hold it: typed when the values share a type, object otherwise."""
    try:
        return pd.Series(values)
    except (TypeError, ValueError):
        return pd.Series(values, dtype=object)


@st.composite
def tables(draw, value_columns: tuple[str, ...], value_cells=numbers, label_cells=labels, max_rows: int = 8):
    depth = draw(st.integers(0, len(LEVELS)))
    n = draw(st.integers(0, max_rows))
    data = {c: _column([draw(label_cells) for _ in range(n)]) for c in LEVELS[:depth]}
    for c in value_columns:
        data[c] = _column([draw(value_cells) for _ in range(n)])
    return pd.DataFrame(data), LEVELS[:depth]


def check_refusal(exc: CocovizError, columns: list[str]) -> None:
    message = str(exc)
    assert message.strip()
    assert any(f"'{c}'" in message for c in columns) or any(w in message for w in _TABLE_WIDE), message


def check_tree(tree: Hierarchy, methods: list[str]) -> None:
    leaves = tree.runs(tree.depth)
    assert (leaves.groups() >= 0).all() and tree.groups(()) >= 1
    for level in range(tree.depth, 0, -1):
        below, above = tree.runs(level), tree.runs(level - 1)
        summed = aggregate_runs(tree.parents(level)[below.node_ids()], below.sizes, below.counts, above.n_nodes)
        np.testing.assert_array_equal(summed.ptr, above.ptr)
        np.testing.assert_array_equal(summed.sizes, above.sizes)
        np.testing.assert_array_equal(summed.counts, above.counts)
    # A release only where it stays small: Hg expands every group, Hc is as long as K.
    if tree.max_size <= 64 and tree.groups(()) <= 5_000:
        release = cocoviz.estimate(
            tree,
            epsilons=[1.0] * (tree.depth + 1),
            methods=methods[: tree.depth + 1],
            max_size=max(tree.max_size, 1),
            seed=0,
        )
        assert release.is_consistent()


methods = st.lists(st.sampled_from(["Hc", "Hg"]), min_size=len(LEVELS) + 1, max_size=len(LEVELS) + 1)


@settings(max_examples=120)
@given(tables(("size", "count")), methods)
def test_from_counts(table, mix):
    df, levels = table
    try:
        tree = Hierarchy.from_counts(df, size="size", count="count", levels=levels)
    except CocovizError as exc:
        check_refusal(exc, [*levels, "size", "count"])
        return
    assert tree.public_groups
    check_tree(tree, mix)


@settings(max_examples=120)
@given(tables(("size",)), methods)
def test_from_groups(table, mix):
    df, levels = table
    try:
        tree = Hierarchy.from_groups(df, size="size", levels=levels)
    except CocovizError as exc:
        check_refusal(exc, [*levels, "size"])
        return
    assert tree.groups(()) == len(df)
    check_tree(tree, mix)


group_ids = st.one_of(st.integers(0, 4), st.sampled_from(["1", "g", "", None, math.nan, True, 1.0, ["x"], "é"]))


@settings(max_examples=120)
@given(tables(("gid",), value_cells=group_ids), st.booleans(), methods)
def test_from_persons(table, with_groups, mix):
    df, levels = table
    groups = None
    if with_groups and len(df):
        # A public groups table from the persons' own (group, region) pairs, with one extra empty group and,
        # sometimes, repeated ids: whatever the persons table holds.
        groups = df[["gid", *levels]].drop_duplicates(subset=["gid"]) if df["gid"].map(_hashable).all() else df
        groups = pd.concat([groups, groups.iloc[:1].assign(gid="extra")], ignore_index=True)
    try:
        tree = Hierarchy.from_persons(df, group="gid", levels=levels, groups=groups)
    except CocovizError as exc:
        check_refusal(exc, [*levels, "gid"])
        return
    assert tree.public_groups == (groups is not None)
    assert tree.persons(()) == len(df)
    check_tree(tree, mix)


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


@settings(max_examples=120)
@given(
    tables(("size", "count", "gid"), value_cells=cells, label_cells=cells),
    st.sampled_from(["persons", "groups", "counts"]),
    methods,
)
def test_csv_uploads(table, form, mix):
    df, levels = table
    data = df.to_csv(index=False).encode()
    try:
        frame = read_table(data, filename="fuzz.csv")
    except CocovizError as exc:
        assert str(exc).startswith("fuzz.csv")
        return
    try:
        tree = table_to_hierarchy(frame, form=form, levels=levels, group="gid", name="fuzz.csv")
    except CocovizError as exc:
        assert str(exc).startswith("fuzz.csv")
        check_refusal(exc, [*levels, *{"persons": ["gid"], "groups": ["size"], "counts": ["size", "count"]}[form]])
        return
    check_tree(tree, mix)


@pytest.mark.parametrize("value", [True, 1 + 1j, [3], math.nan, math.inf, 2**62])
def test_one_bad_count_is_named(value):
    df = pd.DataFrame({"L1": ["a", "b"], "size": [1, 2], "count": pd.Series([1, value], dtype=object)})
    with pytest.raises(CocovizError, match=r"column 'count'.*rows 1"):
        Hierarchy.from_counts(df, size="size", count="count", levels=["L1"])


# ====================================================================================================
# Every public entry point (issue 27): None, wrong types, extreme numbers and tampered objects are either
# refused with a CocovizError or give a valid result; never another exception.  Calls that could allocate
# without bound run in a memory-capped child (tests/capped_support.py).
# ====================================================================================================


#: Values that are wrong for almost every parameter: None, text, flags, containers, extreme numbers.
_WRONG = [
    None,
    "1",
    "",
    True,
    False,
    [],
    [1],
    {},
    (),
    object(),
    0,
    -1,
    2**63,
    -(2**63),
    10**400,
    math.nan,
    math.inf,
    -math.inf,
    5e-324,
    1e308,
    -0.0,
    1 + 2j,
    np.float64("nan"),
    np.int64(-5),
    b"x",
]
wrong = st.sampled_from(_WRONG)


def _tree() -> Hierarchy:
    counts = pd.DataFrame({"s": ["a", "a", "b", "b"], "size": [1, 3, 2, 4], "count": [3, 2, 2, 1]})
    return Hierarchy.from_counts(counts, size="size", count="count", levels=["s"])


TREE = _tree()
GOOD = {"epsilons": [1.0, 1.0], "methods": ["Hc", "Hg"], "max_size": 6, "seed": 0}
RELEASE = cocoviz.estimate(TREE, **GOOD)


def refused_or_ok(call):
    """``call()``'s result, or None when it was refused with a CocovizError whose message is not empty.
    Any other exception fails the test: it is a traceback a user would see."""
    try:
        return call()
    except CocovizError as exc:
        assert str(exc).strip()
        return None


# ------------------------------------------------ issue 27, items 10 and 12: each listed traceback, by name
def _bool_counts_prior():
    prior = pd.DataFrame({"size": [1, 2], "count": [True, False]})
    return cocoviz.estimate(TREE, epsilons=[1, 1], methods=["Hcp", "Hcp"], max_size=6, seed=0, prior=prior)


LISTED = {
    "k_beta=5e-324": (
        lambda: cocoviz.estimate(TREE, **GOOD, k_select="noisy-max", k_epsilon=1.0, k_beta=5e-324),
        r"k_beta .*5e-324",
    ),
    'workers="2"': (lambda: cocoviz.estimate(TREE, **GOOD, workers="2"), r"workers .*'2'"),
    "workers=-1": (lambda: cocoviz.estimate(TREE, **GOOD, workers=-1), r"workers .*-1"),
    "measure workers=-1": (
        lambda: cocoviz.measure(Plan.build(TREE, **{k: v for k, v in GOOD.items() if k != "seed"}), TREE, workers=-1),
        r"workers .*-1",
    ),
    "level_cache=[]": (lambda: cocoviz.estimate(TREE, **GOOD, level_cache=[]), r"level_cache .*list"),
    "progress=3": (lambda: cocoviz.estimate(TREE, **GOOD, progress=3), r"progress .*3"),
    "select_mix(rng=...)": (
        lambda: cocoviz.select_mix(
            TREE, [["Hc", "Hg"]], epsilons=[1, 1], epsilon_select=1.0, seed=0, rng=np.random.default_rng(0)
        ),
        r"does not take rng",
    ),
    "selection_cost(rng=...)": (
        lambda: cocoviz.selection_cost(TREE, [["Hc", "Hg"]], epsilons=[1, 1], epsilon_select=1.0, rng=1),
        r"does not take rng",
    ),
    'release.histogram(("zz",))': (lambda: RELEASE.histogram(("zz",)), r"no node \('zz',\)"),
    "release.histogram(5)": (lambda: RELEASE.histogram(5), r"a node is a sequence of labels"),
    "Release.save(3)": (lambda: RELEASE.save(3), r"save needs a file path"),
    "estimate(None)": (lambda: cocoviz.estimate(None, **GOOD), r"expected a Hierarchy.*NoneType"),
    'estimate("tree")': (lambda: cocoviz.estimate("tree", **GOOD), r"expected a Hierarchy.*str"),
    "Plan.build(None)": (lambda: Plan.build(None, epsilons=[1], methods=["Hc"]), r"expected a Hierarchy"),
    "measure(None, tree)": (lambda: cocoviz.measure(None, TREE, seed=0), r"measure needs a Plan.*NoneType"),
    'measure("plan", tree)': (lambda: cocoviz.measure("plan", TREE, seed=0), r"measure needs a Plan.*str"),
    "measure(plan, None)": (lambda: cocoviz.measure(RELEASE.plan, None, seed=0), r"expected a Hierarchy"),
    "post_process(plan, None)": (lambda: cocoviz.post_process(RELEASE.plan, None), r"Measurements"),
    'post_process(workers="2")': (
        lambda: cocoviz.post_process(RELEASE.plan, cocoviz.measure(RELEASE.plan, TREE, seed=0), workers="2"),
        r"workers .*'2'",
    ),
    "evaluate(None, release)": (lambda: cocoviz.evaluate(None, RELEASE), r"expected a Hierarchy"),
    "evaluate(tree, None)": (lambda: cocoviz.evaluate(TREE, None), r"expected a Release.*NoneType"),
    'evaluate(tree, "release")': (lambda: cocoviz.evaluate(TREE, "release"), r"expected a Release.*str"),
    'size_errors(tree, release, ("zz",))': (lambda: cocoviz.size_errors(TREE, RELEASE, ("zz",)), r"no node"),
    "scale=True": (lambda: cocoviz.load_dataset("taxi", scale=True), r"scale must be a number, got True"),
    'scale="0.1"': (lambda: cocoviz.load_dataset("taxi", scale="0.1"), r"scale must be a number, got '0.1'"),
    "scale=1e-300": (lambda: cocoviz.load_dataset("housing", scale=1e-300), r"scale must be in \[1e-06, 10\]"),
    "bool counts in a prior table": (_bool_counts_prior, r"counts must be numbers"),
    "CSV size 2.0000000000000001": (
        lambda: load_upload_bytes(b"size\n2.0000000000000001\n"),
        r"'size': fractional group size in rows 1",
    ),
}


def load_upload_bytes(data: bytes):
    from cocoviz.hierarchy.ingest import load_upload

    return load_upload(data)


@pytest.mark.parametrize("name", list(LISTED))
def test_every_listed_traceback_is_a_refusal_that_names_the_problem(name):
    call, match = LISTED[name]
    with pytest.raises(CocovizError, match=match):
        call()


def test_data_housing_at_scale_1e_300_is_refused_by_the_command_line(capsys):
    from cocoviz.cli.main import main

    assert main(["data", "housing", "--scale", "1e-300"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: scale must be in [1e-06, 10], got 1e-300") and "%" not in err


# ------------------------------------------------ plan, estimate, measure + post_process: fuzzed options
def _maybe(good, bad=wrong):
    """A good value three times in four, else a wrong one."""
    return st.one_of(good, good, good, bad)


_eps = _maybe(st.sampled_from([0.1, 1.0, 3.0]), st.sampled_from([*_WRONG, 1e-300, 1e-12, 1e6, 1e300, [1.0]]))
options = st.fixed_dictionaries(
    {
        "epsilons": _maybe(st.lists(_eps, min_size=2, max_size=2), st.one_of(wrong, st.lists(_eps, max_size=3))),
        "methods": _maybe(
            st.lists(st.sampled_from(["Hc", "Hg", "naive", "Hcp"]), min_size=2, max_size=2),
            st.one_of(wrong, st.lists(st.sampled_from(["Hc", "hc", "", None, 1]), max_size=3)),
        ),
        "p": _maybe(st.sampled_from([None, 1, 2, [1, 2], [None, None]]), st.sampled_from([*_WRONG, 3, [1], 1.0])),
        "max_size": _maybe(st.integers(1, 8), st.sampled_from([*_WRONG, 10**7 + 1, 2.0])),
        "consistency": _maybe(st.sampled_from(["top-down", "bottom-up", "none"])),
        "merge": _maybe(st.sampled_from(["weighted", "average"])),
        "seed": _maybe(st.sampled_from([0, 1, (1, 2), [3]]), st.sampled_from([*_WRONG, (1, -1), 2**128, 1.5])),
        "workers": _maybe(st.sampled_from([None, 1, 2])),
        "k_beta": _maybe(st.sampled_from([None, 0.1]), st.sampled_from([*_WRONG, 1.0, 1e-301])),
    }
)


def _drop_none(kwargs: dict) -> dict:
    return {k: v for k, v in kwargs.items() if v is not None or k in ("epsilons", "methods")}


@settings(max_examples=150, deadline=None)
@given(options, st.booleans())
def test_estimate_refuses_or_releases_consistently(kwargs, fused):
    kwargs = _drop_none(kwargs)
    seed, workers = kwargs.pop("seed", None), kwargs.pop("workers", None)
    if fused:
        release = refused_or_ok(lambda: cocoviz.estimate(TREE, **kwargs, seed=seed, workers=workers))
    else:
        plan = refused_or_ok(lambda: Plan.build(TREE, **kwargs))
        measured = plan and refused_or_ok(lambda: cocoviz.measure(plan, TREE, seed=seed, workers=workers))
        release = measured and refused_or_ok(lambda: cocoviz.post_process(plan, measured))
    if release is not None:
        assert release.is_consistent()
        assert release.budget.total == pytest.approx(math.fsum(release.plan.epsilons))


# ------------------------------------------------ tampered objects: a release, its file, measurements

#: Cases whose refusal is the `guards` helper's work on issue 27 (item 2: load_release verifies its file;
#: item 11: post_process validates its measurements).  Until it is merged they may raise other exceptions;
#: once merged they pass, and the merger deletes this mark.


def _tampered_runs(runs: LevelRuns, how: str) -> LevelRuns:
    sizes, counts, ptr = runs.sizes.copy(), runs.counts.copy(), runs.ptr.copy()
    if how == "negative count":
        counts[0] = -counts[0] - 1
    elif how == "count + 3":
        counts[-1] += 3
    elif how == "huge size":
        sizes[-1] = 2**62
    elif how == "one node short":
        return LevelRuns(ptr[:-1], sizes[: ptr[-2]], counts[: ptr[-2]])
    elif how == "float counts":
        return LevelRuns(ptr, sizes, counts.astype(np.float64) + 0.5)
    elif how == "empty":
        return LevelRuns(np.zeros(len(ptr), np.int64), sizes[:0], counts[:0])
    return LevelRuns(ptr, sizes, counts)


TAMPERS = ["negative count", "count + 3", "huge size", "one node short", "float counts", "empty"]


@pytest.mark.parametrize("how", TAMPERS)
@pytest.mark.parametrize("level", [0, 1])
def test_a_tampered_release_is_refused_or_evaluated_never_a_traceback(how, level):
    runs = [RELEASE.runs(k) for k in range(2)]
    runs[level] = _tampered_runs(runs[level], how)
    tampered = Release(RELEASE.plan, runs, RELEASE.budget)
    for call in (
        lambda: cocoviz.evaluate(TREE, tampered),
        lambda: tampered.histogram(("a",)),
        lambda: tampered.to_frame(),
        lambda: tampered.is_consistent(),
        lambda: cocoviz.size_errors(TREE, tampered, ("b",)),
    ):
        refused_or_ok(call)
    assert refused_or_ok(tampered.is_consistent) in (False, None)


def _json_paths(value, prefix=()):
    """Every (path, leaf) of a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _json_paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _json_paths(v, (*prefix, i))
    yield prefix, value


def _saved(release) -> tuple[bytes, dict]:
    import io

    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    release.save(buffer)
    table = pq.read_table(io.BytesIO(buffer.getvalue()))
    return table, json.loads(table.schema.metadata[b"cocoviz"])


_TABLE, _META = _saved(RELEASE)
_META_PATHS = [p for p, _ in _json_paths(_META) if p]
_JSON_WRONG = [None, "x", -1, 0, 1.5, 1e308, 2**63, [], {}, True, "secure", [1, 2, 3]]


@settings(max_examples=60, deadline=None, phases=[Phase.explicit, Phase.generate])  # no shrinking while xfail
@given(st.sampled_from(_META_PATHS), st.sampled_from(_JSON_WRONG), st.booleans())
def test_a_release_file_edited_in_its_metadata_is_refused_or_loads(tmp_path_factory, path, value, delete):
    """Depends on `guards` (issue 27, item 2: load_release verifies its file) for the strict form; here a
    CocovizError or a release, never another exception."""
    import copy

    import pyarrow.parquet as pq

    meta = copy.deepcopy(_META)
    parent = meta
    for key in path[:-1]:
        parent = parent[key]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    file = tmp_path_factory.mktemp("edited") / "release.parquet"
    pq.write_table(_TABLE.replace_schema_metadata({b"cocoviz": json.dumps(meta).encode()}), file)
    loaded = refused_or_ok(lambda: load_release(file))
    if loaded is not None:
        refused_or_ok(loaded.is_consistent)
        refused_or_ok(lambda: cocoviz.evaluate(TREE, loaded))


@pytest.mark.parametrize("column", ["level", "node", "size", "count"])
@pytest.mark.parametrize("value", [-1, 2**62, 7])
def test_a_release_file_edited_in_its_runs_is_refused_or_loads(tmp_path, column, value):
    import pyarrow as pa
    import pyarrow.parquet as pq

    # Format 2 stores a level's runs as list columns, one row per chunk: edit the first stored value.
    values = _TABLE.column(column).to_pylist()
    row = next(k for k, v in enumerate(values) if not isinstance(v, list) or v)
    if isinstance(values[row], list):
        values[row] = [value, *values[row][1:]]
        edited = pa.array(values, type=pa.list_(pa.int64()))
    else:
        values[row] = value
        edited = pa.array(values, type=pa.int64())
    table = _TABLE.set_column(_TABLE.column_names.index(column), column, edited)
    table = table.replace_schema_metadata(_TABLE.schema.metadata)
    file = tmp_path / "release.parquet"
    pq.write_table(table, file)
    loaded = refused_or_ok(lambda: load_release(file))
    if loaded is not None:
        refused_or_ok(lambda: cocoviz.evaluate(TREE, loaded))


@pytest.mark.parametrize("target", [None, 3, 1.5, "", object(), b"x", ["a.parquet"]])
def test_saving_to_something_that_is_not_a_file_is_refused(target):
    with pytest.raises(CocovizError):
        RELEASE.save(target)


@pytest.mark.parametrize("source", [None, 3, "", "/nonexistent/x.parquet", b"PAR1", object()])
def test_loading_from_something_that_is_not_a_release_is_refused(source):
    with pytest.raises(CocovizError):
        load_release(source)


def _measured():
    plan = Plan.build(TREE, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=6)
    return plan, cocoviz.measure(plan, TREE, seed=0)


@pytest.mark.parametrize("how", ["nan", "4e18", "short", "inf", "wrong method", "ptr reversed", "None level"])
def test_tampered_measurements_are_refused_or_post_processed(how):
    """Depends on `guards` (issue 27, item 11: post_process validates its measurements) for the strict form."""
    import dataclasses

    plan, measured = _measured()
    level = measured.levels[1]
    values, ptr = level.values.astype(np.float64), level.ptr
    if how == "nan":
        values[0] = math.nan
    elif how == "inf":
        values[0] = math.inf
    elif how == "4e18":
        values[0] = 4e18
    elif how == "short":
        values, ptr = values[:-3], np.minimum(ptr, len(values) - 3)
    elif how == "ptr reversed":
        ptr = ptr[::-1].copy()
    edited = dataclasses.replace(level, values=values, ptr=ptr)
    if how == "wrong method":
        edited = dataclasses.replace(level, method="Hc")
    levels = (measured.levels[0], None if how == "None level" else edited)
    tampered = dataclasses.replace(measured, levels=levels)
    release = refused_or_ok(lambda: cocoviz.post_process(plan, tampered))
    if release is not None:
        assert release.is_consistent() or how in ("nan", "inf", "4e18", "short")


# ------------------------------------------------ select_mix, joint tables, sums, priors
@settings(max_examples=40, deadline=None)
@given(
    _maybe(st.lists(st.lists(st.sampled_from(["Hc", "Hg"]), min_size=2, max_size=2), min_size=1, max_size=2)),
    _eps,
    st.dictionaries(
        st.sampled_from(["p", "max_size", "merge", "rng", "workers", "secure_", "sampler"]), wrong, max_size=2
    ),
)
def test_select_mix_refuses_or_selects(candidates, epsilon_select, extra):
    options = {"max_size": 6, **extra}
    release = refused_or_ok(
        lambda: cocoviz.select_mix(
            TREE, candidates, epsilons=[1.0, 1.0], epsilon_select=epsilon_select, seed=0, **options
        )
    )
    if release is not None:
        assert release.is_consistent() and release.selection["chosen"] in range(len(candidates))
    refused_or_ok(
        lambda: cocoviz.selection_cost(TREE, candidates, epsilons=[1.0, 1.0], epsilon_select=epsilon_select, **options)
    )


def _tenure():
    from cocoviz.datasets.tenure import tenure_table

    return tenure_table(TREE, seed=0)


TENURE = _tenure()


@settings(max_examples=40, deadline=None)
@given(
    _maybe(st.just(RELEASE.plan.shape), st.sampled_from([None, "shape", 3, TREE])),
    _maybe(st.just(TENURE), st.sampled_from([None, pd.DataFrame(), TENURE.iloc[:1], TENURE.assign(owners=-1)])),
    _maybe(st.lists(_eps, min_size=2, max_size=2), wrong),
    _maybe(st.sampled_from(["fast"]), st.sampled_from([None, "", "secure ", 3])),
    _maybe(st.sampled_from(["independent", "uniform"]), st.sampled_from([None, "parent", 3, {}, {(): 1}])),
    _maybe(st.sampled_from(["top-down", "none"])),
)
def test_joint_tables_refuse_or_estimate(shape, table, epsilons, sampler, prior, consistency):
    """Depends on `guards` (issue 27, item 3) for the sampler labels; here a refusal or a joint release."""
    measured = refused_or_ok(lambda: measure_tenure(shape, table, epsilons, seed=0, sampler=sampler))
    if measured is None:
        return
    joint = refused_or_ok(lambda: estimate_joint(RELEASE, measured, prior, consistency=consistency))
    if joint is not None:
        for node in (("a",), ("b",)):
            assert int(joint.table(node).sum()) == TREE.groups(node)
        refused_or_ok(joint.to_frame)


_strategy_names = _maybe(st.sampled_from(sorted(sums.STRATEGIES)), st.sampled_from([None, "", "TAMM", 3]))
_histograms = _maybe(
    st.lists(st.integers(0, 5), min_size=0, max_size=8).map(lambda v: np.array(v, np.int64)),
    st.sampled_from([None, "h", np.array([1.5, 2]), np.array([-1, 2]), np.array([[1]]), [1, 2], np.array([], float)]),
)


@settings(max_examples=120, deadline=None)
@given(
    _histograms,
    _eps,
    _maybe(st.integers(1, 9), st.sampled_from([*_WRONG, 10**12])),
    _strategy_names,
    _maybe(st.sampled_from(["person", "record"])),
    _maybe(st.sampled_from([None, 1, 3]), st.sampled_from([0, -1, True, 1.5, "2", 2**70])),
)
def test_sums_refuse_or_answer(h, epsilon, J, strategy, neighbours, tau):
    sampler = FastSampler(0)
    est = refused_or_ok(lambda: sums.answer(h, epsilon, J, sampler, strategy=strategy, neighbours=neighbours, tau=tau))
    if est is not None:
        assert est.raw.shape == (J,) and np.isfinite(est.raw).all()
        refused_or_ok(lambda: est.estimate(isotonic=True))
    total = refused_or_ok(lambda: sums.direct_total(h, epsilon, sampler, neighbours=neighbours, tau=tau))
    if total is not None:
        assert total.raw.shape == (1,)
    for call in (
        lambda: sums.sensitivity(strategy, J, neighbours, tau),
        lambda: sums.prefix_sums(h, J, tau),
        lambda: sums.strategy_query(strategy, h, J, tau),
    ):
        refused_or_ok(call)


_priors = st.one_of(
    st.lists(st.floats(0, 5), min_size=1, max_size=6),
    st.sampled_from(
        [
            None,
            "uniform",
            "parent",
            "nope",
            [],
            [0, 0],
            [-1, 2],
            [math.nan],
            [math.inf, 1],
            [True, 1],
            {1: 1.0},
            {-1: 1.0},
            {1.5: 1.0},
            {True: 1.0},
            {10**12: 1.0},
            {1: "x"},
            np.array([[1.0]]),
            np.array(["a"]),
            pd.DataFrame({"size": [1], "count": [2]}),
            pd.DataFrame({"size": [1.5], "count": [2]}),
            pd.DataFrame({"size": [10**12], "count": [1]}),
            pd.DataFrame({"size": [1], "count": [True]}),
            pd.DataFrame({"size": [1], "count": [-1]}),
            pd.DataFrame({"size": [1], "count": [math.nan]}),
            pd.DataFrame({"size": [1], "persons": [2]}),
            {("a",): [0.5, 0.5], ("b",): [1.0]},
            {("zz",): [1.0]},
            {("a",): None},
            TREE,
        ]
    ),
)


@settings(max_examples=120, deadline=None)
@given(_priors)
def test_priors_refuse_or_release(prior):
    release = refused_or_ok(
        lambda: cocoviz.estimate(TREE, epsilons=[1.0, 1.0], methods=["Hcp", "Hcp"], max_size=6, seed=0, prior=prior)
    )
    if release is not None:
        assert release.is_consistent()


@settings(max_examples=80, deadline=None)
@given(
    _maybe(st.lists(st.floats(0, 3), min_size=4, max_size=4).map(np.array), st.sampled_from(_WRONG)),
    _maybe(st.just([np.array([0, 0, 1, 1])]), st.sampled_from([None, [], [np.array([0, 5, 1, 1])], [[0, 1]], "x"])),
    _maybe(st.just([np.array([0.5, 0.5])]), st.sampled_from([None, [np.array([math.nan, 1])], [[2.0, -1.0]], "x"])),
    _maybe(st.integers(0, 4), st.sampled_from([-1, True, 1.5, None, "3"])),
)
def test_ide_and_its_parts_refuse_or_fit(prior, partitions, targets, iterations):
    fitted = refused_or_ok(lambda: ide(prior, partitions, targets, iterations))
    if fitted is not None:
        q = fitted[0]
        assert np.isfinite(q).all() and (q >= 0).all() and math.isclose(q.sum(), 1.0, rel_tol=1e-9)
    first = partitions[0] if isinstance(partitions, list) and partitions else partitions
    first_target = targets[0] if isinstance(targets, list) and targets else targets
    refused_or_ok(lambda: update(prior, first, first_target))
    refused_or_ok(lambda: simplex_l1_fit(first_target))


# ------------------------------------------------ the command line
CLI_REFUSED = [
    ["data", "housing", "--scale", "1e-300"],
    ["data", "housing", "--scale", "nan"],
    ["data", "housing", "--scale", "-1"],
    ["data", "housing", "--scale", "1e400"],
    ["data", "housing", "--seed", "-1"],
    ["data", "toy", "--scale", "0.5"],
    ["data", "--card"],
    ["data", "nope"],
    ["data", "housing", "--scale", "x"],
    ["experiment", "nope"],
    ["experiment", "table3", "--trials", "0"],
    ["experiment", "table3", "--trials", "-1"],
    ["experiment", "table3", "--workers", "-1", "--trials", "1"],
    ["experiment", "table3", "--workers", "0", "--trials", "1"],
    ["experiment", "table3", "--scale", "0"],
    ["experiment", "table3", "--scale", "inf"],
    ["experiment", "table3", "--seed", "-5", "--trials", "1"],
    ["experiment", "table3", "--trials", "99999999999999999999999"],
    ["findings", "nope"],
    ["nope"],
    [],
]


@pytest.mark.parametrize("argv", CLI_REFUSED, ids=" ".join)
def test_the_command_line_refuses_in_one_line_with_status_2(argv, capsys, tmp_path):
    from cocoviz.cli.main import main

    try:
        status = main([*argv, *(["--out", str(tmp_path / "out")] if argv[:1] == ["experiment"] else [])])
    except SystemExit as exc:  # argparse's own refusals: a usage line and status 2
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err and err.strip(), err
    assert "error" in err.strip().splitlines()[-1]


# ------------------------------------------------ what could allocate without bound: in a capped child
_SMALL_TREE = """
import numpy as np, pandas as pd, cocoviz
from cocoviz import sums
from cocoviz.hierarchy import Hierarchy
from cocoviz.privacy.noise import FastSampler
tree = Hierarchy.from_counts(
    pd.DataFrame({"s": ["a", "b"], "size": [1, 2**40], "count": [3, 1]}), size="size", count="count", levels=["s"]
)
"""
CAPPED = {
    "huge group, dense histogram": "tree.histogram(('b',))",
    "huge group, Hg p=1 (2 groups: fine)": "cocoviz.estimate(tree, epsilons=[1, 1], methods=['Hg'] * 2, p=1, seed=0)",
    "K = 10^7 + 1": "cocoviz.estimate(tree, epsilons=[1, 1], methods=['Hc'] * 2, max_size=10**7 + 1, seed=0)",
    "sums J = 10^12": "sums.answer(np.array([0, 1]), 1.0, 10**12, FastSampler(0), strategy='workload')",
    "sums tamm J = 10^5": "sums.answer(np.array([0, 1]), 1.0, 10**5, FastSampler(0), strategy='tamm')",
    "sums query matrix J = 10^5": "sums.query_matrix('identity', 10**5)",
    "prior {10**12: 1}": "cocoviz.estimate(tree, epsilons=[1, 1], methods=['Hcp'] * 2, max_size=4, seed=0, "
    "prior={10**12: 1.0})",
    "ide over 10^12 cells": "from cocoviz.methods.priors import ide\nide({0: 1.0}, [[[10**12]]], [[1.0]], 1)",
    "prior table size 10^12": "cocoviz.estimate(tree, epsilons=[1, 1], methods=['Hcp'] * 2, max_size=4, seed=0, "
    "prior=pd.DataFrame({'size': [10**12], 'count': [1]}))",
    "release histogram of a huge size": "r = cocoviz.estimate(tree, epsilons=[1, 1], methods=['Hg'] * 2, seed=0)\n"
    "r.histogram(('b',))",
}


def test_what_could_allocate_is_refused_or_done_under_a_memory_cap():
    outcomes = run_capped({name: _SMALL_TREE + source for name, source in CAPPED.items()})
    for name, (outcome, message) in outcomes.items():
        assert outcome in ("ok", "CocovizError"), (name, outcome, message)
    refused = {name: message for name, (outcome, message) in outcomes.items() if outcome == "CocovizError"}
    assert "node_runs" in refused["huge group, dense histogram"]
    assert "node_runs" in refused["release histogram of a huge size"]
    for name in ("sums J = 10^12", "sums tamm J = 10^5", "sums query matrix J = 10^5", "ide over 10^12 cells"):
        assert "over the limit of 4 GiB" in refused[name], (name, outcomes[name])
    assert "K must be a whole number from 1 to 10,000,000" in refused["K = 10^7 + 1"]
    assert outcomes["huge group, Hg p=1 (2 groups: fine)"][0] == "ok"


# ------------------------------------------------ issue 37: the new doors (SQL sources, plan files, uploads, ledger)
_sql_text = st.one_of(
    st.text(max_size=80),
    st.lists(
        st.sampled_from(["SELECT", "*", "FROM", "persons", ")", "(", ";", "'", '"', "--", "/*", "*/", "$$", "$a$",
                         "E'", "\\", "DROP TABLE secret", " ", "\n", "WITH", "AS", "t", "."]),
        max_size=25,
    ).map("".join),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(text=_sql_text, as_query=st.booleans())
def test_sql_sources_refuse_by_name_or_hold_one_statement(text, as_query):
    """Every text as a table name or a query: refused by name, or a name / one statement that stays in its
    parentheses (the lexer ends on every input: it only moves forward)."""
    from cocoviz.hierarchy.ingest import sql
    from cocoviz.hierarchy.ingest.database import check_one_statement, table_name_parts

    source = refused_or_ok(lambda: sql("postgresql://h/db", query=text) if as_query else sql("postgresql://h/db", text))
    if source is None:
        return
    if as_query:
        assert check_one_statement(source.query) == source.query
        assert source.relation.startswith("(") and source.relation.endswith(")")
    else:
        assert table_name_parts(text) == source.table and ";" not in "".join(source.table)


def _nested(depth: int) -> object:
    value: object = 1
    for k in range(depth):
        value = [value] if k % 2 else {"a": value}
    return value


@settings(max_examples=150, deadline=None)
@given(
    data=st.dictionaries(
        st.sampled_from(["epsilons", "rhos", "total_epsilon", "total_rho", "split", "methods", "p", "max_size",
                         "delta", "shape", "format", "k_select", "prior", "zz"]),
        st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=5),
                  st.lists(st.one_of(st.floats(0.01, 3), st.sampled_from(["Hc", "Hg", "naive"]), st.none()),
                           max_size=3),
                  st.integers(0, 200).map(_nested)),
        max_size=8,
    ),
    suffix=st.sampled_from([".json", ".toml"]),
)  # fmt: skip
def test_plan_files_refuse_by_name_or_load(tmp_path_factory, data, suffix):
    from cocoviz.plan.files import toml_text

    path = tmp_path_factory.mktemp("plans") / f"plan{suffix}"
    try:
        text = json.dumps(data) if suffix == ".json" else toml_text(data)
    except (TypeError, ValueError, RecursionError):
        text = json.dumps(data, default=str) if suffix == ".json" else "x = ["
    path.write_text(text)
    refused_or_ok(lambda: Plan.load(path, shape=TREE))


def _corrupt_bundle(tmp_path):
    from cocoviz.datasets.registry import bundled_names, dataset, load_cached

    name = next(n for n in bundled_names() if n != "toy")
    (tmp_path / dataset(name).filename).write_bytes(b"PAR1 not a parquet file PAR1")
    load_cached.cache_clear()
    try:
        return cocoviz.load_dataset(name, data_dir=tmp_path)
    finally:
        load_cached.cache_clear()


def _text_upload():
    import io

    return read_table(io.StringIO("hh,s\n1,a\n"))


def _deep_plan(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"epsilons": [1], "methods": ["Hg"], "shape": ' + "[" * 50_000 + "]" * 50_000 + "}")
    return Plan.load(path, shape=TREE)


LISTED_37 = {
    "text-mode StringIO upload": (lambda tmp: _text_upload(), r"an upload is bytes: got text"),
    "deeply nested JSON plan": (_deep_plan, r"nests arrays or tables 50001 deep"),
    "corrupt bundled file": (_corrupt_bundle, r"bundled file .* cannot be read"),
}


@pytest.mark.parametrize("name", list(LISTED_37))
def test_every_traceback_of_issue_37_is_a_refusal_that_names_the_problem(name, tmp_path):
    call, match = LISTED_37[name]
    with pytest.raises(CocovizError, match=match):
        call(tmp_path)


@settings(max_examples=60, deadline=None)
@given(
    header=st.lists(st.sampled_from(["hh", "s", "t", "S", " s"]), min_size=1, max_size=5),
    kind=st.sampled_from(["csv", "parquet", "upload"]),
)
def test_file_sources_refuse_repeated_columns_by_name(tmp_path_factory, header, kind):
    folder = tmp_path_factory.mktemp("headers")
    rows = [[str(k + 1) if c == "hh" else "a" for c in header] for k in range(2)]
    text = ",".join(header) + "\n" + "\n".join(",".join(r) for r in rows) + "\n"
    path = folder / f"p.{'parquet' if kind == 'parquet' else 'csv'}"
    if kind == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_arrays([pa.array([r[j] for r in rows]) for j in range(len(header))], header), path)
    else:
        path.write_text(text)
    names = [c.strip() for c in header]
    repeated = len(set(names)) < len(names)
    levels = [c for c in dict.fromkeys(names) if c != "hh"][:1]
    try:
        if kind == "upload":
            read_table(text.encode())
        else:
            Hierarchy.from_persons(str(path), group="hh", levels=levels)
    except CocovizError as exc:
        if repeated and (kind != "parquet" or len(set(header)) < len(header)):
            assert "more than once" in str(exc)
        return
    assert not repeated or (kind == "parquet" and len(set(header)) == len(header))
