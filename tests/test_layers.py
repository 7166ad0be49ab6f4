"""The package's layers, read from its source: problems < models < solvers < registry/api <
commands < cli. Every import (lazy ones inside functions included) points down or sideways,
never up (the CLI's command plugins, which import the CLI's helpers, aside), and no imports
form a cycle. The catalogue's lazy method references point only to models and solvers."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import crowdopt
from crowdopt.problems.catalogue import Lazy
from crowdopt.registry import get_problem, problem_names

ROOT = Path(crowdopt.__file__).parent

# Rank of each part of the package, lowest first; a module may import its own rank or lower.
RANKS = [
    ("errors", "status", "validate", "datapath", "progress", "results", "schemas", "version"),
    ("problems",),
    ("models",),
    ("solvers", "crowd"),
    ("policies",),
    ("sim",),
    ("registry", "instances", "api", ""),  # "" = the package itself (`import crowdopt`)
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


def import_graph() -> dict[str, set[str]]:
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
    return graph


def rank(mod: str) -> int:
    """The layer of a module: that of its first part below `crowdopt`."""
    parts = mod.split(".")
    return RANK[parts[1] if len(parts) > 1 else ""]


def plugin_import(a: str, b: str) -> bool:
    """A command plugin importing the CLI's helpers: the one allowed upward import."""
    return a.startswith("crowdopt.commands.") and b == "crowdopt.cli"


def related(a: str, b: str) -> bool:
    """A package and one of its own submodules."""
    return a.startswith(b + ".") or b.startswith(a + ".")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
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
    assert [m for m in modules() if (m.split(".") + [""])[1] not in RANK] == []


def test_no_import_points_up():
    graph = import_graph()
    upward = sorted(f"{a} -> {b}" for a, deps in graph.items() for b in deps
                    if rank(b) > rank(a) and not plugin_import(a, b))
    assert upward == []


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"crowdopt.a": {"crowdopt.b"}, "crowdopt.b": {"crowdopt.c"},
             "crowdopt.c": {"crowdopt.a"}, "crowdopt.p": {"crowdopt.p.x"},
             "crowdopt.p.x": {"crowdopt.p"}}
    assert cycles(graph) == [["crowdopt.a", "crowdopt.b", "crowdopt.c"]]


def test_catalogue_names_only_models_and_solvers():
    """Every lazy reference of every catalogue entry resolves, to a models or solvers module."""
    for name in problem_names():
        spec = get_problem(name)
        refs = [x for m in spec.methods for x in (m.run, m.applicable) if isinstance(x, Lazy)]
        assert refs, name
        for ref in refs:
            module = ref.target.partition(":")[0]
            assert module.split(".")[1] in ("models", "solvers"), ref.target
            assert callable(ref.resolve()), ref.target
        assert spec.models.split(".")[1] == "models"
        importlib.import_module(spec.models)
