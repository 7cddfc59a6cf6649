"""Settings in the page's address: a link opens the same release, a reload keeps it.

Parameters: ``dataset``, ``levels`` (comma-separated), ``eps`` (comma-separated, root first) or, for a
ρ-zCDP release, ``rhos`` (ρ per level, root first), ``methods`` (comma-separated), ``k`` (a public K, or how
K is chosen: ``noisy-max``, ``noisy-max-per-node``, ``svt``, ``from-hg``), ``consistency``, ``merge``,
``seed``, ``node`` (a path joined by ``/``).

An address the session has not seen yet (a link opened, a reload, a hand
edit) is read once, in stages, as the sidebar learns what it needs to judge
each value (the dataset's levels, the levels kept, the tree's nodes); every
value it cannot use is named in one message and left out, never a traceback.
Explore then writes the settings it shows back into the address.
"""

from __future__ import annotations

import math
from urllib.parse import urlencode

import numpy as np
import streamlit as st

from cocoviz.hierarchy import Hierarchy
from cocoviz.hierarchy.search import child_labels
from cocoviz.plan import MAX_K, METHODS
from cocoviz.privacy.accounting import RHO_RANGE
from cocoviz.privacy.noise import EPSILON_RANGE
from pages.common import picker, state

PARAMS = ("dataset", "upload", "levels", "eps", "rhos", "methods", "k", "consistency", "merge", "seed", "node")
CONSISTENCY = ("top-down", "bottom-up", "none")
MERGES = {"weighted": "weighted", "average": "average", "plain": "average"}
K_CHOICES = ("public", "noisy-max", "noisy-max-per-node", "svt", "from-hg")
_PENDING, _SEEN, _PROBLEMS = "links.pending", "links.seen", "links.problems"


def _address() -> dict[str, str]:
    return {k: st.query_params.get(k) for k in st.query_params}


def incoming() -> None:
    """Read an address not seen yet into the values still to apply (call before any widget)."""
    query = _address()
    if not query or query == st.session_state.get(_SEEN):
        return
    st.session_state[_SEEN] = query
    st.session_state[_PROBLEMS] = []
    unknown = sorted(set(query) - set(PARAMS))
    if unknown:
        _problem(f"unknown parameter(s) {', '.join(unknown)} (known: {', '.join(PARAMS)})")
    st.session_state[_PENDING] = {k: v for k, v in query.items() if k in PARAMS}


def _take(name: str) -> str | None:
    return st.session_state.get(_PENDING, {}).pop(name, None)


def _problem(text: str) -> None:
    st.session_state.setdefault(_PROBLEMS, []).append(text)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_numbers(text: str, n: int, name: str, *, whole: bool = False) -> tuple[list[float] | None, str | None]:
    """``n`` comma-separated numbers (one number: the same for all ``n``), or why not.

    >>> parse_numbers("0.5,1,2", 3, "eps")
    ([0.5, 1.0, 2.0], None)
    >>> parse_numbers("1", 2, "eps")
    ([1.0, 1.0], None)
    >>> parse_numbers("1,x", 2, "eps")[1]
    "eps: 'x' is not a number"
    >>> parse_numbers("1,2", 3, "eps")[1]
    'eps: 2 values for 3 levels (root first)'
    """
    values = []
    for part in _split(text):
        try:
            values.append(float(part))
        except ValueError:
            return None, f"{name}: {part!r} is not a number"
        if not math.isfinite(values[-1]) or (whole and not values[-1].is_integer()):
            return None, f"{name}: {part!r} is not a {'whole' if whole else 'finite'} number"
    if len(values) == 1:
        values *= n
    if len(values) != n:
        return None, f"{name}: {len(values)} values for {n} levels (root first)"
    return values, None


def apply_dataset(names: list[str]) -> None:
    """The address's dataset (before the dataset box is drawn)."""
    value, kept = _take("dataset"), _take("upload")
    if value is None:
        return
    if value == UPLOAD:
        _restore_upload(kept)
    elif value in names:
        state.put("dataset", value)
    else:
        _problem(
            f"dataset={value!r}: no such dataset (the bundled ones: {', '.join(names)}; an upload's link "
            f"says dataset={UPLOAD} with its own upload=…)"
        )


#: The address's dataset of an upload (with ``upload=<hash>-<token>``, see :mod:`pages.common.kept_uploads`).
UPLOAD = "upload"


def _restore_upload(value: str | None) -> None:
    from pages.common import data, kept_uploads, uploads

    upload = kept_uploads.restore(value) if value else None
    state.put("dataset", data.UPLOAD)
    if upload is None:
        # Said at once: the upload flow then stops the page until a file comes.
        st.warning(
            "The upload of this address is no longer kept on the server (or the address is not yours): upload "
            "the file again.",
            icon=":material/link_off:",
        )
        return
    st.session_state[uploads.ACCEPTED] = upload
    options = dict(upload.options)
    state.put("upload.kind", options.get("kind", "groups"))
    state.put("upload.levels", ", ".join(options.get("levels", ())))
    for role in ("size", "count", "group"):
        if role in options:
            state.put(f"upload.{role}", options[role])


def apply_levels(label: str, all_levels: list[str]) -> None:
    """The address's levels below the root (before the levels box is drawn)."""
    value = _take("levels")
    if value is None:
        return
    chosen = _split(value)
    unknown = [v for v in chosen if v not in all_levels]
    if unknown:
        _problem(f"levels: {', '.join(map(repr, unknown))} not in this data (levels: {', '.join(all_levels)})")
        return
    state.put(f"levels.{label}", chosen)


def _apply_budget(param: str, symbol: str, bounds: tuple, accounting: str, key: str, n_levels: int) -> None:
    """The address's per-level budget ``param`` (``eps`` or ``rhos``), if any: its accounting and values."""
    value = _take(param)
    if value is None:
        return
    values, why = parse_numbers(value, n_levels, param)
    if why is None and not all(bounds[0] <= v <= bounds[1] for v in values):
        why = f"{param}: every {symbol} must be between {bounds[0]:g} and {bounds[1]:g}, got {value}"
    if why:
        _problem(why)
        return
    state.put("accounting", accounting)
    for k, v in enumerate(values):
        state.put(f"{key}.{k}", v)
    if key == "eps":  # the split and total follow the levels' values (pages.common.controls.budget_controls)
        for name in ("eps.split", "eps.total"):
            st.session_state.pop(state.key(name), None)


def apply_release(n_levels: int, label: str) -> None:
    """The address's ε (or ρ), methods, K, consistency, merge and seed (before the release controls are drawn)."""
    _apply_budget("eps", "ε", EPSILON_RANGE, "pure ε", "eps", n_levels)
    _apply_budget("rhos", "ρ", RHO_RANGE, "zCDP", "rho", n_levels)
    value = _take("methods")
    if value is not None:
        methods = _split(value)
        methods = methods * n_levels if len(methods) == 1 else methods
        bad = [m for m in methods if m not in METHODS]
        if bad or len(methods) != n_levels:
            _problem(
                f"methods: {', '.join(map(repr, bad))} unknown (one of {', '.join(METHODS)})"
                if bad
                else f"methods: {len(methods)} values for {n_levels} levels (root first)"
            )
        else:
            for k, m in enumerate(methods):
                state.put(f"method.{k}", m)
            st.session_state.pop(state.key("methods.preset"), None)
    value = _take("k")
    if value is not None:
        if value in K_CHOICES:
            state.put("k_select", value)
        else:
            ks, why = parse_numbers(value, 1, "k", whole=True)
            if why is None and not 1 <= ks[0] <= MAX_K:
                why = f"k must be between 1 and {MAX_K:,}, got {value}"
            if why:
                _problem(f"{why} (or one of {', '.join(K_CHOICES)})")
            else:
                state.put(f"K.{label}", int(ks[0]))
                state.put("k_select", "public")
    _choice("consistency", CONSISTENCY, "consistency")
    value = _take("merge")
    if value is not None:
        if value in MERGES:
            state.put("merge", MERGES[value])
        else:
            _problem(f"merge={value!r}: one of weighted, average")
    value = _take("seed")
    if value is not None:
        seeds, why = parse_numbers(value, 1, "seed", whole=True)
        if why is None and not 0 <= seeds[0] < 2**31:
            why = f"seed must be between 0 and {2**31 - 1:,}, got {value}"
        if why:
            _problem(why)
        else:
            state.put("seed", int(seeds[0]))


def _choice(name: str, options: tuple, setting: str) -> None:
    value = _take(name)
    if value is None:
        return
    if value in options:
        state.put(setting, value)
    else:
        _problem(f"{name}={value!r}: one of {', '.join(options)}")


def node_path(tree: Hierarchy, text: str) -> tuple[str, ...] | None:
    """The node whose names joined by "/" are ``text`` (a name may hold "/" itself), or None.

    >>> from cocoviz.datasets import load_dataset
    >>> tree = load_dataset("toy")
    >>> node_path(tree, "a"), node_path(tree, ""), node_path(tree, "zz")
    (('a',), (), None)
    """
    parts = [p for p in text.split("/")] if text else []

    def walk(path: tuple[str, ...], rest: list[str]) -> tuple[str, ...] | None:
        if not rest:
            return path
        names = child_labels(tree.node_codes, path)  # no tuple per child: a node may have millions
        for cut in range(len(rest), 0, -1):  # the longest name first: "a/b" before "a"
            name = "/".join(rest[:cut])
            if np.any(names == name):
                found = walk((*path, name), rest[cut:])
                if found is not None:
                    return found
        return None

    return walk((), parts)


def apply_node(tree: Hierarchy, label: str) -> None:
    """The address's node (before the node picker is drawn)."""
    value = _take("node")
    if value is None:
        return
    path = node_path(tree, value)
    if path is None:
        _problem(f"node={value!r}: no such node in these levels (a path of names joined by '/', root first)")
        return
    picker.put_node(label, tree.depth, path)


def show_problems() -> None:
    """Name every value of the address that was left out (once)."""
    problems = st.session_state.pop(_PROBLEMS, [])
    if problems:
        st.warning(
            "Some settings of the address could not be used and were left out:" + "".join(f"\n- {p}" for p in problems),
            icon=":material/link_off:",
        )


def publish(settings: dict[str, str]) -> str:
    """Write ``settings`` into the address (a reload keeps them); the query string of the link."""
    query = {k: v for k, v in settings.items() if v is not None}
    if query != _address():
        st.query_params.from_dict(query)
    st.session_state[_SEEN] = query
    return urlencode(query, safe=",/")


def upload_settings() -> dict:
    """The address's values that bring this session's accepted upload back after a reload."""
    from pages.common import kept_uploads, uploads

    accepted = st.session_state.get(uploads.ACCEPTED)
    return {} if accepted is None else {"dataset": UPLOAD, "upload": kept_uploads.keep(accepted)}


def release_settings(dataset: str | None, levels: list[str] | None, params, node: tuple[str, ...]) -> dict:
    """The address's values for a release shown on Explore (``levels``: None when every level is kept)."""
    return {
        "dataset": dataset,
        "levels": ",".join(levels) if levels is not None else None,
        **_budget(params.epsilons, params.rhos),
        "methods": ",".join(params.methods),
        "k": str(params.max_size) if params.k_select == "public" else params.k_select,
        "consistency": params.consistency,
        "merge": params.merge,
        "seed": None if params.secure else str(params.seed),
        "node": "/".join(node) if node else None,
    }


def _budget(epsilons, rhos) -> dict[str, str]:
    """The address's ε per level of a pure-ε release, or ρ per level of a zCDP one.

    >>> _budget(None, [0.125, 0.5])
    {'rhos': '0.125,0.5'}
    """
    if rhos is not None:
        return {"rhos": ",".join(f"{float(r):.12g}" for r in rhos)}
    return {"eps": ",".join(f"{float(e):.12g}" for e in epsilons)}


# ------------------------------------------------------------ saved files back into the sidebar
def saved_settings(data: bytes, filename: str) -> dict[str, str]:
    """The address's values held by a saved parameters JSON (Explore's download) or release file.

    Raises :class:`cocoviz.errors.InputError` naming the file when it is neither.

    >>> saved_settings(b'{"epsilons": [0.5, 1], "methods": ["Hg", "Hc"], "max_size": 12, "dataset": "toy",'
    ...                b' "consistency": "top-down", "merge": "weighted", "seed": 4}', "p.json")["eps"]
    '0.5,1'
    """
    import json

    from cocoviz.errors import InputError

    if filename.lower().endswith(".json"):
        try:
            saved = json.loads(data)
            plan = {k: saved[k] for k in ("methods", "max_size", "consistency", "merge")}
            plan["budget"] = _budget(saved["epsilons"], saved.get("rhos"))
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{filename!r} is not a saved parameters file (no {exc})") from None
        plan["k_select"] = saved.get("k_select", "public")
        plan["levels"] = saved.get("levels_used")
        extra = {"dataset": saved.get("dataset"), "seed": saved.get("seed")}
    else:
        from pages.common.data import release_from_bytes

        release = release_from_bytes(data, filename)
        p = release.plan
        plan = {
            "budget": _budget(p.epsilons, p.rhos),
            "methods": list(p.methods),
            "max_size": p.max_size,
            "consistency": p.consistency,
            "merge": p.merge,
            "k_select": p.k_select,
            "levels": list(p.shape.levels),
        }
        extra = {}
    settings = {
        **plan["budget"],
        "methods": ",".join(map(str, plan["methods"])),
        "k": str(plan["max_size"]) if plan["k_select"] == "public" else str(plan["k_select"]),
        "consistency": str(plan["consistency"]),
        "merge": str(plan["merge"]),
        "levels": ",".join(plan["levels"]) if plan["levels"] is not None else None,
        **{k: str(v) for k, v in extra.items() if v is not None},
    }
    return {k: v for k, v in settings.items() if v is not None}


def loaded_notice(file_name: str, loaded_for, dataset) -> str | None:
    """The "settings loaded" notice of the load panel, while the dataset is still the one they were loaded on;
    ``None`` once it changed (the notice would then speak of settings no longer shown).

    >>> loaded_notice("p.json", "toy", "toy")
    'Settings of p.json loaded.'
    >>> loaded_notice("p.json", "toy", "housing") is None
    True
    """
    return f"Settings of {file_name} loaded." if loaded_for == dataset else None


def load_saved_panel() -> None:
    """Sidebar: a saved parameters JSON or release file puts its settings back (read as an address is)."""
    from cocoviz.errors import CocovizError

    panel = st.sidebar.expander("Load saved settings", key="links.load_open", on_change="rerun")
    if not panel.open:
        return
    file = panel.file_uploader(
        "A parameters JSON or a release file saved from Explore",
        type=["json", "parquet"],
        key="links.saved_file",
        help="Its ε, methods, K, consistency, merge and levels (and the dataset and seed of a parameters file) "
        "go back into the sidebar. A release file does not name its dataset: it applies to the data chosen.",
    )
    if file is None:
        return
    data = file.getvalue()
    digest = (file.name, len(data), hash(data))
    if st.session_state.get("links.loaded") == digest:
        # The first run after loading records the dataset the settings went to (a parameters file may name it).
        loaded_for = st.session_state.setdefault("links.loaded_for", state.get("dataset"))
        notice = loaded_notice(file.name, loaded_for, state.get("dataset"))
        if notice:
            panel.caption(notice)
        return
    st.session_state["links.loaded"] = digest
    st.session_state.pop("links.loaded_for", None)
    try:
        settings = saved_settings(data, file.name)
    except CocovizError as exc:
        panel.error(str(exc), icon=":material/error:")
        return
    st.session_state[_PENDING] = settings
    st.session_state[_PROBLEMS] = []
    st.rerun()
