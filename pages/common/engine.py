"""Every engine call of the dashboard goes through here.

:func:`guard` turns the package's own refusals (:class:`cocoviz.CocovizError`:
ε out of range, K below the largest group, a malformed upload, a secure release
of non-public G…) into a message on the page and stops the run, so a user
never sees a traceback; anything else is a bug and is left to surface.
Fast releases are shared by every session of the server process: a
:class:`~pages.common.memo.SharedMemo` keyed by the data and the release's
parameters (its plan and seed) computes each release once, makes identical
requests of other sessions wait for that computation, and keeps at most
:data:`RELEASE_MEMO_BYTES` (a Release is returned as the same object, never
copied).  Per-level estimates are shared the same way (``level_cache=`` of
:func:`cocoviz.estimate`).  Costs and time estimates come
from the release's :class:`cocoviz.Plan`, never from sums of the page's own.
Every secure release a session draws is recorded in the lasting privacy ledger before its noise.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import streamlit as st

import cocoviz
from cocoviz.core.atomic import write_text
from cocoviz.hierarchy import Hierarchy
from cocoviz.plan.options import OPTIONS, PLAN_OPTIONS
from cocoviz.release.ledger import Ledger, Recorded, dataset_identity
from pages.common.memo import SharedMemo

T = TypeVar("T")

#: Cells per second of a secure release, for time estimates: the exact sampler draws 10-25 M cells/s
#: (benchmarks/sampler.py); the rest of the release's work runs at the fast release's pace.
SECURE_CELLS_PER_SECOND = 8_000_000
#: Cells per second of a whole fast release (noise, isotonic regression, matching), measured on
#: housing-west: Hc with K = 100,000 on 137 nodes (13.7 M cells) takes ≈0.35 s.
FAST_CELLS_PER_SECOND = 35_000_000
#: Releases estimated to take longer than this wait for a click on the Explore page.
CONFIRM_SECONDS = 15.0


def guard(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, or the package's refusal as ``st.error`` and ``st.stop()``."""
    try:
        return fn(*args, **kwargs)
    except cocoviz.CocovizError as exc:
        st.error(str(exc), icon=":material/warning:")
        st.stop()
    except KeyError as exc:  # a node that is not in this hierarchy
        st.error(f"not found: {exc}", icon=":material/warning:")
        st.stop()
    except MemoryError:
        st.error(
            "Not enough memory for this computation: lower K, the number of levels or the trials.",
            icon=":material/warning:",
        )
        st.stop()
    raise AssertionError("unreachable")  # pragma: no cover


#: The plan options the dashboard holds, in the order of :data:`cocoviz.plan.options.PLAN_OPTIONS`: every key of
#: :meth:`cocoviz.Plan.options` (a total and its split are only the sidebar's way to fill ε per level).
STATE_OPTIONS: tuple[str, ...] = tuple(
    o.name for o in PLAN_OPTIONS if o.name not in ("total_epsilon", "total_rho", "split")
)


def _hashable(value: object) -> object:
    """A list or tuple option as a tuple (of tuples), so that the state can key the shared memos."""
    return tuple(_hashable(v) for v in value) if isinstance(value, (list, tuple)) else value


@dataclass(frozen=True)
class Params:
    """The dashboard's state of one release: the plan's options and the two UI-only choices.

    ``options`` holds every option of :data:`STATE_OPTIONS` — the keys of :meth:`cocoviz.Plan.options`, declared
    once in :mod:`cocoviz.plan.options` — as ``(name, value)`` pairs (lists as tuples: the state is hashable);
    each is also read by name (``params.methods``, ``params.rhos``).  ``seed`` and ``secure`` are the
    sampler's, not the plan's.  Build one with :meth:`of` (plan options as keywords) or :meth:`of_plan`.

    >>> params = Params.of(epsilons=[1.0, 2.0], methods=["Hc", "Hg"], max_size=10, seed=3)
    >>> params.epsilons, params.rhos, params.merge, params.plan_options()["epsilons"]
    ((1.0, 2.0), None, 'weighted', [1.0, 2.0])
    """

    options: tuple[tuple[str, object], ...]
    seed: int = 0
    secure: bool = False

    @classmethod
    def of(cls, *, seed: int = 0, secure: bool = False, **options: object) -> Params:
        """The state of a release with plan ``options`` (:meth:`cocoviz.Plan.build`'s keywords of
        :data:`STATE_OPTIONS`; the others take their declared defaults)."""
        unknown = sorted(set(options) - set(STATE_OPTIONS))
        if unknown:
            raise TypeError(f"Params.of: {', '.join(unknown)} are no plan options of the dashboard ({STATE_OPTIONS})")
        values = tuple((name, _hashable(options.get(name, OPTIONS[name].default))) for name in STATE_OPTIONS)
        return cls(values, int(seed), bool(secure))

    @classmethod
    def of_plan(cls, plan: cocoviz.Plan, *, seed: int = 0, secure: bool = False) -> Params:
        """The state that gives back ``plan`` (its :meth:`~cocoviz.Plan.options`)."""
        return cls.of(seed=seed, secure=secure, **plan.options())

    def __getattr__(self, name: str) -> object:
        if name in STATE_OPTIONS:  # only reached for option names: the fields are found first
            return dict(self.options)[name]
        raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r}")

    def plan_options(self) -> dict:
        """The keywords of :meth:`cocoviz.Plan.build` (tuples as lists)."""
        return {name: list(v) if isinstance(v, tuple) else v for name, v in self.options}

    def kwargs(self) -> dict:
        """The keywords of :func:`cocoviz.estimate`: the plan's, the seed (none when secure) and the sampler."""
        return {**self.plan_options(), "seed": None if self.secure else self.seed, "secure": self.secure}


def plan(tree: Hierarchy, params: Params) -> cocoviz.Plan:
    """The release's public plan (its cost is known before any noise); refusals shown on the page."""
    return guard(cocoviz.Plan.build, tree, **params.plan_options())


def estimated_seconds(plan: cocoviz.Plan, secure: bool = False) -> float:
    """A rough time estimate of one release, from the cells its plan will noise."""
    from pages.common import calibration  # this machine's rate (a probe at start-up, refreshed)

    secure_scale = SECURE_CELLS_PER_SECOND / FAST_CELLS_PER_SECOND
    fast = calibration.fast_rate(FAST_CELLS_PER_SECOND)
    return plan.cost().cells / (fast * secure_scale if secure else fast) + 0.005


def cheaper_choices(plan: cocoviz.Plan) -> list[str]:
    """The choices that would noise far fewer cells than ``plan``, each with its cells (public facts only)."""
    choices = []
    for level in plan.k_levels():
        groups = int(plan.shape.group_counts(level).sum())
        k_cells = plan.level_method(level).cells(plan.shape.group_counts(level), plan.max_size).sum()
        if groups * 2 < k_cells:
            choices.append(
                f"Hg at level {level} noises its {groups:,} groups instead of {int(k_cells):,} cells (K per node)"
            )
    if plan.k_levels() and plan.k_select == "public":
        choices.append(
            "a private K per node (K selection in the sidebar) noises about the largest size per node, "
            "not the public K, for a small ε_K"
        )
    if plan.shape.depth > 1:
        choices.append("fewer levels (the level picker in the sidebar): each level is noised in full")
    return choices


#: Memory kept for shared fast releases (the default's release holds about a megabyte).
RELEASE_MEMO_BYTES = 256 * 2**20
#: Memory kept for one dataset's per-level estimates (a level of the default holds a few MB at most).
LEVEL_MEMO_BYTES = 64 * 2**20
#: Set to a file path to have the release memo's counts written there after every request (benchmarks).
STATS_ENV = "COCOVIZ_MEMO_STATS"


@st.cache_resource(show_spinner=False)
def releases() -> SharedMemo:
    """The fast releases of every session, by (data key, parameters)."""
    return SharedMemo(RELEASE_MEMO_BYTES)


def is_cached(data_key: tuple, params: Params) -> bool:
    """Whether this release is in the shared memo (computed before in this server process)."""
    return (data_key, params) in releases()


@dataclass(frozen=True)
class Timed:
    """A release, the seconds it took, and whether this view took it from the cache instead."""

    release: cocoviz.Release
    seconds: float
    from_cache: bool = False


@st.cache_resource(show_spinner="Loading the engine's compiled kernels…")
def _kernels_ready() -> bool:
    # Once per server process, so "Release computed in" never includes numba's one-off compilation.
    cocoviz.compile_kernels()
    return True


@st.cache_resource(show_spinner=False, max_entries=8)
def _level_cache(data_key: tuple) -> SharedMemo:
    """The per-level estimates of one dataset and choice of levels, shared by every session (fast sampler only)."""
    return SharedMemo(LEVEL_MEMO_BYTES)


def _timed(tree: Hierarchy, params: Params, cache: SharedMemo | None, progress=None, ledger=None) -> Timed:
    start = time.perf_counter()
    # A secure release cannot be drawn again for its stated errors: they are computed with it (post-processing).
    # A secure draw is recorded by estimate() below unless this page recorded it (ledger=Recorded(...)).
    recorded = {} if ledger is None else {"ledger": ledger}
    release = cocoviz.estimate(
        tree, **params.kwargs(), level_cache=cache, progress=progress, stated=params.secure, **recorded
    )
    return Timed(release, time.perf_counter() - start)


def with_stated_errors(data_key: tuple, tree: Hierarchy, params: Params, release: cocoviz.Release) -> cocoviz.Release:
    """``release`` with its experimental stated errors (:meth:`cocoviz.Release.stated_errors`), for the Intervals
    tab: a fast release is made again with ``stated=True`` from the shared per-level estimates (the same seeded
    release, only its consistency step and statements recomputed) and kept for every session; a secure one
    carries them already."""
    if params.secure or any(v is not None for v in release.stated):
        return release

    def compute() -> cocoviz.Release:
        return cocoviz.estimate(tree, **params.kwargs(), level_cache=_level_cache(data_key), stated=True)

    return guard(releases().get_or_compute, (data_key, params, "stated"), compute)


def _estimate_fast(data_key: tuple, params: Params, tree: Hierarchy) -> Timed:
    _kernels_ready()
    memo = releases()
    cached = (data_key, params) in memo
    try:
        timed = memo.get_or_compute((data_key, params), lambda: _timed(tree, params, _level_cache(data_key)))
        return replace(timed, from_cache=True) if cached else timed
    finally:
        path = os.environ.get(STATS_ENV)
        if path:
            _write_stats(path, memo.stats())


def _write_stats(path: str, stats: dict) -> None:
    write_text(path, json.dumps(stats))  # written whole then renamed: a reader never sees half a file


def estimate(data_key: tuple, tree: Hierarchy, params: Params, label: str = "", identity: str | None = None) -> Timed:
    """The release of ``tree`` (identified by ``data_key``, named ``label``) with ``params``; refusals shown.

    Fast releases are cached for every session.  A secure release is recorded in the lasting privacy
    ledger (:mod:`cocoviz.release.ledger`) before any noise is drawn — where its cap may refuse it — under
    ``identity``, its persons' (:attr:`pages.common.data.DataInfo.identity`; None: the plan's shape), and kept in
    this session only to be shown again, never in a shared cache: every draw is a new spending of ε.
    """
    if not params.secure:
        return guard(_estimate_fast, data_key, params, tree)
    drawn = st.session_state.setdefault(DRAWN, {})
    timed = drawn.get((data_key, params))
    if timed is None:
        _kernels_ready()
        book = ledger()
        entry = guard(book.begin, plan(tree, params), label=label, dataset=identity)
        bar = st.progress(0.0, text="Drawing the secure release…")

        def advance(done: int, total: int) -> None:
            bar.progress(done / max(total, 1), text=f"Drawing the secure release: {done} of {total} levels measured")

        try:
            timed = guard(_timed, tree, params, None, advance, Recorded(book, entry))
        except BaseException as exc:  # a refusal (st.stop), a bug or a stopped script: the ε may be spent
            book.fail(entry, exc)
            raise
        book.complete(entry)
        drawn[(data_key, params)] = timed
        bar.empty()
    return timed


@st.cache_data(show_spinner=False, max_entries=48)
def _evaluate(data_key: tuple, params: Params, _tree: Hierarchy, _release: cocoviz.Release):
    return cocoviz.evaluate(_tree, _release)


def evaluate(data_key: tuple, tree: Hierarchy, params: Params, release: cocoviz.Release):
    """Errors of the release of ``params`` against the truth (a fast release's are cached with it;
    a secure release is this session's own draw, so its errors are not shared)."""
    if params.secure:
        return cocoviz.evaluate(tree, release)
    return _evaluate(data_key, params, tree, release)


# ------------------------------------------------------------------ the secure ledger
DRAWN = "secure.drawn"  # session state: {(data key, params): Timed} of the secure releases this session drew


def ledger() -> Ledger:
    """The lasting privacy ledger (``$COCOVIZ_LEDGER``, else the user's data folder); refusals shown."""
    return guard(Ledger)


def persons(plan: cocoviz.Plan, identity: str | None) -> str:
    """The ledger identity a draw of ``plan`` spends from: ``identity`` (its persons'), else the plan's shape."""
    return dataset_identity(plan.shape) if identity is None else identity


def ledger_total(plan: cocoviz.Plan, identity: str | None = None) -> tuple[int, float]:
    """Secure releases recorded for the persons ``identity`` (None: ``plan``'s shape), in every session, and the
    ε they spent.

    Read for every release shown, so it never stops the page: a ledger that cannot be read shows as empty
    here (a secure draw, which must write it, is refused with the reason).
    """
    drawn, epsilon, _rho, _delta = ledger_totals(plan, identity)
    return drawn, epsilon


def ledger_totals(plan: cocoviz.Plan, identity: str | None = None) -> tuple[int, float, float | None, float]:
    """As :func:`ledger_total`, with the composed ρ and δ: (draws, ε, ρ, δ) — ρ None when every draw is pure ε,
    else ε is the (ε, δ) reading of the composed ρ (:meth:`cocoviz.release.ledger.Ledger.totals`)."""
    try:
        book = Ledger()
        identity = persons(plan, identity)
        entries = book.entries(identity)
        # composed in the draws' accounting (zCDP: ρ adds), never readings added
        epsilon, rho, delta = book.totals(identity)
    except cocoviz.CocovizError:
        return 0, 0.0, None, 0.0
    return len(entries), epsilon, rho, delta


def is_drawn(data_key: tuple, params: Params) -> bool:
    """Whether this session has drawn the secure release of ``params`` already (showing it again is free)."""
    return (data_key, params) in st.session_state.get(DRAWN, {})
