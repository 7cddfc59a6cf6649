"""Number boxes that refuse what they cannot use, with a message.

Given ``min_value``/``max_value``, Streamlit's number box turns red in the
browser and keeps its last accepted value without a word (a K of 0.1, an ε
of −1).  The boxes here have no bounds in the browser, so every typed number
reaches the page; :func:`refusal` judges it, a refused number is shown with
its reason under its box, and :func:`stop_if_refused` stops the page once
every box is drawn, repeating the reasons (:func:`any_refused` names them and
lets a tabbed page stop only the affected tab): nothing is computed with an
earlier value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import streamlit as st

from pages.common import state


class Refused(str):
    """What :func:`number_box` returns for a number it cannot use: the reason."""


#: How every box shows its number: up to 12 significant digits, no trailing zeros (1000000, 0.25, 1e-06).
FORMAT = "%.12g"


def _bound(x: float, whole: bool) -> str:
    return f"{int(x):,}" if whole and float(x).is_integer() else f"{x:g}"


def refusal(
    value: Any,
    name: str,
    *,
    whole: bool = False,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
) -> str | None:
    """Why ``value`` cannot be used as ``name`` (None: it can).

    ``whole`` asks for a whole number; ``lo`` and ``hi`` bound it, excluded when ``lo_open``/``hi_open``.

    >>> refusal(0.1, "K", whole=True, lo=1, hi=10_000_000)
    'K must be a whole number between 1 and 10,000,000, got 0.1'
    >>> refusal(0.0, "ε", lo=0, lo_open=True), refusal(2, "K", whole=True, lo=1)
    ('ε must be more than 0, got 0', None)
    """
    kind = "a whole number" if whole else "a number"
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{name}: type {kind}"
    x = float(value)
    if not math.isfinite(x):
        return f"{name} must be a finite number, got {value}"
    below = lo is not None and (x <= lo if lo_open else x < lo)
    above = hi is not None and (x >= hi if hi_open else x > hi)
    if not (below or above or (whole and not x.is_integer())):
        return None
    lead = f"{name} must be {kind} " if whole else f"{name} must be "
    if lo is not None and hi is not None and not (lo_open or hi_open):
        rule = f"between {_bound(lo, whole)} and {_bound(hi, whole)}"
    else:
        lead = lead.rstrip() + ", " if whole else lead
        parts = []
        if lo is not None:
            parts.append(f"{'more than' if lo_open else 'at least'} {_bound(lo, whole)}")
        if hi is not None:
            parts.append(f"{'less than' if hi_open else 'at most'} {_bound(hi, whole)}")
        rule = " and ".join(parts)
    if not rule:
        return f"{name} must be a whole number, got {value:{FORMAT[1:]}}"
    return f"{lead}{rule}, got {value:{FORMAT[1:]}}"


def number_box(
    box: Any,
    label: str,
    setting: str,
    default: float,
    *,
    name: str | None = None,
    whole: bool = False,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
    step: float | None = None,
    help: str | None = None,
    disabled: bool = False,
    on_change: Callable | None = None,
    args: tuple = (),
) -> int | float | Refused:
    """A number box bound to ``setting``: its value, or the reason it cannot be used (shown under the box).

    ``name`` names the number in the message (default: ``label``); ``box`` is
    the container (``st.sidebar``, a column, …).  A disabled box is not judged.
    """
    box.number_input(
        label,
        step=float(step if step is not None else (1 if whole else 0.01)),
        format=FORMAT,
        help=help,
        disabled=disabled,
        **state.bind(setting, default, shown=_as_float, on_change=on_change, args=args),
    )
    value = state.get(setting)
    problem = (
        None if disabled else refusal(value, name or label, whole=whole, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)
    )
    if problem is not None:
        box.error(problem, icon=":material/error:")
        return Refused(problem)
    return int(value) if whole else float(value)


def _as_float(value: Any) -> Any:
    """A stored number as the box's float (a float box parses 2.5 as 2.5, where an int box would drop .5)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def any_refused(*values: Any) -> bool:
    """Name every refused number (without stopping the page): True when one was refused.

    For a page of independent sections (tabs): the section returns, the others still run.
    """
    refused = [v for v in values if isinstance(v, Refused)]
    if refused:
        st.error(
            "Nothing is computed until these numbers are fixed (an earlier value is never used in their place):"
            + "".join(f"\n- {r}" for r in refused),
            icon=":material/error:",
        )
    return bool(refused)


def stop_if_refused(*values: Any) -> None:
    """Stop the page, naming every refused number, when a number box refused its value."""
    if any_refused(*values):
        st.stop()
