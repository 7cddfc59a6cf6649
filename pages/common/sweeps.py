"""Sweeps for the comparison pages: run by :mod:`cocoviz.experiments.series`, cached per parameters, and the
precomputed findings (:mod:`cocoviz.experiments.findings`) shown until a live run exists.

A page describes what it wants as :class:`Config` series (a method mix, a consistency and a merge, with a
label); :func:`run` runs them with :func:`cocoviz.experiments.run_series` (one progress bar over all of
them) and stores the tidy frame in a process-wide cache, so returning to a page or changing a plot option
never recomputes.  :func:`summarize` is :func:`cocoviz.experiments.summarize_series`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from cocoviz.experiments import Series, all_mixes, mix_label, run_series, summarize_series
from cocoviz.experiments import findings as _findings
from cocoviz.hierarchy import Hierarchy
from cocoviz.plan import Plan
from pages.common import calibration, engine, state

Progress = Callable[[int, int], None]
Config = Series
summarize = summarize_series
__all__ = ["Config", "all_mixes", "mix_label", "summarize", "run", "cached", "sweep_key", "gated_run", "finding"]


def estimated_seconds(
    tree: Hierarchy, configs: Sequence[Config], epsilons: Sequence[float], trials: int, max_size: int
) -> float:
    """A time estimate of a sweep, from the cells each series' plan noises, at this machine's rate and scaled by
    the sweeps run here (:mod:`pages.common.calibration`)."""
    n = tree.depth + 1
    per_round = sum(
        engine.estimated_seconds(
            Plan.build(tree, epsilons=[1.0] * n, methods=list(c.methods), max_size=max_size, consistency=c.consistency)
        )
        for c in configs
    )
    return per_round * len(epsilons) * trials * calibration.factor("sweep")


def sweep_key(
    data_key: tuple,
    tree: Hierarchy,
    configs: Sequence[Config],
    epsilons: Sequence[float],
    trials: int,
    max_size: int,
    seed: int,
) -> tuple:
    return (
        data_key,
        tuple(tree.levels),
        tuple(configs),
        tuple(float(e) for e in epsilons),
        int(trials),
        int(max_size),
        int(seed),
    )


#: Sweeps kept per server before the store starts afresh (a whole-country frame has millions of rows).
STORE_ENTRIES = 64


@st.cache_resource(show_spinner=False)
def _store() -> dict:
    """Sweep frames of every session, by their :func:`sweep_key`."""
    return {}


def cached(key: tuple) -> pd.DataFrame | None:
    """The stored frame of a sweep, or None."""
    return _store().get(key)


def run(
    data_key: tuple,
    tree: Hierarchy,
    configs: Sequence[Config],
    epsilons: Sequence[float],
    trials: int,
    max_size: int,
    seed: int,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """The sweep's tidy frame (one row per series, ε, trial and node), cached; a ``series`` column names the
    page's series.  Raises ValueError on bad parameters (the caller guards)."""
    key = sweep_key(data_key, tree, configs, epsilons, trials, max_size, seed)
    store = _store()
    hit = store.get(key)  # one lookup: sessions share the store between threads
    if hit is not None:
        return hit
    frame = run_series(
        tree,
        configs,
        epsilons=epsilons,
        trials=trials,
        max_size=max_size,
        seed=seed,
        dataset=str(data_key[1]) if len(data_key) > 1 else "data",
        progress=progress,
    )
    if len(store) > STORE_ENTRIES:
        store.clear()
    store[key] = frame
    return frame


#: Sweeps estimated to take longer than this wait for a click instead of running on every change.
AUTO_RUN_SECONDS = 8.0


def run_gate(name: str, n_runs: int, seconds: float):
    """Whether to run a sweep now: automatically when it is quick (and auto-run is on), else on a click.

    Returns ``(go, clear)``: ``clear()`` removes the button and its note once the sweep has run.
    """
    auto = st.toggle(
        "Run automatically when settings change (quick sweeps only)",
        **state.bind(f"{name}.auto", True),
        help=f"Sweeps estimated under {AUTO_RUN_SECONDS:g} s run on every change; longer ones wait for the button.",
    )
    quick = seconds <= AUTO_RUN_SECONDS
    slot = st.empty()
    if auto and quick:
        return True, slot.empty
    label = f"Run {n_runs:,} releases (≈{seconds:,.0f} s)" if seconds >= 1 else f"Run {n_runs:,} releases"
    with slot.container():
        clicked = st.button(label, type="primary", key=f"{name}.run")
        if not clicked:
            st.info(
                f"{n_runs:,} releases to compute, about {seconds:,.1f} s, estimated "
                f"{calibration.describe('sweep')}. Results are cached once computed."
                + ("" if quick else " Lower the trials, the ε values or K to make it quicker.")
            )
    return clicked, slot.empty


def _new_seed(old: int) -> None:
    """A fresh seed for the fast sampler (shared by every page), never the one in use."""
    import secrets

    state.put("seed", (old + 1 + secrets.randbelow(2**31 - 2)) % (2**31 - 1))


def _remaining(start: float, done: int, total: int, estimate: float) -> str:
    """About how long is left: from the pace so far once a few runs are done, else from the estimate."""
    spent = time.perf_counter() - start
    left = spent / done * (total - done) if done >= 3 else max(estimate - spent, 0.0)
    return f"about {left:,.0f} s left" if left >= 1 else "almost done"


def gated_run(
    gate: str,
    data_key: tuple,
    tree: Hierarchy,
    configs: Sequence[Config],
    epsilons: Sequence[float],
    trials: int,
    max_size: int,
    seed: int,
    finding_name: str | None = None,
) -> pd.DataFrame | None:
    """The sweep's frame: cached, or run now with a progress bar once :func:`run_gate`
    lets it (quick sweeps at once, long ones on a click); None while it waits for the click.

    When the sweep is exactly the shipped finding ``finding_name`` (same data, series, ε, trials, K and seed),
    says that a live run would only reproduce it, and offers a new seed."""
    raw = cached(sweep_key(data_key, tree, configs, epsilons, trials, max_size, seed))
    if raw is not None:
        return raw
    found = finding(finding_name) if finding_name else None
    if found is not None and not finding_differences(found, data_key, tree, configs, epsilons, trials, max_size, seed):
        st.info(
            "A live run of these settings would only **reproduce the shipped finding** shown on this page: the same "
            "data, series, ε, trials, K and seed draw the same noise (it took "
            f"{found.meta.get('seconds', 0):,.0f} s when it was made, on a machine as loaded as it was then; the "
            "estimate below is for this machine as it is now). A new seed draws new noise.",
            icon=":material/replay:",
        )
        st.button("Use a new seed", key=f"{gate}.new_seed", on_click=_new_seed, args=(int(seed),))
    n_runs = len(configs) * len(epsilons) * trials
    seconds = engine.guard(estimated_seconds, tree, configs, epsilons, trials, max_size)
    go, clear = run_gate(gate, n_runs, seconds)
    if not go:
        return None
    model = seconds / calibration.factor("sweep")  # without the learnt factor, read before other runs move it
    rate = calibration.rate_in_use()  # the rate of that estimate (a probe may end while the sweep runs)
    bar = st.progress(0.0, text=f"Running {n_runs} releases (≈{seconds:,.0f} s)…")
    start = time.perf_counter()
    raw = engine.guard(
        run,
        data_key,
        tree,
        configs,
        epsilons,
        trials,
        max_size,
        seed,
        progress=lambda done, total: bar.progress(
            done / total, text=f"{done} / {total} releases — {_remaining(start, done, total, seconds)}"
        ),
    )
    bar.empty()
    clear()
    # What this run took against its estimate (without the learnt factor): later estimates learn from it.
    calibration.observe("sweep", model, time.perf_counter() - start, rate)
    return raw


# ------------------------------------------------------------------ precomputed findings
@st.cache_resource(show_spinner=False, max_entries=8)
def _read_finding(name: str, folder: str, stamp: float) -> _findings.Finding | None:
    return _findings.read_finding(name, folder)


def finding(name: str, folder: str | os.PathLike = _findings.FINDINGS_DIR) -> _findings.Finding | None:
    """The shipped finding ``name`` (read once per file version), or None when it is missing."""
    path = os.path.join(folder, f"{name}.json")
    stamp = os.path.getmtime(path) if os.path.exists(path) else -1.0
    return _read_finding(name, str(folder), stamp) if stamp >= 0 else None


def finding_differences(
    found: _findings.Finding,
    data_key: tuple,
    tree: Hierarchy,
    configs: Sequence[Config],
    epsilons: Sequence[float],
    trials: int,
    max_size: int,
    seed: int,
) -> list[str]:
    """The settings in which the page's current choice differs from the finding's (empty: the same sweep)."""
    m = found.meta
    checks = {
        "data": tuple(data_key) == ("bundled", m["dataset"]),
        "levels": list(tree.levels) == list(m["levels"]),
        "series": [c.name for c in configs] == list(m["series"]),
        "ε": sorted(float(e) for e in epsilons) == list(m["epsilons"]),
        "trials": int(trials) == m["trials"],
        "K": int(max_size) == m["max_size"],
        "seed": int(seed) == m["seed"],
    }
    return [name for name, same in checks.items() if not same]


def finding_caption(found: _findings.Finding, differences: Sequence[str]) -> str:
    """What a precomputed finding is: its date, parameters and command, and how it relates to the settings."""
    m = found.meta
    eps = ", ".join(f"{e:g}" for e in m["epsilons"])
    text = (
        f"**Precomputed finding**, shipped with the dashboard (computed {m['created'][:10]} by `{m['command']}`, "
        f"cocoviz {m['cocoviz']}): **{m['dataset']}** ({' / '.join([m['root'], *m['levels']])}), ε per level "
        f"{eps}, {m['trials']} trials per point ({m['releases']:,} releases), K = {m['max_size']:,}, seed "
        f"{m['seed']}, fast sampler (exploration only)."
    )
    if not differences:
        return text + " These are your current settings; the button below reruns them live, with the raw rows."
    return text + f" Your settings differ ({', '.join(differences)}): the button below runs yours."


def finding_or_stop(name: str, raw: pd.DataFrame | None, slot, *args) -> tuple[pd.DataFrame, dict | None]:
    """The live sweep's summary and None, or — while it waits for a click — the shipped finding's summary
    and its metadata, with its caption written in ``slot``; ``st.stop()`` when there is neither.

    ``args``: the sweep's (data_key, tree, configs, epsilons, trials, max_size, seed).
    """
    if raw is not None:
        return summarize(raw), None
    found = finding(name)
    if found is None:
        st.stop()
    slot.caption(finding_caption(found, finding_differences(found, *args)))
    return found.summary, found.meta
