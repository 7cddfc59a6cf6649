"""The one step that reads private data: noisy measurements of every planned node.

:func:`measure` runs a :class:`~cocoviz.plan.Plan` on a private
:class:`~cocoviz.hierarchy.Hierarchy`: for every measured node it computes the
method's query (Hc, Hg or H) from the node's true groups and adds
double-geometric noise of scale Δ/ε.  What it returns, :class:`Measurements`,
holds only noisy answers and public facts, so everything after it
(:func:`cocoviz.post_process`) is post-processing.

Noise is keyed by (seed, level, node): node ``k`` of level ``l`` draws from the
fast sampler's stream ``(l, k, 0)``, so threads, node order, caches or a
different machine never change a seeded result.

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> from cocoviz.plan import Plan
>>> tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}),
...                              size="size", levels=["region"])
>>> plan = Plan.build(tree, epsilons=[1.0, 1.0], methods=["Hg", "Hc"], max_size=8)
>>> measurements = measure(plan, tree, seed=0)
>>> measurements.levels[0].node(0).size, measurements.levels[1].node(1).size  # G cells, then K cells
(4, 8)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from cocoviz.core.memory import check_plan
from cocoviz.errors import InputError, ParameterError, PrivacyError
from cocoviz.measure.recording import Draw, begin_draw
from cocoviz.measure.schedule import (
    check_workers,
    has_level_kernels,
    map_level,
    map_nodes,
)
from cocoviz.methods.whole_level import join_segments
from cocoviz.plan import Plan, Shape
from cocoviz.privacy.budget import Budget
from cocoviz.privacy.noise import FastSampler, GaussianNoise, Sampler, SecureSampler, make_sampler
from cocoviz.privacy.truncation import noisy_max_bound, noisy_max_offset, svt_bound, svt_grid

#: The public surface; the other functions here are the stage's steps, which pipeline/, release/ and evaluate/ call.
__all__ = [
    "Measurements",
    "LevelMeasurement",
    "measure",
    "measure_levels",
    "open_measurement",
    "open_sampler",
    "GROUPS_FROM_DATA",
]

#: The budget note of a release whose G and regions came from private rows.
GROUPS_FROM_DATA = (
    "G per region and the region list were taken from the data (a persons table without a "
    "public groups table): not private, exploration only"
)


@dataclass(frozen=True, eq=False)
class LevelMeasurement:
    """The noisy answers of every node of one level: node ``k``'s are ``values[ptr[k]:ptr[k + 1]]``."""

    level: int
    method: str
    noise: float | GaussianNoise  # the noise law drawn: a double-geometric scale, or the discrete Gaussian's σ²
    ptr: np.ndarray
    values: np.ndarray
    bounds: np.ndarray | None = None  # K per node, for the methods that need one (a DP output when private)

    def node(self, k: int) -> np.ndarray:
        return self.values[self.ptr[k] : self.ptr[k + 1]]

    @property
    def n_nodes(self) -> int:
        return len(self.ptr) - 1


@dataclass(frozen=True, eq=False)
class Measurements:
    """What :func:`measure` returns: noisy answers per measured level, the plan and the budget spent.

    ``levels[l]`` is None for a level the plan does not measure (bottom-up's upper levels).
    """

    plan: Plan
    levels: tuple[LevelMeasurement | None, ...]
    budget: Budget


def open_sampler(
    seed=None, rng: np.random.Generator | None = None, sampler: str | None = None, secure: bool = False
) -> Sampler:
    """The sampler a call asks for: ``secure=True`` is ``sampler="secure"``; ``rng`` seeds the fast one.

    ``sampler`` is one of :data:`~cocoviz.privacy.noise.SAMPLERS`: ``"fast"`` (the default),
    ``"secure"`` or ``"opendp"`` (both for release; ``secure=True`` accepts either).
    A ``numpy.random.Generator`` passed as ``rng`` gives the fast sampler a
    128-bit seed drawn from it, so experiments that hand out one generator per
    trial stay reproducible.
    """
    name = sampler or ("secure" if secure else "fast")
    if secure and name == "fast":
        raise ParameterError(f"secure=True asks for a secure sampler, but sampler={sampler!r}")
    if rng is not None:
        if seed is not None:
            raise ParameterError("give a seed or an rng, not both")
        if not isinstance(rng, np.random.Generator):
            raise ParameterError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        seed = tuple(int(x) for x in rng.integers(0, 2**32, size=4))
    return make_sampler(name, seed)


def tree_groups_public(tree) -> bool:
    """Whether ``tree`` says its G and regions come from a public groups table (asked of the tree, never the plan).

    A tree that does not say so (no ``public_groups`` attribute, or anything but True) is taken as not public.
    """
    return getattr(tree, "public_groups", False) is True


def plan_notes(plan: Plan) -> tuple[str, ...]:
    """The budget notes a release of ``plan`` carries: G from the data (exploration), and how K was bounded.

    Pure in the plan's public facts (its shape, checked against the tree by :func:`check_inputs`),
    so a saved release's notes can be checked against its plan.
    """
    notes = [] if plan.shape.public_groups else [GROUPS_FROM_DATA]
    if not plan.k_levels():
        return tuple(notes)
    if plan.k_select == "from-hg" or (plan.k_beta_scope == "release" and plan.private_k()):
        notes.append(plan.k_note())
    elif plan.k_select != "public":
        notes.append(
            f"K chosen privately ({plan.k_select}, ε_K = {plan.k_epsilon:g}, ceiling "
            f"{plan.max_size:,}): groups larger than K̂ count as size K̂ (Hc and naive)"
        )
    else:
        notes.append(f"groups larger than the public K = {plan.max_size:,} count as size K (Hc and naive)")
    return tuple(notes)


def check_inputs(plan: Plan, tree, sampler: FastSampler | SecureSampler) -> tuple[str, ...]:
    """Refuse a secure release on non-public G, or a tree the plan was not built for; return budget notes.

    Whether G is public is asked of the tree (:func:`tree_groups_public`), never of the plan, and
    the plan's shape must be the tree's in full, that flag included
    (:meth:`~cocoviz.core.shape.Shape.same_as`): a hand-made shape claiming public G does not let a
    secure release read G from private rows.

    The check of K against the largest group reads private data: it runs only
    for exploration (fast sampler), where it names the largest size.  A secure
    release never refuses on it (a refusal would leak the maximum): groups
    above the public K are counted at K, as in the paper.
    """
    if not isinstance(plan, Plan):
        raise ParameterError(f"need a Plan (Plan.build), got {type(plan).__name__}")
    if sampler.secure and not tree_groups_public(tree):
        raise PrivacyError(
            "a secure release needs public G per region: this tree was built from a persons "
            "table alone, so G and the region list come from private rows (adding one person "
            "in a new group changes them). Give the public groups table (group -> region) too."
        )
    differs = plan.shape.difference(Shape.of(tree))
    if differs is not None:
        raise InputError(f"the plan was built for another hierarchy: {differs}")
    if plan.k_levels() and plan.k_select == "public" and not sampler.secure and tree.max_size > plan.max_size:
        raise ParameterError(
            f"max_size K = {plan.max_size:,} is below the largest group size in the data "
            f"({tree.max_size:,}; read from the private data, exploration only): choose "
            f"K >= {tree.max_size:,}"
        )
    return plan_notes(plan)


def _largest(runs, k: int) -> int:
    sizes = runs.node(k)[0]
    return int(sizes[-1]) if sizes.size else 0


def choose_bounds(plan: Plan, tree, sampler: FastSampler | SecureSampler) -> list[np.ndarray | None]:
    """K per node of every measured level that needs one: the public K, or K̂ chosen with ε_K.

    A private K reads the data only here, inside its own noisy measurement
    (:mod:`cocoviz.privacy.truncation`); its noise comes from the streams (level, 0, 1) — one
    vector per level, node k's at index k, so it never depends on threads — and (0, 0, 2),
    apart from the levels' own (level, node, 0).
    """
    bounds: list[np.ndarray | None] = [None] * (plan.shape.depth + 1)
    levels = plan.k_levels()
    if not levels or plan.k_select == "from-hg":  # from-hg: from a measured Hg level, in measure()
        return bounds
    eps, ceiling = plan.k_epsilon, plan.max_size
    if plan.k_select == "public":
        single = ceiling
    elif plan.k_select == "noisy-max":
        noise = int(sampler.draw(np.zeros(1, np.int64), 1 / eps, (0, 0, 1))[0])
        beta = plan.k_node_beta()
        single = noisy_max_bound(_largest(tree.runs(0), 0), epsilon=eps, beta=beta, ceiling=ceiling, noise=noise)
    elif plan.k_select == "svt":
        sizes, counts = tree.runs(0).node(0)
        grid = svt_grid(ceiling)
        at_most = np.concatenate([[0], np.cumsum(counts)])[np.searchsorted(sizes, grid, side="right")]
        rho = int(sampler.draw(np.zeros(1, np.int64), 2 / eps, (0, 0, 1))[0])
        nu = sampler.draw(np.zeros(len(grid), np.int64), 4 / eps, (0, 0, 2))
        single = svt_bound(at_most, int(counts.sum()), grid, threshold_noise=rho, query_noise=nu)
    else:  # noisy-max-per-node: a level's K noise is one keyed vector, node k's at index k
        for level in levels:
            runs = tree.runs(level)
            largest = np.zeros(runs.n_nodes, np.int64)
            has_groups = np.diff(runs.ptr) > 0
            largest[has_groups] = runs.sizes[runs.ptr[1:][has_groups] - 1]
            noise = sampler.draw(np.zeros(runs.n_nodes, np.int64), 1 / eps, (level, 0, 1))
            bound = np.clip(largest + noise + noisy_max_offset(eps, plan.k_node_beta()), 1, ceiling)
            bound[plan.shape.group_counts(level) == 0] = 1  # G = 0 is public: nothing to bound, no K̂ cells
            bounds[level] = bound
        return bounds
    for level in levels:
        bounds[level] = np.full(len(plan.shape.paths[level]), single, np.int64)
    return bounds


def answer_node(
    plan: Plan, tree, level: int, sampler: FastSampler | SecureSampler, bounds: np.ndarray | None = None
) -> Callable[[int], np.ndarray]:
    """``answer(k)``: node ``k`` of ``level``'s noisy answer, the method's query plus keyed noise of scale Δ/ε.

    ``bounds`` is K per node (from :func:`choose_bounds`); None uses the plan's public K.
    """
    method, scale = plan.level_method(level), plan.level_noise(level)
    runs = tree.runs(level)

    def answer(k: int) -> np.ndarray:
        sizes, counts = runs.node(k)
        bound = (plan.max_size if bounds is None else int(bounds[k])) if method.needs_k else None
        return sampler.draw(method.query(sizes, counts, bound), scale, (level, k, 0))

    return answer


def level_bounds(plan: Plan, level: int, bounds: np.ndarray | None) -> np.ndarray | None:
    """K per node of ``level`` for the methods that need one: ``bounds``, or the plan's public K."""
    if not plan.level_method(level).needs_k:
        return None
    return np.full(len(plan.shape.paths[level]), plan.max_size, np.int64) if bounds is None else bounds


def draw_nodes(
    sampler: FastSampler | SecureSampler,
    values: np.ndarray,
    ptr: np.ndarray,
    scale: float,
    level: int,
    first_node: int,
    offset: int = 0,
) -> np.ndarray:
    """Noise on the answers of consecutive nodes, in place: segment ``s`` is node ``first_node + s``.

    The fast sampler keys each cell by (level, node, cell), so this equals node-by-node draws;
    a secure sampler has no keys and draws them all at once.
    """
    if sampler.secure:
        return sampler.draw(values, scale, (level, first_node, 0))
    return sampler.draw_level(values, ptr, scale, level, 0, first_node, offset, out=values)


def answer_nodes(
    plan: Plan, tree, level: int, sampler: FastSampler | SecureSampler, lo: int, hi: int, bounds: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy answers of nodes ``lo..hi-1`` of a level whose method has whole-level kernels, with their ``ptr``.

    ``bounds`` is K per node (:func:`level_bounds`); the noise scale is Δ/ε.
    """
    method = plan.level_method(level)
    values, ptr = method.level_query(tree.runs(level), lo, hi, bounds)
    return draw_nodes(sampler, values, ptr, plan.level_noise(level), level, lo), ptr


def measure_nodes(
    plan: Plan,
    tree,
    level: int,
    sampler: FastSampler | SecureSampler,
    lo: int,
    hi: int,
    bounds: np.ndarray | None,
    threads: int | None = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy answers of nodes ``lo..hi-1`` of ``level`` (a batch of :func:`cocoviz.measure.schedule.map_level`), with
    their ``ptr``: node ``lo + s``'s are ``values[ptr[s]:ptr[s + 1]]``.

    Hc and Hg batches are one query and one draw; the other methods go node by node, on ``threads``
    threads.  ``bounds`` is K per node of the level (:func:`level_bounds`); the noise scale is Δ/ε.
    """
    if has_level_kernels(plan.level_method(level)):
        return answer_nodes(plan, tree, level, sampler, lo, hi, bounds)
    answer = answer_node(plan, tree, level, sampler, bounds)
    answers = map_nodes(lambda s: answer(lo + s), hi - lo, threads)
    ptr = np.zeros(len(answers) + 1, np.int64)
    np.cumsum([a.size for a in answers], out=ptr[1:])
    return (np.concatenate(answers) if answers else np.zeros(0, np.int64)), ptr


def measure_level(
    plan: Plan,
    tree,
    level: int,
    sampler: FastSampler | SecureSampler,
    workers: int | None = None,
    bounds: np.ndarray | None = None,
) -> LevelMeasurement:
    """Noisy answers of every node of ``level`` (parallel composition over its disjoint nodes), kept together.

    ``bounds`` is K per node (from :func:`choose_bounds`); None uses the plan's public K.  The level is
    measured batch by batch (:func:`cocoviz.measure.schedule.map_level`, :func:`measure_nodes`).
    """
    bounds = level_bounds(plan, level, bounds)

    def batch(lo: int, hi: int, threads: int | None) -> tuple[np.ndarray, np.ndarray]:
        return measure_nodes(plan, tree, level, sampler, lo, hi, bounds, threads)

    values, ptr = join_segments(map_level(plan, level, bounds, batch, workers=workers, secure=sampler.secure))
    return LevelMeasurement(level, plan.level_method(level).name, plan.level_noise(level), ptr, values, bounds)


def bounds_from_source(plan: Plan, source: LevelMeasurement, bounds: list) -> None:
    """``k_select="from-hg"``: K per node of every level that needs K, from the noisy answers of the Hg level
    ``source`` above it (post-processing of that level's answers, no ε), written into ``bounds`` (one entry per
    level).  :func:`measure_levels` takes K this way, for :func:`measure` and :func:`cocoviz.estimate` alike."""
    for level in plan.k_levels():
        bounds[level] = plan.bounds_from_hg(level, source.ptr, source.values)


class Opened(NamedTuple):
    """What a measurement opens with, before any level is measured (:func:`open_measurement`)."""

    sampler: Sampler
    budget: Budget  # the plan's cost, with the sampler's name and the release's notes
    bounds: list[np.ndarray | None]  # K per node of every level that needs one (None elsewhere)
    draw: Draw = Draw()  # the ledger entry of a secure draw, to complete or fail when it ends


def open_measurement(
    plan: Plan,
    tree,
    *,
    seed: int | Sequence[int] | None = None,
    rng: np.random.Generator | None = None,
    sampler: str | None = None,
    secure: bool = False,
    ledger=None,
    dataset: str | None = None,
) -> Opened:
    """The sampler, the budget and K per node of a measurement of ``plan`` on ``tree``, its inputs checked.

    The start of :func:`measure` and of :func:`cocoviz.estimate`: the sampler asked for
    (:func:`open_sampler`), the refusals of :func:`check_inputs`, a secure draw recorded in the privacy
    ledger (:func:`cocoviz.measure.ledger.begin_draw`: ``ledger``, ``dataset``), and K chosen
    (:func:`choose_bounds`; with a private K, its noise is drawn here, after the record, before any level's).
    """
    noise = open_sampler(seed, rng, sampler, secure)
    notes = check_inputs(plan, tree, noise)
    budget = plan.cost().with_sampler(noise.name, notes)
    draw, more = begin_draw(ledger, plan, budget, secure=noise.secure, dataset=dataset)
    budget = budget.with_sampler(noise.name, more) if more else budget
    try:
        bounds = choose_bounds(plan, tree, noise)
    except BaseException as exc:
        draw.fail(exc)
        raise
    return Opened(noise, budget, bounds, draw)


def measure(
    plan: Plan,
    tree,
    *,
    seed: int | Sequence[int] | None = None,
    rng: np.random.Generator | None = None,
    sampler: str | None = None,
    secure: bool = False,
    workers: int | None = None,
    ledger=None,
    dataset: str | None = None,
) -> Measurements:
    """Noisy measurements of every node the plan measures: the only function that reads private data.

    Parameters
    ----------
    plan : Plan
    tree : Hierarchy
        The private data; its public shape must be the plan's.
    seed : keys the fast sampler's streams (a whole number or a sequence of them)
    rng : a ``numpy.random.Generator`` to draw the fast sampler's seed from, instead of ``seed``
    sampler : ``"fast"`` (default; exploration only, not for release), ``"secure"`` (release: exact,
        vectorised, AES-CTR keyed by the OS) or ``"opendp"`` (release: OpenDP's sampler, the reference)
    secure : the same as ``sampler="secure"``
    workers : threads per level (None: 2 for levels of 8 nodes or more); never changes the result
    ledger : where a secure draw is recorded before its noise: None (the default ledger,
        ``$COCOVIZ_LEDGER`` or the user's data folder), a path or :class:`~cocoviz.measure.ledger.Ledger`,
        a :class:`~cocoviz.measure.ledger.Recorded` (the caller recorded it), or False (not recorded;
        the budget's notes say so)
    dataset : the ledger identity of the persons (:func:`~cocoviz.measure.identity.source_identity`);
        default: the hierarchy's public shape

    Raises
    ------
    PrivacyError
        A secure release of a tree whose G was taken from private rows.
    ParameterError
        (Exploration only) K below the largest group size.
    """
    if not isinstance(plan, Plan):
        raise ParameterError(f"measure needs a Plan (Plan.build), got {type(plan).__name__}")
    workers = check_workers(workers)
    check_plan(plan, streamed=False)
    opened = open_measurement(
        plan, tree, seed=seed, rng=rng, sampler=sampler, secure=secure, ledger=ledger, dataset=dataset
    )
    return Measurements(plan, tuple(measure_levels(plan, tree, opened, workers=workers)), opened.budget)


def measure_levels(
    plan: Plan,
    tree,
    opened: Opened,
    take: Callable[[int, np.ndarray | None], object] | None = None,
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list:
    """Every level ``plan`` measures, in level order, as ``take(level, bounds)`` gives it: the walk of
    :func:`measure` and of :func:`cocoviz.estimate`, which differ only in what they keep of a level.

    Parameters
    ----------
    plan, tree : the plan and the private data it is measured on
    opened : what :func:`open_measurement` opened (sampler, K per node, the ledger's draw)
    take : ``take(level, bounds)`` with ``bounds`` K per node of the level (None where it needs none);
        None measures the level whole (:func:`measure_level`, a :class:`LevelMeasurement`).
        :func:`cocoviz.estimate` passes one that keeps only a level's estimates.
    workers : threads per level; never changes the result
    progress : called as ``progress(done, total)`` with the levels taken so far (from 0)

    Returns
    -------
    list
        Per level, what ``take`` gave (None for a level the plan does not measure).

    Notes
    -----
    ``k_select="from-hg"``: the source Hg level (:meth:`~cocoviz.plan.Plan.k_source_level`) is always
    measured whole here, in its turn, and its noisy answers give K to the levels below
    (:func:`bounds_from_source`, post-processing, no ε) before any of them is taken.  Levels are taken in
    level order, so a sampler without keys (the secure one) draws in the same order for every caller.  The
    secure draw of ``opened`` is completed when the last level is taken, or failed with what stopped the walk.
    """
    taken: list = [None] * (plan.shape.depth + 1)
    source = plan.k_source_level()  # from-hg: its noisy Hg gives K to the levels below (no ε)
    levels, bounds = plan.measured_levels(), opened.bounds
    if progress is not None:
        progress(0, len(levels))
    try:
        for done, level in enumerate(levels, start=1):
            if take is None or level == source:
                taken[level] = measure_level(plan, tree, level, opened.sampler, workers, bounds[level])
            else:
                taken[level] = take(level, bounds[level])
            if level == source:  # the levels that need K lie below it
                bounds_from_source(plan, taken[level], bounds)
            if progress is not None:
                progress(done, len(levels))
    except BaseException as exc:
        opened.draw.fail(exc)
        raise
    opened.draw.complete()
    return taken
