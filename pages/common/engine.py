"""Every engine call of the dashboard goes through here.

:func:`guard` turns a ``ValueError`` (the engine's way of refusing bad
input: ε ≤ 0, K below the largest group, a malformed upload…) into a
message on the page and stops the run, so a user never sees a traceback.
Releases are cached by their parameters (``st.cache_resource``: a Release
is returned as the same object, never copied).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import streamlit as st

import cocoviz
from cocoviz.hierarchy import Hierarchy

T = TypeVar("T")

#: Noise cells per second of the secure (OpenDP) sampler, for time estimates.
SECURE_CELLS_PER_SECOND = 200_000
#: Cells per second of a whole fast release (noise, isotonic regression, matching), measured on
#: housing-west: Hc with K = 100,000 on 137 nodes (13.7 M cells) takes ≈0.35 s.
FAST_CELLS_PER_SECOND = 35_000_000


def guard(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, or ``st.error`` with the engine's message and ``st.stop()``."""
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        st.error(str(exc), icon=":material/warning:")
        st.stop()
    except KeyError as exc:  # e.g. a node that is not in this hierarchy
        st.error(f"not found: {exc}", icon=":material/warning:")
        st.stop()
    except MemoryError:
        st.error("Not enough memory for this computation: lower K, the number of levels or the trials.",
                 icon=":material/warning:")
        st.stop()
    except Exception as exc:  # noqa: BLE001 - the last safety net: a message, never a traceback
        st.error(f"Something went wrong ({type(exc).__name__}): {exc}", icon=":material/error:")
        st.stop()
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class Params:
    """Hashable parameters of one release."""

    epsilons: tuple[float, ...]
    methods: tuple[str, ...]
    ps: tuple[int | None, ...]
    max_size: int
    consistency: str = "top-down"
    merge: str = "weighted"
    seed: int = 0
    secure: bool = False

    def kwargs(self) -> dict:
        return {"epsilons": list(self.epsilons), "methods": list(self.methods), "p": list(self.ps),
                "max_size": self.max_size, "consistency": self.consistency, "merge": self.merge,
                "seed": self.seed, "secure": self.secure}


#: Releases estimated to take longer than this wait for a click on the Explore page.
CONFIRM_SECONDS = 15.0

_DONE: set = set()


def is_cached(data_key: tuple, params: Params) -> bool:
    """Whether this release was computed before in this server process."""
    return (data_key, params) in _DONE


@dataclass(frozen=True)
class Timed:
    """A release and the seconds it took."""

    release: cocoviz.Release
    seconds: float


@st.cache_resource(show_spinner="Loading the engine's compiled kernels…")
def _kernels_ready() -> bool:
    # Once per server process, so "Release computed in" never includes numba's one-off compilation.
    cocoviz.compile_kernels()
    return True


#: Per-level estimates kept for one dataset (a level of the default costs a few MB at most).
LEVEL_CACHE_ENTRIES = 64


@st.cache_resource(show_spinner=False, max_entries=8)
def _level_cache(data_key: tuple) -> dict:
    """The per-level estimates of one dataset and choice of levels, shared by every session (fast sampler only)."""
    return {}


@st.cache_resource(show_spinner=False, max_entries=48)
def _estimate(data_key: tuple, params: Params, _tree: Hierarchy) -> Timed:
    _kernels_ready()
    cache = None
    if not params.secure:
        cache = _level_cache(data_key)
        if len(cache) > LEVEL_CACHE_ENTRIES:
            cache.clear()
    start = time.perf_counter()
    release = cocoviz.estimate(_tree, **params.kwargs(), level_cache=cache)
    return Timed(release, time.perf_counter() - start)


def estimate(data_key: tuple, tree: Hierarchy, params: Params) -> Timed:
    """The cached release of ``tree`` (identified by ``data_key``) with ``params``; errors shown on the page."""
    timed = guard(_estimate, data_key, params, tree)
    _DONE.add((data_key, params))
    return timed


def estimated_seconds(tree: Hierarchy, methods, max_size: int, consistency: str = "top-down",
                      secure: bool = False) -> float:
    """A rough time estimate of one release, from the number of noised cells."""
    cells = noise_cells(tree, methods, max_size, consistency)
    return cells / (SECURE_CELLS_PER_SECOND if secure else FAST_CELLS_PER_SECOND) + 0.005


def noise_cells(tree: Hierarchy, methods, max_size: int, consistency: str) -> int:
    """Cells the sampler will noise: Hc and naive K per node (K + 1 for naive), Hg G per node."""
    total = 0
    levels = range(tree.depth + 1)
    if consistency == "bottom-up":
        levels = [tree.depth]
    for level in levels:
        method = methods[level]
        nodes = len(tree.nodes(level))
        if method == "Hg":
            total += int(tree.runs(level).counts.sum())
        elif method == "Hc":
            total += nodes * max_size
        else:
            total += nodes * (max_size + 1)
    return total
