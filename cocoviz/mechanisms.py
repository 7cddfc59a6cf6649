"""The geometric mechanism, its two samplers, and the privacy budget report.

Every noisy measurement goes through :meth:`GeometricMechanism.measure`,
which states the measured quantity, its L1 sensitivity Δ and the budget ε,
adds double-geometric noise of scale Δ/ε, and records all of it for the
budget report.  Neighbouring databases differ by one person (METHOD.md).

Two samplers draw the noise, both exact on the integers (never rounded
floating-point Laplace):

* :class:`FastSampler` — numpy ``Generator``; seedable and fast, for
  exploration, teaching and experiments.  **Not for release**: a seeded
  pseudo-random generator is predictable.
* :class:`SecureSampler` — OpenDP's discrete Laplace (the same
  double-geometric law), sampled exactly from a cryptographically secure
  source.  About 0.2 M samples/s; for releases.

>>> mech = GeometricMechanism(FastSampler(np.random.default_rng(0)))
>>> noisy = mech.measure(np.array([5, 7]), sensitivity=1, epsilon=1.0, quantity="Hg", level=0, node=())
>>> mech.budget().total
1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from cocoviz.hierarchy import node_label

__all__ = [
    "FastSampler",
    "SecureSampler",
    "GeometricMechanism",
    "Measurement",
    "Budget",
    "double_geometric_variance",
    "double_geometric_pmf",
    "check_epsilon",
]


def check_epsilon(epsilon: float, what: str = "ε") -> float:
    """``epsilon`` as a float, refusing anything but a finite number > 0."""
    try:
        value = float(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {epsilon!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a finite number > 0, got {epsilon!r}")
    return value


def double_geometric_variance(scale: float) -> float:
    """Variance 2α/(1-α)² of double-geometric noise with scale Δ/ε, α = exp(-1/scale)."""
    alpha = math.exp(-1.0 / scale)
    return 2 * alpha / (1 - alpha) ** 2


def double_geometric_pmf(k: np.ndarray, scale: float) -> np.ndarray:
    """P(X = k) = (1-α)/(1+α) α^|k| with α = exp(-1/scale)."""
    alpha = math.exp(-1.0 / scale)
    return (1 - alpha) / (1 + alpha) * alpha ** np.abs(np.asarray(k, np.float64))


class FastSampler:
    """Double-geometric noise from a numpy ``Generator`` (exploration only, not for release).

    ``X = floor(E1 / λ) - floor(E2 / λ)`` with ``E1, E2`` standard exponential
    and ``λ = 1/scale``: each floor is geometric with ``P(≥ k) = α^k``, and the
    difference of two i.i.d. geometrics is double-geometric.
    """

    secure = False

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.name = f"fast: numpy {type(rng.bit_generator).__name__}, seeded (exploration only, not for release)"

    def spawn(self, n: int) -> list[FastSampler]:
        """``n`` independent samplers from child streams of this generator, in a fixed order."""
        return [FastSampler(child) for child in self.rng.spawn(n)]

    def __call__(self, values: np.ndarray, scale: float) -> np.ndarray:
        values = np.asarray(values, np.int64)
        rate = 1.0 / scale
        up = np.floor(self.rng.standard_exponential(values.shape) / rate)
        up -= np.floor(self.rng.standard_exponential(values.shape) / rate)
        return values + up.astype(np.int64)


class SecureSampler:
    """Exact double-geometric noise from a cryptographically secure source (OpenDP).

    OpenDP's ``make_laplace`` on an integer vector domain samples the
    discrete Laplace distribution exactly (Canonne, Kamath and Steinke's
    sampler over an OS CSPRNG); with scale Δ/ε it is the geometric mechanism.
    """

    secure = True
    name = "secure: OpenDP discrete Laplace (exact, OS CSPRNG)"

    def __init__(self) -> None:
        try:
            import opendp.prelude as dp
        except ImportError as exc:  # pragma: no cover - opendp is a requirement
            raise ValueError("the secure sampler needs the 'opendp' package") from exc
        dp.enable_features("contrib")
        self._dp = dp
        self._cache: dict[float, object] = {}

    def spawn(self, n: int) -> list[SecureSampler]:
        """The OS source has no state to split: every node shares this sampler."""
        return [self] * n

    def __call__(self, values: np.ndarray, scale: float) -> np.ndarray:
        values = np.asarray(values, np.int64)
        if values.size == 0:
            return values.copy()
        measurement = self._cache.get(scale)
        if measurement is None:
            dp = self._dp
            measurement = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T="i64")),
                                            dp.l1_distance(T="i64"), scale=float(scale))
            self._cache[scale] = measurement
        return np.asarray(measurement(values.ravel().tolist()), np.int64).reshape(values.shape)


@dataclass(frozen=True)
class Measurement:
    """One noisy measurement: what was measured, where, and at what privacy cost."""

    level: int | None  # None: a measurement of the whole data, not of one level's nodes
    node: tuple
    quantity: str
    cells: int
    sensitivity: float
    epsilon: float
    sampler: str

    @property
    def scale(self) -> float:
        """Noise scale Δ/ε of the double-geometric distribution."""
        return self.sensitivity / self.epsilon

    @property
    def noise_variance(self) -> float:
        return double_geometric_variance(self.scale)


@dataclass
class Budget:
    """The privacy budget report of a release.

    ε is spent per level by sequential composition across levels; the nodes of
    one level hold disjoint persons, so they compose in parallel and the level
    costs the largest ε any of its nodes used.  ``extra`` holds spending that
    is not a per-level measurement (e.g. a private algorithm selection).
    """

    measurements: list[Measurement] = field(default_factory=list)
    extra: dict[str, float] = field(default_factory=dict)
    composition: str = ("sequential across levels, parallel across the disjoint nodes of a level; "
                        "everything after the noisy measurements is post-processing")

    def per_level(self) -> dict[int, float]:
        """ε spent at each measured level."""
        spent: dict[int, float] = {}
        for m in self.measurements:
            if m.level is not None:
                spent[m.level] = max(spent.get(m.level, 0.0), m.epsilon)
        return dict(sorted(spent.items()))

    @property
    def total(self) -> float:
        """Total ε spent: the sum over levels, whole-data measurements and extra spending."""
        whole = sum(m.epsilon for m in self.measurements if m.level is None)
        return float(sum(self.per_level().values()) + whole + sum(self.extra.values()))

    @property
    def samplers(self) -> list[str]:
        return sorted({m.sampler for m in self.measurements})

    def to_frame(self) -> pd.DataFrame:
        """One row per measurement: level, node, quantity, cells, Δ, ε, scale, noise variance, sampler."""
        return pd.DataFrame({
            "level": [m.level for m in self.measurements],
            "node": [node_label(m.node) for m in self.measurements],
            "quantity": [m.quantity for m in self.measurements],
            "cells": [m.cells for m in self.measurements],
            "sensitivity": [m.sensitivity for m in self.measurements],
            "epsilon": [m.epsilon for m in self.measurements],
            "scale": [m.scale for m in self.measurements],
            "noise_variance": [m.noise_variance for m in self.measurements],
            "sampler": [m.sampler for m in self.measurements],
        })

    def summary(self) -> pd.DataFrame:
        """One row per level and quantity: nodes measured, cells, Δ, ε, scale and sampler."""
        frame = self.to_frame()
        if frame.empty:
            return frame
        return (frame.groupby(["level", "quantity", "sensitivity", "epsilon", "scale", "sampler"], sort=True,
                              dropna=False)
                .agg(nodes=("node", "size"), cells=("cells", "sum")).reset_index()
                [["level", "quantity", "nodes", "cells", "sensitivity", "epsilon", "scale", "sampler"]])

    def describe(self) -> str:
        """The report as plain text."""
        lines = [f"total ε spent: {self.total:g} ({self.composition})"]
        for level, eps in self.per_level().items():
            lines.append(f"  level {level}: ε = {eps:g}")
        for name, eps in self.extra.items():
            lines.append(f"  {name}: ε = {eps:g}")
        for row in self.summary().itertuples(index=False):
            where = "whole data" if pd.isna(row.level) else f"level {int(row.level)}"
            lines.append(f"  {where}: {row.quantity} on {row.nodes} node(s), {row.cells:,} cells, "
                         f"Δ = {row.sensitivity:g}, scale Δ/ε = {row.scale:g}, sampler {row.sampler}")
        return "\n".join(lines)


class GeometricMechanism:
    """Adds double-geometric noise of scale Δ/ε and records every measurement."""

    def __init__(self, sampler: FastSampler | SecureSampler, _measurements: list[Measurement] | None = None):
        self.sampler = sampler
        self._measurements: list[Measurement] = [] if _measurements is None else _measurements

    def spawn(self, n: int) -> list[GeometricMechanism]:
        """``n`` mechanisms with independent noise streams that record into this one's report.

        Each node of a level gets its own, so nodes can be estimated in
        parallel and the release still depends only on the seed.
        """
        return [GeometricMechanism(s, self._measurements) for s in self.sampler.spawn(n)]

    @property
    def measurements(self) -> tuple[Measurement, ...]:
        """Every measurement recorded so far, in the order recorded."""
        return tuple(self._measurements)

    def record(self, measurements: Sequence[Measurement]) -> None:
        """Add measurements made earlier with the same noise (a reused, cached estimate) to the report."""
        self._measurements.extend(measurements)

    def measure(self, values: np.ndarray, *, sensitivity: float, epsilon: float, quantity: str,
                level: int | None, node: tuple) -> np.ndarray:
        """``values`` plus independent double-geometric noise of scale ``sensitivity / epsilon``."""
        epsilon = check_epsilon(epsilon)
        scale = sensitivity / epsilon
        self._measurements.append(Measurement(level, tuple(node), quantity, int(np.size(values)),
                                              float(sensitivity), epsilon, self.sampler.name))
        return self.sampler(values, scale)

    def budget(self) -> Budget:
        # Parallel estimation appends in completion order; report in a fixed one.
        order = sorted(self._measurements, key=lambda m: (m.level is None, m.level or 0, m.node, m.quantity))
        return Budget(order)
