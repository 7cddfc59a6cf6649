"""Size × characteristic tables per region (Kuo et al.'s future work, Tao et al.'s setting): size × tenure.

Per region, the joint table of household size class × tenure (owner / renter) is estimated from

1. the **size margin**: a consistent released :class:`~cocoviz.release.release.Release` of the size
   histograms, binned into public size classes — post-processing, no ε of its own;
2. the **tenure margin**: owners per region, measured with its own ε (or, under zCDP, ρ) per level
   (:mod:`~cocoviz.joint.measure`: Δ = 0 under one person added or removed — a group keeps its
   tenure and G is public — so it is charged under neighbours that may also flip one household's
   tenure, Δ = 1) and made consistent top-down (:mod:`~cocoviz.joint.margin`);
3. a **public prior**: a previous census's joint table, uniform, or none (independent margins),
   combined by IDE over the two partitions (:mod:`~cocoviz.joint.estimate`).

The seam is the engine's: :func:`measure_tenure` is the only step that reads the private tenure
table; :func:`estimate_joint` reads measurements, the release and the prior only;
:func:`evaluate_joint` meets the truth (exploration, for the data holder); :func:`estimate_joints` is the
one-call form (measure, then post-process under several priors).

>>> import pandas as pd, cocoviz
>>> from cocoviz.datasets.tenure import tenure_table
>>> counts = pd.DataFrame({"region": ["a", "a", "b", "b"], "size": [1, 3, 2, 4], "count": [30, 20, 25, 15]})
>>> tree = cocoviz.Hierarchy.from_counts(counts, size="size", count="count", levels=["region"])
>>> release = cocoviz.estimate(tree, epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=10, seed=0)
>>> noisy = measure_tenure(release.plan.shape, tenure_table(tree, seed=0), [0.5, 0.5], seed=0)
>>> joint = estimate_joint(release, noisy, "independent")
>>> joint.budget.total, int(joint.table(("a",)).sum()) == tree.groups(("a",))
(3.0, True)
"""

from cocoviz.joint.domain import (
    SIZE_EDGES,
    TENURES,
    class_counts,
    class_labels,
    node_tables,
    prior_tables,
    size_classes,
)
from cocoviz.joint.estimate import (
    ITERATIONS,
    PRIOR_CHOICES,
    JointRelease,
    estimate_joint,
    fit_table,
    joint_budget,
    joint_sampler,
)
from cocoviz.joint.evaluate import EVALUATION_COLUMNS, evaluate_joint, true_tables
from cocoviz.joint.margin import consistent_owners, least_squares_owners, split_total
from cocoviz.joint.measure import (
    PERSON_SENSITIVITY,
    TENURE_QUERY,
    TENURE_SENSITIVITY,
    TenureMeasurements,
    measure_tenure,
    owner_counts,
    tenure_cost,
)
from cocoviz.joint.run import estimate_joints

__all__ = [
    "SIZE_EDGES",
    "TENURES",
    "size_classes",
    "class_labels",
    "class_counts",
    "node_tables",
    "prior_tables",
    "TENURE_QUERY",
    "TENURE_SENSITIVITY",
    "PERSON_SENSITIVITY",
    "TenureMeasurements",
    "owner_counts",
    "tenure_cost",
    "measure_tenure",
    "split_total",
    "least_squares_owners",
    "consistent_owners",
    "PRIOR_CHOICES",
    "ITERATIONS",
    "JointRelease",
    "fit_table",
    "joint_budget",
    "estimate_joint",
    "joint_sampler",
    "estimate_joints",
    "EVALUATION_COLUMNS",
    "true_tables",
    "evaluate_joint",
]
