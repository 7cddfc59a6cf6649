"""Learn: the method on the slides' example, step by step, with the engine's own functions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import cocoviz
from cocoviz import Plan, measure, plots
from cocoviz.consistency import match_groups
from cocoviz.consistency.merge import merge_estimates
from cocoviz.core.histograms import cumulative, from_ranked, ranked
from cocoviz.evaluate.against_truth import RATIO_READINGS, plain_reading
from cocoviz.evaluate.metrics import emd
from cocoviz.experiments.gauss import noise_variances
from cocoviz.hierarchy import Hierarchy
from cocoviz.methods.estimators import GroupEstimate
from cocoviz.methods.isotonic import block_sizes, isotonic
from cocoviz.release.post_process import fit_level
from pages.common import data, engine, state
from pages.common.help import HELP
from pages.common.numbers import number_box, stop_if_refused

EXAMPLES = {
    "persons": "The slides' Persons table (8 persons, 4 groups, regions a and b)",
    "groups": "The slides' consistency example (9 groups: a = 1,1,1,2,9; b = 1,3,3,6)",
}

#: The default seed: one at which the noisy root is out of order for both examples and methods, so the
#: "repair the order" step visibly changes something (tests/app/test_pages.py checks it).
TEACHING_SEED = 1

#: The eight steps' short names, in order; step n's header carries the anchor "step-n" so the navigation
#: at the top and in the sidebar can jump to it (the page is several screens long).
STEPS = (
    "Persons → groups",
    "H, Hc and Hg",
    "Noise",
    "Repair the order",
    "Matching",
    "Merging",
    "One consistent release",
    "How good is it?",
)


def step_anchor(n: int) -> str:
    return f"step-{n}"


def step_header(n: int, title: str) -> None:
    """Step n's header, titled "n · title", with the anchor the step navigation links to."""
    st.header(f"{n} · {title}", anchor=step_anchor(n))


def step_links(sep: str) -> str:
    """Markdown links to every step's anchor, joined by sep; no link breaks across lines (no-break spaces)."""
    return sep.join(
        f"[{n} · {name}](#{step_anchor(n)})".replace(" ", "\u00a0") for n, name in enumerate(STEPS, start=1)
    )


@dataclass(frozen=True)
class Settings:
    example: str
    eps: float
    seed: int
    method: str
    K: int


def settings() -> Settings:
    """The sidebar's teaching controls."""
    with st.sidebar:
        st.header("Teaching controls")
        example = st.radio(
            "Example",
            list(EXAMPLES),
            format_func=EXAMPLES.get,
            **state.bind("learn.example", "persons", valid=EXAMPLES.__contains__),
        )
        eps = st.slider("ε per level", 0.1, 5.0, step=0.1, help=HELP["epsilon"], **state.bind("learn.eps", 1.0))
        seed = number_box(st, "Seed", "learn.seed", TEACHING_SEED, whole=True, lo=0, hi=10_000, help=HELP["seed"])
        method = st.radio(
            "Per-node method",
            ["Hg", "Hc"],
            horizontal=True,
            help=HELP["method"],
            **state.bind("learn.method", "Hg", valid=("Hg", "Hc").__contains__),
        )
        k = number_box(
            st, "K (public bound, for Hc)", "learn.K", 10, name="K", whole=True, lo=1, hi=1000, help=HELP["K"]
        )
    stop_if_refused(seed, k)
    return Settings(example, float(eps), int(seed), method, int(k))


def example_data(example: str) -> tuple[Hierarchy, pd.DataFrame | None, pd.DataFrame]:
    """The example's tree, its persons table (or None) and its groups table."""
    if example == "persons":
        persons = data.toy_persons()
        # G per region comes from the public groups table, never from the persons' rows.
        tree = Hierarchy.from_persons(persons, group="group", levels=["region"], groups=data.toy_groups())
        groups = persons.groupby(["group", "region"], sort=True).size().reset_index(name="size")
        return tree, persons, groups[["group", "size", "region"]]
    groups = pd.DataFrame({"group": range(1, 10), "size": [1, 1, 1, 2, 9, 1, 3, 3, 6], "region": [*"aaaaa", *"bbbb"]})
    return Hierarchy.from_groups(groups, size="size", levels=["region"]), None, groups


def expand(est: GroupEstimate) -> tuple[np.ndarray, np.ndarray]:
    """Per-group sizes and variances of an estimate (runs expanded), smallest first."""
    return np.repeat(est.sizes, est.counts), np.repeat(est.variances, est.counts)


def step_groups(persons: pd.DataFrame | None, groups: pd.DataFrame) -> None:
    step_header(1, "Persons → groups")
    c1, c2 = st.columns(2)
    if persons is not None:
        c1.markdown(
            "The private table: one row per person, with the group (household, taxi, block) they belong to "
            "and its region. Neighbouring databases differ by **one person**."
        )
        c1.dataframe(persons, hide_index=True, width="stretch")
        c2.markdown(
            "`SELECT group, COUNT(*) AS size … GROUP BY group`: each group's **size**. The groups and their "
            "regions are a public table, so the number of groups G of every region is public; the sizes are private."
        )
    else:
        c1.markdown("Here we start from the groups directly: nine groups in regions a and b.")
    c2.dataframe(groups, hide_index=True, width="stretch")


def step_representations(tree: Hierarchy, nodes: list[tuple]) -> None:
    step_header(2, "Three views of one histogram: H, Hc and Hg")
    st.markdown(
        "**H[j]** = how many groups have exactly j persons (the count-of-counts histogram). **Hc[j]** = how "
        "many have at most j (cumulative). **Hg** = the group sizes sorted, smallest first (ranked). The error "
        "measure, **emd**, is Σ|Hc − Ĥc| = Σ|Hg − Ĥg|: the persons to add or remove to turn one into the other."
    )
    for tab, node in zip(st.tabs(["root", *[f"region {c[-1]}" for c in nodes[1:]]]), nodes):
        with tab:
            h = tree.histogram(node)
            key = f"repr_{'_'.join(node) or 'root'}"
            st.plotly_chart(plots.representations_figure(h), theme="streamlit", key=key)
            st.markdown(
                f"H = `{h.tolist()}` · Hc = `{cumulative(h).tolist()}` · Hg = `{ranked(h).tolist()}` · "
                f"G = {int(h.sum())}"
            )


def step_noise(plan: Plan, root_true: np.ndarray, root_noisy: np.ndarray, s: Settings) -> None:
    step_header(3, f"Noise: the geometric mechanism on {s.method}")
    if s.method == "Hg":
        st.markdown(
            f"Adding or removing one person changes one group's size by one, so one entry of Hg moves by 1: "
            f"the **sensitivity Δ = 1**. Each entry gets double-geometric noise of scale Δ/ε = {1 / s.eps:.2g}. "
            "Noisy sizes can be out of order, negative or far off."
        )
    else:
        st.markdown(
            f"One person more or less moves one cumulative count Hc[j] by 1 (Δ = 1). Hc[0..K−1] gets noise of "
            f"scale Δ/ε = {1 / s.eps:.2g}; Hc[K] = G is public and kept exact. The noisy counts can decrease, "
            "which a cumulative histogram never does."
        )
    ranked_view = s.method == "Hg"
    quantity = plan.level_method(0).quantity(plan.max_size)
    st.plotly_chart(
        plots.noise_figure(
            root_true,
            root_noisy,
            x_title="rank i" if ranked_view else "size j",
            start=1 if ranked_view else 0,
            title=f"root: true {quantity} and its noisy measurement",
        ),
        theme="streamlit",
        key="noise_fig",
    )
    st.caption(
        f"Budget: ε = {s.eps:g} at each level; the two regions hold different persons, so they share their "
        f"level's ε (parallel composition); root + regions cost {plan.cost().total:g} in total (sequential), "
        "as the plan said before any noise was drawn."
    )


def step_noise_choice(s: Settings) -> None:
    """Laplace against Gaussian noise on this example's two levels, and when each wins (no figure: a table)."""
    with st.expander("Laplace or Gaussian noise? (zCDP, as the 2020 Census accounts)"):
        st.markdown(
            "Hc and Hg change in one cell by 1 when a person joins a group, so their L1 and L2 sensitivities are "
            "both 1. The 2020 Census adds **discrete Gaussian** noise instead and accounts in **ρ-zCDP** "
            "(`Plan.build(..., rhos=[...])`). Per cell, at this page's ε per level and two levels:"
        )
        table = noise_variances(s.eps, 2)
        st.dataframe(table.round({"std": 3, "relative variance": 3}), hide_index=True)
        st.caption(
            "At **equal ρ** (ρ = ε²/2, what the Laplace release costs in zCDP) the Gaussian's noise is smaller: "
            "it wins. At **equal (ε, δ = 10⁻¹⁰)** the Laplace wins for a release of a few levels; the Gaussian "
            "catches up only once some 20–45 measurements of a person compose (experiment `gauss`, REPRODUCTION.md)."
        )


def step_isotonic(tree: Hierarchy, plan: Plan, root_true, root_noisy, s: Settings) -> None:
    step_header(4, "Isotonic regression: repair the order")
    p = plan.ps[0]
    if s.method == "Hg":
        st.markdown(
            f"True Hg is non-decreasing, so we fit the closest non-decreasing sequence ≥ 0 (p = {p}: "
            "least squares, block **means**). The fit is made of **blocks** — runs of one value — shaded below; "
            "a group in a block of |S| entries gets variance 2/(|S| ε²): bigger blocks average out more noise."
        )
        fit = isotonic(root_noisy.astype(float), p=p, lower=0)
    else:
        st.markdown(
            f"True Hc is non-decreasing between 0 and G, so we fit the closest such sequence (p = {p}: least "
            "absolute deviations, block **medians**), then round and difference back to H. A group's variance "
            "is 4/(ε² · number of groups sharing its estimated size)."
        )
        fit = isotonic(root_noisy.astype(float), p=p, lower=0, upper=tree.groups(()))
    rounded = np.rint(fit)
    ranked_view = s.method == "Hg"
    st.plotly_chart(
        plots.isotonic_figure(
            root_noisy,
            fit,
            truth=root_true,
            rounded=rounded,
            x_title="rank i" if ranked_view else "size j",
            start=1 if ranked_view else 0,
            title="root: noisy values, isotonic fit and its blocks",
        ),
        theme="streamlit",
        key="iso_fig",
    )
    st.markdown(
        f"Blocks (length of the run holding each entry): `{block_sizes(fit).tolist()}` · rounded fit: "
        f"`{rounded.astype(int).tolist()}`"
    )


def independent_table(tree: Hierarchy, estimates: dict[tuple, GroupEstimate]) -> pd.DataFrame:
    """Every node's independent estimate, shown and checked for consistency."""
    indep = pd.DataFrame(
        [
            {
                "node": "root" if not node else node[-1],
                "estimated Hg": expand(est)[0].tolist(),
                "variances": [round(v, 3) for v in expand(est)[1]],
                "true Hg": ranked(tree.histogram(node)).tolist(),
                "emd": emd(tree.histogram(node), from_ranked(expand(est)[0])),
            }
            for node, est in estimates.items()
        ]
    )
    st.markdown("Every node is estimated **independently** the same way:")
    st.dataframe(indep, hide_index=True, width="stretch")
    children = [node for node in estimates if node]
    child_sum = sorted(np.concatenate([expand(estimates[c])[0] for c in children]).tolist())
    root_est = expand(estimates[()])[0].tolist()
    if child_sum == root_est:
        st.info("This time the children happen to add up to the root — usually they do not.")
    else:
        st.warning(f"Not consistent: the root says `{root_est}` but its children together say `{child_sum}`.")
    return indep


def step_matching(estimates: dict[tuple, GroupEstimate]) -> tuple[np.ndarray, np.ndarray]:
    step_header(5, "Matching the root's groups to its children's groups")
    st.markdown(
        "Each root group is one of the children's groups, but which? Put the root's G groups on top and all the "
        "children's groups at the bottom, join each pair by an edge of cost |size on top − size at the bottom| "
        "and take the **cheapest perfect matching**. In one dimension it is simple: match smallest with "
        "smallest (Algorithm 2, O(n log n)); ties between children are shared in proportion."
    )
    parent_sizes = expand(estimates[()])[0]
    kids_sizes = {node[-1]: expand(est)[0] for node, est in estimates.items() if node}
    child_of, index_of = match_groups(parent_sizes, list(kids_sizes.values()))
    st.plotly_chart(
        plots.matching_figure(parent_sizes, kids_sizes, child_of, index_of, parent_name="root"),
        theme="streamlit",
        key="match_fig",
    )
    return child_of, index_of


def step_merging(estimates: dict[tuple, GroupEstimate], child_of, index_of) -> tuple[np.ndarray, list[str]]:
    step_header(6, "Merging each matched pair")
    st.markdown(
        "Each group now has two size estimates — the root's and its region's — each with a variance. The "
        "**weighted** merge trusts the less noisy one more: (a/Va + b/Vb) / (1/Va + 1/Vb), with variance "
        "1/(1/Va + 1/Vb). The **plain** average is (a + b)/2. Merged sizes are rounded."
    )
    a, va = expand(estimates[()])
    kids = {node[-1]: expand(est) for node, est in estimates.items() if node}
    names = list(kids)
    b = np.array([kids[names[c]][0][j] for c, j in zip(child_of, index_of)], float)
    vb = np.array([kids[names[c]][1][j] for c, j in zip(child_of, index_of)], float)
    w, vw = merge_estimates(a.astype(float), va, b, vb, "weighted")
    avg, _ = merge_estimates(a.astype(float), va, b, vb, "average")
    order = np.lexsort((index_of, child_of))
    labels = [f"{names[child_of[i]]}:{index_of[i] + 1}" for i in order]
    st.plotly_chart(
        plots.merge_figure(
            a[order],
            b[order],
            {"weighted": w[order], "plain": avg[order]},
            labels=labels,
            title="two estimates per group and their merge",
        ),
        theme="streamlit",
        key="merge_fig",
    )
    table = pd.DataFrame(
        {
            "group (region:rank)": labels,
            "root's estimate a": a[order],
            "Va": va[order].round(3),
            "region's estimate b": b[order],
            "Vb": vb[order].round(3),
            "weighted": w[order].round(2),
            "variance after": vw[order].round(3),
            "plain": avg[order].round(2),
            "rounded (weighted)": np.rint(w[order]).astype(int),
        }
    )
    st.dataframe(table, hide_index=True, width="stretch")
    return w, names


def step_back_substitution(tree: Hierarchy, indep: pd.DataFrame, merged, child_of, names: list[str]) -> None:
    step_header(7, "Back-substitution: one consistent release")
    st.markdown(
        "The merged sizes become the regions' groups (in a deeper tree, they are matched again with the next "
        "level down). At the leaves they are final, and every node above is the **sorted union** of its "
        "leaves' groups: integral, non-negative, G kept, and parent = Σ children exactly."
    )
    final = {name: np.sort(np.rint(merged[child_of == k]).astype(np.int64)) for k, name in enumerate(names)}
    root_final = np.sort(np.concatenate(list(final.values())))
    rows = [("root", (), root_final)] + [(name, (name,), final[name]) for name in names]
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "node": label,
                    "final Hg": sizes.tolist(),
                    "final H": from_ranked(sizes).tolist(),
                    "true H": tree.histogram(path).tolist(),
                    "emd": emd(tree.histogram(path), from_ranked(sizes)),
                    "emd before": int(indep.loc[k, "emd"]),
                }
                for k, (label, path, sizes) in enumerate(rows)
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    summed = np.zeros(int(root_final.max()) + 1 if root_final.size else 1, np.int64)
    for name in names:
        hh = from_ranked(final[name])
        summed[: len(hh)] += hh
    ok = np.array_equal(summed, from_ranked(root_final))
    (st.success if ok else st.error)(
        f"parent = Σ children: H(root) = {from_ranked(root_final).tolist()} = "
        f"{' + '.join(str(from_ranked(final[n]).tolist()) for n in names)}",
        icon=":material/check_circle:" if ok else ":material/cancel:",
    )
    st.caption("cocoviz.estimate runs all of this for every node of a real hierarchy in one call — see Explore.")


def step_accuracy(tree: Hierarchy, s: Settings) -> None:
    step_header(8, "How good is it? In plain words, and against the omniscient yardstick")
    st.markdown(
        "Three figures say how good a node's release is. **Persons misplaced per group**: the emd divided by "
        "the number of groups G — on average, how many persons each group has too many or too few. **Groups "
        "of exactly the right size**: Σ_s min(H[s], Ĥ[s]) / G, the share of groups that can be paired with a "
        "released group of the very same size. **The omniscient yardstick D/ε**: an algorithm that **knew "
        "which group sizes exist** at a node (D of them) and added Laplace noise of scale 1/ε only to the count "
        "of each would be off by about D/ε. No real method knows that, so a ratio emd / (D/ε) near 1 means "
        "*about as good as knowing which sizes exist*. Below, the engine's own top-down release of this "
        "example, evaluated against the truth."
    )
    release = engine.guard(
        cocoviz.estimate, tree, epsilons=[s.eps, s.eps], methods=[s.method, s.method], max_size=s.K, seed=s.seed
    )
    ev = cocoviz.evaluate(tree, release)
    shown = ev[["node", "groups", "sizes", "emd", "emd_per_group", "exact_share", "omniscient", "ratio"]]
    st.dataframe(
        shown.rename(
            columns={
                "sizes": "D",
                "emd_per_group": "misplaced per group",
                "exact_share": "exactly right",
                "omniscient": "D/ε",
                "ratio": "emd / (D/ε)",
            }
        ),
        hide_index=True,
        width="stretch",
        column_config={"exactly right": st.column_config.NumberColumn(format="percent")},
    )
    for row in ev.itertuples(index=False):
        st.markdown(f"**{row.node}** — {plain_reading(row._asdict())}")
    grades = " · ".join(
        f"≤ {bound:g}: *{words}*" if bound != float("inf") else f"above: *{words}*" for bound, words in RATIO_READINGS
    )
    st.caption(
        f"How the ratio emd / (D/ε) reads: {grades}. Below 0.5× is possible, not a mistake: the yardstick "
        "noises each of the D counts on its own and uses nothing else, while the release also uses what is "
        "public and true of every histogram — G, whole non-negative counts, and the order that isotonic "
        "regression repairs — and these constraints cancel part of the noise, most of all at small nodes."
    )
    st.markdown(
        "**When does a prior help?** Only through what the measurements leave open. Where the noisy answers "
        "pin a histogram down (large ε, fine measurements like Hc), a prior changes nothing. Where they are "
        "coarse (a few buckets, a margin), a public prior — an earlier census of the same places — decides how "
        "the mass is shared inside them, and helps; a merely similar prior can do worse than none, and at very "
        "small ε the noise swamps any prior (`cocoviz.methods.priors`, experiment `tao-e6`)."
    )


def main() -> None:
    st.title("Learn: how a private hierarchical count-of-counts release is made")
    st.caption(
        "The slides' example, one step at a time. Every number below comes from the cocoviz engine's own "
        "functions (measure, the estimators' fits, isotonic regression, matching, merging); change ε or the "
        "seed and watch each step change. The example's data are made up (nobody's private rows), so its true "
        "values are shown beside the noisy ones; the noise is the fast seeded sampler: exploration and "
        "teaching only, not for release."
    )
    st.markdown("**Steps:** " + step_links(" | "))
    s = settings()
    with st.sidebar:
        st.markdown("**Jump to a step**\n\n" + step_links("\n\n"))
    tree, persons, groups = example_data(s.example)
    nodes = [(), *tree.children(())]
    plan = engine.guard(
        Plan.build, tree, epsilons=[s.eps, s.eps], methods=[s.method, s.method], max_size=s.K, consistency="none"
    )
    # The engine's own steps: measure (the only one that reads the persons) and the per-level fits.
    measurements = engine.guard(measure, plan, tree, seed=s.seed)
    fitted = [fit_level(plan, m) for m in measurements.levels]

    def node_estimate(node: tuple) -> GroupEstimate:
        level, k = plan.shape.locate(node)
        lo, hi = fitted[level].ptr[k], fitted[level].ptr[k + 1]
        return GroupEstimate(fitted[level].sizes[lo:hi], fitted[level].counts[lo:hi], fitted[level].variances[lo:hi])

    estimates = {node: node_estimate(node) for node in nodes}
    root_noisy = measurements.levels[0].node(0)
    root_true = plan.level_method(0).query(*tree.node_runs(()), plan.max_size)  # the truth, for the picture only

    step_groups(persons, groups)
    step_representations(tree, nodes)
    step_noise(plan, root_true, root_noisy, s)
    step_noise_choice(s)
    step_isotonic(tree, plan, root_true, root_noisy, s)
    indep = independent_table(tree, estimates)
    child_of, index_of = step_matching(estimates)
    merged, names = step_merging(estimates, child_of, index_of)
    step_back_substitution(tree, indep, merged, child_of, names)
    step_accuracy(tree, s)


main()
