"""A plan as a file: TOML or JSON by the file's extension, read back field by field with checks.

:meth:`cocoviz.Plan.save` writes :meth:`~cocoviz.Plan.to_dict` here and
:meth:`cocoviz.Plan.load` reads it; this module knows files and dictionaries only,
never a :class:`~cocoviz.Plan` (no import cycle).  TOML has no null: a level
whose method has no isotonic loss (naive) writes ``p = 0``, and a public K
omits ``k_epsilon``; :func:`read_plan_file` turns both back.  TOML is read with
the standard library's :mod:`tomllib` and written by the small writer below
(a plan holds strings, numbers, booleans, arrays and tables only).

A hand-written plan may leave out ``shape`` (the hierarchy's public levels,
nodes and G): it is then a plan for whatever hierarchy it is loaded against.  It may
give a ``total_epsilon`` (or ``total_rho``) with a ``split`` instead of ε (ρ) per
level (:mod:`cocoviz.plan.split`); a saved plan holds the exact per-level values.

>>> text = toml_text({"epsilons": [1.0, 0.5], "methods": ["Hc", "naive"], "p": [1, None], "k_epsilon": None})
>>> print(text)
epsilons = [1.0, 0.5]
methods = ["Hc", "naive"]
p = [1, 0]
<BLANKLINE>
>>> import tomllib; from_toml(tomllib.loads(text))
{'epsilons': [1.0, 0.5], 'methods': ['Hc', 'naive'], 'p': [1, None]}
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import tomllib
from pathlib import Path

from cocoviz.core.atomic import write_text
from cocoviz.errors import InputError

__all__ = [
    "PLAN_FORMAT",
    "PLAN_FIELDS",
    "MAX_NESTING",
    "write_plan_file",
    "read_plan_file",
    "toml_text",
    "from_toml",
    "nesting",
]

#: The format tag a saved plan carries.
PLAN_FORMAT = "cocoviz-plan/1"
#: The fields of a plan file, with what each must hold (as an error message says it).
PLAN_FIELDS = {
    "format": "the text " + repr(PLAN_FORMAT),
    "shape": "a table with levels, paths, parents, groups and public_groups",
    "epsilons": "a list of numbers, one ε per level",
    "rhos": "a list of numbers, one ρ per level (a zCDP plan)",
    "delta": "a number δ at which a zCDP plan's cost is read as (ε, δ)",
    "total_epsilon": "a number: the total ε, shared over the levels by split (instead of epsilons)",
    "total_rho": "a number: the total ρ of a zCDP plan, shared over the levels by split (instead of rhos)",
    "split": "'equal', 'leaves' or a list of weights, one per level (with total_epsilon or total_rho)",
    "k_beta_scope": "'node' or 'release'",
    "methods": "a list of method names, one per level",
    "p": "a list with one isotonic loss (1 or 2; 0 or null where the method has none) per level",
    "max_size": "a whole number K",
    "consistency": "a text",
    "merge": "a text",
    "k_select": "a text",
    "k_epsilon": "a number (with a private k_select)",
    "k_beta": "a number",
    "prior": "a table with a kind",
}
_SUFFIXES = {".toml": "toml", ".json": "json"}
#: How deep arrays and tables may nest in a plan file (a saved plan's shape needs 4).
MAX_NESTING = 32
#: The budget fields of a plan: one of them (a saved zCDP plan also carries the ε its ρ stand for).
BUDGETS = ("epsilons", "rhos", "total_epsilon", "total_rho")


def nesting(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in ``text`` outside double-quoted strings.

    >>> nesting('{"a": [[1], "[[["]}')
    3
    """
    depth = deepest = 0
    quoted = escaped = False
    for c in text:
        if quoted:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _kind(path: str | os.PathLike) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        raise InputError(f"a plan file ends in .toml or .json, got {os.fspath(path)!r}")
    return _SUFFIXES[suffix]


# ------------------------------------------------------------------ TOML
def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)


def _string(text: str) -> str:
    # JSON's escapes are TOML's, except that TOML also forbids a raw DEL.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value, indent: str = "", inline: bool = False) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, dict):
        # An inline table is one line (TOML 1.0): so are the arrays inside it.
        return "{" + ", ".join(f"{_key(k)} = {_value(v, inline=True)}" for k, v in value.items() if v is not None) + "}"
    if isinstance(value, (list, tuple)):
        if any(v is None for v in value):
            raise ValueError("TOML has no null inside an array")
        if value and not inline and all(isinstance(v, (list, tuple)) for v in value):
            # One inner array a line: a shape's levels stay readable.
            inner = indent + "  "
            return "[\n" + "".join(f"{inner}{_value(v, inner)},\n" for v in value) + indent + "]"
        return "[" + ", ".join(_value(v, indent, inline) for v in value) + "]"
    raise ValueError(f"cannot write a {type(value).__name__} in TOML")


def _table(data: dict) -> list[str]:
    return [f"{_key(k)} = {_value(v)}" for k, v in data.items() if v is not None and not isinstance(v, dict)]


def toml_text(data: dict) -> str:
    """A plan's dictionary as TOML: top-level values first, then one ``[table]`` per nested dictionary.

    ``None`` is left out of a table and written ``0`` in the ``p`` array (see the module's note).
    """
    data = dict(data)
    if "p" in data:
        data["p"] = [0 if q is None else q for q in data["p"]]
    lines = _table(data) + [""]
    for name, table in data.items():
        if isinstance(table, dict):
            lines += [f"[{_key(name)}]", *_table(table), ""]
            for sub, inner in table.items():
                if isinstance(inner, dict):
                    lines += [f"[{_key(name)}.{_key(sub)}]", *_table(inner), ""]
    return "\n".join(lines)


def from_toml(data: dict) -> dict:
    """The plan dictionary of a TOML document: ``p = 0`` back to None (the method has no loss)."""
    data = dict(data)
    if isinstance(data.get("p"), list):
        data["p"] = [None if q == 0 and not isinstance(q, bool) else q for q in data["p"]]
    return data


# ------------------------------------------------------------------ files
def write_plan_file(path: str | os.PathLike, data: dict) -> None:
    """Write a plan's dictionary (``Plan.to_dict()``) to ``path``, TOML or JSON by its extension."""
    kind = _kind(path)
    data = {"format": PLAN_FORMAT, **data}
    if kind == "json":
        text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    else:
        text = "# A cocoviz plan: public parameters only (python -m cocoviz release --plan FILE).\n" + toml_text(data)
    write_text(path, text)  # whole or not at all: a failed write keeps the previous plan file


def read_plan_file(path: str | os.PathLike) -> dict:
    """A plan file's fields, each of the type it must have; an :class:`InputError` names a bad one.

    What the values mean (ε > 0, a known method, a tree-shaped ``shape``) is checked by the plan
    built from them.
    """
    kind, name = _kind(path), os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the plan file {name!r}: {getattr(exc, 'strerror', None) or exc}") from None
    deepest = nesting(text)
    if deepest > MAX_NESTING:
        raise InputError(
            f"the plan file {name!r} nests arrays or tables {deepest} deep; a plan nests at most {MAX_NESTING}"
        )
    try:
        data = from_toml(tomllib.loads(text)) if kind == "toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        raise InputError(f"the plan file {name!r} is not valid {kind.upper()}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"the plan file {name!r} must hold a table of fields, got a {type(data).__name__}")
    unknown = sorted(set(data) - set(PLAN_FIELDS))
    if unknown:
        raise InputError(f"the plan file {name!r} has unknown field(s) {unknown}; a plan has {list(PLAN_FIELDS)}")
    if not {"epsilons", "rhos", "total_epsilon", "total_rho"} & set(data):
        raise InputError(
            f"the plan file {name!r} has neither 'epsilons' ({PLAN_FIELDS['epsilons']}) nor 'rhos', "
            "'total_epsilon' or 'total_rho'"
        )
    budgets = [b for b in BUDGETS if b in data]
    saved_zcdp = set(budgets) == {"epsilons", "rhos"} and "shape" in data and "format" in data
    if len(budgets) > 1 and not saved_zcdp:
        raise InputError(
            f"the plan file {name!r} gives two budgets ({', '.join(budgets)}): give one of {', '.join(BUDGETS)}"
        )
    if "split" in data and not {"total_epsilon", "total_rho"} & set(data):
        raise InputError(f"the plan file {name!r}: 'split' shares a total_epsilon or total_rho, and there is none")
    if "methods" not in data:
        raise InputError(f"the plan file {name!r} has no field 'methods' ({PLAN_FIELDS['methods']})")
    checks = {
        "format": lambda v: v == PLAN_FORMAT,
        "shape": lambda v: isinstance(v, dict),
        "epsilons": lambda v: isinstance(v, list) and all(_is_number(e) for e in v),
        "rhos": lambda v: isinstance(v, list) and all(_is_number(e) for e in v),
        "delta": _is_number,
        "methods": lambda v: isinstance(v, list) and all(isinstance(m, str) for m in v),
        "p": lambda v: isinstance(v, list) and all(q is None or _is_int(q) for q in v),
        "max_size": _is_int,
        "consistency": lambda v: isinstance(v, str),
        "merge": lambda v: isinstance(v, str),
        "k_select": lambda v: isinstance(v, str),
        "k_epsilon": lambda v: v is None or _is_number(v),
        "k_beta": _is_number,
        "k_beta_scope": lambda v: isinstance(v, str),
        "total_epsilon": _is_number,
        "total_rho": _is_number,
        "split": lambda v: isinstance(v, str) or (isinstance(v, list) and all(_is_number(w) for w in v)),
        "prior": lambda v: v is None or (isinstance(v, dict) and isinstance(v.get("kind"), str)),
    }
    for field, value in data.items():
        if not checks[field](value):
            raise InputError(
                f"the plan file {name!r}: field {field!r} must be {PLAN_FIELDS[field]}, got {_short(value)}"
            )
    data.pop("format", None)
    return data


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
