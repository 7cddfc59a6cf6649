"""Release viewer: open a release file (``Release.save``, the command's ``release.parquet``) with no dataset.

Everything here is read from the file alone — its runs, plan, budget and, where the file carries them, the
bands of its noisy measurements and its stated errors — so the page never loads private data and everything
it shows may be published with the file.  A second file of the same shape is compared node by node.

Beside the release, its noisy-measurement file (``cocoviz.save_measurements``, the command's measurement
file) may be opened: it is accepted only when its post-processing gives this very release, and then an Hg
level's bounds are the bands that use runs of equal sizes (:mod:`cocoviz.accuracy.intervals.multiscale`)
instead of the per-cell ones.  The page says which bands it shows.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import streamlit as st

import cocoviz
from cocoviz import plots
from cocoviz.hierarchy import node_label

st.title("Release viewer")
st.caption(
    "Open a release file written by `cocoviz release` or `Release.save` — no dataset, no private data: "
    "every number below is read from the file, and may be published with it."
)


@st.cache_resource(show_spinner="Reading the release file…", max_entries=8)
def _load(data: bytes) -> cocoviz.Release:
    return cocoviz.load_release(io.BytesIO(data))


def opened(label: str, key: str) -> tuple[str, cocoviz.Release] | None:
    """The release of an uploaded file, or None (nothing uploaded, or a file that is not a release: said)."""
    upload = st.file_uploader(label, type=["parquet"], key=key)
    if upload is None:
        return None
    try:
        return upload.name, _load(upload.getvalue())
    except cocoviz.CocovizError as exc:
        st.error(f"{upload.name} is not a release file cocoviz can read: {exc}", icon=":material/warning:")
    except (OSError, ValueError) as exc:  # not Parquet at all
        st.error(f"{upload.name} is not a Parquet release file ({exc}).", icon=":material/warning:")
    return None


@st.cache_resource(show_spinner="Reading the noisy-measurement file…", max_entries=8)
def _load_measurements(data: bytes):
    return cocoviz.load_measurements(io.BytesIO(data))


@st.cache_data(show_spinner="Checking that the measurements give this release…", max_entries=8)
def _gives(release_digest: str, measurements_digest: str, _release, _measurements) -> bool:
    """Whether post-processing the measurements gives the release, run for run (same plan, same draw)."""
    if _release.plan.to_dict() != _measurements.plan.to_dict():
        return False
    return cocoviz.post_process(_measurements.plan, _measurements).to_frame().equals(_release.to_frame())


def measurements_of(release: cocoviz.Release, release_bytes: bytes):
    """The release's noisy measurements from an uploaded file, or None (none uploaded, or refused: said)."""
    import hashlib

    upload = st.file_uploader(
        "Its noisy-measurement file (optional): Hg levels then get the bands that use runs of equal sizes",
        type=["parquet"],
        key="viewer.measurements",
    )
    if upload is None:
        return None
    data = upload.getvalue()
    try:
        measurements = _load_measurements(data)
    except cocoviz.CocovizError as exc:
        st.error(f"{upload.name} is not a noisy-measurement file cocoviz can read: {exc}", icon=":material/warning:")
        return None
    except (OSError, ValueError) as exc:  # not Parquet at all
        st.error(f"{upload.name} is not a Parquet noisy-measurement file ({exc}).", icon=":material/warning:")
        return None
    digests = (hashlib.sha256(release_bytes).hexdigest(), hashlib.sha256(data).hexdigest())
    if not _gives(*digests, release, measurements):
        st.error(
            f"{upload.name} holds the noisy measurements of another release (another plan, or another draw of "
            "the noise): its post-processing does not give this release, so its bands are not shown.",
            icon=":material/warning:",
        )
        return None
    return measurements


def bands_shown(frame: pd.DataFrame, level: int, method: str, measurements) -> str:
    """Which bounds the node's figure shows, and why those, in a sentence."""
    if frame.attrs.get("band") == "runs":
        return (
            "Bands shown: the **runs bands** of this Hg level, from the noisy-measurement file (bounds that "
            "average the noise over runs of equal sizes: much narrower where sizes repeat)."
        )
    if measurements is None:
        why = "open its noisy-measurement file for the runs bands of Hg levels" if method == "Hg" else ""
    else:
        why = f"this level is measured with {method}: the runs bands are for Hg levels"
    return "Bands shown: the **per-cell bands** carried by the release file" + (f" ({why})." if why else ".")


def same_shape(a: cocoviz.Release, b: cocoviz.Release) -> bool:
    """Whether two releases are of one hierarchy: the same levels, nodes and public G per node."""
    depth = len(a.plan.methods)
    if len(b.plan.methods) != depth or tuple(a.shape.levels) != tuple(b.shape.levels):
        return False
    return all(
        a.nodes(k) == b.nodes(k) and np.array_equal(a.shape.group_counts(k), b.shape.group_counts(k))
        for k in range(depth)
    )


def budget_section(release: cocoviz.Release) -> None:
    """The budget as the ledger states it: the accounting, ε (or ρ and δ) per level and in all."""
    budget = release.budget
    names = ["root", *release.shape.levels]
    if budget.accounting == "zCDP":
        per_level = budget.per_level_rho()
        head = f"zCDP: total **ρ = {budget.total_rho:g}**, read as (ε = {budget.total:.3g}, δ = {budget.delta:g})-DP"
        column = "ρ"
    else:
        per_level = budget.per_level()
        head = f"pure ε-DP: total **ε = {budget.total:g}** (levels add up: sequential composition)"
        column = "ε"
    st.markdown(f"{head} · sampler `{release.sampler}` · methods {', '.join(release.plan.methods)}")
    table = pd.DataFrame(
        {
            "level": [names[k] if k < len(names) else str(k) for k in per_level],
            "method": [release.plan.methods[k] for k in per_level],
            column: list(per_level.values()),
            "nodes": [len(release.nodes(k)) for k in per_level],
        }
    )
    st.dataframe(table, hide_index=True, width="content")
    st.caption(budget.describe())


def node_choice(release: cocoviz.Release, key: str) -> tuple:
    """A level and a node of it, found by a search on its label."""
    depth = len(release.plan.methods)
    a, b = st.columns([1, 3])
    names = ["root", *release.shape.levels]
    level = a.selectbox("Level", list(range(depth)), key=f"{key}.level", format_func=lambda k: names[k])
    nodes = release.nodes(level)
    query = b.text_input("Find a node", key=f"{key}.find", placeholder="part of its name")
    found = [n for n in nodes if query.lower() in node_label(n).lower()] if query else nodes
    if not found:
        st.info(f"No node of level {level} matches {query!r}.", icon=":material/search_off:")
        st.stop()
    return st.selectbox(f"Node ({len(found):,} of {len(nodes):,})", found, key=f"{key}.node", format_func=node_label)


def node_section(
    release: cocoviz.Release, node: tuple, other: cocoviz.Release | None, names: tuple[str, str], measurements=None
):
    h = release.histogram(node)
    log_x = st.toggle("log x", value=True, key="viewer.logx")
    log_y = st.toggle("log y", value=True, key="viewer.logy")
    if other is None:
        figure = plots.histogram_figure(
            np.zeros(1, int), h, log_x=log_x, log_y=log_y, title=node_label(node), names=("", names[0])
        )
        figure.data = tuple(t for t in figure.data if t.name != "")
    else:
        figure = plots.histogram_figure(
            h, other.histogram(node), layout="side", log_x=log_x, log_y=log_y, title=node_label(node), names=names
        )
    st.plotly_chart(figure, key="viewer.hist")
    groups, persons = int(h.sum()), release.persons(node)
    st.markdown(f"**{node_label(node)}**: {groups:,} groups, {persons:,} persons released.")
    try:
        frame = release.intervals(node, 0.9, measurements=measurements)
    except cocoviz.CocovizError as exc:
        st.info(f"No intervals in this file for this node: {exc}", icon=":material/info:")
        return
    level = len(node)
    st.markdown(bands_shown(frame, level, release.plan.methods[level], measurements))
    reason = plots.uninformative_reason(frame)
    if reason:
        st.warning(f"The 90% bounds are too wide to inform here: {reason}.", icon=":material/unfold_more:")
    st.plotly_chart(plots.intervals_figure(frame, log_x=log_x, title="released, with 90% bounds"), key="viewer.iv")
    st.caption(frame.attrs.get("note", ""))


first = opened("Release file", "viewer.file")
if first is None:
    st.info("Upload a release file (`release.parquet`) to browse it.", icon=":material/upload_file:")
    st.stop()
name, release = first
measurements = measurements_of(release, st.session_state["viewer.file"].getvalue())
second = opened("A second release of the same shape, to compare (optional)", "viewer.other")
other = None
if second is not None:
    if not same_shape(second[1], release):
        st.error(
            f"{second[0]} is a release of another hierarchy (other nodes or groups) than {name}: "
            "only releases of the same shape compare node by node.",
            icon=":material/warning:",
        )
    else:
        other = second[1]
budget_tab, node_tab = st.tabs(["Budget", "Nodes"])
with budget_tab:
    st.markdown(f"**{name}**")
    budget_section(release)
    if other is not None:
        st.markdown(f"**{second[0]}**")
        budget_section(other)
with node_tab:
    node = node_choice(release, "viewer")
    node_section(release, node, other, (name, second[0] if other is not None else ""), measurements)
