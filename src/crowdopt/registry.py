"""The problem catalogue: what each problem name in an instance file means.

A `ProblemSpec` ties together a problem's instance reader and writer, its generator, its ONE
evaluator, and its solution methods (fast paths, exact models, bounds). The CLI, the demo, the
certificates and the tests all go through it, so a new problem plugs in by adding one spec.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .errors import InputError
from .status import Status

# problem name -> module that defines `SPEC` (a ProblemSpec). One line per problem.
_MODULES: dict[str, str] = {
    "olas-assign": "crowdopt.solvers.olas_assign",
    "cltap": "crowdopt.solvers.cltap",
    "olas-select": "crowdopt.solvers.olas_select",
    "labeler-set": "crowdopt.solvers.labeler_set",
    "worker-select": "crowdopt.solvers.worker_select",
}


class ProblemInstance:
    """What every instance class shares: it knows its problem (the class-level `problem`
    name), so `crowdopt.solve(instance)` needs nothing else."""

    problem: ClassVar[str] = ""

    @property
    def spec(self) -> ProblemSpec:
        """The problem's catalogue entry: evaluator, methods, reader and writer."""
        return get_problem(self.problem)

    def to_dict(self) -> dict:
        """The instance file document (`problem`, `schema_version` and the fields);
        `crowdopt.load(document)` reads it back."""
        from .instances import instance_document

        return instance_document(self.spec, self)


@dataclass
class Evaluation:
    """What the evaluator says of a solution: objective, feasibility, worst violation."""

    objective: float
    feasible: bool
    max_violation: float = 0.0
    violations: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


# Every MILP method stops here unless told otherwise (and then returns its incumbent and its
# bound with status time_limit, CLI exit 4); polynomial methods and LPs have no default limit.
MILP_DEFAULT_TIME = 120.0


@dataclass
class Outcome:
    """What a method returns; the runner adds timing, the evaluation and the certificate.

    status: a `Status` (or its word: optimal | feasible | infeasible | time_limit | error).
    bound: a valid bound on the optimum (dual bound for min = lower, for max = upper), if any.
    """

    status: Status
    solution: Any = None
    bound: float | None = None
    bound_source: str | None = None
    reported_objective: float | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.status = Status(self.status)  # one vocabulary: an unknown word fails here


@dataclass(frozen=True)
class RunOptions:
    """Options every method accepts (methods ignore what does not apply to them).

    time_limit None = the method's default (MILP_DEFAULT_TIME for MILPs, none otherwise);
    presolve None = the method's own choice (some models solve faster without it).
    """

    time_limit: float | None = None
    threads: int = 1
    seed: int = 0
    mip_rel_gap: float = 0.0
    presolve: bool | None = None

    def highs(self, **defaults: Any) -> Any:
        """The `HighsOptions` of these options; `defaults` are the method's own settings
        (e.g. presolve=False, known_feasible=True), which explicit options override."""
        from .solvers.highs import HighsOptions  # HiGHS loads only for exact solves

        kw = {**defaults, "time_limit": self.time_limit, "threads": self.threads,
              "mip_rel_gap": self.mip_rel_gap}
        if self.presolve is not None:
            kw["presolve"] = self.presolve
        return HighsOptions(**kw)


@dataclass(frozen=True)
class Method:
    """One way to solve a problem. kind: 'fast' (heuristic/closed form), 'exact', or 'bound'.

    time_limit: the default limit in seconds when the caller gives none (MILPs:
    MILP_DEFAULT_TIME), None for methods that always finish quickly.
    """

    algorithm: str
    kind: str
    run: Callable[[Any, RunOptions], Outcome]
    description: str = ""
    # None if the method applies to the instance, else a one-line reason (e.g. too large)
    applicable: Callable[[Any], str | None] = lambda inst: None
    time_limit: float | None = None


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
    # module of the public Pyomo builders (`BUILDERS`: algorithm -> build(instance)) and of
    # `decode(instance, model, highs_result) -> solution`; imported only when asked for
    models: str = ""

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
                   example=module.example, size=module.size,
                   models=module.__name__.replace(".problems.", ".models."))

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

    def resolve(self, name: str, instance: Any) -> Method:
        """The method to run for `name` on this instance, or a one-line InputError.

        A kind ('fast', 'exact', 'bound') means its first method, in catalogue order, that
        applies to the instance (past one method's size guard the next one runs); an algorithm
        name means that method, which must apply.
        """
        m = self.method(name)
        kinds = {x.kind for x in self.methods}
        if name not in kinds or name == m.algorithm:
            reason = m.applicable(instance)
            if reason:
                raise InputError("method", f"a method that applies to this instance "
                                 f"({self.size(instance)})", name, note=reason)
            return m
        reasons = []
        for cand in self.methods:
            if cand.kind != name:
                continue
            reason = cand.applicable(instance)
            if reason is None:
                return cand
            reasons.append(f"{cand.algorithm}: {reason}")
        others = sorted(kinds - {name})
        hint = ("; other kinds of method: " + ", ".join(others)) if others else ""
        raise InputError("method", f"an {name} method that applies to this instance "
                         f"({self.size(instance)})", "none", note="; ".join(reasons) + hint)

    def builders(self) -> dict[str, Callable[[Any], Any]]:
        """algorithm -> public Pyomo builder of this problem's exact models (imports Pyomo)."""
        return dict(importlib.import_module(self.models).BUILDERS)

    def decode(self, instance: Any, model: Any, result: Any) -> Any:
        """The typed solution of a solved Pyomo model of this problem (imports Pyomo)."""
        return importlib.import_module(self.models).decode(instance, model, result)


def problem_names() -> list[str]:
    return sorted(_MODULES)


def get_problem(name: Any) -> ProblemSpec:
    if not isinstance(name, str) or name not in _MODULES:
        raise InputError("problem", "one of " + ", ".join(problem_names()), name)
    return importlib.import_module(_MODULES[name]).SPEC
