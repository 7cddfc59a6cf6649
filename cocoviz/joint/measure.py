"""Measure the tenure margin: owners per region, with keyed noise — the only code here that reads tenure.

**What is measured.**  Per node of every level, O = the number of owner households (groups);
renters are ``G − O`` with G public, so one noisy number per node carries the whole margin.

**Sensitivity under the project's neighbours is 0.**  Adding or removing one person changes one
group's size, never its tenure, and G is public: every O is the same on both datasets
(``tests/test_joint.py`` checks every one-person change of small data by brute force).  Under
those neighbours the margin could be published exactly at ε = 0 — but only because they treat
every household's tenure as public, like G.  We do not assume that.

**The design: neighbours that protect tenure too.**  Two datasets are neighbours when one
household's record differs: one person added to or removed from it, **and/or** its tenure
flipped.  Under these, O changes by at most 1 (a flip moves one group between owners and
renters; a size change moves none), so Δ = :data:`TENURE_SENSITIVITY` = 1 and the noise is
double-geometric of scale 1/ε_t per node.  The size release's queries never read tenure, so
their sensitivities are unchanged; both parts spend on the same neighbour step, so they add up
(sequential composition): the budget is the size release's plus Σ_l ε_t,l — nodes of a level
hold disjoint households and compose in parallel.  (Persons by tenure — persons in owner
households — would have Δ = 1 under the person neighbours alone, but it is not a margin of the
group table, so IDE cannot use it, and it would still leave tenure itself unprotected.)

**Noise keys.**  Node k of level l draws from the stream ``(l, k, TENURE_QUERY)`` with
:data:`TENURE_QUERY` = 3, apart from the engine's ``(l, k, 0)``, ``(l, 0, 1)`` and ``(0, 0, 2)``:
one seed serves the size release and this margin, with independent noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cocoviz.budget import HOUSEHOLDS, Budget, Charge
from cocoviz.errors import InputError, ParameterError, PrivacyError
from cocoviz.joint.domain import leaf_owners
from cocoviz.measure import GROUPS_FROM_DATA
from cocoviz.noise import check_epsilon, make_sampler
from cocoviz.shape import Shape

__all__ = [
    "TENURE_QUERY",
    "TENURE_SENSITIVITY",
    "PERSON_SENSITIVITY",
    "TENURE_QUANTITY",
    "NEIGHBOURS",
    "TenureMeasurements",
    "owner_counts",
    "tenure_cost",
    "measure_tenure",
]

#: Query id of the tenure margin in the noise keys (level, node, query).
TENURE_QUERY = 3
#: Δ of O per node when one household's record changes (one person and/or its tenure).
TENURE_SENSITIVITY = 1
#: Δ of O per node under the project's person-level neighbours (brute-forced in the tests).
PERSON_SENSITIVITY = 0
#: The charge's name in the budget report.
TENURE_QUANTITY = "owners (tenure margin; renters = G − owners)"
#: What the tenure charges assume, for the budget report.
NEIGHBOURS = (
    "tenure margin: Δ = 0 under one person added or removed (a group keeps its tenure, G is public), "
    "so it is charged under neighbours that also flip one household's tenure (Δ = 1); the size and "
    "tenure charges add up"
)


def _as_shape(shape: object) -> Shape:
    if isinstance(shape, Shape):
        return shape
    inner = getattr(shape, "shape", None)  # a Release or a Plan: their public shape
    if isinstance(inner, Shape):
        return inner
    raise ParameterError(f"need the public Shape of the hierarchy (or a Release / Plan), got {type(shape).__name__}")


def _epsilons(shape: Shape, epsilons: Sequence[float]) -> tuple[float, ...]:
    if isinstance(epsilons, (str, bytes)) or not isinstance(epsilons, (Sequence, np.ndarray)):
        raise ParameterError(f"the tenure ε must be a list with one ε per level, root first, got {epsilons!r}")
    eps = tuple(check_epsilon(e, f"tenure ε of level {k}") for k, e in enumerate(epsilons))
    if len(eps) != shape.depth + 1:
        raise ParameterError(f"one tenure ε per level, root first: {shape.depth + 1} needed, got {len(eps)}")
    return eps


@dataclass(frozen=True)
class TenureMeasurements:
    """Noisy owner counts of every node (level by level, in the shape's node order) and their budget.

    Holds no private data: ``owners[l][k]`` is node k's O plus double-geometric noise of scale
    ``1/epsilons[l]`` (it may be negative or above G).
    """

    shape: Shape
    epsilons: tuple[float, ...]
    owners: tuple[np.ndarray, ...]
    budget: Budget

    def scale(self, level: int) -> float:
        """The noise scale Δ/ε of ``level``."""
        return TENURE_SENSITIVITY / self.epsilons[level]


def tenure_cost(shape: object, epsilons: Sequence[float]) -> Budget:
    """The tenure margin's budget, before any noise: one charge per level (1 cell per node, Δ = 1, its ε)."""
    shape = _as_shape(shape)
    eps = _epsilons(shape, epsilons)
    charges = tuple(
        Charge.for_level(level, paths, TENURE_QUANTITY, len(paths), TENURE_SENSITIVITY, eps[level], relation=HOUSEHOLDS)
        for level, paths in enumerate(shape.paths)
    )
    return Budget(charges, notes=(NEIGHBOURS,))


def owner_counts(table: pd.DataFrame, shape: object) -> list[np.ndarray]:
    """The exact query: O of every node, level by level (reads the private tenure table).

    Refuses a table whose leaves or G differ from the shape's (a table of other households).
    """
    shape = _as_shape(shape)
    levels = list(shape.levels)
    leaves = leaf_owners(table, levels)
    paths = list(shape.paths[shape.depth])
    index = [tuple(k) if isinstance(k, tuple) else (k,) for k in leaves.index] if levels else [()]
    found = dict(zip(index, zip(leaves["owners"].to_numpy(np.int64), leaves["groups"].to_numpy(np.int64))))
    if set(found) != set(paths):
        raise InputError("the tenure table's leaves are not the hierarchy's")
    owners = np.array([found[p][0] for p in paths], np.int64)
    groups = np.array([found[p][1] for p in paths], np.int64)
    if not np.array_equal(groups, shape.group_counts(shape.depth)) or np.any(owners < 0) or np.any(owners > groups):
        raise InputError("the tenure table's households per leaf differ from the hierarchy's G")
    out = [owners]
    for level in range(shape.depth, 0, -1):
        out.append(np.bincount(shape.parent_index(level), weights=out[-1], minlength=len(shape.paths[level - 1])))
    return [np.rint(o).astype(np.int64) for o in reversed(out)]


def measure_tenure(
    shape: object,
    table: pd.DataFrame,
    epsilons: Sequence[float],
    *,
    seed: int | Sequence[int] | None = None,
    sampler: str = "fast",
) -> TenureMeasurements:
    """Noisy O per node: the measure step of the joint tables (module docstring for Δ and the keys).

    Parameters
    ----------
    shape : the public :class:`~cocoviz.shape.Shape` (or a Release / Plan holding it)
    table : the private tenure table (:func:`cocoviz.datasets.tenure.tenure_table`)
    epsilons : the tenure ε of every level, root first
    seed : keys the fast sampler (the size release's seed may be reused: the keys differ)
    sampler : ``"fast"`` (exploration), ``"secure"`` or ``"opendp"`` (for release)

    Raises
    ------
    PrivacyError
        A secure margin over G taken from private rows (``shape.public_groups`` False), as
        :func:`cocoviz.measure` refuses for the size release: the shape of a release made by
        :func:`cocoviz.measure` carries its tree's flag (checked there in full).
    """
    shape = _as_shape(shape)
    eps = _epsilons(shape, epsilons)
    noise = make_sampler(sampler, seed)
    notes = ()
    if not shape.public_groups:
        if noise.secure:
            raise PrivacyError(
                "a secure tenure margin needs public G per region: this hierarchy's G and region list come "
                "from private rows (a persons table without a public groups table). Give the public groups "
                "table (group -> region) too."
            )
        notes = (GROUPS_FROM_DATA,)
    exact = owner_counts(table, shape)
    owners = tuple(
        np.concatenate(
            [
                noise.draw(exact[level][k : k + 1], TENURE_SENSITIVITY / eps[level], (level, k, TENURE_QUERY))
                for k in range(len(exact[level]))
            ]
        )
        if len(exact[level])
        else np.zeros(0, np.int64)
        for level in range(shape.depth + 1)
    )
    return TenureMeasurements(shape, eps, owners, tenure_cost(shape, eps).with_sampler(noise.name, notes))
