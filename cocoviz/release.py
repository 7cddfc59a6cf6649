"""End to end: noisy per-node estimates, consistency, and the released histograms.

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> persons = pd.DataFrame({"group": [1, 1, 1, 1, 2, 2, 3, 4], "region": list("aaaabbab")})
>>> tree = Hierarchy.from_persons(persons, group="group", levels=["region"])
>>> release = estimate(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0)
>>> release.is_consistent(), release.budget.total
(True, 2.0)
"""

from __future__ import annotations

import math
import os
from collections.abc import MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cocoviz.consistency import MERGES, LevelEstimates, mean_consistency, top_down
from cocoviz.estimators import (
    DEFAULT_P,
    HC_SENSITIVITY,
    METHODS,
    GroupEstimate,
    estimate_hc,
    estimate_hg,
    estimate_naive,
)
from cocoviz.hierarchy import Hierarchy, LevelRuns, aggregate_runs, node_label
from cocoviz.mechanisms import (
    Budget,
    FastSampler,
    GeometricMechanism,
    SecureSampler,
    check_epsilon,
    double_geometric_variance,
)
from cocoviz.metrics import emd_level, error_by_size, omniscient_emd

__all__ = ["estimate", "Release", "CONSISTENCY", "DEFAULT_MAX_SIZE", "select_mix", "Selection",
           "mean_consistency_baseline", "compile_kernels"]

CONSISTENCY = ("top-down", "bottom-up", "none")

#: The paper's conservative public bound on group size.
DEFAULT_MAX_SIZE = 100_000

# Levels with at least this many nodes are estimated on _WORKERS threads.
_PARALLEL_NODES = 8
_WORKERS = min(2, os.cpu_count() or 1)


@dataclass(frozen=True)
class Plan:
    """Validated parameters of a release: one ε, method and p per level, root first."""

    epsilons: tuple[float, ...]
    methods: tuple[str, ...]
    ps: tuple[int | None, ...]
    max_size: int
    consistency: str
    merge: str


def _per_level(value, n_levels: int, name: str) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ValueError(f"{name} must be a sequence with one entry per level ({n_levels}), got {value!r}")
    if len(value) != n_levels:
        raise ValueError(f"{name} has {len(value)} entries but the hierarchy has {n_levels} levels "
                         f"(the root and {n_levels - 1} below it): give one per level")
    return list(value)


def _plan(tree: Hierarchy, epsilons, methods, p, max_size, consistency, merge) -> Plan:
    n_levels = tree.depth + 1
    eps = [check_epsilon(e, f"ε of level {k}") for k, e in enumerate(_per_level(epsilons, n_levels, "epsilons"))]
    methods = _per_level(methods, n_levels, "methods")
    for k, m in enumerate(methods):
        if m not in METHODS:
            raise ValueError(f"method of level {k} must be one of {METHODS}, got {m!r}")
    if p is None or isinstance(p, (int, np.integer)):
        ps = [DEFAULT_P[m] if p is None else int(p) for m in methods]
    else:
        ps = [DEFAULT_P[m] if q is None else q for m, q in zip(methods, _per_level(p, n_levels, "p"))]
    for k, (m, q) in enumerate(zip(methods, ps)):
        if m != "naive" and q not in (1, 2):
            raise ValueError(f"p of level {k} must be 1 or 2, got {q!r}")
    if max_size is None:
        max_size = DEFAULT_MAX_SIZE
    if isinstance(max_size, bool) or not isinstance(max_size, (int, np.integer)) or max_size < 1:
        raise ValueError(f"max_size K must be a whole number >= 1, got {max_size!r}")
    if max_size < tree.max_size and any(m != "Hg" for m in methods):
        # Truncation would silently move the largest groups down to K; refuse
        # instead.  (This check reads the private data: in a formal release,
        # K must come from public knowledge.)
        raise ValueError(f"max_size K = {max_size:,} is below the largest group size in the data "
                         f"({tree.max_size:,}); choose K >= {tree.max_size:,}")
    if consistency not in CONSISTENCY:
        raise ValueError(f"consistency must be one of {CONSISTENCY}, got {consistency!r}")
    if merge not in MERGES:
        raise ValueError(f"merge must be one of {MERGES}, got {merge!r}")
    return Plan(tuple(eps), tuple(methods), tuple(ps), int(max_size), consistency, merge)


def _estimate_level(tree: Hierarchy, level: int, *, epsilon: float, method: str, p: int | None,
                    max_size: int, mechanism: GeometricMechanism) -> LevelEstimates:
    """Independent estimates of every node of one level (parallel composition).

    Nodes run on two threads: the heavy parts (numba isotonic regression,
    numpy sampling) release the GIL, and each node draws from its own
    spawned stream, so the result does not depend on scheduling.
    """
    runs = tree.runs(level)
    paths = tree.nodes(level)
    mechanisms = mechanism.spawn(len(paths))

    def one(k: int) -> GroupEstimate:
        sizes, counts = runs.node(k)

        def measure(values, *, sensitivity, quantity):
            return mechanisms[k].measure(values, sensitivity=sensitivity, epsilon=epsilon, quantity=quantity,
                                         level=level, node=paths[k])

        if method == "Hc":
            return estimate_hc(sizes, counts, epsilon=epsilon, max_size=max_size, p=p, measure=measure)
        if method == "Hg":
            return estimate_hg(sizes, counts, epsilon=epsilon, p=p, measure=measure)
        return estimate_naive(sizes, counts, epsilon=epsilon, max_size=max_size, measure=measure)

    if len(paths) < _PARALLEL_NODES or mechanism.sampler.secure:
        return LevelEstimates.from_nodes([one(k) for k in range(len(paths))])
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        return LevelEstimates.from_nodes(list(pool.map(one, range(len(paths)))))


def estimate(tree: Hierarchy, *, epsilons: Sequence[float], methods: Sequence[str],
             p: int | Sequence[int | None] | None = None, max_size: int | None = None,
             consistency: str = "top-down", merge: str = "weighted", seed: int | None = None,
             secure: bool = False, rng: np.random.Generator | None = None,
             level_cache: MutableMapping | None = None) -> Release:
    """Release private count-of-counts histograms for every node of ``tree``.

    Parameters
    ----------
    tree : Hierarchy
    epsilons : one ε > 0 per level, root first; the total spent is their sum
    methods : one of ``"Hc"``, ``"Hg"``, ``"naive"`` per level
    p : isotonic loss (1 or 2), for all levels or per level; None takes
        the defaults (Hc: 1, Hg: 2)
    max_size : public bound K on group size for Hc and naive (default 100,000)
    consistency : ``"top-down"`` (the paper's Algorithm 1), ``"bottom-up"``
        (the whole budget, Σ ε, on the leaves with the leaf method; parents
        are sums) or ``"none"`` (independent per-node estimates)
    merge : ``"weighted"`` (inverse variance) or ``"average"``
    seed : seed of the fast sampler's generator (ignored when ``secure``)
    secure : draw the noise with the exact, cryptographically secure sampler
    rng : a ``numpy.random.Generator`` to use instead of ``seed``
    level_cache : a mapping the caller keeps for one ``tree`` (e.g. a dict), or None.
        With the fast sampler and a ``seed``, every level's independent estimates and
        measurements are stored in it, keyed by all that determines them (level, ε,
        method, p, K, seed and the level's position in the noise streams), and taken
        from it when a later call asks for the same: changing one level's ε or method,
        the merge or the consistency recomputes only what changed, and the release is
        the one an uncached call gives.  Never used with ``secure`` or ``rng``.

    Returns
    -------
    Release
    """
    plan = _plan(tree, epsilons, methods, p, max_size, consistency, merge)
    if secure:
        sampler = SecureSampler()
    else:
        sampler = FastSampler(rng if rng is not None else np.random.default_rng(seed))
    mechanism = GeometricMechanism(sampler)
    parents = [tree.parents(level) if level else None for level in range(tree.depth + 1)]

    cacheable = level_cache is not None and not secure and rng is None and seed is not None

    def level_estimate(level, epsilon):
        method, p_level, n_nodes = plan.methods[level], plan.ps[level], len(tree.nodes(level))
        if not cacheable:
            return _estimate_level(tree, level, epsilon=epsilon, method=method, p=p_level, max_size=plan.max_size,
                                   mechanism=mechanism)
        # The level's noise comes from the next n_nodes spawned streams: their position is part of the key.
        position = sampler.rng.bit_generator.seed_seq.n_children_spawned
        key = (level, float(epsilon), method, p_level, plan.max_size if method != "Hg" else None, int(seed), position)
        hit = level_cache.get(key)  # one lookup: the caller may share the mapping between threads
        if hit is not None:
            estimates, measurements = hit
            mechanism.spawn(n_nodes)  # keep the streams of the levels after this one where they were
            mechanism.record(measurements)
            return estimates
        before = len(mechanism.measurements)
        estimates = _estimate_level(tree, level, epsilon=epsilon, method=method, p=p_level, max_size=plan.max_size,
                                    mechanism=mechanism)
        level_cache[key] = (estimates, mechanism.measurements[before:])
        return estimates

    if plan.consistency == "top-down":
        estimates = [level_estimate(level, plan.epsilons[level]) for level in range(tree.depth + 1)]
        levels = top_down(estimates, parents, plan.merge)
    elif plan.consistency == "none":
        levels = [level_estimate(level, plan.epsilons[level]).runs() for level in range(tree.depth + 1)]
    else:
        leaves = level_estimate(tree.depth, math.fsum(plan.epsilons)).runs()
        levels = [leaves]
        for level in range(tree.depth, 0, -1):
            below = levels[0]
            levels.insert(0, aggregate_runs(parents[level][below.node_ids()], below.sizes, below.counts,
                                            len(tree.nodes(level - 1))))
    return Release(tree, levels, mechanism.budget(), plan, sampler.name)


def compile_kernels() -> None:
    """Compile every numba kernel of the engine, or load it from numba's disk cache.

    The first call in a fresh installation takes seconds; later processes load the
    kernels in milliseconds.  Call it before timing releases, so a timing does not
    include a one-off compilation.
    """
    from cocoviz.isotonic import isotonic_l1

    tree = Hierarchy.from_counts(pd.DataFrame({"region": ["a", "a", "b"], "size": [1, 2, 3], "count": [2, 1, 1]}),
                                 size="size", count="count", levels=["region"])
    for method in METHODS:
        for p in (1, 2) if DEFAULT_P[method] else (None,):
            estimate(tree, epsilons=[1.0, 1.0], methods=[method, method], p=p, max_size=8, seed=0)
    isotonic_l1(np.array([0.5, 0.25]))  # the heap, for inputs the counting path does not take


class Release:
    """Private count-of-counts histograms of every node, with their budget report.

    Attributes
    ----------
    tree : the Hierarchy it was computed from (holds the true data: never publish it)
    budget : :class:`~cocoviz.mechanisms.Budget`
    plan : the validated parameters
    sampler : the name of the noise sampler that ran
    """

    def __init__(self, tree: Hierarchy, levels: list[LevelRuns], budget: Budget, plan: Plan, sampler: str):
        self.tree = tree
        self._levels = levels
        self.budget = budget
        self.plan = plan
        self.sampler = sampler
        self._errors: pd.DataFrame | None = None  # computed on first use; a release never changes

    def runs(self, level: int) -> LevelRuns:
        """The released ``(size, count)`` runs of every node at ``level``."""
        return self._levels[level]

    def histogram(self, node: Sequence[str]) -> np.ndarray:
        """Private H of ``node``, from size 0 to its largest estimated size."""
        level, k = self.tree.locate(node)
        sizes, counts = self._levels[level].node(k)
        h = np.zeros(int(sizes[-1]) + 1 if sizes.size else 1, np.int64)
        h[sizes] = counts
        return h

    def children_sum(self, node: Sequence[str]) -> np.ndarray | None:
        """Σ of the private H of ``node``'s children (None for a leaf), padded to the node's length.

        Equal to :meth:`histogram` wherever the release is consistent.
        """
        children = self.tree.children(node)
        if not children:
            return None
        hists = [self.histogram(c) for c in children]
        n = max(len(self.histogram(node)), *(len(h) for h in hists))
        total = np.zeros(n, np.int64)
        for h in hists:
            total[:len(h)] += h
        return total

    def error_by_size(self, node: Sequence[str]) -> np.ndarray:
        """``|Ĥc[s] - Hc[s]|`` for every size s of ``node``; sums to its emd."""
        return error_by_size(self.tree.histogram(node), self.histogram(node))

    def errors(self) -> pd.DataFrame:
        """emd of every node: columns level, node, groups, emd, epsilon, omniscient.

        ``omniscient`` is the expected emd G/ε of the omniscient reference at
        the ε spent on that level (for bottom-up, the total at every level).
        Computed once; every call returns a copy of its own.
        """
        if self._errors is not None:
            return self._errors.copy()
        frames = []
        per_level = self.budget.per_level()
        for level in range(self.tree.depth + 1):
            truth = self.tree.runs(level)
            groups = truth.groups()
            eps = per_level.get(level, sum(per_level.values()))
            frames.append(pd.DataFrame({
                "level": level,
                "node": [node_label(p) for p in self.tree.nodes(level)],
                "groups": groups,
                "emd": emd_level(truth, self._levels[level]),
                "epsilon": eps,
                "omniscient": omniscient_emd(groups, eps),
            }))
        self._errors = pd.concat(frames, ignore_index=True)
        return self._errors.copy()

    def level_errors(self) -> pd.DataFrame:
        """Nodes, mean and maximum emd per level, with the mean omniscient reference."""
        errors = self.errors()
        return (errors.groupby("level").agg(nodes=("node", "size"), mean_emd=("emd", "mean"),
                                            max_emd=("emd", "max"), omniscient=("omniscient", "mean"))
                .reset_index())

    def is_consistent(self) -> bool:
        """True when every released parent equals the sum of its children, G is kept everywhere,
        and all counts are non-negative integers."""
        for level in range(self.tree.depth + 1):
            runs = self._levels[level]
            if (runs.counts < 0).any() or (runs.sizes < 0).any():
                return False
            if not np.array_equal(runs.groups(), self.tree.runs(level).groups()):
                return False
        for level in range(1, self.tree.depth + 1):
            below = self._levels[level]
            summed = aggregate_runs(self.tree.parents(level)[below.node_ids()], below.sizes, below.counts,
                                    len(self.tree.nodes(level - 1)))
            above = self._levels[level - 1]
            if not (np.array_equal(summed.ptr, above.ptr) and np.array_equal(summed.sizes, above.sizes)
                    and np.array_equal(summed.counts, above.counts)):
                return False
        return True

    def to_frame(self, *, include_true: bool = True) -> pd.DataFrame:
        """Long table: level, node, size, private count (and true count), one row per
        (node, size) where either is non-zero."""
        frames = []
        for level in range(self.tree.depth + 1):
            released, truth = self._levels[level], self.tree.runs(level)
            node = np.concatenate([released.node_ids(), truth.node_ids()])
            size = np.concatenate([released.sizes, truth.sizes])
            private = np.concatenate([released.counts, np.zeros_like(truth.counts)])
            true = np.concatenate([np.zeros_like(released.counts), truth.counts])
            frame = (pd.DataFrame({"node_id": node, "size": size, "private_count": private, "true_count": true})
                     .groupby(["node_id", "size"], sort=True).sum().reset_index())
            labels = np.array([node_label(p) for p in self.tree.nodes(level)], dtype=object)
            frame.insert(0, "node", labels[frame.pop("node_id").to_numpy()])
            frame.insert(0, "level", level)
            frames.append(frame)
        out = pd.concat(frames, ignore_index=True)
        return out if include_true else out.drop(columns="true_count")

    def parameters(self) -> dict:
        """The parameters of this release, JSON-ready."""
        return {
            "levels": ["(root)", *self.tree.levels],
            "epsilons": list(self.plan.epsilons),
            "methods": list(self.plan.methods),
            "p": list(self.plan.ps),
            "max_size": self.plan.max_size,
            "consistency": self.plan.consistency,
            "merge": self.plan.merge,
            "sampler": self.sampler,
            "epsilon_spent": self.budget.total,
        }


@dataclass(frozen=True)
class Selection:
    """Outcome of a private algorithm selection: the chosen release and what it all cost.

    ``budget`` composes every candidate's spending and the selection's
    sequentially; ``releases`` holds every candidate (only the chosen one may
    be published).
    """

    release: Release
    releases: tuple[Release, ...]
    candidates: tuple[tuple[str, ...], ...]
    noisy_scores: np.ndarray
    chosen: int
    budget: Budget


def select_mix(tree: Hierarchy, candidates: Sequence[Sequence[str]], *, epsilons: Sequence[float],
               epsilon_select: float, seed: int | None = None, secure: bool = False, **options) -> Selection:
    """Chaudhuri et al.'s private algorithm selection over method mixes.

    Every candidate mix is run with the full per-level budget; each is scored
    by its total emd over all nodes plus noise, and the lowest noisy score
    wins.  One person changes a node's emd by at most 1 and lies in one node
    per level, so a score has sensitivity L = number of levels; the
    report-noisy-min adds noise of scale 2L/ε_select.  By sequential
    composition the total cost is ``(number of candidates) · Σ ε + ε_select``.
    """
    epsilon_select = check_epsilon(epsilon_select, "ε of the selection")
    candidates = tuple(tuple(c) for c in candidates)
    if not candidates:
        raise ValueError("give at least one candidate method mix")
    rng = np.random.default_rng(seed)
    releases = tuple(estimate(tree, epsilons=epsilons, methods=mix, rng=rng, secure=secure, **options)
                     for mix in candidates)
    scores = np.array([r.errors()["emd"].sum() for r in releases], np.int64)
    mechanism = GeometricMechanism(SecureSampler() if secure else FastSampler(rng))
    n_levels = tree.depth + 1
    noisy = mechanism.measure(scores, sensitivity=2 * n_levels, epsilon=epsilon_select, level=None, node=(),
                              quantity=f"candidate scores, total emd (Δ = {n_levels}; noisy min needs 2Δ)")
    chosen = int(np.argmin(noisy))
    budget = mechanism.budget()
    budget.composition = "sequential: every candidate with its full budget, then the selection"
    budget.extra = {f"candidate {k + 1}: {' x '.join(mix)}": r.budget.total
                    for k, (mix, r) in enumerate(zip(candidates, releases))}
    return Selection(releases[chosen], releases, candidates, noisy, chosen, budget)


def mean_consistency_baseline(tree: Hierarchy, *, epsilons: Sequence[float], max_size: int,
                              seed: int | None = None) -> tuple[pd.DataFrame, Budget]:
    """Hay et al.'s mean-consistency on noisy Hc at every node: the real-valued baseline.

    Every node's Hc[0..K-1] gets double-geometric noise (Δ = 1, ε of its
    level); :func:`~cocoviz.consistency.mean_consistency` makes them
    consistent.  The result sums exactly, but differencing it back to H gives
    fractional and negative counts — what the matching approach avoids.

    Returns
    -------
    frame : one row per node: level, node, groups, emd (Σ|Ĥc - Hc|, real),
        negative_cells (sizes with Ĥ < 0), most_negative (smallest Ĥ)
    budget : the budget report of the noisy measurements
    """
    plan = _plan(tree, epsilons, ["Hc"] * (tree.depth + 1), None, max_size, "top-down", "weighted")
    mechanism = GeometricMechanism(FastSampler(np.random.default_rng(seed)))
    noisy, variances, truths = [], [], []
    for level in range(tree.depth + 1):
        runs = tree.runs(level)
        truth = np.zeros((runs.n_nodes, plan.max_size + 1), np.int64)
        np.add.at(truth, (runs.node_ids(), runs.sizes), runs.counts)
        truth = np.cumsum(truth, axis=1)
        truths.append(truth)
        eps = plan.epsilons[level]
        noisy.append(np.stack([
            mechanism.measure(truth[k, :-1], sensitivity=HC_SENSITIVITY, epsilon=eps,
                              quantity=f"Hc[0..{plan.max_size - 1}]", level=level, node=path)
            for k, path in enumerate(tree.nodes(level))]))
        variances.append(double_geometric_variance(HC_SENSITIVITY / eps))
    parents = [None] + [tree.parents(level) for level in range(1, tree.depth + 1)]
    consistent = mean_consistency(noisy, variances, parents)
    frames = []
    for level, (hc_hat, truth) in enumerate(zip(consistent, truths)):
        h_hat = np.diff(hc_hat, axis=1, prepend=0.0)
        frames.append(pd.DataFrame({
            "level": level,
            "node": [node_label(p) for p in tree.nodes(level)],
            "groups": truth[:, -1],
            "emd": np.abs(hc_hat - truth[:, :-1]).sum(axis=1),
            "negative_cells": (h_hat < -1e-9).sum(axis=1),
            "most_negative": h_hat.min(axis=1),
        }))
    return pd.concat(frames, ignore_index=True), mechanism.budget()
