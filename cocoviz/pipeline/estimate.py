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

from cocoviz.accuracy.intervals.bands import LevelBands
from cocoviz.core.memory import check_plan
from cocoviz.errors import ParameterError
from cocoviz.measure.measurements import bounds_from_source, measure, measure_level, open_measurement
from cocoviz.measure.schedule import check_workers
from cocoviz.methods.whole_level import CHUNK_CELLS  # noqa: F401 - tests patch it here (the step reads whole_level's)
from cocoviz.pipeline.level_step import estimate_level
from cocoviz.plan import METHODS, Plan
from cocoviz.plan.options import OPTIONS
from cocoviz.release.post_process import fit_level, post_process, release_levels
from cocoviz.release.release import Release

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
    k_beta_scope: str = "node",
    ledger=None,
    dataset: str | None = None,
    stated: bool = False,
    total_epsilon: float | None = None,
    total_rho: float | None = None,
    split: str | Sequence[float] | None = None,
) -> Release:
    """Release private count-of-counts histograms for every node of ``tree``.

    The one-call form of ``post_process(plan, measure(plan, tree, ...))`` with
    ``plan = Plan.build(tree, ...)``; it gives the same release, seed for
    seed, while holding only one batch's noisy answers at a time (per thread): each
    measured level goes through :func:`cocoviz.pipeline.level_step.estimate_level`.

    Parameters
    ----------
    tree : Hierarchy
    epsilons : one ε per level, root first; the total spent is their sum
    rhos, delta : instead of ``epsilons``, one ρ per level: the release is ρ-zCDP with discrete Gaussian
        noise (:meth:`~cocoviz.plan.Plan.build`), read as (ε, δ)-DP at ``delta`` (default 1e-10)
    total_epsilon, total_rho, split : instead, a total ε (or ρ) shared over the levels by ``split``
        (``"equal"``, the default; ``"leaves"``; or one weight per level), as :meth:`~cocoviz.plan.Plan.build`
    methods : one :data:`~cocoviz.plan.METHODS` name per level (``"Hc"``, ``"Hg"``, ``"naive"``)
    p : isotonic loss (1 or 2), for all levels or per level; None takes the defaults (Hc: 1, Hg: 2)
    max_size : public bound K on group size for Hc and naive (default 100,000)
    consistency : ``"top-down"`` (the paper's Algorithm 1), ``"bottom-up"`` (the whole
        budget, Σ ε, on the leaves; parents are sums) or ``"none"`` (independent estimates)
    merge : ``"weighted"`` (inverse variance) or ``"average"``
    k_select, k_epsilon, k_beta : how K is chosen (``"public"``: ``max_size``; ``"noisy-max"``,
        ``"noisy-max-per-node"`` or ``"svt"``: privately with ε_K = ``k_epsilon``, ``max_size`` the
        ceiling; ``"from-hg"``: from an Hg level's noisy answers, no ε; see :mod:`cocoviz.privacy.truncation`)
    k_beta_scope : ``"node"`` (``k_beta`` bounds each K̂'s truncation) or ``"release"`` (the whole release's)
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
    client : a ``dask.distributed.Client``: the levels below the states (but Hcp levels with the parent
        prior) are measured and fitted per state subtree on its workers (:mod:`cocoviz.pipeline.distributed`); the
        root, the states and consistency stay here.  A seeded release is bit-identical to the local one.
        With ``k_select="from-hg"`` the source Hg level is measured here first, once and whole (its noisy
        answers give K to the levels below, as :func:`cocoviz.measure` does), the levels below on the
        workers.
    progress : called as ``progress(done, total)`` with the measured levels fitted so far (e.g. a
        progress bar); never changes the result
    prior : the public prior of Hcp levels (:class:`~cocoviz.methods.hcp_prior.Prior`: ``"uniform"``,
        ``"parent"``, an array over sizes 0..K, a ``size``/``count`` table, or one per node); no ε
    ledger, dataset : where a secure draw is recorded before its noise, and the identity of its persons
        (see :func:`~cocoviz.measure.measurements.measure`); the default ledger unless ``ledger`` is given,
        ``ledger=False`` to skip it (said in the budget's notes)
    stated : also compute the experimental stated errors (:meth:`~cocoviz.Release.stated_errors`); off by
        default: they cost time and never change the released numbers

    Returns
    -------
    Release
    """
    given = locals()
    plan = Plan.build(tree, **{name: given[name] for name in OPTIONS})
    workers = check_workers(workers)
    source = plan.k_source_level() if plan.k_select == "from-hg" else None
    if source is not None and client is None:
        # Two phases: the Hg level's noisy answers give K to the levels below, so they are measured whole.
        measurements = measure(
            plan,
            tree,
            seed=seed,
            rng=rng,
            sampler=sampler,
            secure=secure,
            workers=workers,
            ledger=ledger,
            dataset=dataset,
        )
        return post_process(plan, measurements, workers=workers, stated=stated)
    if level_cache is not None and not isinstance(level_cache, MutableMapping):
        raise ParameterError(f"level_cache must be a mapping (e.g. a dict) or None, got {type(level_cache).__name__}")
    if progress is not None and not callable(progress):
        raise ParameterError(f"progress must be a function progress(done, total) or None, got {progress!r}")
    check_plan(plan, streamed=source is None)
    opened = open_measurement(
        plan, tree, seed=seed, rng=rng, sampler=sampler, secure=secure, ledger=ledger, dataset=dataset
    )
    try:
        release = _estimate_opened(
            plan, tree, opened, level_cache, seed, rng, source, client, workers, progress, stated
        )
    except BaseException as exc:
        opened.draw.fail(exc)
        raise
    opened.draw.complete()
    return release


def _estimate_opened(plan, tree, opened, level_cache, seed, rng, source, client, workers, progress, stated) -> Release:
    """The release of an opened measurement (its noise drawn level by level, fitted as it comes)."""
    noise, bounds = opened.sampler, opened.bounds
    memo = level_cache if (level_cache is not None and not noise.secure and rng is None and seed is not None) else None
    own_source = None
    if source is not None:
        # from-hg on a cluster, in two phases as measure() does: the Hg level measured here, once and whole;
        # its noisy answers give K to the levels below (post-processing, no ε), and its own fit is the same
        # answers' (never a second draw, which would spend its ε twice).
        memo = None
        own_source = measure_level(plan, tree, source, noise, workers, bounds[source])
        bounds_from_source(plan, own_source, bounds)
    distributed = {}
    if client is not None:
        from cocoviz.pipeline.distributed import estimate_subtrees

        distributed = estimate_subtrees(plan, tree, noise, bounds, client, skip=(source,))
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
        if level == source:
            hit = fit_level(plan, own_source, workers, parent)
            bands[level] = LevelBands.of(method.name, own_source.values, own_source.ptr)
        elif hit is None:
            if level in distributed:
                hit = distributed[level]
            else:
                found: list = []
                hit = estimate_level(plan, tree, level, noise, bounds[level], workers, parent=parent, bands_out=found)
                bands[level] = found[0]
            if memo is not None:
                memo[key] = (hit, bands[level])
        if progress is not None:
            progress(len(keys), n_measured)
        return hit

    levels, statements = release_levels(plan, fit, stated=stated, bounds=bounds)
    return Release(plan, levels, opened.budget, bounds=bounds, bands=bands, stated=statements if stated else None)


def compile_kernels() -> None:
    """Compile every numba kernel of the engine, or load it from numba's disk cache.

    The first call in a fresh installation takes seconds; later processes load the
    kernels in milliseconds.  Call it before timing releases, so a timing does not
    include a one-off compilation.
    """
    import pandas as pd

    from cocoviz.hierarchy import Hierarchy
    from cocoviz.methods.isotonic import isotonic_l1

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
