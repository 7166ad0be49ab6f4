"""The problem catalogue: what each problem name in an instance file means.

Each problem's entry (`SPEC`, a `ProblemSpec`) lives in its problems/NAME.py: its instance
reader and writer, its generator, its ONE evaluator, and its solution methods (fast paths, exact
models, bounds), which name their solvers lazily. The CLI, the demo, the certificates and the
tests all go through `get_problem`, so a new problem plugs in by adding its module here.
The catalogue's record types are defined in `problems.catalogue` and re-exported here.
"""

from __future__ import annotations

from typing import Any

from .errors import InputError
from .problems import cltap, labeler_set, olas_assign, olas_select, worker_select
from .problems.catalogue import (
    MILP_DEFAULT_TIME,
    SCHEMA_VERSION,
    Evaluation,
    Lazy,
    Method,
    Outcome,
    ProblemInstance,
    ProblemSpec,
    RunOptions,
)

__all__ = ["MILP_DEFAULT_TIME", "SCHEMA_VERSION", "Evaluation", "Lazy", "Method", "Outcome",
           "ProblemInstance", "ProblemSpec", "RunOptions", "get_problem", "instance_document",
           "problem_names"]

# problem name -> its catalogue entry. One module per problem.
_SPECS: dict[str, ProblemSpec] = {m.SPEC.name: m.SPEC for m in (
    olas_assign, cltap, olas_select, labeler_set, worker_select)}


def problem_names() -> list[str]:
    """The registered problem names, sorted."""
    return sorted(_SPECS)


def get_problem(name: Any) -> ProblemSpec:
    """The catalogue entry of a problem name, or a one-line InputError listing the names."""
    if not isinstance(name, str) or name not in _SPECS:
        raise InputError("problem", "one of " + ", ".join(problem_names()), name)
    return _SPECS[name]


def instance_document(spec: ProblemSpec, instance: Any) -> dict:
    """The instance file document (`problem`, `schema_version`, fields) that `load` reads."""
    return spec.document(instance)
