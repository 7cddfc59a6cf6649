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

**Under zCDP** (``rhos=`` instead of ``epsilons=``) the margin is a zCDP measurement like the size
release's: per level, the vector of O over the level's nodes moves in one node by at most 1 under
the household-records neighbours (the household lies in one node per level), so its L2 sensitivity
is Δ₂ = :data:`TENURE_SENSITIVITY` = 1 too (brute-forced in ``tests/test_joint.py``), and every node
draws discrete Gaussian noise of σ² = Δ₂²/(2ρ_l) (exactly, as a rational): each level is ρ_l-zCDP,
the levels add up, and the margin's ρ adds to the size release's (:func:`~cocoviz.joint.estimate.joint_budget`).

**Noise keys.**  Node k of level l draws from the stream ``(l, k, TENURE_QUERY)`` with
:data:`TENURE_QUERY` = 3, apart from the engine's ``(l, k, 0)``, ``(l, 0, 1)`` and ``(0, 0, 2)``:
one seed serves the size release and this margin, with independent noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cocoviz.core.shape import Shape
from cocoviz.errors import InputError, ParameterError, PrivacyError
from cocoviz.joint.domain import leaf_owners
from cocoviz.measure.measurements import GROUPS_FROM_DATA
from cocoviz.measure.recording import begin_draw
from cocoviz.privacy.accounting import DEFAULT_DELTA, check_delta, check_rho, gaussian_sigma2
from cocoviz.privacy.budget import HOUSEHOLDS, Budget, Charge, double_geometric_variance
from cocoviz.privacy.noise import GaussianNoise, check_epsilon, discrete_gaussian_variance, make_sampler

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
#: Δ of O per node when one household's record changes (one person and/or its tenure); per level the L1 and
#: the L2 (Δ₂) sensitivity of the nodes' O alike, as one node moves.
TENURE_SENSITIVITY = 1
#: Δ of O per node under the project's person-level neighbours (brute-forced in the tests).
PERSON_SENSITIVITY = 0
#: The charge's name in the budget report.
TENURE_QUANTITY = "owners (tenure margin; renters = G − owners)"
#: What the tenure charges assume, for the budget report.
NEIGHBOURS = (
    "tenure margin: Δ = 0 under one person added or removed (a group keeps its tenure, G is public), "
    "so it is charged under neighbours that also flip one household's tenure (Δ = Δ₂ = 1); the size and "
    "tenure charges add up"
)


def _as_shape(shape: object) -> Shape:
    if isinstance(shape, Shape):
        return shape
    inner = getattr(shape, "shape", None)  # a Release or a Plan: their public shape
    if isinstance(inner, Shape):
        return inner
    raise ParameterError(f"need the public Shape of the hierarchy (or a Release / Plan), got {type(shape).__name__}")


def _per_level(shape: Shape, values, what: str, check) -> tuple[float, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise ParameterError(f"the tenure {what} must be a list with one {what} per level, root first, got {values!r}")
    out = tuple(check(v, f"tenure {what} of level {k}") for k, v in enumerate(values))
    if len(out) != shape.depth + 1:
        raise ParameterError(f"one tenure {what} per level, root first: {shape.depth + 1} needed, got {len(out)}")
    return out


def _budget(shape: Shape, epsilons, rhos) -> tuple[tuple[float, ...] | None, tuple[float, ...] | None]:
    """The checked ε per level (pure ε) or ρ per level (zCDP): exactly one of them."""
    if (epsilons is None) == (rhos is None):
        raise ParameterError(
            "give the tenure margin's epsilons (pure ε, double-geometric noise) or rhos (ρ-zCDP, discrete "
            "Gaussian noise), one per level, root first: one of them"
        )
    if rhos is not None:
        return None, _per_level(shape, rhos, "ρ", check_rho)
    return _per_level(shape, epsilons, "ε", check_epsilon), None


def _level_noise(epsilons, rhos, level: int) -> float | GaussianNoise:
    """Double-geometric scale Δ/ε, or the discrete Gaussian of σ² = Δ₂²/(2ρ) exactly (a rational) under zCDP."""
    if rhos is not None:
        return GaussianNoise(gaussian_sigma2(rhos[level], TENURE_SENSITIVITY**2))
    return TENURE_SENSITIVITY / epsilons[level]


@dataclass(frozen=True)
class TenureMeasurements:
    """Noisy owner counts of every node (level by level, in the shape's node order) and their budget.

    Holds no private data: ``owners[l][k]`` is node k's O plus double-geometric noise of scale
    ``1/epsilons[l]`` or, under zCDP (``rhos`` given, ``epsilons`` None), discrete Gaussian noise of
    σ² = 1/(2 ρ_l) (it may be negative or above G).
    """

    shape: Shape
    epsilons: tuple[float, ...] | None
    owners: tuple[np.ndarray, ...]
    budget: Budget
    rhos: tuple[float, ...] | None = None

    def noise(self, level: int) -> float | GaussianNoise:
        """What the sampler drew at ``level``: the double-geometric scale Δ/ε, or the discrete Gaussian's σ²."""
        return _level_noise(self.epsilons, self.rhos, level)

    def scale(self, level: int) -> float:
        """The noise scale of ``level``: Δ/ε, or σ = Δ₂/√(2ρ) under zCDP."""
        noise = self.noise(level)
        return float(noise.sigma2) ** 0.5 if isinstance(noise, GaussianNoise) else noise

    def variance(self, level: int) -> float:
        """The variance of one node's noise at ``level`` (the consistency step's weights)."""
        noise = self.noise(level)
        if isinstance(noise, GaussianNoise):
            return discrete_gaussian_variance(float(noise.sigma2))
        return double_geometric_variance(noise)


def tenure_cost(
    shape: object,
    epsilons: Sequence[float] | None = None,
    *,
    rhos: Sequence[float] | None = None,
    delta: float = DEFAULT_DELTA,
) -> Budget:
    """The tenure margin's budget, before any noise: one charge per level (1 cell per node, Δ = Δ₂ = 1, its ε
    or, under zCDP, its ρ; the (ε, δ) reading at ``delta``), all under the household-records neighbours.

    >>> from cocoviz.datasets import load_dataset
    >>> cost = tenure_cost(Shape.of(load_dataset("toy")), rhos=[0.125, 0.5])
    >>> cost.accounting, cost.total_rho, [c.scale for c in cost.charges]  # σ = Δ₂/√(2ρ)
    ('zCDP', 0.625, [2.0, 1.0])
    """
    shape = _as_shape(shape)
    eps, rho = _budget(shape, epsilons, rhos)
    if rho is not None:
        charges = tuple(
            Charge.for_level(
                level,
                paths,
                TENURE_QUANTITY,
                len(paths),
                TENURE_SENSITIVITY,
                None,
                rho=rho[level],
                noise="gaussian",
                relation=HOUSEHOLDS,
            )  # fmt: skip
            for level, paths in enumerate(shape.paths)
        )
        return Budget(charges, notes=(NEIGHBOURS,), accounting="zCDP", delta=check_delta(delta))
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
    epsilons: Sequence[float] | None = None,
    *,
    rhos: Sequence[float] | None = None,
    delta: float = DEFAULT_DELTA,
    seed: int | Sequence[int] | None = None,
    sampler: str = "fast",
    ledger=None,
    dataset: str | None = None,
) -> TenureMeasurements:
    """Noisy O per node: the measure step of the joint tables (module docstring for Δ and the keys).

    Parameters
    ----------
    shape : the public :class:`~cocoviz.core.shape.Shape` (or a Release / Plan holding it)
    table : the private tenure table (:func:`cocoviz.datasets.tenure.tenure_table`)
    epsilons : the tenure ε of every level, root first (pure ε: double-geometric noise)
    rhos, delta : instead of ``epsilons``, the tenure ρ of every level (ρ-zCDP: discrete Gaussian noise of
        σ² = Δ₂²/(2ρ)), and the δ of the budget's (ε, δ) reading
    seed : keys the fast sampler (the size release's seed may be reused: the keys differ)
    sampler : ``"fast"`` (exploration), ``"secure"`` or ``"opendp"`` (for release)
    ledger, dataset : a secure margin is recorded in the privacy ledger before its noise (as
        :func:`cocoviz.measure`: the default ledger unless ``ledger`` is given; False skips it, said in the
        budget's notes); ``dataset`` the identity of its persons

    Raises
    ------
    PrivacyError
        A secure margin over G taken from private rows (``shape.public_groups`` False), as
        :func:`cocoviz.measure` refuses for the size release: the shape of a release made by
        :func:`cocoviz.measure` carries its tree's flag (checked there in full).
    """
    shape = _as_shape(shape)
    eps, rho = _budget(shape, epsilons, rhos)
    cost = tenure_cost(shape, eps, rhos=rho, delta=delta)
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
    budget = cost.with_sampler(noise.name, notes)
    draw, more = begin_draw(ledger, _TenureRecord(shape, eps, rho), budget, secure=noise.secure, dataset=dataset)
    try:
        owners = _draw_owners(exact, noise, shape, eps, rho)
    except BaseException as exc:
        draw.fail(exc)
        raise
    draw.complete()
    budget = budget.with_sampler(noise.name, more) if more else budget
    return TenureMeasurements(shape, eps, owners, budget, rho)


class _TenureRecord:
    """What the ledger records of a tenure margin's draw: its public shape and per-level ε or ρ."""

    def __init__(self, shape: Shape, eps, rho):
        self.shape, self.eps, self.rho = shape, eps, rho

    def to_dict(self) -> dict:
        budget = {"rhos": list(self.rho)} if self.rho is not None else {"epsilons": list(self.eps)}
        return {"kind": "tenure margin", **budget, "shape": self.shape.to_dict()}


def _draw_owners(exact, noise, shape: Shape, eps, rho) -> tuple:
    return tuple(
        np.concatenate(
            [
                noise.draw(exact[level][k : k + 1], _level_noise(eps, rho, level), (level, k, TENURE_QUERY))
                for k in range(len(exact[level]))
            ]
        )
        if len(exact[level])
        else np.zeros(0, np.int64)
        for level in range(shape.depth + 1)
    )
