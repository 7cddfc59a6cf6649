"""Top-down consistency: optimal matching of parent to child groups, merging, back-substitution.

Everything here runs on runs of equal-sized groups (Algorithm 2 only ever looks at "all unmatched groups of the
smallest size"), so its cost grows with the number of distinct (size, variance) runs per node, not with G.

- :mod:`~cocoviz.consistency.matching`: Algorithm 2, the optimal matching of one parent's groups to its children's;
- :class:`~cocoviz.methods.level_estimates.LevelEstimates` (made by :mod:`cocoviz.methods`): a level's estimated
  runs with the variances the merge weighs by;
- :mod:`~cocoviz.consistency.merge`: how two estimates of one group's size merge;
- :mod:`~cocoviz.consistency.slices`: Algorithm 1, every level merged into its children in slices of whole parents,
  each slice's matched pairs handed to an optional reader (:class:`MatchedPairs`);
- :mod:`~cocoviz.consistency.orders`: the sort orders of a level's runs;
- :mod:`~cocoviz.consistency.mean`: Hay et al.'s mean-consistency on noisy Hc, the real-valued baseline.

Nothing here imports a later stage: readers downstream get the matched pairs through ``top_down``'s ``on_pairs``.
"""

from __future__ import annotations

from cocoviz.consistency.matching import match_groups, match_runs
from cocoviz.consistency.mean import mean_consistency
from cocoviz.consistency.slices import MatchedPairs, merge_children, top_down
from cocoviz.methods.level_estimates import LevelEstimates

__all__ = [
    "match_groups",
    "match_runs",
    "top_down",
    "merge_children",
    "MatchedPairs",
    "LevelEstimates",
    "mean_consistency",
]
