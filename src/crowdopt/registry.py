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
from .problems.cltap import CltapInstance, CltapSolution
from .problems.labeler_set import LabelerSetInstance, LabelerSetSolution
from .problems.olas_assign import OlasAssignInstance, OlasAssignSolution
from .problems.olas_select import OlasSelectInstance, OlasSelectSolution
from .problems.worker_select import WorkerSelectInstance, WorkerSelectSolution

__all__ = ["MILP_DEFAULT_TIME", "SCHEMA_VERSION", "Evaluation", "Instance", "Lazy", "Method",
           "Outcome", "ProblemInstance", "ProblemSpec", "RunOptions", "Solution", "get_problem",
           "instance_document", "problem_names"]

Instance = (OlasAssignInstance | OlasSelectInstance | LabelerSetInstance | WorkerSelectInstance
            | CltapInstance)
"""An instance of a registered problem: what `solve`, `compare`, `certify`, `build_model` and
`solve_model` take, and what `generate` and `load` return."""

Solution = (OlasAssignSolution | OlasSelectSolution | LabelerSetSolution | WorkerSelectSolution
            | CltapSolution)
"""A typed solution of a registered problem: what `read_solution` and `decode` return, and
what `certify(instance, solution)` takes besides a file or a document."""

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
