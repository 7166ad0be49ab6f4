"""Every public function of the package says what it is: a docstring whose first line stands
on its own (read from the source, so nothing is imported)."""

from __future__ import annotations

import ast
from pathlib import Path

import crowdopt

ROOT = Path(crowdopt.__file__).parent


def public_functions(tree: ast.Module):
    """(name, node) of the module's public functions and its public classes' public methods."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if not node.name.startswith("_"):
                yield node.name, node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for m in node.body:
                if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) and \
                        not m.name.startswith("_"):
                    yield f"{node.name}.{m.name}", m


def test_every_public_function_has_a_docstring():
    missing = []
    for path in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, node in public_functions(tree):
            doc = ast.get_docstring(node)
            if not doc or not doc.splitlines()[0].strip():
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert missing == []
