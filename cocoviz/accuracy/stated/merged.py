"""The stated variance of a child's group after the top-down merge (experimental; docs/merge-variances.md).

:func:`merge_stated` is stated to users after :func:`cocoviz.consistency.merge.merge_estimates`, never read by the
merge's arithmetic.  :mod:`cocoviz.accuracy.stated.topdown` applies it to the pairs each consistency slice matched.
"""

from __future__ import annotations

import numpy as np

from cocoviz.consistency.merge import MERGES
from cocoviz.errors import ParameterError

__all__ = ["UNIT_ERRORS", "merge_stated"]

#: :func:`merge_stated`: below this stated variance (parent's and child's), a run's error is a few misplaced groups
#: one size off, rather than a size error (a group's error is an integer, so a mean squared error under 1 means
#: most groups exact).
UNIT_ERRORS = 1.0


def merge_stated(
    va: np.ndarray,
    vb: np.ndarray,
    sa: np.ndarray,
    sb: np.ndarray,
    how: str,
    sharing: np.ndarray | int = 1,
    sa_runs: np.ndarray | None = None,
) -> np.ndarray:
    """The stated variance of a child's group after :func:`merge_estimates` (experimental).

    ``va``, ``vb``: the parent's and the child's variances as the weights see them (the paper's model);
    ``sa``, ``sb``: their stated (calibrated) variances.  The parent estimates the *union* of its children's
    groups; what it corrects, the matching shares among the ``m`` children (``sharing``) holding groups of
    the child's size, in proportion to their groups, not to the child that erred.  Two regimes:

    - **Size errors** (``max(sa, sb) ≥ 1``: the sparse tail, lone groups moved by a gap): a child receives
      ``1/m`` of the correction, so ``sb (1 − 1/m)`` stays, and the rest, ``sb/m``, is replaced by the error
      of the combination actually made, ``w² sa + (1 − w)² sb`` with ``w`` the parent's weight
      (``vb/(va + vb)`` weighted, ½ plain)::

          sb (1 − 1/m) + (w² sa + (1 − w)² sb) / m

      When the weights' variances are the stated ones this is mergevar's ``Vb (1 − 1/m) + f Vb/m``;
      ``m = 1`` is the textbook merge.
    - **Misplaced groups** (``max(sa, sb) < 1``: dense runs, where a group is exact or one size off).  A run's
      squared error is then the number of groups its boundaries misplaced, linear in a count error, not
      quadratic: a run of n groups states ``E|δ|/n``.  Two consequences.  Rounding: a pair that disagrees
      by one size takes the side with the larger weight whole (``w > ½``: the parent's; ``w = ½`` either,
      half the time), not a share ``w`` of it.  And the count errors add in quadrature: after the merge a
      child's boundary is off by ``δ_c (1 − 1/m) − (1/m) Σ_others δ_c' + δ_p/m`` groups, whose spread over
      its ``n_c = N/m`` groups is ``√(sb² (1 − 1/m) + sa²)`` (the parent's ``sa = E|δ_p|/N`` arrives
      undiluted; the child's own part is out of the parent's sight).  So, with ``p = P(parent's side)``::

          p √(sb² (1 − 1/m) + sa²) + (1 − p) sb

      Its calibration by dataset and level is printed by ``benchmarks/merge_calibration.py``.

    ``sa_runs``: the parent's stated variance run by run, before it was pooled per size (an Hg fit: a long,
    nearly exact block and short blocks at the steps, often wrong; see the research log
    ``docs/notes/merge-variances.md``). Pooled, the short blocks' errors would be charged to the pairs the long
    block wins.  So in dense runs the parent's part is its own run's, ``sa_runs``; and
    where the parent's runs of the size differ (it has short blocks), its step lies in those short blocks,
    which the child wins (``w < ½``), so the child's misplaced groups at the step stay whole: ``sb²`` in place
    of ``sb² (1 − 1/m)`` under the root.  Without ``sa_runs``: ``sa``, the rule above.

    >>> merge_stated(np.array([1.0]), np.array([3.0]), np.array([1.0]), np.array([3.0]), "weighted")
    array([0.75])
    >>> merge_stated(np.array([1.0]), np.array([4.0]), np.array([1.0]), np.array([4.0]), "weighted", 4)
    array([3.2])

    Dense runs, the parent's weight larger: its rate arrives whole, the child's own in quadrature:

    >>> merge_stated(np.array([0.01]), np.array([0.04]), np.array([0.003]), np.array([0.008]), "weighted", 2).round(5)
    array([0.0064])

    The same pair under an Hg parent whose run states 0.0006 where its size, pooled, states 0.003:

    >>> sa_runs = np.array([0.0006])
    >>> merge_stated(np.array([0.01]), np.array([0.04]), np.array([0.003]), np.array([0.008]), "weighted", 2, sa_runs)
    array([0.00802247])
    """
    va, vb = np.asarray(va, np.float64), np.asarray(vb, np.float64)
    sa, sb = np.asarray(sa, np.float64), np.asarray(sb, np.float64)
    m = np.maximum(np.asarray(sharing, np.float64), 1.0)
    if how == "weighted":
        w = vb / (va + vb)
    elif how == "average":
        w = np.full_like(vb, 0.5)
    else:
        raise ParameterError(f"merge must be one of {MERGES}, got {how!r}")
    kept = sb * (1.0 - 1.0 / m)
    sizes = kept + (w * w * sa + (1.0 - w) ** 2 * sb) / m
    parent_side = np.where(w > 0.5, 1.0, np.where(w == 0.5, 0.5, 0.0))
    own, parent = sb * kept, sa
    if sa_runs is not None:
        parent = np.asarray(sa_runs, np.float64)
        own = np.where(np.isclose(parent, sa, rtol=1e-9, atol=0.0), own, sb * sb)
    misplaced = parent_side * np.sqrt(own + parent * parent) + (1.0 - parent_side) * sb
    return np.where(np.maximum(sa, sb) < UNIT_ERRORS, misplaced, sizes)
