"""Dask: a sweep and a release on a LocalCluster with 2 workers are bit-identical to the local ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cocoviz import estimate
from cocoviz.errors import ParameterError
from cocoviz.hierarchy import Hierarchy
from cocoviz.measure.measurements import open_measurement
from cocoviz.pipeline.distributed import check_client, estimate_subtrees, subtree_ranges
from cocoviz.plan import Plan

pytestmark = pytest.mark.dask

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=50
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def four_levels():
    rng = np.random.default_rng(5)
    n = 4000
    groups = pd.DataFrame(
        {
            "state": rng.choice(["s1", "s2", "s3"], n),
            "county": rng.choice(["c1", "c2", "c3", "c4"], n),
            "tract": rng.choice(["t1", "t2"], n),
            "size": np.minimum(rng.geometric(0.4, n), 40),
        }
    )
    return Hierarchy.from_groups(groups, size="size", levels=["state", "county", "tract"])


#: The deepest census stand-in, at a small scale (6 levels: root, state, county, tract, block group, block; about
#: 30% of the blocks of G = 0).  Nothing below depends on its depth.
DEEPEST = "housing-us-blocks"


@pytest.fixture(scope="module")
def deepest():
    from cocoviz.datasets import load_dataset

    return load_dataset(DEEPEST, scale=0.0002)


def test_subtree_ranges_are_each_states_descendants(four_levels):
    plan = Plan.build(four_levels, epsilons=[1] * 4, methods=["Hg"] * 4)
    for level in (2, 3):
        ranges = subtree_ranges(plan, 1, level)
        paths = plan.shape.paths[level]
        for k, state in enumerate(plan.shape.paths[1]):
            lo, hi = ranges[k]
            assert [p for p in paths if p[:1] == state] == list(paths[lo:hi])


@pytest.mark.slow
@pytest.mark.parametrize(
    "methods, k_select", [(["Hg", "Hc", "Hg", "Hc"], "public"), (["Hc", "Hc", "Hc", "Hg"], "noisy-max-per-node")]
)
def test_a_release_on_the_cluster_is_the_local_one(client, four_levels, methods, k_select):
    opts = dict(epsilons=[0.5, 1.0, 1.0, 2.0], methods=methods, max_size=60, seed=11, k_select=k_select)
    if k_select != "public":
        opts["k_epsilon"] = 0.5
    local = estimate(four_levels, **opts)
    remote = estimate(four_levels, client=client, **opts)
    pd.testing.assert_frame_equal(remote.to_frame(), local.to_frame())
    assert remote.budget == local.budget and remote.is_consistent()


def test_a_sweep_on_the_cluster_is_the_local_one(client):
    from cocoviz.experiments.runner import Data, Sweep, run_sweep

    rng = np.random.default_rng(2)
    tree = Hierarchy.from_groups(
        pd.DataFrame({"region": rng.choice(list("ab"), 500), "size": rng.integers(1, 9, 500)}),
        size="size",
        levels=["region"],
    )
    sweep = Sweep(datasets=[Data("t", tree=tree)], mixes=["Hc", "Hg"], epsilons=[0.5, 1.0], trials=3, max_size=20)
    calls = []
    remote = run_sweep(sweep, client=client, progress=lambda done, total: calls.append((done, total)))
    pd.testing.assert_frame_equal(remote, run_sweep(sweep, workers=1))
    assert calls[0] == (0, len(calls) - 1) and calls[-1][0] == calls[-1][1]


def test_anything_but_a_client_is_refused(four_levels):
    with pytest.raises(ParameterError, match="dask.distributed.Client"):
        check_client("tcp://scheduler:8786")
    with pytest.raises(ParameterError, match="Client"):
        estimate(four_levels, epsilons=[1] * 4, methods=["Hg"] * 4, seed=0, client=object())


def test_a_secure_release_opens_a_sampler_per_task(client, four_levels):
    """The secure sampler is never shipped (it refuses to be copied): each task opens its own."""
    opts = dict(epsilons=[1.0] * 4, methods=["Hg", "Hg", "Hc", "Hg"], max_size=60)
    remote = estimate(four_levels, sampler="secure", client=client, **opts)
    assert remote.is_consistent() and "secure" in remote.budget.sampler
    assert remote.budget.charges == Plan.build(four_levels, **opts).cost().charges
    for level in range(4):
        for node in four_levels.nodes(level):
            assert remote.histogram(node).sum() == four_levels.groups(node)


@pytest.mark.parametrize("consistency", ["top-down", "bottom-up"])
def test_a_zcdp_release_on_the_cluster_is_the_local_one(client, four_levels, consistency):
    """Discrete Gaussian noise on the keyed streams: the cluster's zCDP release is the local one, bit for bit."""
    opts = dict(
        rhos=[0.125, 0.5, 0.5, 2.0], methods=["Hg", "Hc", "Hg", "Hg"], max_size=60, seed=11, consistency=consistency
    )
    local = estimate(four_levels, **opts)
    remote = estimate(four_levels, client=client, **opts)
    pd.testing.assert_frame_equal(remote.to_frame(), local.to_frame())
    assert remote.budget == local.budget and remote.budget.accounting == "zCDP" and remote.is_consistent()
    assert remote.budget.total_rho == pytest.approx(3.125)  # bottom-up spends the sum once, on the leaves
    other = estimate(four_levels, **{**opts, "seed": 12})
    assert not other.to_frame().equals(local.to_frame())  # the seed matters: the equality above is no accident


@pytest.mark.parametrize(
    "methods, extra, on_workers",
    [
        (["naive", "Hc", "naive", "Hcp"], {}, [2, 3]),
        (["Hc", "Hcp", "Hcp", "Hcp"], {"prior": "parent"}, []),  # the parent prior's levels stay local
        (["Hc", "Hc", "Hg", "Hcp"], {"prior": "parent"}, [2]),
        (["Hg", "Hcp", "Hc", "naive"], {"k_select": "noisy-max-per-node", "k_epsilon": 0.5}, [2, 3]),
    ],
)
def test_every_method_on_the_cluster_is_the_local_one(client, four_levels, methods, extra, on_workers):
    """The one level step runs naive and Hcp levels on the workers too, bit for bit."""
    opts = dict(epsilons=[0.5, 1.0, 1.0, 2.0], methods=methods, max_size=60, seed=3, **extra)
    plan = Plan.build(four_levels, **{k: v for k, v in opts.items() if k != "seed"})
    opened = open_measurement(plan, four_levels, seed=3)
    assert sorted(estimate_subtrees(plan, four_levels, opened.sampler, opened.bounds, client)) == on_workers
    local = estimate(four_levels, **opts)
    remote = estimate(four_levels, client=client, **opts)
    pd.testing.assert_frame_equal(remote.to_frame(), local.to_frame())
    assert remote.budget == local.budget


def test_the_deepest_dataset_on_the_cluster_is_the_local_one(client, deepest):
    """Per-state subtrees down to the deepest level: bit-identical to the local release, seed for seed."""
    depth = deepest.depth + 1
    assert depth >= 5
    methods = (["Hg", "Hg", "Hc"] * depth)[:depth]  # every third level Hc, its K chosen per node
    opts = dict(
        epsilons=[1.0] * depth, methods=methods, max_size=10_000, k_select="noisy-max-per-node", k_epsilon=0.5, seed=26
    )
    local = estimate(deepest, **opts)
    remote = estimate(deepest, client=client, **opts)
    pd.testing.assert_frame_equal(remote.to_frame(), local.to_frame())
    assert remote.budget == local.budget and remote.is_consistent()
    zcdp = dict(rhos=[0.5] * depth, methods=["Hg"] * depth, seed=26, consistency="bottom-up")
    pd.testing.assert_frame_equal(
        estimate(deepest, client=client, **zcdp).to_frame(), estimate(deepest, **zcdp).to_frame()
    )


@pytest.mark.parametrize("methods", [["Hg", "Hg", "Hc", "Hc"], ["Hg", "Hg", "Hg", "Hc"], ["Hg", "Hc", "Hg", "Hcp"]])
def test_k_from_an_hg_level_on_the_cluster_is_the_local_release(client, four_levels, methods):
    """from-hg in two phases on a cluster: the Hg level measured here once (K for the levels below from its
    noisy answers, no ε), the rest on the workers: the local release, bit for bit, with its K (and the bands of
    the levels fitted here: a level fitted on the workers carries none, as without from-hg)."""
    opts = dict(epsilons=[0.5, 1.0, 1.0, 2.0], methods=methods, max_size=60, seed=7, k_select="from-hg", stated=True)
    local = estimate(four_levels, **opts)
    remote = estimate(four_levels, client=client, **opts)
    pd.testing.assert_frame_equal(remote.to_frame(), local.to_frame())
    assert remote.budget == local.budget and remote.chosen_bounds() == local.chosen_bounds()
    for a, b in zip(remote.stated, local.stated):
        np.testing.assert_array_equal(a, b)
    source = local.plan.k_source_level()
    assert remote.bands[source] is not None
    for level in [lvl for lvl in range(4) if remote.bands[lvl] is not None]:
        node = local.plan.shape.paths[level][0]
        pd.testing.assert_frame_equal(remote.intervals(node), local.intervals(node))
    secure = estimate(four_levels, client=client, sampler="secure", **{k: v for k, v in opts.items() if k != "seed"})
    assert secure.is_consistent() and secure.budget.total == local.budget.total
