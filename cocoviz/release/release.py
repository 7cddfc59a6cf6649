"""The published object: private histograms of every node, with the plan and the budget spent.

A :class:`Release` holds no private data — only the released runs, the public
:class:`~cocoviz.plan.Plan` and the :class:`~cocoviz.privacy.budget.Budget` — so all of
it may be published: :meth:`Release.to_frame` for a table, :meth:`Release.save`
and :func:`load_release` for a file (Parquet: the histograms, the shape's nodes
and K per node as columns, the rest of the plan and the budget as JSON in the
file's metadata, :mod:`cocoviz.release.files.release_file`; the round trip is exact).  The
file also keeps the bands :meth:`Release.intervals` reads (:mod:`cocoviz.release.files.band_columns`:
post-processing of the noisy measurements, no ε), so a loaded release states the same
accuracy as the one in memory.  Errors against the truth come from
:func:`cocoviz.evaluate`, never from here.

**A file checks itself.**  :func:`load_release` trusts nothing it reads: the budget must be the
one the plan costs, spent by a known sampler, and the runs must keep every invariant
(:mod:`cocoviz.release.verify`); a file that fails is refused, naming why.  **Signed files**:
``release.save(path, key=k)`` adds an HMAC-SHA256 signature keyed by the data holder's ``k``
(bytes or text, 16 bytes or more, e.g. ``secrets.token_bytes(32)`` kept apart from the files);
``load_release(path, key=k)`` refuses a file whose signature is missing or does not match, so any
edit — even one the checks cannot see, such as a sampler's name — is evident to the holder.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.core.memory import DENSE_AVOID, check_cells
from cocoviz.core.runs import LevelRuns, aggregate_runs
from cocoviz.errors import InputError, ParameterError
from cocoviz.hierarchy import node_label, node_labels
from cocoviz.plan import Plan
from cocoviz.privacy.budget import Budget
from cocoviz.release import verify
from cocoviz.release.files import band_columns, release_file

__all__ = ["Release", "load_release", "RELEASE_FORMAT"]

#: The format tag in a saved release's metadata (format 2: every array a column,
#: :mod:`cocoviz.release.files.release_file`).
RELEASE_FORMAT = "cocoviz-release/2"
#: A format-2 release's fields per level: the shape's (with K), then the runs; a file with bands adds
#: :data:`~cocoviz.release.files.band_columns.BAND_FIELDS`.
_FIELDS = (*release_file.SHAPE_FIELDS, "node", "size", "count")
#: The JSON key saying, per level, whether the file holds its runs' stated variances (a column after the rest).
STATED_KEY = "stated"


class Release:
    """Private count-of-counts histograms of every node, with their plan and budget report.

    Attributes
    ----------
    plan : the public :class:`~cocoviz.plan.Plan` it was computed for
    budget : the :class:`~cocoviz.privacy.budget.Budget` spent: the plan's cost (plus, for a
        selected release, every candidate's and the selection's)
    selection : for a release chosen by :func:`cocoviz.select_mix`, what was chosen among
        what (candidates, chosen index, ε of the selection); otherwise None
    bounds : per level, the bound K of every node where a method needed one (None elsewhere); with a
        private ``k_select`` these are the chosen K̂, differentially private outputs like the histograms
    bands : per level, the envelopes of the Hc or Hg level's noisy answers
        (:class:`~cocoviz.accuracy.intervals.bands.LevelBands`, DP outputs too), which :meth:`intervals` reads; None
        elsewhere.
        Kept by :meth:`save` and read back by :func:`load_release`
    stated : per level, the experimental stated (calibrated) variance of the groups of every released run
        (float32, :meth:`stated_errors`; post-processing, no ε); None where not computed (the default: made
        without ``stated=True``) or not carried (a selection, or a file saved with ``stated=False``)
    """

    def __init__(
        self,
        plan: Plan,
        levels: Sequence[LevelRuns],
        budget: Budget,
        selection: dict | None = None,
        bounds: Sequence[np.ndarray | None] | None = None,
        bands: Sequence | None = None,
        stated: Sequence[np.ndarray | None] | None = None,
    ):
        self.plan = plan
        self._levels = list(levels)
        self.budget = budget
        self.selection = selection
        self.bounds = list(bounds) if bounds is not None else [None] * len(self._levels)
        self.bands = list(bands) if bands is not None else [None] * len(self._levels)
        self.stated = list(stated) if stated else [None] * len(self._levels)

    @property
    def sampler(self) -> str:
        """The name of the noise sampler that ran."""
        return self.budget.sampler or ""

    @property
    def shape(self):
        return self.plan.shape

    def runs(self, level: int) -> LevelRuns:
        """The released ``(size, count)`` runs of every node at ``level``."""
        return self._levels[level]

    def nodes(self, level: int) -> list[tuple[str, ...]]:
        return self.shape.nodes(level)

    def histogram(self, node: Sequence[str]) -> np.ndarray:
        """Private H of ``node``, from size 0 to its largest estimated size."""
        level, k = self.shape.locate(node)
        sizes, counts = self._levels[level].node(k)
        if sizes.size:
            check_cells(int(sizes[-1]) + 1, f"the dense histogram of {node_label(node)}", DENSE_AVOID)
        h = np.zeros(int(sizes[-1]) + 1 if sizes.size else 1, np.int64)
        h[sizes] = counts
        return h

    def children_sum(self, node: Sequence[str]) -> np.ndarray | None:
        """Σ of the private H of ``node``'s children (None for a leaf), padded to the node's length.

        Equal to :meth:`histogram` wherever the release is consistent.
        """
        level, k = self.shape.locate(node)
        if level == self.shape.depth:
            return None
        # One pass over the level's runs, not one histogram per child: a node may have millions of children.
        below = self._levels[level + 1]
        mine = self.shape.parent_index(level + 1)[below.node_ids()] == k
        sizes, counts = below.sizes[mine], below.counts[mine]
        total = np.zeros(max(len(self.histogram(node)), int(sizes.max(initial=0)) + 1), np.int64)
        np.add.at(total, sizes, counts)
        return total

    def persons(self, node: Sequence[str]) -> int:
        """Persons in ``node`` by the release: Σ_j j·Ĥ[j] (post-processing: no ε).

        Consistent up the hierarchy, because the histograms are: a parent's
        total is the sum of its children's wherever :meth:`is_consistent`.
        """
        level, k = self.shape.locate(node)
        sizes, counts = self._levels[level].node(k)
        return int(np.dot(sizes, counts))

    def prefix_persons(self, node: Sequence[str], js: Sequence[int]) -> np.ndarray:
        """P(j) = Σ_{s ≤ j} s·Ĥ[s] for every j in ``js``: persons in groups of size at most j (no ε).

        >>> from cocoviz.plan import Plan, Shape
        >>> plan = Plan.build(Shape((), (((),),), ((),), ((4,),)), epsilons=[1.0], methods=["Hg"])
        >>> release = Release(plan, [LevelRuns(np.array([0, 3]), np.array([1, 2, 4]), np.array([2, 1, 1]))],
        ...                   plan.cost())
        >>> release.prefix_persons((), [1, 2, 3, 4]).tolist(), release.persons(())
        ([2, 4, 4, 8], 8)
        """
        level, k = self.shape.locate(node)
        sizes, counts = self._levels[level].node(k)
        running = np.cumsum(sizes * counts)
        at = np.searchsorted(sizes, np.asarray(js, np.int64), side="right")
        return np.where(at > 0, running[np.maximum(at - 1, 0)], 0).astype(np.int64)

    def intervals(
        self, node: Sequence[str], confidence: float = 0.9, scope: str = "node", measurements=None
    ) -> pd.DataFrame:
        """Simultaneous bounds on ``node``'s true histogram from its own noisy measurement: publishable, no ε.

        One row per size j: ``cumulative_low``/``cumulative_high`` bound Hc[j] (groups of size ≤ j),
        ``count_low``/``count_high`` H[j], ``persons_low``/``persons_high`` the persons in groups of size
        ≤ j, beside the released values.  ``scope="node"``: all of the node's bounds hold together with
        probability ≥ ``confidence``; ``scope="level"``: they hold, with every other node's of the level, all at
        once with probability ≥ ``confidence`` (each node's band at ``confidence^(1/n)`` over the level's ``n``
        independent nodes: :mod:`cocoviz.accuracy.intervals.scope`).  ``attrs`` say which (``scope``,
        ``confidence``, ``node_confidence``); ``attrs["emd_bound"]`` bounds the released histogram's emd to the
        truth.  Levels measured with a band method, of a release that carries its measurements' envelopes
        (:mod:`cocoviz.accuracy.intervals.bands`).  Given the release's ``measurements`` (its noisy answers, from
        :func:`cocoviz.measure` or a noisy-measurement file), an Hg level's band is the multiscale one that uses
        runs of equal sizes (:mod:`cocoviz.accuracy.intervals.multiscale`; ``attrs["band"] == "runs"``).
        """
        from cocoviz.accuracy.intervals.scope import scoped_intervals

        level, k = self.shape.locate(node)
        runs = self._levels[level].node(k)
        return scoped_intervals(self.plan, self.bands, level, k, *runs, confidence, scope, measurements)

    def stated_errors(self, node: Sequence[str]) -> pd.DataFrame:
        """The stated standard error of one group's size, per released size of ``node``: publishable, no ε.

        **Experimental** (:mod:`cocoviz.accuracy.stated.topdown`, its measured limits there): computed only for a
        release made with ``stated=True`` (``estimate``, ``post_process``; ``cocoviz release --stated-errors``).

        One row per released size: ``size``, ``count`` (released groups of that size), ``stated_variance``
        (the calibrated mean squared error of such a group's size, docs/guide/accuracy.md) and ``stated_se``
        (its square root, in members).  Computed from the fitted runs, ε and the plan only — post-processing
        of the noisy measurements, never the truth — so it may be published with the release.  Under
        top-down or bottom-up consistency a node's groups are its leaves' (merged) groups: each size states
        the count-weighted mean of theirs.

        Examples
        --------
        >>> from cocoviz.plan import Plan, Shape
        >>> plan = Plan.build(Shape((), (((),),), ((),), ((4,),)), epsilons=[1.0], methods=["Hg"])
        >>> runs = LevelRuns(np.array([0, 2]), np.array([1, 3]), np.array([3, 1]))
        >>> release = Release(plan, [runs], plan.cost(), stated=[np.array([0.25, 4.0], np.float32)])
        >>> release.stated_errors(()).to_dict("list")["stated_se"]
        [0.5, 2.0]
        """
        level, k = self.shape.locate(node)
        if self.stated[level] is None:
            raise ParameterError(
                f"the stated errors of level {level} were not computed for this release: they are experimental and "
                "computed on request only (estimate(..., stated=True), post_process(..., stated=True), or "
                "cocoviz release --stated-errors); a release chosen by select_mix, or read from a file saved "
                "without them, carries none"
            )
        sizes, counts = self._levels[level].node(k)
        ptr = self._levels[level].ptr
        variance = self.stated[level][ptr[k] : ptr[k + 1]].astype(np.float64)
        return pd.DataFrame(
            {"size": sizes, "count": counts, "stated_variance": variance, "stated_se": np.sqrt(variance)}
        )

    def is_consistent(self) -> bool:
        """True when all counts are non-negative integers, every node keeps its public G, and
        every parent equals the sum of its children."""
        return verify.consistency_problem(self.plan, self._levels) is None

    def to_frame(self) -> pd.DataFrame:
        """The release as a long table: level, node, size, count (one row per released run).

        Everything in it is private output; true values are in :func:`cocoviz.evaluate` only.
        """
        frames = []
        for level, runs in enumerate(self._levels):
            labels = node_labels(self.shape.node_codes, level).array
            frames.append(
                pd.DataFrame(
                    {"level": level, "node": labels.take(runs.node_ids()), "size": runs.sizes, "count": runs.counts}
                )
            )
        return pd.concat(frames, ignore_index=True)

    def parameters(self) -> dict:
        """The public parameters of this release, JSON-ready."""
        plan = self.plan
        return {
            "levels": ["(root)", *plan.shape.levels],
            # Under zCDP a level spends ρ (below), not an ε: no privacy ε per level is stated.
            "epsilons": list(plan.epsilons) if plan.rhos is None else None,
            "methods": list(plan.methods),
            "p": list(plan.ps),
            "max_size": plan.max_size,
            "consistency": plan.consistency,
            "merge": plan.merge,
            "sampler": self.sampler,
            "epsilon_spent": self.budget.total,
            **(
                {
                    "accounting": "zCDP",
                    "rhos": list(plan.rhos),
                    "noise": "discrete Gaussian",
                    "sigma2s": [float(plan.level_noise(k).sigma2) for k in range(len(plan.rhos))],
                    "rho_spent": self.budget.total_rho,
                    "delta": plan.delta,
                    "epsilon_spent_reading": "(ε, δ) reading of rho_spent at delta",
                }
                if plan.rhos is not None
                else {}
            ),
            **(
                {
                    "k_select": plan.k_select,
                    "k_epsilon": plan.k_epsilon,
                    "k_beta": plan.k_beta,
                    "k_beta_scope": plan.k_beta_scope,
                    "k_chosen": self.chosen_bounds(),
                }
                if plan.k_select != "public"
                else {}
            ),
            **({"selection": self.selection} if self.selection else {}),
        }

    def chosen_bounds(self) -> dict[int, list[int]]:
        """K per node of every level that used one, root first (JSON-ready)."""
        return {level: [int(k) for k in b] for level, b in enumerate(self.bounds) if b is not None}

    # ------------------------------------------------------------------ files
    def save(
        self, path: str | os.PathLike, *, key: bytes | str | None = None, bands: bool = True, stated: bool = True
    ) -> None:
        """Write the release to a Parquet file (:mod:`cocoviz.release.files.release_file`, format 2): the runs, the
        shape's
        nodes and K per node as columns, the rest of the plan, the budget and the selection as JSON metadata.

        ``key``: the data holder's secret (bytes or text, 16 bytes or more); the file then carries
        an HMAC-SHA256 signature of everything it holds, which ``load_release(path, key=key)`` checks.

        ``bands``: also write the envelopes of the noisy measurements that :meth:`intervals` reads (where the
        release carries them; :mod:`cocoviz.release.files.band_columns`), so the loaded release gives the same
        intervals.
        They are post-processing of the noisy measurements, already differentially private: publishing
        them spends no ε.  False leaves them out (a smaller file; its release then refuses intervals).

        ``stated``: also write the stated variance of every run (:meth:`stated_errors`; float32, where the
        release carries it), post-processing as well; the loaded release then states the same errors.
        """
        signing = None if key is None else verify.signing_key(key)
        release_file.target_name(path, "save needs a file path or a binary file object", "write")
        levels = release_file.shape_arrays(self.shape, self.bounds)
        for arrays, runs in zip(levels, self._levels):
            arrays.update(node=runs.node_ids(), size=runs.sizes, count=runs.counts)
        meta = {
            "format": RELEASE_FORMAT,
            "plan": self.plan.to_dict(shape=release_file.shape_entry(self.shape)),
            "budget": self.budget.to_dict(),
            "selection": self.selection,
        }
        fields = _FIELDS
        methods = band_columns.band_methods(self.bands) if bands else None
        if methods is not None:
            meta[band_columns.BANDS_KEY] = methods
            fields = (*_FIELDS, *band_columns.BAND_FIELDS)
            for arrays, level_bands in zip(levels, self.bands):
                arrays.update(band_columns.band_arrays(level_bands))
        if stated and any(v is not None for v in self.stated):
            meta[STATED_KEY] = [v is not None for v in self.stated]
            fields = (*fields, release_file.FLOAT_FIELD)
            for arrays, variances in zip(levels, self.stated):
                arrays[release_file.FLOAT_FIELD] = variances
        release_file.write(path, meta, levels, fields, signing)

    def __repr__(self) -> str:
        return (
            f"Release({len(self._levels)} levels, methods {list(self.plan.methods)}, "
            f"ε spent {self.budget.total:g}, sampler {self.sampler!r})"
        )


def load_release(path: str | os.PathLike, *, key: bytes | str | None = None) -> Release:
    """Read a release written by :meth:`Release.save` (format 2); equal to the saved one in every run and field,
    and in its intervals where the file holds their bands (:mod:`cocoviz.release.files.band_columns`; a file
    without them gives a release that refuses :meth:`Release.intervals`).

    Refuses (:class:`~cocoviz.errors.InputError`, naming why) a file that is not a release, or whose
    budget is not its plan's cost, whose sampler is unknown, or whose runs break an invariant
    (module docstring).  With ``key``, also a file whose signature is missing or is not that key's.
    """
    name = release_file.target_name(path, "load_release needs a file path or a binary file object", "read")
    signing = None if key is None else verify.signing_key(key)
    table, meta = release_file.read_stored(path, name, (RELEASE_FORMAT,), "release")
    try:
        plan, runs, bounds, levels = _parts(table, meta, signing)
        release = _checked_release(plan, meta, runs, bounds)
        if band_columns.BANDS_KEY in meta:
            if release.selection is not None:
                raise InputError("it holds bands, but a release chosen by select_mix has none")
            release.bands = band_columns.stored_bands(plan, meta[band_columns.BANDS_KEY], levels, bounds)
        if STATED_KEY in meta:
            release.stated = _stored_stated(meta[STATED_KEY], levels, runs)
        return release
    except InputError as exc:
        raise InputError(f"{name} is refused: {exc}") from None


def _parts(table, meta: dict, signing: bytes | None):
    """Plan, runs per level, K per level and every level's arrays of a format-2 file (every array a column)."""
    fields = (*_FIELDS, *band_columns.BAND_FIELDS) if band_columns.BANDS_KEY in meta else _FIELDS
    if STATED_KEY in meta:
        fields = (*fields, release_file.FLOAT_FIELD)
    levels = release_file.stored_levels(table, meta, ("plan", "budget"), fields, signing, band_columns.BAND_FIELDS)
    plan = release_file.stored_plan(meta, ("plan", "budget"), levels)
    runs = [tuple(arrays[f] for f in ("node", "size", "count")) for arrays in levels]
    if any(r is None for run in runs for r in run) or any(len({len(r) for r in run}) > 1 for run in runs):
        raise InputError("its runs need a node, size and count each, at every level")
    return plan, runs, [arrays["K"] for arrays in levels], levels


def _stored_stated(flags: object, levels: Sequence[dict], runs: list) -> list[np.ndarray | None]:
    """Per level, the stated variances a file holds (None where its flag is false), each one finite, ≥ 0 and
    one per stored run."""
    if not isinstance(flags, list) or len(flags) != len(levels) or not all(isinstance(f, bool) for f in flags):
        raise InputError(f"its {STATED_KEY!r} entry must be one true or false per level ({len(levels)})")
    out = []
    for level, (flag, arrays, run) in enumerate(zip(flags, levels, runs)):
        values = arrays.get(release_file.FLOAT_FIELD)
        if (values is not None) != flag:
            raise InputError(f"its stated variances of level {level} are {'missing' if flag else 'unannounced'}")
        if values is not None and (len(values) != len(run[0]) or not np.isfinite(values).all() or (values < 0).any()):
            raise InputError(f"its stated variances of level {level} are not one finite, non-negative number per run")
        out.append(values)
    return out


def _checked_release(plan: Plan, meta: dict, runs: list, bounds: list) -> Release:
    """The release of ``runs`` (per level, its stored node, size and count arrays), every check passed."""
    selection = meta.get("selection")
    budget = verify.check_budget(plan, meta["budget"], selection)
    verify.check_columns(plan, runs)
    shape = plan.shape
    levels = [level_runs(*run, shape.n_nodes(level)) for level, run in enumerate(runs)]
    problem = verify.consistency_problem(plan, levels, across_levels=plan.consistency != "none")
    if problem is not None:
        raise InputError(f"its histograms are not a release of its plan: {problem}")
    verify.check_bounds(plan, bounds, selected=selection is not None)
    return Release(plan, levels, budget, selection, bounds)


def level_runs(node: np.ndarray, size: np.ndarray, count: np.ndarray, n_nodes: int) -> LevelRuns:
    """A level's stored runs as :class:`LevelRuns`: :func:`~cocoviz.core.runs.aggregate_runs` of them, taken as they
    are when they already are its result (in (node, size) order, counts > 0: what :meth:`Release.save` writes),
    which spares a sort of every run at 8M nodes.  ``node`` must lie in 0..n_nodes - 1 (checked before).

    >>> level_runs(np.array([1, 0, 0]), np.array([2, 3, 1]), np.array([1, 1, 2]), 2).ptr.tolist()
    [0, 2, 3]
    """
    ordered = (node[1:] > node[:-1]) | ((node[1:] == node[:-1]) & (size[1:] > size[:-1]))
    if not ordered.all() or (count <= 0).any():
        return aggregate_runs(node, size, count, n_nodes)
    ptr = np.zeros(n_nodes + 1, np.int64)
    np.cumsum(np.bincount(node, minlength=n_nodes), out=ptr[1:])
    return LevelRuns(ptr, _own(size), _own(count))


def _own(values: np.ndarray) -> np.ndarray:
    """``values`` as int64 of the release's own: the array read (already one, 29M runs at the blocks) unless it
    is of another type or a read-only view of the file's column."""
    if values.dtype == np.int64 and values.flags.writeable and values.flags.owndata:
        return values
    return values.astype(np.int64)
