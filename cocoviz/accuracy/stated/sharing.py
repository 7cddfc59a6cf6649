"""How many children share a parent's correction of a run (the ``m`` of
:func:`cocoviz.accuracy.stated.merged.merge_stated`): at its size, or within its error for a run of size errors."""

from __future__ import annotations

import numpy as np

from cocoviz.accuracy.stated.merged import UNIT_ERRORS


def _sharing(bot_ptr: np.ndarray, sizes: np.ndarray, child: np.ndarray) -> np.ndarray:
    """Per child run, in the order of the consistency step's parent-size order (runs grouped by
    parent as ``bot_ptr`` says,
    then by size and child; ``sizes`` and ``child`` in that order): how many children of its parent hold a run
    of its size.  One linear pass.
    """
    n = len(sizes)
    if not n:
        return np.zeros(0, np.int64)
    new_pair = np.empty(n, bool)
    new_pair[0] = True
    np.not_equal(sizes[1:], sizes[:-1], out=new_pair[1:])
    first = bot_ptr[:-1]
    new_pair[first[first < n]] = True
    new_child = new_pair.copy()
    new_child[1:] |= child[1:] != child[:-1]
    children_so_far = np.cumsum(new_child)
    starts = np.flatnonzero(new_pair)
    ends = np.append(starts[1:], n)
    return np.repeat(children_so_far[ends - 1] - children_so_far[starts] + 1, ends - starts)


#: Children counted within a run's error radius stop here: the child keeps ``1 − 1/m`` of its own variance,
#: 98% at this many.
SHARING_CAP = 64


def sharing_within(bot_ptr: np.ndarray, sizes: np.ndarray, child: np.ndarray, stated: np.ndarray) -> np.ndarray:
    """:func:`_sharing`, counting for a run of size errors (stated ≥ 1 size²) the children holding a run within
    one standard deviation of its size, not of its size exactly.

    Why: the parent's groups are matched to the union of its children's by rank, and a child's group whose own
    size is off by ``√stated`` takes the rank of whichever union groups lie there.  The parent's correction at
    that rank is shared among the children holding them, so a sparse tail, where each size is held by one
    child, is not corrected as if the pair were the same group (housing's counties at ε = 0.1, Hc: realised
    error unchanged by the merge beyond size 100, stated 20× smaller).  Dense runs (stated < 1) are counted by
    size, as before.
    """
    from cocoviz.accuracy.stated._sharing_kernels import children_within

    exact = _sharing(bot_ptr, sizes, child)
    radius = np.where(stated >= UNIT_ERRORS, np.floor(np.sqrt(np.maximum(stated, 0.0))), 0.0).astype(np.int64)
    if not radius.any():
        return exact
    n_children = int(child.max()) + 1 if len(child) else 0
    within = children_within(bot_ptr, sizes.astype(np.int64), child.astype(np.int64), radius, n_children, SHARING_CAP)
    return np.maximum(exact, within)
