"""The options of a release's plan, declared once: name, type, default, allowed values and help.

:meth:`cocoviz.plan.Plan.build`, :func:`cocoviz.estimate`, :func:`cocoviz.select_mix` and
:func:`cocoviz.selection_cost` take exactly these keywords with these defaults (checked by the tests), and pass
them on by name; :meth:`cocoviz.plan.Plan.options` gives back the ones that rebuild a plan.

>>> OPTIONS["merge"].choices, OPTIONS["merge"].default
(('weighted', 'average'), 'weighted')
>>> sorted(BUDGET_OPTIONS)
['delta', 'epsilons', 'rhos', 'split', 'total_epsilon', 'total_rho']
"""

from __future__ import annotations

from dataclasses import dataclass

from cocoviz.errors import ParameterError
from cocoviz.methods.registry import CONSISTENCY, MERGES, METHODS
from cocoviz.privacy.truncation import K_BETA_SCOPES, K_SELECT

__all__ = ["PlanOption", "PLAN_OPTIONS", "OPTIONS", "BUDGET_OPTIONS", "plan_keywords"]


@dataclass(frozen=True)
class PlanOption:
    """One keyword of :meth:`~cocoviz.plan.Plan.build`: its type as users write it, default, allowed values
    (None: any value its type allows, checked by ``Plan.build``) and a one-line help text."""

    name: str
    type: str
    default: object
    help: str
    choices: tuple | None = None


#: Every plan option, in :meth:`~cocoviz.plan.Plan.build`'s order. ``methods`` has no default (required).
PLAN_OPTIONS: tuple[PlanOption, ...] = (
    PlanOption("epsilons", "sequence of float", None, "ε per level, root first (pure ε-DP, double-geometric noise)"),
    PlanOption("methods", "sequence of str", None, "a method per level", tuple(METHODS)),
    PlanOption("p", "1, 2 or one per level", None, "isotonic loss; None: each method's default"),
    PlanOption("max_size", "int", None, "public bound K on group size (None: 100,000); the ceiling of a private K"),
    PlanOption("consistency", "str", "top-down", "how the levels are made consistent", CONSISTENCY),
    PlanOption("merge", "str", "weighted", "how two estimates of a group's size merge", MERGES),
    PlanOption("k_select", "str", "public", "how K is chosen", K_SELECT),
    PlanOption("k_epsilon", "float", None, "ε of a private K (on top of the levels')"),
    PlanOption("k_beta", "float", None, "probability that a K̂ truncates (None: 1e-6)"),
    PlanOption("prior", "Prior, str, array or table", None, "the Hcp levels' public prior (None: uniform)"),
    PlanOption("rhos", "sequence of float", None, "ρ per level instead of epsilons (ρ-zCDP, discrete Gaussian)"),
    PlanOption("delta", "float", None, "δ at which a zCDP cost is read as (ε, δ) (None: 1e-10)"),
    PlanOption("total_epsilon", "float", None, "a total ε shared over the levels by split"),
    PlanOption("total_rho", "float", None, "a total ρ shared over the levels by split"),
    PlanOption("split", "'equal', 'leaves' or weights", None, "how a total is shared (None: 'equal')"),
    PlanOption("k_beta_scope", "str", "node", "k_beta per K̂ drawn or for the whole release", K_BETA_SCOPES),
)
OPTIONS: dict[str, PlanOption] = {o.name: o for o in PLAN_OPTIONS}
#: The options that say what the release spends (one of epsilons, rhos or a total is given).
BUDGET_OPTIONS = frozenset({"epsilons", "rhos", "delta", "total_epsilon", "total_rho", "split"})


def plan_keywords(values: dict, *, where: str = "a plan") -> dict:
    """The plan options among ``values`` (a function's keywords), each one given or its default.

    Refuses (:class:`~cocoviz.errors.ParameterError`) a keyword that is no plan option, naming it.

    >>> plan_keywords({"methods": ["Hc"], "merge": "average"})["merge"]
    'average'
    """
    unknown = sorted(set(values) - set(OPTIONS))
    if unknown:
        raise ParameterError(f"{where} does not take {', '.join(unknown)}: its options are {', '.join(OPTIONS)}")
    return {o.name: values.get(o.name, o.default) for o in PLAN_OPTIONS}
