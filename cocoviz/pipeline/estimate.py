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

from cocoviz.accuracy.intervals.bands import measurement_bands
from cocoviz.consistency import LevelEstimates
from cocoviz.core.memory import check_plan
from cocoviz.errors import ParameterError
from cocoviz.measure.measurements import LevelMeasurement, Opened, measure_level, measure_levels, open_measurement
from cocoviz.measure.schedule import check_workers
from cocoviz.methods.whole_level import CHUNK_CELLS  # noqa: F401 - tests patch it here (the step reads whole_level's)
from cocoviz.pipeline.level_step import estimate_level
from cocoviz.plan import METHODS, Plan
from cocoviz.plan.options import OPTIONS
from cocoviz.release.post_process import fitted_on_parent, release_of
from cocoviz.release.release import Release

__all__ = ["estimate", "estimate_level", "compile_kernels", "LevelSources"]


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
    seed, while holding only one batch's noisy answers at a time (per thread).  The walk is the
    two steps': plan (:meth:`~cocoviz.plan.Plan.build`), measure (the walk of
    :func:`~cocoviz.measure.measurements.measure_levels`, each level taken from :class:`LevelSources`:
    memoised, on Dask, or measured and fitted at once by :func:`cocoviz.pipeline.level_step.estimate_level`),
    post-process and release (:func:`~cocoviz.release.post_process.release_of`).

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
    progress : called as ``progress(done, total)`` with the levels measured so far (e.g. a progress bar;
        a level fitted on its parent's release, or from-hg's source, is fitted after); never changes the result
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
    if level_cache is not None and not isinstance(level_cache, MutableMapping):
        raise ParameterError(f"level_cache must be a mapping (e.g. a dict) or None, got {type(level_cache).__name__}")
    if progress is not None and not callable(progress):
        raise ParameterError(f"progress must be a function progress(done, total) or None, got {progress!r}")
    source = plan.k_source_level()  # from-hg: that Hg level is measured whole, its answers give K below
    check_plan(plan, streamed=source is None)
    # measure: the noise of every level, each kept as its estimates (or, to be fitted later, its answers)
    opened = open_measurement(
        plan, tree, seed=seed, rng=rng, sampler=sampler, secure=secure, ledger=ledger, dataset=dataset
    )
    memoised = not opened.sampler.secure and rng is None and seed is not None and source is None
    sources = LevelSources(plan, tree, opened, workers=workers, memo=level_cache if memoised else None, client=client)
    fits = measure_levels(plan, tree, opened, sources.take, workers=workers, progress=progress)
    # post-process: the fits still to do (from-hg's source, levels fitted on their parent's release), consistency
    bands = [
        measurement_bands(f) if b is None and isinstance(f, LevelMeasurement) else b
        for f, b in zip(fits, sources.bands)
    ]
    return release_of(
        plan, fits, opened.budget, bounds=opened.bounds, bands=bands, workers=workers, stated=stated,
        fitted=sources.fitted,
    )  # fmt: skip


class LevelSources:
    """Where :func:`estimate` takes a measured level's estimates from: its memo, Dask, or the level step here.

    :meth:`take` is the ``take`` of :func:`~cocoviz.measure.measurements.measure_levels`.  In order:

    * **memoised**: the ``level_cache`` entry of the level's key (level, noise, method, p, K, seed; with the
      prior of Hcp levels, and under the parent prior the keys of the levels above, the merge and the
      consistency), with its bands;
    * a level fitted on its parent's release (:func:`~cocoviz.release.post_process.fitted_on_parent`) is
      measured whole (its fit comes in post-processing, once the level above is consistent);
    * **Dask**: with a ``client``, the levels below the states, measured and fitted per state subtree on
      the workers (:func:`~cocoviz.pipeline.distributed.estimate_subtrees`), all in one go the first time one is
      asked for once K is known for every level (after from-hg's source); they carry no bands;
    * **local**: the fused level step (:func:`~cocoviz.pipeline.level_step.estimate_level`), at most a batch's
      noisy answers held per thread.

    Noise is keyed by (seed, level, node, cell), so every source gives the same estimates, seed for seed.
    """

    def __init__(self, plan: Plan, tree, opened: Opened, *, workers: int | None, memo, client) -> None:
        self.plan, self.tree, self.sampler, self.workers = plan, tree, opened.sampler, workers
        self.memo, self.client, self._bounds = memo, client, opened.bounds
        self.bands: list = [None] * (plan.shape.depth + 1)
        self.keys: dict[int, tuple] = {}
        self._remote: dict | None = None

    def take(self, level: int, bounds: np.ndarray | None) -> LevelEstimates | LevelMeasurement:
        """Level ``level``'s estimates (or its measurement, if fitted on its parent's release); its bands into
        :attr:`bands`."""
        plan = self.plan
        key = self._key(level)
        if key is not None:
            # One lookup (the mapping may be shared by threads): a level's estimates with its bands.
            hit, self.bands[level] = self.memo.get(key) or (None, None)
            if hit is not None:
                return hit
        if fitted_on_parent(plan, level):
            measured = measure_level(plan, self.tree, level, self.sampler, self.workers, bounds)
            self.bands[level] = measurement_bands(measured)
            return measured
        remote = self._remote_levels(level)
        if level in remote:
            estimates = remote[level]
        else:
            found: list = []
            estimates = estimate_level(plan, self.tree, level, self.sampler, bounds, self.workers, bands_out=found)
            self.bands[level] = found[0]
        self.fitted(level, estimates)
        return estimates

    def fitted(self, level: int, estimates: LevelEstimates) -> None:
        """Memoise a level's estimates with its bands (a level measured whole: once post-processing fits it)."""
        key = self.keys.get(level)
        if key is not None:
            self.memo[key] = (estimates, self.bands[level])

    def _key(self, level: int) -> tuple | None:
        """The memo key of ``level`` (None without a memo); the keys are made in level order."""
        if self.memo is None:
            return None
        plan, method = self.plan, self.plan.level_method(level)
        k = (plan.max_size, plan.k_select, plan.k_epsilon, plan.k_beta) if method.needs_k else None
        key = (level, plan.level_noise(level), method.name, plan.ps[level], k, self.sampler.entropy)
        if method.name == "Hcp":
            above = tuple(self.keys[lvl] for lvl in sorted(self.keys))
            upstream = (plan.merge, plan.consistency, above) if plan.prior.kind == "parent" else None
            key += (plan.prior.key(), upstream)
        self.keys[level] = key
        return key

    def _remote_levels(self, level: int) -> dict[int, LevelEstimates]:
        """Dask's estimates of the levels still to take (asked once, when K is known for them all), or {}."""
        if self.client is None:
            return {}
        if self._remote is None:
            source = self.plan.k_source_level()
            if source is not None and level < source:
                return {}  # K of the levels below the source is not known yet: this level is fitted here
            from cocoviz.pipeline.distributed import estimate_subtrees

            done = tuple(range(level))  # taken already (from-hg's source among them)
            self._remote = estimate_subtrees(self.plan, self.tree, self.sampler, self._bounds, self.client, skip=done)
        return self._remote


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
