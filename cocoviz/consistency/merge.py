"""How two estimates of the same groups' sizes merge (METHOD.md, the top-down step).

:func:`merge_estimates` is the paper's merge: what the release computes and the weights it computes with.
"""

from __future__ import annotations

import numpy as np

from cocoviz.errors import ParameterError
from cocoviz.methods.registry import MERGES

__all__ = ["merge_estimates"]


def merge_estimates(
    a: np.ndarray, va: np.ndarray, b: np.ndarray, vb: np.ndarray, how: str = "weighted"
) -> tuple[np.ndarray, np.ndarray]:
    """Merge two estimates of the same groups' sizes.

    ``weighted``: inverse-variance weights, ``(a/Va + b/Vb) / (1/Va + 1/Vb)``
    with variance ``1 / (1/Va + 1/Vb)``, the optimal linear combination.
    ``average``: ``(a + b) / 2``, carrying the variance ``(Va + Vb) / 4`` of that mean.

    >>> merge_estimates(np.array([2.0]), np.array([1.0]), np.array([6.0]), np.array([3.0]))
    (array([3.]), array([0.75]))
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    va, vb = np.asarray(va, np.float64), np.asarray(vb, np.float64)
    if how == "weighted":
        precision = 1.0 / va + 1.0 / vb
        return (a / va + b / vb) / precision, 1.0 / precision
    if how == "average":
        return (a + b) / 2, (va + vb) / 4
    raise ParameterError(f"merge must be one of {MERGES}, got {how!r}")
