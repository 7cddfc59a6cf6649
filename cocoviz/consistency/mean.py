"""Hay et al.'s mean-consistency on noisy Hc: the real-valued baseline that shows why the matching approach exists."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["mean_consistency"]


def mean_consistency(
    noisy: Sequence[np.ndarray], variances: Sequence[float], parents: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Hay et al.'s mean-consistency (weighted least squares on a tree) of noisy Hc arrays.

    Parameters
    ----------
    noisy : per level, a ``(nodes, cells)`` array of noisy Hc values
    variances : per level, the noise variance of one cell
    parents : ``parents[l]`` maps nodes of level ``l`` (>= 1) to their parent

    Returns
    -------
    Per level, the consistent real-valued Hc estimates: children sum to their
    parent exactly, but differencing them back to H can give negative,
    fractional counts.  That is why the matching approach exists.

    Notes
    -----
    Bottom-up pass: ``z_v`` combines a node's own measurement with the sum of
    its children's ``z`` by inverse variance.  Top-down pass: the parent's
    final value minus the children's sum is shared out in proportion to each
    child's variance.
    """
    depth = len(noisy) - 1
    z = [np.asarray(x, np.float64).copy() for x in noisy]
    var_z = [np.full(len(x), float(v)) for x, v in zip(noisy, variances)]
    for level in range(depth, 0, -1):
        n_up = len(z[level - 1])
        kids_sum = np.zeros_like(z[level - 1])
        np.add.at(kids_sum, parents[level], z[level])
        kids_var = np.bincount(parents[level], weights=var_z[level], minlength=n_up)
        own_var = var_z[level - 1]
        w_own = kids_var / (own_var + kids_var)
        z[level - 1] = w_own[:, None] * z[level - 1] + (1 - w_own)[:, None] * kids_sum
        var_z[level - 1] = own_var * kids_var / (own_var + kids_var)
    final = [z[0]]
    for level in range(1, depth + 1):
        up = parents[level]
        kids_sum = np.zeros_like(final[-1])
        np.add.at(kids_sum, up, z[level])
        kids_var = np.bincount(up, weights=var_z[level], minlength=len(final[-1]))
        gap = final[-1] - kids_sum
        final.append(z[level] + gap[up] * (var_z[level] / kids_var[up])[:, None])
    return final
