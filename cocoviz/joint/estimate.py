"""Post-processing: per region, the size × tenure table from two released margins and a public prior (IDE).

Inputs, all public: a :class:`~cocoviz.release.release.Release` (its consistent size histograms, binned
into the public size classes: the **size margin**), :class:`~cocoviz.joint.measure.TenureMeasurements`
(made consistent by :func:`~cocoviz.joint.margin.consistent_owners`: the **tenure margin**) and a
prior.  Per region, IDE (:func:`cocoviz.methods.priors.ide`) runs over the two partitions (rows: size
classes; columns: owner, renter) with targets ``n̂ / G`` and ``(Ô, G − Ô) / G``.  Both margins
sum to G, so they are feasible together and, the prior being positive, IDE is iterative
proportional fitting and converges to the table closest to the prior (KL) with both margins.
The table is then made whole: each class's owners are its share of the fitted table, shifted so
the owners add up to Ô, within ``0 ≤ owners ≤ n̂`` (:func:`~cocoviz.joint.margin.split_total`),
so **both margins are kept exactly** and every cell is a whole number ≥ 0.

**Priors.**  ``"independent"`` — no prior: the product of the two margins, ``n̂ Ô / G``;
``"uniform"`` — IDE from the uniform prior, which is the same table (the maximum-entropy table
with two given margins is their product): shown to make that plain; a mapping ``{node path:
(classes, 2) array}`` — a public table per region, e.g. the previous census's
(:func:`cocoviz.datasets.tenure.previous_census_tenure` through
:func:`~cocoviz.joint.domain.node_tables`).  A prior only shapes the **interaction** of size and
tenure (the owner rate by size): both margins come from the measurements whatever it says.

**Consistency.**  The size margin is consistent across the hierarchy (as released) and so is the
tenure margin after :func:`~cocoviz.joint.margin.consistent_owners`' top-down step.  The cells:

* ``cells="sum of children"`` (the default with top-down margins): the regions of the deepest
  level are fitted as above, and every other region's table is the **sum of its children's**.
  Its margins are then the sums of the children's margins, which are its own released margins
  (both margins add up level by level), so every table keeps its margins exactly, is whole and
  ≥ 0, and **the children's cells add up to the parent's, cell by cell**.  The priors of the
  regions above the deepest level are not used: a parent's size × tenure interaction is the sum
  of its children's.
* ``cells="per region"`` (the default when the tenure margin is not made consistent): each region's
  table is fitted on its own; the children's tables need not add up to the parent's (only their
  margins do).

Never reads private data: a :class:`~cocoviz.hierarchy.Hierarchy` or a data frame passed as a
prior (or as a region's prior) is refused with :class:`~cocoviz.errors.PrivacyError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from cocoviz.errors import ParameterError, PrivacyError
from cocoviz.hierarchy import Hierarchy, node_label
from cocoviz.joint.domain import SIZE_EDGES, class_counts, class_labels
from cocoviz.joint.margin import consistent_owners, split_total
from cocoviz.joint.measure import TenureMeasurements
from cocoviz.methods.priors import ide, marginal_blocks
from cocoviz.privacy.budget import Budget
from cocoviz.release.release import Release

__all__ = [
    "PRIOR_CHOICES",
    "CELLS",
    "ITERATIONS",
    "JointRelease",
    "fit_table",
    "joint_budget",
    "estimate_joint",
    "joint_sampler",
]

#: How the cells of the regions' tables relate across levels (module docstring).
CELLS = ("sum of children", "per region")
#: The named priors.
PRIOR_CHOICES = ("independent", "uniform")
#: IDE updates per region (alternating the two margins): 2-way IPF settles well before.
ITERATIONS = 20


@dataclass(frozen=True)
class JointRelease:
    """Per region, the released size × tenure table (whole numbers) and its two margins.

    ``tables[path]`` is a ``(classes, 2)`` int64 array (owners, renters per size class);
    ``budget`` is the size release's plus the tenure margin's (:func:`joint_budget`: in ρ-zCDP when either
    is); ``samplers`` names the sampler of each part (``"size release"``, ``"tenure margin"``), and
    ``budget.sampler`` is their label (:func:`joint_sampler`: it starts with ``"fast"`` when a fast sampler
    drew any part).
    """

    shape: object
    edges: tuple[int, ...]
    prior: str
    tables: dict[tuple[str, ...], np.ndarray] = field(repr=False)
    budget: Budget = field(repr=False)
    consistency: str = "top-down"
    samplers: dict[str, str] = field(default_factory=dict)
    cells: str = "per region"

    @property
    def sampler(self) -> str:
        """The label of the samplers that drew the parts (:func:`joint_sampler`)."""
        return self.budget.sampler or ""

    def table(self, node: Sequence[str]) -> np.ndarray:
        return self.tables[tuple(str(x) for x in node)]

    def size_margin(self, node: Sequence[str]) -> np.ndarray:
        return self.table(node).sum(axis=1)

    def owners(self, node: Sequence[str]) -> int:
        return int(self.table(node)[:, 0].sum())

    def to_frame(self) -> pd.DataFrame:
        """One row per node, size class and tenure: level, node, size class, tenure, count."""
        labels = class_labels(self.edges)
        rows = [
            (len(path), node_label(path), labels[c], tenure, int(t[c, j]))
            for path, t in self.tables.items()
            for c in range(t.shape[0])
            for j, tenure in enumerate(("owner", "renter"))
        ]
        return pd.DataFrame(rows, columns=["level", "node", "size_class", "tenure", "count"])


def _refuse_private(value: object, what: str) -> None:
    if isinstance(value, (Hierarchy, pd.DataFrame)):
        raise PrivacyError(
            f"{what} is a {type(value).__name__}: post-processing takes released numbers and a public prior, "
            "never the data being protected"
        )


def fit_table(
    size_margin: np.ndarray, owners: int, prior: object = "independent", iterations: int = ITERATIONS
) -> np.ndarray:
    """One region's whole-number ``(classes, 2)`` table with row sums ``size_margin`` and ``owners`` owners.

    ``prior``: ``"independent"``, ``"uniform"`` or a public ``(classes, 2)`` array (module docstring).

    >>> fit_table(np.array([6, 4]), 5).tolist()
    [[3, 3], [2, 2]]
    >>> fit_table(np.array([6, 4]), 5, np.array([[0.5, 0.1], [0.1, 0.3]])).tolist()
    [[4, 2], [1, 3]]
    """
    _refuse_private(prior, "the prior")
    n = np.asarray(size_margin, np.int64)
    groups, owners = int(n.sum()), int(owners)
    if not 0 <= owners <= groups:
        raise ParameterError(f"owners must lie in [0, G = {groups}], got {owners}")
    if groups == 0:
        return np.zeros((n.size, 2), np.int64)
    if isinstance(prior, str):
        if prior not in PRIOR_CHOICES:
            raise ParameterError(f"a named prior must be one of {PRIOR_CHOICES}, got {prior!r}")
        share = np.full(n.size, owners / groups)
        if prior == "uniform":
            q, _ = ide(np.ones(2 * n.size), _PARTS(n.size), _targets(n, owners), iterations, stage1="partition")
            share = _owner_share(q.reshape(n.size, 2), owners / groups)
    else:
        p = np.asarray(prior, dtype=np.float64) if isinstance(prior, (np.ndarray, list, tuple)) else prior
        if not isinstance(p, np.ndarray) or p.shape != (n.size, 2):
            raise ParameterError(f"a region's prior must be a ({n.size}, 2) array of public numbers")
        q, _ = ide(p.ravel(), _PARTS(n.size), _targets(n, owners), iterations, stage1="partition")
        share = _owner_share(q.reshape(n.size, 2), owners / groups)
    own = split_total(owners, share * n, n)
    return np.column_stack([own, n - own])


def _PARTS(classes: int) -> list[list[np.ndarray]]:  # noqa: N802 - a constant-like builder
    return [marginal_blocks((classes, 2), [0]), marginal_blocks((classes, 2), [1])]


def _targets(n: np.ndarray, owners: int) -> list[np.ndarray]:
    g = float(n.sum())
    return [n / g, np.array([owners, g - owners]) / g]


def _owner_share(q: np.ndarray, fallback: float) -> np.ndarray:
    """The owner share of every class in a fitted table (the overall share where a class is empty)."""
    row = q.sum(axis=1)
    return np.divide(q[:, 0], row, out=np.full(row.size, fallback), where=row > 0)


def joint_sampler(samplers: Mapping[str, str | None]) -> str:
    """One label for the samplers of a table's parts: the common name, or every part's, fast first.

    A fast (seeded) sampler anywhere makes the whole table exploration only, and the label says so
    at its start, where the pages look (``label.startswith("fast")``).

    >>> joint_sampler({"size release": "secure: exact", "tenure margin": "secure: exact"})
    'secure: exact'
    >>> joint_sampler({"size release": "secure: exact", "tenure margin": "fast: seeded"})
    'fast sampler in part (exploration only, not for release): size release: secure: exact; tenure margin: fast: seeded'
    """
    names = {part: name or "unknown" for part, name in samplers.items()}
    if len(set(names.values())) == 1:
        return next(iter(names.values()))
    parts = "; ".join(f"{part}: {name}" for part, name in names.items())
    if any(not name.startswith(("secure", "opendp")) for name in names.values()):
        return f"fast sampler in part (exploration only, not for release): {parts}"
    return f"secure samplers: {parts}"


def joint_budget(size: Budget, tenure: Budget, sampler: str | None = None) -> Budget:
    """The budget of a joint table: the size release's charges and the tenure margin's, composed.

    Known before any noise from ``Plan.cost()`` and :func:`~cocoviz.joint.measure.tenure_cost`, it is the
    joint release's budget (``sampler`` aside).  Pure ε when both parts are; ρ-zCDP when either is (a pure-ε
    part then counts ε²/2 per level, as pure-ε steps do inside a zCDP release), read as (ε, δ) at the zCDP
    parts' δ, which must agree.

    >>> import cocoviz
    >>> from cocoviz.joint.measure import tenure_cost
    >>> tree = cocoviz.load_dataset("toy")
    >>> size = cocoviz.Plan.build(tree, rhos=[0.5, 0.5], methods=["Hc", "Hc"], max_size=4).cost()
    >>> tenure = tenure_cost(cocoviz.Shape.of(tree), [0.5, 0.5])  # the tenure margin in pure ε: ε²/2 per level
    >>> both = joint_budget(size, tenure)
    >>> both.accounting, both.total_rho, both.delta
    ('zCDP', 1.25, 1e-10)
    """
    zcdp = [b for b in (size, tenure) if b.accounting == "zCDP"]
    deltas = {b.delta for b in zcdp}
    if len(deltas) > 1:
        raise ParameterError(
            f"the size release and the tenure margin read their zCDP budgets at different δ ({sorted(deltas)}): "
            "give both the same delta"
        )
    return Budget(
        (*size.charges, *tenure.charges),
        size.extra,
        size.composition,
        sampler,
        tuple(dict.fromkeys((*size.notes, *tenure.notes))),
        "zCDP" if zcdp else "pure-ε",
        zcdp[0].delta if zcdp else size.delta,
    )


def estimate_joint(
    release: Release,
    measurements: TenureMeasurements,
    prior: object = "independent",
    *,
    consistency: str = "top-down",
    edges: Sequence[int] = SIZE_EDGES,
    iterations: int = ITERATIONS,
    cells: str | None = None,
) -> JointRelease:
    """Every region's size × tenure table: the post-processing step (module docstring).

    Parameters
    ----------
    release : the released size histograms (consistent, e.g. top-down)
    measurements : the noisy tenure margin of the same hierarchy
    prior : ``"independent"``, ``"uniform"`` or ``{node path: (classes, 2) public array}`` (every node)
    consistency : of the tenure margin, ``"top-down"`` or ``"none"``
    edges : the public size classes' lower edges
    iterations : IDE updates per region
    cells : ``"sum of children"`` (every parent's table the sum of its children's: consistent cell by
        cell; needs top-down margins) or ``"per region"``; None: the first when ``consistency`` is
        ``"top-down"``, else the second
    """
    _refuse_private(release, "the release")
    _refuse_private(prior, "the prior")
    if not isinstance(release, Release):
        raise ParameterError(f"need a Release of the size histograms, got {type(release).__name__}")
    if not isinstance(measurements, TenureMeasurements):
        raise ParameterError(f"need TenureMeasurements, got {type(measurements).__name__}")
    shape = release.plan.shape
    if not shape.same_as(measurements.shape):
        raise ParameterError("the release and the tenure measurements are of different hierarchies")
    if not isinstance(prior, (str, Mapping)):
        raise ParameterError(f"prior must be {PRIOR_CHOICES} or a mapping {{node path: table}}, got {prior!r}")
    cells = ("sum of children" if consistency == "top-down" else "per region") if cells is None else cells
    if cells not in CELLS:
        raise ParameterError(f"cells must be one of {CELLS}, got {cells!r}")
    if cells == "sum of children" and consistency != "top-down":
        raise ParameterError("cells='sum of children' needs the tenure margin made consistent (consistency='top-down')")
    if isinstance(prior, Mapping):
        for path, value in prior.items():
            _refuse_private(value, f"the prior of {node_label(path) if isinstance(path, tuple) else repr(path)}")
    edges = tuple(int(e) for e in edges)
    owners = consistent_owners(measurements, consistency)
    tables = {}
    for level in reversed(range(shape.depth + 1)):  # the deepest level first: parents may sum children
        runs = release.runs(level)
        for k, path in enumerate(shape.paths[level]):
            n = class_counts(*runs.node(k), edges)
            kids = shape.children(path) if cells == "sum of children" else []
            if kids:
                table = sum(tables[c] for c in kids)
                if not np.array_equal(table.sum(axis=1), n) or int(table[:, 0].sum()) != int(owners[level][k]):
                    raise ParameterError(
                        f"the children's released size classes or owners do not add up to {node_label(path)}'s: "
                        "cells='sum of children' needs a consistent size release (e.g. top-down)"
                    )
                tables[path] = table
                continue
            if isinstance(prior, Mapping):
                if path not in prior:
                    raise ParameterError(f"the prior has no table for node {node_label(path)}")
                _refuse_private(prior[path], f"the prior of {node_label(path)}")
                node_prior = prior[path]
            else:
                node_prior = prior
            tables[path] = fit_table(n, int(owners[level][k]), node_prior, iterations)
    samplers = {"size release": release.budget.sampler, "tenure margin": measurements.budget.sampler}
    budget = joint_budget(release.budget, measurements.budget, joint_sampler(samplers))
    name = prior if isinstance(prior, str) else "table per region"
    tables = {path: tables[path] for level in range(shape.depth + 1) for path in shape.paths[level]}  # root first
    return JointRelease(shape, edges, name, tables, budget, consistency, samplers, cells)
