"""Session state shared between pages: widget values that survive page changes.

Streamlit forgets the state of a widget that is not drawn on the current
page, and a widget drawn on another page is a different widget.  So every
setting lives in a plain session-state entry (``cv.<name>``, never a widget
key, so never dropped), and its widget (key ``w.<name>``) is bound to it:

* before the widget is drawn, :func:`bind` copies the stored value into the
  widget's key (the widget shows it and returns it);
* when the user changes the widget, its ``on_change`` callback copies the
  new value back (callbacks run before the script, so the copy-in above
  then sees the new value).

Widgets get ``**bind(name, default)`` and no ``value=`` of their own, so
there is exactly one source of truth and no "default value and Session
State" warning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

STORE = "cv."
WIDGET = "w."


def key(name: str) -> str:
    """The session-state key that stores setting ``name``."""
    return STORE + name


def widget_key(name: str) -> str:
    return WIDGET + name


def get(name: str, fallback: Any = None) -> Any:
    return st.session_state.get(key(name), fallback)


def put(name: str, value: Any) -> None:
    st.session_state[key(name)] = value


def _commit(name: str, then: Callable | None = None, then_args: tuple = ()) -> None:
    st.session_state[key(name)] = st.session_state[widget_key(name)]
    if then is not None:
        then(*then_args)


def bind(
    name: str,
    default: Any,
    *,
    valid: Callable[[Any], bool] | None = None,
    shown: Callable[[Any], Any] | None = None,
    on_change: Callable | None = None,
    args: tuple = (),
) -> dict:
    """Keyword arguments binding a widget to setting ``name`` (created with ``default``).

    ``valid`` resets a stored value the widget cannot show (e.g. an option
    that no longer exists) to ``default``; ``shown`` maps the stored value to
    what the widget displays (e.g. clipped to a slider's range);
    ``on_change`` runs after the value is stored.
    """
    k = key(name)
    if k not in st.session_state or (valid is not None and not valid(st.session_state[k])):
        st.session_state[k] = default
    value = st.session_state[k]
    st.session_state[widget_key(name)] = shown(value) if shown is not None else value
    return {"key": widget_key(name), "on_change": _commit, "args": (name, on_change, args)}


def default(name: str, value: Any) -> str:
    """Put ``value`` under setting ``name`` unless it is set; return the store key (for non-widget state)."""
    k = key(name)
    if k not in st.session_state:
        st.session_state[k] = value
    return k
