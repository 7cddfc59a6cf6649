"""The sidebar's budget and method at first sight: a total ε with its split, one method for every level.

The per-level boxes (:func:`pages.common.controls.per_level_controls`) are drawn
only on request; every value lives in :mod:`pages.common.state` settings
(``eps.<level>``, ``method.<level>``), so the presets here and the per-level
boxes show and change the same values, kept while the boxes are hidden.
"""

from __future__ import annotations

import math

import streamlit as st

from cocoviz.errors import CocovizError
from cocoviz.plan import CONSISTENCY, METHODS
from cocoviz.privacy.noise import EPSILON_RANGE
from cocoviz.privacy.truncation import K_SELECT
from pages.common import presets, state
from pages.common.numbers import Refused, number_box, refusal

SPLIT_HELP = (
    "How the total ε is shared over the levels: **equal**; **more to the leaves** (1 : 2 : … : n, root "
    "first: the leaves have the most nodes, and top-down merging passes their accuracy up); **custom**: "
    "each level's own ε, set under 'Per level'. Under equal and more to the leaves, a private K's ε_K is "
    "taken out of the total, which the release then spends exactly; under custom it comes on top."
)
PER_LEVEL_HELP = (
    "Show the ε (slider and exact number), method and p of every level. Values set there are kept "
    "when the panel is closed."
)


def _level_eps(n_levels: int) -> list:
    for k in range(n_levels):
        state.default(f"eps.{k}", 1.0)
    return [state.get(f"eps.{k}") for k in range(n_levels)]


def _usable(e) -> bool:
    return refusal(e, "ε", lo=EPSILON_RANGE[0], hi=EPSILON_RANGE[1]) is None


def _total_of(epsilons: list) -> float:
    return round(sum(float(e) for e in epsilons), presets.DECIMALS + 4)


def _rescale_levels(n_levels: int) -> None:
    """The total changed under a custom split: every level's ε scaled by the same factor."""
    total, current = state.get("eps.total"), _level_eps(n_levels)
    if _usable(total) and all(_usable(e) for e in current):
        for k, e in enumerate(presets.rescale([float(e) for e in current], float(total))):
            state.put(f"eps.{k}", e)


def budget_controls(names: list[str], epsilon_help: str) -> list[float | Refused]:
    """Sidebar: the total ε and its split over the levels (equal, more to the leaves, custom).

    A preset split derives every level's ε from the total (and stores it, so that the per-level boxes show
    it); under "custom" the levels' own ε are the truth and the total is their sum.  Per-level values set
    elsewhere (a link, an older session) choose the split that they follow.
    """
    sb = st.sidebar
    n = len(names)
    current = _level_eps(n)
    usable = all(_usable(e) for e in current)
    if state.get("eps.split") not in presets.SPLITS:
        state.put("eps.split", presets.detect_split([float(e) for e in current]) if usable else "custom")
        if usable:
            state.put("eps.total", _total_of(current))
    if state.get("eps.split") == "custom" and usable and _usable(state.get("eps.total")):
        state.put("eps.total", _total_of(current))
    total = number_box(
        sb,
        "Total ε (all levels)",
        "eps.total",
        float(n),
        name="total ε",
        lo=EPSILON_RANGE[0],
        hi=EPSILON_RANGE[1],
        step=0.1,
        help=epsilon_help + " The split below shares the total over the levels.",
        on_change=_rescale_levels,
        args=(n,),
    )
    split = (
        sb.segmented_control(
            "Split over the levels",
            list(presets.SPLITS),
            format_func=presets.SPLITS.get,
            help=SPLIT_HELP,
            **state.bind("eps.split", "equal", valid=presets.SPLITS.__contains__),
        )
        or "custom"
    )
    if split == "custom":
        return [_checked_eps(k, e) for k, e in enumerate(_level_eps(n))]
    if isinstance(total, Refused):
        return [total] * n
    # How K is chosen is drawn further down: its settings (kept in the session) decide what ε_K takes out.
    k_select, k_epsilon = state.get("k_select", "public"), state.get("k_epsilon", 0.1)
    # A refused ε_K stops the page where its box is, and from-hg spends no ε: the levels share the whole total.
    if k_select not in K_SELECT or k_select == "from-hg" or (k_select != "public" and not _usable(k_epsilon)):
        k_select = "public"
    try:
        shares = presets.split_budget(
            float(total),
            split,
            n,
            methods=[m if m in METHODS else "Hc" for m in (state.get(f"method.{k}", "Hc") for k in range(n))],
            k_select=k_select,
            k_epsilon=None if k_select == "public" else float(k_epsilon),
            consistency=state.get("consistency", "top-down") if state.get("consistency") in CONSISTENCY else "top-down",
        )
    except CocovizError as exc:
        return [Refused(str(exc))] * n
    for k, e in enumerate(shares):
        state.put(f"eps.{k}", e)
    taken = float(total) - math.fsum(shares) if k_select != "public" else 0.0
    sb.caption(
        "ε per level: "
        + " · ".join(f"{names[k]} {e:g}" for k, e in enumerate(shares))
        + (f" (ε_K: {taken:g} of the total)" if taken > 0 else "")
    )
    return shares


def _checked_eps(level: int, e) -> float | Refused:
    problem = refusal(e, f"ε of level {level}", lo=EPSILON_RANGE[0], hi=EPSILON_RANGE[1])
    return Refused(problem) if problem else float(e)


PER_LEVEL = "per level"


def _apply_method_preset(n_levels: int) -> None:
    choice = state.get("methods.preset")
    if choice in METHODS:
        for k in range(n_levels):
            state.put(f"method.{k}", choice)
    else:
        state.put("per_level", True)


def method_preset(n_levels: int, method_help: str) -> list[str]:
    """Sidebar: one method for every level, or "per level" (the per-level boxes decide); the methods, root first."""
    methods = [state.get(f"method.{k}", "Hc") for k in range(n_levels)]
    methods = [m if m in METHODS else "Hc" for m in methods]
    for k, m in enumerate(methods):
        state.put(f"method.{k}", m)
    if state.get("methods.preset") != PER_LEVEL or len(set(methods)) > 1:
        state.put("methods.preset", methods[0] if len(set(methods)) == 1 else PER_LEVEL)
    options = [*METHODS, PER_LEVEL]
    st.sidebar.selectbox(
        "Method",
        options,
        format_func=lambda m: f"{m} at every level" if m in METHODS else "per level (set below)",
        help=method_help,
        **state.bind(
            "methods.preset", "Hc", valid=options.__contains__, on_change=_apply_method_preset, args=(n_levels,)
        ),
    )
    return methods


def method_edited() -> None:
    state.put("methods.preset", PER_LEVEL)


def adopt(epsilons: list[float], methods: list[str], consistency: str, merge: str) -> None:
    """Put a release's settings into the sidebar (another page's choice, a finding's advice); the split and
    the method preset then follow the levels' values."""
    for k, e in enumerate(epsilons):
        state.put(f"eps.{k}", float(e))
    for k, m in enumerate(methods):
        state.put(f"method.{k}", m)
    state.put("consistency", consistency)
    state.put("merge", merge)
    for name in ("eps.split", "eps.total", "methods.preset"):
        st.session_state.pop(state.key(name), None)
