"""Learn: the method on the slides' example, step by step, with the engine's own functions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from cocoviz import Plan, measure, plots
from cocoviz.consistency import match_groups, merge_estimates
from cocoviz.estimators import GroupEstimate
from cocoviz.hierarchy import Hierarchy
from cocoviz.histograms import cumulative, from_ranked, ranked
from cocoviz.isotonic import block_sizes, isotonic
from cocoviz.metrics import emd
from cocoviz.postprocess import fit_level
from pages.common import data, engine, state
from pages.common.controls import HELP

st.title("Learn: how a private hierarchical count-of-counts release is made")
st.caption(
    "The slides' example, one step at a time. Every number below comes from the cocoviz engine's own "
    "functions (estimators, isotonic regression, matching, merging); change ε or the seed and watch each "
    "step change."
)

EXAMPLES = {
    "persons": "The slides' Persons table (8 persons, 4 groups, regions a and b)",
    "groups": "The slides' consistency example (9 groups: a = 1,1,1,2,9; b = 1,3,3,6)",
}

with st.sidebar:
    st.header("Teaching controls")
    example = st.radio(
        "Example",
        list(EXAMPLES),
        format_func=EXAMPLES.get,
        **state.bind("learn.example", "persons", valid=EXAMPLES.__contains__),
    )
    eps = st.slider("ε per level", 0.1, 5.0, step=0.1, help=HELP["epsilon"], **state.bind("learn.eps", 1.0))
    seed = int(
        st.number_input("Seed", min_value=0, max_value=10_000, step=1, help=HELP["seed"], **state.bind("learn.seed", 3))
    )
    method = st.radio(
        "Per-node method",
        ["Hg", "Hc"],
        horizontal=True,
        help=HELP["method"],
        **state.bind("learn.method", "Hg", valid=("Hg", "Hc").__contains__),
    )
    K = int(
        st.number_input(
            "K (public bound, for Hc)", min_value=1, max_value=1000, step=1, help=HELP["K"], **state.bind("learn.K", 10)
        )
    )

if example == "persons":
    persons = data.toy_persons()
    # G per region comes from the public groups table, never from the persons' rows.
    tree = Hierarchy.from_persons(persons, group="group", levels=["region"], groups=data.toy_groups())
    groups = (
        persons.groupby(["group", "region"], sort=True).size().reset_index(name="size")[["group", "size", "region"]]
    )
else:
    persons = None
    groups = pd.DataFrame({"group": range(1, 10), "size": [1, 1, 1, 2, 9, 1, 3, 3, 6], "region": ["a"] * 5 + ["b"] * 4})
    tree = Hierarchy.from_groups(groups, size="size", levels=["region"])
children = tree.children(())
plan = engine.guard(Plan.build, tree, epsilons=[eps, eps], methods=[method, method], max_size=K, consistency="none")

# --------------------------------------------------------------------- step 1
st.header("1 · Persons → groups")
c1, c2 = st.columns(2)
if persons is not None:
    c1.markdown(
        "The private table: one row per person, with the group (household, taxi, block) they belong to "
        "and its region. Neighbouring databases differ by **one person**."
    )
    c1.dataframe(persons, hide_index=True, width="stretch")
    c2.markdown(
        "`SELECT group, COUNT(*) AS size … GROUP BY group`: each group's **size**. The number of groups G "
        "of every region is public; the sizes are private."
    )
else:
    c1.markdown("Here we start from the groups directly: nine groups in regions a and b.")
c2.dataframe(groups, hide_index=True, width="stretch")

# --------------------------------------------------------------------- step 2
st.header("2 · Three views of one histogram: H, Hc and Hg")
st.markdown(
    "**H[j]** = how many groups have exactly j persons (the count-of-counts histogram). **Hc[j]** = how "
    "many have at most j (cumulative). **Hg** = the group sizes sorted, smallest first (ranked). The error "
    "measure, **emd**, is Σ|Hc − Ĥc| = Σ|Hg − Ĥg|: the persons to add or remove to turn one into the other."
)
node_tabs = st.tabs(["root", *[f"region {c[-1]}" for c in children]])
for tab, node in zip(node_tabs, [(), *children]):
    with tab:
        h = tree.histogram(node)
        st.plotly_chart(plots.representations_figure(h), theme="streamlit", key=f"repr_{'_'.join(node) or 'root'}")
        st.markdown(
            f"H = `{h.tolist()}` · Hc = `{cumulative(h).tolist()}` · Hg = `{ranked(h).tolist()}` · G = {int(h.sum())}"
        )

# --------------------------------------------------------------------- step 3
# The engine's own steps: measure (the only one that reads the persons) and the per-node fits.
measurements = engine.guard(measure, plan, tree, seed=seed)
nodes = [(), *children]


def node_estimate(node: tuple) -> GroupEstimate:
    """One node's independent estimate, out of the engine's fit of its whole level."""
    level = len(node)
    fitted = fit_level(plan, measurements.levels[level])
    k = plan.shape.locate(node)[1]
    lo, hi = fitted.ptr[k], fitted.ptr[k + 1]
    return GroupEstimate(fitted.sizes[lo:hi], fitted.counts[lo:hi], fitted.variances[lo:hi])


estimates = {node: node_estimate(node) for node in nodes}
root_method = plan.level_method(0)
root_noisy = measurements.levels[0].node(0)
root_true = root_method.query(*tree.node_runs(()), plan.max_size)  # the truth, for the picture only
quantity = root_method.quantity(plan.max_size)

st.header(f"3 · Noise: the geometric mechanism on {method}")
if method == "Hg":
    st.markdown(
        f"Adding or removing one person changes one group's size by one, so one entry of Hg moves by 1: "
        f"the **sensitivity Δ = 1**. Each entry gets double-geometric noise of scale Δ/ε = {1 / eps:.2g}. "
        "Noisy sizes can be out of order, negative or far off."
    )
else:
    st.markdown(
        f"One person more or less moves one cumulative count Hc[j] by 1 (Δ = 1). Hc[0..K−1] gets noise of "
        f"scale Δ/ε = {1 / eps:.2g}; Hc[K] = G is public and kept exact. The noisy counts can decrease, "
        "which a cumulative histogram never does."
    )
st.plotly_chart(
    plots.noise_figure(
        root_true,
        root_noisy,
        x_title="rank i" if method == "Hg" else "size j",
        start=1 if method == "Hg" else 0,
        title=f"root: true {quantity} and its noisy measurement",
    ),
    theme="streamlit",
    key="noise_fig",
)
st.caption(
    f"Budget: ε = {eps:g} at each level; the two regions hold different persons, so they share their "
    f"level's ε (parallel composition); root + regions cost {plan.cost().total:g} in total (sequential), "
    "as the plan said before any noise was drawn."
)

# --------------------------------------------------------------------- step 4
st.header("4 · Isotonic regression: repair the order")
p = plan.ps[0]
if method == "Hg":
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
    groups_root = tree.groups(())
    fit = isotonic(root_noisy.astype(float), p=p, lower=0, upper=groups_root)
rounded = np.rint(fit)
st.plotly_chart(
    plots.isotonic_figure(
        root_noisy,
        fit,
        truth=root_true,
        rounded=rounded,
        x_title="rank i" if method == "Hg" else "size j",
        start=1 if method == "Hg" else 0,
        title="root: noisy values, isotonic fit and its blocks",
    ),
    theme="streamlit",
    key="iso_fig",
)
st.markdown(
    f"Blocks (length of the run holding each entry): `{block_sizes(fit).tolist()}` · rounded fit: "
    f"`{rounded.astype(int).tolist()}`"
)


def expand(est) -> tuple[np.ndarray, np.ndarray]:
    """Per-group sizes and variances of an estimate (runs expanded), smallest first."""
    return np.repeat(est.sizes, est.counts), np.repeat(est.variances, est.counts)


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
child_sum = sorted(np.concatenate([expand(estimates[c])[0] for c in children]).tolist())
root_est = expand(estimates[()])[0].tolist()
if child_sum == root_est:
    st.info("This time the children happen to add up to the root — usually they do not.")
else:
    st.warning(f"Not consistent: the root says `{root_est}` but its children together say `{child_sum}`.")

# --------------------------------------------------------------------- step 5
st.header("5 · Matching the root's groups to its children's groups")
st.markdown(
    "Each root group is one of the children's groups, but which? Put the root's G groups on top and all the "
    "children's groups at the bottom, join each pair by an edge of cost |size on top − size at the bottom| "
    "and take the **cheapest perfect matching**. In one dimension it is simple: match smallest with "
    "smallest (Algorithm 2, O(n log n)); ties between children are shared in proportion."
)
parent_sizes, parent_var = expand(estimates[()])
kids_sizes = {c[-1]: expand(estimates[c])[0] for c in children}
kids_var = {c[-1]: expand(estimates[c])[1] for c in children}
child_of, index_of = match_groups(parent_sizes, list(kids_sizes.values()))
st.plotly_chart(
    plots.matching_figure(parent_sizes, kids_sizes, child_of, index_of, parent_name="root"),
    theme="streamlit",
    key="match_fig",
)

# --------------------------------------------------------------------- step 6
st.header("6 · Merging each matched pair")
st.markdown(
    "Each group now has two size estimates — the root's and its region's — each with a variance. The "
    "**weighted** merge trusts the less noisy one more: (a/Va + b/Vb) / (1/Va + 1/Vb), with variance "
    "1/(1/Va + 1/Vb). The **plain** average is (a + b)/2. Merged sizes are rounded."
)
names = list(kids_sizes)
a = parent_sizes.astype(float)
va = parent_var
b = np.array([kids_sizes[names[c]][j] for c, j in zip(child_of, index_of)], float)
vb = np.array([kids_var[names[c]][j] for c, j in zip(child_of, index_of)], float)
w, vw = merge_estimates(a, va, b, vb, "weighted")
avg, _ = merge_estimates(a, va, b, vb, "average")
order = np.lexsort((index_of, child_of))
labels = [f"{names[child_of[i]]}:{index_of[i] + 1}" for i in order]
true_sizes = {c[-1]: ranked(tree.histogram(c)) for c in children}
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

# --------------------------------------------------------------------- step 7
st.header("7 · Back-substitution: one consistent release")
st.markdown(
    "The merged sizes become the regions' groups (in a deeper tree, they are matched again with the next "
    "level down). At the leaves they are final, and every node above is the **sorted union** of its "
    "leaves' groups: integral, non-negative, G kept, and parent = Σ children exactly."
)
final = {name: np.sort(np.rint(w[child_of == k]).astype(np.int64)) for k, name in enumerate(names)}
root_final = np.sort(np.concatenate(list(final.values())))
rows = [
    {
        "node": "root",
        "final Hg": root_final.tolist(),
        "final H": from_ranked(root_final).tolist(),
        "true H": tree.histogram(()).tolist(),
        "emd": emd(tree.histogram(()), from_ranked(root_final)),
        "emd before": int(indep.loc[0, "emd"]),
    }
]
for k, (c, name) in enumerate(zip(children, names)):
    rows.append(
        {
            "node": name,
            "final Hg": final[name].tolist(),
            "final H": from_ranked(final[name]).tolist(),
            "true H": tree.histogram(c).tolist(),
            "emd": emd(tree.histogram(c), from_ranked(final[name])),
            "emd before": int(indep.loc[k + 1, "emd"]),
        }
    )
st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
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
