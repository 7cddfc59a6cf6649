"""The noisy-measurement file: a release's noisy answers and its public plan, publishable on their own.

:func:`save_measurements` (``cocoviz.save_measurements``) writes what :func:`cocoviz.measure` returned
(a function, not a method of Measurements: the measure stage never imports a file module, see
tests/test_imports.py) and
:func:`load_measurements` reads it back; ``post_process(plan, load_measurements(path))`` then gives,
run for run, the release that ``post_process(plan, measurements)`` gives.  The file holds

* the plan (:meth:`~cocoviz.Plan.to_dict`): its public facts — the hierarchy's levels and nodes, G of
  every node, K when it is public — and ε or ρ, method, p per level;
* the noisy answers only: every measured level's noisy cells (``value``), node by node in the order
  the plan measures them (how many per node follows from the plan and K), and the K of every node
  where a method needed one (the public K, or a K̂ that is itself a DP output);
* the budget spent (:meth:`~cocoviz.Budget.to_dict`), and a statement of the sampler, the
  accounting and the cost beside it.

No true count is in it, nothing read from the private rows but through noise: everything in it was
already released by the noisy measurements, so it may be published with the release (as the Census
publishes its noisy measurement files) and anyone can rerun the post-processing.

Like a release file (:mod:`cocoviz.release.release`), it is Parquet in the columnar layout of
:mod:`cocoviz.release.files.release_file` (format 2: the shape, K and the cells as columns in chunks, the rest as
JSON in its metadata; a file of another format is refused), written
whole or not at all (:mod:`cocoviz.core.atomic`), optionally signed with the data holder's key (HMAC-SHA256,
:func:`cocoviz.release.verify.signature`), and trusted in nothing when read back: the budget must be the one its plan
costs, spent by a known sampler, and the answers must be the plan's
measurements, cell for cell (:func:`cocoviz.release.verify.check_measurements`), showing the noise its plan's ε
or ρ makes (:func:`cocoviz.release.files.band_columns.check_noise`: a plan edited after release is refused).
A file that fails gets an
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

import numpy as np

from cocoviz.accuracy.intervals.bands import BAND_METHODS, LevelBands
from cocoviz.errors import InputError, ParameterError
from cocoviz.measure.measurements import LevelMeasurement, Measurements
from cocoviz.release import verify
from cocoviz.release.files import release_file
from cocoviz.release.files.band_columns import check_noise

__all__ = ["MEASUREMENTS_FORMAT", "save_measurements", "load_measurements", "statement"]

#: The format tag in a noisy-measurement file's metadata (format 2: every array a column).
MEASUREMENTS_FORMAT = "cocoviz-measurements/2"
_FIELDS = (*release_file.SHAPE_FIELDS, "value")
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
    return release_file.target_name(path, "a noisy-measurement file needs a file path or a binary file object", method)


def save_measurements(measurements, path, *, key: bytes | str | None = None) -> None:
    """Write ``measurements`` (what :func:`cocoviz.measure` returned) to the Parquet file ``path``.

    Checked first (:func:`cocoviz.release.verify.check_measurements`): only the plan's own measurements are
    written.  ``key`` (bytes or text, 16 bytes or more) signs the file: :func:`load_measurements`
    with the same key then refuses any edit.
    """
    signing = None if key is None else verify.signing_key(key)
    _target(path, "write")
    plan = getattr(measurements, "plan", None)
    verify.check_measurements(plan, measurements)
    levels = release_file.shape_arrays(plan.shape, [None if m is None else m.bounds for m in measurements.levels])
    for arrays, m in zip(levels, measurements.levels):
        # Whole numbers (check_measurements saw to it), stored as integers.
        arrays["value"] = None if m is None else np.asarray(m.values).astype(np.int64, copy=False)
    meta = {
        "format": MEASUREMENTS_FORMAT,
        "contents": CONTENTS,
        "statement": statement(measurements.budget),
        "plan": plan.to_dict(shape=release_file.shape_entry(plan.shape)),
        "budget": measurements.budget.to_dict(),
    }
    release_file.write(path, meta, levels, _FIELDS, signing)


def load_measurements(path, *, key: bytes | str | None = None):
    """The :class:`~cocoviz.Measurements` in a file written by :func:`save_measurements`, checked.

    Refuses (:class:`~cocoviz.errors.InputError`, naming the file and why) a file that is not a
    noisy-measurement file, whose budget is not its plan's cost or whose sampler is unknown, whose
    statement is not its budget's, or whose answers are not the plan's measurements (levels,
    nodes, cells per node, K, whole values); with ``key``, also one whose signature is missing or
    is not that key's.
    """
    name = _target(path, "read")
    signing = None if key is None else verify.signing_key(key)
    table, meta = release_file.read_stored(path, name, (MEASUREMENTS_FORMAT,), "noisy-measurement file")
    try:
        return _checked(meta, table, signing)
    except InputError as exc:
        raise InputError(f"{name} is refused: {exc}") from None


def _checked_budget(meta: dict, levels=None):
    """The plan and budget of a stored file, its statement checked against the budget."""
    plan = release_file.stored_plan(meta, ("plan", "budget", "statement"), levels)
    budget = verify.check_budget(plan, meta["budget"], None)
    if meta["statement"] != statement(budget):
        raise InputError(f"its statement {meta['statement']!r} is not its budget's ({statement(budget)!r})")
    return plan, budget


def _measurements(plan, budget, levels):
    """The Measurements of ``levels`` (LevelMeasurement or None per level), refused unless the plan's."""
    measurements = Measurements(plan, tuple(levels), budget)
    try:
        verify.check_measurements(plan, measurements)
    except ParameterError as exc:
        raise InputError(f"its answers are not its plan's measurements: {exc}") from None
    return measurements


def _checked(meta: dict, table, signing: bytes | None):
    """The measurements of a format-2 file: cells per node from the plan and K, so only their total is stored."""
    arrays = release_file.stored_levels(table, meta, ("plan", "budget", "statement"), _FIELDS, signing)
    plan, budget = _checked_budget(meta, arrays)
    bounds = [a["K"] for a in arrays]
    try:
        verify.check_bounds(plan, bounds, selected=False)
    except InputError as exc:
        raise InputError(f"its answers are not its plan's measurements: {exc}") from None
    measured = set(plan.measured_levels())
    levels: list = [None] * len(arrays)
    for lvl, a in enumerate(arrays):
        if (a["value"] is None) == (lvl in measured):
            raise InputError(
                f"it has answers at level {lvl}, which its plan does not measure"
                if lvl not in measured
                else f"it lacks the answers of level {lvl}, which its plan measures"
            )
        if lvl not in measured:
            continue
        ptr = np.zeros(plan.shape.n_nodes(lvl) + 1, np.int64)
        np.cumsum(verify.node_cells(plan, lvl, bounds[lvl]), out=ptr[1:])
        if ptr[-1] != len(a["value"]):
            raise InputError(f"its level {lvl} holds {len(a['value'])} answers, its plan's query {int(ptr[-1])}")
        method = plan.level_method(lvl)
        # Arrays of their own, as measure()'s answers are (a column read whole may be a read-only view).
        values = a["value"] if a["value"].flags.writeable else a["value"].copy()
        levels[lvl] = LevelMeasurement(lvl, method.name, plan.level_noise(lvl), ptr, values, bounds[lvl])
    measurements = _measurements(plan, budget, levels)
    for m in levels:  # the answers show the noise of the plan's ε or ρ, or its plan was edited
        if m is not None and m.method in BAND_METHODS:
            check_noise(plan, m.level, LevelBands.of(m.method, m.values, m.ptr), f"its answers of level {m.level}")
    return measurements
