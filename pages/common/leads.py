"""Where a release leads: a link that opens it, a finding's better mix, another page's choice opened in Explore."""

from __future__ import annotations

import streamlit as st

from cocoviz.experiments import findings
from cocoviz.experiments.advice import preferred_series, series_label
from pages.common import budget_sidebar as budget
from pages.common import engine, links, state, sweeps

EXPLORE = "pages/explore.py"
LINK_HELP = "A link that opens this release."
LINK_CAPTION = (
    "This link opens this release: these settings and this node. Copy it with the button at the right of the address."
)


def share_link(tree, info, full, params: engine.Params, node: tuple) -> None:
    """These settings in the address (a reload keeps them) and a link to copy.

    An upload is kept on this server for the holder of the link (:mod:`pages.common.kept_uploads`)."""
    levels = None if list(tree.levels) == list(full.levels) else list(tree.levels)
    settings = links.release_settings(info.label, levels, params, node)
    if info.key[0] != "bundled":
        settings.update(links.upload_settings())
    query = links.publish(settings)
    base = (st.context.url or "").split("?")[0]
    # The tooltip stays short (a long one is cut off at the page's edge); the popover says the rest.
    with st.popover("Copy link", icon=":material/link:", help=LINK_HELP):
        st.caption(LINK_CAPTION)
        st.code(f"{base}?{query}", language=None, wrap_lines=True)


def finding_advice(tree, info, params: engine.Params) -> None:
    """Say when the shipped method-selection finding, made on this very data at this ε per level, has a lower
    error with another mix than this release's, and offer it."""
    found = sweeps.finding("methods")
    if found is None or info.key != ("bundled", found.meta.get("dataset")) or params.k_select != "public":
        return
    if params.rhos is not None:  # the finding was made in pure ε: it says nothing of a zCDP release
        return
    same = list(tree.levels) == list(found.meta.get("levels", [])) and params.max_size == found.meta.get("max_size")
    if not same or len(set(params.epsilons)) != 1:
        return
    current = series_label(params.methods, params.consistency, params.merge)
    better = preferred_series(found.summary, params.epsilons[0], current)
    if better is None:
        return
    series = findings.method_candidates(tree.depth + 1)[better.series]
    st.info(
        f"On this data at ε = {better.epsilon:g} per level, the shipped method-selection finding "
        f"({found.meta.get('trials')} trials, fast sampler) has a lower mean error with **{better.series}** at "
        f"{better.wins} of {better.levels} levels than with this release's {current}.",
        icon=":material/tips_and_updates:",
    )
    st.button(
        f"Use {better.series}",
        key="explore.advice",
        on_click=budget.adopt,
        args=(list(params.epsilons), list(series.methods), series.consistency, series.merge),
    )


def open_in_explore(epsilons: list[float], series: findings.Series, rhos: list[float] | None = None) -> None:
    """Put a release's settings into the sidebar and open Explore on it (a button's callback cannot switch page:
    the page asks for it on the next run).  ``rhos``: a zCDP release's ρ per level (``epsilons`` then unused)."""
    budget.adopt(epsilons, list(series.methods), series.consistency, series.merge)
    state.put("accounting", "pure ε" if rhos is None else "zCDP")
    for k, rho in enumerate(rhos or ()):
        state.put(f"rho.{k}", float(rho))
    st.session_state["leads.go"] = True


def go_if_asked() -> None:
    """Switch to Explore when a button asked for it (call at the top of the page that has the button)."""
    if st.session_state.pop("leads.go", False):
        st.switch_page(EXPLORE)
