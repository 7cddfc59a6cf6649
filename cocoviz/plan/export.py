"""The settings of a release as code: a plan file, a short Python script and a command line.

Every text here is built from a :class:`~cocoviz.plan.Plan`'s public parameters alone (:meth:`Plan.options`:
ε or ρ per level, methods, K, consistency, merge, K selection, prior) — never from the data it was built
for — so it may be shared, published or committed beside the release.  The plan file is shape-less (as a
hand-written one): loaded for a hierarchy, ``Plan.load(path, shape)`` builds it again, and the release
command reads it with ``--plan``.  The script and the command reproduce the release on the same data: the
script with the fast seeded sampler when ``seed`` is given (bit-identical to the dashboard's exploration
release), the command always with the secure sampler (the command's purpose).

Examples
--------
>>> from cocoviz.hierarchy import Hierarchy
>>> import pandas as pd
>>> tree = Hierarchy.from_counts(pd.DataFrame({"leaf": ["a", "b"], "size": [1, 2], "count": [3, 4]}),
...                              size="size", count="count", levels=["leaf"])
>>> from cocoviz.plan import Plan
>>> plan = Plan.build(tree, epsilons=[1.0, 0.5], methods=["Hc", "Hg"], max_size=10)
>>> print(plan_text(plan).splitlines()[2])
epsilons = [1.0, 0.5]
>>> print(cli_line(plan, "persons.parquet", group="hh", levels=["leaf"]))
python -m cocoviz release persons.parquet --group hh --levels leaf --plan plan.toml --out release
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence

from cocoviz.plan.files import PLAN_FORMAT, toml_text
from cocoviz.plan.plan import Plan

__all__ = ["plan_fields", "plan_text", "python_script", "cli_line"]


def plan_fields(plan: Plan) -> dict:
    """The plan's public parameters as a plan file's fields (no shape: a file for any hierarchy of its depth)."""
    fields = {"format": PLAN_FORMAT, **plan.options()}
    fields["prior"] = plan.prior.to_dict()
    return {k: v for k, v in fields.items() if v is not None}


def plan_text(plan: Plan, kind: str = "toml") -> str:
    """The plan file's text, TOML (``kind="toml"``) or JSON; ``Plan.load`` reads it back for a shape."""
    fields = plan_fields(plan)
    if kind == "json":
        return json.dumps(fields, ensure_ascii=False, indent=1) + "\n"
    if kind != "toml":
        raise ValueError(f"kind must be 'toml' or 'json', got {kind!r}")
    return "# A cocoviz plan: public parameters only (python -m cocoviz release --plan FILE).\n" + toml_text(fields)


def python_script(plan: Plan, load_lines: Sequence[str], *, seed: int | None = 0) -> str:
    """A short script that draws the release of ``plan`` on the hierarchy ``load_lines`` build as ``tree``.

    ``seed``: the fast seeded sampler's seed (the exploration release, bit-identical); None draws with the
    secure sampler (a release to publish, which also needs public G and a public K).
    """
    options = plan.options()
    prior = plan.prior.to_dict()
    options.pop("prior", None)
    args = ",\n    ".join(f"{k}={v!r}" for k, v in options.items())
    sampler = f"seed={seed!r}" if seed is not None else "secure=True"
    lines = [
        '"""Reproduces a cocoviz release: the same plan and sampler on the same data."""',
        "import cocoviz",
        "from cocoviz.methods.hcp_prior import Prior",
        "",
        *load_lines,
        "release = cocoviz.estimate(",
        "    tree,",
        f"    {args},",
        f"    prior=Prior.from_dict({prior!r}),",
        f"    {sampler},",
        ")",
        "print(release)",
        'release.save("release.parquet")',
        "",
    ]
    return "\n".join(lines)


def cli_line(
    plan: Plan,
    source: str,
    *,
    group: str,
    levels: Sequence[str],
    plan_file: str = "plan.toml",
    out: str = "release",
    groups: str | None = None,
) -> str:
    """The release command that draws ``plan`` (saved as ``plan_file``) with the secure sampler on the persons
    table ``source`` (and the public groups table ``groups``)."""
    words = ["python", "-m", "cocoviz", "release", source, "--group", group, "--levels", ",".join(levels)]
    if groups:
        words += ["--groups", groups]
    words += ["--plan", plan_file, "--out", out]
    return shlex.join(words)
