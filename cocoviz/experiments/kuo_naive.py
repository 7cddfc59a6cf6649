"""The naive estimator in the paper's reading: noisy H clipped at zero, the positive noise kept.

Our ``naive`` method (:data:`cocoviz.plan.METHODS`) projects noisy H[0..K]
exactly onto the histograms with the node's G groups; its error at the root
is 10⁷–10⁸ on the paper's datasets.  The paper's Table 3 reports 4–5 × 10⁹,
which is what noisy H clipped at zero costs when the positive noise is kept
(about K²/2 for K = 100,000: a phantom group in nearly every cell up to K).
This module computes that second reading, for Table 3 only: it is not a
method of the registry, because its output does not keep G (the public
number of groups) and so cannot be released or made consistent.

Both readings are computed from the same noisy measurement: the clip-only
error of a trial uses the noise that the exact projection of that trial used
(the fast sampler's stream keyed by the trial's seed and (level 0, node 0)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.evaluate.metrics import emd, omniscient_emd
from cocoviz.experiments.runner import FRAME_COLUMNS, NO_MERGE, trial_seed
from cocoviz.hierarchy import Hierarchy, node_label
from cocoviz.measure.measurements import measure
from cocoviz.methods.estimators import query_naive
from cocoviz.plan import DEFAULT_MAX_SIZE, Plan

__all__ = ["NAIVE_PROJECTION", "NAIVE_CLIP", "NAIVE_LABELS", "clip_only", "clip_only_error", "clip_only_frame"]

#: How Table 3 names the two readings of the naive estimator.
NAIVE_PROJECTION = "naive (exact projection)"
NAIVE_CLIP = "naive (clip only, as the paper appears to)"
#: The sweep's mix label → the label shown in tables and figures.
NAIVE_LABELS = {"naive": NAIVE_PROJECTION, "naive-clip": NAIVE_CLIP}


def clip_only(noisy: np.ndarray) -> np.ndarray:
    """Noisy H[0..K] with negative cells set to zero and the rest kept: groups need not add up to G.

    >>> clip_only(np.array([1, -1, 3, -2, 0, 2])).tolist()
    [1, 0, 3, 0, 0, 2]
    """
    return np.maximum(np.asarray(noisy, np.int64), 0)


def clip_only_error(truth: np.ndarray, noisy: np.ndarray) -> int:
    """emd between the true H and the clipped noisy H: ``Σ_j |Hc[j] − Ĥc[j]|`` over sizes 0..K.

    >>> clip_only_error(np.array([0, 2, 1, 0, 1, 0]), np.array([1, -1, 3, -2, 0, 2]))
    6
    """
    return emd(truth, clip_only(noisy))


def _root_error(tree: Hierarchy, epsilon: float, seed: int, trial: int, max_size: int) -> int:
    """The clip-only naive error at the root of ``tree`` for one trial (whole ``epsilon`` at the root)."""
    root = tree.keep_levels([]) if tree.depth else tree
    plan = Plan.build(root, epsilons=[epsilon], methods=["naive"], max_size=max_size, consistency="none")
    noisy = measure(plan, root, seed=trial_seed(seed, trial)).levels[0].node(0)
    return clip_only_error(query_naive(*root.node_runs(()), max_size), noisy)


def clip_only_frame(
    trees: Sequence[Hierarchy],
    keys: Sequence[str],
    epsilons: Sequence[float],
    trials: int,
    seed: int,
    max_size: int | None = None,
) -> pd.DataFrame:
    """Rows of the sweep frame (:data:`FRAME_COLUMNS`) for the clip-only naive at each tree's root.

    ``mix`` is ``"naive-clip"`` (shown as :data:`NAIVE_CLIP`); every trial
    draws the noise of the sweep's ``naive`` release of the same trial.
    """
    max_size = DEFAULT_MAX_SIZE if max_size is None else int(max_size)
    rows = []
    for tree, key in zip(trees, keys):
        groups, sizes = tree.groups(()), len(tree.node_runs(())[0])
        for eps in epsilons:
            for trial in range(trials):
                rows.append(
                    {
                        "dataset": key,
                        "mix": "naive-clip",
                        "consistency": "none",
                        "merge": NO_MERGE,
                        "epsilon": float(eps),
                        "total_epsilon": math.fsum([eps]),
                        "trial": trial,
                        "level": 0,
                        "level_name": "(root)",
                        "node": node_label(()),
                        "groups": groups,
                        "sizes": sizes,
                        "emd": _root_error(tree, float(eps), seed, trial, max_size),
                        "level_epsilon": float(eps),
                        "omniscient": omniscient_emd(sizes, float(eps)),
                    }
                )
    return pd.DataFrame(rows, columns=FRAME_COLUMNS)
