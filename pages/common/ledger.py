"""The privacy ledger on a page: the secure releases of every session, the cap, and the ledger as CSV.

The ledger itself is :mod:`cocoviz.release.ledger` (a file that outlives sessions and reloads); this
section only reads it, and writes the cap a user sets.
"""

from __future__ import annotations

import streamlit as st

import cocoviz
from pages.common import engine, privacy_terms

#: The ledger's columns shown on the page (the CSV has every column).
SHOWN = ["id", "status", "label", "epsilon", "measurements", "started", "finished", "note"]


def ledger_section(plan: cocoviz.Plan, identity: str | None = None) -> None:
    """An expander: the secure releases of these persons (``identity``, :attr:`pages.common.data.DataInfo.identity`;
    None: ``plan``'s shape) in every session, the cap setting and the CSV download."""
    book = engine.ledger()
    identity = engine.persons(plan, identity)
    entries = book.entries()
    mine = entries[entries["dataset"] == identity]
    cap = book.cap()
    panel = st.expander(
        f"Privacy ledger — {len(mine)} secure release(s) of this dataset recorded, "
        + privacy_terms.spent_words(*book.totals(identity))
        + (f" — cap ε = {cap:g}" if cap is not None else ""),
        key="ledger.panel",
        on_change="rerun",
    )
    if not panel.open:
        return
    with panel:
        st.caption(
            f"Every secure release drawn here or by `python -m cocoviz release` is recorded in {book.path} "
            f"(set {cocoviz.release.ledger.LEDGER_ENV} to move it) before its noise is drawn, and counts for good: a "
            "release that did not finish is marked incomplete, its ε spent. The dataset is identified by its "
            "persons — a bundled dataset's population, an upload's table, a database's URL and table — so every "
            "choice of levels counts against one cap. A copy of the same people under another name is not seen."
        )
        chosen = st.number_input(
            "Budget cap per dataset (ε; 0 = no cap)",
            min_value=0.0,
            value=float(cap or 0.0),
            step=0.5,
            key="ledger.cap",
            help="A secure release that would take this dataset's recorded ε past the cap is refused before "
            "any noise is drawn. The cap is kept in the ledger file: it holds in every session and for the "
            "release command.",
        )
        if (chosen or None) != cap:
            engine.guard(book.set_cap, chosen or None)
        st.dataframe(mine[SHOWN], hide_index=True, width="stretch")
        st.download_button(
            "Ledger as CSV (every dataset)",
            lambda: book.to_csv().encode(),
            file_name="cocoviz-ledger.csv",
            mime="text/csv",
            key="ledger.csv",
            on_click="ignore",
            icon=":material/download:",
        )
