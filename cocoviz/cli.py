"""Command line: ``python -m cocoviz data ...`` and ``python -m cocoviz experiment ...``.

Each subcommand lives in its own ``_add_<name>`` function that registers its
parser and handler; ``main`` only dispatches.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _add_data(sub: argparse._SubParsersAction) -> None:
    """Register ``data``: generate a dataset, list them, show a card, or rewrite the bundle.

    ``python -m cocoviz data housing --scale 0.01 --seed 0 --out housing.parquet``
    ``python -m cocoviz data --list`` | ``data NAME --card`` | ``data --bundle [--data-dir DIR]``
    """
    from cocoviz.datasets import dataset_names

    parser = sub.add_parser("data", help="generate the synthetic datasets or rewrite the bundled ones",
                            description="Generate a dataset (per-leaf counts as Parquet) and print its groups, "
                                        "persons and distinct sizes next to the paper's; list the datasets; "
                                        "show a data card; or rewrite the bundled files in data/.")
    parser.add_argument("name", nargs="?", choices=dataset_names(), help="dataset to generate")
    parser.add_argument("--scale", type=float, default=None,
                        help="fraction of the paper's data (1.0 = full size; default: the bundled scale)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generator (default 0)")
    parser.add_argument("--out", default=None, help="write the table to this Parquet file")
    parser.add_argument("--list", action="store_true", help="list the datasets with their bundled figures")
    parser.add_argument("--card", action="store_true", help="print the data card of NAME (bundled default)")
    parser.add_argument("--bundle", action="store_true",
                        help="rewrite every bundled file and data/README.md (the data cards)")
    parser.add_argument("--data-dir", default=None, help="folder of the bundled files (default: data/)")
    parser.add_argument("--no-full-scale", action="store_true",
                        help="with --bundle: skip the scale-1.0 figures in the README")
    parser.set_defaults(handler=_run_data)


def _run_data(args: argparse.Namespace) -> int:
    import time

    from cocoviz import datasets

    if args.bundle:
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
        raise ValueError("name a dataset (one of " + ", ".join(datasets.dataset_names())
                         + "), or use --list or --bundle")
    if args.card:
        print(datasets.card_markdown(args.name, data_dir=args.data_dir))
        return 0
    spec = datasets.dataset(args.name)
    start = time.perf_counter()
    table = datasets.generate(args.name, scale=args.scale, seed=args.seed)
    tree = spec.build(table)
    seconds = time.perf_counter() - start
    scale = spec.bundle_scale if args.scale is None else args.scale
    print(f"{args.name}: scale {scale if scale is not None else '-'}, seed {args.seed}, "
          f"levels {' / '.join([spec.root, *spec.levels])}, "
          f"nodes per level {' / '.join(f'{n:,}' for n in tree.summary()['nodes_per_level'])} "
          f"({seconds:.1f} s)")
    print(datasets.summary_line(tree, spec.paper if spec.regions is None else None, scale))
    if args.out:
        table.to_parquet(args.out, index=False, compression="zstd")
        print(f"wrote {args.out} ({len(table):,} rows)")
    return 0


def _add_experiment(sub: argparse._SubParsersAction) -> None:
    """Register ``experiment`` (paper reproduction); filled in by the experiments module's owner."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cocoviz", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    _add_data(sub)
    _add_experiment(sub)
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
