"""The dashboard's shared memo: one computation per key across threads, bounded in bytes, and the engine's
releases shared between sessions."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from pages.common.memo import SharedMemo, approx_bytes
from tests.support.app import assert_clean, new_app


def _wait_until(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.005)


def test_identical_concurrent_requests_compute_once():
    memo = SharedMemo(max_bytes=10**6)
    release = threading.Event()
    calls = []

    def compute():
        calls.append(1)
        release.wait(30)
        return np.arange(10)

    results = [None] * 8

    def request(i):
        results[i] = memo.get_or_compute(("plan", 0), compute)

    threads = [threading.Thread(target=request, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    _wait_until(lambda: memo.stats()["waited"] == 7)  # the seven others wait for the first one
    release.set()
    for t in threads:
        t.join(30)
    assert len(calls) == 1
    assert all(r is results[0] for r in results)  # the same object, never copied
    assert memo.get_or_compute(("plan", 0), compute) is results[0]
    stats = memo.stats()
    assert (stats["requests"], stats["computed"], stats["waited"], stats["hits"]) == (9, 1, 7, 1)
    # Another seed is another release.
    memo.get_or_compute(("plan", 1), lambda: np.arange(3))
    assert memo.stats()["computed"] == 2


def test_a_failed_computation_is_not_stored_and_waiters_retry():
    memo = SharedMemo(max_bytes=10**6)
    started, go = threading.Event(), threading.Event()

    def failing():
        started.set()
        go.wait(30)
        raise ValueError("bad plan")

    errors, values = [], []

    def owner():
        try:
            memo.get_or_compute("k", failing)
        except ValueError as exc:
            errors.append(str(exc))

    first = threading.Thread(target=owner)
    first.start()
    started.wait(30)
    waiter = threading.Thread(target=lambda: values.append(memo.get_or_compute("k", lambda: 7)))
    waiter.start()
    _wait_until(lambda: memo.stats()["waited"] == 1)
    go.set()
    first.join(30)
    waiter.join(30)
    assert errors == ["bad plan"] and values == [7]  # the waiter computed for itself
    assert memo.stats()["computed"] == 1 and memo["k"] == 7


def test_memory_bound_evicts_least_recently_used():
    memo = SharedMemo(max_bytes=100, sizeof=lambda v: v)
    for key, size in (("a", 40), ("b", 40)):
        memo.get_or_compute(key, lambda s=size: s)
    memo.get_or_compute("a", lambda: 0)  # a is now the most recently used
    memo.get_or_compute("c", lambda: 40)
    assert sorted(memo) == ["a", "c"] and memo.stats()["bytes"] == 80 and memo.stats()["evicted"] == 1
    assert memo.get_or_compute("huge", lambda: 500) == 500  # returned, never kept
    assert "huge" not in memo and memo.stats()["bytes"] <= 100
    memo["d"] = 30  # the mapping form (the engine's per-level cache) is bounded the same way
    assert memo.get("d") == 30 and memo.get("missing") is None and memo.stats()["bytes"] <= 100


def test_approx_bytes_counts_arrays_once():
    a = np.zeros(1000)
    assert approx_bytes(a) >= 8000
    assert 8000 <= approx_bytes([a, a, {"x": a}]) < 9000


@pytest.mark.parametrize("eps", [0.61])
def test_sessions_share_a_release(eps):
    from pages.common import engine

    before = engine.releases().stats()
    first = new_app(**{"cv.eps.0": eps})  # settings no other test asks for
    assert_clean(first)
    middle = engine.releases().stats()
    second = new_app(**{"cv.eps.0": eps})
    assert_clean(second)
    after = engine.releases().stats()
    assert middle["computed"] - before["computed"] == 1
    assert after["computed"] == middle["computed"]  # the second session reads the first one's release
    assert after["hits"] > middle["hits"]
