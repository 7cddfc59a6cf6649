"""The node picker: a search box (a name, a name's start or a path) over drill-down selectboxes.

The chosen node lives in the settings ``node.<data>.<level>`` (one label per
level, root first), which the address's ``node`` parameter fills too
(:func:`pages.common.links.apply_node`).  A level of millions of nodes is never
listed: the search box finds any node (:func:`cocoviz.hierarchy.search.find_nodes`,
at most :data:`SEARCH_LIMIT` matches), and a drill-down selectbox lists at most
:data:`LIST_LIMIT` children -- plus the one chosen, wherever it comes from.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from cocoviz.hierarchy import Hierarchy, node_label, node_path
from cocoviz.hierarchy.search import KIND_NAMES, LabelIndex, child_labels, find_nodes
from pages.common import state

#: At most this many matches of the search box are offered.
SEARCH_LIMIT = 50
#: A drill-down selectbox lists at most this many children (the browser cannot hold a level of millions).
LIST_LIMIT = 1000
STAY = "— (this node) —"


def _setting(data_label: str, level: int) -> str:
    return f"node.{data_label}.{level}"


def put_node(data_label: str, depth: int, path: tuple[str, ...]) -> None:
    """Choose ``path``: its label at every level it reaches, nothing below."""
    for level in range(1, depth + 1):
        if level <= len(path):
            state.put(_setting(data_label, level), path[level - 1])
        else:
            st.session_state.pop(state.key(_setting(data_label, level)), None)


def _take_match(data_label: str, depth: int) -> None:
    key = state.widget_key(f"node.{data_label}.hit")
    picked = st.session_state.get(key)
    if picked is not None:
        put_node(data_label, depth, node_path(picked))
        st.session_state[key] = None  # the matches offer again; the node shows below


def search_box(tree: Hierarchy, data_label: str, names: list[str]) -> None:
    """A text box and, once something is typed, the best matches to choose from."""
    c1, c2 = st.columns([2, 3])
    query = c1.text_input(
        "Find a node",
        placeholder="a name, its start, or a path: TX / Harris",
        help="Type a name (any level), the start of a name or code, or a path of names joined by '/', e.g. "
        f"'TX / Harris' (a {names[min(2, tree.depth)]} under a {names[1]}). Case is ignored; exact names come "
        f"first, then names that start with what you typed, then names that contain it. At most {SEARCH_LIMIT} "
        "are offered.",
        **state.bind(f"node.{data_label}.find", ""),
    )
    if not query.strip():
        return
    if not LabelIndex.built(tree.node_codes):
        # Built once per hierarchy, on the first search: a second or two at 8M block labels.
        labels = sum(len(tree.node_codes.labels[lvl]) for lvl in range(1, tree.depth + 1))
        with c2, st.spinner(f"Indexing {labels:,} names for the search (once per dataset)…"):
            LabelIndex.of(tree.node_codes)
    hits = find_nodes(tree.node_codes, query, SEARCH_LIMIT)
    if not len(hits):
        c2.info(f"No node matches {query.strip()!r}.", icon=":material/search_off:")
        return
    nodes = tree.node_codes
    if hits.total == 1:  # one match: chosen at once (once per query, so the drill-down can move on from it)
        path = nodes.path(int(hits.levels[0]), int(hits.indices[0]))
        if state.get(f"node.{data_label}.auto") != query:
            put_node(data_label, tree.depth, tuple(path))
            state.put(f"node.{data_label}.auto", query)
        c2.success(f"The one match, **{node_label(path)}**, is chosen.", icon=":material/check:")
        return
    labels = [node_label(nodes.path(int(lvl), int(k))) for lvl, k in zip(hits.levels, hits.indices)]
    kinds = dict(zip(labels, (KIND_NAMES[int(kind)] for kind in hits.kinds)))
    levels = dict(zip(labels, (names[int(lvl)] for lvl in hits.levels)))
    shown = f"{len(hits)} of {hits.total:,}" if hits.total > len(hits) else f"{hits.total:,}"
    c2.selectbox(
        f"Matches ({shown})",
        labels,
        index=None,
        placeholder="choose a match",
        format_func=lambda label: f"{label} ({levels[label]}, {kinds[label]})",
        key=state.widget_key(f"node.{data_label}.hit"),
        on_change=_take_match,
        args=(data_label, tree.depth),
    )


def node_picker(tree: Hierarchy, data_label: str) -> tuple[str, ...]:
    """The search box, then drill-down selectboxes root → child → …; returns the chosen node's path."""
    names = ["root", *tree.levels]
    path: tuple[str, ...] = ()
    if tree.depth == 0:
        st.markdown("Node: **(root)** — this hierarchy has no levels below the root.")
        return path
    search_box(tree, data_label, names)
    cols = st.columns(max(tree.depth, 1))
    for level in range(1, tree.depth + 1):
        children = child_labels(tree.node_codes, path)
        chosen = state.get(_setting(data_label, level))
        listed = children[:LIST_LIMIT].tolist()
        if chosen is not None and chosen not in listed and bool(np.any(children == chosen)):
            listed.append(chosen)  # found by the search box or named by the address, beyond the list
        options = [STAY, *listed]
        box, capped = cols[level - 1], len(children) > LIST_LIMIT
        pick = box.selectbox(
            f"{names[level]} in {node_label(path)}",
            options,
            help=f"Pick a {names[level]} to drill down; '{STAY}' stays at the level above."
            + (
                f" Lists the first {LIST_LIMIT:,}: the search box finds the others."
                if len(children) > LIST_LIMIT
                else ""
            ),
            **state.bind(_setting(data_label, level), STAY, valid=options.__contains__),
        )
        if capped:
            box.caption(f"{LIST_LIMIT:,} of {len(children):,} listed: search for the others.")
        if pick == STAY:
            # Deeper pickers would be meaningless: reset them.
            for deeper in range(level + 1, tree.depth + 1):
                st.session_state.pop(state.key(_setting(data_label, deeper)), None)
            break
        path = (*path, pick)
    return path
