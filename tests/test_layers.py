"""The package's layers, read from its source: problems < models < solvers < registry/api <
commands < cli. Every import (lazy ones inside functions included) points down or sideways,
never up (the CLI's command plugins, which import the CLI's helpers, aside), and no imports
form a cycle. The catalogue's lazy method references point only to models and solvers."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import crowdopt
from crowdopt.problems.catalogue import Lazy
from crowdopt.registry import get_problem, problem_names

ROOT = Path(crowdopt.__file__).parent

# Rank of each part of the package, lowest first; a module may import its own rank or lower.
RANKS = [
    ("errors", "status", "validate", "files", "progress", "results", "schemas", "version",
     "download", "dataset_catalogue", "datapath"),
    ("problems",),
    ("models",),
    ("solvers", "crowd"),
    ("policies",),
    ("sim",),
    ("registry", "instances", "solutions", "api", ""),  # "" = the package itself (`import crowdopt`)
    ("experiments", "campaign"),
    ("commands", "cliargs"),
    ("cli", "__main__"),
]
RANK = {part: i for i, parts in enumerate(RANKS) for part in parts}


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = ("crowdopt",) + path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """module -> the package modules it imports anywhere in its file (`from P import n` counts
    as importing P and, where it is a module, P.n, as the before-stop cycle check reads it)."""
    mods = modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                names = [target] + [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            graph[mod].update(n for n in names if n in mods and n != mod)
    return {m: frozenset(deps) for m, deps in graph.items()}


def rank(mod: str) -> int:
    """The layer of a module: that of its first part below `crowdopt` (-1: none yet, which
    `test_every_module_has_a_layer` reports)."""
    parts = mod.split(".")
    return RANK.get(parts[1] if len(parts) > 1 else "", -1)


def plugin_import(a: str, b: str) -> bool:
    """A command plugin importing the CLI's helpers: the one allowed upward import."""
    return a.startswith("crowdopt.commands.") and b == "crowdopt.cli"


def related(a: str, b: str) -> bool:
    """A package and one of its own submodules."""
    return a.startswith(b + ".") or b.startswith(a + ".")


def cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected groups of modules (Tarjan) that hold an import between two
    unrelated modules: a package importing its own submodules and back is no cycle here."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            members = set(group)
            if any(w in members and not related(u, w) for u in group for w in graph[u]):
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def test_every_module_has_a_layer():
    assert [m for m in modules() if rank(m) < 0] == []


@pytest.mark.slow  # parsing every module: ~0.8 s of CPU
def test_no_import_points_up():
    graph = import_graph()
    upward = sorted(f"{a} -> {b}" for a, deps in graph.items() for b in deps
                    if rank(b) > rank(a) and not plugin_import(a, b))
    assert upward == []


@pytest.mark.slow
def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"crowdopt.a": {"crowdopt.b"}, "crowdopt.b": {"crowdopt.c"},
             "crowdopt.c": {"crowdopt.a"}, "crowdopt.p": {"crowdopt.p.x"},
             "crowdopt.p.x": {"crowdopt.p"}}
    assert cycles(graph) == [["crowdopt.a", "crowdopt.b", "crowdopt.c"]]


@functools.cache
def top_level_names(mod: str) -> frozenset[str]:
    """The functions, classes and variables a module defines at its top level (read, not
    imported: no Pyomo or HiGHS loads here)."""
    tree = ast.parse(modules()[mod].read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(names)


def test_catalogue_names_only_models_and_solvers():
    """Every lazy reference of every catalogue entry names a function that a models or solvers
    module defines."""
    for name in problem_names():
        spec = get_problem(name)
        refs = [x.target for m in spec.methods for x in (m.run, m.applicable, m.time_guard)
                if isinstance(x, Lazy)]
        refs += [spec.models + ":BUILDERS", spec.models + ":decode"]
        assert len(refs) > 2, name
        for ref in refs:
            module, _, attr = ref.partition(":")
            assert module.split(".")[1] in ("models", "solvers"), ref
            assert attr in top_level_names(module), ref
