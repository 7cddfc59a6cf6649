"""The trivial app grown step by step into Explore's first render, for ``benchmarks/browser.py --floors``.

Each app adds one part of the dashboard's required design (issue 25: a multi-page app whose sidebar holds the
data, the budget with its split and one method preset) as static content: the same widgets, labels, tooltips
and values as Explore's first render on the bundled default, and no computation.  Their first visits, beside
the trivial app's, say how much of the dashboard's ratio its design itself costs.

* ``pages``: the trivial app (its number input, metric and 3-bar chart) as the landing page of
  ``st.navigation`` over the dashboard's six pages (the others stubs), under the dashboard's page config;
* ``sidebar``: ``pages`` with Explore's first-render sidebar (data, release, budget, method preset, K,
  consistency, merge, seed, secure, "Load saved settings");
* ``main``: ``sidebar`` with Explore's main area beside its chart (title, data line, headline metrics, copy
  link, finding advice, panels, node picker, node metrics, tabs, the histogram's controls), sent in
  Explore's order (the chart first); the chart stays the trivial app's 3 bars;
* ``chart``: ``main`` with Explore's own first chart (the histogram of the root on the bundled default, its
  Plotly JSON read from a file beside the app, ``chart.json``: :func:`write_chart`) in place of the 3 bars.

Variants, each with Explore's chart (what a lighter first render would buy, before changing Explore):

* ``sidebar-chart``: pages, sidebar and Explore's chart, nothing else in the main area;
* ``minimal``: ``sidebar-chart`` with only the issue's sidebar at first sight (data, budget, split, method
  preset, per level; K, consistency, merge, seed and secure in a panel drawn when opened);
* ``lean-sidebar``: ``chart`` with that sidebar; ``flex`` and ``lean-flex``: ``chart`` and ``lean-sidebar`` with
  the rows of metrics and controls in one horizontal container each instead of columns;
* ``chart-first``: ``chart`` with the tabs and the chart sent before everything else (the sidebar last).

The apps import only :mod:`pages.common.help` (the tooltips' texts), so the server needs the checkout on
``PYTHONPATH``.
"""

from __future__ import annotations

from pathlib import Path

_HEAD = """
import json
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

from pages.common.help import HELP

st.set_page_config(page_title="cocoviz — private count-of-counts", page_icon="📊", layout="wide")


def trivial():
    x = st.number_input("x", value=1.0)
    st.metric("value", f"{x:g}")
    return x


def chart():
    spec = Path(__file__).with_name("chart.json")
    if spec.exists():  # Explore's own first chart
        st.plotly_chart(json.loads(spec.read_text()), theme="streamlit", key="hist_fig")
    else:
        st.plotly_chart(go.Figure(go.Bar(y=[1, 3, 2])))


#: Rows of metrics and controls in one horizontal container each, instead of columns (a block per column).
FLEX = False


def row(spec):
    if FLEX:
        box = st.container(horizontal=True)
        return [box] * (spec if isinstance(spec, int) else len(spec))
    return st.columns(spec)


def stub():
    st.write("another page")
"""

_SIDEBAR = """
def sidebar(lean=False):
    sb = st.sidebar
    sb.header("Data")
    names = ["toy", "housing", "housing-west", "white", "white-west", "hawaiian", "hawaiian-west", "taxi",
             "housing-us-tracts", "housing-us-blockgroups", "housing-us-blocks", "upload a file…"]
    sb.selectbox("Dataset", names, index=2, key="w-dataset",
                 help="A bundled synthetic stand-in of the paper's data, or your own file.")
    sb.multiselect("Levels below the root", ["state", "county"], default=["state", "county"], help=HELP["levels"],
                   key="w-levels.housing-west")
    sb.header("Release")
    sb.radio("Accounting", ["pure ε", "zCDP"], horizontal=True, help=HELP["accounting"], key="w-accounting")
    sb.number_input("Total ε (all levels)", value=3.0, step=0.1, format="%.12g", key="w-eps.total",
                    help=HELP["epsilon"] + " The split below shares the total over the levels.")
    sb.segmented_control("Split over the levels", ["equal", "more to the leaves", "custom"], default="equal",
                         help="How the total ε is shared over the levels: equal, more to the leaves, custom.",
                         key="w-eps.split")
    sb.caption("ε per level: West Coast 1 · state 1 · county 1")
    sb.selectbox("Method", ["Hc at every level", "Hg at every level", "naive at every level",
                            "Hcp at every level", "per level (set below)"], help=HELP["method"],
                 key="w-methods.preset")
    sb.toggle("Per level: ε, method and p of each level", key="w-per_level",
              help="Show the ε (slider and exact number), method and p of every level.")
    if lean:  # the settings below the presets in a panel drawn when opened
        sb.expander("K, consistency, merge, seed and secure release", key="w-more", on_change="rerun")
        sb.expander("Load saved settings", key="links.load_open", on_change="rerun")
        return
    sb.segmented_control("How K is chosen", ["public K", "noisy max", "noisy max per node", "SVT (teaching)",
                                             "from Hg (no ε)"], default="public K", help=HELP["k_select"],
                         key="w-k_select")
    sb.number_input("K — public bound on group size", value=100000.0, step=1.0, format="%.12g", help=HELP["K"],
                    key="w-K.housing-west")
    sb.caption("Suggested K = 100,000: the public bound from the data card.")
    sb.radio("Consistency", ["top-down", "bottom-up", "none"], horizontal=True, help=HELP["consistency"],
             key="w-consistency")
    sb.radio("Merge", ["weighted", "plain average"], horizontal=True, help=HELP["merge"], key="w-merge")
    sb.number_input("Seed", value=0.0, step=1.0, format="%.12g", help=HELP["seed"], key="w-seed")
    sb.toggle("Secure release (exact sampler, OS-keyed)", help=HELP["secure"], key="w-secure")
    sb.expander("Load saved settings", key="links.load_open", on_change="rerun")
"""

_MAIN = """
def above_tabs():
    st.title("Explore a private release")
    st.caption("Pick a dataset, a budget ε and a method per level in the sidebar; the release below is recomputed "
               "(and cached) for every setting. Figures compare the private histogram with the true one — which "
               "only you, the data holder, can see.")
    st.markdown("**housing-west** — 35,418,147 groups, 95,778,561 persons, 273 distinct sizes; nodes per level "
                "(root first): 1 / 3 / 133  \\nTrue figures, and every error measured against them, come from the "
                "private data: **exploration, not private** — for you, the data holder, never for publication.")
    st.expander("About this dataset (data card)", key="explore.card", on_change="rerun")
    trivial()
    slots = [st.container() for _ in range(4)]  # headline, link, advice, budget
    st.subheader("A node of the hierarchy")
    c1, _c2 = st.columns([2, 3])
    c1.text_input("Find a node", placeholder="a name, its start, or a path: TX / Harris", key="w-find",
                  help="Type a name (any level), the start of a name or code, or a path of names joined by '/'.")
    c1, _c2 = st.columns(2)
    c1.selectbox("state in (root)", ["— (this node) —", "CA", "OR", "WA"], key="w-node.1",
                 help="Pick a state to drill down; '— (this node) —' stays at the level above.")
    return (*slots, st.container())


def main_area(first=False):
    # first: everything above the tabs is filled in after the chart (the sidebar too, by the caller)
    lead = st.container() if first else None
    if not first:
        headline, link, advice, budget, metrics = above_tabs()
    tabs = st.tabs(["Histogram", "Error by size", "Sums", "Errors per level", "Consistency check",
                    "Intervals (publishable)", "Downloads"], key="explore.tab", on_change="rerun")
    with tabs[0]:
        a, b, c, d = row([2, 2, 1, 1])
        a.segmented_control("Layout", ["overlay", "side by side"], default="overlay", key="w-hist.layout")
        b.segmented_control("View", ["H (groups of size j)", "Hc (cumulative)"], default="H (groups of size j)",
                            help="H[j] = groups with exactly j persons; Hc[j] = groups with at most j.",
                            key="w-hist.view")
        c.toggle("log x", key="w-hist.logx")
        d.toggle("log y", key="w-hist.logy")
        chart()
    if first:
        with lead:
            headline, link, advice, budget, metrics = above_tabs()
    with headline:
        m1, m2, m3, m4 = row(4)
        m1.metric("Total ε spent", "3", help=HELP["epsilon"])
        m2.metric("Release computed in", "0.41 s", help="Time of cocoviz.estimate for these settings.")
        m3.metric("Consistent", "yes ✓", help="Integral, non-negative, G kept at every node and parent = Σ children.")
        m4.metric("Mean emd per node (all levels)", "1,234", help=HELP["emd"])
        st.markdown("ε per level: West Coast 1 · state 1 · county 1 — total **3** · fast sampler — **exploration "
                    "only, not for release**")
    with link:
        with st.popover("Copy link", icon=":material/link:", help="A link that opens this release."):
            st.code("http://127.0.0.1/?dataset=housing-west&eps=1,1,1&methods=Hc,Hc,Hc&k=100000", language=None,
                    wrap_lines=True)
    with advice:
        st.info("On this data at ε = 1 per level, the shipped method-selection finding (20 trials, fast sampler) "
                "has a lower mean error with **bottom-up (Hc leaves)** at 3 of 3 levels than with this release's "
                "top-down.", icon=":material/tips_and_updates:")
        st.button("Use bottom-up (Hc leaves)", key="explore.advice")
    with budget:
        st.expander("Privacy budget — per level, total, and what each measurement cost", key="explore.budget",
                    on_change="rerun")
    with metrics:
        st.markdown("**Node:** (root) — level 0: West Coast")
        c1, c2, c3, c4 = row(4)
        c1.metric("Groups G (public)", "35,418,147")
        c2.metric("emd of this node", "531", help=HELP["emd"])
        c3.metric("Omniscient yardstick D/ε", "273", help=HELP["omniscient"])
        c4.metric("emd / yardstick", "1.9", help=HELP["omniscient"])
        c1, c2, _, _ = row(4)
        c1.metric("Persons misplaced per group", "0.000015", help=HELP["per_group"])
        c2.metric("Groups of exactly the right size", "99.998%", help=HELP["exact_share"])
        st.markdown("**In plain words:** On average 0.000015 persons misplaced per group; 99.998% of the groups "
                    "have exactly the right size.")
        st.caption("Against the true data — for you, the data holder; exploration, not private: 273 distinct true "
                   "sizes (D) at ε = 1.")
"""


def _navigation(landing: str) -> str:
    return f"""
PAGES = [
    st.Page({landing}, title="Explore", icon=":material/search:", default=True),
    st.Page(stub, title="Weighted vs. plain averaging", icon=":material/balance:", url_path="merging"),
    st.Page(stub, title="Method selection", icon=":material/alt_route:", url_path="methods"),
    st.Page(stub, title="Compare two releases", icon=":material/compare:", url_path="compare"),
    st.Page(stub, title="Size × tenure", icon=":material/table_chart:", url_path="joint"),
    st.Page(stub, title="Learn", icon=":material/school:", url_path="learn"),
]
st.navigation(PAGES).run()
"""


def write_chart(app: str, path: Path) -> None:
    """Write the Plotly JSON of the first chart that ``app`` (a dashboard's app.py) draws on its defaults."""
    import sys

    from streamlit.testing.v1 import AppTest

    sys.path.insert(0, str(Path(app).parent))  # the dashboard's pages import its checkout's package
    at = AppTest.from_file(app, default_timeout=300).run()
    path.write_text(at.get("plotly_chart")[0].proto.spec)


#: Name → (source, the label of the metric a visit waits for), in the order of the steps.
FLOOR_APPS = {
    "pages": (
        _HEAD + "\n\ndef landing():\n    trivial()\n    chart()\n" + _navigation("landing"),
        "value",
    ),
    "sidebar": (
        _HEAD + _SIDEBAR + "\n\ndef landing():\n    sidebar()\n    trivial()\n    chart()\n" + _navigation("landing"),
        "value",
    ),
    "main": (
        _HEAD + _SIDEBAR + _MAIN + "\n\ndef landing():\n    sidebar()\n    main_area()\n" + _navigation("landing"),
        "Total ε spent",
    ),
}
#: The steps that keep the trivial app's 3 bars; every other app draws Explore's first chart (:func:`write_chart`).
THREE_BARS = ("pages", "sidebar", "main")
#: Same source as "main"; its directory holds Explore's first chart (:func:`write_chart`).
FLOOR_APPS["chart"] = FLOOR_APPS["main"]
#: "chart" without the main area beside the chart: the dashboard's pages, sidebar and first chart only.
FLOOR_APPS["sidebar-chart"] = (
    _HEAD + _SIDEBAR + "\n\ndef landing():\n    sidebar()\n    trivial()\n    chart()\n" + _navigation("landing"),
    "value",
)
#: "sidebar-chart" with the issue's sidebar at first sight only: the least the required design can draw.
FLOOR_APPS["minimal"] = (
    _HEAD
    + _SIDEBAR
    + "\n\ndef landing():\n    sidebar(lean=True)\n    trivial()\n    chart()\n"
    + _navigation("landing"),
    "value",
)
#: "chart" with the issue's sidebar at first sight only (data, budget, split, method preset, per level), the
#: other settings in a panel drawn when opened.
FLOOR_APPS["lean-sidebar"] = (
    _HEAD + _SIDEBAR + _MAIN + "\n\ndef landing():\n    sidebar(lean=True)\n    main_area()\n" + _navigation("landing"),
    "Total ε spent",
)
#: "chart" and "lean-sidebar" with rows of metrics and controls in horizontal containers instead of columns.
FLOOR_APPS["flex"] = (FLOOR_APPS["chart"][0].replace("FLEX = False", "FLEX = True"), "Total ε spent")
FLOOR_APPS["lean-flex"] = (FLOOR_APPS["lean-sidebar"][0].replace("FLEX = False", "FLEX = True"), "Total ε spent")
#: "chart" sent in another order: the tabs and the chart first, then the rest of the main area, the sidebar last.
FLOOR_APPS["chart-first"] = (
    _HEAD
    + _SIDEBAR
    + _MAIN
    + "\n\ndef landing():\n    main_area(first=True)\n    sidebar()\n"
    + _navigation("landing"),
    "Total ε spent",
)
