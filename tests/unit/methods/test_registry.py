"""The method registry: cells and the measured vector's name come from each entry, never from a method's name."""

from __future__ import annotations

import numpy as np
import pytest

from cocoviz.methods.hcp import hcp_grid
from cocoviz.methods.registry import METHODS, Method

GROUPS = np.array([3, 0, 7])


@pytest.mark.parametrize(
    ("name", "cells"),
    [("Hc", [20, 20, 20]), ("naive", [21, 21, 21]), ("Hg", [3, 0, 7]), ("Hcp", [len(hcp_grid(20))] * 3)],
)
def test_cells_per_node_of_every_method(name, cells):
    assert METHODS[name].cells(GROUPS, 20).tolist() == cells


@pytest.mark.parametrize("name", ["Hc", "naive", "Hcp"])
def test_cells_at_k_per_node_agree_with_one_k(name):
    method, bounds = METHODS[name], np.array([20, 7, 20, 1])
    expected = [int(method.cells(np.zeros(1, np.int64), int(k))[0]) for k in bounds]
    assert method.cells_at(bounds).tolist() == expected


@pytest.mark.parametrize(
    ("name", "public", "private"),
    [
        ("Hc", "Hc[0..19]", "Hc[0..K̂-1], K̂ ≤ 20"),
        ("naive", "H[0..20]", "H[0..K̂], K̂ ≤ 20"),
        ("Hcp", f"Hc at {len(hcp_grid(20))} grid points < 20", "Hc at the grid of K̂ ≤ 20"),
        ("Hg", "Hg", "Hg"),
    ],
)
def test_the_measured_vectors_name(name, public, private):
    assert METHODS[name].quantity(20) == public
    assert METHODS[name].quantity(20, private_k=True) == private


def test_a_new_method_is_one_entry_with_its_own_callables():
    hc = METHODS["Hc"]
    tripled = Method("X", 1, None, True, hc.query, hc.fit, k_cells=lambda k: 3 * k, name_vector=lambda k, p: f"X{k}")
    assert tripled.cells(GROUPS, 4).tolist() == [12, 12, 12]
    assert tripled.cells_at(np.array([1, 2])).tolist() == [3, 6]
    assert tripled.quantity(4) == "X4"
    per_group = Method("Y", 1, None, False, hc.query, hc.fit)
    assert per_group.cells(GROUPS, 4).tolist() == GROUPS.tolist() and per_group.quantity(4) == "Y"


def test_needs_k_must_match_k_cells():
    hc = METHODS["Hc"]
    with pytest.raises(ValueError, match="needs_k"):
        Method("Z", 1, None, True, hc.query, hc.fit)
    with pytest.raises(ValueError, match="needs_k"):
        Method("Z", 1, None, False, hc.query, hc.fit, k_cells=int)
