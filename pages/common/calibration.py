"""Time estimates calibrated on this machine: a short probe at start-up (refreshed), and past runs.

The engine's estimate is the cells a plan noises over a rate.  A fixed rate
was measured once on a developer's machine; this server's rate depends on its
cores and on what else runs.  So a probe (one fast release of a synthetic
hierarchy, a fraction of a second of work) measures the rate in a background thread
when the server first needs an estimate, and again once it is older than
:data:`REFRESH_SECONDS`; until the first probe ends the fixed rate is used
and said so.  Every timed sweep then tells :func:`observe` how long it took
against its estimate, and later estimates of that kind are scaled by the
ratio (a moving average): what the model misses (per-node work, load) is
learnt from this machine's own runs.

With the environment variable ``COCOVIZ_TIMING=fixed`` (set by the tests) the fixed rate is used
and runs teach nothing: a page's decisions that hang on an estimate (the "compute it anyway" gate)
then do not depend on how loaded the machine is.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pandas as pd
import streamlit as st

#: Seconds after which the probe is measured again.
REFRESH_SECONDS = 600.0
#: The probe: a root and this many leaves, each with groups of every size up to PROBE_K (Hc, ε = 1 per level).
PROBE_LEAVES, PROBE_K = 60, 20_000
#: Weight of the newest run in the moving average of actual / estimated seconds.
NEWEST_WEIGHT = 0.5


@st.cache_resource(show_spinner=False)
def _state() -> dict:
    return {"lock": threading.Lock(), "rate": None, "default": None, "at": None, "running": False, "ratio": {}}


def probe_rate() -> float:
    """Cells per second of one fast release of the probe hierarchy on this machine (best of two runs)."""
    import cocoviz
    from cocoviz.hierarchy import Hierarchy

    sizes = np.arange(1, 201)
    frame = pd.DataFrame(
        {
            "leaf": np.repeat([f"n{k}" for k in range(PROBE_LEAVES)], sizes.size),
            "size": np.tile(sizes, PROBE_LEAVES),
            "count": np.tile(np.maximum(1, 2000 // sizes), PROBE_LEAVES),
        }
    )
    tree = Hierarchy.from_counts(frame, size="size", count="count", levels=["leaf"])
    options = dict(epsilons=[1.0, 1.0], methods=["Hc", "Hc"], max_size=PROBE_K)
    cells = cocoviz.Plan.build(tree, **options).cost().cells
    cocoviz.compile_kernels()
    best = float("inf")
    for seed in (0, 1):
        start = time.perf_counter()
        cocoviz.estimate(tree, seed=seed, **options)
        best = min(best, time.perf_counter() - start)
    return cells / best


def _run_probe(state: dict) -> None:
    try:
        rate = probe_rate()
        with state["lock"]:
            # The ratios were learnt against the rate in use before (the fixed one, or an older probe's), which
            # this rate replaces: rescaled, an estimate counts the machine's load once (a first release timed
            # beside the probe, under load, taught ×7, and the probed rate then slowed every estimate 7× again).
            old = state["rate"] or state["default"]
            if old:
                for kind in state["ratio"]:
                    state["ratio"][kind] *= rate / old
            state["rate"], state["at"] = rate, time.time()
    finally:
        state["running"] = False


def _fixed() -> bool:
    return os.environ.get("COCOVIZ_TIMING") == "fixed"


def fast_rate(default: float) -> float:
    """This machine's cells per second of a fast release (``default`` until the first probe ends); starts a
    probe in the background when there is none or it is stale."""
    if _fixed():
        return default
    state = _state()
    with state["lock"]:
        state["default"] = default
        stale = state["at"] is None or time.time() - state["at"] > REFRESH_SECONDS
        if stale and not state["running"]:
            state["running"] = True
            threading.Thread(target=_run_probe, args=(state,), daemon=True, name="cocoviz-probe").start()
        return state["rate"] or default


def observe(kind: str, estimated: float, actual: float) -> None:
    """A run of ``kind`` estimated at ``estimated`` seconds took ``actual``: later estimates learn from it."""
    if estimated <= 0 or actual <= 0 or _fixed():
        return
    state = _state()
    with state["lock"]:
        old = state["ratio"].get(kind)
        new = actual / estimated
        state["ratio"][kind] = new if old is None else NEWEST_WEIGHT * new + (1 - NEWEST_WEIGHT) * old


def factor(kind: str) -> float:
    """How much longer than the model runs of ``kind`` took here (1 before any run)."""
    if _fixed():
        return 1.0
    return _state()["ratio"].get(kind, 1.0)


def describe(kind: str | None = None) -> str:
    """How the estimates are calibrated right now, in a few words."""
    if _fixed():
        return "a fixed rate, not measured on this machine (COCOVIZ_TIMING=fixed)"
    state = _state()
    if state["rate"] is None:
        text = "the machine's probe is still running: a fixed rate for now"
    else:
        age = time.time() - state["at"]
        text = f"calibrated on this machine {age / 60:.0f} min ago ({state['rate'] / 1e6:,.0f} M cells/s)"
    ratio = state["ratio"].get(kind) if kind else None
    if ratio is not None:
        text += f", and scaled ×{ratio:.2g} by the runs here"
    return text
