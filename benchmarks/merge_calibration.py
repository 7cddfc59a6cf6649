"""Mean z² = (estimate − truth)² / V of the merged group sizes, per dataset, mix, ε and level (issue 24).

Calibrated variances give about 1 (target 0.7–1.5).  Both variances of a level:
the experimental ``stated`` (:mod:`cocoviz.accuracy.stated.topdown`; ``z2``, ``z2_own``) and the weights'
``variances`` (``w_z2``, ``w_own``: the paper's model, which the merge still weighs by).
Two levels of each bundled dataset (the figure-4
data: root and states; the toy's root and regions), Hc and Hg mixes, ε per level 1 and 0.1, seeded.
``z2_own``: the level's own fit before the merge; ``z2 95%``: a bootstrap interval over the trials (where
almost every group is exact, Hawaiian's zeros, the mean rests on rare errors: give it many trials, e.g.
``--datasets hawaiian --trials 200``).  ``rel_z2``: what is published, each level's *released* histogram (the
union of its leaves' final groups) against ``Release.stated`` (docs/merge-variances.md, "Released upper
levels"); ``--depth 2`` adds the counties (housing, white, Hawaiian; taxi's zones), ``--consistency bottom-up``
and ``--merge average`` the other consistencies.  Run under ``nice``, output to artifacts/::

    nice python benchmarks/merge_calibration.py --trials 20 > artifacts/merge_calibration.txt
"""

from __future__ import annotations

import argparse
import time

from cocoviz.datasets.registry import dataset
from cocoviz.experiments.data import Data
from cocoviz.experiments.merge_calibration import calibration
from cocoviz.plan import DEFAULT_MAX_SIZE, Plan

DATASETS = ("toy", "housing", "white", "hawaiian", "taxi")
MIXES = (("Hc", "Hc"), ("Hg", "Hg"), ("Hc", "Hg"), ("Hg", "Hc"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--epsilons", default="1,0.1")
    parser.add_argument("--mixes", default=",".join("×".join(m) for m in MIXES), help="e.g. Hg×Hg,Hc×Hg")
    parser.add_argument("--depth", type=int, default=1, help="levels below the root (2: the counties too)")
    parser.add_argument("--consistency", default="top-down", choices=("top-down", "bottom-up"))
    parser.add_argument("--merge", default="weighted", choices=("weighted", "average"))
    args = parser.parse_args()
    print(
        "dataset | mix | ε | level | groups | z2 | z2 95% (trials) | z2_own | in 0.7–1.5 | w_z2 | w_own | "
        "rel_z2 | rel_z2 95% | rel in 0.7–1.5"
    )
    for name in args.datasets.split(","):
        tree = Data(name, depth=args.depth).load()
        max_size = min(dataset(name).public_max_size, DEFAULT_MAX_SIZE)
        for mix in (tuple(m.split("×")) for m in args.mixes.split(",")):
            methods = list(mix) + [mix[-1]] * (tree.depth + 1 - len(mix))  # deeper levels: the last method
            for eps in (float(e) for e in args.epsilons.split(",")):
                start = time.perf_counter()
                plan = Plan.build(
                    tree,
                    epsilons=[eps] * (tree.depth + 1),
                    methods=methods,
                    max_size=max_size,
                    consistency=args.consistency,
                    merge=args.merge,
                )
                for row in calibration(tree, plan, trials=args.trials).itertuples():
                    ok = "yes" if 0.7 <= row.z2 <= 1.5 else "NO"
                    released_ok = "yes" if 0.7 <= row.z2_released <= 1.5 else "NO"
                    print(
                        f"{name} | {'×'.join(methods)} | {eps:g} | {row.level} | {row.groups} | {row.z2:.3g} | "
                        f"{row.z2_low:.3g}–{row.z2_high:.3g} | "
                        f"{row.z2_own:.3g} | {ok} | {row.z2_weights:.3g} | {row.z2_weights_own:.3g} | "
                        f"{row.z2_released:.3g} | {row.z2_released_low:.3g}–{row.z2_released_high:.3g} | {released_ok}",
                        flush=True,
                    )
                print(f"# {name} {'×'.join(mix)} ε={eps:g}: {time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
