"""A level's batches and threads: the same schedule for measure, post_process and the fused level step."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cocoviz.errors import ParameterError
from cocoviz.hierarchy import Hierarchy
from cocoviz.measure import schedule as schedule
from cocoviz.measure.schedule import check_workers, level_batches, map_level
from cocoviz.methods import whole_level as whole_level
from cocoviz.plan import Plan


@pytest.fixture(scope="module")
def plan() -> Plan:
    rows = [(s, f"{s}{c}", size) for s in "pqr" for c in range(4) for size in range(1, 6)]
    tree = Hierarchy.from_groups(pd.DataFrame(rows, columns=["s", "c", "size"]), size="size", levels=["s", "c"])
    return Plan.build(tree, epsilons=[1.0] * 3, methods=["Hg", "Hc", "naive"], max_size=10)


def test_batches_cover_the_level_in_order_within_the_chunk(monkeypatch, plan):
    monkeypatch.setattr(whole_level, "CHUNK_CELLS", 25)
    for level in range(3):
        n = len(plan.shape.paths[level])
        batches = level_batches(plan, level, None)
        assert batches[0][0] == 0 and batches[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(batches, batches[1:]))
        got = map_level(plan, level, None, lambda lo, hi, threads: (lo, hi), workers=2)
        assert got == batches  # in node order, whatever the threads
    assert level_batches(plan, 2, None) == [(k, k + 2) for k in range(0, 12, 2)]  # naive: 11 cells a node
    assert level_batches(plan, 2, None, nodes=(3, 8)) == [(3, 5), (5, 7), (7, 8)]


def test_threads_per_batch(monkeypatch, plan):
    monkeypatch.setattr(whole_level, "CHUNK_CELLS", 11)  # naive: one node a batch
    monkeypatch.setattr(schedule, "_THREAD_CELLS", 5)  # its 11 cells a node count as heavy
    monkeypatch.setattr(schedule, "_WORKERS", 2)

    def threads(level, **kw):
        return {t for _, _, t in map_level(plan, level, None, lambda lo, hi, t: (lo, hi, t), **kw)}

    assert threads(1, workers=3) == {1}  # Hc: a batch is one compiled call, the batches share the threads
    # naive: the pool's default is chosen on the whole level (12 heavy nodes), not on a batch of one.
    assert threads(2) == {2} and threads(2, workers=3) == {3}
    assert threads(2, nodes=(0, 3)) == {1}  # a few nodes: one thread
    assert threads(2, secure=True) == {1} and threads(2, workers=3, secure=True) == {1}


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, np.bool_(True)])
def test_workers_must_be_a_whole_number_of_threads(bad):
    with pytest.raises(ParameterError, match="workers"):
        check_workers(bad)
    assert check_workers(None) is None and check_workers(np.int64(2)) == 2
