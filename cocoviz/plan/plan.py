"""The public plan of a release (the method registry is :mod:`cocoviz.methods.registry`).

A :class:`Plan` is built from public facts only — the hierarchy's
:class:`Shape` (levels, nodes, parents, G per node), and ε, method and p per
level, the bound K, the consistency and the merge — and is validated when
built.  Its :meth:`Plan.cost` is the privacy budget, known before any noise is
drawn; a release's budget equals it exactly.

>>> shape = Shape(("state",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)))
>>> plan = Plan.build(shape, epsilons=[0.5, 1.0], methods=["Hg", "Hc"], max_size=10)
>>> plan.cost().total, [c.cells for c in plan.cost().charges]
(1.5, [4, 20])

The same release accounted in ρ-zCDP (discrete Gaussian noise, σ² = Δ₂²/(2ρ) per level): the plan holds
ρ per level and δ, no ε (its (ε, δ) reading is the cost's), and its noise laws say σ²:

>>> zcdp = Plan.build(shape, rhos=[0.125, 0.5], methods=["Hg", "Hc"], max_size=10)
>>> cost = zcdp.cost()
>>> cost.total_rho, round(cost.epsilon_delta(1e-10), 3), [c.scale for c in cost.charges]
(0.625, 7.73, [2.0, 1.0])
>>> zcdp.epsilons is None, [float(law.sigma2) for law in zcdp.noise_laws]
(True, [4.0, 1.0])
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass

from cocoviz.core.shape import Shape
from cocoviz.errors import BudgetError, CocovizError, InputError, ParameterError
from cocoviz.methods.hcp_prior import UNIFORM, Prior
from cocoviz.methods.registry import CONSISTENCY, DEFAULT_MAX_SIZE, MERGES, METHODS, Method, gaussian_epsilon
from cocoviz.plan import split as splits
from cocoviz.plan.checks import check_k, check_p, close, per_level, variance_equivalents
from cocoviz.plan.files import read_plan_file, write_plan_file
from cocoviz.plan.kbound import KBound
from cocoviz.privacy.accounting import DEFAULT_DELTA, check_delta, check_rho, gaussian_sigma2
from cocoviz.privacy.budget import Budget, Charge
from cocoviz.privacy.noise import GaussianNoise, check_epsilon
from cocoviz.privacy.truncation import (
    DEFAULT_K_BETA,
    K_BETA_SCOPES,
    K_SELECT,
    check_beta,
)

__all__ = ["Plan"]  # the package (cocoviz.plan) exports the registry and Shape beside it


@dataclass(frozen=True, eq=False)
class Plan(KBound):
    """A release's public parameters, validated when built; its cost is known before any noise.

    Build one with :meth:`build`, which fills defaults (p per method, K =
    100,000) and checks every value; the constructor checks a complete plan.

    Attributes
    ----------
    shape : the hierarchy's public :class:`Shape`
    epsilons : ε per level of a pure ε-DP plan, root first (double-geometric noise; bottom-up spends their
        sum on the leaves); None for a zCDP plan, which spends ρ (its (ε, δ) reading is its cost's)
    rhos : ρ per level of a zCDP plan (discrete Gaussian noise; bottom-up spends their sum), None for pure ε
    delta : the δ at which a zCDP plan's cost is read as (ε, δ)-DP
    k_beta_scope : ``"node"`` (each K̂ drawn truncates with probability ≤ ``k_beta``: with one K̂ per
        node, some node of a large release may truncate with probability up to draws × β) or
        ``"release"`` (β per K̂ is ``k_beta`` / draws, so by a union bound no node of the whole release
        truncates but with probability ≤ ``k_beta``)
    methods : a :data:`METHODS` name per level
    ps : isotonic loss per level (None for methods without one)
    max_size : the public bound K of the methods that need one; with a private ``k_select``, the public
        ceiling of the chosen K̂
    consistency : ``"top-down"``, ``"bottom-up"`` or ``"none"``
    merge : ``"weighted"`` or ``"average"``
    k_select : how K is chosen (:data:`~cocoviz.privacy.truncation.K_SELECT`): ``"public"`` (``max_size``),
        ``"noisy-max"`` (one K̂ for the release), ``"noisy-max-per-node"`` (one per node of every level
        that needs K; ε_K once per level), ``"svt"`` (Wu's AboveThreshold, one K̂) or ``"from-hg"`` (no
        ε: each node's K̂ from the noisy Hg of its ancestor at an Hg level above, :meth:`k_source_level`)
    k_epsilon : ε_K of a private K, its own mechanism being pure ε_K-DP (charged on top of the levels' ε, or
        as ρ = ε_K²/2 under zCDP; none for ``"from-hg"``)
    k_beta : the probability that a K̂ truncates (default 1e-6), per K̂ drawn or for the whole release
        (``k_beta_scope``); :meth:`truncation` states both
    prior : the public :class:`~cocoviz.methods.hcp_prior.Prior` of the Hcp levels (uniform by default); it costs no ε

    The noise law of each level is :attr:`noise_laws` (a double-geometric scale Δ/ε, or a
    :class:`~cocoviz.privacy.noise.GaussianNoise` of σ² = Δ₂²/(2ρ)); :meth:`fit_epsilon` is the noise
    parameter the fits read.
    """

    shape: Shape
    epsilons: tuple[float, ...] | None
    methods: tuple[str, ...]
    ps: tuple[int | None, ...]
    max_size: int = DEFAULT_MAX_SIZE
    consistency: str = "top-down"
    merge: str = "weighted"
    k_select: str = "public"
    k_epsilon: float | None = None
    k_beta: float = DEFAULT_K_BETA
    prior: Prior = UNIFORM
    rhos: tuple[float, ...] | None = None
    delta: float = DEFAULT_DELTA
    k_beta_scope: str = "node"

    def __post_init__(self):
        n = self.shape.depth + 1
        for name in ("methods", "ps"):
            per_level(getattr(self, name), n, name)
        if (self.epsilons is None) == (self.rhos is None):
            raise ParameterError(
                "a plan holds ε per level (pure ε-DP) or ρ per level (ρ-zCDP), one of them: got "
                + ("both" if self.rhos is not None else "neither")
            )
        if self.rhos is not None:
            for k, rho in enumerate(per_level(self.rhos, n, "rhos")):
                check_rho(rho, f"ρ of level {k}")
        else:
            for k, e in enumerate(per_level(self.epsilons, n, "epsilons")):
                check_epsilon(e, f"ε of level {k}")
        check_delta(self.delta)
        for k, (m, q) in enumerate(zip(self.methods, self.ps)):
            if m not in METHODS:
                raise ParameterError(f"method of level {k} must be one of {tuple(METHODS)}, got {m!r}")
            if METHODS[m].default_p is None and q is not None:
                raise ParameterError(f"p of level {k} must be None: method {m} has no isotonic regression")
            if METHODS[m].default_p is not None and (q is None or q != check_p(q, METHODS[m], k)):
                raise ParameterError(f"p of level {k} must be 1 or 2, got {q!r}")
        check_k(self.max_size)
        if self.consistency not in CONSISTENCY:
            raise ParameterError(f"consistency must be one of {CONSISTENCY}, got {self.consistency!r}")
        if self.merge not in MERGES:
            raise ParameterError(f"merge must be one of {MERGES}, got {self.merge!r}")
        if self.k_select not in K_SELECT:
            raise ParameterError(f"k_select must be one of {K_SELECT}, got {self.k_select!r}")
        if self.k_select in ("public", "from-hg"):
            if self.k_epsilon is not None:
                raise ParameterError(
                    "k_epsilon is the budget of a K chosen with its own noise: give it with a private k_select "
                    f"(noisy max or SVT); k_select {self.k_select!r} spends none"
                )
        else:
            if self.k_epsilon is None:
                raise ParameterError(f"k_select {self.k_select!r} chooses K privately: give its budget k_epsilon")
            check_epsilon(self.k_epsilon, "k_epsilon (ε of the private K)")
        check_beta(self.k_beta)
        if self.k_beta_scope not in K_BETA_SCOPES:
            raise ParameterError(f"k_beta_scope must be one of {K_BETA_SCOPES}, got {self.k_beta_scope!r}")
        if self.k_select == "from-hg" and self.k_levels() and self.k_source_level() is None:
            raise ParameterError(
                "k_select 'from-hg' takes K from an Hg level measured above every level that needs K: "
                "give Hg to a level above the first Hc/naive/Hcp level (not with bottom-up)"
            )
        if not isinstance(self.prior, Prior):
            raise ParameterError(f"prior must be a Prior (Plan.build validates one), got {type(self.prior).__name__}")
        if self.prior != UNIFORM and "Hcp" not in self.methods:
            raise ParameterError("a prior is used by Hcp levels only: give Hcp to at least one level")
        if self.prior.kind == "parent" and self.consistency == "bottom-up":
            raise ParameterError("the parent prior needs the parent levels measured: not with bottom-up")

    @classmethod
    def build(
        cls,
        source,
        *,
        epsilons: Sequence[float] | None = None,
        methods: Sequence[str],
        p: int | Sequence[int | None] | None = None,
        max_size: int | None = None,
        consistency: str = "top-down",
        merge: str = "weighted",
        k_select: str = "public",
        k_epsilon: float | None = None,
        k_beta: float | None = None,
        prior: object = None,
        rhos: Sequence[float] | None = None,
        delta: float | None = None,
        total_epsilon: float | None = None,
        total_rho: float | None = None,
        split: str | Sequence[float] | None = None,
        k_beta_scope: str = "node",
    ) -> Plan:
        """A validated plan for ``source``: a :class:`Shape`, or a hierarchy whose public shape is taken.

        Give ``epsilons`` (pure ε-DP, double-geometric noise) or ``rhos`` (ρ-zCDP, discrete Gaussian
        noise with σ² = Δ₂²/(2ρ); a private K's ``k_epsilon`` then counts ρ = ε²/2), one per level;
        ``delta`` is the δ at which a zCDP cost is read as (ε, δ) (default 1e-10).
        ``p`` is one loss for every level, one per level, or None for each
        method's default (Hc: 1, Hg: 2; under Gaussian noise 2 for both); ``max_size`` None is K = 100,000
        (with a private ``k_select``, the public ceiling of K̂).  ``prior`` is the Hcp levels'
        public prior (:class:`~cocoviz.methods.hcp_prior.Prior`: ``"uniform"``, ``"parent"``, an array over
        sizes 0..K, a ``size``/``count`` table, or one per node path).

        A fixed total instead (:mod:`cocoviz.plan.split`): ``total_epsilon`` (pure ε) or ``total_rho``
        (zCDP) with ``split`` (``"equal"``, the default; ``"leaves"``, weights 1, 2, …, n root first; or
        one weight per level): a private K's ε_K comes out of the same total, and ``cost().total``
        (``cost().total_rho``) equals the total given, exactly.  ``k_beta_scope``: ``"node"`` or
        ``"release"`` (see :class:`Plan`).

        >>> shape = Shape(("s",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)))
        >>> plan = Plan.build(shape, total_epsilon=1.0, split="leaves", methods=["Hg", "Hc"],
        ...                   k_select="noisy-max", k_epsilon=0.1)
        >>> plan.cost().total, [round(e, 6) for e in plan.epsilons]
        (1.0, [0.3, 0.6])
        """
        shape = source if isinstance(source, Shape) else Shape.of(source)
        n = shape.depth + 1
        totals = {"total_epsilon": total_epsilon, "total_rho": total_rho}
        given = [k for k, v in {"epsilons": epsilons, "rhos": rhos, **totals}.items() if v is not None]
        if len(given) != 1:
            raise ParameterError(
                "give either epsilons (pure ε-DP) or rhos (ρ-zCDP), one per level, or a total_epsilon or "
                f"total_rho with a split; one of them, got {', '.join(given) or 'none'}"
            )
        if split is not None and given[0] not in totals:
            raise ParameterError(f"split shares a total_epsilon or total_rho over the levels: not with {given[0]}")
        if given[0] in totals:
            options = dict(
                methods=methods, p=p, max_size=max_size, consistency=consistency, merge=merge, k_select=k_select,
                k_epsilon=k_epsilon, k_beta=k_beta, prior=prior, delta=delta, k_beta_scope=k_beta_scope,
            )  # fmt: skip
            return cls._from_total(shape, total_epsilon, total_rho, "equal" if split is None else split, options)
        methods = tuple(per_level(methods, n, "methods"))
        for k, m in enumerate(methods):
            if not isinstance(m, str) or m not in METHODS:
                raise ParameterError(f"method of level {k} must be one of {tuple(METHODS)}, got {m!r}")
        if rhos is not None:
            rhos = tuple(check_rho(r, f"ρ of level {k}") for k, r in enumerate(per_level(rhos, n, "rhos")))
            eps = None
        else:
            eps = tuple(check_epsilon(e, f"ε of level {k}") for k, e in enumerate(per_level(epsilons, n, "epsilons")))
        ps_in = [p] * n if p is None or isinstance(p, numbers.Number) else per_level(p, n, "p")
        if rhos is not None:  # L2 fits under Gaussian noise: the least-squares fit is its maximum likelihood
            ps_in = [2 if q is None else q for q in ps_in]
        ps = tuple(check_p(q, METHODS[m], k) for k, (m, q) in enumerate(zip(methods, ps_in)))
        k_epsilon = None if k_epsilon is None else check_epsilon(k_epsilon, "k_epsilon (ε of the private K)")
        return cls(
            shape,
            eps,
            methods,
            ps,
            check_k(max_size),
            consistency,
            merge,
            k_select,
            k_epsilon,
            DEFAULT_K_BETA if k_beta is None else check_beta(k_beta),
            # A generator: the node paths are only made when a per-node prior names nodes.
            Prior.of(prior, check_k(max_size), (p for ps in shape.paths for p in ps)),
            rhos,
            DEFAULT_DELTA if delta is None else check_delta(delta),
            k_beta_scope,
        )

    @classmethod
    def _from_total(cls, shape: Shape, total_epsilon, total_rho, split, options: dict) -> Plan:
        """The plan whose levels share ``total_epsilon`` (or ``total_rho``) by ``split``, net of a private K."""
        n = shape.depth + 1
        weights = splits.split_weights(split, n)
        zcdp = total_rho is not None
        total = check_rho(total_rho, "total_rho") if zcdp else check_epsilon(total_epsilon, "total_epsilon")
        key = "rhos" if zcdp else "epsilons"
        trial = cls.build(shape, **{key: [total / n] * n}, **options)
        k_spent = math.fsum(c.zcdp_rho if zcdp else c.epsilon for c in trial._k_charges())
        if not k_spent < total:
            what = "ρ_K = ε_K²/2" if zcdp else "ε_K"
            raise BudgetError(
                f"the private K's {what} ({k_spent:g} in all) takes the whole total {total:g}: "
                "give a smaller k_epsilon or a larger total"
            )
        check = check_rho if zcdp else check_epsilon
        # Past the last level's share, build() checks each level's share as it would a given ε or ρ.
        values = [check(v, f"the share of level {k}") for k, v in enumerate(splits.shares(total - k_spent, weights))]

        def spent(values: list[float]) -> float:
            cost = cls.build(shape, **{key: values}, **options).cost()
            return cost.total_rho if zcdp else cost.total

        values = splits.exact_last(values, spent, total, "total ρ" if zcdp else "total ε")
        return cls.build(shape, **{key: values}, **options)

    # ---------------------------------------------------------------- what is measured
    def measured_levels(self) -> list[int]:
        """Levels that get noisy measurements: every level, or only the leaves for bottom-up."""
        return [self.shape.depth] if self.consistency == "bottom-up" else list(range(self.shape.depth + 1))

    @property
    def accounting(self) -> str:
        """``"pure-ε"`` (double-geometric noise) or ``"zCDP"`` (discrete Gaussian noise, ρ per level)."""
        return "pure-ε" if self.rhos is None else "zCDP"

    def level_epsilon(self, level: int) -> float:
        """ε spent on ``level``'s measurements of a pure ε-DP plan (bottom-up spends the sum on the leaves)."""
        if self.epsilons is None:
            raise ParameterError("a zCDP plan spends ρ per level, not ε: read level_rho (or cost().epsilon_delta)")
        return math.fsum(self.epsilons) if self.consistency == "bottom-up" else self.epsilons[level]

    def fit_epsilon(self, level: int) -> float:
        """The noise parameter the fits of ``level`` read (their variances are 2Δ²/ε², the merge weights
        follow): :meth:`level_epsilon` under pure ε; under zCDP the ε of the Laplace law whose variance is
        that of the level's discrete Gaussian (:func:`~cocoviz.methods.registry.gaussian_epsilon`) — a
        figure of the noise law, never a privacy figure."""
        if self.rhos is not None:
            return gaussian_epsilon(self.level_rho(level), self.level_method(level))
        return self.level_epsilon(level)

    @property
    def noise_laws(self) -> tuple[float | GaussianNoise, ...]:
        """The noise law of every level, root first (:meth:`level_noise`): a double-geometric scale Δ/ε, or
        a :class:`~cocoviz.privacy.noise.GaussianNoise` of σ² = Δ₂²/(2ρ)."""
        return tuple(self.level_noise(level) for level in range(self.shape.depth + 1))

    def level_rho(self, level: int) -> float:
        """ρ spent on ``level``'s measurements of a zCDP plan (bottom-up: the sum, on the leaves)."""
        if self.rhos is None:
            raise ParameterError("a pure-ε plan spends no ρ per level: build it with rhos=")
        return math.fsum(self.rhos) if self.consistency == "bottom-up" else self.rhos[level]

    def level_noise(self, level: int) -> float | GaussianNoise:
        """The noise of ``level``'s measurements, as a sampler's ``scale``: Δ/ε (double-geometric), or the
        discrete Gaussian of σ² = Δ₂²/(2ρ), exact as a rational (so the noise is exactly ρ-zCDP)."""
        method = self.level_method(level)
        if self.rhos is None:
            return method.sensitivity / self.level_epsilon(level)
        return GaussianNoise(gaussian_sigma2(self.level_rho(level), method.l2_squared))

    def level_method(self, level: int) -> Method:
        return METHODS[self.methods[level]]

    def cost(self) -> Budget:
        """Every measurement with its level, query, nodes, cells, Δ and ε: the budget, before any noise.

        One charge per (level, query), covering the level's disjoint nodes (parallel composition).
        With a private K, a level's cells are counted at the public ceiling (an upper bound: K̂ ≤ ceiling).
        """
        charges = self._k_charges()
        for level in self.measured_levels():
            method, paths = self.level_method(level), self.shape.paths[level]
            cells = method.cells(self.shape.group_counts(level), self.max_size).sum()
            quantity = method.quantity(self.max_size, self.private_k())
            if self.rhos is None:
                charge = Charge.for_level(level, paths, quantity, cells, method.sensitivity, self.level_epsilon(level))
            else:
                rho = self.level_rho(level)
                charge = Charge.for_level(
                    level, paths, quantity, cells, method.l2_sensitivity, None, rho=rho, noise="gaussian"
                )
            charges.append(charge)
        if self.rhos is None:
            return Budget(tuple(charges))
        return Budget(tuple(charges), accounting="zCDP", delta=self.delta)

    def to_dict(self, shape: dict | None = None) -> dict:
        """JSON-ready form; :meth:`from_dict` gives back an equal plan.

        ``shape``: the entry to store for the shape instead of :meth:`Shape.to_dict` (a file that keeps the
        shape's per-node arrays as columns, :mod:`cocoviz.release.files.release_file`, stores only its levels here).
        """
        return {
            "shape": self.shape.to_dict() if shape is None else shape,
            **self.options(),
            "prior": self.prior.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict, shape: Shape | None = None) -> Plan:
        """The plan :meth:`to_dict` wrote; ``shape`` when the shape was stored apart (then ``data["shape"]``
        is not read).

        A zCDP plan holds no ε: the ``epsilons`` that files written before stored beside ``rhos`` (the
        Gaussian's variance equivalents, :meth:`fit_epsilon`) are read only to be checked against the ρ.
        """
        rhos = None if data.get("rhos") is None else tuple(data["rhos"])
        if rhos is not None and data.get("epsilons") is not None:
            if not close(data["epsilons"], variance_equivalents(rhos, data["methods"])):
                raise InputError("the plan gives rhos and epsilons that do not follow from them: two budgets")
        return cls(
            Shape.from_dict(data["shape"]) if shape is None else shape,
            None if rhos is not None else tuple(data["epsilons"]),
            tuple(data["methods"]),
            tuple(data["p"]),
            data["max_size"],
            data["consistency"],
            data["merge"],
            data["k_select"],
            data["k_epsilon"],
            data["k_beta"],
            Prior.from_dict(data.get("prior")),
            rhos,
            data.get("delta", DEFAULT_DELTA),
            data.get("k_beta_scope", "node"),
        )

    def options(self) -> dict:
        """The keywords of :meth:`build` (and of :func:`cocoviz.estimate`) that give this plan back for its shape."""
        budget = (
            {"epsilons": list(self.epsilons)} if self.rhos is None else {"rhos": list(self.rhos), "delta": self.delta}
        )
        return {
            **budget,
            "methods": list(self.methods),
            "p": list(self.ps),
            "max_size": self.max_size,
            "consistency": self.consistency,
            "merge": self.merge,
            "k_select": self.k_select,
            "k_epsilon": self.k_epsilon,
            "k_beta": self.k_beta,
            **({"k_beta_scope": self.k_beta_scope} if self.k_beta_scope != "node" else {}),
            "prior": self.prior,
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the plan to ``path``: TOML (``.toml``) or JSON (``.json``); :meth:`load` reads it back equal."""
        write_plan_file(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike, shape: Shape | None = None) -> Plan:
        """The plan in the file ``path`` (TOML or JSON), checked field by field.

        A file without a ``shape`` (written by hand: ε, methods, K, ...) is built for ``shape`` with
        :meth:`build`'s defaults; a file with one must agree with ``shape`` when both are given.
        Anything wrong raises a :class:`~cocoviz.errors.CocovizError` naming the file and the field.
        """
        data, name = read_plan_file(path), os.fspath(path)

        def field(key: str, make):
            try:
                return make()
            except CocovizError as exc:
                raise type(exc)(f"the plan file {name!r}, field {key!r}: {exc}") from None
            except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
                raise InputError(f"the plan file {name!r}, field {key!r}: {type(exc).__name__} {exc}") from None

        own = field("shape", lambda: Shape.from_dict(data["shape"])) if "shape" in data else None
        if own is None and shape is None:
            raise InputError(f"the plan file {name!r} has no field 'shape': load it for a hierarchy's shape")
        if own is not None and shape is not None and not own.same_as(shape):
            raise InputError(
                f"the plan file {name!r}, field 'shape': written for another hierarchy (its levels, nodes or G differ)"
            )
        named = ("max_size", "consistency", "merge", "k_select", "k_epsilon", "k_beta", "k_beta_scope")
        options = {k: data[k] for k in named if k in data}
        try:
            totals = [k for k in ("total_epsilon", "total_rho", "split") if k in data]
            if own is None or "rhos" in data or totals:
                # A zCDP plan is rebuilt from its ρ: its ε per level are the noise's equivalents, not inputs.
                # A hand-written total (with its split) is shared over the levels by build().
                prior = data.get("prior")
                prior = None if prior is None else field("prior", lambda: Prior.from_dict(prior))
                budget = {k: data[k] for k in ("rhos", "delta", *totals) if k in data}
                if not {"rhos", "total_epsilon", "total_rho"} & set(budget):
                    budget["epsilons"] = data["epsilons"]
                plan = cls.build(
                    own or shape, **budget, methods=data["methods"], p=data.get("p"), prior=prior, **options
                )
                if (
                    "rhos" in data
                    and "epsilons" in data
                    and not close(data["epsilons"], variance_equivalents(plan.rhos, plan.methods))
                ):
                    # A zCDP plan saved before it held no ε carries the ε its ρ stand for (their variance
                    # equivalents); any other ε is a second budget.
                    raise InputError(
                        f"the plan file {name!r} gives rhos and epsilons that do not follow from them: "
                        "give one budget (rhos for zCDP, epsilons for pure ε)"
                    )
                return plan
            prior = field("prior", lambda: Prior.from_dict(data.get("prior")))
            if "p" not in data:
                raise InputError(f"the plan file {name!r} has no field 'p' (a plan with a shape is complete)")
            return cls(own, tuple(data["epsilons"]), tuple(data["methods"]), tuple(data["p"]), prior=prior, **options)
        except CocovizError as exc:
            if name in str(exc):
                raise
            raise type(exc)(f"the plan file {name!r}: {exc}") from None

    def __eq__(self, other) -> bool:
        # The shapes compared as arrays; the rest as dicts without them (a shape's dict lists every node's path).
        return (
            isinstance(other, Plan)
            and self.shape.same_as(other.shape)
            and self.to_dict(shape={}) == other.to_dict(shape={})
        )

    __hash__ = None
