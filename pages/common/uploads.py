"""The sidebar's upload flow: a file, its roles, proposed levels, a preview, then acceptance.

A file (with its table form and column roles) is a *candidate* until the user
accepts it after seeing the preview of its hierarchy; only then is it stored
in the session (:data:`ACCEPTED`).  A candidate that cannot be loaded shows
every problem of its table and changes nothing: the accepted upload, if any,
stays as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from cocoviz import CocovizError
from cocoviz.hierarchy import Hierarchy
from cocoviz.hierarchy.preview import hierarchy_preview
from pages.common import data, state

#: Session-state entry of the accepted upload (an :class:`Upload`); written only by the accept button.
ACCEPTED = "upload.accepted"
#: Session-state entries of the last proposal of level columns: what it was made for, and its text.
PROPOSED_FOR, PROPOSED = "upload.proposed_for", "upload.proposed"
KINDS = ["groups", "counts", "persons"]


@dataclass(frozen=True)
class Upload:
    """An upload's bytes, names and options (kind, levels, column roles)."""

    raw: bytes
    name: str
    groups: bytes | None
    groups_name: str | None
    options: tuple  # sorted (role, value) pairs; levels as a tuple

    @property
    def key(self) -> tuple:
        """Identifies the data for every later cache."""
        groups = data.upload_digest(self.groups) if self.groups is not None else None
        return ("upload", data.upload_digest(self.raw), groups, self.options)

    def load(self) -> Hierarchy:
        """The hierarchy (cached); an InputError naming every problem of a bad table."""
        options = {k: list(v) if isinstance(v, tuple) else v for k, v in self.options}
        return data.load_upload(self.raw, self.name, groups=self.groups, groups_name=self.groups_name, **options)

    def info(self) -> data.DataInfo:
        return data.DataInfo(
            key=self.key,
            label=f"upload: {self.name}",
            own_data=True,
            public_max_size=None,
            card={"name": self.name, "description": "your upload"},
            identity=data.upload_identity(self.raw, self.name),
        )


def _roles(kind: str) -> dict:
    """Sidebar: the column roles of ``kind`` (size, count, group)."""
    sb = st.sidebar
    roles: dict = {}
    if kind in ("groups", "counts"):
        roles["size"] = sb.text_input("Size column", **state.bind("upload.size", "size"))
    if kind == "counts":
        roles["count"] = sb.text_input("Count column", **state.bind("upload.count", "count"))
    if kind == "persons":
        roles["group"] = sb.text_input("Group id column", **state.bind("upload.group", "group"))
    return roles


def _propose(raw: bytes | None, name: str, kind: str, roles: dict) -> list[str]:
    """Fill the level box with the columns proposed from the file, when it is empty or still holds the
    last proposal and the file, form or roles changed; returns the proposal."""
    if raw is None:
        return []
    proposal = data.proposed_levels(raw, name, kind, tuple(sorted(roles.items())))
    made_for = (data.upload_digest(raw), kind, tuple(sorted(roles.items())))
    text = state.get("upload.levels", "")
    if st.session_state.get(PROPOSED_FOR) != made_for and text.strip() in ("", st.session_state.get(PROPOSED, "")):
        state.put("upload.levels", ", ".join(proposal))
        st.session_state[PROPOSED] = ", ".join(proposal)
    st.session_state[PROPOSED_FOR] = made_for
    return proposal


def _guess_group(raw: bytes | None, name: str, kind: str) -> None:
    """Persons form: put the guessed group id column in its box when the box names no column of the file."""
    if raw is None or kind != "persons":
        return
    columns = data.upload_columns(raw, name) or []
    if state.get("upload.group", "group") not in columns:
        guess = data.guessed_group_column(raw, name)
        if guess is not None:
            state.put("upload.group", guess)


def _warn_id_like(raw: bytes, name: str, roles: dict) -> None:
    """Say which columns look like ids (one row per value): never proposed, and a poor level if typed."""
    ids = data.id_like_columns(raw, name, tuple(sorted(roles.items())))
    if ids:
        st.sidebar.warning(
            ", ".join(f"`{c}`" for c in ids) + " has one row per value (an id, not a region): not proposed as a "
            "level — as a level it would make one node per row.",
            icon=":material/fingerprint:",
        )


def _candidate(accepted: Upload | None) -> Upload | None:
    """Sidebar: the file, its form and roles and its level columns; the candidate they make (None: no file)."""
    sb = st.sidebar
    file = sb.file_uploader(
        "CSV or Parquet file",
        type=["csv", "parquet"],
        key="upload.file",
        help="A groups table (one row per group: its regions and its size), a counts table "
        "(per leaf and size, the number of groups) or a persons table (one row per person: "
        "group id and regions).",
    )
    raw, name = (file.getvalue(), file.name) if file is not None else (None, "")
    if raw is None and accepted is not None:
        raw, name = accepted.raw, accepted.name
    kind = sb.radio(
        "Table kind", KINDS, horizontal=True, **state.bind("upload.kind", "groups", valid=KINDS.__contains__)
    )
    _guess_group(raw, name, kind)
    roles = _roles(kind)
    proposal = _propose(raw, name, kind, roles)
    levels_text = sb.text_input(
        "Level columns, top down (comma-separated)",
        **state.bind("upload.levels", ""),
        help="Proposed from the file: every column that is not the size, count or group column, in order. "
        "Edit the list; clear it for a single region.",
    )
    if raw is not None:
        columns = data.upload_columns(raw, name)
        if columns:
            sb.caption(f"Columns in {name}: " + ", ".join(f"`{c}`" for c in columns))
        if proposal:
            sb.caption("Proposed levels: " + ", ".join(f"`{c}`" for c in proposal))
        _warn_id_like(raw, name, roles)
    groups_raw, groups_name = None, None
    if kind == "persons":
        groups_file = sb.file_uploader(
            "Public groups table (group id and regions), optional",
            type=["csv", "parquet"],
            key="upload.groups",
            help="One row per group with its id and region columns. It makes each region's "
            "number of groups G a public input; without it G is read from the "
            "persons rows, which is not private (exploration only).",
        )
        if groups_file is not None:
            groups_raw, groups_name = groups_file.getvalue(), groups_file.name
        elif accepted is not None and accepted.raw == raw:
            groups_raw, groups_name = accepted.groups, accepted.groups_name
    if raw is None:
        return None
    levels = tuple(c.strip() for c in levels_text.split(",") if c.strip())
    options = tuple(sorted({"kind": kind, "levels": levels, **roles}.items()))
    return Upload(raw, name, groups_raw, groups_name, options)


def _refused(exc: CocovizError, accepted: Upload | None) -> None:
    st.error(str(exc), icon=":material/warning:")
    kept = f"**{accepted.name}** is still the data in use" if accepted is not None else "no upload is in use"
    st.info(f"Nothing of this file was loaded: {kept}. Fix the file or the columns in the sidebar.")
    st.stop()


def _preview(candidate: Upload, tree: Hierarchy) -> bool:
    """The candidate's hierarchy in brief and the button that accepts it; whether it was pressed."""
    st.subheader(f"Preview of {candidate.name}")
    s = tree.summary()
    levels = ", ".join(f"`{c}`" for c in tree.levels) or "none: **one region**"
    st.markdown(
        f"{s['groups']:,} groups, {s['persons']:,} persons, {s['distinct_sizes']:,} distinct sizes · "
        f"levels below the root: {levels}"
    )
    st.dataframe(hierarchy_preview(tree), hide_index=True, width="stretch")
    if not tree.levels:
        st.warning(
            "No level column: the whole file is one region. Name the level columns in the sidebar if it has "
            "regions (e.g. state, county).",
            icon=":material/info:",
        )
    if st.button("Use this data", type="primary", key="upload.accept", icon=":material/check:"):
        return True
    st.info("Check the levels and their nodes above, then press **Use this data**; the sidebar changes them.")
    return False


def upload_panel() -> tuple[Hierarchy, data.DataInfo]:
    """The upload flow (sidebar and, before acceptance, the main area): the accepted upload's tree and info.

    Stops the page while there is nothing accepted to show: no file, a refused file, or a preview
    waiting for its button.
    """
    accepted: Upload | None = st.session_state.get(ACCEPTED)
    candidate = _candidate(accepted)
    if candidate is None:
        st.info("Upload a CSV or Parquet file in the sidebar to explore your own data, or pick a bundled dataset.")
        st.stop()
    try:
        tree = candidate.load()
    except CocovizError as exc:
        _refused(exc, accepted)
    if accepted is None or candidate.key != accepted.key:
        if not _preview(candidate, tree):
            st.stop()
        st.session_state[ACCEPTED] = candidate
        st.rerun()  # redraw without the preview
    if not tree.public_groups:
        st.warning(
            "G per region and the region list are taken from your persons rows: **not private** — fine for "
            "exploring; a secure release needs the public groups table (sidebar).",
            icon=":material/visibility:",
        )
    return tree, candidate.info()
