"""Fill REPRODUCTION.md with the tables the experiment runs wrote (no number is typed by hand).

Every block of REPRODUCTION.md between

    <!-- results:FOLDER -->
    ...
    <!-- /results:FOLDER -->

is replaced by ``FOLDER/table.md`` (written by ``python -m cocoviz experiment``)
and a line naming the run's parameters and runtime from ``FOLDER/config.json``.
FOLDER is relative to the repository root.

Run:  python -m cocoviz experiment all --out artifacts/reproduction      (about 15 minutes on 2 cores)
      python benchmarks/reproduction.py                                 (fills REPRODUCTION.md)
      python benchmarks/reproduction.py --check                         (exit 1 if a block is stale)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from cocoviz.core.atomic import write_text

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"(<!-- results:(?P<folder>[^ ]+) -->\n)(?P<body>.*?)(<!-- /results:(?P=folder) -->)", re.S)


def render(folder: Path) -> str:
    table = (folder / "table.md").read_text(encoding="utf-8").strip()
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    scale = "the bundled scale" if config.get("scale") is None else f"scale {config['scale']:g}"
    eps = ", ".join(f"{e:g}" for e in config["epsilons"])
    data = f" on {', '.join(config['datasets'])} at {scale}" if "datasets" in config else ""
    bound = f", K = {config['max_size']:,}" if "max_size" in config else ""
    line = (
        f"*Run: `{config['experiment']}`{data}, ε grid {eps}, {config['trials']} trials, seed {config['seed']}"
        f"{bound}, {config.get('workers') or 1} worker(s), {config['seconds']:.0f} s. "
        f"Files: `{folder.relative_to(ROOT)}/`.*"
    )
    return f"{line}\n\n{table}\n"


def fill(text: str) -> tuple[str, list[str]]:
    missing = []

    def replace(m: re.Match) -> str:
        folder = ROOT / m.group("folder")
        if not (folder / "table.md").exists():
            missing.append(m.group("folder"))
            return m.group(0)
        return m.group(1) + render(folder) + m.group(4)

    return BLOCK.sub(replace, text), missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", default=str(ROOT / "REPRODUCTION.md"))
    parser.add_argument("--check", action="store_true", help="only report whether the file is up to date")
    args = parser.parse_args()
    path = Path(args.file)
    text = path.read_text(encoding="utf-8")
    new, missing = fill(text)
    for folder in missing:
        print(f"no results in {folder}/ (run the experiment first)", file=sys.stderr)
    if args.check:
        print("up to date" if new == text else "stale")
        return 0 if new == text else 1
    write_text(path, new)  # whole or not at all: a failure never leaves REPRODUCTION.md cut
    print(f"filled {len(BLOCK.findall(new))} block(s) of {path}" + (f", {len(missing)} missing" if missing else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
