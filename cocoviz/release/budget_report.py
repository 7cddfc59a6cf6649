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
"""

from __future__ import annotations

from cocoviz.privacy.budget import NEIGHBOURS

__all__ = ["budget_report", "budget_markdown", "EXPLORATION"]

#: What the files of a release drawn with the fast seeded sampler say about it.
EXPLORATION = "exploration, not for release"
NOISE = "double-geometric (discrete Laplace)"


def budget_report(release, *, secure: bool, dataset: str | None = None, source: str | None = None) -> dict:
    """The budget of ``release`` as a JSON-ready dictionary (``dataset``: the ledger's identity)."""
    budget, names = release.budget, ["(root)", *release.plan.shape.levels]
    measurements = [
        {
            "level": c.level,
            "level_name": "whole data" if c.level is None else names[c.level],
            "where": c.where,
            "nodes": c.nodes,
            "query": c.quantity,
            "cells": c.cells,
            "sensitivity": c.sensitivity,
            "noise": f"{NOISE}, scale Δ/ε = {c.scale:g}" if c.noise_scale is None else f"{NOISE}, scale {c.scale:g}",
            "noise_scale": c.scale,
            "noise_variance": c.noise_variance,
            "epsilon": c.epsilon,
            "neighbours": NEIGHBOURS,
        }
        for c in budget.charges
    ]
    return {
        "kind": "secure release" if secure else EXPLORATION,
        "secure": secure,
        "sampler": budget.sampler,
        "source": source,
        "dataset": dataset,
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
    lines = [
        f"# Privacy budget: {report['kind']}, ε = {report['total_epsilon']:g}",
        "",
    ]
    if not report["secure"]:
        lines += [f"**{EXPLORATION.capitalize()}**: the noise came from the fast seeded sampler.", ""]
    lines += [
        f"- sampler: {report['sampler']}",
        *([f"- source: {report['source']}"] if report.get("source") else []),
        *(
            [f"- dataset identity (hash of the public levels, nodes, G): `{report['dataset']}`"]
            if report["dataset"]
            else []
        ),
        f"- neighbouring datasets: {report['neighbours']}",
        f"- composition: {report['composition']}",
        "- ε per level: " + ", ".join(f"{name} {eps:g}" for name, eps in report["epsilon_per_level"].items()),
        "",
        "| level | nodes | query | cells | sensitivity Δ | noise | ε |",
        "|---|---|---|---:|---:|---|---:|",
    ]
    for m in report["measurements"]:
        level = m["level_name"] if m["level"] is None else f"{m['level']} ({m['level_name'].strip('()')})"
        lines.append(
            f"| {level} | {m['where']} | {m['query']} | {m['cells']:,} | {m['sensitivity']:g} | {m['noise']} "
            f"| {m['epsilon']:g} |"
        )
    lines += ["", *(f"- note: {note}" for note in report["notes"])]
    if report.get("truncation"):
        lines.append(f"- truncation by the private K: {report['truncation']}")
    return "\n".join(lines).rstrip() + "\n"
