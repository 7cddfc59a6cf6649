"""Widgets shared by the pages: dataset choice (bundled or uploaded), levels, release parameters (the node
picker: :mod:`pages.common.picker`).

Every widget key goes through :mod:`pages.common.state`, so values survive page
changes.  Tooltips (``help=``) come from :data:`pages.common.help.HELP`.
"""

from __future__ import annotations

import math

import streamlit as st

from cocoviz.hierarchy import Hierarchy
from cocoviz.plan import MAX_K, METHODS, Plan
from cocoviz.privacy.accounting import DEFAULT_DELTA, RHO_RANGE
from cocoviz.privacy.noise import EPSILON_RANGE
from pages.common import budget_sidebar as budget
from pages.common import data, links, privacy_terms, state, uploads
from pages.common.engine import Params, guard
from pages.common.help import HELP
from pages.common.numbers import Refused, number_box, stop_if_refused

METHOD_OPTIONS = tuple(METHODS)
EPS_SLIDER = (0.01, 4.0)


def level_names(tree: Hierarchy, info: data.DataInfo | None = None) -> list[str]:
    """Names of the levels, root first (the data card names the root, e.g. "West Coast")."""
    root = (info.card.get("root") if info is not None else None) or "root"
    return [str(root), *tree.levels]


# --------------------------------------------------------------------- dataset
def dataset_panel() -> tuple[Hierarchy, data.DataInfo, Hierarchy]:
    """Sidebar: dataset (bundled or upload) and levels to keep.

    Returns the tree restricted to the chosen levels, its info, and the full tree.
    """
    sb = st.sidebar
    sb.header("Data")
    names = data.dataset_names() + [data.UPLOAD]
    links.incoming()
    links.apply_dataset(names)
    choice = sb.selectbox(
        "Dataset",
        names,
        **state.bind("dataset", data.default_dataset(), valid=names.__contains__),
        help="A bundled synthetic stand-in of the paper's data, or your own file.",
    )
    if choice == data.UPLOAD:
        full, info = uploads.upload_panel()
    else:
        full = guard(data.load_bundled, choice)
        card = data.data_card(choice)
        info = data.DataInfo(
            key=("bundled", choice),
            label=choice,
            own_data=True,
            public_max_size=data.public_bound(card),
            card=card,
            identity=data.bundled_identity(choice),
        )
    all_levels = list(full.levels)
    links.apply_levels(info.label, all_levels)
    chosen = sb.multiselect(
        "Levels below the root",
        all_levels,
        help=HELP["levels"],
        **state.bind(
            f"levels.{info.label}", all_levels, valid=lambda v: isinstance(v, list) and set(v) <= set(all_levels)
        ),
    )
    chosen = [name for name in all_levels if name in set(chosen)]
    tree = guard(data.restrict, info.key, full, chosen)
    return tree, info, full


#: Said wherever a page shows the truth or errors against it (they come from the private data, unpaid).
TRUTH_LABEL = (
    "True figures, and every error measured against them, come from the private data: **exploration, not "
    "private** — for you, the data holder, never for publication."
)


def describe_tree(tree: Hierarchy, info: data.DataInfo) -> str:
    """The data's headline figures, with the label every page that shows the truth carries."""
    s = tree.summary()
    nodes = " / ".join(f"{n:,}" for n in s["nodes_per_level"])
    return (
        f"**{info.label}** — {s['groups']:,} groups, {s['persons']:,} persons, {s['distinct_sizes']:,} distinct "
        f"sizes; nodes per level (root first): {nodes}  \n{TRUTH_LABEL}"
    )


def k_control(tree: Hierarchy, info: data.DataInfo, *, container=None) -> tuple[int | Refused, bool]:
    """The public bound K (or why the box refuses what was typed), and whether it is the suggestion
    read from the private data (exploration only)."""
    box = container or st.sidebar
    suggested, from_data = data.suggested_k(info, tree)
    value = number_box(
        box,
        "K — public bound on group size",
        f"K.{info.label}",
        suggested,
        name="K",
        whole=True,
        lo=1,
        hi=MAX_K,
        help=HELP["K"],
    )
    public = False
    if from_data:
        box.caption(
            f"Suggested K = {suggested:,}: the largest group rounded up — read from the data itself, so "
            "**exploration only**; a secure release needs a K you know from public facts (type it)."
        )
        if value == suggested:  # typing the same number changes nothing a box can see: say so instead
            public = box.checkbox(
                f"K = {suggested:,} is a bound I know from public facts",
                **state.bind(f"K.public.{info.label}", False),
                help="Tick it when the K shown is also your public bound (typing the same number changes "
                "nothing the box can see): a secure release then uses it.",
            )
    else:
        box.caption(f"Suggested K = {suggested:,}: the public bound from the data card.")
    return value, from_data and value == suggested and not public


K_CHOICES = {
    "public": "public K",
    "noisy-max": "noisy max",
    "noisy-max-per-node": "noisy max per node",
    "svt": "SVT (teaching)",
    "from-hg": "from Hg (no ε)",
}


def prior_control(info: data.DataInfo, tree: Hierarchy, methods: list[str], max_size: int) -> object:
    """Sidebar, when a level uses Hcp: its public prior (None: uniform)."""
    if "Hcp" not in methods:
        return None
    options = ["uniform", "parent"]
    if info.key[0] == "bundled" and info.label.startswith("housing") and tree.depth == 2:
        options.append("previous census")
    choice = st.sidebar.selectbox(
        "Prior for Hcp", options, help=HELP["prior"], **state.bind("prior", "uniform", valid=options.__contains__)
    )
    if choice == "uniform":
        return None
    if choice == "parent":
        return "parent"
    paths = tuple(p for level in range(tree.depth + 1) for p in tree.nodes(level))
    return guard(data.previous_census, info.label, max_size, paths)


def k_select_control() -> tuple[str, float | None, float | None]:
    """Sidebar: how K is chosen, with ε_K and β for a private choice."""
    sb = st.sidebar
    choice = (
        sb.segmented_control(
            "How K is chosen",
            list(K_CHOICES),
            format_func=K_CHOICES.get,
            help=HELP["k_select"],
            **state.bind("k_select", "public", valid=K_CHOICES.__contains__),
        )
        or "public"
    )
    if choice == "public":
        return choice, None, None
    c1, c2 = sb.columns(2)
    # from-hg spends no ε of its own (post-processing of an Hg level's release): no ε_K box.
    k_eps = (
        None
        if choice == "from-hg"
        else number_box(
            c1,
            "ε_K",
            "k_epsilon",
            0.1,
            lo=EPSILON_RANGE[0],
            hi=EPSILON_RANGE[1],
            step=0.05,
            help="Budget of the private K: taken out of the total under a preset split (equal, more to the leaves), "
            "on top of the levels' ε under a custom one.",
        )
    )
    beta = number_box(
        c2,
        "β",
        "k_beta",
        1e-6,
        lo=0.0,
        hi=1.0,
        lo_open=True,
        hi_open=True,
        step=1e-6,
        help="Each K̂ drawn by noisy max (or taken from an Hg level, whose public margin is set by β) truncates "
        "with probability at most β (between 0 and 1, both excluded): with one K̂ per node, some node of the "
        "release may truncate with probability up to nodes × β.",
        disabled=choice == "svt",
    )
    return choice, k_eps, beta


# ------------------------------------------------------------ release controls
def _clip_to_slider(v) -> float:
    try:
        v = float(v)
    except (TypeError, ValueError):
        v = 1.0
    return round(min(max(v, EPS_SLIDER[0]), EPS_SLIDER[1]), 2)


def _copy(src: str, dst: str) -> None:
    state.put(dst, state.get(src))
    if dst.startswith("eps."):  # a level's own ε: the split is the levels' own from now on
        state.put("eps.split", "custom")


def epsilon_box(
    box, label: str, setting: str, default: float, *, name: str | None = None, help: str | None = None
) -> float | Refused:
    """A number box for an ε, bound to ``setting``: its value, or why it is refused (outside the samplers' range)."""
    return number_box(
        box, label, setting, default, name=name, lo=EPSILON_RANGE[0], hi=EPSILON_RANGE[1], step=0.1, help=help
    )


def epsilon_control(level: int, name: str, *, container=None, default: float = 1.0) -> float | Refused:
    """A slider and an exact number for ε of one level, both bound to one setting ``eps.<level>``.

    The slider shows the value clipped to its range; the number shows it
    exactly, and refuses (a :class:`~pages.common.numbers.Refused`, shown) an
    ε outside the range the samplers handle.
    """
    box = container or st.sidebar
    setting = f"eps.{level}"
    c1, c2 = box.columns([3, 2])
    # Both widgets store into eps.<level> through their own bound names.
    state.default(setting, default)
    state.put(f"eps_s.{level}", _clip_to_slider(state.get(setting)))
    state.put(f"eps_n.{level}", state.get(setting))
    c1.slider(
        "ε",
        EPS_SLIDER[0],
        EPS_SLIDER[1],
        step=0.01,
        help=HELP["epsilon"],
        **state.bind(f"eps_s.{level}", 1.0, on_change=_copy, args=(f"eps_s.{level}", setting)),
    )
    exact = number_box(
        c2,
        "exact ε",
        f"eps_n.{level}",
        1.0,
        name=f"ε of level {level}",
        lo=EPSILON_RANGE[0],
        hi=EPSILON_RANGE[1],
        help=f"Type an exact ε (> 0) for level {level} ({name}).",
        on_change=_copy,
        args=(f"eps_n.{level}", setting),
    )
    return exact if isinstance(exact, Refused) else float(state.get(setting))


EPSILON_GRID_OPTIONS = [0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0]


def epsilon_grid_control(container, name: str) -> list[float]:
    """A multiselect of ε per level for a sweep, bound to setting ``<name>.eps``; sorted."""
    chosen = container.multiselect(
        "ε per level", EPSILON_GRID_OPTIONS, **state.bind(f"{name}.eps", [0.25, 0.5, 1.0, 2.0]), help=HELP["epsilon"]
    )
    return sorted(chosen)


def seed_control() -> int | Refused:
    """Sidebar: the fast sampler's seed, shared by every page (or why the box refuses what was typed)."""
    return number_box(st.sidebar, "Seed", "seed", 0, whole=True, lo=0, hi=2**31 - 1, help=HELP["seed"])


def comparison_sidebar() -> tuple[Hierarchy, data.DataInfo, int, int, list[str]]:
    """The comparison pages' sidebar and header line: data, K and seed.

    Returns the tree, its info, K, the seed and the level names (root first).
    """
    tree, info, _full = dataset_panel()
    max_size, _ = k_control(tree, info)
    seed = seed_control()
    stop_if_refused(max_size, seed)
    st.markdown(describe_tree(tree, info))
    return tree, info, max_size, seed, level_names(tree, info)


def _p_of(level: int, method: str) -> int | None:
    p = state.get(f"p.{level}", "default")
    return None if p == "default" or METHODS[method].default_p is None else int(p)


def per_level_controls(names: list[str], zcdp: bool = False) -> tuple[list, list[str], list[int | None]]:
    """Sidebar, once "per level" is open: ε (slider and exact box) or ρ (zCDP), method and p of every level."""
    sb = st.sidebar
    eps, methods, ps = [], [], []
    for level, name in enumerate(names):
        with sb.expander(f"Level {level}: {name}", expanded=level == 0 or len(names) <= 3):
            eps.append(rho_control(level, name) if zcdp else epsilon_control(level, name, container=st))
            c1, c2 = st.columns(2)
            method = c1.selectbox(
                "method",
                METHOD_OPTIONS,
                help=HELP["method"],
                **state.bind(
                    f"method.{level}", "Hc", valid=METHOD_OPTIONS.__contains__, on_change=budget.method_edited
                ),
            )
            p = c2.selectbox(
                "p",
                ["default", 1, 2],
                help=HELP["p"],
                disabled=METHODS[method].default_p is None,
                **state.bind(f"p.{level}", "default", valid=("default", 1, 2).__contains__),
                format_func=lambda v, m=method: f"default ({METHODS[m].default_p})" if v == "default" else str(v),
            )
            methods.append(method)
            ps.append(None if p == "default" or METHODS[method].default_p is None else int(p))
    return eps, methods, ps


def release_controls(tree: Hierarchy, info: data.DataInfo) -> tuple[Params, bool]:
    """Sidebar: per-level ε, method and p; K; consistency; merge; seed; secure.

    Returns the parameters and whether K is the data-derived suggestion (which a secure release refuses).
    """
    sb = st.sidebar
    sb.header("Release")
    names = level_names(tree, info)
    links.apply_release(len(names), info.label)
    zcdp = accounting_control() == "zCDP"
    if zcdp:
        # A zCDP release is planned in ρ per level: the total-ε presets do not apply, the per-level boxes do.
        eps, methods, ps = per_level_controls(names, zcdp=True)
    else:
        eps = budget.budget_controls(names, HELP["epsilon"])
        methods = budget.method_preset(len(names), HELP["method"])
        # Per-level controls are drawn only on request (they are most of the sidebar's first render); their
        # settings are kept while hidden, and a refused per-level ε opens them so that its message is seen.
        if any(isinstance(e, Refused) for e in eps):
            state.put("per_level", True)
        # A custom split, or methods that differ by level (typed, or from a link), are per-level settings:
        # the panel that shows them opens, instead of leaving them out of sight.
        # Opened when they first appear (a later close is kept): the last run's view is remembered.
        shown = (state.get("eps.split") == "custom", tuple(methods) if len(set(methods)) > 1 else None)
        if shown != state.get("per_level.seen", (False, None)) and (shown[0] or shown[1]):
            state.put("per_level", True)
        state.put("per_level.seen", shown)
        if sb.toggle(
            "Per level: ε, method and p of each level", help=budget.PER_LEVEL_HELP, **state.bind("per_level", False)
        ):
            eps, methods, ps = per_level_controls(names)
        else:
            ps = [_p_of(level, m) for level, m in enumerate(methods)]
    k_select, k_epsilon, k_beta = k_select_control()
    max_size, k_from_data = k_control(tree, info)
    # A prior is drawn for a usable K only (a refused K stops the page below).
    prior = prior_control(info, tree, methods, max_size) if not isinstance(max_size, Refused) else None
    consistency = sb.radio(
        "Consistency",
        ["top-down", "bottom-up", "none"],
        help=HELP["consistency"],
        horizontal=True,
        **state.bind("consistency", "top-down"),
    )
    merge = sb.radio(
        "Merge",
        ["weighted", "average"],
        help=HELP["merge"],
        horizontal=True,
        **state.bind("merge", "weighted"),
        format_func=lambda m: "weighted" if m == "weighted" else "plain average",
        disabled=consistency != "top-down",
    )
    seed = seed_control()
    secure = sb.toggle("Secure release (exact sampler, OS-keyed)", **state.bind("secure", False), help=HELP["secure"])
    links.load_saved_panel()
    stop_if_refused(*eps, max_size, seed, *((k_epsilon, k_beta) if k_select != "public" else ()))
    # The secure sampler has no seed: one secure release per setting, whatever the seed box says.
    params = Params.of(
        **({"rhos": eps} if zcdp else {"epsilons": eps}),
        methods=methods,
        p=ps,
        max_size=int(max_size),
        consistency=consistency,
        merge=merge,
        k_select=k_select,
        k_epsilon=k_epsilon,
        k_beta=k_beta,
        prior=prior,
        seed=0 if secure else int(seed),
        secure=secure,
    )
    if zcdp:  # the plan's own charge: ρ per level (a private K's ε_K²/2 at every level it bounds) and (ε, δ)
        sb.caption(zcdp_caption(guard(Plan.build, tree, **params.plan_options()).cost()))
    return params, k_from_data


def zcdp_caption(cost) -> str:
    """The caption of a zCDP plan's cost: ρ per level with its noise (σ of the discrete Gaussian; a private K's
    double-geometric scale), the total ρ the plan charges, δ and its (ε, δ) reading."""
    spent = cost.per_level_rho()
    noise = privacy_terms.level_noise(cost, max(spent, default=-1) + 1)  # worded as the other pages word it
    levels = ", ".join(f"{rho:g} ({noise[k].replace('discrete Gaussian ', '')})" for k, rho in spent.items())
    return (
        f"ρ per level {levels}; ρ = {cost.total_rho:g} in all: (ε = {cost.epsilon_delta():.3g}, "
        f"δ = {cost.delta:g})-DP, discrete Gaussian noise"
        + ("; a private K's ε_K counts ε_K²/2 at each level it is drawn" if _pure_steps(cost) else "")
    )


def _pure_steps(cost) -> bool:
    """Whether a zCDP cost holds a pure-ε step (a private K's noisy max or SVT), which counts ε²/2."""
    return any(c.noise == "laplace" for c in cost.charges)


ACCOUNTING_OPTIONS = ["pure ε", "zCDP"]


def accounting_control(box=None, setting: str = "accounting") -> str:
    """The release's accounting, pure ε (double-geometric noise) or ρ-zCDP (discrete Gaussian): one setting for
    every page (``setting``: a page's own, e.g. one per side of Compare), drawn in the sidebar unless ``box``
    says where."""
    return (box or st.sidebar).radio(
        "Accounting",
        ACCOUNTING_OPTIONS,
        horizontal=True,
        help=HELP["accounting"],
        **state.bind(setting, "pure ε", valid=ACCOUNTING_OPTIONS.__contains__),
    )


def delta_box(box, label: str, setting: str, *, help: str | None = None) -> float | Refused:
    """A number box for the δ at which a zCDP cost is read as (ε, δ)-DP, bound to ``setting`` (default 1e-10);
    its value, or why it is refused (δ in (0, 1))."""
    return number_box(
        box, label, setting, DEFAULT_DELTA, name="δ", lo=0.0, hi=1.0, lo_open=True, hi_open=True, step=1e-10,
        help=help or "δ of the (ε, δ)-DP reading of the total ρ (Canonne, Kamath and Steinke's conversion).",
    )  # fmt: skip


def rho_box(
    box, label: str, setting: str, default: float, *, name: str | None = None, help: str | None = None
) -> float | Refused:
    """A number box for a ρ (zCDP), bound to ``setting``: its value, or why it is refused (outside RHO_RANGE)."""
    return number_box(box, label, setting, default, name=name, lo=RHO_RANGE[0], hi=RHO_RANGE[1], step=0.05, help=help)


def rho_control(level: int, name: str) -> float | Refused:
    """A number box for ρ of one level (zCDP), bound to ``rho.<level>``."""
    return rho_box(
        st, "ρ", f"rho.{level}", 0.5, name=f"ρ of level {level}",
        help=f"ρ (zCDP) of level {level} ({name}): discrete Gaussian noise with σ² = Δ₂²/(2ρ).",
    )  # fmt: skip


def fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.1f}"
