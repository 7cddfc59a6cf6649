"""The noisy-measurement file: a release's noisy answers and its public plan, publishable on their own.

:func:`save_measurements` (``cocoviz.save_measurements``) writes what :func:`cocoviz.measure` returned
(a function, not a method of Measurements: the measure stage never imports a file module, see
tests/test_imports.py) and
:func:`load_measurements` reads it back; ``post_process(plan, load_measurements(path))`` then gives,
run for run, the release that ``post_process(plan, measurements)`` gives.  The file holds

* the plan (:meth:`~cocoviz.Plan.to_dict`): its public facts — the hierarchy's levels and nodes, G of
  every node, K when it is public — and ε or ρ, method, p per level;
* the noisy answers only: one row per noisy cell (``level``, ``node``, ``value``), node by node in
  the order the plan measures them, and the K of every node where a method needed one (the public K,
  or a K̂ that is itself a DP output);
* the budget spent (:meth:`~cocoviz.Budget.to_dict`), and a statement of the sampler, the
  accounting and the cost beside it.

No true count is in it, nothing read from the private rows but through noise: everything in it was
already released by the noisy measurements, so it may be published with the release (as the Census
publishes its noisy measurement files) and anyone can rerun the post-processing.

Like a release file (:mod:`cocoviz.release`), it is Parquet with the rest as JSON in its metadata,
written whole or not at all (:mod:`cocoviz.io.atomic`), optionally signed with the data holder's
key (HMAC-SHA256, :func:`cocoviz.verify.signature`), and trusted in nothing when read back: the
budget must be the one its plan costs, spent by a known sampler, and the answers must be the plan's
measurements, cell for cell (:func:`cocoviz.verify.check_measurements`).  A file that fails gets an
:class:`~cocoviz.errors.InputError` naming why, never a traceback.

>>> import pandas as pd, pathlib, tempfile
>>> from cocoviz import Hierarchy, Plan, measure, post_process
>>> tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}),
...                              size="size", levels=["region"])
>>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=8)
>>> measurements = measure(plan, tree, seed=0)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "measurements.parquet"
>>> save_measurements(measurements, path)
>>> again = load_measurements(path)
>>> post_process(plan, again).to_frame().equals(post_process(plan, measurements).to_frame())
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

import numpy as np

from cocoviz.errors import InputError, ParameterError

__all__ = ["MEASUREMENTS_FORMAT", "save_measurements", "load_measurements", "statement"]

#: The format tag in a noisy-measurement file's metadata.
MEASUREMENTS_FORMAT = "cocoviz-measurements/1"
_META_KEY = b"cocoviz"
_COLUMNS = ("level", "node", "value")
#: What the file holds, said in the file.
CONTENTS = (
    "noisy answers of every measured node and the public plan only: no true count; publishable, "
    "post_process(plan, measurements) gives the release"
)


def statement(budget) -> dict:
    """The sampler, accounting and cost of ``budget``, as the file states them beside the budget itself."""
    out = {"sampler": budget.sampler, "accounting": budget.accounting, "epsilon": budget.total}
    if budget.accounting == "zCDP":
        out.update(rho=budget.total_rho, delta=budget.delta)
    return out


def _target(path: object, method: str) -> str:
    """The file's name for messages, after refusing what is neither a path nor a binary file object."""
    from cocoviz.release import _check_target

    _check_target(path, "a noisy-measurement file needs a file path or a binary file object", method)
    return repr(os.fspath(path)) if isinstance(path, (str, os.PathLike)) else "this file"


def _columns_of(measurements) -> dict[str, np.ndarray]:
    """One row per noisy cell, level by level and node by node, filled in place (no copy of every level joined)."""
    measured = [m for m in measurements.levels if m is not None]
    rows = sum(int(np.asarray(m.ptr)[-1]) for m in measured)
    columns = {name: np.empty(rows, np.int64) for name in _COLUMNS}
    at = 0
    for m in measured:
        counts = np.diff(np.asarray(m.ptr, np.int64))
        end = at + int(counts.sum())
        columns["level"][at:end] = m.level
        columns["node"][at:end] = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        columns["value"][at:end] = m.values  # whole numbers (check_measurements saw to it)
        at = end
    return columns


def _bounds_of(measurements) -> dict[str, list[int]]:
    return {
        str(m.level): [int(k) for k in m.bounds] for m in measurements.levels if m is not None and m.bounds is not None
    }


def save_measurements(measurements, path, *, key: bytes | str | None = None) -> None:
    """Write ``measurements`` (what :func:`cocoviz.measure` returned) to the Parquet file ``path``.

    Checked first (:func:`cocoviz.verify.check_measurements`): only the plan's own measurements are
    written.  ``key`` (bytes or text, 16 bytes or more) signs the file: :func:`load_measurements`
    with the same key then refuses any edit.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cocoviz import verify
    from cocoviz.io.atomic import atomic_path

    signing = None if key is None else verify.signing_key(key)
    _target(path, "write")
    plan = getattr(measurements, "plan", None)
    verify.check_measurements(plan, measurements)
    columns = _columns_of(measurements)
    meta = {
        "format": MEASUREMENTS_FORMAT,
        "contents": CONTENTS,
        "statement": statement(measurements.budget),
        "plan": plan.to_dict(),
        "budget": measurements.budget.to_dict(),
        "bounds": _bounds_of(measurements),
    }
    if signing is not None:
        meta["signature"] = {
            "algorithm": verify.SIGNATURE_ALGORITHM,
            "value": verify.signature(signing, meta, columns, _COLUMNS),
        }
    table = pa.table(columns).replace_schema_metadata({_META_KEY: json.dumps(meta).encode()})
    with atomic_path(path) as tmp:  # a failed write leaves the previous file at ``path``
        pq.write_table(table, tmp)


def load_measurements(path, *, key: bytes | str | None = None):
    """The :class:`~cocoviz.Measurements` in a file written by :func:`save_measurements`, checked.

    Refuses (:class:`~cocoviz.errors.InputError`, naming the file and why) a file that is not a
    noisy-measurement file, whose budget is not its plan's cost or whose sampler is unknown, whose
    statement is not its budget's, or whose answers are not the plan's measurements (levels,
    nodes, cells per node, K, whole values); with ``key``, also one whose signature is missing or
    is not that key's.
    """

    from cocoviz import verify
    from cocoviz.release import _columns as stored_columns  # read and checked as a release file is
    from cocoviz.release import _read_stored as read_stored

    name = _target(path, "read")
    signing = None if key is None else verify.signing_key(key)
    table, meta = read_stored(path, name, MEASUREMENTS_FORMAT, "noisy-measurement file")
    try:
        columns = stored_columns(table, _COLUMNS)
        if signing is not None:
            verify.check_signature(signing, meta, columns, _COLUMNS)
        return _checked(meta, columns)
    except InputError as exc:
        raise InputError(f"{name} is refused: {exc}") from None


def _checked(meta: dict, columns: dict[str, np.ndarray]):
    from cocoviz import verify
    from cocoviz.measure import LevelMeasurement, Measurements
    from cocoviz.release import _bounds as stored_bounds  # K per node and the plan read as a release file's
    from cocoviz.release import _stored_plan as stored_plan

    plan = stored_plan(meta, ("plan", "budget", "statement"))
    budget = verify.check_budget(plan, meta["budget"], None)
    if meta["statement"] != statement(budget):
        raise InputError(f"its statement {meta['statement']!r} is not its budget's ({statement(budget)!r})")
    if not isinstance(meta.get("bounds"), Mapping):
        raise InputError("its K per node must be a mapping {level: [K of every node]}")
    bounds = stored_bounds(meta["bounds"], plan.shape.depth)
    level, node, value = (columns[c] for c in _COLUMNS)
    # Comparisons of neighbours, not np.diff: a bool per row rather than a number (files of 50M rows).
    if (level[1:] < level[:-1]).any():
        raise InputError("its rows are not in level order")
    # Rows in level order: a level's rows are one slice (a view), found by bisection.
    measured = plan.measured_levels()
    firsts = level[np.r_[0, np.flatnonzero(level[1:] != level[:-1]) + 1]] if level.size else level
    stray = sorted(set(firsts.tolist()) - set(measured))
    if stray:
        raise InputError(f"it has answers at level {stray[0]}, which its plan does not measure")
    levels: list = [None] * (plan.shape.depth + 1)
    for lvl in measured:
        mine = slice(*np.searchsorted(level, [lvl, lvl + 1]))
        nodes, n_nodes = node[mine], plan.shape.n_nodes(lvl)
        if nodes.size and ((nodes[1:] < nodes[:-1]).any() or nodes[0] < 0 or nodes[-1] >= n_nodes):
            raise InputError(f"its answers of level {lvl} are not on nodes 0..{n_nodes - 1} in order")
        ptr = np.zeros(n_nodes + 1, np.int64)
        np.cumsum(np.bincount(nodes, minlength=n_nodes), out=ptr[1:])
        method = plan.level_method(lvl)
        # A copy: the file's columns are read-only views, measure()'s answers are arrays of their own.
        values = value[mine].copy()
        levels[lvl] = LevelMeasurement(lvl, method.name, plan.level_epsilon(lvl), ptr, values, bounds[lvl])
    measurements = Measurements(plan, tuple(levels), budget)
    try:
        verify.check_measurements(plan, measurements)
    except ParameterError as exc:
        raise InputError(f"its answers are not its plan's measurements: {exc}") from None
    return measurements
