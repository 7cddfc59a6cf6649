"""Time estimates calibrated on this machine: a short probe at start-up (refreshed), and past runs.

The engine's estimate is the cells a plan noises over a rate.  A fixed rate
was measured once on a developer's machine; this server's rate depends on its
cores and on what else runs.  So a probe (one fast release of a synthetic
hierarchy, a fraction of a second of work) measures the rate in a background thread
when the server first needs an estimate, and again once it is older than
:data:`REFRESH_SECONDS`; until the first probe ends the fixed rate is used
and said so.  Every timed sweep then tells :func:`observe` how long it took
against its estimate, and later estimates of that kind are scaled by the
median of the last :data:`WINDOW` ratios: what the model misses (per-node
work, load) is learnt from this machine's own runs.

Robustness: a ratio is clipped to ``[1/MAX_FACTOR, MAX_FACTOR]`` before it
is kept, and the factor is a median, so one run slowed by a cold start or by
other sessions' load moves no estimate by more than ``MAX_FACTOR``, and a
run of typical ones outvotes it at once.  The probed rate is kept within
``MAX_FACTOR`` of the fixed one for the same reason.  A page that gates a
run on its estimate must let the gated run teach too (see
:func:`gate_seconds`), so a gate never keeps the calibration from learning
back.

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
#: Runs of a kind whose actual / estimated ratios are kept; the factor is their median.
WINDOW = 7
#: A ratio (and the probed rate against the fixed one) is clipped to [1/MAX_FACTOR, MAX_FACTOR].
MAX_FACTOR = 4.0


def _clip(ratio: float) -> float:
    return float(min(max(ratio, 1.0 / MAX_FACTOR), MAX_FACTOR))


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
            if state["default"]:
                rate = state["default"] * _clip(rate / state["default"])
            old = state["rate"] or state["default"]
            if old:
                for kind, ratios in state["ratio"].items():
                    state["ratio"][kind] = [_clip(r * rate / old) for r in ratios]
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


def rate_in_use() -> float | None:
    """The rate estimates are made with right now (the probe's, else the fixed one; None before any estimate):
    a page reads it with its estimate and hands it to :func:`observe`."""
    state = _state()
    return state["rate"] or state["default"]


def observe(kind: str, estimated: float, actual: float, rate: float | None = None) -> None:
    """A run of ``kind`` estimated at ``estimated`` seconds took ``actual``: later estimates learn from it.

    ``rate`` is the rate the estimate was made with (:func:`rate_in_use` when it was made).  When a probe ended
    during the run, the ratio is rescaled to the rate now in use, as :func:`_run_probe` rescales the ratios it
    finds: otherwise a run estimated at the fixed rate and timed under load would teach the load a second time
    on top of a probe that measured it already.
    """
    if estimated <= 0 or actual <= 0 or _fixed():
        return
    state = _state()
    with state["lock"]:
        now = state["rate"] or state["default"]
        ratio = actual / estimated * (now / rate if rate and now else 1.0)
        ratios = state["ratio"].setdefault(kind, [])
        ratios.append(_clip(ratio))
        del ratios[:-WINDOW]


def factor(kind: str) -> float:
    """How much longer than the model runs of ``kind`` took here: the median of the last :data:`WINDOW`
    clipped ratios, so within ``[1/MAX_FACTOR, MAX_FACTOR]`` (1 before any run).

    Examples
    --------
    >>> factor("a kind never run")
    1.0
    """
    if _fixed():
        return 1.0
    ratios = _state()["ratio"].get(kind)
    return float(np.median(ratios)) if ratios else 1.0


def gate_seconds(model_seconds: float, kind: str) -> float:
    """The estimate a page compares with its gate: the model's seconds times the learnt factor.

    The factor is bounded (:data:`MAX_FACTOR`), so a release the model puts under ``gate / MAX_FACTOR``
    is never gated however slow past runs were, and runs it lets through keep teaching the factor.
    """
    return model_seconds * factor(kind)


def describe(kind: str | None = None) -> str:
    """How the estimates are made right now, in plain words (no symbols to decode).

    Examples
    --------
    >>> describe("a kind never run").startswith("at a")  # a speed, and how it was found
    True
    """
    if _fixed():
        return "at a fixed speed, not measured on this machine (COCOVIZ_TIMING=fixed)"
    state = _state()
    if state["rate"] is None:
        text = "at a default speed while this machine's speed test runs"
    else:
        age = time.time() - state["at"]
        text = (
            f"at this machine's speed, measured {age / 60:.0f} min ago "
            f"({state['rate'] / 1e6:,.0f} million cells a second)"
        )
    ratios = state["ratio"].get(kind) if kind else None
    if ratios:
        runs = f"the last {len(ratios)} runs" if len(ratios) > 1 else "the last run"
        f = factor(kind)
        if f >= 1.1:
            pace = f"took {f:.1f} times as long as that speed predicts"
        elif f <= 1 / 1.1:
            pace = f"were {1 / f:.1f} times quicker than that speed predicts"
        else:
            pace = "took about as long as that speed predicts"
        text += f"; {runs} here {pace}, and the estimate allows for it"
    return text
