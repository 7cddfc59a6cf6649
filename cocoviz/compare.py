"""Two releases of one hierarchy side by side: how far apart they are, node by node.

Both releases are public outputs, so their difference costs no ε and reads no
private data; the errors of each against the truth (:func:`cocoviz.evaluate`)
are the data holder's and are joined by the caller.
"""

from __future__ import annotations

import pandas as pd

from cocoviz.errors import InputError
from cocoviz.hierarchy import node_label
from cocoviz.metrics import emd
from cocoviz.release import Release

__all__ = ["same_nodes", "release_differences"]


def same_nodes(a: Release, b: Release) -> bool:
    """Whether two releases cover the same nodes, level by level (they can then be compared node by node)."""
    sa, sb = a.plan.shape, b.plan.shape
    return sa.depth == sb.depth and all(list(sa.paths[k]) == list(sb.paths[k]) for k in range(sa.depth + 1))


def release_differences(a: Release, b: Release) -> pd.DataFrame:
    """One row per node: level, node, G, persons in each release and the emd between the two histograms
    (persons to move to turn one into the other).

    Raises :class:`~cocoviz.errors.InputError` when the releases do not cover the same nodes.

    >>> import cocoviz
    >>> tree = cocoviz.load_dataset("toy")
    >>> a = cocoviz.estimate(tree, epsilons=[1, 1], methods=["Hc", "Hc"], max_size=8, seed=1)
    >>> release_differences(a, a)["emd_between"].tolist()
    [0, 0, 0]
    """
    if not same_nodes(a, b):
        raise InputError("the two releases cover different nodes: compare releases of the same data and levels")
    rows = []
    shape = a.plan.shape
    for level in range(shape.depth + 1):
        for node in shape.paths[level]:
            ha, hb = a.histogram(node), b.histogram(node)
            rows.append(
                {
                    "level": level,
                    "node": node_label(node),
                    "groups": int(ha.sum()),
                    "persons_a": a.persons(node),
                    "persons_b": b.persons(node),
                    "emd_between": int(emd(ha, hb)),
                }
            )
    return pd.DataFrame(rows)
