"""The problem catalogue: what each problem name in an instance file means.

A `ProblemSpec` ties together a problem's instance reader and writer, its generator, its ONE
evaluator, and its solution methods (fast paths, exact models, bounds). The CLI, the demo, the
certificates and the tests all go through it, so a new problem plugs in by adding one spec.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError

# problem name -> module that defines `SPEC` (a ProblemSpec). One line per problem.
_MODULES: dict[str, str] = {
    "olas-assign": "crowdopt.solvers.olas_assign",
    "cltap": "crowdopt.solvers.cltap",
    "olas-select": "crowdopt.solvers.olas_select",
    "labeler-set": "crowdopt.solvers.labeler_set",
    "worker-select": "crowdopt.solvers.worker_select",
}


@dataclass
class Evaluation:
    """What the evaluator says of a solution: objective, feasibility, worst violation."""

    objective: float
    feasible: bool
    max_violation: float = 0.0
    violations: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """What a method returns; the runner adds timing, the evaluation and the certificate.

    status: optimal | feasible | infeasible | time_limit | error.
    bound: a valid bound on the optimum (dual bound for min = lower, for max = upper), if any.
    """

    status: str
    solution: Any = None
    bound: float | None = None
    bound_source: str | None = None
    reported_objective: float | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunOptions:
    """Options every method accepts (methods ignore what does not apply to them)."""

    time_limit: float | None = None
    threads: int = 1
    seed: int = 0
    mip_rel_gap: float = 0.0


@dataclass(frozen=True)
class Method:
    """One way to solve a problem. kind: 'fast' (heuristic/closed form), 'exact', or 'bound'."""

    algorithm: str
    kind: str
    run: Callable[[Any, RunOptions], Outcome]
    description: str = ""
    # None if the method applies to the instance, else a one-line reason (e.g. too large)
    applicable: Callable[[Any], str | None] = lambda inst: None


@dataclass(frozen=True)
class ProblemSpec:
    name: str
    title: str
    paper: str
    sense: str  # "min" or "max"
    from_dict: Callable[[dict], Any]
    to_dict: Callable[[Any], dict]
    generate: Callable[..., Any]  # generate(seed, **params)
    generator_params: dict[str, Any]  # name -> default (documented in `crowdopt generate --help`)
    evaluate: Callable[[Any, Any], Evaluation]
    solution_from_dict: Callable[[Any, dict], Any]
    solution_to_dict: Callable[[Any, Any], dict]
    methods: tuple[Method, ...]
    example: Callable[[], Any]
    size: Callable[[Any], str] = lambda inst: ""

    @classmethod
    def from_module(cls, module: Any, *, name: str, title: str, paper: str, sense: str,
                    methods: tuple[Method, ...]) -> ProblemSpec:
        """The spec of a problem whose `problems/` module follows the convention: from_dict,
        to_dict, generate, GENERATOR_PARAMS, evaluate, solution_from_dict, solution_to_dict,
        example, size."""
        return cls(name=name, title=title, paper=paper, sense=sense,
                   from_dict=module.from_dict, to_dict=module.to_dict, generate=module.generate,
                   generator_params=module.GENERATOR_PARAMS, evaluate=module.evaluate,
                   solution_from_dict=module.solution_from_dict,
                   solution_to_dict=module.solution_to_dict, methods=methods,
                   example=module.example, size=module.size)

    def method(self, name: str) -> Method:
        for m in self.methods:
            if m.algorithm == name:
                return m
        kinds = {m.kind for m in self.methods}
        if name in kinds:
            return self.default(name)
        raise InputError("method", "one of " + ", ".join(
            sorted(kinds | {m.algorithm for m in self.methods})), name)

    def default(self, kind: str) -> Method:
        for m in self.methods:
            if m.kind == kind:
                return m
        raise InputError("method", f"a problem with a {kind!r} method", self.name)


def problem_names() -> list[str]:
    return sorted(_MODULES)


def get_problem(name: Any) -> ProblemSpec:
    if not isinstance(name, str) or name not in _MODULES:
        raise InputError("problem", "one of " + ", ".join(problem_names()), name)
    return importlib.import_module(_MODULES[name]).SPEC
