"""Command line: ``python -m cocoviz data ...`` and ``python -m cocoviz experiment ...``.

Each subcommand lives in its own ``_add_<name>`` function that registers its
parser and handler; ``main`` only dispatches.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _add_data(sub: argparse._SubParsersAction) -> None:
    """Register ``data`` (dataset generation); filled in by the datasets module's owner."""


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
