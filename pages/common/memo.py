"""A process-wide memo for the dashboard: bounded in bytes, thread-safe, one computation per key.

Streamlit runs every session's script in its own thread of one server process.
:class:`SharedMemo` lets those threads share results: the first request of a
key computes it, identical requests arriving meanwhile wait for that one
computation instead of repeating it, and later ones read the stored value.
Values are evicted least recently used first once their estimated size
(:func:`approx_bytes`) passes ``max_bytes``.  It counts requests, computations
and waits, so a benchmark can show that sessions share their work.

It is also a :class:`~collections.abc.MutableMapping`, bounded the same way,
for callers that only get and set (the engine's per-level cache,
``cocoviz.estimate(..., level_cache=...)``).  No Streamlit import: it is
tested on its own.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, MutableMapping
from typing import Any, TypeVar

import numpy as np

V = TypeVar("V")


def approx_bytes(value: Any, _seen: set | None = None) -> int:
    """Estimated memory held by ``value``: numpy arrays by their buffers, pandas objects by their
    columns, containers and plain objects by their items and attributes (each object counted once)."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return int(value.nbytes) + 112
    if hasattr(value, "memory_usage") and hasattr(value, "dtypes"):  # a pandas frame or series
        usage = value.memory_usage(index=True, deep=True)
        return int(usage.sum() if hasattr(usage, "sum") else usage)
    size = sys.getsizeof(value, 64)
    if isinstance(value, (str, bytes, int, float, bool, type(None))):
        return size
    if isinstance(value, dict):
        return size + sum(approx_bytes(k, seen) + approx_bytes(v, seen) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return size + sum(approx_bytes(v, seen) for v in value)
    attributes = getattr(value, "__dict__", None)
    if attributes is not None:
        size += approx_bytes(attributes, seen)
    for name in getattr(type(value), "__slots__", ()):
        if hasattr(value, name):
            size += approx_bytes(getattr(value, name), seen)
    return size


class _Flight:
    """One computation under way: its waiters block on ``done``."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.ok = False
        self.value: Any = None


class SharedMemo(MutableMapping):
    """Values by key, shared by threads, at most ``max_bytes`` (estimated by ``sizeof``) kept.

    >>> memo = SharedMemo(max_bytes=10_000)
    >>> memo.get_or_compute("a", lambda: 41 + 1), memo.get_or_compute("a", lambda: 0)
    (42, 42)
    >>> memo.stats()["requests"], memo.stats()["computed"]
    (2, 1)
    """

    def __init__(self, max_bytes: int, sizeof: Callable[[Any], int] = approx_bytes) -> None:
        self.max_bytes = int(max_bytes)
        self._sizeof = sizeof
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._flights: dict[Hashable, _Flight] = {}
        self._bytes = 0
        self._counts = {"requests": 0, "hits": 0, "computed": 0, "waited": 0, "evicted": 0}

    # ------------------------------------------------------------ one computation per key
    def get_or_compute(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The value of ``key``: stored, or computed once by ``compute()`` while identical requests wait.

        A computation that raises stores nothing and wakes its waiters, which then compute for
        themselves (so each caller sees its own error, or Streamlit's stop and rerun signals
        stay in the session that raised them).
        """
        with self._lock:
            self._counts["requests"] += 1
        while True:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None:
                    self._entries.move_to_end(key)
                    self._counts["hits"] += 1
                    return entry[0]
                flight = self._flights.get(key)
                owner = flight is None
                if owner:
                    flight = self._flights[key] = _Flight()
                else:
                    self._counts["waited"] += 1
            if not owner:
                flight.done.wait()
                if flight.ok:
                    return flight.value
                continue  # the computation failed: try again (this caller may now own it)
            try:
                value = compute()
            except BaseException:
                with self._lock:
                    del self._flights[key]
                flight.done.set()
                raise
            flight.value, flight.ok = value, True
            with self._lock:
                self._counts["computed"] += 1
                del self._flights[key]
                self._store(key, value)
            flight.done.set()
            return value

    def _store(self, key: Hashable, value: Any) -> None:
        """Keep ``value`` (lock held), evicting the least recently used beyond ``max_bytes``."""
        size = self._sizeof(value)
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old[1]
        if size > self.max_bytes:
            return  # larger than the whole memo: computed for its caller, never kept
        self._entries[key] = (value, size)
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self._bytes -= dropped
            self._counts["evicted"] += 1

    def stats(self) -> dict[str, int]:
        """Requests, hits, computations, waits for another's computation, evictions, entries and bytes."""
        with self._lock:
            return {**self._counts, "entries": len(self._entries), "bytes": self._bytes}

    # ------------------------------------------------------------ a bounded mapping
    def __getitem__(self, key: Hashable) -> Any:
        with self._lock:
            value, _ = self._entries[key]
            self._entries.move_to_end(key)
            return value

    def __setitem__(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._store(key, value)

    def __delitem__(self, key: Hashable) -> None:
        with self._lock:
            _, size = self._entries.pop(key)
            self._bytes -= size

    def __iter__(self) -> Iterator[Hashable]:
        with self._lock:
            return iter(list(self._entries))

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
