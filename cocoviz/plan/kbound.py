"""How a plan bounds group sizes: the public K, or a K̂ chosen from the data (:mod:`cocoviz.privacy.truncation`).

:class:`KBound` holds the :class:`~cocoviz.plan.Plan` methods about K — which levels need it, what
a private K̂ costs, how many are drawn, the β each is drawn with (per K̂ or for the whole release),
the from-hg rule and the statement of truncation — apart from the plan's other concerns.
"""

from __future__ import annotations

import numpy as np

from cocoviz.privacy.budget import Charge
from cocoviz.privacy.truncation import K_SENSITIVITY, hg_bounds, hg_margin, svt_grid

__all__ = ["KBound"]


class KBound:
    """The K methods of :class:`~cocoviz.plan.Plan` (a mixin: it reads the plan's fields and levels)."""

    def k_levels(self) -> list[int]:
        """Measured levels whose method needs the bound K."""
        return [level for level in self.measured_levels() if self.level_method(level).needs_k]

    def private_k(self) -> bool:
        """Whether K is chosen from the data (and some level needs it)."""
        return self.k_select != "public" and bool(self.k_levels())

    def k_source_level(self) -> int | None:
        """``"from-hg"``: the deepest measured Hg level above every level that needs K (None if none)."""
        needs = self.k_levels()
        if self.k_select != "from-hg" or not needs:
            return None
        above = [level for level in self.measured_levels() if level < min(needs) and self.methods[level] == "Hg"]
        return max(above) if above else None

    def k_draws(self) -> int:
        """How many K̂ a release draws: 1 (noisy max, SVT), one per node of every level that needs K
        (noisy max per node), one per node of the Hg level K comes from (from-hg); 0 for a public K."""
        if not self.private_k():
            return 0
        if self.k_select == "noisy-max-per-node":
            return sum(self.shape.n_nodes(level) for level in self.k_levels())
        if self.k_select == "from-hg":
            return self.shape.n_nodes(self.k_source_level())
        return 1

    def k_node_beta(self) -> float:
        """The probability that one K̂ truncates: ``k_beta``, or ``k_beta`` / draws for a whole-release β."""
        return self.k_beta / max(self.k_draws(), 1) if self.k_beta_scope == "release" else self.k_beta

    def k_margin(self) -> int:
        """``"from-hg"``: the public margin m added to the top of the source level's noisy Hg fit, so that
        the K̂ of a node truncates with probability ≤ :meth:`k_node_beta`
        (:func:`~cocoviz.privacy.truncation.hg_margin`)."""
        source = self.k_source_level()
        noise = self.level_noise(source)
        if self.rhos is None:
            return hg_margin(self.k_node_beta(), epsilon=self.level_epsilon(source))
        return hg_margin(self.k_node_beta(), sigma2=noise.sigma2)

    def bounds_from_hg(self, level: int, source_ptr, source_values) -> np.ndarray:
        """``"from-hg"``: K per node of ``level`` from the noisy Hg answers of :meth:`k_source_level` (their
        ``ptr`` and ``values``): each node's K̂ is its ancestor's (post-processing of a DP output, no ε)."""
        source = self.k_source_level()
        per_source = hg_bounds(source_ptr, source_values, self.k_margin(), self.max_size)
        index = np.arange(self.shape.n_nodes(level))
        for lvl in range(level, source, -1):
            index = self.shape.parent_index(lvl)[index]
        return per_source[index]

    def k_note(self) -> str:
        """The budget note of a K̂ from an Hg level, or of a whole-release β (older notes kept as they were)."""
        if self.k_select == "from-hg":
            how = (
                f"K from the noisy Hg of level {self.k_source_level()} (post-processing, no ε): its fit's largest "
                f"size + a public margin of {self.k_margin():,}, ceiling {self.max_size:,}"
            )
        else:
            how = f"K chosen privately ({self.k_select}, ε_K = {self.k_epsilon:g}, ceiling {self.max_size:,})"
        return f"{how}: groups larger than K̂ count as size K̂ (Hc and naive); {self.truncation()}"

    def truncation(self) -> str | None:
        """What bounds truncation by a private K̂, per K̂ and for the whole release (None for a public K)."""
        if not self.private_k() or self.k_select == "svt":
            return None if not self.private_k() else "K by AboveThreshold (SVT): no stated truncation bound"
        draws, beta = self.k_draws(), self.k_node_beta()
        scope = "whole release (β split over the K̂ drawn)" if self.k_beta_scope == "release" else "per K̂ drawn"
        whole = min(1.0, draws * beta)
        return (
            f"k_beta = {self.k_beta:g} {scope}: each of the {draws:,} K̂ truncates with probability ≤ {beta:.3g}; "
            f"some node of the release truncates with probability ≤ {whole:.3g} (union bound)"
        )

    def _k_charges(self) -> list[Charge]:
        """The private K's own measurements: at the root, or at every node of the levels that need K."""
        if not self.private_k() or self.k_select == "from-hg":
            return []
        eps = self.k_epsilon
        if self.k_select == "noisy-max":
            return [Charge(0, (), "K: noisy max of the largest group size", 1, K_SENSITIVITY, eps)]
        if self.k_select == "svt":
            # AboveThreshold: threshold noise 2Δ/ε and query noise 4Δ/ε; ε-DP as a whole (Dwork & Roth, 3.6).
            cells = len(svt_grid(self.max_size)) + 1
            return [
                Charge(
                    0,
                    (),
                    "K: AboveThreshold over groups of size ≤ θ",
                    cells,
                    K_SENSITIVITY,
                    eps,
                    4 * K_SENSITIVITY / eps,
                )
            ]
        return [
            Charge.for_level(
                level, paths, "K: noisy max of the node's largest group size", len(paths), K_SENSITIVITY, eps
            )
            for level in self.k_levels()
            for paths in [self.shape.paths[level]]
        ]
