"""A "previous census" stand-in: public prior tables per node, for Hcp's prior (Tao et al.).

The bundled datasets are one draw (seed 0) of a generator.  A previous census of the same
places is another draw (``seed``, default 1) of the same generator, at the same scale, with a
documented **drift**: households used to be larger.  Per state (the generators' unit), every
count at size j is multiplied by ``exp(θ · min(j, 7))``, with θ chosen by bisection so that the
state's average size of its households of sizes 1..7 is ``drift`` persons larger than in that
draw (default +0.05, about the US change from 2000, 2.62, to 2010, 2.58, in the other direction
of time); counts past 7 move with size 7, so the tail's shape is kept.  G of every node is
unchanged (counts are rescaled to it).  The generators themselves are not touched.

The result is one public ``size``/``count`` table per node path (root, states, counties):
``previous_census_prior("housing-west")`` can be handed to ``Plan.build(..., prior=...)`` as is.
It is public by construction (another draw, not the protected data), so it costs no ε.

>>> tables = previous_census_prior("housing-west", scale=0.0005)
>>> root = tables[()]
>>> list(root.columns), bool(root["count"].sum() > 0), ("CA",) in tables
(['size', 'count'], True, True)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.datasets.registry import dataset, generate

__all__ = ["PREVIOUS_SEED", "DRIFT", "drift_state", "previous_census_table", "previous_census_prior"]

#: Seed of the previous census's draw (the bundled data is seed 0).
PREVIOUS_SEED = 1
#: How much larger, in persons, a state's average household (sizes 1..7) was then.
DRIFT = 0.05


def _mean_small(sizes: np.ndarray, counts: np.ndarray) -> float:
    small = (sizes >= 1) & (sizes <= 7)
    return float(np.dot(sizes[small], counts[small]) / max(counts[small].sum(), 1e-300))


def drift_state(sizes: np.ndarray, counts: np.ndarray, drift: float = DRIFT) -> np.ndarray:
    """Counts tilted by ``exp(θ min(size, 7))`` so the mean of sizes 1..7 moves by ``drift``; total kept.

    >>> drift_state(np.array([1, 2]), np.array([50.0, 50.0]), 0.1).round(1).tolist()
    [40.0, 60.0]
    """
    sizes, counts = np.asarray(sizes, np.int64), np.asarray(counts, np.float64)
    target = _mean_small(sizes, counts) + drift
    capped = np.minimum(sizes, 7)

    def tilted(theta: float) -> np.ndarray:
        w = counts * np.exp(theta * (capped - 4))
        return w * counts.sum() / w.sum()

    lo, hi = -5.0, 5.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _mean_small(sizes, tilted(mid)) < target else (lo, mid)
    return tilted((lo + hi) / 2)


def previous_census_table(
    name: str, *, scale: float | None = None, seed: int = PREVIOUS_SEED, drift: float = DRIFT
) -> pd.DataFrame:
    """The previous census of dataset ``name`` per leaf: its level columns, ``size`` and a drifted float ``count``.

    Another draw (``seed``) of the generator, each state's counts tilted by :func:`drift_state`.
    """
    levels = list(dataset(name).levels)
    table = generate(name, scale=scale, seed=seed)
    parts = []
    for _, state in table.groupby(levels[0], sort=True, observed=True):
        parts.append(state.assign(count=drift_state(state["size"].to_numpy(), state["count"].to_numpy(), drift)))
    return pd.concat(parts, ignore_index=True)


def previous_census_prior(
    name: str, *, scale: float | None = None, seed: int = PREVIOUS_SEED, drift: float = DRIFT
) -> dict[tuple[str, ...], pd.DataFrame]:
    """Per node path of dataset ``name``, the previous census's ``size``/``count`` table (module docstring).

    Parameters
    ----------
    name : a bundled dataset with state / county levels (e.g. ``"housing-west"``)
    scale : the dataset's scale (None: the bundled one)
    seed : the previous census's draw
    drift : the change of each state's average household size (sizes 1..7), in persons
    """
    levels = list(dataset(name).levels)
    table = previous_census_table(name, scale=scale, seed=seed, drift=drift)
    out: dict[tuple[str, ...], pd.DataFrame] = {}
    for depth in range(len(levels) + 1):
        keys = levels[:depth]
        groups = [((), table)] if not keys else table.groupby(keys, sort=True)
        for key, part in groups:
            path = tuple(str(k) for k in (key if isinstance(key, tuple) else (key,))) if keys else ()
            sums = part.groupby("size", sort=True)["count"].sum()
            out[path] = pd.DataFrame({"size": sums.index.to_numpy(np.int64), "count": sums.to_numpy()})
    return out
