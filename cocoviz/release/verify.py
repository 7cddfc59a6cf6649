"""What a release must be, checked: its budget from its plan, its sampler, its invariants, its signature.

A release file is read back by :func:`cocoviz.load_release`, which trusts nothing in it: the
budget must be the one its plan costs (:func:`release_budget`, the same function that makes it),
spent by a known sampler, with the notes the plan implies; the runs must be whole numbers
≥ 0 on the plan's nodes and levels, keep every node's public G, and (unless the plan's
consistency is ``"none"``) make every parent the sum of its children (:func:`consistency_problem`).
Each failure is an :class:`~cocoviz.errors.InputError` naming it.

Those checks make a file that *lies* about its cost or its invariants fail to load, but an
edit that keeps them (a fast sampler's name replaced by the secure one's, a count moved
between two sizes of a one-node release) cannot be seen from the file alone.  A keyed
signature closes that: HMAC-SHA256 (:func:`signature`) over the metadata and every stored
run, with a key only the data holder has, so any edit is refused by a holder who gives the key.

>>> from cocoviz.plan import Plan, Shape
>>> plan = Plan.build(Shape((), (((),),), ((),), ((4,),), public_groups=True), epsilons=[1.0], methods=["Hg"])
>>> release_budget(plan, "secure: exact").total == plan.cost().total
True
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import math
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from cocoviz.core.runs import aggregate_runs
from cocoviz.errors import InputError, ParameterError
from cocoviz.measure.measurements import Measurements, plan_notes
from cocoviz.methods.hcp_prior import UNIFORM
from cocoviz.plan import METHODS, Plan
from cocoviz.privacy.budget import Budget, Charge
from cocoviz.privacy.noise import FastSampler, GaussianNoise, OpenDPSampler, SecureSampler

__all__ = [
    "SELECTION_COMPOSITION",
    "SIGNATURE_ALGORITHM",
    "mix_name",
    "release_budget",
    "sampler_names",
    "check_columns",
    "check_bounds",
    "check_measurements",
    "node_cells",
    "MAX_NOISY_VALUE",
    "consistency_problem",
    "signing_key",
    "signature",
]

#: How the charges of a selected release compose.
SELECTION_COMPOSITION = "sequential: every candidate release with its full budget, then the selection"
#: The keyed signature of a release file.
SIGNATURE_ALGORITHM = "HMAC-SHA256"
#: The shortest key accepted for a signature (bytes).
MIN_KEY_BYTES = 16
#: The largest magnitude of a noisy answer: answers are at most 2**40 (G, sizes) and the samplers refuse
#: a scale whose noise could reach 2**52, so anything past 2**53 (where floats stop being exact) is not one.
MAX_NOISY_VALUE = 2**53


def mix_name(methods: Sequence[str]) -> str:
    """``"Hc x Hg x Hc"``: a method mix as the reports name it."""
    return " x ".join(methods)


def sampler_names() -> frozenset[str]:
    """The names a release's ``budget.sampler`` may carry: the fast, the secure and OpenDP's sampler."""
    return frozenset({FastSampler(0).name, SecureSampler.name, OpenDPSampler.name})


def _candidate_plan(plan: Plan, methods: Sequence[str]) -> Plan:
    """A selection's candidate: the chosen plan with another method mix (its cost does not depend on p or the prior)."""
    return dataclasses.replace(
        plan, methods=tuple(methods), ps=tuple(METHODS[m].default_p for m in methods), prior=UNIFORM
    )


def _check_selection(plan: Plan, selection: object) -> tuple[tuple[tuple[str, ...], ...], float]:
    if not isinstance(selection, Mapping) or set(selection) != {"candidates", "chosen", "epsilon_select"}:
        raise InputError("its selection must name the candidates, the chosen index and epsilon_select, nothing else")
    candidates, chosen, eps = selection["candidates"], selection["chosen"], selection["epsilon_select"]
    n = plan.shape.depth + 1
    if (
        not isinstance(candidates, Sequence)
        or not candidates
        or not all(
            isinstance(c, Sequence) and len(c) == n and all(isinstance(m, str) and m in METHODS for m in c)
            for c in candidates
        )
    ):
        raise InputError(f"its selection's candidates must be method mixes of {n} levels each")
    if isinstance(chosen, bool) or not isinstance(chosen, numbers.Integral) or not 0 <= chosen < len(candidates):
        raise InputError(f"its selection's chosen index {chosen!r} is not a candidate's")
    if tuple(candidates[chosen]) != tuple(plan.methods):
        raise InputError("its selection's chosen mix is not its plan's methods")
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not (math.isfinite(eps) and eps > 0):
        raise InputError(f"its selection's epsilon_select must be a number > 0, got {eps!r}")
    return tuple(tuple(c) for c in candidates), float(eps)


def release_budget(plan: Plan, sampler: str, selection: Mapping | None = None) -> Budget:
    """The budget a release of ``plan`` drawn by ``sampler`` carries: what :func:`cocoviz.measure` reports.

    For a release chosen by :func:`cocoviz.select_mix` (``selection``: candidates, chosen index,
    ε of the selection), every candidate's full cost plus the selection's scores, by sequential
    composition.  Under zCDP every candidate's measurements are listed as charges of their own
    (their ρ, named by candidate, so that a level's ρ sums over the candidates) and the selection's
    pure-ε scores count ε²/2.
    """
    notes = plan_notes(plan)
    if selection is None:
        return plan.cost().with_sampler(sampler, notes)
    candidates, epsilon_select = _check_selection(plan, selection)
    n_levels = plan.shape.depth + 1
    charge = Charge(
        None,
        (),
        f"candidate scores, total emd (Δ = {n_levels}; noisy min needs 2Δ)",
        len(candidates),
        float(2 * n_levels),
        epsilon_select,
    )
    if plan.rhos is not None:  # a budget's extra spending is pure ε: the candidates' ρ are charges instead
        charges = [
            dataclasses.replace(c, quantity=f"candidate {k + 1} ({mix_name(mix)}): {c.quantity}")
            for k, mix in enumerate(candidates)
            for c in _candidate_plan(plan, mix).cost().charges
        ]
        return Budget((charge, *charges), (), SELECTION_COMPOSITION, sampler, notes, "zCDP", plan.delta)
    spent = tuple(
        (f"candidate {k + 1}: {mix_name(mix)}", _candidate_plan(plan, mix).cost().total)
        for k, mix in enumerate(candidates)
    )
    return Budget((charge,), spent, SELECTION_COMPOSITION, sampler, notes)


def check_budget(plan: Plan, stored: object, selection: Mapping | None) -> Budget:
    """The budget of a release of ``plan`` whose stored budget is ``stored`` (its ``to_dict``), or a refusal.

    Refused: a sampler that is none of cocoviz's, a secure sampler on G taken from private rows,
    and a budget that is not, field for field, the one the plan costs (:func:`release_budget`).
    """
    if not isinstance(stored, Mapping):
        raise InputError("its budget is not a mapping")
    sampler = stored.get("sampler")
    if not isinstance(sampler, str) or sampler not in sampler_names():
        raise InputError(f"its sampler {sampler!r} is none of cocoviz's samplers")
    if not sampler.startswith("fast") and not plan.shape.public_groups:
        raise InputError("it claims a secure sampler, but its G came from private rows: no secure release has that")
    expected = release_budget(plan, sampler, selection)
    want = expected.to_dict()
    if dict(stored) != want:
        differs = [k for k in want if stored.get(k) != want[k]] + [k for k in stored if k not in want]
        raise InputError(
            f"its budget is not the one its plan costs (ε {stored.get('total')!r} stored, {expected.total!r} by "
            f"the plan; {', '.join(differs)} differ)"
        )
    return expected


def check_columns(plan: Plan, runs: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
    """Refuse stored runs (per level of the plan, its ``(node, size, count)`` arrays) with a negative size or count,
    off the plan's nodes, or with a count above its node's G (which also keeps sums of counts from overflowing).

    Level by level, on the level's own arrays: no mask or copy over all runs (29M at 8M nodes).
    """
    shape = plan.shape
    if len(runs) != shape.depth + 1:
        raise InputError(f"it has runs of {len(runs)} levels, but its plan has levels 0 to {shape.depth}")
    for _, size, count in runs:
        if (size.size and size.min() < 0) or (count.size and count.min() < 0):
            raise InputError("it has a negative size or count: every released count is a whole number >= 0")
    for lvl, (node, _, count) in enumerate(runs):
        if not node.size:
            continue
        n = shape.n_nodes(lvl)
        if node.min() < 0 or node.max() >= n:
            raise InputError(f"it has runs of level {lvl} on node ids outside 0..{n - 1} (its plan's nodes)")
        if (count > shape.group_counts(lvl)[node]).any():
            raise InputError(f"it has a count above its node's G at level {lvl}")


def check_bounds(plan: Plan, bounds: Sequence[np.ndarray | None], selected: bool) -> None:
    """Refuse K per node where the plan has none, or K outside what its ``k_select`` gives.

    A release of :func:`cocoviz.measure` has K for every node of the measured levels that need
    one (the public K, or K̂ in 1..ceiling, one for the release unless ``noisy-max-per-node``);
    a selected release carries none.
    """
    needs = set(plan.k_levels())
    for lvl, b in enumerate(bounds):
        if b is None:
            if lvl in needs and not selected:
                raise InputError(f"it lacks the K per node of level {lvl}, whose method needs one")
            continue
        if selected or lvl not in needs:
            raise InputError(f"it has K per node at level {lvl}, whose release has none")
        if b.shape != (plan.shape.n_nodes(lvl),):
            raise InputError(f"its K per node of level {lvl} is not one per node")
        if plan.k_select == "public" and (b != plan.max_size).any():
            raise InputError(f"its K per node of level {lvl} is not the public K = {plan.max_size}")
        if (b < 1).any() or (b > plan.max_size).any():
            raise InputError(f"its K per node of level {lvl} lies outside 1..{plan.max_size} (the ceiling)")
        if plan.k_select in ("noisy-max", "svt") and len({int(k) for bb in bounds if bb is not None for k in bb}) > 1:
            raise InputError(f"its K̂ of {plan.k_select!r} must be one for the whole release")


def node_cells(plan: Plan, level: int, bounds: np.ndarray | None) -> np.ndarray:
    """Noisy cells the plan's method measures per node of ``level`` with K per node ``bounds``."""
    method = plan.level_method(level)
    groups = plan.shape.group_counts(level)
    if bounds is None or not method.needs_k:
        return method.cells(groups, plan.max_size)
    return method.cells_at(bounds)


def check_measurements(plan: Plan, measurements: object) -> None:
    """Refuse measurements that are not the plan's: their budget, levels, methods, ε, K, cells per node, values.

    Values must be whole numbers within ±:data:`MAX_NOISY_VALUE` (no NaN, no 4e18): what
    :func:`cocoviz.measure` draws.  Each refusal is a :class:`~cocoviz.errors.ParameterError` naming it.
    """
    if not isinstance(measurements, Measurements):
        raise ParameterError(
            f"post_process needs the Measurements that measure() returned, got {type(measurements).__name__}"
        )
    if measurements.plan != plan:
        raise ParameterError("these measurements were made for another plan")
    try:
        check_budget(plan, measurements.budget.to_dict() if isinstance(measurements.budget, Budget) else None, None)
    except InputError as exc:
        raise ParameterError(f"these measurements' budget is not their plan's: {exc}") from None
    levels = measurements.levels
    n = plan.shape.depth + 1
    if not isinstance(levels, Sequence) or len(levels) != n:
        raise ParameterError(f"these measurements need one entry per level ({n}), got {type(levels).__name__}")
    measured = set(plan.measured_levels())
    for level, m in enumerate(levels):
        if (m is None) == (level in measured):
            raise ParameterError(
                f"these measurements lack level {level}, which the plan measures"
                if m is None
                else f"the measurements of level {level} are not the plan's measurements of that level"
            )
    try:
        check_bounds(plan, [getattr(m, "bounds", None) for m in levels], selected=False)
    except (InputError, AttributeError, TypeError) as exc:
        raise ParameterError(f"these measurements' K per node is not their plan's: {exc}") from None
    for level, m in enumerate(levels):
        if m is not None:
            _check_level(plan, level, m)
    source = plan.k_source_level()
    for level in plan.k_levels() if source is not None else ():
        expected = plan.bounds_from_hg(level, levels[source].ptr, levels[source].values)
        if not np.array_equal(levels[level].bounds, expected):
            raise ParameterError(
                f"the K per node of level {level} is not the one its plan's from-hg rule gives from level {source}"
            )


def _law(noise) -> str:
    """A noise law in words: the double-geometric scale, or the discrete Gaussian's σ²."""
    if isinstance(noise, GaussianNoise):
        return f"discrete Gaussian σ² {float(noise.sigma2):g}"
    return f"double-geometric scale {noise!r}"


def _check_level(plan: Plan, level: int, m: object) -> None:
    where = f"the measurements of level {level}"
    method = plan.level_method(level)
    if getattr(m, "level", None) != level:
        raise ParameterError(f"{where} are not the plan's measurements of that level")
    if m.method != method.name or m.noise != plan.level_noise(level):
        raise ParameterError(
            f"{where} are {m.method!r} with noise {_law(m.noise)}; "
            f"the plan has {method.name!r} with noise {_law(plan.level_noise(level))}"
        )
    ptr, values = np.asarray(m.ptr), np.asarray(m.values)
    if values.ndim != 1 or (values.dtype.kind not in "iuf"):
        raise ParameterError(f"{where} must be one vector of numbers, got {values.dtype} of shape {values.shape}")
    if values.dtype.kind == "f":
        if not np.isfinite(values).all():
            raise ParameterError(f"{where} hold NaN or infinite values: noisy answers are whole numbers")
        if (values != np.round(values)).any():
            raise ParameterError(f"{where} hold fractions: noisy answers are whole numbers")
    # Integers by their extremes, not through a float copy of every answer (121M at the blocks).
    low, high = (values.min(), values.max()) if values.size else (0, 0)
    if max(-float(low), float(high)) > MAX_NOISY_VALUE:
        raise ParameterError(f"{where} hold a value beyond ±2**53 ({np.abs(values).max():.3g}): not a noisy answer")
    n_nodes = plan.shape.n_nodes(level)
    if ptr.dtype.kind not in "iu" or ptr.shape != (n_nodes + 1,) or ptr[0] != 0 or ptr[-1] != values.size:
        raise ParameterError(f"{where} need {n_nodes + 1} offsets from 0 to {values.size} (one node each)")
    bounds = None if m.bounds is None else np.asarray(m.bounds)
    if bounds is not None and bounds.shape != (n_nodes,):
        raise ParameterError(f"{where} need one K per node")
    expected = node_cells(plan, level, bounds)
    got = np.diff(ptr)
    if not np.array_equal(got, expected):
        k = int(np.flatnonzero(got != expected)[0])
        raise ParameterError(
            f"{where} have {int(got[k])} cells for node {k}, but its {method.name} query has {int(expected[k])}"
        )


def consistency_problem(plan: Plan, levels: Sequence, across_levels: bool = True) -> str | None:
    """What breaks the release's invariants, or None: counts ≥ 0, every node's G, parents = Σ children.

    ``across_levels`` False checks each node alone (a plan whose consistency is ``"none"``).
    """
    shape = plan.shape
    for level, runs in enumerate(levels):
        if runs.counts.dtype.kind not in "iu" or runs.sizes.dtype.kind not in "iu":
            return f"sizes or counts of level {level} are not whole numbers"
        if (runs.counts.size and runs.counts.min() < 0) or (runs.sizes.size and runs.sizes.min() < 0):
            return f"a negative size or count at level {level}"
        groups, public = runs.groups(), shape.group_counts(level)
        if len(groups) != len(public):
            return f"level {level} has {len(groups)} nodes, its plan {len(public)}"
        if not np.array_equal(groups, public):
            k = int(np.flatnonzero(groups != public)[0])
            return f"node {k} of level {level} has {int(groups[k])} groups, not its public G"
    if not across_levels:
        return None
    for level in range(1, shape.depth + 1):
        if not _sums_children(levels[level - 1], levels[level], shape.parent_index(level)):
            return f"a node of level {level - 1} is not the sum of its children"
    return None


def _is_csr(runs) -> bool:
    """Whether ``runs.ptr`` runs from 0 to the number of runs without going back (compiled code reads by it)."""
    ptr = runs.ptr
    return bool(ptr[0] == 0 and ptr[-1] == runs.sizes.size == runs.counts.size and (ptr[1:] >= ptr[:-1]).all())


def _sums_children(above, below, parent: np.ndarray) -> bool:
    """Whether every run of ``above`` is the sum of its node's children's runs of that size (``parent``: the
    parent of every node of ``below``), as :func:`~cocoviz.core.runs.aggregate_runs` of the children would give it.

    Compiled, without sorting the children's runs (:mod:`cocoviz.release._verify_kernels`), when the parent level's runs
    are what :class:`~cocoviz.core.runs.LevelRuns` promises (sizes strictly increasing within a node, counts > 0);
    otherwise the children are aggregated and compared.
    """
    sizes, counts, ptr = above.sizes, above.counts, above.ptr
    inner = ptr[1:-1]
    rising = sizes[1:] > sizes[:-1]
    rising[inner[(inner > 0) & (inner < sizes.size)] - 1] = True  # a node's first run may lie below the last's
    if rising.all() and counts.min(initial=1) > 0 and _is_csr(above) and _is_csr(below):
        from cocoviz.release._verify_kernels import sums_children

        # One type for every array, so one compiled (and cached) specialisation serves every level.
        wide = [np.asarray(a).astype(np.int64, copy=False) for a in (below.ptr, below.sizes, below.counts, parent)]
        return sums_children(*(a.astype(np.int64, copy=False) for a in (ptr, sizes, counts)), *wide)
    summed = aggregate_runs(parent[below.node_ids()], below.sizes, below.counts, above.n_nodes)
    return (
        np.array_equal(summed.ptr, above.ptr)
        and np.array_equal(summed.sizes, above.sizes)
        and np.array_equal(summed.counts, above.counts)
    )


def signing_key(key: object) -> bytes:
    """The data holder's key as bytes (text is UTF-8); at least :data:`MIN_KEY_BYTES` bytes."""
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, (bytes, bytearray)):
        raise ParameterError(f"a signing key must be bytes or text, got {type(key).__name__}")
    if len(key) < MIN_KEY_BYTES:
        raise ParameterError(
            f"a signing key needs at least {MIN_KEY_BYTES} bytes (e.g. secrets.token_bytes(32)), got {len(key)}"
        )
    return bytes(key)


_RUN_COLUMNS = ("level", "node", "size", "count")


def signature(key: bytes, meta: Mapping, columns: Mapping[str, np.ndarray], names: Sequence[str] = _RUN_COLUMNS) -> str:
    """HMAC-SHA256, hex, of the metadata (canonical JSON, signature left out) and the columns ``names``
    (a release's four run columns by default; a noisy-measurement file's level, node and value)."""
    mac = hmac.new(key, digestmod=hashlib.sha256)
    body = {k: v for k, v in meta.items() if k != "signature"}
    mac.update(json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True).encode())
    for name in names:
        mac.update(name.encode() + _column_bytes(columns[name]))
    return mac.hexdigest()


def _column_bytes(values: np.ndarray | None) -> bytes:
    """What the signature reads of one column: its length and its values as little-endian int64 (text: every
    value's UTF-8 length, then the bytes; real numbers: tagged, as little-endian float32, the width they are
    stored in); an absent column (a level without K) is marked as such."""
    if values is None:
        return b"absent"
    if values.dtype.kind == "f":
        values = np.ascontiguousarray(values, dtype="<f4")
        return b"float32" + values.size.to_bytes(8, "little") + values.tobytes()
    if values.dtype == object:
        encoded = [str(v).encode() for v in values]
        lengths = np.array([len(e) for e in encoded], "<i8")
        return len(encoded).to_bytes(8, "little") + lengths.tobytes() + b"".join(encoded)
    values = np.ascontiguousarray(values, dtype="<i8")
    return values.size.to_bytes(8, "little") + values.tobytes()


def check_signature(
    key: bytes, meta: Mapping, columns: Mapping[str, np.ndarray], names: Sequence[str] = _RUN_COLUMNS
) -> None:
    """Refuse a file without a signature, or whose signature is not ``key``'s over what it holds."""
    stored = meta.get("signature")
    if not isinstance(stored, Mapping) or stored.get("algorithm") != SIGNATURE_ALGORITHM:
        raise InputError(f"it carries no {SIGNATURE_ALGORITHM} signature, and a key was given")
    value = stored.get("value")
    if not isinstance(value, str) or not hmac.compare_digest(value, signature(key, meta, columns, names)):
        raise InputError("its signature does not match: the file was changed after it was signed, or the key differs")
