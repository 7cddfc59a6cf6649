"""Private algorithm selection (Chaudhuri et al.) over method mixes, with its whole cost.

Every candidate mix is released with the full per-level budget; each is scored
by its total emd over all nodes plus noise, and the lowest noisy score wins.
Only the winner is published, and it carries the whole cost: by sequential
composition, every candidate's budget plus the selection's.

A selection is accounted in pure ε only: a zCDP plan (``rhos=``) is refused with a
:class:`~cocoviz.errors.BudgetError`, since the saved budget of a selected release lists
its candidates' costs as ε (choose the mix under pure ε, then release it under zCDP).

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}),
...                              size="size", levels=["region"])
>>> chosen = select_mix(tree, [["Hc", "Hc"], ["Hg", "Hg"]], epsilons=[1.0, 1.0], epsilon_select=0.5,
...                     max_size=8, seed=0)
>>> chosen.budget.total  # two candidates of ε = 2 each, and the selection's 0.5
4.5

A fixed total instead of ε per level: ``total_epsilon`` (with ``split``, as :meth:`Plan.build`) is the
whole cost, the selection's ε and every candidate's included; the candidates share what ε_select
leaves, and ε_select takes the last float or two so that the total is exact (:func:`selection_epsilons`).

>>> chosen = select_mix(tree, [["Hc", "Hc"], ["Hg", "Hg"]], total_epsilon=1.0, epsilon_select=0.2,
...                     max_size=8, seed=0)
>>> chosen.budget.total, [round(e, 9) for e in chosen.plan.epsilons]
(1.0, [0.2, 0.2])
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence

import numpy as np

from cocoviz.errors import BudgetError, ParameterError
from cocoviz.evaluate import evaluate
from cocoviz.measure import measure, open_sampler
from cocoviz.noise import check_epsilon, check_seed
from cocoviz.plan import Plan
from cocoviz.plan.split import exact_last
from cocoviz.postprocess import post_process
from cocoviz.release import Release
from cocoviz.verify import SELECTION_COMPOSITION, mix_name, release_budget

__all__ = ["select_mix", "selection_cost", "selection_epsilons", "mix_name", "SELECTION_COMPOSITION"]


def selection_cost(
    tree,
    candidates: Sequence[Sequence[str]],
    *,
    epsilons: Sequence[float] | None = None,
    epsilon_select: float,
    total_epsilon: float | None = None,
    split=None,
    **options,
) -> float:
    """The whole ε a :func:`select_mix` call would spend, from the candidates' plans, before any noise.

    >>> import pandas as pd
    >>> from cocoviz.hierarchy import Hierarchy
    >>> tree = Hierarchy.from_groups(pd.DataFrame({"size": [1, 2]}), size="size", levels=[])
    >>> selection_cost(tree, [["Hc"], ["Hg"]], epsilons=[0.5], epsilon_select=0.1)
    1.1
    """
    _check_options(options)
    candidates = _check_candidates(candidates)
    epsilons, epsilon_select = _budget(tree, candidates, epsilons, epsilon_select, total_epsilon, split, options)
    return _cost(tree, candidates, epsilons, epsilon_select, options)


def _cost(tree, candidates, epsilons, epsilon_select: float, options: dict) -> float:
    plans = [Plan.build(tree, epsilons=epsilons, methods=mix, **options) for mix in candidates]
    return float(math.fsum([*(p.cost().total for p in plans), epsilon_select]))


def selection_epsilons(
    tree, candidates, *, total_epsilon: float, epsilon_select: float, split=None, **options
) -> tuple[list[float], float]:
    """ε per level of every candidate and ε of the selection whose whole cost is ``total_epsilon``, exactly.

    The candidates' levels share ``total_epsilon`` − ε_select − every candidate's ε_K by ``split``
    (:mod:`cocoviz.plan.split`: ``"equal"``, ``"leaves"`` or weights); ε_select is then moved by the
    last float or two that make :func:`selection_cost` equal the total.
    """
    _check_options(options)
    return _budget(tree, _check_candidates(candidates), None, epsilon_select, total_epsilon, split, options)


def _budget(tree, candidates, epsilons, epsilon_select, total_epsilon, split, options) -> tuple[list[float], float]:
    epsilon_select = check_epsilon(epsilon_select, "ε of the selection")
    if (epsilons is None) == (total_epsilon is None):
        raise ParameterError("give the candidates' epsilons (one per level) or a total_epsilon, one of them")
    if total_epsilon is None:
        if split is not None:
            raise ParameterError("split shares a total_epsilon over the levels: not with epsilons")
        return list(epsilons), epsilon_select
    total = check_epsilon(total_epsilon, "total_epsilon")
    if not candidates:
        raise ParameterError("give at least one candidate method mix")
    n = tree.depth + 1
    trials = [Plan.build(tree, epsilons=[1.0] * n, methods=mix, **options) for mix in candidates]
    k_spent = math.fsum(p.cost().total - n for p in trials)  # each candidate's ε_K, on top of its levels'
    left = (total - epsilon_select - k_spent) / len(candidates)
    if not left > 0:
        raise BudgetError(
            f"ε_select ({epsilon_select:g}) and the candidates' ε_K ({k_spent:g}) take the whole total {total:g}"
        )
    epsilons = Plan.build(tree, total_epsilon=left, split=split or "equal", methods=candidates[0]).epsilons
    epsilons = [check_epsilon(e, f"the share of level {k}") for k, e in enumerate(epsilons)]
    (epsilon_select,) = exact_last(
        [epsilon_select], lambda v: _cost(tree, candidates, epsilons, v[0], options), total, "total ε of the selection"
    )
    return epsilons, epsilon_select


#: The :meth:`Plan.build` options of a zCDP plan, which a selection refuses (it is accounted in pure ε).
_ZCDP_OPTIONS = ("rhos", "delta", "total_rho")
#: The :meth:`Plan.build` options a selection passes on to every candidate's plan.
_PLAN_OPTIONS = frozenset(
    name
    for name in inspect.signature(Plan.build).parameters
    if name not in ("cls", "source", "epsilons", "methods", "total_epsilon", "split", *_ZCDP_OPTIONS)
)


def _check_options(options: dict) -> None:
    zcdp = sorted(set(options) & set(_ZCDP_OPTIONS))
    if zcdp:
        raise BudgetError(
            f"a selection is accounted in pure ε only, but it was given {', '.join(zcdp)} (a zCDP plan): "
            "give epsilons= (its candidates' ε per level) and epsilon_select=, or choose the mix under pure ε "
            "and release it with estimate(..., rhos=)"
        )
    unknown = sorted(set(options) - _PLAN_OPTIONS)
    if unknown:
        raise ParameterError(
            f"a selection does not take {', '.join(unknown)}: its options are the plan's "
            f"({', '.join(sorted(_PLAN_OPTIONS))}); its noise is keyed by seed (or secure=True)"
        )


def _check_candidates(candidates: object) -> tuple[tuple[str, ...], ...]:
    """The candidates as tuples of method names: a list of mixes, each a list of names (not text)."""
    mixes = candidates if isinstance(candidates, (list, tuple)) else None
    if mixes is None or not all(isinstance(m, (list, tuple)) for m in mixes):
        raise ParameterError(f"candidates must be a list of method mixes such as [['Hc', 'Hg']], got {candidates!r}")
    return tuple(tuple(m) for m in mixes)


def select_mix(
    tree,
    candidates: Sequence[Sequence[str]],
    *,
    epsilons: Sequence[float] | None = None,
    epsilon_select: float,
    total_epsilon: float | None = None,
    split=None,
    seed: int | Sequence[int] | None = None,
    secure: bool = False,
    **options,
) -> Release:
    """The best candidate mix by a private selection, as a release that carries the whole cost.

    One person changes a node's emd by at most 1 and lies in one node per
    level, so a score (total emd over all nodes) has sensitivity L = the number
    of levels; the report-noisy-min adds double-geometric noise of scale
    2L/ε_select.  The returned release's ``budget.total`` is ``(number of
    candidates) · Σ ε + ε_select``; its ``selection`` names the candidates and
    the chosen index, and nothing else of the losers (their scores are not
    published).

    Parameters
    ----------
    tree : Hierarchy
    candidates : method mixes, one method per level each
    epsilons : ε per level of every candidate release
    epsilon_select : ε of the selection itself
    total_epsilon, split : instead of ``epsilons``, the whole cost (the selection's and every candidate's),
        shared by ``split`` (:func:`selection_epsilons`); the release's ``budget.total`` is then exactly it
    seed : keys the fast sampler (candidate k draws from its own streams)
    secure : draw every noise with the secure sampler
    options : other :meth:`Plan.build` options (p, max_size, consistency, merge)
    """
    _check_options(options)
    candidates = _check_candidates(candidates)
    if not candidates:
        raise ParameterError("give at least one candidate method mix")
    epsilons, epsilon_select = _budget(tree, candidates, epsilons, epsilon_select, total_epsilon, split, options)
    entropy = None if secure else check_seed(seed)
    plans = [Plan.build(tree, epsilons=epsilons, methods=mix, **options) for mix in candidates]
    releases = [
        post_process(plan, measure(plan, tree, seed=None if secure else (*entropy, k + 1), secure=secure))
        for k, plan in enumerate(plans)
    ]
    scores = np.array([evaluate(tree, r)["emd"].sum() for r in releases], np.int64)
    n_levels = tree.depth + 1
    noise = open_sampler(None if secure else (*entropy, 0), secure=secure)
    noisy = noise.draw(scores, 2 * n_levels / epsilon_select, (0, 0, 0))
    chosen = int(np.argmin(noisy))
    selection = {"candidates": [list(c) for c in candidates], "chosen": chosen, "epsilon_select": epsilon_select}
    # The budget load_release checks a saved selection against: every candidate's cost, then the selection's.
    budget = release_budget(plans[chosen], noise.name, selection)
    return Release(plans[chosen], [releases[chosen].runs(level) for level in range(n_levels)], budget, selection)
