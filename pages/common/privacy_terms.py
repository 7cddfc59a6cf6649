"""A release's privacy terms in the dashboard's words: ε or ρ per level, the noise law, the (ε, δ) reading.

Every figure is read from the release's own :class:`~cocoviz.privacy.budget.Budget` (what its plan charged),
never recomputed here.  Under zCDP a level states its ρ (a pure-ε step in it counts ε²/2, as the plan
charges it) and the discrete Gaussian's σ = Δ₂/√(2ρ); the only ε shown is the (ε, δ) reading of the total ρ at
the budget's δ — never the ε of a Laplace law of equal variance, which is a figure of the noise, not of privacy.
"""

from __future__ import annotations

from cocoviz.privacy.budget import Budget

#: The noise laws in words: Laplace on integers is the double-geometric law.
NOISE_WORDS = {"laplace": "double-geometric", "gaussian": "discrete Gaussian"}


def level_privacy(budget: Budget, n_levels: int) -> list[str]:
    """Per level, root first: ``"ε = 1"`` (pure ε) or ``"ρ = 0.5"`` (zCDP), ``"–"`` where nothing is measured.

    >>> from cocoviz.plan import Plan, Shape
    >>> shape = Shape(("s",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)))
    >>> cost = lambda **o: Plan.build(shape, methods=["Hc", "Hc"], max_size=10, **o).cost()
    >>> level_privacy(cost(rhos=[0.1, 0.4]), 2)
    ['ρ = 0.1', 'ρ = 0.4']
    >>> level_privacy(cost(epsilons=[1, 2], consistency="bottom-up"), 2)
    ['–', 'ε = 3']
    """
    zcdp = budget.accounting == "zCDP"
    spent = budget.per_level_rho() if zcdp else budget.per_level()
    unit = "ρ" if zcdp else "ε"
    return [f"{unit} = {spent[k]:g}" if k in spent else "–" for k in range(n_levels)]


def level_noise(budget: Budget, n_levels: int) -> list[str]:
    """Per level, root first: its noise law and scale — ``"double-geometric scale Δ/ε = 1"`` or ``"discrete
    Gaussian σ = 1"`` — each query named (``K``, ``Hc``, …) when a level has several (a private K and the
    histogram).

    >>> from cocoviz.plan import Plan, Shape
    >>> shape = Shape(("s",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)))
    >>> cost = lambda **o: Plan.build(shape, methods=["Hc", "Hc"], max_size=10, **o).cost()
    >>> level_noise(cost(rhos=[0.5, 2.0]), 2)
    ['discrete Gaussian σ = 1', 'discrete Gaussian σ = 0.5']
    >>> level_noise(cost(epsilons=[0.5, 2.0]), 2)
    ['double-geometric scale Δ/ε = 2', 'double-geometric scale Δ/ε = 0.5']
    >>> level_noise(cost(rhos=[0.5, 0.5], k_select="noisy-max", k_epsilon=0.25), 2)[0]
    'K: double-geometric scale Δ/ε = 4; Hc: discrete Gaussian σ = 1'
    """
    words: list[list[str]] = [[] for _ in range(n_levels)]
    for c in budget.charges:
        if c.level is None or not 0 <= c.level < n_levels:
            continue
        law = NOISE_WORDS.get(c.noise, c.noise)
        scale = f"σ = {c.scale:.3g}" if c.noise == "gaussian" else f"scale Δ/ε = {c.scale:.3g}"
        words[c.level].append((_short(c.quantity), f"{law} {scale}"))
    return [
        "–" if not w else w[0][1] if len(w) == 1 else "; ".join(f"{q}: {text}" for q, text in dict(w).items())
        for w in words
    ]


def _short(quantity: str) -> str:
    """A query's short name: ``"K"`` for a private K's, else its name before its cells or its gloss (``"Hc"``)."""
    if quantity.startswith("K"):
        return "K"
    return quantity.split("[", 1)[0].split(" (", 1)[0].strip() or quantity


def reading(budget: Budget) -> str:
    """The budget's whole cost in one phrase: pure ``"ε = 2"``; zCDP ``"ρ = 1, read as (ε = 10, δ = 1e-10)-DP"``.

    >>> from cocoviz.plan import Plan, Shape
    >>> shape = Shape(("s",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)))
    >>> cost = lambda **o: Plan.build(shape, methods=["Hc", "Hc"], max_size=10, **o).cost()
    >>> reading(cost(rhos=[0.5, 0.5]))
    'ρ = 1, read as (ε = 10, δ = 1e-10)-DP'
    """
    if budget.accounting == "zCDP":
        return f"ρ = {budget.total_rho:g}, read as (ε = {budget.epsilon_delta():.3g}, δ = {budget.delta:g})-DP"
    return f"ε = {budget.total:g}"


def compared_at(a: Budget, b: Budget, names: tuple[str, str] = ("A", "B")) -> str:
    """On what terms two releases' costs compare: total ε with total ε, total ρ with total ρ, and a pure-ε side
    with a zCDP side by the zCDP side's (ε, δ) reading at its δ (a pure ε holds at every δ); equal or not.

    >>> from cocoviz.plan import Plan, Shape
    >>> shape = Shape(("s",), (((),), (("a",), ("b",))), ((), (0, 0)), ((4,), (2, 2)))
    >>> cost = lambda **o: Plan.build(shape, methods=["Hc", "Hc"], max_size=10, **o).cost()
    >>> compared_at(cost(rhos=[0.5, 0.5]), cost(rhos=[0.25, 0.75]))
    'Both zCDP: compared by total ρ (ρ adds over levels) — an equal total, ρ = 1 each.'
    """
    za, zb = a.accounting == "zCDP", b.accounting == "zCDP"
    if za and zb:
        ta, tb, how, unit = a.total_rho, b.total_rho, "Both zCDP: compared by total ρ (ρ adds over levels)", "ρ"
    elif not za and not zb:
        ta, tb, how, unit = a.total, b.total, "Both pure ε: compared by total ε (ε adds over levels)", "ε"
    else:
        z, pure = (a, b) if za else (b, a)
        delta = z.delta
        ta, tb = (z.epsilon_delta(), pure.total) if za else (pure.total, z.epsilon_delta())
        how = (
            f"One pure-ε side, one zCDP side: compared by (ε, δ) at δ = {delta:g} — the zCDP side's total ρ read "
            "as (ε, δ)-DP, the pure ε as it is (it holds at every δ)"
        )
        unit = "ε"
    if abs(ta - tb) <= 1e-9 * max(abs(ta), abs(tb), 1.0):
        return f"{how} — an equal total, {unit} = {ta:.4g} each."
    return f"{how} — not an equal total: {unit} = {ta:.4g} for {names[0]}, {tb:.4g} for {names[1]}."


def spent_words(epsilon: float, rho: float | None, delta: float) -> str:
    """A ledger's composed spending (:meth:`~cocoviz.release.ledger.Ledger.totals`) in words: ``"ε = 3"`` when
    every draw is pure ε, else the composed ρ with its (ε, δ) reading.

    >>> spent_words(3.0, None, 0.0)
    'ε = 3'
    >>> spent_words(10.03, 1.0, 1e-10)
    'ρ = 1, read as (ε = 10, δ = 1e-10)-DP'
    """
    if rho is None:
        return f"ε = {epsilon:g}"
    return f"ρ = {rho:g}, read as (ε = {epsilon:.3g}, δ = {delta:g})-DP"
