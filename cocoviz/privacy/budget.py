"""The privacy budget report: what each noisy measurement costs, and the total.

A :class:`Budget` is known before any noise is drawn (``Plan.cost()``) and is
carried unchanged by the release that spends it.  Each :class:`Charge` names
one measurement: where (level, node), what (the query), how many cells, its
sensitivity under its neighbour relation (L1 Δ for double-geometric noise, L2 Δ₂
for the discrete Gaussian), the ε or ρ it spends and the resulting noise scale.
A budget is accounted in pure ε (ε adds across levels) or in ρ-zCDP (ρ adds
across levels; pure-ε steps inside enter as ρ = ε²/2; :mod:`cocoviz.privacy.accounting`),
read as (ε, δ)-DP at the budget's δ.

>>> budget = Budget((Charge(0, (), "Hg", 4, 1, 0.5), Charge(1, ("a",), "Hc[0..9]", 10, 1, 1.0)))
>>> budget.total, budget.per_level()
(1.5, {0: 0.5, 1: 1.0})
>>> zcdp = Budget((Charge(0, (), "Hg", 4, 1, None, rho=0.125, noise="gaussian"),), accounting="zCDP")
>>> zcdp.total_rho, round(zcdp.epsilon_delta(1e-10), 3), zcdp.charges[0].scale  # σ = Δ₂/√(2ρ)
(0.125, 3.244, 2.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import pandas as pd

from cocoviz.errors import ParameterError
from cocoviz.hierarchy import node_label
from cocoviz.privacy.accounting import ACCOUNTING, DEFAULT_DELTA, check_delta, rho_of_epsilon, zcdp_epsilon
from cocoviz.privacy.noise.samplers import discrete_gaussian_variance

__all__ = ["Charge", "Budget", "double_geometric_variance", "PERSONS", "HOUSEHOLDS", "NOISES", "NEIGHBOURS"]

#: The neighbour relation of the person-level measurements: one person added to or removed from one group.
PERSONS = "persons: one person added to or removed from one group"
#: The neighbour relation of the tenure margin: one household's record differs (a person and/or its tenure).
HOUSEHOLDS = "household records: one household's record differs (one person added or removed and/or its tenure)"
#: The noises a charge may draw.
NOISES = ("laplace", "gaussian")
#: A size release's neighbour relation as the ledger records it (METHOD.md, Privacy).
NEIGHBOURS = f"{PERSONS} (the hierarchy and G per region are public)"

#: How the charges of one release compose.
COMPOSITION = (
    "sequential across levels, parallel across the disjoint nodes of a level; "
    "everything after the noisy measurements is post-processing"
)


def double_geometric_variance(scale: float) -> float:
    """Variance 2α/(1-α)² of double-geometric noise with scale Δ/ε, α = exp(-1/scale).

    >>> round(double_geometric_variance(1.0), 6)
    1.841347
    """
    alpha = math.exp(-1.0 / scale)
    return 2 * alpha / (1 - alpha) ** 2


@dataclass(frozen=True)
class Charge:
    """One noisy measurement's cost: where, what, how many cells, its sensitivity and its ε or ρ.

    ``level`` is None for a measurement of the whole data rather than of one
    level's disjoint nodes (e.g. a selection's scores): those add up.  One charge
    may stand for the same query on ``nodes`` disjoint nodes of a level (``node``
    then is ``()`` unless the level has one node): ``cells`` is their total and
    they compose in parallel, so it costs ε once.

    ``noise`` is ``"laplace"`` (double-geometric: ``sensitivity`` is the L1 Δ and ``epsilon`` the
    ε spent; in a zCDP budget ``rho`` is then ε²/2) or ``"gaussian"`` (discrete Gaussian:
    ``sensitivity`` is the L2 Δ₂, ``rho`` the ρ spent, ``epsilon`` None).  ``relation`` names the
    neighbours the sensitivity is taken under.
    """

    level: int | None
    node: tuple
    quantity: str
    cells: int
    sensitivity: float
    epsilon: float | None
    noise_scale: float | None = None  # when the mechanism's scale is not Δ/ε (e.g. AboveThreshold's 4Δ/ε)
    nodes: int = 1
    rho: float | None = None
    noise: str = "laplace"
    relation: str = PERSONS

    def __post_init__(self):
        if self.noise not in NOISES:
            raise ParameterError(f"a charge's noise is one of {NOISES}, got {self.noise!r}")
        if self.noise == "gaussian" and (self.rho is None or self.epsilon is not None):
            raise ParameterError("a Gaussian charge spends ρ (and no pure ε)")
        if self.noise == "laplace" and self.epsilon is None:
            raise ParameterError("a Laplace charge spends ε")

    @classmethod
    def for_level(
        cls,
        level: int,
        paths: Sequence[tuple],
        quantity: str,
        cells: int,
        sensitivity: float,
        epsilon: float | None,
        **noise,
    ) -> Charge:
        """One charge for a query on every node of a level (``paths``: its nodes; named when there is one);
        ``noise`` may give ``rho``, ``noise`` and ``relation``."""
        nodes = len(paths)
        node = tuple(paths[0]) if nodes == 1 else ()
        eps = None if epsilon is None else float(epsilon)
        return cls(level, node, quantity, int(cells), float(sensitivity), eps, nodes=nodes, **noise)

    @property
    def where(self) -> str:
        """The node's name, or how many nodes of the level the charge covers."""
        return node_label(self.node) if self.nodes == 1 else f"all {self.nodes:,} nodes"

    @property
    def scale(self) -> float:
        """Noise scale: Δ/ε of the double-geometric (unless the mechanism says otherwise); σ = Δ₂/√(2ρ)."""
        if self.noise == "gaussian":
            return self.sensitivity / math.sqrt(2 * self.rho)
        return self.noise_scale if self.noise_scale is not None else self.sensitivity / self.epsilon

    @property
    def noise_variance(self) -> float:
        if self.noise == "gaussian":
            return discrete_gaussian_variance(self.sensitivity**2 / (2 * self.rho))
        return double_geometric_variance(self.scale)

    @property
    def zcdp_rho(self) -> float:
        """ρ spent in zCDP terms: the Gaussian's ρ, or ε²/2 for a pure-ε step."""
        return self.rho if self.rho is not None else rho_of_epsilon(self.epsilon)


@dataclass(frozen=True)
class Budget:
    """The privacy budget report of a release: its charges, how they compose, and the sampler.

    ε is spent per level by sequential composition across levels; the nodes of
    one level hold disjoint persons, so they compose in parallel and the level
    costs the largest ε any of its nodes used.  Charges with ``level=None``
    and ``extra`` spending (e.g. candidate releases of a selection) add up.
    ``notes`` say what the report cannot show as a number (e.g. a public input
    taken from the data).
    """

    charges: tuple[Charge, ...] = ()
    extra: tuple[tuple[str, float], ...] = ()
    composition: str = COMPOSITION
    sampler: str | None = None
    notes: tuple[str, ...] = field(default=())
    accounting: str = "pure-ε"
    delta: float = DEFAULT_DELTA

    def __post_init__(self):
        if self.accounting not in ACCOUNTING:
            raise ParameterError(f"accounting must be one of {ACCOUNTING}, got {self.accounting!r}")
        check_delta(self.delta)
        if self.accounting == "pure-ε" and any(c.noise == "gaussian" for c in self.charges):
            raise ParameterError("Gaussian noise is accounted in zCDP: give accounting='zCDP'")

    def _compose(self, cost: Callable[[Charge], float]) -> dict[int, float]:
        """Per measured level: per quantity the largest cost of its nodes (parallel), summed over quantities."""
        largest: dict[tuple[int, str], float] = {}
        for c in self.charges:
            if c.level is not None:
                largest[(c.level, c.quantity)] = max(largest.get((c.level, c.quantity), 0.0), cost(c))
        spent: dict[int, list[float]] = {}
        for (level, _), value in largest.items():
            spent.setdefault(level, []).append(value)
        return {level: math.fsum(values) for level, values in sorted(spent.items())}

    def per_level_rho(self) -> dict[int, float]:
        """ρ spent at each measured level (zCDP terms: a pure-ε step counts ε²/2)."""
        return self._compose(lambda c: c.zcdp_rho)

    @property
    def total_rho(self) -> float:
        """Total ρ (zCDP): the sum over levels, whole-data measurements and extra spending (ε²/2 each)."""
        whole = [c.zcdp_rho for c in self.charges if c.level is None]
        extra = [rho_of_epsilon(eps) for _, eps in self.extra]
        return float(math.fsum([*self.per_level_rho().values(), *whole, *extra]))

    def epsilon_delta(self, delta: float | None = None) -> float:
        """The ε of the (ε, δ)-DP this budget gives at ``delta`` (default: the budget's δ).

        zCDP: Canonne, Kamath and Steinke's conversion of :attr:`total_rho`
        (:func:`cocoviz.privacy.accounting.zcdp_epsilon`); pure ε: the total ε itself (it holds for every δ).
        """
        delta = self.delta if delta is None else check_delta(delta)
        return zcdp_epsilon(self.total_rho, delta) if self.accounting == "zCDP" else self.total

    def per_level(self) -> dict[int, float]:
        """ε spent at each measured level: per quantity the largest ε of its nodes (parallel), summed over
        the quantities measured at the level (sequential, e.g. a private K and then Hc).  In a zCDP budget:
        the (ε, δ) reading of each level's ρ alone, at the budget's δ."""
        if self.accounting == "zCDP":
            return {level: zcdp_epsilon(rho, self.delta) for level, rho in self.per_level_rho().items()}
        return self._compose(lambda c: c.epsilon)

    @property
    def total(self) -> float:
        """Total ε spent: the sum over levels, whole-data measurements and extra spending.  In a zCDP budget:
        the ε of its (ε, δ) reading at the budget's δ (:meth:`epsilon_delta`); :attr:`total_rho` is the budget."""
        if self.accounting == "zCDP":
            return self.epsilon_delta()
        whole = [c.epsilon for c in self.charges if c.level is None]
        return float(math.fsum([*self.per_level().values(), *whole, *(eps for _, eps in self.extra)]))

    @property
    def cells(self) -> int:
        """Noise cells drawn in all."""
        return sum(c.cells for c in self.charges)

    def with_sampler(self, sampler: str, notes: tuple[str, ...] = ()) -> Budget:
        """The same charges, as spent by ``sampler``."""
        return replace(self, sampler=sampler, notes=(*self.notes, *notes))

    def to_frame(self) -> pd.DataFrame:
        """One row per charge: level, node (or how many), nodes, quantity, cells, Δ, ε, scale, noise variance."""
        return pd.DataFrame(
            {
                "level": pd.array([c.level for c in self.charges], dtype="Int64"),
                "node": [c.where for c in self.charges],
                "nodes": [c.nodes for c in self.charges],
                "quantity": [c.quantity for c in self.charges],
                "cells": [c.cells for c in self.charges],
                "sensitivity": [c.sensitivity for c in self.charges],
                "epsilon": [c.epsilon for c in self.charges],
                "scale": [c.scale for c in self.charges],
                "noise_variance": [c.noise_variance for c in self.charges],
                "rho": [c.zcdp_rho if self.accounting == "zCDP" else None for c in self.charges],
                "noise": [c.noise for c in self.charges],
                "relation": [c.relation for c in self.charges],
            }
        )

    def summary(self) -> pd.DataFrame:
        """One row per level and quantity: nodes measured, cells, Δ and its norm (L1 or L2), ρ (under zCDP)
        and ε, scale, the noise law and the neighbour relation, so the report states each measurement's
        whole terms."""
        frame = self.to_frame()
        if frame.empty:
            return frame
        # Laplace-type noise is calibrated to the L1 sensitivity, the Gaussian to the L2.
        frame["norm"] = frame["noise"].map({"laplace": "L1", "gaussian": "L2"})
        spent = ["rho", "epsilon"] if self.accounting == "zCDP" else ["epsilon"]
        keys = ["level", "quantity", "sensitivity", "norm", *spent, "scale", "noise", "relation"]
        order = ["level", "quantity", "nodes", "cells", *keys[2:]]
        return (
            frame.groupby(keys, sort=False, dropna=False)
            .agg(nodes=("nodes", "sum"), cells=("cells", "sum"))
            .reset_index()[order]
        )

    def describe(self) -> str:
        """The report as plain text."""
        if self.accounting == "zCDP":
            return self._describe_zcdp()
        lines = [f"total ε spent: {self.total:g} ({self.composition})"]
        if self.sampler:
            lines.append(f"  sampler: {self.sampler}")
        for level, eps in self.per_level().items():
            lines.append(f"  level {level}: ε = {eps:g}")
        for name, eps in self.extra:
            lines.append(f"  {name}: ε = {eps:g}")
        for row in self.summary().itertuples(index=False):
            where = "whole data" if pd.isna(row.level) else f"level {int(row.level)}"
            lines.append(
                f"  {where}: {row.quantity} on {row.nodes} node(s), {row.cells:,} cells, "
                f"Δ = {row.sensitivity:g}, scale Δ/ε = {row.scale:g}"
            )
        lines.extend(f"  note: {note}" for note in self.notes)
        relations = sorted({c.relation for c in self.charges})
        if relations != [PERSONS]:
            lines.extend(f"  neighbours: {relation}" for relation in relations)
        return "\n".join(lines)

    def _describe_zcdp(self) -> str:
        lines = [
            f"total ρ spent: {self.total_rho:g} (ρ-zCDP; {self.composition}; pure-ε steps count ε²/2)",
            f"  as (ε, δ)-DP: ε = {self.epsilon_delta():.4g} at δ = {self.delta:g} (Canonne-Kamath-Steinke conversion)",
        ]
        if self.sampler:
            lines.append(f"  sampler: {self.sampler}")
        for level, rho in self.per_level_rho().items():
            lines.append(f"  level {level}: ρ = {rho:g}")
        for name, eps in self.extra:
            lines.append(f"  {name}: ε = {eps:g}, ρ = {rho_of_epsilon(eps):g}")
        for c in self.charges:
            where = "whole data" if c.level is None else f"level {c.level}"
            if c.noise == "gaussian":
                cost = f"Δ₂ = {c.sensitivity:g}, ρ = {c.rho:g}, discrete Gaussian σ = {c.scale:g}"
            else:
                cost = f"Δ = {c.sensitivity:g}, ε = {c.epsilon:g} (ρ = {c.zcdp_rho:g}), scale Δ/ε = {c.scale:g}"
            lines.append(
                f"  {where}: {c.quantity} on {c.nodes} node(s), {c.cells:,} cells, {cost}; neighbours: {c.relation}"
            )
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready form; :meth:`from_dict` gives back an equal budget.  A pure-ε budget keeps the form of
        releases saved before zCDP (eight fields a charge); a zCDP one adds ρ, noise and relation to each
        charge, and the accounting, δ, total ρ and the (ε, δ) reading."""
        zcdp = self.accounting == "zCDP"
        data = {
            "charges": [
                [c.level, list(c.node), c.quantity, c.cells, c.sensitivity, c.epsilon, c.noise_scale, c.nodes]
                + ([c.rho, c.noise, c.relation] if zcdp or c.relation != PERSONS else [])
                for c in self.charges
            ],
            "extra": [list(e) for e in self.extra],
            "composition": self.composition,
            "sampler": self.sampler,
            "notes": list(self.notes),
            "total": self.total,
        }
        if zcdp:
            data.update(accounting=self.accounting, delta=self.delta, total_rho=self.total_rho)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Budget:
        # Releases saved before charges carried a node count have seven fields: one node each;
        # before zCDP, eight (no ρ, noise or relation).
        def charge(level, node, quantity, cells, delta, eps, scale, nodes=1, rho=None, noise="laplace", rel=PERSONS):
            eps = None if eps is None else float(eps)
            rho = None if rho is None else float(rho)
            return Charge(
                level, tuple(node), quantity, int(cells), float(delta), eps, scale, int(nodes), rho, noise, rel
            )

        return cls(
            tuple(charge(*row) for row in data["charges"]),
            tuple((str(n), float(e)) for n, e in data["extra"]),
            data["composition"],
            data["sampler"],
            tuple(data["notes"]),
            data.get("accounting", "pure-ε"),
            float(data.get("delta", DEFAULT_DELTA)),
        )
