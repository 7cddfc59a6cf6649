"""The one-call form: release the sizes, measure the tenure margin, fit every region's table under several priors.

Like :func:`cocoviz.estimate`, it runs the measure step (reading the private tree and tenure table)
and then post-processing; the priors share the same measurements, so comparing them is paired and
costs nothing more: the budget is one size release plus one tenure margin whatever the priors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from cocoviz.joint.estimate import JointRelease, estimate_joint
from cocoviz.joint.measure import TenureMeasurements, measure_tenure
from cocoviz.pipeline.estimate import estimate
from cocoviz.privacy.accounting import DEFAULT_DELTA
from cocoviz.release.release import Release

__all__ = ["estimate_joints"]


def estimate_joints(
    tree,
    table: pd.DataFrame,
    priors: Mapping[str, object],
    *,
    size_epsilons: Sequence[float] | None = None,
    tenure_epsilons: Sequence[float] | None = None,
    size_rhos: Sequence[float] | None = None,
    tenure_rhos: Sequence[float] | None = None,
    delta: float | None = None,
    methods: Sequence[str] | None = None,
    max_size: int | None = None,
    consistency: str = "top-down",
    seed=None,
    sampler: str = "fast",
) -> tuple[Release, TenureMeasurements, dict[str, JointRelease]]:
    """The size release (top-down), the tenure margin and, per named prior, every region's joint table.

    Parameters
    ----------
    tree : the private :class:`~cocoviz.hierarchy.Hierarchy` of group sizes
    table : its private tenure table (:func:`cocoviz.datasets.tenure.tenure_table`)
    priors : ``{name: prior}``, each prior as :func:`~cocoviz.joint.estimate.estimate_joint` takes it
    size_epsilons, tenure_epsilons : ε per level, root first, of the sizes and of the tenure margin
    size_rhos, tenure_rhos : instead, ρ per level (ρ-zCDP, discrete Gaussian noise) of either part; the
        joint budget is then in zCDP (:func:`~cocoviz.joint.estimate.joint_budget`), read as (ε, δ) at ``delta``
        (default 1e-10)
    methods : the size release's method per level (default Hc everywhere)
    max_size : public K of the size release
    consistency : of the tenure margin (``"top-down"`` or ``"none"``)
    seed, sampler : the noise (one seed serves both measurements: their keys differ)
    """
    n = tree.depth + 1
    delta = DEFAULT_DELTA if delta is None else delta
    size_budget = {"epsilons": size_epsilons} if size_rhos is None else {"rhos": size_rhos, "delta": delta}
    release = estimate(
        tree,
        **size_budget,
        methods=list(methods) if methods is not None else ["Hc"] * n,
        max_size=max_size,
        seed=seed,
        sampler=sampler,
    )
    noisy = measure_tenure(
        release.plan.shape, table, tenure_epsilons, rhos=tenure_rhos, delta=delta, seed=seed, sampler=sampler
    )
    joints = {name: estimate_joint(release, noisy, prior, consistency=consistency) for name, prior in priors.items()}
    return release, noisy, joints
