"""Experiment: the regret of Kuo et al.'s private algorithm selection (:func:`~cocoviz.pipeline.selection.select_mix`).

At an **equal total** ε_T (the selection's own ε and every candidate's included, split equally over the
levels), per dataset and trial, and paired by seed:

* every candidate mix released alone with the whole ε_T (a *fixed* mix, chosen before seeing the data);
* ``select_mix`` over the same candidates with ``total_epsilon = ε_T`` and ``ε_select = share · ε_T``: each
  candidate then gets ``(1 - share) · ε_T / (number of candidates)`` (sequential composition), the
  noisy-min picks one, and only that one is published.

The error is the total emd over all nodes (the score ``select_mix`` minimises).  The **best mix in
hindsight** is the fixed mix of lowest mean error at ε_T (it reads the truth: a yardstick, not a mechanism);
``regret = mean error of select_mix / mean error of the best fixed mix``, and ``per-draw regret`` uses the
best fixed mix of each draw.  Choosing privately *pays* against a fixed mix when its error is below that mix's;
a fixed mix is *as good* when it is within the draws' spread of the best.

The candidates are public: all-Hc, all-Hg, and Hg on the top ``j`` levels above Hc for ``j = 1 … L - 1``
(the paper's finding: Hg at the sparse top, Hc on dense lower levels).  K is the dataset's public maximum
size (:attr:`Hierarchy.max_size`, as in ``benchmarks/intervals.py``), not 100,000: that keeps every Hc level
small enough to run the whole block in minutes on a shared 2-core machine.

Run:  ``python -m cocoviz.experiments.selection --trials 5`` (the bundled 3-level workloads but housing-west,
whose 35M groups take minutes per release, at ε_T = 0.5, 2 and 8, both candidate families;
``--datasets taxi --trials 3`` for a quick look).

>>> candidate_mixes(3)
[('Hc', 'Hc', 'Hc'), ('Hg', 'Hc', 'Hc'), ('Hg', 'Hg', 'Hc'), ('Hg', 'Hg', 'Hg')]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from cocoviz.evaluate.against_truth import evaluate
from cocoviz.experiments.tables import markdown_table
from cocoviz.pipeline.estimate import estimate
from cocoviz.pipeline.selection import select_mix

__all__ = [
    "DATASETS",
    "TOTALS",
    "SELECT_SHARE",
    "candidate_mixes",
    "run_selection",
    "summarize_selection",
    "selection_markdown",
]

#: The bundled workloads of the block (three levels each).
DATASETS = ("taxi", "hawaiian", "hawaiian-west", "white", "white-west", "housing")
#: The total ε of every arm (selection included).
TOTALS = (0.5, 2.0, 8.0)
#: ε_select as a share of the total: the score's sensitivity is the number of levels, so a little suffices.
SELECT_SHARE = 0.02


def candidate_mixes(levels: int, family: str = "ladder") -> list[tuple[str, ...]]:
    """The public candidates.  ``"ladder"``: all-Hc, then Hg on the top j levels above Hc (j = 1 … levels);
    ``"pair"``: all-Hc and all-Hg only.

    >>> candidate_mixes(2, "pair")
    [('Hc', 'Hc'), ('Hg', 'Hg')]
    """
    if family == "pair":
        return [("Hc",) * levels, ("Hg",) * levels]
    if family != "ladder":
        raise ValueError(f"family must be 'ladder' or 'pair', got {family!r}")
    return [tuple(["Hg"] * j + ["Hc"] * (levels - j)) for j in range(levels + 1)]


def _emd(tree, release) -> tuple[int, int, int]:
    """Total emd over all nodes, at the root, and over the leaves."""
    ev = evaluate(tree, release)
    return (
        int(ev["emd"].sum()),
        int(ev.loc[ev["level"] == 0, "emd"].sum()),
        int(ev.loc[ev["level"] == tree.depth, "emd"].sum()),
    )


def run_selection(
    tree,
    *,
    totals=TOTALS,
    trials: int = 3,
    seed: int = 38,
    share: float = SELECT_SHARE,
    max_size: int | None = None,
    dataset: str = "data",
    family: str = "ladder",
) -> pd.DataFrame:
    """One row per (total, trial, arm): ``arm`` is ``"fixed"`` (``mix`` the candidate) or ``"select"``
    (``mix`` the chosen one), with ``emd`` (all nodes), ``root_emd``, ``leaf_emd``, ``spent`` (the release's
    whole ε) and ``seconds``."""
    levels = tree.depth + 1
    mixes = candidate_mixes(levels, family)
    k = int(max_size if max_size is not None else max(int(tree.max_size), 1))
    rows = []
    for total in totals:
        for trial in range(trials):
            for i, mix in enumerate(mixes):
                start = time.perf_counter()
                release = estimate(
                    tree, epsilons=[total / levels] * levels, methods=list(mix), max_size=k, seed=(seed, trial, i + 1)
                )
                emd, root, leaf = _emd(tree, release)
                rows.append(
                    dict(
                        dataset=dataset,
                        candidates=family,
                        total=total,
                        trial=trial,
                        arm="fixed",
                        mix="".join(mix),
                        emd=emd,
                        root_emd=root,
                        leaf_emd=leaf,
                        spent=release.budget.total,
                        seconds=time.perf_counter() - start,
                    )
                )
            start = time.perf_counter()
            chosen = select_mix(
                tree, mixes, total_epsilon=total, epsilon_select=share * total, max_size=k, seed=(seed, trial)
            )
            emd, root, leaf = _emd(tree, chosen)
            rows.append(
                dict(
                    dataset=dataset,
                    candidates=family,
                    total=total,
                    trial=trial,
                    arm="select",
                    mix="".join(mixes[chosen.selection["chosen"]]),
                    emd=emd,
                    root_emd=root,
                    leaf_emd=leaf,
                    spent=chosen.budget.total,
                    seconds=time.perf_counter() - start,
                )
            )
    return pd.DataFrame(rows)


def summarize_selection(frame: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and total: each fixed mix's mean emd, the best in hindsight, select_mix's mean emd, its
    regret (against the best mean and per draw), how often it picked the best, and against which fixed mixes
    it pays (its mean emd lower)."""
    rows = []
    for (dataset, family, total), part in frame.groupby(["dataset", "candidates", "total"], sort=False):
        fixed = part[part["arm"] == "fixed"]
        chosen = part[part["arm"] == "select"].set_index("trial")
        means = fixed.groupby("mix", sort=False)["emd"].mean()
        best = means.idxmin()
        per_draw = fixed.groupby("trial")["emd"].min()
        select_mean = chosen["emd"].mean()
        spread = fixed[fixed["mix"] == best]["emd"].std(ddof=1) if len(per_draw) > 1 else 0.0
        row = {"dataset": dataset, "candidates": f"{family} ({fixed['mix'].nunique()})", "total ε": total}
        row["trials"] = len(chosen)
        row.update({f"fixed {m}": v for m, v in means.items()})
        row.update(
            {
                "best in hindsight": best,
                "select_mix": select_mean,
                "regret": select_mean / means[best],
                "per-draw regret": float((chosen["emd"] / per_draw.reindex(chosen.index)).mean()),
                "picked": ", ".join(f"{m}×{n}" for m, n in chosen["mix"].value_counts().items()),
                "picked best": float((chosen["mix"] == best).mean()),
                "pays against": ", ".join(m for m, v in means.items() if select_mean < v) or "none",
                "as good as best": ", ".join(m for m, v in means.items() if v - means[best] <= max(spread, 0)),
                "spent": float(chosen["spent"].iloc[0]),
                "select s": float(chosen["seconds"].median()),
            }
        )
        rows.append(row)
    return pd.DataFrame(rows)


def selection_markdown(summary: pd.DataFrame) -> str:
    """The summary as a markdown table (the mixes' columns as they come)."""
    return markdown_table(summary.round({"regret": 2, "per-draw regret": 2, "picked best": 2, "select s": 1}))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="select_mix's regret at an equal total ε")
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--totals", nargs="*", type=float, default=list(TOTALS))
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--share", type=float, default=SELECT_SHARE, help="ε_select as a share of the total")
    parser.add_argument("--candidates", nargs="*", default=["ladder", "pair"], help="candidate families")
    parser.add_argument("--out", default=None, help="also write the rows as CSV here")
    args = parser.parse_args(argv)
    from cocoviz.datasets import load_dataset

    frames = []
    for name in args.datasets:
        start = time.perf_counter()
        tree = load_dataset(name)
        for family in args.candidates:
            frames.append(
                run_selection(
                    tree, totals=args.totals, trials=args.trials, share=args.share, dataset=name, family=family
                )
            )
        print(f"{name}: {time.perf_counter() - start:.0f} s", flush=True)
    frame = pd.concat(frames, ignore_index=True)
    if args.out:
        frame.to_csv(args.out, index=False)
    print(selection_markdown(summarize_selection(frame)))


if __name__ == "__main__":
    main()
