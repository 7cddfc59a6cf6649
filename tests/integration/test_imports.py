"""The package's import graph: no cycles, and the data's way plan → measure → post-process → release never goes back.

The graph is read from the source (every ``import`` and ``from ... import``, those inside functions too), so a
deferred import that would close a cycle at run time is caught here.
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "cocoviz"

#: The pipeline's stages in the order the data goes through them; the runners, which call every stage, last.
#: ``post_process`` makes a :class:`~cocoviz.release.release.Release`, so the release is in its stage (and never
#: imports it: :func:`test_the_release_never_imports_post_processing`).
STAGES = [
    ("plan", ["cocoviz.plan", "cocoviz.plan.plan", "cocoviz.methods.registry", "cocoviz.plan.files"]),
    ("measure", ["cocoviz.measure.measurements"]),
    ("post-process and release", ["cocoviz.release.post_process", "cocoviz.release.release"]),
    ("level step", ["cocoviz.pipeline.level_step"]),
    ("dask", ["cocoviz.pipeline.distributed"]),
    ("one call", ["cocoviz.pipeline.estimate"]),
]


@functools.cache
def modules(package: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


@functools.cache
def parsed() -> dict[str, ast.AST]:
    """Every module's syntax tree, parsed once per test process (read-only: the tests never change them)."""
    return {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules().items()}


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """``{module: the cocoviz modules it imports}``; ``from cocoviz.x import name`` counts as ``cocoviz.x``
    (or ``cocoviz.x.name`` when that is a module)."""
    mods = modules()

    def owner(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(parsed()[name]):
            if isinstance(node, ast.Import):
                deps |= {owner(a.name) for a in node.names if a.name.split(".")[0] == "cocoviz"}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                if base.split(".")[0] != "cocoviz":
                    continue
                deps |= {f"{base}.{a.name}" if f"{base}.{a.name}" in mods else owner(base) for a in node.names}
        graph[name] = frozenset(deps - {name, None})
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for dep in graph.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def test_the_graph_is_read_from_every_module():
    graph = import_graph()
    assert {"cocoviz", "cocoviz.measure.measurements", "cocoviz.pipeline.estimate", "cocoviz.plan.plan"} <= set(graph)
    assert "cocoviz.measure.measurements" in graph["cocoviz.release.post_process"]
    # A deferred import counts: pipeline imports distributed inside estimate().
    assert "cocoviz.pipeline.distributed" in graph["cocoviz.pipeline.estimate"]


def test_no_import_cycles():
    graph = import_graph()
    cycles = sorted(m for m in graph if m in reachable(graph, m))
    assert not cycles, f"modules on an import cycle: {cycles}"


@pytest.mark.parametrize("stage", range(len(STAGES)), ids=[name for name, _ in STAGES])
def test_no_stage_imports_a_later_one(stage):
    """Nothing a stage imports, directly or not, belongs to a stage after it."""
    graph = import_graph()
    later = {m: name for name, mods in STAGES[stage + 1 :] for m in mods}
    for module in STAGES[stage][1]:
        assert module in graph, f"{module} is gone: update STAGES"
        back = sorted(f"{m} ({later[m]})" for m in reachable(graph, module) if m in later)
        assert not back, f"{module} ({STAGES[stage][0]}) imports a later stage: {back}"


def test_the_release_never_imports_post_processing():
    assert "cocoviz.release.post_process" not in reachable(import_graph(), "cocoviz.release.release")


ROOT = PACKAGE.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    command = [str(LINT_IMPORTS)] if LINT_IMPORTS.exists() else [sys.executable, "-m", "importlinter.cli"]
    return subprocess.run(
        [*command, "--no-cache", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_layer_contracts_hold():
    """``[tool.importlinter]`` in pyproject.toml: every stage imports only the stages below it."""
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def probe_package(tmp_path: Path, modules: dict[str, str]) -> Path:
    """A package ``probe`` under ``tmp_path`` with the given modules (name -> source) and an empty ``__init__``."""
    package = tmp_path / "probe"
    package.mkdir()
    for name, source in {"__init__": "", **modules}.items():
        (package / f"{name}.py").write_text(source)
    return package


def test_lint_imports_counts_a_function_local_import(tmp_path):
    """A deferred import inside a function breaks a layer contract as a top-level one would."""
    probe_package(
        tmp_path, {"high": "VALUE = 1\n", "low": "def late():\n    from probe.high import VALUE\n\n    return VALUE\n"}
    )
    (tmp_path / "setup.cfg").write_text(
        "[importlinter]\nroot_package = probe\n\n"
        "[importlinter:contract:layers]\nname = probe layers\ntype = layers\nlayers =\n    probe.high\n    probe.low\n"
    )
    done = lint_imports(tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode != 0, done.stdout + done.stderr
    assert "probe.low -> probe.high" in done.stdout


def private_imports(package: Path = PACKAGE) -> list[tuple[str, str, str]]:
    """``(module, owner, name)`` for every use of another module's ``_private`` name in ``package``: imported
    (``from cocoviz.x import _name``) or read through an imported module (``x._name`` after ``from cocoviz import x``
    or ``import cocoviz.x as x``).  A private *module* (a compiled kernel, ``_kernels``) is not a private name."""
    mods, found = modules(package), []
    root = package.name

    def is_module(name: str) -> bool:
        return name in mods

    for name, path in mods.items():
        tree = parsed()[name] if package == PACKAGE else ast.parse(path.read_text(encoding="utf-8"))
        bound: dict[str, str] = {}  # local name -> the module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == root:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if is_module(full):
                        bound[alias.asname or alias.name] = full
                    elif alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append((name, node.module, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == root and alias.asname and is_module(alias.name):
                        bound[alias.asname] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
                owner, attr = bound[node.value.id], node.attr
                if attr.startswith("_") and not attr.startswith("__") and not is_module(f"{owner}.{attr}"):
                    if owner != name:
                        found.append((name, owner, attr))
    return found


def test_no_module_imports_another_modules_private_names():
    found = [f"{module} uses {name} of {owner}" for module, owner, name in private_imports()]
    assert not found, found


def test_the_private_imports_check_sees_both_forms(tmp_path):
    """An imported private name and one read through its module are both found; a private module is not one."""
    package = probe_package(
        tmp_path,
        {
            "low": "def _step():\n    return 1\n\n\ndef _kernel():\n    return 2\n",
            "_kernels": "VALUE = 1\n",
            "high": "from probe import _kernels, low\nfrom probe.low import _step\n\n\ndef use():\n"
            "    return _step() + low._kernel() + _kernels.VALUE\n",
        },
    )
    assert sorted(private_imports(package)) == [
        ("probe.high", "probe.low", "_kernel"),
        ("probe.high", "probe.low", "_step"),
    ]
