"""The privacy budget report: what each noisy measurement costs, and the total.

A :class:`Budget` is known before any noise is drawn (``Plan.cost()``) and is
carried unchanged by the release that spends it.  Each :class:`Charge` names
one measurement: where (level, node), what (the query), how many cells, its L1
sensitivity Δ under our neighbours (one person added or removed), the ε it
spends and the resulting noise scale Δ/ε.

>>> budget = Budget((Charge(0, (), "Hg", 4, 1, 0.5), Charge(1, ("a",), "Hc[0..9]", 10, 1, 1.0)))
>>> budget.total, budget.per_level()
(1.5, {0: 0.5, 1: 1.0})
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pandas as pd

from cocoviz.hierarchy import node_label

__all__ = ["Charge", "Budget", "double_geometric_variance", "NEIGHBOURS"]

#: The neighbour relation every charge's Δ is computed under (METHOD.md, Privacy).
NEIGHBOURS = (
    "person level: neighbouring datasets differ by one person added to or removed from one group "
    "(the hierarchy and G per region are public)"
)

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
    """One noisy measurement's cost: where, what, how many cells, Δ and ε.

    ``level`` is None for a measurement of the whole data rather than of one
    level's disjoint nodes (e.g. a selection's scores): those add up.  One charge
    may stand for the same query on ``nodes`` disjoint nodes of a level (``node``
    then is ``()`` unless the level has one node): ``cells`` is their total and
    they compose in parallel, so it costs ε once.
    """

    level: int | None
    node: tuple
    quantity: str
    cells: int
    sensitivity: float
    epsilon: float
    noise_scale: float | None = None  # when the mechanism's scale is not Δ/ε (e.g. AboveThreshold's 4Δ/ε)
    nodes: int = 1

    @classmethod
    def for_level(
        cls, level: int, paths: Sequence[tuple], quantity: str, cells: int, sensitivity: float, epsilon: float
    ) -> Charge:
        """One charge for a query on every node of a level (``paths``: its nodes; named when there is one)."""
        nodes = len(paths)
        node = tuple(paths[0]) if nodes == 1 else ()
        return cls(level, node, quantity, int(cells), float(sensitivity), float(epsilon), nodes=nodes)

    @property
    def where(self) -> str:
        """The node's name, or how many nodes of the level the charge covers."""
        return node_label(self.node) if self.nodes == 1 else f"all {self.nodes:,} nodes"

    @property
    def scale(self) -> float:
        """Noise scale of the double-geometric distribution: Δ/ε unless the mechanism says otherwise."""
        return self.noise_scale if self.noise_scale is not None else self.sensitivity / self.epsilon

    @property
    def noise_variance(self) -> float:
        return double_geometric_variance(self.scale)


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

    def per_level(self) -> dict[int, float]:
        """ε spent at each measured level: per quantity the largest ε of its nodes (parallel), summed over
        the quantities measured at the level (sequential, e.g. a private K and then Hc)."""
        largest: dict[tuple[int, str], float] = {}
        for c in self.charges:
            if c.level is not None:
                largest[(c.level, c.quantity)] = max(largest.get((c.level, c.quantity), 0.0), c.epsilon)
        spent: dict[int, list[float]] = {}
        for (level, _), eps in largest.items():
            spent.setdefault(level, []).append(eps)
        return {level: math.fsum(eps) for level, eps in sorted(spent.items())}

    @property
    def total(self) -> float:
        """Total ε spent: the sum over levels, whole-data measurements and extra spending."""
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
            }
        )

    def summary(self) -> pd.DataFrame:
        """One row per level and quantity: nodes measured, cells, Δ, ε and scale."""
        frame = self.to_frame()
        if frame.empty:
            return frame
        return (
            frame.groupby(["level", "quantity", "sensitivity", "epsilon", "scale"], sort=False, dropna=False)
            .agg(nodes=("nodes", "sum"), cells=("cells", "sum"))
            .reset_index()[["level", "quantity", "nodes", "cells", "sensitivity", "epsilon", "scale"]]
        )

    def describe(self) -> str:
        """The report as plain text."""
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
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready form; :meth:`from_dict` gives back an equal budget."""
        return {
            "charges": [
                [c.level, list(c.node), c.quantity, c.cells, c.sensitivity, c.epsilon, c.noise_scale, c.nodes]
                for c in self.charges
            ],
            "extra": [list(e) for e in self.extra],
            "composition": self.composition,
            "sampler": self.sampler,
            "notes": list(self.notes),
            "total": self.total,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Budget:
        # Releases saved before charges carried a node count have seven fields: one node each.
        charges = tuple(
            Charge(
                level, tuple(node), quantity, int(cells), float(delta), float(eps), scale, int(nodes[0] if nodes else 1)
            )
            for level, node, quantity, cells, delta, eps, scale, *nodes in data["charges"]
        )
        return cls(
            charges,
            tuple((str(n), float(e)) for n, e in data["extra"]),
            data["composition"],
            data["sampler"],
            tuple(data["notes"]),
        )
