"""What the privacy ledger's draws spend together, and the cap that bounds it.

A draw is recorded as ``(accounting, ε, ρ, δ)``: pure-ε draws add their ε; once a zCDP draw is in, ρ adds
(a pure-ε draw counting ε²/2) and ε is read from the composed ρ, never by adding (ε, δ) readings
(:func:`compose`). A cap is an ε per dataset; a draw that would take the composed spending past it is refused
before any noise (:func:`refuse_past_cap`). :mod:`cocoviz.measure.ledger` stores the draws.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence

from cocoviz.errors import ParameterError, PrivacyError
from cocoviz.privacy.accounting import DEFAULT_DELTA, rho_of_epsilon, zcdp_epsilon

__all__ = ["SLACK", "check_cap", "compose", "recorded_costs", "refuse_past_cap", "row_cost"]

# ε is summed in floating point: 1/3 + 1/3 + 1/3 must fit a cap of 1.
SLACK = 1e-9


def check_cap(cap: float | None) -> float | None:
    """A budget cap: None (no cap) or a finite ε > 0."""
    if cap is None:
        return None
    if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not math.isfinite(cap) or cap <= 0:
        raise ParameterError(f"the budget cap must be a finite ε > 0, got {cap!r}")
    return float(cap)


def compose(draws: Sequence[tuple[str, float, float | None, float | None]]) -> tuple[float, float | None, float]:
    """(ε, ρ, δ) of a sequence of draws ``(accounting, epsilon, rho, delta)`` composed.

    All pure ε: ε adds (ρ None, δ 0).  With a zCDP draw: ρ adds (a pure-ε draw counting ε²/2, which it
    satisfies), δ is the smallest recorded, and ε is the smaller of two valid readings — that of the whole
    composed ρ, and that of the zCDP draws' ρ plus the pure draws' ε — never a sum of (ε, δ) readings.

    >>> compose([("zCDP", 4.70, 0.5, 1e-10), ("zCDP", 4.70, 0.5, 1e-10)])[:2] == (zcdp_epsilon(1.0, 1e-10), 1.0)
    True
    >>> compose([("pure-ε", 1.0, None, None), ("pure-ε", 2.0, None, None)])
    (3.0, None, 0.0)
    """
    pure = [eps for accounting, eps, _, _ in draws if accounting != "zCDP"]
    zcdp = [(rho, delta) for accounting, _, rho, delta in draws if accounting == "zCDP"]
    if not zcdp:
        return float(math.fsum(pure)), None, 0.0
    delta = min(d if d is not None else DEFAULT_DELTA for _, d in zcdp)
    rho_z = math.fsum(r for r, _ in zcdp)
    rho_all = math.fsum([rho_z, *(rho_of_epsilon(e) for e in pure)])
    eps = min(zcdp_epsilon(rho_all, delta), math.fsum(pure) + zcdp_epsilon(rho_z, delta))
    return float(eps), float(rho_all), float(delta)


def row_cost(budget) -> tuple[str, float, float | None, float | None]:
    """A budget as the ledger composes it: (accounting, ε or its (ε, δ) reading, ρ or None, δ or None)."""
    if budget.accounting == "zCDP":
        return "zCDP", float(budget.total), float(budget.total_rho), float(budget.delta)
    return "pure-ε", float(budget.total), None, None


def recorded_costs(db: sqlite3.Connection, dataset: str | None) -> list[tuple]:
    """``(accounting, ε, ρ, δ)`` of every draw recorded for ``dataset`` (None: all), as :func:`compose` reads."""
    query, args = "SELECT accounting, epsilon, rho, delta FROM draws", ()
    if dataset is not None:
        query, args = query + " WHERE dataset = ?", (dataset,)
    return db.execute(query, args).fetchall()


def refuse_past_cap(db: sqlite3.Connection, dataset: str, cost: tuple, cap: float | None, label: str) -> None:
    """Refuse a draw of ``cost`` (:func:`row_cost`) that would take ``dataset`` past the smaller of ``cap``
    and the kept cap, spending composed by :func:`compose`."""
    kept = db.execute("SELECT value FROM settings WHERE name = 'cap'").fetchone()
    cap = min((c for c in (cap, None if kept is None else float(kept[0])) if c is not None), default=None)
    if cap is None:
        return
    recorded = recorded_costs(db, dataset)
    spent = compose(recorded)[0]
    total, rho, delta = compose([*recorded, cost])
    if total > cap * (1 + SLACK):
        name = f" ({label})" if label else ""
        how = f" (composed ρ = {rho:g}, read at δ = {delta:g})" if rho is not None else ""
        raise PrivacyError(
            f"the budget cap is ε = {cap:g} per dataset: this dataset{name} has spent ε = {spent:g} in "
            f"{len(recorded)} secure release(s), and this draw would take it to ε = {total:g}{how}; "
            "nothing was drawn"
        )
