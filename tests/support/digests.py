"""Digests of seeded (and fixed-key) releases over many plans: a refactor of the engine must not change one bit.

The digests in ``release_digests.json`` were recorded from the code at 5229762, before the level step was
shared (issue 26).  A change that alters seeded results on purpose (a new variance, say) re-records them:

    python tests/digest_support.py --record

and says so in its commit.  ``measurements`` digests cover the noise draws and K (what ``measure`` reads and
draws); ``release`` digests the fitted, consistent release.

Three paths:

* ``fast``: the seeded Philox sampler;
* ``secure``: the real exact sampler over AES-CTR, its key fixed (``os.urandom`` patched for the test only);
* ``opendp``: OpenDP's sampler class with its measurement replaced by a seeded stand-in (OpenDP's own
  generator cannot be seeded): the path through the engine is the release's, the draws are reproducible.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
DIGESTS = HERE / "release_digests.json"


def three_levels():
    from cocoviz.hierarchy import Hierarchy

    rng = np.random.default_rng(8)
    n = 3000
    groups = pd.DataFrame(
        {
            "state": rng.choice(list("abc"), n),
            "county": rng.choice(list("wxyz"), n),
            "size": np.minimum(rng.geometric(0.35, n), 60),
        }
    )
    groups.loc[:5, "size"] = [0, 90, 91, 150, 3, 3]
    return Hierarchy.from_groups(groups, size="size", levels=["state", "county"])


def five_levels():
    """Five levels (root to block groups), uneven fan-out, some tiny leaves."""
    from cocoviz.hierarchy import Hierarchy

    rng = np.random.default_rng(26)
    n = 4000
    state = rng.choice(["s1", "s2", "s3"], n, p=[0.5, 0.3, 0.2])
    county = rng.choice(["c1", "c2", "c3"], n)
    tract = rng.choice(["t1", "t2", "t3", "t4"], n)
    blockgroup = rng.choice(["b1", "b2"], n, p=[0.9, 0.1])
    size = np.minimum(rng.geometric(0.4, n), 45)
    groups = pd.DataFrame({"state": state, "county": county, "tract": tract, "bg": blockgroup, "size": size})
    return Hierarchy.from_groups(groups, size="size", levels=["state", "county", "tract", "bg"])


#: (name, tree, options): every method, K private three ways, every consistency, both merges, zCDP.
PLANS = [
    ("3-all-Hc", "three", dict(epsilons=[0.5, 1.0, 2.0], methods=["Hc"] * 3, max_size=200)),
    ("3-all-Hg", "three", dict(epsilons=[0.5, 1.0, 2.0], methods=["Hg"] * 3)),
    ("3-mix-p1", "three", dict(epsilons=[0.5, 1.0, 2.0], methods=["Hg", "Hc", "Hg"], p=1, max_size=200)),
    ("3-mix-average", "three", dict(epsilons=[1.0] * 3, methods=["Hc", "Hg", "Hc"], max_size=160, merge="average")),
    ("3-naive", "three", dict(epsilons=[0.5, 1.0, 2.0], methods=["naive", "Hc", "naive"], max_size=160)),
    ("3-Hcp", "three", dict(epsilons=[0.5, 1.0, 2.0], methods=["Hc", "Hcp", "Hcp"], max_size=160)),
    (
        "3-Hcp-parent",
        "three",
        dict(epsilons=[0.5, 1.0, 2.0], methods=["Hc", "Hcp", "Hcp"], max_size=160, prior="parent"),
    ),
    (
        "3-noisy-max",
        "three",
        dict(epsilons=[1.0] * 3, methods=["Hc", "Hc", "Hg"], max_size=400, k_select="noisy-max", k_epsilon=0.5),
    ),
    (
        "3-noisy-max-per-node",
        "three",
        dict(epsilons=[1.0] * 3, methods=["Hc"] * 3, max_size=400, k_select="noisy-max-per-node", k_epsilon=0.5),
    ),
    (
        "3-svt",
        "three",
        dict(epsilons=[1.0] * 3, methods=["Hc", "naive", "Hc"], max_size=400, k_select="svt", k_epsilon=0.5),
    ),
    (
        "3-bottom-up",
        "three",
        dict(epsilons=[0.5, 1.0, 2.0], methods=["Hc", "Hc", "Hg"], max_size=200, consistency="bottom-up"),
    ),
    (
        "3-none",
        "three",
        dict(epsilons=[0.5, 1.0, 2.0], methods=["Hg", "naive", "Hc"], max_size=200, consistency="none"),
    ),
    ("3-zcdp", "three", dict(rhos=[0.125, 0.5, 2.0], methods=["Hg", "Hc", "Hg"], max_size=200)),
    (
        "3-zcdp-bottom-up",
        "three",
        dict(rhos=[0.125, 0.5, 2.0], methods=["Hg", "Hc", "Hc"], max_size=200, consistency="bottom-up"),
    ),
    ("5-all-Hg", "five", dict(epsilons=[0.5, 0.5, 1.0, 1.0, 2.0], methods=["Hg"] * 5)),
    ("5-all-Hc", "five", dict(epsilons=[0.5, 0.5, 1.0, 1.0, 2.0], methods=["Hc"] * 5, max_size=60)),
    ("5-mix", "five", dict(epsilons=[1.0] * 5, methods=["Hg", "Hc", "naive", "Hg", "Hc"], max_size=60)),
    (
        "5-Hc-noisy-max-per-node",
        "five",
        dict(epsilons=[1.0] * 5, methods=["Hc"] * 5, max_size=500, k_select="noisy-max-per-node", k_epsilon=0.25),
    ),
    ("5-zcdp", "five", dict(rhos=[0.5] * 5, methods=["Hc", "Hg", "Hg", "Hc", "Hg"], max_size=60)),
]

TREES = {"three": three_levels, "five": five_levels}


def _hash(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            h.update(np.ascontiguousarray(part, np.int64 if part.dtype.kind in "iub" else np.float64).tobytes())
        else:
            h.update(repr(part).encode())
        h.update(b"|")
    return h.hexdigest()[:20]


def release_digest(release) -> str:
    frame = release.to_frame()
    bounds = ["none" if b is None else np.asarray(b) for b in release.bounds]
    return _hash(frame.to_csv(index=False), *bounds, release.budget.describe())


def measurements_digest(measurements) -> str:
    # Each level's noise is digested as the fits' noise parameter (Plan.fit_epsilon), as it was recorded.
    parts, plan = [], measurements.plan
    for m in measurements.levels:
        parts += ["none"] if m is None else [m.level, m.method, plan.fit_epsilon(m.level), m.ptr, m.values, m.bounds]
    return _hash(*[p if p is not None else "none" for p in parts])


@contextlib.contextmanager
def fixed_secure_key():
    """The secure sampler keyed by 16 fixed bytes (tests only): its draws then repeat."""
    real = os.urandom
    os.urandom = lambda n: bytes(range(1, n + 1))
    try:
        yield
    finally:
        os.urandom = real


@contextlib.contextmanager
def seeded_opendp(seed: int = 0):
    """OpenDP's Laplace and Gaussian measurements replaced by a seeded stand-in (one generator per use)."""
    import opendp.prelude as dp

    rng = np.random.default_rng(seed)
    real = dp.m.make_laplace, dp.m.make_gaussian

    def fake(domain, metric, scale):
        def run(values):
            noise = np.rint(rng.laplace(0, float(scale), len(values))).astype(np.int64)
            return (np.asarray(values, np.int64) + noise).tolist()

        return run

    dp.m.make_laplace = dp.m.make_gaussian = fake
    try:
        yield
    finally:
        dp.m.make_laplace, dp.m.make_gaussian = real


def digests(name: str, tree_name: str, opts: dict, path: str) -> dict[str, str]:
    """The ``release`` (one call) and ``measurements`` / ``two-step`` (measure, post_process) digests of a plan."""
    from cocoviz import estimate, measure, post_process
    from cocoviz.plan import Plan

    tree = TREES[tree_name]()
    plan = Plan.build(tree, **opts)
    out = {}
    if path == "fast":
        out["release"] = release_digest(estimate(tree, seed=7, **opts))
        m = measure(plan, tree, seed=7)
        out["measurements"] = measurements_digest(m)
        out["two-step"] = release_digest(post_process(plan, m))
        return out
    guard = fixed_secure_key if path == "secure" else seeded_opendp
    with guard():
        out["release"] = release_digest(estimate(tree, sampler=path, **opts))
    with guard():
        m = measure(plan, tree, sampler=path)
        out["measurements"] = measurements_digest(m)
        out["two-step"] = release_digest(post_process(plan, m))
    return out


#: The paths each plan runs on: every plan fast; the secure and OpenDP paths on a spread of them.
SECURE_PLANS = ("3-all-Hc", "3-all-Hg", "3-naive", "3-Hcp-parent", "3-svt", "3-noisy-max-per-node", "3-zcdp", "5-mix")
OPENDP_PLANS = ("3-mix-p1", "3-Hcp", "3-noisy-max", "3-bottom-up", "5-zcdp")


def cases() -> list[tuple[str, str]]:
    return (
        [(name, "fast") for name, _, _ in PLANS]
        + [(name, "secure") for name in SECURE_PLANS]
        + [(name, "opendp") for name in OPENDP_PLANS]
    )


def compute(name: str, path: str) -> dict[str, str]:
    _, tree_name, opts = next(p for p in PLANS if p[0] == name)
    return digests(name, tree_name, opts, path)


def record() -> None:
    table = {f"{name}/{path}": compute(name, path) for name, path in cases()}
    DIGESTS.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(table)} digests in {DIGESTS}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    if sys.argv[1:] == ["--record"]:
        record()
    else:
        print(__doc__)
