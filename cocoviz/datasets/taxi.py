"""NYC taxi pickups per medallion and Manhattan neighbourhood (the paper's 2013 taxi data)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cocoviz.datasets.common import PAPER_FIGURES, aggregate_leaves, check_scale, check_seed, counts_frame, rng_stream

__all__ = ["generate_taxi", "RECIPE"]

# Manhattan's 28 residential Neighborhood Tabulation Areas, with a rough share of
# yellow-cab pickups (busy Midtown, quiet upper Manhattan), split at 59th Street.
_NEIGHBOURHOODS: tuple[tuple[str, str, float], ...] = (
    ("Lower Manhattan", "Midtown-Midtown South", 14.0),
    ("Lower Manhattan", "Hudson Yards-Chelsea-Flatiron-Union Square", 12.0),
    ("Lower Manhattan", "Turtle Bay-East Midtown", 7.0),
    ("Lower Manhattan", "Murray Hill-Kips Bay", 7.0),
    ("Lower Manhattan", "West Village", 6.0),
    ("Lower Manhattan", "SoHo-TriBeCa-Civic Center-Little Italy", 5.0),
    ("Lower Manhattan", "Clinton", 4.0),
    ("Lower Manhattan", "East Village", 4.0),
    ("Lower Manhattan", "Gramercy", 3.0),
    ("Lower Manhattan", "Battery Park City-Lower Manhattan", 3.0),
    ("Lower Manhattan", "Lower East Side", 1.5),
    ("Lower Manhattan", "Chinatown", 0.7),
    ("Lower Manhattan", "Stuyvesant Town-Cooper Village", 0.5),
    ("Upper Manhattan", "Upper East Side-Carnegie Hill", 8.0),
    ("Upper Manhattan", "Upper West Side", 6.0),
    ("Upper Manhattan", "Lenox Hill-Roosevelt Island", 5.0),
    ("Upper Manhattan", "Lincoln Square", 4.0),
    ("Upper Manhattan", "Yorkville", 2.0),
    ("Upper Manhattan", "Morningside Heights", 0.6),
    ("Upper Manhattan", "East Harlem South", 0.4),
    ("Upper Manhattan", "Central Harlem South", 0.2),
    ("Upper Manhattan", "East Harlem North", 0.06),
    ("Upper Manhattan", "Manhattanville", 0.05),
    ("Upper Manhattan", "Hamilton Heights", 0.04),
    ("Upper Manhattan", "Central Harlem North-Polo Grounds", 0.04),
    ("Upper Manhattan", "Washington Heights South", 0.025),
    ("Upper Manhattan", "Washington Heights North", 0.015),
    ("Upper Manhattan", "Marble Hill-Inwood", 0.01),
)
# Medallions in 2013, and how unevenly they work (Gamma shapes: per medallion,
# and per medallion and neighbourhood for drivers' favourite areas).
_MEDALLIONS = 13_237
_ACTIVITY_SHAPE = 10.0
_AREA_PREFERENCE_SHAPE = 20.0

#: How the taxi data is made, for its data card.
RECIPE = (
    "13,237 medallions (2013) at scale 1. Pickups of a medallion in a neighbourhood are Poisson with mean "
    f"T * activity * share * preference: activity ~ Gamma(shape {_ACTIVITY_SHAPE}) and area preference ~ "
    f"Gamma(shape {_AREA_PREFERENCE_SHAPE}), both "
    "of mean 1; the neighbourhood's share of pickups is fixed (Midtown busiest, Inwood quietest, upper Manhattan "
    "small as for 2013 yellow cabs); T makes 131 million trips at scale 1. A group is a medallion in a "
    "neighbourhood where it had at least one pickup. Neighbourhoods are Manhattan's 28 residential NTAs, split "
    "into upper and lower Manhattan at 59th Street."
)


def generate_taxi(scale: float = 1.0, seed: int = 0) -> pd.DataFrame:
    """Pickups per medallion per Manhattan neighbourhood, per-leaf counts.

    A group is a medallion in a neighbourhood where it had at least one
    pickup; its size is that number of pickups.  Pickups are Poisson with
    mean ``T · activity · share · preference``: the medallion's activity and
    its preference for the area are Gamma with mean 1, the neighbourhood's
    share is fixed (Midtown busiest, Inwood quietest) and ``T`` is set so the
    total is the paper's 131 million trips at scale 1.

    Parameters
    ----------
    scale : float
        Fraction of the 13,237 medallions.
    seed : int

    Returns
    -------
    DataFrame
        Columns ``half``, ``neighbourhood``, ``size``, ``count``.

    Examples
    --------
    >>> table = generate_taxi(0.01, 0)
    >>> list(table.columns), table["neighbourhood"].nunique()
    (['half', 'neighbourhood', 'size', 'count'], 28)
    """
    scale, seed = check_scale(scale), check_seed(seed)
    rng = rng_stream(seed, 5)
    share = np.array([w for _, _, w in _NEIGHBOURHOODS])
    share /= share.sum()
    medallions = max(1, int(round(_MEDALLIONS * scale)))
    per_medallion = PAPER_FIGURES["taxi"][1] / _MEDALLIONS
    activity = rng.gamma(_ACTIVITY_SHAPE, 1 / _ACTIVITY_SHAPE, medallions)
    preference = rng.gamma(_AREA_PREFERENCE_SHAPE, 1 / _AREA_PREFERENCE_SHAPE, (medallions, len(share)))
    pickups = rng.poisson(per_medallion * activity[:, None] * share[None, :] * preference)
    area = np.broadcast_to(np.arange(len(share)), pickups.shape).ravel()
    pickups = pickups.ravel()
    area, sizes, counts = aggregate_leaves(area[pickups > 0], pickups[pickups > 0])
    halves = np.array([h for h, _, _ in _NEIGHBOURHOODS], dtype=object)
    names = np.array([n for _, n, _ in _NEIGHBOURHOODS], dtype=object)
    return counts_frame({"half": halves[area], "neighbourhood": names[area]}, sizes, counts)
