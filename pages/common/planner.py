"""Explore's "Plan by accuracy": a target at a level → the smallest ε there, into the sidebar.

Two targets: a band width on every cumulative count (:mod:`cocoviz.accuracy.planning`), or an emd per group of
every node's estimate (:mod:`cocoviz.accuracy.emd_target`).  Both are computed from the release's public plan
only: the level's cells and groups per node, its method's sensitivity and p, and the noise law — before any
noise, never from the data's values.
"""

from __future__ import annotations

import streamlit as st

import cocoviz
from cocoviz.accuracy.emd_target import budget_for_emd
from cocoviz.accuracy.planning import budget_for_half_width
from pages.common import engine, state

CONFIDENCES = (0.8, 0.9, 0.95, 0.99)
TARGETS = ("band width", "emd per group")


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
    kind = box.radio(
        "Target",
        TARGETS,
        horizontal=True,
        help="A band width on every cumulative count of a node, or the emd per group of every node's estimate.",
        **state.bind("plan.kind", TARGETS[0], valid=TARGETS.__contains__),
    )
    a, b, c = box.columns(3)
    level = a.selectbox(
        "At level", list(range(len(names))), format_func=lambda k: names[k], **state.bind("plan.level", len(names) - 1)
    )
    if kind == TARGETS[0]:
        target = b.number_input(
            "Every cumulative count within ±",
            min_value=1,
            step=1,
            help="The band on each count of groups of size ≤ j at every node of the level, as the Intervals tab "
            "draws it.",
            **state.bind("plan.target", 10),
        )
    else:
        target = b.number_input(
            "emd per group at most",
            min_value=0.001,
            step=0.1,
            format="%.3g",
            help="The earthmover's distance of a node's estimate to its true histogram, divided by its groups G: "
            "persons moved per group.",
            **state.bind("plan.emd", 0.5),
        )
    confidence = c.select_slider(
        "Confidence",
        CONFIDENCES,
        format_func=lambda v: f"{v:.0%}",
        **state.bind("plan.confidence", 0.9, valid=lambda v: v in CONFIDENCES),
    )
    try:
        if kind == TARGETS[0]:
            found = budget_for_half_width(plan, level=int(level), half_width=int(target), confidence=float(confidence))
        else:
            found = budget_for_emd(plan, level=int(level), emd_per_group=float(target), confidence=float(confidence))
    except cocoviz.CocovizError as exc:
        box.info(str(exc), icon=":material/info:")
        return
    if kind == TARGETS[0]:
        box.markdown(
            f"At **{names[level]}**, {found.kind} = **{found.budget:.4g}** is the smallest budget with every node's "
            f"{confidence:.0%} band within **± {found.half_width}** on each of its cumulative counts (its widest node "
            f"has {found.cells:,} cells, {plan.methods[level]}); with the other levels as they are the total is "
            f"**{found.kind} = {found.total:.4g}**."
        )
    else:
        box.markdown(
            f"At **{names[level]}**, {found.kind} = **{found.budget:.4g}** is the smallest budget with every node's "
            f"own estimate within an **emd of {found.emd_per_group:.3g} per group** of the truth, each with "
            f"probability ≥ {confidence:.0%} (the bound is widest at a node of {found.groups:,} groups and "
            f"{found.cells:,} noised cells, {plan.methods[level]}); with the other levels as they are the total is "
            f"**{found.kind} = {found.total:.4g}**."
        )
        box.caption(
            "A bound for the worst data — a node whose group sizes are all different, so the fit cannot average "
            "the noise over runs of equal sizes; on real data the error is usually far smaller. It holds for the "
            "level's own estimate; the top-down consistency step that follows is not part of the proof."
        )
    box.caption(
        "From the public plan only — the level's cells and groups per node, the method's sensitivity and the "
        "noise law — before any noise"
        + (": the bounds in the Intervals tab will be this wide whatever the data." if kind == TARGETS[0] else ".")
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
