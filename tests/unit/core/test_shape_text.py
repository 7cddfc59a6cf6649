"""The shape's JSON written from its node arrays is, byte for byte, ``json.dumps`` of ``Shape.to_dict``."""

from __future__ import annotations

import hashlib
import json

import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

from cocoviz.core.shape import Shape
from cocoviz.core.shape_text import digest_and_json, shape_json

# Labels with what JSON must escape: quotes, backslashes, control characters, non-ASCII, the empty label.
LABELS = st.text(alphabet=st.sampled_from(["a", "b", '"', "\\", "\x00", "\n", "é", "中", "😀", " ", "/"]), max_size=3)


@st.composite
def shapes(draw) -> Shape:
    depth = draw(st.integers(0, 3))
    levels = [draw(st.sampled_from(["state", "county", 'ré"gion', ""])) + str(k) for k in range(depth)]
    paths, parents = [[()]], [[]]
    for _ in range(depth):
        row, up = [], []
        for k, path in enumerate(paths[-1]):
            for label in sorted(draw(st.sets(LABELS, min_size=1, max_size=3))):
                row.append((*path, label))
                up.append(k)
        paths.append(row)
        parents.append(up)
    groups = [np.asarray(draw(st.lists(st.integers(0, 10**12), min_size=len(paths[-1]), max_size=len(paths[-1]))))]
    for level in range(depth, 0, -1):
        groups.insert(0, np.bincount(parents[level], weights=groups[0], minlength=len(paths[level - 1])).astype(int))
    return Shape(levels, paths, parents, [g.tolist() for g in groups], public_groups=draw(st.booleans()))


@settings(max_examples=150, deadline=None)
@given(shapes())
def test_ledger_form_is_json_dumps(shape):
    text = b"".join(shape_json(shape)).decode("utf-8")
    assert text == json.dumps(shape.to_dict(), ensure_ascii=False)


@settings(max_examples=150, deadline=None)
@given(shapes())
def test_canonical_form_and_digest(shape):
    canonical = json.dumps(shape.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert b"".join(shape_json(shape, canonical=True)) == canonical.encode("utf-8")
    assert shape.digest() == hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def test_worked_example_digest_is_unchanged():
    """The identity a ledger already holds for this shape (the docstring of ``dataset_identity``)."""
    assert Shape((), (((),),), ((),), ((4,),), public_groups=True).digest()[:12] == "844835dc42f3"


def test_national_tree_matches():
    """A generated block-level tree (narrow int parents, object labels) gives the same text both ways."""
    import cocoviz

    shape = Shape.of(cocoviz.load_dataset("housing-us-blocks", scale=0.002))
    assert b"".join(shape_json(shape)).decode() == json.dumps(shape.to_dict(), ensure_ascii=False)


@settings(max_examples=60, deadline=None)
@given(shapes())
def test_one_pass_gives_both_forms(shape):
    digest, text = digest_and_json(shape)
    canonical = json.dumps(shape.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert digest == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert text.decode("utf-8") == json.dumps(shape.to_dict(), ensure_ascii=False)
    assert shape.json_bytes() == text and shape.digest() == digest and shape.json_bytes() == text


@settings(max_examples=30, deadline=None)
@given(shapes())
def test_the_ledger_row_holds_json_dumps_of_the_plan(shape):
    """The ``plan`` and ``parameters`` columns are what ``json.dumps`` of ``Plan.to_dict`` wrote before."""
    import sqlite3
    import tempfile
    from pathlib import Path

    from cocoviz.measure.ledger import Ledger
    from cocoviz.plan import Plan

    plan = Plan.build(shape, methods=["Hg"] * (shape.depth + 1), epsilons=[1.0] * (shape.depth + 1))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ledger.sqlite"
        entry = Ledger(path).begin(plan)
        with sqlite3.connect(path) as db:
            stored, parameters, dataset = db.execute(
                "SELECT plan, parameters, dataset FROM draws WHERE id = ?", (entry,)
            ).fetchone()
    public = plan.to_dict()
    assert stored == json.dumps(public, ensure_ascii=False)
    assert parameters == json.dumps({k: v for k, v in public.items() if k != "shape"}, ensure_ascii=False)
    canonical = json.dumps(shape.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert dataset == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
