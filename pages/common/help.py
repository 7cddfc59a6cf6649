"""The dashboard's tooltips (``help=``): ε, ρ, K, p, Hc, Hg, emd and the other settings, one text each,
shared by every page."""

HELP = {
    "accounting": (
        "Pure ε: double-geometric noise, ε adds across levels (the paper). zCDP: discrete Gaussian noise, "
        "ρ adds across levels (as the 2020 Census), read as (ε, δ)-DP at δ = 1e-10."
    ),
    "epsilon": (
        "ε (epsilon) is the privacy-loss budget of this level. Smaller ε = more noise = stronger privacy. "
        "Levels compose sequentially, so the total ε is the sum over levels; the nodes of one level hold "
        "disjoint people and share their level's ε in parallel."
    ),
    "method": (
        "How each node of this level is measured. **Hc**: noise on the cumulative histogram Hc[j] = groups "
        "of size ≤ j (0..K−1), then isotonic regression; good on dense data. **Hg**: noise on the sorted group "
        "sizes (one value per group), then isotonic regression; good on sparse data with large gaps. "
        "**naive**: noise on H itself (orders of magnitude worse; shown for comparison)."
    ),
    "p": (
        "Loss of the isotonic regression that repairs the noisy Hc or Hg: p = 1 (least absolute deviations, "
        "block medians) or p = 2 (least squares, block means). Default: Hc p = 1, Hg p = 2."
    ),
    "K": (
        "K is a public upper bound on group size. Hc and naive measure sizes 0..K, so their cost grows with K. "
        "It must come from public knowledge, never from the private data. Exploring, a K below the largest group "
        "is refused (the engine reads the data to say so); a secure release never reads it: groups above K are "
        "counted at size K, as in the paper."
    ),
    "k_select": (
        "How K is chosen. **public**: the K below, from public knowledge. **noisy max**: K̂ = the largest group "
        "+ noise + a margin, with its own budget ε_K (Δ = 1): it truncates with probability at most β. **per "
        "node**: one K̂ per node (ε_K once per level). **SVT**: Wu's AboveThreshold over 1, 2, 4, … — for "
        "teaching: it stops early and truncates. **from Hg**: no ε of its own — the deepest Hg level above the "
        "levels that need K is measured first, and each of its nodes gives K̂ = the largest size of its noisy Hg "
        "fit + a public margin m (from β and that level's noise) to every node below it; it truncates with "
        "probability P ≤ β per K̂ (it needs an Hg level above the first Hc/naive/Hcp level). "
        "With a private choice the K box is the public ceiling. Groups "
        "above K̂ are counted at K̂ (never refused: a refusal would leak the maximum)."
    ),
    "prior": (
        "Hcp (experimental, Tao et al.) measures Hc only at a public grid of sizes and shares each bucket's "
        "count over its sizes by a public prior: **uniform**, the **parent**'s released histogram, or a "
        "**previous census** (another draw of the generator, households slightly larger). A prior costs no ε; "
        "it only decides the shape inside a bucket."
    ),
    "emd": (
        "emd (earthmover's distance) = the number of persons to add to or remove from groups to turn the true "
        "histogram into the private one: Σ_j |Hc[j] − Ĥc[j]|. Lower is better."
    ),
    "omniscient": (
        "The omniscient yardstick D/ε: an algorithm that knew which D group sizes exist at a node and "
        "added Laplace(1/ε) noise only to the count of each would be off by about D/ε. A ratio near 1 is "
        "about as good as knowing which sizes exist."
    ),
    "below_yardstick": (
        "emd / yardstick below 1: the yardstick D/ε prices noise on every one of the node's D sizes, but the "
        "release also uses public facts (G, a parent's groups, consistency with the levels below), which remove "
        "part of that noise — most at a root with a small ε. It is not better than knowing the truth: the emd is "
        "the error that counts (the Learn page explains the yardstick)."
    ),
    "per_group": (
        "The node's emd divided by its number of groups G: on average, how many persons each group has too many "
        "or too few in the release."
    ),
    "exact_share": (
        "The share of groups whose size is exactly right: Σ_s min(H[s], Ĥ[s]) / G — the largest share of true "
        "groups that can be paired with a released group of the very same size. 100% means the node's histogram "
        "is exact."
    ),
    "consistency": (
        "top-down: the paper's Algorithm 1 (match parent groups to children's, merge, back-substitute). "
        "bottom-up: the whole budget on the leaves, parents are sums. none: independent per-node "
        "estimates (parents ≠ Σ children)."
    ),
    "merge": (
        "How a parent's and a child's estimate of one matched group are combined: weighted = inverse-variance "
        "weights (the paper's choice); plain = simple average."
    ),
    "seed": "Seed of the fast sampler: the same seed gives the same noise.",
    "secure": (
        "Draw the noise with the exact discrete Laplace (Canonne, Kamath and Steinke, integer arithmetic) "
        "over AES-CTR keyed by the operating system (about 10 M cells/s). The fast sampler is seeded and "
        "predictable: exploration only, not for release. "
        "Every secure release drawn is a new spending of ε: the session's ledger adds them up."
    ),
    "levels": "Which levels of the hierarchy to use; the root is always there. Dropping a middle level attaches its "
    "children to their grandparent.",
}
