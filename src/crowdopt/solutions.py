"""The one reader of solutions, for every problem: `read_solution(instance, source)`.

What `crowdopt certify --solution FILE` and `crowdopt.certify(instance, solution)` read: a
path, '-' (standard input), a parsed JSON document, a typed solution or a `Result`. A document
is a bare solution (each problem's form, read by its `solution_from_dict`: the JSON Schema is
`crowdopt schema solution-PROBLEM`) or any document the package writes with a solution in it
(a result of `solve`, a certificate of `certify`, a comparison of `compare`: its best
solution). A solution names the instance's own ids (exact type), or 0-based positions where
the instance has none; anything else (null, a list, a text, another problem's solution, a
mixed, boolean, repeated or unknown entry, an unknown key) is a one-line InputError naming the
field, never a solution read in another meaning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import InputError
from .registry import ProblemSpec
from .results import Result

# what `certify --solution FILE` reads (`solution_part` unwraps each)
SOLUTION_FORMATS = ("a bare solution ({\"selected\": [...]}, {\"assignment\": [...]}, "
                    "{\"task_of\": [...]}, ...: `crowdopt schema solution-PROBLEM`), a result "
                    "(`crowdopt solve -o FILE` or --json), a certificate (`crowdopt certify "
                    "--json`) or a comparison (`crowdopt compare -o FILE`: its best solution)")


def solution_part(spec: ProblemSpec, doc: Any) -> Any:
    """The bare solution inside any document the package writes where a solution is expected
    (SOLUTION_FORMATS): a result's or certificate's `solution`, a comparison's `best`
    solution, else `doc` itself. A document of another problem, or one without a solution
    (a method that found none), is a one-line InputError."""
    if not isinstance(doc, dict):
        return doc  # the problem's reader refuses it by name
    wrapped = "problem" in doc or "results" in doc or "certificate" in doc
    if not wrapped:
        return doc
    if doc.get("problem") not in (None, spec.name):
        raise InputError("solution.problem", spec.name, doc.get("problem"))
    if "results" in doc:  # a comparison
        best = doc.get("best")
        if not isinstance(best, dict) or best.get("solution") is None:
            raise InputError("solution", "a comparison with a best solution",
                             "a comparison where no method found a feasible solution")
        return best["solution"]
    if doc.get("solution") is None:
        what = doc.get("algorithm") or "document"
        raise InputError("solution", "a result or certificate with a solution",
                         f"{what} without one (status {doc.get('status')})")
    return doc["solution"]


def read_solution(spec: ProblemSpec, instance: Any, source: Any, *, parsed: bool = False) -> Any:
    """The typed solution of `instance` that `source` holds: a typed solution of the problem
    (as is), a `Result` (its solution) or a parsed JSON document (`solution_part`, then the
    problem's `solution_from_dict`). A text is refused (a path is read by
    `read_solution_file`), as is anything else; `parsed`: source is a parsed JSON value (a
    text in it is a JSON string, refused as no solution)."""
    if isinstance(source, Result):
        if source.solution is None:
            raise InputError("solution", "a result with a solution",
                             f"{source.algorithm} without one (status {source.status.value})")
        source = source.solution
    if source is None or isinstance(source, dict | list | tuple | str | bytes | int | float):
        if isinstance(source, str | bytes) and not parsed:
            raise InputError("solution", f"a {spec.name} solution (a Result, its solution, or "
                             "its JSON form as a dict)", source,
                             note="a file: read it with crowdopt.read_solution(instance, path)")
        return spec.solution_from_dict(instance, solution_part(spec, source))
    if type(source).__module__ != spec.solution_from_dict.__module__:
        raise InputError("solution", f"a {spec.name} solution (a Result, its solution, or its "
                         "JSON form as a dict)", source)
    return source


def read_solution_file(spec: ProblemSpec, instance: Any, path: str | Path) -> Any:
    """The typed solution in a JSON file (or '-', standard input): SOLUTION_FORMATS. A file
    holding `null`, like any other non-solution, is a one-line InputError (never "no solution
    given")."""
    from .instances import read_json

    return read_solution(spec, instance, read_json(str(path), "solution"), parsed=True)
