"""Command line: ``python -m cocoviz data ...``, ``experiment ...``, ``findings`` and ``release ...``.

Each subcommand lives in its own ``_add_<name>`` function that registers its
parser and handler (``release`` in :mod:`cocoviz.cli.release`); ``main`` only dispatches.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence

from cocoviz.cli.release import add_release
from cocoviz.errors import CocovizError, ParameterError


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (no usage block), exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


#: What ``python -m cocoviz --help`` tells a user.
USAGE = """Differentially private hierarchical count-of-counts histograms (Kuo et al.).

  python -m cocoviz data --list                     the bundled datasets, with their figures
  python -m cocoviz data housing --scale 0.01 --out housing.parquet
                                                    generate a synthetic stand-in at any scale
  python -m cocoviz experiment --list               the paper's experiments and the related ones
  python -m cocoviz experiment table3 --out results reproduce one (or: all) into a folder
  python -m cocoviz findings                        regenerate the dashboard's precomputed findings
  python -m cocoviz release persons.parquet --group hh --levels state,county --groups households.parquet \
      --epsilons 1,1,1 --methods Hg,Hg,Hc --max-size 20 --out release/
                                                    a secure release of your own data, recorded in the ledger

The dashboard: bash scripts/run.sh.  The package: import cocoviz (see README.md)."""


def _add_data(sub: argparse._SubParsersAction) -> None:
    """Register ``data``: generate a dataset, list them, show a card, or rewrite the bundle.

    ``python -m cocoviz data housing --scale 0.01 --seed 0 --out housing.parquet``
    ``python -m cocoviz data --list`` | ``data NAME --card`` | ``data --bundle [--data-dir DIR]``
    """
    from cocoviz.datasets import dataset_names

    parser = sub.add_parser(
        "data",
        help="generate the synthetic datasets or rewrite the bundled ones",
        description="Generate a dataset (per-leaf counts as Parquet) and print its groups, "
        "persons and distinct sizes next to the paper's; list the datasets; "
        "show a data card; or rewrite the bundled files in data/.",
    )
    parser.add_argument("name", nargs="?", choices=dataset_names(), help="dataset to generate")
    parser.add_argument(
        "--scale",
        type=float,
        default=None,
        help="fraction of the paper's data (1.0 = full size; default: the bundled scale)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the generator (default 0)")
    parser.add_argument("--out", default=None, help="write the table to this Parquet file")
    parser.add_argument("--list", action="store_true", help="list the datasets with their bundled figures")
    parser.add_argument("--card", action="store_true", help="print the data card of NAME (bundled default)")
    parser.add_argument(
        "--bundle", action="store_true", help="rewrite every bundled file and data/README.md (the data cards)"
    )
    parser.add_argument("--data-dir", default=None, help="folder of the bundled files (default: data/)")
    parser.add_argument(
        "--no-full-scale", action="store_true", help="with --bundle: skip the scale-1.0 figures in the README"
    )
    parser.set_defaults(handler=_run_data)


def _run_data(args: argparse.Namespace) -> int:
    import time

    from cocoviz import datasets

    if args.bundle:
        _check_writable(str(args.data_dir or datasets.DATA_DIR), "--data-dir")  # before generating anything
        for path, size in datasets.write_bundle(args.data_dir, full_scale=not args.no_full_scale):
            print(f"wrote {path} ({size:,} bytes)")
        return 0
    if args.list:
        for name in datasets.dataset_names():
            spec = datasets.dataset(name)
            tree = datasets.load_dataset(name, data_dir=args.data_dir)
            print(f"{name:14s} {spec.title}: {datasets.summary_line(tree)}")
        return 0
    if args.name is None:
        raise ParameterError(
            "name a dataset (one of " + ", ".join(datasets.dataset_names()) + "), or use --list or --bundle"
        )
    if args.out:
        _check_out_folder(args.out, "--out")
    if args.card:
        print(datasets.card_markdown(args.name, data_dir=args.data_dir))
        return 0
    spec = datasets.dataset(args.name)
    start = time.perf_counter()
    table = datasets.generate(args.name, scale=args.scale, seed=args.seed)
    tree = spec.build(table)
    seconds = time.perf_counter() - start
    scale = spec.bundle_scale if args.scale is None else args.scale
    print(
        f"{args.name}: scale {scale if scale is not None else '-'}, seed {args.seed}, "
        f"levels {' / '.join([spec.root, *spec.levels])}, "
        f"nodes per level {' / '.join(f'{n:,}' for n in tree.summary()['nodes_per_level'])} "
        f"({seconds:.1f} s)"
    )
    print(datasets.summary_line(tree, spec.paper if spec.regions is None else None, scale))
    if args.out:
        from cocoviz.core.atomic import atomic_path

        with atomic_path(args.out) as tmp:  # a failed write leaves no truncated file, and any previous one
            table.to_parquet(tmp, index=False, compression="zstd")
        print(f"wrote {args.out} ({len(table):,} rows)")
    return 0


def _add_experiment(sub: argparse._SubParsersAction) -> None:
    """Register ``experiment``: run one or more of the paper's experiments and write their files.

    ``python -m cocoviz experiment table3 [--out results] [--scale S] [--trials 10] [--workers 2]``
    ``python -m cocoviz experiment all`` | ``experiment --list``

    Each experiment writes ``<out>/<name>/``: ``trials.csv`` (one row per trial,
    level and node), ``summary.csv`` (mean and standard error per level),
    ``table.md``, ``figures.html``, ``config.json`` and PNGs when kaleido works.
    """
    import time

    from cocoviz.experiments import EXPERIMENTS, PAPER_DATASETS, default_workers

    names = list(EXPERIMENTS)
    parser = sub.add_parser(
        "experiment",
        help="reproduce the paper's experiments and the related papers' (tables, figures, CSV)",
        description="Run the paper's experiments on the synthetic stand-ins and write CSV, a markdown table "
        "and plotly figures (HTML, and PNG when kaleido works) to OUT/NAME/. Experiments: "
        + "; ".join(f"{e.name}: {e.title}" for e in EXPERIMENTS.values())
        + ".",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"experiment(s) to run: {', '.join(names)} or all")
    parser.add_argument("--list", action="store_true", help="list the experiments and the paper's findings")
    parser.add_argument("--out", default="results", help="output folder (default: results)")
    parser.add_argument(
        "--scale",
        type=float,
        default=None,
        help="dataset scale, a fraction of the paper's data (default: each dataset's bundled scale)",
    )
    parser.add_argument("--trials", type=int, default=10, help="independent trials (default 10, as the paper)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the noise (default 0)")
    parser.add_argument(
        "--data-seed", type=int, default=0, help="seed of the synthetic data (default 0: the bundled files)"
    )
    parser.add_argument(
        "--workers", type=int, default=default_workers(), help=f"processes (default {default_workers()}; 1 runs inline)"
    )
    parser.add_argument(
        "--datasets", default=None, help=f"comma-separated subset of {','.join(PAPER_DATASETS)} (default: the paper's)"
    )
    parser.add_argument(
        "--epsilons",
        default=None,
        help="comma-separated ε grid (per level; the total for table4) instead of the default",
    )
    parser.add_argument("--max-size", type=int, default=None, help="public bound K (default 100,000)")
    parser.add_argument(
        "--whole-country",
        action="store_true",
        help="figure6/table4 on national / state / county instead of the West Coast cut (slow)",
    )
    parser.add_argument("--no-png", action="store_true", help="write HTML figures only")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def progress_bar(label: str):
        start = time.perf_counter()
        interactive = sys.stderr.isatty()
        last = [-1.0]

        def show(done: int, total: int) -> None:
            now = time.perf_counter() - start
            # On a terminal redraw in place; in a log print a line every ~10% and at the end.
            if not interactive and done not in (0, total) and done < total * (last[0] + 0.1):
                return
            last[0] = done / total if total else 1.0
            width = 30
            filled = int(width * done / total) if total else width
            eta = f", {now / done * (total - done):.0f} s left" if 0 < done < total else ""
            line = f"{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} releases, {now:.0f} s{eta}"
            print(
                ("\r" + line) if interactive else line,
                end="" if interactive and done < total else "\n",
                file=sys.stderr,
                flush=True,
            )

        return show

    def run(args: argparse.Namespace) -> int:
        from cocoviz.experiments import run_experiment

        if args.list:
            for e in EXPERIMENTS.values():
                print(
                    f"{e.name:8s} {e.title}\n         paper: {e.finding}\n         default datasets: "
                    f"{', '.join(e.datasets)}; ε grid: {', '.join(f'{x:g}' for x in e.epsilons)}"
                )
            return 0
        chosen = names if args.names == ["all"] else args.names
        if not chosen:
            raise ParameterError(f"name an experiment ({', '.join(names)} or all), or use --list")
        unknown = [n for n in chosen if n not in EXPERIMENTS]
        if unknown:
            raise ParameterError(f"unknown experiment(s) {unknown}; choose from {', '.join(names)} or all")
        _check_writable(args.out, "--out")  # an unwritable --out fails now, not after the runs
        datasets = [d.strip() for d in args.datasets.split(",") if d.strip()] if args.datasets else None
        try:
            epsilons = [float(x) for x in args.epsilons.split(",") if x.strip()] if args.epsilons else None
        except ValueError:
            raise ParameterError(f"--epsilons must be comma-separated numbers, got {args.epsilons!r}") from None
        for name in chosen:
            journal = os.path.join(args.out, f".{name}.journal")
            if os.path.isdir(journal):
                print(f"{name}: a stopped run left {journal}; its releases of this sweep are reused", file=sys.stderr)
            result = run_experiment(
                name,
                out=args.out,
                scale=args.scale,
                trials=args.trials,
                seed=args.seed,
                data_seed=args.data_seed,
                whole_country=args.whole_country,
                workers=args.workers,
                datasets=datasets,
                epsilons=epsilons,
                max_size=args.max_size,
                png=False if args.no_png else None,
                progress=None if args.quiet else progress_bar(name),
            )
            folder = os.path.join(args.out, name)
            written = sorted(os.listdir(folder))
            print(f"{name}: {result.seconds:.0f} s, wrote {folder}/ ({', '.join(written)})")
            if not args.no_png and result.figures and not any(w.endswith(".png") for w in written):
                print(
                    f"{name}: no PNG written (kaleido needs an installed Chrome or Chromium); "
                    "the figures are in figures.html",
                    file=sys.stderr,
                )
        return 0

    parser.set_defaults(handler=run)


def _add_findings(sub: argparse._SubParsersAction) -> None:
    """Register ``findings``: rerun the comparison pages' default sweeps into data/findings/.

    ``python -m cocoviz findings [merging methods] [--trials 10] [--seed 0] [--dataset housing-west] [--out DIR]``
    """
    from cocoviz.experiments.findings import COMPARISONS, DEFAULT_TRIALS, FINDINGS_DIR

    parser = sub.add_parser(
        "findings",
        help="regenerate the results the dashboard's comparison pages show on opening",
        description="Run each comparison page's default sweep ("
        + "; ".join(f"{c.name}: {c.title}" for c in COMPARISONS.values())
        + ") on a bundled dataset and write its summary (NAME.parquet) and how it was made (NAME.json: "
        "date, parameters, trials, seed, dataset, versions) to OUT.",
    )
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"comparison(s): {', '.join(COMPARISONS)} (default: all)"
    )
    parser.add_argument("--out", default=str(FINDINGS_DIR), help="output folder (default: the bundled data/findings)")
    parser.add_argument("--dataset", default=None, help="bundled dataset (default: the dashboard's default)")
    parser.add_argument(
        "--trials", type=int, default=DEFAULT_TRIALS, help=f"trials per point (default {DEFAULT_TRIALS})"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the noise (default 0)")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.set_defaults(handler=_run_findings)


def _run_findings(args: argparse.Namespace) -> int:
    from cocoviz.datasets import DEFAULT_DATASET, dataset_names
    from cocoviz.experiments.findings import COMPARISONS, compute_finding, write_finding

    chosen = args.names or list(COMPARISONS)
    unknown = [n for n in chosen if n not in COMPARISONS]
    if unknown:
        raise ParameterError(f"unknown comparison(s) {unknown}; choose from {', '.join(COMPARISONS)}")
    dataset = args.dataset or DEFAULT_DATASET
    if dataset not in dataset_names():
        raise ParameterError(f"unknown dataset {dataset!r}; choose from {', '.join(dataset_names())}")
    _check_writable(args.out, "--out")
    for name in chosen:

        def show(done: int, total: int, name=name) -> None:
            if not args.quiet and (done == total or done % max(1, total // 10) == 0):
                print(f"{name}: {done}/{total} releases", file=sys.stderr, flush=True)

        journal = os.path.join(args.out, f".{name}.journal")  # a killed run resumes from it
        finding = compute_finding(
            name, dataset=dataset, trials=args.trials, seed=args.seed, progress=show, journal=journal
        )
        paths = write_finding(finding, args.out)
        shutil.rmtree(journal, ignore_errors=True)
        print(
            f"{name}: {finding.meta['releases']} releases in {finding.meta['seconds']:.0f} s, wrote "
            + ", ".join(str(p) for p in paths)
        )
    return 0


def _check_out_folder(path: str, option: str) -> None:
    """Refuse an output file whose folder does not exist, before any work is done."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ParameterError(f"{option} {path}: the folder {folder} does not exist")
    if os.path.isdir(path):
        raise ParameterError(f"{option} {path} is a folder; name the file to write")
    _check_writable(folder, f"{option} {path}: the folder")


def _check_writable(folder: str, option: str) -> None:
    """Create ``folder`` if needed and refuse it, before any work, unless files can be created in it."""
    from cocoviz.core.atomic import check_writable_folder

    check_writable_folder(folder, option)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; a user error (bad option, unreadable or unwritable file) is one line on stderr
    and exit status 2, never a traceback."""
    parser = _Parser(prog="python -m cocoviz", description=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    _add_data(sub)
    _add_experiment(sub)
    _add_findings(sub)
    add_release(sub)
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except CocovizError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
    except OSError as exc:
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"error: {_one_line(exc.strerror or str(exc))}{where}", file=sys.stderr)
    except Exception as exc:
        # A corrupt Parquet file surfaces from pyarrow as its own error type: an unreadable input, not a bug.
        if not _is_unreadable_file(exc):
            raise
        print(f"error: unreadable file: {_one_line(str(exc))}", file=sys.stderr)
    return 2


def _is_unreadable_file(exc: BaseException) -> bool:
    pyarrow = sys.modules.get("pyarrow")
    return pyarrow is not None and isinstance(exc, pyarrow.ArrowException)


def _one_line(message: str) -> str:
    return " ".join(message.split()) or "failed"
