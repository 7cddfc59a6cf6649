"""Private algorithm selection (Chaudhuri et al.) over method mixes, with its whole cost.

Every candidate mix is released with the full per-level budget; each is scored
by its total emd over all nodes plus noise, and the lowest noisy score wins.
Only the winner is published, and it carries the whole cost: by sequential
composition, every candidate's budget plus the selection's.

Under zCDP (``rhos=`` per level, or ``total_rho=`` with ``split``) every candidate is released with
those ρ and the selection's own noisy min, pure ε-DP, enters as ρ = ε_select²/2: the whole cost is
then ``budget.total_rho`` (every candidate's ρ listed as charges of its own; :func:`release_budget`).

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

import math
from collections.abc import Sequence

import numpy as np

from cocoviz.errors import BudgetError, ParameterError
from cocoviz.evaluate.against_truth import evaluate
from cocoviz.measure.measurements import measure, open_sampler
from cocoviz.measure.recording import Recorded, begin_draw
from cocoviz.plan import Plan
from cocoviz.plan.options import BUDGET_OPTIONS, OPTIONS
from cocoviz.plan.split import exact_last
from cocoviz.privacy.accounting import check_rho, rho_of_epsilon
from cocoviz.privacy.noise import check_epsilon, check_seed
from cocoviz.release.post_process import post_process
from cocoviz.release.release import Release
from cocoviz.release.verify import SELECTION_COMPOSITION, mix_name, release_budget

__all__ = ["select_mix", "selection_cost", "selection_epsilons", "mix_name", "SELECTION_COMPOSITION"]


def selection_cost(
    tree,
    candidates: Sequence[Sequence[str]],
    *,
    epsilons: Sequence[float] | None = None,
    epsilon_select: float,
    total_epsilon: float | None = None,
    split=None,
    rhos: Sequence[float] | None = None,
    total_rho: float | None = None,
    **options,
) -> float:
    """The whole ε (ρ under zCDP) a :func:`select_mix` call would spend, from the candidates' plans, before any noise.

    >>> import pandas as pd
    >>> from cocoviz.hierarchy import Hierarchy
    >>> tree = Hierarchy.from_groups(pd.DataFrame({"size": [1, 2]}), size="size", levels=[])
    >>> selection_cost(tree, [["Hc"], ["Hg"]], epsilons=[0.5], epsilon_select=0.1)
    1.1
    >>> selection_cost(tree, [["Hc"], ["Hg"]], rhos=[0.5], epsilon_select=0.2)  # 0.5 + 0.5 + 0.2²/2
    1.02
    """
    _check_options(options)
    candidates = _check_candidates(candidates)
    given = _given(epsilons, rhos, total_epsilon, total_rho)
    levels, epsilon_select = _budget(tree, candidates, given, epsilon_select, split, options)
    return _cost(tree, candidates, levels, epsilon_select, options)


def _given(epsilons, rhos, total_epsilon, total_rho) -> tuple[str, object]:
    """The one budget given: ε or ρ per level, or a total ε or ρ."""
    given = {"epsilons": epsilons, "rhos": rhos, "total_epsilon": total_epsilon, "total_rho": total_rho}
    given = [(k, v) for k, v in given.items() if v is not None]
    if len(given) != 1:
        raise ParameterError(
            "give the candidates' epsilons or rhos (one per level), or a total_epsilon or total_rho, one of them"
        )
    return given[0]


def _cost(tree, candidates, levels: dict, epsilon_select: float, options: dict) -> float:
    plans = [Plan.build(tree, **levels, methods=mix, **options) for mix in candidates]
    if "rhos" in levels:  # the very sum the release's budget makes (its total_rho), so a total is exact
        selection = {"candidates": [list(c) for c in candidates], "chosen": 0, "epsilon_select": epsilon_select}
        return release_budget(plans[0], "", selection).total_rho
    return float(math.fsum([*(p.cost().total for p in plans), epsilon_select]))


def selection_epsilons(
    tree,
    candidates,
    *,
    total_epsilon: float | None = None,
    epsilon_select: float,
    split=None,
    total_rho: float | None = None,
    **options,
) -> tuple[list[float], float]:
    """ε (ρ under zCDP) per level of every candidate and ε of the selection whose whole cost is
    ``total_epsilon`` (``total_rho``), exactly.

    The candidates' levels share the total − the selection's cost (ε_select, or ε_select²/2 under zCDP)
    − every candidate's ε_K by ``split`` (:mod:`cocoviz.plan.split`: ``"equal"``, ``"leaves"`` or
    weights); ε_select is then moved by the last float or two that make :func:`selection_cost` equal the total.
    """
    _check_options(options)
    given = _given(None, None, total_epsilon, total_rho)
    levels, epsilon_select = _budget(tree, _check_candidates(candidates), given, epsilon_select, split, options)
    return next(iter(levels.values())), epsilon_select


def _budget(tree, candidates, given: tuple[str, object], epsilon_select, split, options) -> tuple[dict, float]:
    """The candidates' per-level budget (``{"epsilons": …}`` or ``{"rhos": …}``) and ε of the selection."""
    epsilon_select = check_epsilon(epsilon_select, "ε of the selection")
    kind, value = given
    if kind in ("epsilons", "rhos"):
        if split is not None:
            raise ParameterError(f"split shares a total_epsilon or total_rho over the levels: not with {kind}")
        return {kind: list(value)}, epsilon_select
    zcdp = kind == "total_rho"
    total = check_rho(value, "total_rho") if zcdp else check_epsilon(value, "total_epsilon")
    if not candidates:
        raise ParameterError("give at least one candidate method mix")
    n = tree.depth + 1
    unit = {"rhos" if zcdp else "epsilons": [1.0] * n}
    trials = [Plan.build(tree, **unit, methods=mix, **options) for mix in candidates]
    # each candidate's ε_K (ρ = ε_K²/2 under zCDP), on top of its levels'
    k_spent = math.fsum((p.cost().total_rho if zcdp else p.cost().total) - n for p in trials)
    selecting = rho_of_epsilon(epsilon_select) if zcdp else epsilon_select
    left = (total - selecting - k_spent) / len(candidates)
    if not left > 0:
        raise BudgetError(
            f"ε_select ({epsilon_select:g}) and the candidates' ε_K ({k_spent:g}) take the whole total {total:g}"
        )
    shared = Plan.build(tree, **{kind: left}, split=split or "equal", methods=candidates[0])
    check = check_rho if zcdp else check_epsilon
    levels = {
        "rhos" if zcdp else "epsilons": [
            check(e, f"the share of level {k}") for k, e in enumerate(shared.rhos if zcdp else shared.epsilons)
        ]
    }
    if not zcdp:
        (epsilon_select,) = exact_last(
            [epsilon_select],
            lambda v: _cost(tree, candidates, levels, v[0], options),
            total,
            "total ε of the selection",
        )
        return levels, epsilon_select
    # A float of ε_select moves ρ = ε²/2 by about ε floats and can step over the total: the levels' ρ
    # (finer, the smallest first) then take over, each a float or two from its share.
    *rhos, epsilon_select = exact_last(
        [*levels["rhos"], epsilon_select],
        lambda v: _cost(tree, candidates, {"rhos": v[:-1]}, v[-1], options),
        total,
        "total ρ of the selection",
    )
    return {"rhos": rhos}, epsilon_select


#: The :meth:`Plan.build` options a selection passes on to every candidate's plan.
#: (Every one but the mixes' methods and the budget, which a selection takes itself; ``delta`` passes on.)
_PLAN_OPTIONS = frozenset(OPTIONS) - (BUDGET_OPTIONS - {"delta"}) - {"methods"}


def _check_options(options: dict) -> None:
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
    rhos: Sequence[float] | None = None,
    total_rho: float | None = None,
    seed: int | Sequence[int] | None = None,
    secure: bool = False,
    ledger=None,
    dataset: str | None = None,
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
    rhos, total_rho : zCDP instead: ρ per level of every candidate, or the whole ρ (with ``split``; the
        release's ``budget.total_rho`` is then exactly it); the selection's ε_select counts ε_select²/2
    seed : keys the fast sampler (candidate k draws from its own streams)
    secure : draw every noise with the secure sampler
    ledger, dataset : a secure selection is one draw in the privacy ledger, recorded with its whole cost before
        any noise (see :func:`cocoviz.measure`: the default ledger unless ``ledger`` is given; False skips it,
        said in the budget's notes)
    options : other :meth:`Plan.build` options (p, max_size, consistency, merge)
    """
    _check_options(options)
    candidates = _check_candidates(candidates)
    if not candidates:
        raise ParameterError("give at least one candidate method mix")
    given = _given(epsilons, rhos, total_epsilon, total_rho)
    levels, epsilon_select = _budget(tree, candidates, given, epsilon_select, split, options)
    entropy = None if secure else check_seed(seed)
    plans = [Plan.build(tree, **levels, methods=mix, **options) for mix in candidates]
    noise = open_sampler(None if secure else (*entropy, 0), secure=secure)
    # The whole cost (every candidate's, then the selection's) is one ledger draw, recorded before any noise.
    whole = {"candidates": [list(c) for c in candidates], "chosen": 0, "epsilon_select": epsilon_select}
    draw, notes = begin_draw(
        ledger, plans[0], release_budget(plans[0], noise.name, whole), secure=noise.secure, dataset=dataset
    )
    inner = Recorded(draw.ledger, draw.entry) if draw.ledger is not None else False
    try:
        releases = [
            post_process(
                plan, measure(plan, tree, seed=None if secure else (*entropy, k + 1), secure=secure, ledger=inner)
            )
            for k, plan in enumerate(plans)
        ]
        scores = np.array([evaluate(tree, r)["emd"].sum() for r in releases], np.int64)
        n_levels = tree.depth + 1
        noisy = noise.draw(scores, 2 * n_levels / epsilon_select, (0, 0, 0))
    except BaseException as exc:
        draw.fail(exc)
        raise
    draw.complete()
    chosen = int(np.argmin(noisy))
    selection = {"candidates": [list(c) for c in candidates], "chosen": chosen, "epsilon_select": epsilon_select}
    # The budget load_release checks a saved selection against: every candidate's cost, then the selection's.
    budget = release_budget(plans[chosen], noise.name, selection)
    budget = budget.with_sampler(noise.name, notes) if notes else budget
    return Release(plans[chosen], [releases[chosen].runs(level) for level in range(n_levels)], budget, selection)
