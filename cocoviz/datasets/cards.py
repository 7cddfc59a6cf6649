"""Data cards and the bundle: the figures of each dataset, ``data/README.md`` and the files it describes.

Every figure on a card is computed from the loaded data, never typed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cocoviz.core.atomic import atomic_path, write_text
from cocoviz.datasets.common import PAPER_FIGURES
from cocoviz.datasets.housing import generate_housing
from cocoviz.datasets.race import generate_race
from cocoviz.datasets.registry import (
    BUNDLE_SEED,
    DATA_DIR,
    DATASETS,
    DEFAULT_DATASET,
    Dataset,
    dataset,
    generate,
    load_cached,
    load_dataset,
)
from cocoviz.datasets.taxi import generate_taxi
from cocoviz.hierarchy import Hierarchy

__all__ = [
    "dataset_card",
    "summary_line",
    "card_markdown",
    "full_scale_figures",
    "scaling_effect",
    "write_bundle",
    "TAIL_SIZE",
]


def _figures(tree: Hierarchy) -> dict:
    s = tree.summary()
    return {
        "groups": s["groups"],
        "persons": s["persons"],
        "distinct_sizes": s["distinct_sizes"],
        "max_size": s["max_size"],
        "nodes_per_level": s["nodes_per_level"],
    }


def dataset_card(name: str, *, data_dir: str | Path | None = None) -> dict:
    """The data card of the bundled default of ``name``, for the app and ``data/README.md``.

    Figures (groups, persons, distinct sizes, node counts) are computed from
    the loaded data, not typed.

    Returns
    -------
    dict
        ``name``, ``title``, ``description``, ``imitates``, ``recipe``,
        ``root``, ``levels``, ``level_names`` (root first), ``nodes_per_level``,
        ``groups``, ``persons``, ``distinct_sizes``, ``max_size``, ``scale``,
        ``seed``, ``file``, ``form``, ``public_max_size`` and ``paper``
        (the paper's scale-1.0 groups, persons and distinct sizes, or None).
    """
    spec = dataset(name)
    tree = load_dataset(name, data_dir=data_dir)
    paper = None
    if spec.paper is not None:
        g, p, d = PAPER_FIGURES[spec.paper]
        paper = {"groups": g, "persons": p, "distinct_sizes": d}
    card = {
        "name": spec.name,
        "title": spec.title,
        "description": f"{spec.title}: imitates {spec.imitates}.",
        "imitates": spec.imitates,
        "recipe": spec.recipe,
        "root": spec.root,
        "levels": list(spec.levels),
        "level_names": [spec.root, *spec.levels],
        **_figures(tree),
        "scale": spec.bundle_scale,
        "seed": None if spec.bundle_scale is None else BUNDLE_SEED,
        "file": f"data/{spec.filename}" if spec.bundled else None,
        "form": "persons" if spec.name == "toy" else "counts",
        "public_max_size": spec.public_max_size,
        "paper": paper,
    }
    return card


def summary_line(tree: Hierarchy, paper: str | None = None, scale: float | None = None) -> str:
    """Groups, persons and distinct sizes of ``tree``, against the paper's figures at ``scale``."""
    s = tree.summary()
    parts = []
    for i, (key, label) in enumerate(
        (("groups", "groups"), ("persons", "persons"), ("distinct_sizes", "distinct sizes"))
    ):
        text = f"{label} {s[key]:,}"
        if paper is not None and scale is not None:
            target = PAPER_FIGURES[paper][i] * (scale if i < 2 else 1.0)
            note = "" if i < 2 else (" at scale 1" if scale != 1.0 else "")
            text += f" (paper{note} {target:,.0f}: {s[key] / target - 1:+.1%})"
        parts.append(text)
    return "; ".join(parts)


def card_markdown(name: str, *, data_dir: str | Path | None = None) -> str:
    """The data card of ``name`` as a Markdown section."""
    c = dataset_card(name, data_dir=data_dir)
    nodes = " / ".join(f"{n:,}" for n in c["nodes_per_level"])
    lines = [
        f"### `{c['name']}`: {c['title']}",
        "",
        f"- **Imitates**: {c['imitates']}.",
        f"- **How it is made**: {c['recipe']}",
        f"- **Levels**: {' / '.join(c['level_names'])}; nodes per level {nodes}.",
        (
            f"- **Bundled file**: `{c['file']}` ({c['form']} form"
            if c["file"]
            else f"- **Generated on demand** ({c['form']} form"
        )
        + (f", scale {c['scale']:g}, seed {c['seed']})" if c["scale"] is not None else ")"),
        f"- **Groups** {c['groups']:,}; **persons** {c['persons']:,}; **distinct sizes** {c['distinct_sizes']:,}; "
        f"largest group {c['max_size']:,}; public bound K = {c['public_max_size']:,}.",
    ]
    if c["paper"] is not None:
        p = c["paper"]
        lines.append(
            f"- **Paper (scale 1.0, national)**: {p['groups']:,} groups, {p['persons']:,} persons, "
            f"{p['distinct_sizes']:,} distinct sizes."
        )
    return "\n".join(lines)


_README_HEAD = """\
# Bundled datasets

Synthetic stand-ins for the four datasets of Kuo et al. (§6.1), which cannot be downloaded here,
plus the slides' toy example. The national files are scaled down to about a million groups so the
dashboard stays interactive; `housing-west` (the default) and `taxi` are at the paper's size (see
"Why housing-west is bundled at full size"). Every figure on this page was computed by the command
that wrote the files:

```bash
python -m cocoviz data --bundle            # rewrites data/*.parquet, data/toy.csv and this README
```

Load them with `cocoviz.load_dataset(name)` (the bundled default) or
`cocoviz.load_dataset(name, scale=1.0, seed=0)` (generated at the paper's size; seconds, not
minutes). Generate one on its own with, e.g., `python -m cocoviz data housing --scale 1 --seed 0
--out housing.parquet`, which prints its groups, persons and distinct sizes next to the paper's.

The Parquet files are in the per-leaf counts form: one row per leaf and group size, columns = the
level columns, `size` and `count` (number of groups of that size in that leaf). `toy.csv` is in
the persons form (one row per person). The same forms, and the groups form (one row per group),
can be uploaded in the dashboard.

**Scale.** `scale` is the fraction of the paper's national data (for the West Coast cuts too, so
`housing-west` at scale 1.0 is the West Coast of the full housing data). The bulk of every dataset
scales linearly; the number of distinct sizes drops below scale 1.0 wherever rare large sizes are
part of the bulk (white, Hawaiian). Housing's outliers are not: see the scaling recipe below.
"""

_FULL_SIZE_WEST = """\
## Why housing-west is bundled at full size

A file in the counts form holds one row per leaf and distinct size, so its bytes grow with the
distinct sizes, not with the groups: the West Coast's 35 million households take a few KiB, as the
million of the earlier scaled file did. What grows with the groups is Hg's work: it noises one cell
per group, 35 times as many as on the earlier file (the dashboard re-estimates only the level whose ε
changed). Hc's work (K cells per node) does not depend on the groups, and the dashboard's default
release is Hc.

The scale matters for what the data teach. Hg's error at the root grows with the number of
households while Hc's does not, so at ε = 0.1 per level the winner of Figure 6 at the root moves with
the scale: Hg wins on the earlier scaled file (scale 0.028, a million households), Hc on the paper's
data (REPRODUCTION.md, "Figure 6 and the scale", has the runs at scales 0.028 to 1). At the paper's
size the bundled file is the full-size data, and its findings are those of the paper's setting.
"""

_RECIPE_HEAD = """\
## The scaling recipe: the bulk is scaled, housing's outliers are kept

The paper's housing recipe adds 50 outlier groups (group quarters, size uniform on 1..10,000) to
every state: 2,600 nationally, 250 on the West Coast. They are what makes housing sparse (most of
its distinct sizes, all of its large ones), and so what decides Figure 5's and Figure 6's winners
(Hg on sparse housing). Scaling them with the households, as the bundled files did before issue
15, left a handful of them (the table below), and the bundled housing no longer behaved like
the paper's. The recipe now scales only the households (the bulk, sizes 1 to below 30) and keeps the
outliers whole at every scale up to 1: the same groups, with the same sizes and counties, as in
the full-size data for the same seed (`generate_housing(scale, seed, outliers="full")`, the
default; `outliers="scaled"` is the previous recipe). The outliers now draw from a stream of their
own, so the full-size housing's outliers were redrawn too (its households are unchanged). The
price: at the bundled scale the outliers hold a large share of the persons (about 5,000 each), so
persons no longer scale linearly. White, Hawaiian and taxi have no outlier component (their large
groups are the bulk's own tail; taxi is bundled at full size) and are unchanged.

Housing at the bundled scale (the national file; `housing-west` is at full size), seed 0, before
(outliers scaled, from the same draws) → after (outliers kept, the bundled file), and the full-size
data of the same states; the tail is the
groups larger than {tail:,} (the households end below size 30, so the tail is the outliers):
"""

#: Groups larger than this are the "tail" in the scaling-recipe table (the bulk of housing ends near 30).
TAIL_SIZE = 100


def _bytes(n: int) -> str:
    return f"{n:,} B" if n < 1024 else f"{n / 1024:,.0f} KiB" if n < 2**20 else f"{n / 2**20:,.1f} MiB"


def _bundle_table(rows: list[tuple[str, Hierarchy, Dataset, int]]) -> str:
    out = [
        "| dataset | root / levels | nodes per level | groups | persons | distinct sizes | scale | file |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for name, tree, spec, size in rows:
        s = tree.summary()
        out.append(
            f"| `{name}` | {' / '.join([spec.root, *spec.levels])} | "
            f"{' / '.join(f'{n:,}' for n in s['nodes_per_level'])} | {s['groups']:,} | {s['persons']:,} | "
            f"{s['distinct_sizes']:,} | {'—' if spec.bundle_scale is None else f'{spec.bundle_scale:g}'} | "
            f"`{spec.filename}` ({_bytes(size)}) |"
        )
    return "\n".join(out)


def _stats(table) -> dict:
    sizes, counts = table["size"].to_numpy(), table["count"].to_numpy()
    return {
        "groups": int(counts.sum()),
        "persons": int(np.dot(sizes, counts)),
        "distinct_sizes": int(np.unique(sizes).size),
        "max_size": int(sizes.max()),
        "tail": int(counts[sizes > TAIL_SIZE].sum()),
    }


def _housing_stats(spec: Dataset, scale: float, seed: int, outliers: str) -> dict:
    return _stats(generate_housing(scale, seed, only_states=spec.regions, outliers=outliers))


def scaling_effect(seed: int = BUNDLE_SEED, *, full_scale: bool = True) -> list[dict]:
    """Housing's figures at the bundled scale before and after the recipe change, and at full size.

    Returns
    -------
    list of dict
        Per housing dataset: ``dataset``, ``scale``, ``before`` (outliers
        scaled), ``after`` (outliers kept, the bundled recipe) and ``full``
        (scale 1.0, None without ``full_scale``); each a dict of groups,
        persons, distinct sizes, max size and ``tail`` (groups larger than
        :data:`TAIL_SIZE`).
    """
    out = []
    for spec in DATASETS:
        if spec.paper != "housing" or spec.bundle_scale >= 1:
            continue
        out.append(
            {
                "dataset": spec.name,
                "scale": spec.bundle_scale,
                "before": _housing_stats(spec, spec.bundle_scale, seed, "scaled"),
                "after": _housing_stats(spec, spec.bundle_scale, seed, "full"),
                "full": _housing_stats(spec, 1.0, seed, "full") if full_scale else None,
            }
        )
    return out


def _scaling_table(rows: list[dict]) -> str:
    labels = [
        ("groups", "groups"),
        ("persons", "persons"),
        ("distinct_sizes", "distinct sizes"),
        ("max_size", "largest group"),
        ("tail", f"groups > {TAIL_SIZE}"),
    ]
    out = [
        "| dataset | scale | " + " | ".join(label for _, label in labels) + " |",
        "|---|---:|" + "---:|" * len(labels),
    ]
    for r in rows:
        cells = []
        for key, _ in labels:
            text = f"{r['before'][key]:,} → **{r['after'][key]:,}**"
            if r["full"] is not None:
                text += f" (full size {r['full'][key]:,})"
            cells.append(text)
        out.append(f"| `{r['dataset']}` | {r['scale']:g} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def full_scale_figures(seed: int = 0) -> list[dict]:
    """Groups, persons and distinct sizes of every paper dataset at scale 1.0, against the paper's."""
    out = []
    for key, make in (
        ("housing", lambda: generate_housing(1.0, seed)),
        ("white", lambda: generate_race("white", 1.0, seed)),
        ("hawaiian", lambda: generate_race("hawaiian", 1.0, seed)),
        ("taxi", lambda: generate_taxi(1.0, seed)),
    ):
        table = make()
        sizes, counts = table["size"].to_numpy(), table["count"].to_numpy()
        got = (int(counts.sum()), int(np.dot(sizes, counts)), int(np.unique(sizes).size))
        out.append(
            {
                "dataset": key,
                "seed": seed,
                "ours": got,
                "paper": PAPER_FIGURES[key],
                "relative": tuple(g / p - 1 for g, p in zip(got, PAPER_FIGURES[key])),
            }
        )
    return out


def _full_scale_table(figures: list[dict]) -> str:
    out = ["| dataset | groups (paper) | persons (paper) | distinct sizes (paper) |", "|---|---:|---:|---:|"]
    for f in figures:
        cells = [f"{o:,} ({p:,}; {r:+.1%})" for o, p, r in zip(f["ours"], f["paper"], f["relative"])]
        out.append(f"| `{f['dataset']}` | " + " | ".join(cells) + " |")
    return "\n".join(out)


def write_bundle(data_dir: str | Path | None = None, *, full_scale: bool = True) -> list[tuple[Path, int]]:
    """Write every bundled default and ``README.md`` (the data cards) into ``data_dir``.

    Parameters
    ----------
    data_dir : path, optional
        Target folder (default :data:`DATA_DIR`).
    full_scale : bool
        Also generate every paper dataset at scale 1.0 and put its figures
        against the paper's in the README (a few seconds).

    Returns
    -------
    list of (Path, int)
        Files written and their sizes in bytes.
    """
    folder = Path(data_dir) if data_dir is not None else DATA_DIR
    folder.mkdir(parents=True, exist_ok=True)
    written, rows = [], []
    for spec in DATASETS:
        table = generate(spec.name)
        path = folder / spec.filename
        if spec.name != "toy":
            table = table.sort_values([*spec.levels, "size"], ignore_index=True)
        with atomic_path(path) as tmp:  # a failed write leaves the previous bundled file whole
            if spec.name == "toy":
                table.to_csv(tmp, index=False)
            else:
                table.to_parquet(tmp, index=False, compression="zstd")
        size = path.stat().st_size
        written.append((path, size))
        rows.append((spec.name, spec.build(table), spec, size))
    load_cached.cache_clear()
    parts = [_README_HEAD, "## The bundled files\n", _bundle_table(rows), ""]
    parts.append(f"The dashboard opens `{DEFAULT_DATASET}`. Each bundled file was generated with seed {BUNDLE_SEED}.\n")
    parts += [_FULL_SIZE_WEST, _RECIPE_HEAD.format(tail=TAIL_SIZE)]
    parts += [_scaling_table(scaling_effect(full_scale=full_scale)), ""]
    if full_scale:
        parts += [
            "## Scale 1.0 against the paper\n",
            "Generated at `scale=1.0, seed=0` by the same code (also printed by "
            "`python benchmarks/datasets_scale.py`); the paper's figures in brackets.\n",
            _full_scale_table(full_scale_figures()),
            "",
        ]
    parts.append("## Data cards\n")
    parts += [card_markdown(spec.name, data_dir=folder) + "\n" for spec in DATASETS]
    from cocoviz.datasets.tenure import README_SECTION  # deferred: tenure imports the registry

    parts.append(README_SECTION)
    readme = folder / "README.md"
    write_text(readme, "\n".join(parts))
    written.append((readme, readme.stat().st_size))
    return written
