"""What a page shows while it recomputes: the previous result stays readable, and a status says what runs.

While a script run is under way, Streamlit marks every element the run has not yet drawn again as stale
(``data-stale="true"``) and fades it; a recompute that takes seconds under load then greys the whole page
below the sidebar.  :func:`keep_previous_readable` keeps those elements at full opacity, and
:func:`recomputing` puts a status box above them, for as long as the work runs, that names the work, its
estimated time, and says that what is below belongs to the previous settings until it ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

#: Stale elements (not yet drawn again by the run under way) keep full opacity: the status box says they are
#: the previous result.  Only the fade is undone; nothing else of their style changes.
STALE_CSS = '<style>[data-stale="true"] { opacity: 1 !important; transition: none !important; }</style>'

#: The status box's words: what the part below it is while the work runs.
PREVIOUS_NOTE = "What is shown below belongs to the previous settings until it is done."


def keep_previous_readable() -> None:
    """Keep the previous run's elements at full opacity while a run redraws them (CSS only, no layout)."""
    st.html(STALE_CSS)


@contextmanager
def recomputing(what: str, seconds: float) -> Iterator[None]:
    """A status box, in place, while the body runs; removed when it ends.

    ``what`` is the work ("Recomputing the release"), ``seconds`` its estimate.

    Examples
    --------
    >>> describe_wait("Recomputing the release", 2.54)
    'Recomputing the release — about 2.5 s. What is shown below belongs to the previous settings until it is done.'
    """
    slot = st.empty()
    with slot.status(describe_wait(what, seconds), state="running", expanded=False):
        yield
    slot.empty()


def describe_wait(what: str, seconds: float) -> str:
    """The status box's label: the work, its estimated time in plain words, and what the page below is."""
    when = f"about {seconds:,.1f} s" if seconds >= 0.1 else "a moment"
    return f"{what} — {when}. {PREVIOUS_NOTE}"
