"""A release's interval bands as optional columns of its file (:mod:`cocoviz.release.files.release_file`, format 2).

A release made in memory carries, per Hc, Hg, Hcp or naive level, the envelopes of that level's noisy
answers (:class:`~cocoviz.accuracy.intervals.bands.LevelBands`; a naive level's noisy counts whole,
:class:`~cocoviz.accuracy.intervals.counts.LevelCounts`), from which :meth:`cocoviz.Release.intervals` computes its
bands.  They are post-processing of the noisy measurements — differentially private outputs, no ε of
their own — so they may be published with the release, and a release file keeps them:

* the JSON metadata names each level's band method under ``bands`` (None where the level has none);
* per level, the columns :data:`BAND_FIELDS`: ``band_cells`` (noisy cells per node), ``band_up_steps`` /
  ``band_down_steps`` (steps of each node's running max from the left / running min from the right),
  ``band_up_at``, ``band_up_value``, ``band_down_at``, ``band_down_value`` (the steps, node by node), and
  for a naive level ``band_values`` (its noisy counts) instead of the steps;
* stored as int32 where every value fits (as in memory), covered by the file's signature with the rest.

A format-2 file written without ``bands`` has none of them and still loads; its
release refuses :meth:`~cocoviz.Release.intervals` as before.  Read back, nothing is trusted: the cells
must be the plan's query's per node (from its K), every node's steps must start at its cell 0, rise
strictly in cell and value, and stay inside its cells, and every value within ±2**53 — so a band computed
from the file can raise no error but the ones a release in memory would.  And the envelopes must show the
noise the plan's ε or ρ makes (:func:`~cocoviz.accuracy.intervals.noise_check.noise_problem`): a file whose plan
was edited to claim more privacy (a lower ε) or less (a higher one) than its noise gave is refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from cocoviz.accuracy.intervals.bands import BAND_METHODS, LevelBands
from cocoviz.accuracy.intervals.counts import LevelCounts, narrow
from cocoviz.accuracy.intervals.noise_check import noise_problem
from cocoviz.errors import InputError
from cocoviz.release.verify import node_cells

__all__ = ["BAND_FIELDS", "BANDS_KEY", "band_methods", "band_arrays", "check_noise", "stored_bands"]

#: The JSON key naming each level's band method (None where none): present only in a file with bands.
BANDS_KEY = "bands"
#: The band columns of a release file, after the release's own fields.
BAND_FIELDS = (
    "band_cells",
    "band_up_steps",
    "band_up_at",
    "band_up_value",
    "band_down_steps",
    "band_down_at",
    "band_down_value",
    "band_values",
)
_MAX_VALUE = 2**53  # as verify.MAX_NOISY_VALUE: no noisy answer is beyond it


def band_methods(bands: Sequence) -> list[str | None] | None:
    """Each level's band method (None where none), or None when no level has a band (the file then has none)."""
    methods = [None if b is None else b.method for b in bands]
    return methods if any(m is not None for m in methods) else None


def band_arrays(bands) -> dict[str, np.ndarray | None]:
    """One level's bands (:class:`LevelBands`, :class:`LevelCounts` or None) as the file's band columns."""
    out: dict[str, np.ndarray | None] = dict.fromkeys(BAND_FIELDS)
    if bands is None:
        return out
    out["band_cells"] = bands.cells
    if isinstance(bands, LevelCounts):
        out["band_values"] = bands.values
        return out
    out.update(
        band_up_steps=np.diff(bands.up_ptr),
        band_up_at=bands.up_at,
        band_up_value=bands.up_value,
        band_down_steps=np.diff(bands.down_ptr),
        band_down_at=bands.down_at,
        band_down_value=bands.down_value,
    )
    return out


def _ptr(steps: np.ndarray) -> np.ndarray:
    ptr = np.zeros(len(steps) + 1, np.int64)
    np.cumsum(steps, out=ptr[1:])
    return ptr


def _check_values(values: np.ndarray, what: str) -> None:
    if values.size and (values.min() < -_MAX_VALUE or values.max() > _MAX_VALUE):
        raise InputError(f"{what} holds a value beyond ±2**53: not a noisy answer")


def _checked_steps(cells: np.ndarray, steps, at, value, what: str) -> np.ndarray:
    """The offsets of one envelope's steps per node, after checking them against the node's ``cells``."""
    if steps is None or at is None or value is None:
        raise InputError(f"{what} lacks its steps")
    if len(steps) != len(cells) or (steps < 0).any() or ((steps == 0) != (cells == 0)).any():
        raise InputError(f"{what} needs one or more steps per node with cells, none elsewhere")
    if (steps > cells).any():
        raise InputError(f"{what} has more steps than cells at a node")
    ptr = _ptr(steps)
    if len(at) != ptr[-1] or len(value) != ptr[-1]:
        raise InputError(f"{what} has {len(at)} step starts and {len(value)} values for {int(ptr[-1])} steps")
    held = steps > 0
    first, last = ptr[:-1][held], ptr[1:][held] - 1
    # Rising within every node (checked across nodes too, then forgiven at each node's first step), a node's
    # steps lie in its cells when its first starts at 0 and its last before its cell count.
    fall_at, fall_value = np.diff(at) <= 0, np.diff(value) <= 0
    fall_at[first[1:] - 1] = fall_value[first[1:] - 1] = False
    if fall_at.any() or fall_value.any():
        raise InputError(f"{what} has steps that do not rise in cell and value")
    if (at[first] != 0).any() or (at[last] >= cells[held]).any():
        raise InputError(f"{what} has a step outside its node's cells, or a node whose steps do not start at 0")
    _check_values(value, what)
    return ptr


_COUNTS_FIELDS = ("band_cells", "band_values")


def _level_bands(method: str, arrays: Mapping, expected: np.ndarray, where: str):
    fields = _COUNTS_FIELDS if method == "naive" else tuple(f for f in BAND_FIELDS if f != "band_values")
    extra = [f for f in BAND_FIELDS if f not in fields and arrays.get(f) is not None]
    if extra:
        raise InputError(f"{where} hold {', '.join(extra)}, which {method} bands have none of")
    cells = arrays.get("band_cells")
    if cells is None:
        raise InputError(f"{where} lack the noisy cells per node")
    if not np.array_equal(cells, expected):
        k = int(np.flatnonzero(cells != expected)[0]) if len(cells) == len(expected) else None
        at = f" (node {k}: {int(cells[k])}, its query {int(expected[k])})" if k is not None else ""
        raise InputError(f"{where} are not over the cells its plan's {method} query measures{at}")
    if method == "naive":
        values = arrays.get("band_values")
        if values is None or len(values) != int(cells.sum()):
            raise InputError(f"{where} need one noisy count per cell")
        _check_values(values, where)
        return LevelCounts(method, narrow(cells), narrow(_ptr(cells)), narrow(values))
    ups = [arrays.get(f"band_up_{f}") for f in ("steps", "at", "value")]
    downs = [arrays.get(f"band_down_{f}") for f in ("steps", "at", "value")]
    up_ptr = _checked_steps(cells, *ups, f"the running max of {where}")
    down_ptr = _checked_steps(cells, *downs, f"the running min of {where}")
    parts = (cells, up_ptr, ups[1], ups[2], down_ptr, downs[1], downs[2])
    return LevelBands(method, *map(narrow, parts))


def stored_bands(plan, methods: object, levels: Sequence[Mapping], bounds: Sequence) -> list:
    """Per level, the bands a release file holds (None where none), each checked against ``plan``.

    ``methods`` is the file's JSON ``bands`` entry; ``levels`` its arrays per level; ``bounds`` its K per
    node (checked before), which fix the cells an Hc, Hcp or naive node measures.
    """
    n = plan.shape.depth + 1
    if not isinstance(methods, list) or len(methods) != n:
        raise InputError(f"its band methods must be a list with one entry per level ({n})")
    measured = set(plan.measured_levels())
    out = []
    for level, (method, arrays) in enumerate(zip(methods, levels)):
        where = f"its bands of level {level}"
        if method is None:
            if any(arrays.get(f) is not None for f in BAND_FIELDS):
                raise InputError(f"{where} are stored without a method")
            out.append(None)
            continue
        if method != plan.methods[level] or method not in BAND_METHODS or level not in measured:
            raise InputError(f"{where} are of {method!r}, not of a level its plan measures with a banded method")
        expected = node_cells(plan, level, bounds[level])
        bands = _level_bands(method, arrays, expected, where)
        check_noise(plan, level, bands, where)
        out.append(bands)
    return out


def check_noise(plan, level: int, bands, where: str) -> None:
    """Refuse (:class:`~cocoviz.errors.InputError`, named) a level's envelopes or noisy answers (``bands``) that do
    not show the noise ``plan``'s ε or ρ makes at ``level``
    (:func:`~cocoviz.accuracy.intervals.noise_check.noise_problem`): the file's plan was edited after release."""
    problem = noise_problem(bands, plan.level_noise(level), plan.shape.group_counts(level))
    if problem is not None:
        budget = f"ε = {plan.level_epsilon(level):g}" if plan.rhos is None else f"ρ = {plan.level_rho(level):g}"
        raise InputError(
            f"{where} are {problem} than its plan's {budget} allows: the file's plan was changed after release"
        )
