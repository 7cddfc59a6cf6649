"""The dashboard's pages; ``common`` holds the helpers they share (state, data, guarded engine calls, controls).

Every page imports this package, and importing it hands a direct link over to ``app.py``.  Streamlit treats a
folder named ``pages/`` beside the entry script as a legacy multipage app until the first ``st.navigation``
call in the server process: a link such as ``/viewer`` opened on a fresh server, before ``app.py`` has run
once, would run ``pages/viewer.py`` alone (file-name navigation, narrow layout, no settings).  The first
import of this package in such a run switches the legacy mode off for the process and reruns the session:
the rerun keeps the requested page and query string and goes through ``app.py``'s navigation.
"""

from __future__ import annotations


def _hand_direct_links_to_app() -> None:
    """Leave Streamlit's legacy ``pages/`` mode; rerun if a page file is being run without ``app.py``.

    Does nothing outside a script run (a plain import, unit tests) or once ``st.navigation`` has run.

    Examples
    --------
    >>> _hand_direct_links_to_app()  # no script run here: nothing to hand over
    """
    from pathlib import Path

    import streamlit as st
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if not getattr(PagesManager, "uses_pages_directory", False):  # Streamlit's flag for the legacy mode
        return
    PagesManager.uses_pages_directory = False  # as app.py's st.navigation would: the pages folder is not scanned
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    page = ctx.pages_manager.get_pages().get(ctx.page_script_hash)
    if page is None or Path(page["script_path"]).resolve() == Path(ctx.pages_manager.main_script_path).resolve():
        return  # app.py itself is running: its st.navigation follows
    st.rerun()


_hand_direct_links_to_app()
