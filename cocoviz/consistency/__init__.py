"""Top-down consistency: optimal matching of parent to child groups, merging, back-substitution.

Everything here runs on runs of equal-sized groups (Algorithm 2 only ever looks at "all unmatched groups of the
smallest size"), so its cost grows with the number of distinct (size, variance) runs per node, not with G.

- :mod:`~cocoviz.consistency.matching`: Algorithm 2, the optimal matching of one parent's groups to its children's;
- :mod:`~cocoviz.consistency.level_estimates`: a level's estimated runs with their two variances;
- :mod:`~cocoviz.consistency.slices`: Algorithm 1, every level merged into its children in slices of whole parents;
- :mod:`~cocoviz.consistency.sharing`: how many children share a parent's correction (the stated variance's m);
- :mod:`~cocoviz.consistency.orders`: the sort orders of a level's runs;
- :mod:`~cocoviz.consistency.mean`: Hay et al.'s mean-consistency on noisy Hc, the real-valued baseline.
"""

from __future__ import annotations

from cocoviz.consistency.level_estimates import LevelEstimates
from cocoviz.consistency.matching import match_groups, match_runs
from cocoviz.consistency.mean import mean_consistency

# Private helpers, re-exported for the engine's other modules and the tests.
from cocoviz.consistency.orders import _joint_key as _joint_key
from cocoviz.consistency.orders import _parent_size_order as _parent_size_order
from cocoviz.consistency.orders import _run_order as _run_order
from cocoviz.consistency.sharing import SHARING_CAP as SHARING_CAP
from cocoviz.consistency.sharing import _sharing as _sharing
from cocoviz.consistency.sharing import _sharing_within as _sharing_within
from cocoviz.consistency.slices import _consistent_children as _consistent_children
from cocoviz.consistency.slices import _consistent_slice as _consistent_slice
from cocoviz.consistency.slices import top_down

__all__ = [
    "match_groups",
    "match_runs",
    "top_down",
    "LevelEstimates",
    "mean_consistency",
]
