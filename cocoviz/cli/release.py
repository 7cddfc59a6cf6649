"""``python -m cocoviz release``: a persons table and its public groups table in, a secure release out.

::

    python -m cocoviz release persons.parquet --group hh --levels state,county \\
        --groups households.parquet --epsilons 1,1,1 --methods Hg,Hg,Hc --max-size 20 --out release/

``--k-select from-hg`` takes K per node from the noisy Hg of an Hg level above (no ε of its own; ``--max-size``
is then the ceiling of K̂), measured in two phases.

``--rhos`` (ρ per level) or ``--total-rho`` (with ``--split``) draw a ρ-zCDP release with discrete
Gaussian noise; ``--delta`` is the δ of its (ε, δ) reading.

Order of work, so that a refusal writes nothing and spends nothing: read the
arguments; check the output folder (no release in it) and the ledger file; load the source
into a tree; build the plan (flags or ``--plan FILE``) and check what a secure release refuses
(G from private rows, K read from the data); make the folder the files are written in (beside
``--out``, named ``.<out>.partial-<pid>``) and check its free space for the estimated files;
record the draw in the privacy ledger (the cap is checked here, before any noise); draw; write
the release, ``budget.json``, ``budget.md`` and ``accuracy.parquet`` (every node's band at
``--confidence`` and ``--band-scope``: post-processing, no ε; :mod:`cocoviz.release.files.accuracy_file`) (and,
with ``--measurements FILE``, the publishable noisy-measurement file the release was post-processed from) in
that folder; rename it to ``--out``;
mark the ledger entry complete.  ``--out`` appears whole or not at all: a failure after the ledger
entry marks it incomplete and removes the partial folder; after a kill the partial folder stays,
named by its process, and the next release into the same ``--out`` removes it (and says so) once
that process is gone; the ledger reads the killed draw as incomplete.

The ledger's dataset identity is the persons source (:func:`cocoviz.measure.identity.source_identity`:
the files' resolved paths, or the database URL and relation), so every hierarchy of the same
persons counts against one ``--budget-cap``.

With ``--seed`` the fast seeded sampler draws: the files and the output say
"exploration, not for release", and the ledger does not record it (it is not a
release).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
from pathlib import Path

from cocoviz.accuracy.intervals.widths import check_confidence
from cocoviz.core.atomic import write_text
from cocoviz.errors import ParameterError, PrivacyError
from cocoviz.plan.options import OPTIONS
from cocoviz.plan.split import SPLITS
from cocoviz.release.files.accuracy_file import save_accuracy
from cocoviz.release.files.measurements_file import save_measurements

__all__ = ["add_release", "source_spec", "load_tree", "OUTPUTS"]

#: The files a release writes in ``--out``.
OUTPUTS = ("release.parquet", "budget.json", "budget.md", "accuracy.parquet")
_FROM_DATA = ("data", "auto")


def source_spec(source: str, table: str | None, query: str | None, option: str):
    """A file path or glob as given, or :func:`cocoviz.hierarchy.ingest.sql` of a URL (``scheme://...``) with one
    table or query.

    >>> source_spec("postgresql://host/db", "persons", None, "SOURCE")
    sql('postgresql://host/db', 'persons')
    >>> source_spec("persons.parquet", None, None, "SOURCE")
    'persons.parquet'
    """
    from cocoviz.hierarchy.ingest import sql

    if "://" in source:
        if (table is None) == (query is None):
            raise ParameterError(f"{option} {source} is a database: give its --table or its --query (one of them)")
        return sql(source, table) if table is not None else sql(source, query=query)
    if table is not None or query is not None:
        raise ParameterError(f"{option} {source} is a file: --table and --query are for a database URL")
    return source


def load_tree(source, *, group: str, levels: list[str], groups=None):
    """SOURCE → tree: the persons (and the public groups table) as a :class:`~cocoviz.hierarchy.Hierarchy`,
    aggregated where the data lives (files in DuckDB, a database in itself): only the runs come back.

    ``source`` and ``groups`` are what :func:`source_spec` returns.
    """
    from cocoviz.hierarchy import Hierarchy

    return Hierarchy.from_persons(source, group=group, levels=levels, groups=groups)


# ------------------------------------------------------------------ arguments
def _numbers(text: str | None, option: str, kind=float) -> list | None:
    """Comma-separated numbers; a blank item (``1,,1``) is refused by its position, never dropped."""
    if text is None:
        return None
    items = _items(text, option)
    try:
        return [kind(x) for x in items]
    except ValueError:
        raise ParameterError(f"{option} takes comma-separated numbers, one per level, got {text!r}") from None


def _items(text: str, option: str) -> list[str]:
    items = [x.strip() for x in text.split(",")]
    blank = [k + 1 for k, x in enumerate(items) if not x]
    if blank:
        where = ", ".join(map(str, blank))
        raise ParameterError(f"{option} {text!r}: item {where} is blank; give one value per item, no empty ones")
    return items


def _words(text: str | None, option: str = "--levels") -> list[str] | None:
    return None if text is None else [] if not text.strip() else _items(text, option)


def add_release(sub: argparse._SubParsersAction) -> None:
    """Register ``release`` on the command line's subparsers."""
    parser = sub.add_parser(
        "release",
        help="draw a secure release of your persons table (and write its budget report)",
        description="Draw a release of a persons table with the exact, secure sampler, write release.parquet, "
        "budget.json and budget.md to OUT, and record the draw in the privacy ledger. Every refusal is one "
        "line and exit status 2, with nothing written or drawn.",
    )
    parser.add_argument("source", metavar="SOURCE", help="persons table: a Parquet/CSV file or glob, or a database URL")
    parser.add_argument("--table", default=None, help="SOURCE is a database URL: the persons table")
    parser.add_argument("--query", default=None, help="SOURCE is a database URL: a query giving the persons rows")
    parser.add_argument("--group", required=True, metavar="COL", help="the group (household) id column")
    parser.add_argument("--levels", required=True, help="level columns, top down, comma-separated (root excluded)")
    parser.add_argument(
        "--groups", default=None, metavar="GROUPS_SOURCE", help="the public groups table (group id and levels)"
    )
    parser.add_argument("--groups-table", default=None, help="GROUPS_SOURCE is a database URL: its table")
    parser.add_argument("--groups-query", default=None, help="GROUPS_SOURCE is a database URL: its query")
    parser.add_argument("--epsilons", default=None, help="ε per level, root first, e.g. 1,1,1")
    parser.add_argument(
        "--total-epsilon", default=None, metavar="EPS", help="a total ε shared over the levels by --split (exact)"
    )
    parser.add_argument(
        "--split", default=None, help="with --total-epsilon: equal (default), leaves (1:2:…:n) or weights, e.g. 1,1,2"
    )
    parser.add_argument(
        "--rhos", default=None, help="ρ per level, root first (ρ-zCDP, discrete Gaussian noise), e.g. 0.1,0.1,0.2"
    )
    parser.add_argument(
        "--total-rho", default=None, metavar="RHO", help="a total ρ (zCDP) shared over the levels by --split (exact)"
    )
    parser.add_argument(
        "--delta", type=float, default=None, help="with --rhos / --total-rho: the δ of the (ε, δ) reading (1e-10)"
    )
    parser.add_argument("--methods", default=None, help="method per level, root first, e.g. Hc,Hg,Hc")
    parser.add_argument("--max-size", default=None, metavar="K", help="the public bound K on group size")
    parser.add_argument(
        "--k-select",
        default=None,
        choices=OPTIONS["k_select"].choices,
        help="how K is chosen (default public: --max-size). noisy-max, noisy-max-per-node, svt: privately, with "
        "its own --k-epsilon, --max-size the ceiling. from-hg: no ε of its own: the deepest Hg level above the "
        "levels that need K is measured first and each of its nodes gives K̂ = its noisy Hg fit's largest size + "
        "a public margin (from --k-beta and that level's noise) to the nodes below; each K̂ truncates with "
        "probability P ≤ β. It needs an Hg level above the first Hc/naive/Hcp level",
    )
    parser.add_argument(
        "--k-epsilon", type=float, default=None, metavar="EPS", help="ε_K of a K chosen with its own noise"
    )
    parser.add_argument(
        "--k-beta", type=float, default=None, metavar="BETA", help="a private K̂ truncates with probability ≤ β"
    )
    for name in CHOICE_FLAGS:  # their choices, default and help: the plan's options (cocoviz.plan.options)
        option = OPTIONS[name]
        parser.add_argument(
            "--" + name.replace("_", "-"),
            default=None,
            choices=option.choices,
            help=f"{option.help} (default {option.default})",
        )
    parser.add_argument("--plan", default=None, metavar="FILE", help="the plan as a file (.toml or .json)")
    parser.add_argument(
        "--seed", type=int, default=None, help="use the fast seeded sampler: exploration, not for release"
    )
    parser.add_argument("--ledger", default=None, metavar="FILE", help="the privacy ledger (default: $COCOVIZ_LEDGER)")
    parser.add_argument("--budget-cap", type=float, default=None, metavar="EPS", help="refuse past this ε per dataset")
    parser.add_argument("--label", default=None, help="the dataset's name in the ledger (default: SOURCE)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder (created; must hold no release)")
    parser.add_argument(
        "--measurements",
        default=None,
        metavar="FILE",
        help="also write the noisy-measurement file (Parquet; publishable: noisy answers and the public plan only)",
    )
    parser.add_argument(
        "--confidence", type=float, default=0.9, help="accuracy.parquet: the bands' confidence (default 0.9)"
    )
    parser.add_argument(
        "--band-scope",
        default="node",
        choices=("node", "level"),
        help="accuracy.parquet: the confidence holds per node (default) or for all nodes of a level at once",
    )
    parser.add_argument(
        "--hg-band",
        default="runs",
        choices=("runs", "cells"),
        help="accuracy.parquet: Hg levels' band from averages over runs of equal sizes (default; keeps the noisy "
        "answers in memory until written) or cell by cell",
    )
    parser.add_argument(
        "--stated-errors",
        action="store_true",
        help="also compute and write the experimental stated error of every released group size (post-processing, "
        "no ε; slower)",
    )
    parser.set_defaults(handler=run_release)


#: The plan options given as flags by their declared choices, beside --k-select.
CHOICE_FLAGS = ("consistency", "merge", "k_beta_scope")


def _plan(args: argparse.Namespace, tree):
    from cocoviz.plan import Plan, Shape

    flags = {
        "--epsilons": args.epsilons,
        "--total-epsilon": args.total_epsilon,
        "--rhos": args.rhos,
        "--total-rho": args.total_rho,
        "--delta": args.delta,
        "--split": args.split,
        "--methods": args.methods,
        "--max-size": args.max_size,
        "--k-select": args.k_select,
        "--k-epsilon": args.k_epsilon,
        "--k-beta": args.k_beta,
        **{"--" + name.replace("_", "-"): getattr(args, name) for name in CHOICE_FLAGS},
    }
    if args.plan is not None:
        given = [f for f, v in flags.items() if v is not None]
        if given:
            raise ParameterError(f"give the plan as --plan FILE or as flags, not both ({', '.join(given)} given)")
        return Plan.load(args.plan, shape=Shape.of(tree))
    budgets = {
        "--epsilons": args.epsilons,
        "--total-epsilon": args.total_epsilon,
        "--rhos": args.rhos,
        "--total-rho": args.total_rho,
    }
    given = [f for f, v in budgets.items() if v is not None]
    if len(given) != 1 or args.methods is None:
        raise ParameterError(
            "give one budget — --epsilons or --rhos (one per level, root first), or --total-epsilon or --total-rho "
            f"(with --split) — and --methods, or --plan FILE; got {', '.join(given) or 'no budget'}"
        )
    if args.split is not None and given[0] in ("--epsilons", "--rhos"):
        raise ParameterError(f"--split shares a --total-epsilon or --total-rho over the levels: not with {given[0]}")
    if args.delta is not None and given[0] in ("--epsilons", "--total-epsilon"):
        raise ParameterError(f"--delta is the δ of a zCDP plan's (ε, δ) reading: not with {given[0]}")
    max_size = args.max_size
    if max_size is not None and max_size.strip().lower() in _FROM_DATA:
        max_size = tree.max_size  # exploration only: run_release refused it for a secure release
    elif max_size is not None:
        max_size = _numbers(max_size, "--max-size", int)
        if len(max_size) != 1:
            raise ParameterError(f"--max-size takes one whole number, got {args.max_size!r}")
        max_size = max_size[0]
    option = given[0]
    key = option.lstrip("-").replace("-", "_")
    if key.startswith("total_"):
        total = _numbers(budgets[option], option)
        if len(total) != 1:
            raise ParameterError(f"{option} takes one number, got {budgets[option]!r}")
        split = args.split if args.split is None or args.split.strip() in SPLITS else _numbers(args.split, "--split")
        budget = {key: total[0], "split": split.strip() if isinstance(split, str) else split}
    else:
        budget = {key: _numbers(budgets[option], option)}
    if args.delta is not None:
        budget["delta"] = args.delta
    k = {"k_select": args.k_select or OPTIONS["k_select"].default, "k_epsilon": args.k_epsilon, "k_beta": args.k_beta}
    chosen = {name: getattr(args, name) for name in CHOICE_FLAGS if getattr(args, name) is not None}
    return Plan.build(tree, **budget, methods=_words(args.methods, "--methods"), max_size=max_size, **k, **chosen)


def _out_files(out: str, measurements: str | None = None) -> list[Path]:
    """The files a release writes (the noisy-measurement file last, when asked), refused if any is taken.

    ``--out`` must be a new folder or an empty one: it is made whole by renaming (:func:`_stage`)."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ParameterError(f"--out {out}: exists and is not a folder")
    if not folder.absolute().parent.is_dir():
        raise ParameterError(f"--out {out}: the folder {folder.absolute().parent} does not exist")
    if folder.is_dir() and any(folder.iterdir()):
        held = ", ".join(sorted(p.name for p in folder.iterdir())[:5])
        raise ParameterError(f"--out {out} is not empty (it holds {held}): choose a new folder (nothing drawn)")
    files = [folder / name for name in OUTPUTS]
    if measurements is not None:
        path = Path(measurements)
        if not path.absolute().parent.is_dir() and path.absolute().parent != folder.absolute():
            raise ParameterError(f"--measurements {measurements}: the folder {path.absolute().parent} does not exist")
        if path.absolute() in {f.absolute() for f in files}:
            raise ParameterError(f"--measurements {measurements}: that is one of the release's own files")
        files.append(path)
    taken = [str(f) for f in files if f.exists()]
    if taken:
        raise ParameterError(f"--out {out} already holds {', '.join(taken)}: choose a new folder (nothing drawn)")
    return files


def _partial_name(folder: Path, pid: int) -> Path:
    return folder.absolute().parent / f".{folder.name}.partial-{pid}"


def _clean_partials(folder: Path) -> None:
    """Remove the partial folders a killed release into ``folder`` left (their process gone), saying so."""
    import sys

    for leftover in folder.absolute().parent.glob(f".{folder.name}.partial-*"):
        try:
            pid = int(leftover.name.rsplit("-", 1)[1])
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(leftover, ignore_errors=True)
            print(
                f"removed {leftover}: the partial files of a release that was stopped (process {pid})", file=sys.stderr
            )
        except (ValueError, OSError):
            continue


def _stage(out: Path, files: list[Path], plan, measurements: bool) -> Path:
    """Make the folder the release is written in, beside ``out`` (to be renamed to it), and check its space.

    A refusal names the folder and the reason; nothing is drawn before it."""
    stage = _partial_name(out, os.getpid())
    try:
        stage.mkdir()
    except OSError as exc:
        raise ParameterError(
            f"--out {out}: cannot write in {stage.parent}: {exc.strerror or exc} (nothing drawn)"
        ) from None
    needed = _estimated_bytes(plan, measurements)
    free = shutil.disk_usage(stage).free
    if free < needed:
        shutil.rmtree(stage, ignore_errors=True)
        raise ParameterError(
            f"--out {out}: {free:,} bytes free in {stage.parent}, the release's files need about {needed:,} "
            "(nothing drawn)"
        )
    return stage


#: Bytes per measured cell allowed for the release's files (release, accuracy), compressed Parquet: about 2 on
#: a 5-level Hg release of 9.9M persons, so 16 leaves a wide margin for less regular data.
RELEASE_BYTES_PER_CELL = 16
#: Bytes per measured cell allowed for the noisy-measurement file: its int64 values uncompressed.
MEASUREMENT_BYTES_PER_CELL = 8


def _estimated_bytes(plan, measurements: bool) -> int:
    """A generous estimate of the files' size from the plan's measured cells (public: G per node, K), with 1 MB
    for the reports; the noisy-measurement file counts only when it is asked for.

    >>> class Plan:  # 10 million cells
    ...     def cost(self):
    ...         return type("B", (), {"charges": [type("C", (), {"cells": 10_000_000})()]})()
    >>> _estimated_bytes(Plan(), False), _estimated_bytes(Plan(), True)
    (161000000, 241000000)
    """
    cells = sum(c.cells for c in plan.cost().charges)
    per_cell = RELEASE_BYTES_PER_CELL + (MEASUREMENT_BYTES_PER_CELL if measurements else 0)
    return per_cell * cells + 1_000_000


def run_release(args: argparse.Namespace) -> int:
    """The ``release`` subcommand (see the module's docstring for the order of work)."""
    from cocoviz.measure.identity import source_identity
    from cocoviz.measure.ledger import Ledger, check_cap
    from cocoviz.measure.measurements import measure
    from cocoviz.measure.recording import Recorded
    from cocoviz.pipeline.estimate import estimate
    from cocoviz.release.budget_report import EXPLORATION, budget_markdown, budget_report
    from cocoviz.release.post_process import post_process

    secure = args.seed is None
    cap = check_cap(args.budget_cap)
    check_confidence(args.confidence)  # refused before anything is read or drawn
    if secure and args.max_size is not None and args.max_size.strip().lower() in _FROM_DATA:
        raise PrivacyError(
            "a secure release needs a K from public knowledge: K read from the private data "
            f"(--max-size {args.max_size}) is exploration only (add --seed); give the public bound K"
        )
    levels = _words(args.levels)
    source = source_spec(args.source, args.table, args.query, "SOURCE")
    if args.groups is None:
        if secure:
            raise PrivacyError(
                "a secure release needs public G per region: give --groups (the public groups table, group id "
                "and levels); without it G and the region list come from the private rows"
            )
        groups = None
    else:
        groups = source_spec(args.groups, args.groups_table, args.groups_query, "--groups")
    if not secure and (args.ledger is not None or cap is not None):
        raise ParameterError(
            "--seed draws an exploration, which the ledger does not record: drop --ledger and --budget-cap"
        )
    ledger = Ledger(args.ledger) if secure else None  # a ledger that cannot be written is refused now
    out = Path(args.out)
    _clean_partials(out)
    files = _out_files(args.out, args.measurements)  # before the data is read: a taken folder costs nothing
    tree = load_tree(source, group=args.group, levels=levels, groups=groups)
    plan = _plan(args, tree)
    dataset = source_identity(source)
    files = _out_files(args.out, args.measurements)  # again: the folder may have filled while the data was read
    # writable, with room: checked before the ledger records anything
    stage = _stage(out, files, plan, args.measurements is not None)
    staged = [stage / f.name if f.absolute().parent == out.absolute() else f for f in files]
    try:
        recording = (
            ledger.draw(
                plan, label=args.label or args.source, files=[f.absolute() for f in files], cap=cap, dataset=dataset
            )
            if secure
            else contextlib.nullcontext()
        )
        with recording as entry:  # begun here (the cap checked, before any noise); complete or incomplete after
            book = Recorded(ledger, entry) if secure else False
            runs_band = args.hg_band == "runs" and "Hg" in plan.methods
            if args.measurements is None and not runs_band:
                release = estimate(
                    tree, **plan.options(), secure=secure, seed=args.seed, stated=args.stated_errors, ledger=book
                )
                measurements = None
            else:  # kept whole to be written or to bound Hg levels: the release is their post-processing
                measurements = measure(plan, tree, secure=secure, seed=args.seed, ledger=book)
                release = post_process(plan, measurements, stated=args.stated_errors)
            report = budget_report(release, secure=secure, dataset=dataset, source=args.source)
            # Each file is written whole or not at all (cocoviz.core.atomic), in the partial folder.
            release.save(staged[0])
            write_text(staged[1], json.dumps(report, ensure_ascii=False, indent=1) + "\n")
            write_text(staged[2], budget_markdown(report))
            save_accuracy(
                release,
                staged[3],
                confidence=args.confidence,
                scope=args.band_scope,
                measurements=measurements if runs_band else None,
            )
            if args.measurements is not None:
                save_measurements(measurements, staged[4])
            os.replace(stage, out)  # the folder appears whole (an empty --out is replaced) or not at all
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        if args.measurements is not None and staged[4] == files[4] and files[4].exists() and not out.exists():
            files[4].unlink(missing_ok=True)
        raise
    kind = "secure release" if secure else f"{EXPLORATION} (fast seeded sampler, seed {args.seed})"
    spent = (
        f"ρ = {release.budget.total_rho:g} (ε = {release.budget.total:.4g} at δ = {release.budget.delta:g})"
        if release.budget.accounting == "zCDP"
        else f"ε = {release.budget.total:g}"
    )
    print(f"{kind}: {spent} over {plan.shape.depth + 1} levels")
    for path in files:
        print(f"wrote {path}")
    if secure:
        print(f"recorded in the privacy ledger {ledger.path} (entry {entry})")
    else:
        print("not recorded in the privacy ledger: an exploration is not a release")
    return 0
