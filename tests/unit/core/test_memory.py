"""Cost checks before allocation (issue 27, item 9): a node, a prior or a buffer too large for memory is
refused with the memory it would need and the choices that avoid it, before anything is allocated."""

from __future__ import annotations

import pandas as pd
import pytest

import cocoviz
from cocoviz.core.memory import MAX_CELL_BYTES, check_cells, format_bytes, needed_bytes
from cocoviz.errors import ParameterError
from cocoviz.hierarchy import Hierarchy
from cocoviz.plan import Plan
from tests.support.capped import run_capped

_HUGE_LEAF = """
import pandas as pd, cocoviz
from cocoviz.hierarchy import Hierarchy
from cocoviz.plan import Plan
counts = pd.DataFrame({"s": ["a", "a", "b"], "size": [1, 3, 2], "count": [10**10, 1, 4]})
tree = Hierarchy.from_counts(counts, size="size", count="count", levels=["s"])
"""


def test_refusals_are_made_before_allocating_in_a_memory_capped_child():
    outcomes = run_capped(
        {
            "hg p=1": _HUGE_LEAF + "cocoviz.estimate(tree, epsilons=[1, 1], methods=['Hc', 'Hg'], p=[1, 1], seed=0)",
            "measure hg": _HUGE_LEAF
            + "cocoviz.measure(Plan.build(tree, epsilons=[1, 1], methods=['Hc', 'Hg']), tree, seed=0)",
            "prior": _HUGE_LEAF
            + "cocoviz.estimate(tree, epsilons=[1, 1], methods=['Hcp'] * 2, max_size=5, seed=0, prior={10**12: 1.0})",
            "prior, large K": _HUGE_LEAF.replace("10**10", "1")
            + "cocoviz.estimate(tree, epsilons=[1, 1], methods=['Hcp'] * 2, seed=0, prior={10**12: 1.0})",
            "priors module": "from cocoviz.methods.priors import as_prior\nas_prior({10**12: 1.0})",
        }
    )
    outcome, message = outcomes["hg p=1"]
    assert outcome == "CocovizError", message
    assert "node ('a',) with 10,000,000,001 groups" in message and "74.5 GiB" in message
    assert "Hc with a public K" in message and "p = 2" in message
    outcome, message = outcomes["measure hg"]  # measure keeps every noisy answer: p = 2 does not stream there
    assert outcome == "CocovizError" and "74.5 GiB" in message and "estimate() with Hg and p = 2" in message
    for name in ("prior", "prior, large K"):
        outcome, message = outcomes[name]
        assert outcome == "CocovizError" and "1,000,000,000,000" in message, (name, message)
    outcome, message = outcomes["priors module"]
    assert outcome == "CocovizError" and "7.3 TiB" in message, message


def test_hg_with_p_2_streams_in_estimate_so_it_passes_the_check():
    counts = pd.DataFrame({"size": [1, 3], "count": [10**10, 1]})
    tree = Hierarchy.from_counts(counts, size="size", count="count", levels=[])
    plan = Plan.build(tree, epsilons=[1.0], methods=["Hg"], p=2)
    from cocoviz.core.memory import check_plan

    check_plan(plan, streamed=True)  # no refusal: the node is streamed in chunks
    with pytest.raises(ParameterError, match="74.5 GiB"):
        check_plan(plan, streamed=False)


def test_the_limit_and_its_message():
    assert needed_bytes(MAX_CELL_BYTES // 8) == MAX_CELL_BYTES
    check_cells(MAX_CELL_BYTES // 8, "x", "y")
    with pytest.raises(ParameterError, match=r"^x would need 536,870,913 cells \(4 GiB, over the limit of 4 GiB"):
        check_cells(MAX_CELL_BYTES // 8 + 1, "x", "y")
    assert [format_bytes(n) for n in (5, 2048, 3 * 2**20 // 2, 2**40)] == ["5 bytes", "2 KiB", "1.5 MiB", "1 TiB"]


def test_an_ordinary_release_is_not_refused(toy_public_tree):
    release = cocoviz.estimate(toy_public_tree, epsilons=[1.0, 1.0], methods=["Hg", "Hg"], p=1, seed=0)
    assert release.is_consistent()
