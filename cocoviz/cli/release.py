"""``python -m cocoviz release``: a persons table and its public groups table in, a secure release out.

::

    python -m cocoviz release persons.parquet --group hh --levels state,county \\
        --groups households.parquet --epsilons 1,1,1 --methods Hg,Hg,Hc --max-size 20 --out release/

``--k-select from-hg`` takes K per node from the noisy Hg of an Hg level above (no ε of its own; ``--max-size``
is then the ceiling of K̂), measured in two phases.

Order of work, so that a refusal writes nothing and spends nothing: read the
arguments; load the source into a tree; build the plan (flags or ``--plan FILE``)
and check what a secure release refuses (G from private rows, K read from the
data); check the output folder; record the draw in the privacy ledger (the cap is
checked here, before any noise); draw; write the release, ``budget.json`` and
``budget.md`` (and, with ``--measurements FILE``, the publishable noisy-measurement file the
release was post-processed from); mark the ledger entry complete.  A failure after the ledger entry
marks it incomplete and removes the files of this run.

With ``--seed`` the fast seeded sampler draws: the files and the output say
"exploration, not for release", and the ledger does not record it (it is not a
release).
"""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path

from cocoviz.core.atomic import write_text
from cocoviz.errors import ParameterError, PrivacyError
from cocoviz.plan.options import OPTIONS
from cocoviz.plan.split import SPLITS
from cocoviz.release.files.measurements_file import save_measurements

__all__ = ["add_release", "source_spec", "load_tree", "OUTPUTS"]

#: The files a release writes in ``--out``.
OUTPUTS = ("release.parquet", "budget.json", "budget.md")
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
        return sql(source, table if table is not None else query)
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
    if text is None:
        return None
    try:
        return [kind(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(f"{option} takes comma-separated numbers, one per level, got {text!r}") from None


def _words(text: str | None) -> list[str] | None:
    return None if text is None else [w.strip() for w in text.split(",") if w.strip()]


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
    if (args.epsilons is None and args.total_epsilon is None) or args.methods is None:
        raise ParameterError(
            "give --epsilons and --methods (one per level, root first; or --total-epsilon), or --plan FILE"
        )
    if args.epsilons is not None and (args.total_epsilon is not None or args.split is not None):
        raise ParameterError("give --epsilons or --total-epsilon (with --split), not both")
    max_size = args.max_size
    if max_size is not None and max_size.strip().lower() in _FROM_DATA:
        max_size = tree.max_size  # exploration only: run_release refused it for a secure release
    elif max_size is not None:
        max_size = _numbers(max_size, "--max-size", int)
        if len(max_size) != 1:
            raise ParameterError(f"--max-size takes one whole number, got {args.max_size!r}")
        max_size = max_size[0]
    if args.total_epsilon is not None:
        total = _numbers(args.total_epsilon, "--total-epsilon")
        if len(total) != 1:
            raise ParameterError(f"--total-epsilon takes one number, got {args.total_epsilon!r}")
        split = args.split if args.split is None or args.split.strip() in SPLITS else _numbers(args.split, "--split")
        budget = {"total_epsilon": total[0], "split": split.strip() if isinstance(split, str) else split}
    else:
        budget = {"epsilons": _numbers(args.epsilons, "--epsilons")}
    k = {"k_select": args.k_select or OPTIONS["k_select"].default, "k_epsilon": args.k_epsilon, "k_beta": args.k_beta}
    chosen = {name: getattr(args, name) for name in CHOICE_FLAGS if getattr(args, name) is not None}
    return Plan.build(tree, **budget, methods=_words(args.methods), max_size=max_size, **k, **chosen)


def _out_files(out: str, measurements: str | None = None) -> list[Path]:
    """The files a release writes (the noisy-measurement file last, when asked), refused if any is taken."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ParameterError(f"--out {out}: exists and is not a folder")
    if not folder.absolute().parent.is_dir():
        raise ParameterError(f"--out {out}: the folder {folder.absolute().parent} does not exist")
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


def run_release(args: argparse.Namespace) -> int:
    """The ``release`` subcommand (see the module's docstring for the order of work)."""
    from cocoviz.measure.measurements import measure
    from cocoviz.pipeline.estimate import estimate
    from cocoviz.release.budget_report import EXPLORATION, budget_markdown, budget_report
    from cocoviz.release.ledger import Ledger, check_cap, dataset_identity
    from cocoviz.release.post_process import post_process

    secure = args.seed is None
    cap = check_cap(args.budget_cap)
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
    ledger = Ledger(args.ledger) if secure else None
    files = _out_files(args.out, args.measurements)  # before the data is read: a taken folder costs nothing
    tree = load_tree(source, group=args.group, levels=levels, groups=groups)
    plan = _plan(args, tree)
    dataset = dataset_identity(plan.shape)
    files = _out_files(args.out, args.measurements)  # again: the folder may have filled while the data was read
    recording = (
        ledger.draw(plan, label=args.label or args.source, files=[f.absolute() for f in files], cap=cap)
        if secure
        else contextlib.nullcontext()
    )
    created = not files[0].parent.exists()
    written: list[Path] = []
    with recording as entry:  # begun here (the cap checked, before any noise); complete or incomplete after
        try:
            if args.measurements is None:
                release = estimate(tree, **plan.options(), secure=secure, seed=args.seed, stated=args.stated_errors)
            else:  # kept whole to be written: the release is their post-processing
                measurements = measure(plan, tree, secure=secure, seed=args.seed)
                release = post_process(plan, measurements, stated=args.stated_errors)
            report = budget_report(release, secure=secure, dataset=dataset, source=args.source)
            files[0].parent.mkdir(exist_ok=True)
            # Each file is written whole or not at all (cocoviz.core.atomic); on failure this run's files go.
            written.append(files[0])
            release.save(files[0])
            written.append(files[1])
            write_text(files[1], json.dumps(report, ensure_ascii=False, indent=1) + "\n")
            written.append(files[2])
            write_text(files[2], budget_markdown(report))
            if args.measurements is not None:
                written.append(files[3])
                save_measurements(measurements, files[3])
        except BaseException:
            for path in written:
                path.unlink(missing_ok=True)
            if created and files[0].parent.is_dir() and not any(files[0].parent.iterdir()):
                files[0].parent.rmdir()
            raise
    kind = "secure release" if secure else f"{EXPLORATION} (fast seeded sampler, seed {args.seed})"
    print(f"{kind}: ε = {release.budget.total:g} over {plan.shape.depth + 1} levels")
    for path in files:
        print(f"wrote {path}")
    if secure:
        print(f"recorded in the privacy ledger {ledger.path} (entry {entry})")
    else:
        print("not recorded in the privacy ledger: an exploration is not a release")
    return 0
