"""Where the truth meets a release: errors per node in plain words, error by size, the omniscient yardstick.

Only this module (and the experiments built on it) compares a release with the
private tree; what it returns is for evaluation and teaching, never for
publication.

>>> import pandas as pd
>>> from cocoviz.hierarchy import Hierarchy
>>> from cocoviz.pipeline.estimate import estimate
>>> tree = Hierarchy.from_groups(pd.DataFrame({"region": list("aabb"), "size": [4, 1, 2, 1]}),
...                              size="size", levels=["region"])
>>> release = estimate(tree, epsilons=[1e6, 1e6], methods=["Hg", "Hc"], max_size=8, seed=0)
>>> evaluate(tree, release)[["node", "groups", "sizes", "emd"]].to_dict("list")
{'node': ['(root)', 'a', 'b'], 'groups': [4, 2, 2], 'sizes': [3, 2, 2], 'emd': [0, 0, 0]}

Each row also reads as a sentence (:func:`plain_reading`):

>>> import textwrap
>>> rough = estimate(tree, epsilons=[0.5, 0.5], methods=["Hg", "Hc"], max_size=8, seed=1)
>>> print(textwrap.fill(plain_reading(evaluate(tree, rough).iloc[0]), 100))
On average 2 persons misplaced per group; 25% of groups have exactly the right size; error 1.3× the
omniscient yardstick D/ε: about as good as knowing which sizes exist.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from cocoviz.core.runs import LevelRuns
from cocoviz.errors import InputError, ParameterError
from cocoviz.evaluate.metrics import emd_level, error_by_size, omniscient_emd
from cocoviz.hierarchy import node_labels
from cocoviz.plan import Shape
from cocoviz.privacy.truncation import truncation_errors
from cocoviz.release.release import Release

__all__ = [
    "evaluate",
    "size_errors",
    "level_summary",
    "compare_histograms",
    "exact_share",
    "plain_reading",
    "ratio_reading",
    "share_percent",
    "EVALUATION_COLUMNS",
    "evaluation_row",
    "RATIO_READINGS",
]

EVALUATION_COLUMNS = [
    "level",
    "node",
    "groups",
    "sizes",
    "emd",
    "epsilon",
    "omniscient",
    "emd_per_group",
    "exact_share",
    "ratio",
    "bound",
    "truncation",
]


#: How an error reads against the omniscient yardstick: the first grade whose upper bound on
#: emd / (D/ε) is not passed.  Within a factor 2 either way counts as "about as good".
RATIO_READINGS: tuple[tuple[float, str], ...] = (
    (0.5, "better than knowing which sizes exist"),
    (2.0, "about as good as knowing which sizes exist"),
    (10.0, "a few times worse than knowing which sizes exist"),
    (100.0, "about ten times worse than knowing which sizes exist, or more"),
    (math.inf, "orders of magnitude worse than knowing which sizes exist"),
)


def _check(tree, release) -> None:
    if not isinstance(release, Release):
        raise ParameterError(
            f"expected a Release (estimate, post_process or load_release), got {type(release).__name__}"
        )
    if not release.plan.shape.same_as(Shape.of(tree)):
        raise InputError("this release was computed for another hierarchy (its levels, nodes or G differ)")
    _check_runs(release)


def _check_runs(release) -> None:
    """Refuse a release whose runs cannot be this plan's (edited in memory or in its file): one run list per
    level, one entry per node, whole non-negative sizes and counts."""
    shape = release.plan.shape
    for level in range(shape.depth + 1):
        try:
            runs = release.runs(level)
        except IndexError:
            raise InputError(f"the release has no runs for level {level}: it was edited or cut") from None
        nodes = len(shape.paths[level])
        if runs.n_nodes != nodes:
            raise InputError(f"the release's level {level} has runs for {runs.n_nodes:,} nodes; its plan has {nodes:,}")
        if runs.sizes.dtype.kind not in "iu" or runs.counts.dtype.kind not in "iu":
            raise InputError(f"the release's level {level} holds fractional sizes or counts: it was edited")
        if (runs.sizes < 0).any() or (runs.counts < 0).any():
            raise InputError(f"the release's level {level} holds negative sizes or counts: it was edited")


def _yardstick_epsilons(plan) -> list[float]:
    """The noise parameter behind each level's estimate (:meth:`~cocoviz.plan.Plan.fit_epsilon`): its own ε,
    the whole budget for bottom-up, or under zCDP the ε of the Laplace law with its Gaussian's variance."""
    return [plan.fit_epsilon(level) for level in range(len(plan.methods))]


def _share(part: np.ndarray, whole: np.ndarray, empty: float) -> np.ndarray:
    """``part / whole``, and ``empty`` where ``whole`` is 0."""
    out = np.full(len(whole), empty, np.float64)
    np.divide(part, whole, out=out, where=np.asarray(whole) != 0)
    return out


def _exact_level(truth: LevelRuns, released: LevelRuns) -> np.ndarray:
    """Σ_s min(H[s], Ĥ[s]) of every node between two sets of runs over the same nodes."""
    node = np.concatenate([truth.node_ids(), released.node_ids()])
    size = np.concatenate([truth.sizes, released.sizes])
    count = np.concatenate([truth.counts, released.counts])
    order = np.lexsort((size, node))
    node, size, count = node[order], size[order], count[order]
    # Each set holds a (node, size) at most once, so a repeated pair is one run of each.
    both = (node[1:] == node[:-1]) & (size[1:] == size[:-1])
    hits = np.minimum(count[1:][both], count[:-1][both])
    return np.bincount(node[1:][both], weights=hits, minlength=truth.n_nodes).astype(np.int64)


def exact_share(h_true: np.ndarray, h_est: np.ndarray) -> float:
    """The share of groups whose size is exactly right: Σ_s min(H[s], Ĥ[s]) / G.

    Of the G groups, at most min(H[s], Ĥ[s]) of size s can be paired with a
    released group of the very same size; the share is the largest fraction
    of groups so paired.  It lies in [0, 1] and is 1 exactly when the two
    histograms are equal (both hold G groups).

    >>> exact_share(np.array([0, 2, 1, 1]), np.array([0, 3, 0, 1]))
    0.75
    """
    n = max(len(h_true), len(h_est))
    h, e = np.pad(h_true, (0, n - len(h_true))), np.pad(h_est, (0, n - len(h_est)))
    groups = int(h.sum())
    if groups != int(e.sum()):
        raise InputError(f"the histograms hold {groups} and {int(e.sum())} groups: G must be the same")
    return float(np.minimum(h, e).sum() / groups) if groups else 1.0


def ratio_reading(ratio: float) -> str:
    """emd / (D/ε) in words (:data:`RATIO_READINGS`).

    >>> ratio_reading(1.3)
    'about as good as knowing which sizes exist'
    """
    return next(words for bound, words in RATIO_READINGS if not ratio > bound)


def share_percent(share: float) -> str:
    """A share as a percentage that reads 0% or 100% only when it is exactly 0 or 1.

    >>> share_percent(0.75), share_percent(0.99952), share_percent(1.0), share_percent(0.00004)
    ('75%', '99.95%', '100%', '0.004%')
    """
    if share in (0.0, 1.0):
        return f"{share:.0%}"
    for digits in range(6):
        text = f"{share:.{digits}%}"
        if text not in (f"{0:.{digits}%}", f"{1:.{digits}%}"):
            return text
    return f"{share:.6%}"


def plain_number(value: float, digits: int = 2) -> str:
    """``value`` to ``digits`` significant digits in positional notation, thousands separated.

    For sentences read by people who do not read ``1.5e-05``.

    >>> plain_number(1.5e-05), plain_number(3012.7), plain_number(0.4567), plain_number(12345678)
    ('0.000015', '3,000', '0.46', '12,000,000')
    """
    text = np.format_float_positional(abs(float(value)), precision=digits, unique=False, fractional=False, trim="-")
    whole, _, fraction = text.partition(".")
    if not whole.isdigit():  # inf, nan
        return text
    sign = "-" if float(value) < 0 else ""
    return sign + f"{int(whole):,}" + (f".{fraction}" if fraction else "")


def plain_reading(row) -> str:
    """One row of :func:`evaluate` as a sentence: persons misplaced per group, the share of groups of
    exactly the right size, and the error against the omniscient yardstick (:func:`ratio_reading`)."""
    if int(row["emd"]) == 0:
        return "Exact: every group has exactly the right size (0 persons misplaced)."
    per_group = plain_number(row["emd_per_group"])
    persons = "person" if per_group == "1" else "persons"
    share, ratio = share_percent(float(row["exact_share"])), float(row["ratio"])
    return (
        f"On average {per_group} {persons} misplaced per group; {share} of groups have exactly the right size; "
        f"error {plain_number(ratio)}× the omniscient yardstick D/ε: {ratio_reading(ratio)}."
    )


def evaluate(tree, release) -> pd.DataFrame:
    """One row per node: its emd against the truth, the share of exact groups, the omniscient yardstick D/ε.

    Columns: ``level``, ``node``, ``groups`` (G), ``sizes`` (D, distinct true
    sizes), ``emd``, ``epsilon`` (behind the node's estimate: the level's, or
    Σ ε for bottom-up; NaN under zCDP, which spends ρ), ``omniscient`` (D/ε; under zCDP ε is the noise
    parameter of :meth:`~cocoviz.plan.Plan.fit_epsilon`), ``emd_per_group`` (persons
    misplaced per group, on average), ``exact_share`` (the share of groups
    whose size is exactly right, Σ_s min(H[s], Ĥ[s]) / G: see
    :func:`exact_share`), ``ratio`` (emd / omniscient: about 1 is as good as
    knowing which sizes exist; :func:`ratio_reading`), ``bound`` (the K the
    node was measured with, 0 where its method needs none) and
    ``truncation`` (persons lost to that K alone, apart from the noise:
    Σ_{s>K} (s − K)·H[s]).  :func:`plain_reading` says a row in words.
    """
    _check(tree, release)
    frames = []
    for level, eps in enumerate(_yardstick_epsilons(release.plan)):
        truth = tree.runs(level)
        groups = truth.groups()
        sizes = np.diff(truth.ptr)
        released = release.runs(level)
        emd = emd_level(truth, released)
        omniscient = omniscient_emd(sizes, eps)
        bound = release.bounds[level]
        if bound is None:
            bound, truncation = np.zeros(truth.n_nodes, np.int64), np.zeros(truth.n_nodes, np.int64)
        else:
            truncation = truncation_errors(truth, bound)
        frames.append(
            pd.DataFrame(
                {
                    "level": level,
                    "node": node_labels(tree.node_codes, level).array,
                    "groups": groups,
                    "sizes": sizes,
                    "emd": emd,
                    "epsilon": eps if release.plan.rhos is None else math.nan,  # zCDP spends ρ, no ε
                    "omniscient": omniscient,
                    # A node of G = 0 (an empty block) is released exactly: nothing misplaced, every one of
                    # its no groups right; against a yardstick of 0 its ratio says nothing (NaN).
                    "emd_per_group": _share(emd, groups, 0.0),
                    "exact_share": _share(_exact_level(truth, released), groups, 1.0),
                    "ratio": _share(emd, omniscient, np.nan),
                    "bound": bound,
                    "truncation": truncation,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)[EVALUATION_COLUMNS]


def evaluation_row(evaluation: pd.DataFrame, tree, node: Sequence[str]) -> pd.Series:
    """The row of ``node`` (a path) in ``evaluate(tree, release)``: found by its place in the tree, not by its
    name, so no two nodes can be confused.

    >>> import pandas as pd
    >>> from cocoviz import estimate
    >>> from cocoviz.hierarchy import Hierarchy, node_path
    >>> groups = pd.DataFrame({"s": ["a", "a/b"], "c": ["b/c", "c"], "size": [1, 2]})
    >>> tree = Hierarchy.from_groups(groups, size="size", levels=["s", "c"])
    >>> ev = evaluate(tree, estimate(tree, epsilons=[1, 1, 1], methods=["Hc"] * 3, max_size=4, seed=0))
    >>> row = evaluation_row(ev, tree, ("a/b", "c"))
    >>> int(row["groups"]), node_path(row["node"])
    (1, ('a/b', 'c'))
    """
    level, k = tree.locate(node)
    return evaluation[evaluation["level"] == level].iloc[k]


def size_errors(tree, release, node: Sequence[str]) -> np.ndarray:
    """``|Ĥc[s] - Hc[s]|`` for every size s of ``node``; sums to its emd (the paper's Figure 1)."""
    _check(tree, release)
    return error_by_size(tree.histogram(node), release.histogram(node))


def level_summary(evaluation: pd.DataFrame) -> pd.DataFrame:
    """Per level of an :func:`evaluate` table: nodes, mean and maximum emd, mean exact share, yardstick and ratio."""
    return (
        evaluation.groupby("level")
        .agg(
            nodes=("node", "size"),
            mean_emd=("emd", "mean"),
            max_emd=("emd", "max"),
            exact_share=("exact_share", "mean"),
            omniscient=("omniscient", "mean"),
            ratio=("ratio", "mean"),
        )
        .reset_index()
    )


def compare_histograms(tree, release) -> pd.DataFrame:
    """Released and true counts side by side: level, node, size, private_count, true_count.

    One row per (node, size) where either count is non-zero.  It holds the
    confidential truth: for the data holder's own checks, never to publish.
    """
    _check(tree, release)
    frames = []
    for level in range(tree.depth + 1):
        released, truth = release.runs(level), tree.runs(level)
        frame = (
            pd.DataFrame(
                {
                    "node_id": np.concatenate([released.node_ids(), truth.node_ids()]),
                    "size": np.concatenate([released.sizes, truth.sizes]),
                    "private_count": np.concatenate([released.counts, np.zeros_like(truth.counts)]),
                    "true_count": np.concatenate([np.zeros_like(released.counts), truth.counts]),
                }
            )
            .groupby(["node_id", "size"], sort=True)
            .sum()
            .reset_index()
        )
        labels = node_labels(tree.node_codes, level).array
        frame.insert(0, "node", labels.take(frame.pop("node_id").to_numpy()))
        frame.insert(0, "level", level)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
