"""A release's budget report for publication: every measurement's level, query, Δ, noise, ε and neighbours.

:func:`budget_report` is JSON-ready; :func:`budget_markdown` reads the same report as a
page a person can check.  Both hold public facts only (the plan's cost and the
sampler), like the release they describe.

>>> from cocoviz.plan import Plan, Shape
>>> from cocoviz.release.release import Release
>>> plan = Plan.build(Shape((), (((),),), ((),), ((4,),)), epsilons=[0.5], methods=["Hg"])
>>> report = budget_report(Release(plan, [], plan.cost().with_sampler("secure")), secure=True)
>>> report["total_epsilon"], report["measurements"][0]["noise"]
(0.5, 'double-geometric (discrete Laplace), scale Δ/ε = 2')
>>> print(budget_markdown(report).splitlines()[0])
# Privacy budget: secure release, ε = 0.5

A zCDP plan's report states ρ per level, δ, each measurement's σ and the discrete Gaussian, and
the (ε, δ) reading of the composed ρ:

>>> zplan = Plan.build(Shape((), (((),),), ((),), ((4,),)), rhos=[0.125], methods=["Hg"])
>>> zreport = budget_report(Release(zplan, [], zplan.cost().with_sampler("secure")), secure=True)
>>> zreport["accounting"], zreport["total_rho"], zreport["measurements"][0]["noise"]
('zCDP', 0.125, 'discrete Gaussian, σ = Δ₂/√(2ρ) = 2')
>>> print(budget_markdown(zreport).splitlines()[0])
# Privacy budget: secure release, ρ = 0.125 (ρ-zCDP; as (ε, δ)-DP: ε = 3.244 at δ = 1e-10)
"""

from __future__ import annotations

from cocoviz.privacy.budget import NEIGHBOURS, PERSONS

__all__ = ["budget_report", "budget_markdown", "EXPLORATION"]

#: What the files of a release drawn with the fast seeded sampler say about it.
EXPLORATION = "exploration, not for release"
NOISE = "double-geometric (discrete Laplace)"
GAUSSIAN = "discrete Gaussian"


def _noise(c) -> str:
    """The noise law of one charge and its scale, as the report names it."""
    if c.noise == "gaussian":
        return f"{GAUSSIAN}, σ = Δ₂/√(2ρ) = {c.scale:g}"
    return f"{NOISE}, scale Δ/ε = {c.scale:g}" if c.noise_scale is None else f"{NOISE}, scale {c.scale:g}"


def budget_report(release, *, secure: bool, dataset: str | None = None, source: str | None = None) -> dict:
    """The budget of ``release`` as a JSON-ready dictionary (``dataset``: the ledger's identity)."""
    budget, names = release.budget, ["(root)", *release.plan.shape.levels]
    zcdp = budget.accounting == "zCDP"
    measurements = [
        {
            "level": c.level,
            "level_name": "whole data" if c.level is None else names[c.level],
            "where": c.where,
            "nodes": c.nodes,
            "query": c.quantity,
            "cells": c.cells,
            "sensitivity": c.sensitivity,
            "sensitivity_norm": "L2" if c.noise == "gaussian" else "L1",
            "noise": _noise(c),
            "noise_scale": c.scale,
            "noise_variance": c.noise_variance,
            "epsilon": c.epsilon,
            **({"rho": c.zcdp_rho, "sigma": c.scale if c.noise == "gaussian" else None} if zcdp else {}),
            "neighbours": c.relation if c.relation != PERSONS else NEIGHBOURS,
        }
        for c in budget.charges
    ]
    zcdp_fields = (
        {
            "accounting": "zCDP",
            "total_rho": budget.total_rho,
            "rho_per_level": {names[k]: rho for k, rho in budget.per_level_rho().items()},
            "delta": budget.delta,
            "epsilon_delta": budget.epsilon_delta(),
        }
        if zcdp
        else {"accounting": "pure-ε"}
    )
    return {
        "kind": "secure release" if secure else EXPLORATION,
        "secure": secure,
        "sampler": budget.sampler,
        "source": source,
        "dataset": dataset,
        **zcdp_fields,
        # Under zCDP these are (ε, δ) readings at δ: the total's is of the composed ρ, never a sum of readings.
        "total_epsilon": budget.total,
        "epsilon_per_level": {names[k]: eps for k, eps in budget.per_level().items()},
        "extra": [list(e) for e in budget.extra],
        "composition": budget.composition,
        "neighbours": NEIGHBOURS,
        "measurements": measurements,
        "notes": list(budget.notes),
        "truncation": release.plan.truncation(),
        "parameters": release.parameters(),
    }


def budget_markdown(report: dict) -> str:
    """The report of :func:`budget_report` as Markdown: a heading, the totals, one table row per measurement."""
    zcdp = report.get("accounting") == "zCDP"
    if zcdp:
        heading = (
            f"ρ = {report['total_rho']:g} (ρ-zCDP; as (ε, δ)-DP: ε = {report['epsilon_delta']:.4g} "
            f"at δ = {report['delta']:g})"
        )
    else:
        heading = f"ε = {report['total_epsilon']:g}"
    lines = [f"# Privacy budget: {report['kind']}, {heading}", ""]
    if not report["secure"]:
        lines += [f"**{EXPLORATION.capitalize()}**: the noise came from the fast seeded sampler.", ""]
    lines += [
        f"- sampler: {report['sampler']}",
        *([f"- source: {report['source']}"] if report.get("source") else []),
        *(
            [f"- dataset identity in the privacy ledger (a hash of the persons source): `{report['dataset']}`"]
            if report["dataset"]
            else []
        ),
        f"- neighbouring datasets: {report['neighbours']}",
        f"- composition: {report['composition']}",
        *(
            [
                "- ρ per level: " + ", ".join(f"{name} {rho:g}" for name, rho in report["rho_per_level"].items()),
                f"- δ: {report['delta']:g}; the (ε, δ) reading is of the composed ρ (Canonne, Kamath, Steinke)",
            ]
            if zcdp
            else ["- ε per level: " + ", ".join(f"{n} {e:g}" for n, e in report["epsilon_per_level"].items())]
        ),
        "",
        "| level | nodes | query | cells | sensitivity Δ | noise | " + ("ρ | ε |" if zcdp else "ε |"),
        "|---|---|---|---:|---:|---|" + ("---:|---:|" if zcdp else "---:|"),
    ]
    for m in report["measurements"]:
        level = m["level_name"] if m["level"] is None else f"{m['level']} ({m['level_name'].strip('()')})"
        norm = m.get("sensitivity_norm", "L1")
        eps = "—" if m["epsilon"] is None else f"{m['epsilon']:g}"
        spent = f"{m['rho']:g} | {eps}" if zcdp else eps
        lines.append(
            f"| {level} | {m['where']} | {m['query']} | {m['cells']:,} | {m['sensitivity']:g} ({norm}) "
            f"| {m['noise']} | {spent} |"
        )
    lines += ["", *(f"- note: {note}" for note in report["notes"])]
    if report.get("truncation"):
        lines.append(f"- truncation by the private K: {report['truncation']}")
    return "\n".join(lines).rstrip() + "\n"
