"""One call from a private tree to a release: plan, measure, post-process.

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> groups = pd.DataFrame({"group": [1, 2, 3, 4], "region": list("abab"), "size": [4, 2, 1, 1]})
>>> tree = Hierarchy.from_groups(groups, size="size", levels=["region"])
>>> release = estimate(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hg"], max_size=10, seed=0)
>>> release.is_consistent(), release.budget.total
(True, 2.0)
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping, Sequence

import numpy as np

from cocoviz.consistency import LevelEstimates
from cocoviz.errors import ParameterError
from cocoviz.intervals import LevelBands
from cocoviz.measure import (
    answer_node,
    answer_nodes,
    batch_threads,
    check_inputs,
    check_workers,
    choose_bounds,
    draw_nodes,
    level_batches,
    level_bounds,
    level_threads,
    map_nodes,
    open_sampler,
)
from cocoviz.memory import check_plan
from cocoviz.plan import METHODS, Plan
from cocoviz.postprocess import level_fitter, node_fitter, release_levels
from cocoviz.release import Release
from cocoviz.whole_level import CHUNK_CELLS, stream_hg_node

__all__ = ["estimate", "estimate_level", "compile_kernels"]


def estimate(
    tree,
    *,
    epsilons: Sequence[float] | None = None,
    methods: Sequence[str],
    p: int | Sequence[int | None] | None = None,
    max_size: int | None = None,
    consistency: str = "top-down",
    merge: str = "weighted",
    k_select: str = "public",
    k_epsilon: float | None = None,
    k_beta: float | None = None,
    seed: int | Sequence[int] | None = None,
    secure: bool = False,
    sampler: str | None = None,
    rng: np.random.Generator | None = None,
    workers: int | None = None,
    level_cache: MutableMapping | None = None,
    prior: object = None,
    client=None,
    progress: Callable[[int, int], None] | None = None,
    rhos: Sequence[float] | None = None,
    delta: float | None = None,
) -> Release:
    """Release private count-of-counts histograms for every node of ``tree``.

    The one-call form of ``post_process(plan, measure(plan, tree, ...))`` with
    ``plan = Plan.build(tree, ...)``; it gives the same release, seed for
    seed, while holding only one node's noisy answer at a time (per thread).

    Parameters
    ----------
    tree : Hierarchy
    epsilons : one ε per level, root first; the total spent is their sum
    rhos, delta : instead of ``epsilons``, one ρ per level: the release is ρ-zCDP with discrete Gaussian
        noise (:meth:`~cocoviz.plan.Plan.build`), read as (ε, δ)-DP at ``delta`` (default 1e-10)
    methods : one :data:`~cocoviz.plan.METHODS` name per level (``"Hc"``, ``"Hg"``, ``"naive"``)
    p : isotonic loss (1 or 2), for all levels or per level; None takes the defaults (Hc: 1, Hg: 2)
    max_size : public bound K on group size for Hc and naive (default 100,000)
    consistency : ``"top-down"`` (the paper's Algorithm 1), ``"bottom-up"`` (the whole
        budget, Σ ε, on the leaves; parents are sums) or ``"none"`` (independent estimates)
    merge : ``"weighted"`` (inverse variance) or ``"average"``
    k_select, k_epsilon, k_beta : how K is chosen (``"public"``: ``max_size``; ``"noisy-max"``,
        ``"noisy-max-per-node"`` or ``"svt"``: privately with ε_K = ``k_epsilon``, ``max_size`` the
        ceiling; see :mod:`cocoviz.truncation`)
    seed : keys the fast sampler's noise streams by (seed, level, node)
    secure, sampler : ``secure=True`` or ``sampler="secure"`` draws the noise with the exact,
        cryptographically secure sampler (for release); ``sampler="opendp"`` with OpenDP's
        (the same law, slower); the default ``"fast"`` sampler is for exploration only
    rng : a ``numpy.random.Generator`` to draw the fast sampler's seed from, instead of ``seed``
    workers : threads per level (None: 2 for levels of 8 nodes or more); never changes the result
    level_cache : a mapping the caller keeps for one ``tree`` (e.g. a dict), or None.  With the
        fast sampler and a ``seed``, each measured level's fitted estimates are memoised in it,
        keyed by all they depend on (level, noise, method, p, K, seed): changing one level's ε or
        method, the merge or the consistency recomputes only what changed, and the release is
        the uncached one.  Never used with the secure sampler or ``rng``.  The key holds the
        prior of Hcp levels too, and with the parent prior the keys of the levels above, the
        merge and the consistency (a level's fit then depends on them).
    client : a ``dask.distributed.Client``: the Hc and Hg levels below the states are measured and
        fitted per state subtree on its workers (:mod:`cocoviz.distributed`); the root, the states and
        consistency stay here.  A seeded release is bit-identical to the local one.
    progress : called as ``progress(done, total)`` with the measured levels fitted so far (e.g. a
        progress bar); never changes the result
    prior : the public prior of Hcp levels (:class:`~cocoviz.hcp_prior.Prior`: ``"uniform"``,
        ``"parent"``, an array over sizes 0..K, a ``size``/``count`` table, or one per node); no ε

    Returns
    -------
    Release
    """
    plan = Plan.build(
        tree,
        epsilons=epsilons,
        methods=methods,
        p=p,
        max_size=max_size,
        consistency=consistency,
        merge=merge,
        k_select=k_select,
        k_epsilon=k_epsilon,
        k_beta=k_beta,
        prior=prior,
        rhos=rhos,
        delta=delta,
    )
    workers = check_workers(workers)
    if level_cache is not None and not isinstance(level_cache, MutableMapping):
        raise ParameterError(f"level_cache must be a mapping (e.g. a dict) or None, got {type(level_cache).__name__}")
    if progress is not None and not callable(progress):
        raise ParameterError(f"progress must be a function progress(done, total) or None, got {progress!r}")
    check_plan(plan, streamed=True)
    noise = open_sampler(seed, rng, sampler, secure)
    budget = plan.cost().with_sampler(noise.name, check_inputs(plan, tree, noise))
    bounds = choose_bounds(plan, tree, noise)
    memo = level_cache if (level_cache is not None and not noise.secure and rng is None and seed is not None) else None
    distributed = {}
    if client is not None:
        from cocoviz.distributed import estimate_subtrees

        distributed = estimate_subtrees(plan, tree, noise, bounds, client)
    keys: list[tuple] = []
    bands: list = [None] * (plan.shape.depth + 1)
    n_measured = len(plan.measured_levels())
    if progress is not None:
        progress(0, n_measured)

    def fit(level: int, parent) -> object:
        method = plan.level_method(level)
        hit = key = None
        if memo is not None:
            k = (plan.max_size, plan.k_select, plan.k_epsilon, plan.k_beta) if method.needs_k else None
            key = (level, plan.level_noise(level), method.name, plan.ps[level], k, noise.entropy)
            if method.name == "Hcp":
                upstream = (plan.merge, plan.consistency, tuple(keys)) if plan.prior.kind == "parent" else None
                key += (plan.prior.key(), upstream)
            # One lookup (the mapping may be shared by threads): a level's estimates with its bands.
            hit, bands[level] = memo.get(key) or (None, None)
        keys.append(key)
        if hit is None and method.level_fit is not None:
            if level in distributed:
                hit = distributed[level]
            else:
                found: list = []
                hit = estimate_level(plan, tree, level, noise, bounds[level], workers, bands_out=found)
                bands[level] = found[0]
            if memo is not None:
                memo[key] = (hit, bands[level])
        elif hit is None:
            # Measure and fit node by node: a level's noisy answers are never all held at once.
            answer = answer_node(plan, tree, level, noise, bounds[level])
            fit = node_fitter(plan, level, bounds[level], parent)
            n_nodes = len(plan.shape.paths[level])
            threads = level_threads(plan, level, bounds[level], workers, noise.secure)
            hit = LevelEstimates.from_nodes(map_nodes(lambda k: fit(k, answer(k)), n_nodes, threads))
            if memo is not None:
                memo[key] = (hit, None)
        if progress is not None:
            progress(len(keys), n_measured)
        return hit

    return Release(plan, release_levels(plan, fit), budget, bounds=bounds, bands=bands)


def estimate_level(
    plan: Plan,
    tree,
    level: int,
    sampler,
    bounds: np.ndarray | None,
    workers: int | None = None,
    nodes: tuple[int, int] | None = None,
    bands_out: list | None = None,
) -> LevelEstimates:
    """A Hc or Hg level's estimates (of its nodes ``lo..hi-1`` when ``nodes`` is given), measured and
    fitted batch by batch: at most a batch's noisy answers per thread are held at once, and an Hg
    node larger than a batch is streamed (L2).  Reads private data: the fused form of
    ``measure`` then ``post_process`` for one level.  ``bands_out``, a list, receives the level's
    :class:`~cocoviz.intervals.LevelBands` (the envelopes of its noisy answers, for intervals)."""
    bounds = level_bounds(plan, level, bounds)
    batches = level_batches(plan, level, bounds, nodes)
    fit = level_fitter(plan, level)
    method, eps = plan.level_method(level), plan.level_epsilon(level)
    groups = plan.shape.group_counts(level)

    envelopes: list = [None] * len(batches)

    def run(b: int) -> LevelEstimates:
        lo, hi = batches[b]
        if method.name == "Hg" and plan.ps[level] == 2 and hi - lo == 1 and groups[lo] > CHUNK_CELLS:
            scale = plan.level_noise(level)
            chunks: list = []

            def draw(values: np.ndarray, offset: int) -> np.ndarray:
                noisy = draw_nodes(sampler, values, np.array([0, len(values)]), scale, level, lo, offset)
                chunks.append((offset, LevelBands.of(method.name, noisy, np.array([0, len(noisy)]))))
                return noisy

            threads = batch_threads(2, workers, sampler.secure)  # the chunks' keyed draws are independent
            estimates = stream_hg_node(*tree.runs(level).node(lo), draw, epsilon=eps, threads=threads)
            envelopes[b] = LevelBands.of_chunks(method.name, chunks)
            return estimates
        noisy, ptr = answer_nodes(plan, tree, level, sampler, lo, hi, bounds)
        envelopes[b] = LevelBands.of(method.name, noisy, ptr)
        return fit(lo, hi, noisy, ptr)

    threads = batch_threads(len(batches), workers, sampler.secure)
    estimates = LevelEstimates.concat(map_nodes(run, len(batches), threads))
    if bands_out is not None:
        bands_out.append(LevelBands.concat(envelopes) if envelopes else None)
    return estimates


def compile_kernels() -> None:
    """Compile every numba kernel of the engine, or load it from numba's disk cache.

    The first call in a fresh installation takes seconds; later processes load the
    kernels in milliseconds.  Call it before timing releases, so a timing does not
    include a one-off compilation.
    """
    import pandas as pd

    from cocoviz.hierarchy import Hierarchy
    from cocoviz.isotonic import isotonic_l1

    tree = Hierarchy.from_counts(
        pd.DataFrame({"region": ["a", "a", "b"], "size": [1, 2, 3], "count": [2, 1, 1]}),
        size="size",
        count="count",
        levels=["region"],
    )
    for name, method in METHODS.items():
        for p in (1, 2) if method.default_p else (None,):
            estimate(tree, epsilons=[1.0, 1.0], methods=[name, name], p=p, max_size=8, seed=0)
    isotonic_l1(np.array([0.5, 0.25]))  # the heap, for inputs the counting path does not take
