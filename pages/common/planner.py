"""Explore's "Plan by accuracy": a target band width at a level → the smallest ε there, into the sidebar.

Computed from the release's public plan only (:mod:`cocoviz.accuracy.planning`): the level's cells per node,
its method's sensitivity and the noise law — before any noise, never from the data's values.
"""

from __future__ import annotations

import streamlit as st

import cocoviz
from cocoviz.accuracy.planning import budget_for_half_width
from pages.common import engine, state

CONFIDENCES = (0.8, 0.9, 0.95, 0.99)


def _apply(epsilons: tuple[float, ...]) -> None:
    """Into the sidebar: a custom split with these ε per level (the total their sum)."""
    state.put("eps.split", "custom")
    for k, e in enumerate(epsilons):
        state.put(f"eps.{k}", float(e))
    state.put("eps.total", float(sum(epsilons)))


def planner(tree, params: engine.Params, names: list[str]) -> None:
    """The expander: level, target ± X on every count of a node's band, confidence → ε (or ρ) and total."""
    box = st.expander("Plan by accuracy: ε from a target", key="explore.planner", on_change="rerun")
    if not box.open:
        return
    plan = engine.plan(tree, params)
    a, b, c = box.columns(3)
    level = a.selectbox(
        "At level", list(range(len(names))), format_func=lambda k: names[k], **state.bind("plan.level", len(names) - 1)
    )
    target = b.number_input(
        "Every cumulative count within ±",
        min_value=1,
        step=1,
        help="The band on each count of groups of size ≤ j at every node of the level, as the Intervals tab draws it.",
        **state.bind("plan.target", 10),
    )
    confidence = c.select_slider(
        "Confidence",
        CONFIDENCES,
        format_func=lambda v: f"{v:.0%}",
        **state.bind("plan.confidence", 0.9, valid=lambda v: v in CONFIDENCES),
    )
    try:
        found = budget_for_half_width(plan, level=int(level), half_width=int(target), confidence=float(confidence))
    except cocoviz.CocovizError as exc:
        box.info(str(exc), icon=":material/info:")
        return
    box.markdown(
        f"At **{names[level]}**, {found.kind} = **{found.budget:.4g}** is the smallest budget with every node's "
        f"{confidence:.0%} band within **± {found.half_width}** on each of its cumulative counts (its widest node has "
        f"{found.cells:,} cells, {plan.methods[level]}); with the other levels as they are the total is "
        f"**{found.kind} = {found.total:.4g}**."
    )
    box.caption(
        "From the public plan only — the level's cells per node, the method's sensitivity and the noise law — "
        "before any noise: the bounds in the Intervals tab will be this wide whatever the data."
    )
    if found.kind == "ε":
        box.button(
            f"Use ε = {found.budget:.4g} at {names[level]}",
            key="plan.apply",
            on_click=_apply,
            args=(found.budgets,),
            type="primary",
        )
    else:
        box.caption(f"Set ρ = {found.budget:.4g} at {names[level]} in the sidebar's zCDP budget.")
