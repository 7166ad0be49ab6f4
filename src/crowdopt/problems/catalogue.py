"""What a problem's catalogue entry is made of: `ProblemSpec`, its `Method`s and the plain
records they exchange (`Outcome`, `RunOptions`, `Evaluation`).

Each problems/NAME.py ends with its `SPEC`: the instance reader and writer, the generator, the
ONE evaluator, and its solution methods. A method names its solver lazily, by a `Lazy`
reference 'crowdopt.solvers.NAME:function' imported on first call, so problems stay the lowest
layer (problems < models < solvers < registry/api < commands < cli): the solvers import the
problems, never the other way round. `crowdopt.registry` maps problem names to these entries.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import InputError
from ..status import Status

# The `schema_version` of instance files this package reads and writes.
SCHEMA_VERSION = 1

# Every MILP method stops here unless told otherwise (and then returns its incumbent and its
# bound with status time_limit, CLI exit 4); polynomial methods and LPs have no default limit.
MILP_DEFAULT_TIME = 120.0


@dataclass(frozen=True)
class Lazy:
    """A function named 'module:attribute', imported when first called (with `args` put
    before the caller's): how a catalogue entry names a solver that sits above it."""

    target: str
    args: tuple = ()

    def resolve(self) -> Callable[..., Any]:
        """The named function (imports its module)."""
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)

    def __call__(self, *args: Any, **kw: Any) -> Any:
        return self.resolve()(*self.args, *args, **kw)


class ProblemInstance:
    """What every instance class shares: it knows its problem (the class-level `problem`
    name), so `crowdopt.solve(instance)` needs nothing else."""

    problem: ClassVar[str] = ""

    @property
    def spec(self) -> ProblemSpec:
        """The problem's catalogue entry (the `SPEC` of the module defining the class)."""
        return sys.modules[type(self).__module__].SPEC

    def to_dict(self) -> dict:
        """The instance file document (`problem`, `schema_version` and the fields);
        `crowdopt.load(document)` reads it back."""
        return self.spec.document(self)


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
    `solvers.highs.highs_options(options, ...)` turns them into HiGHS settings.
    max_steps / max_rounds: deterministic work budgets (local-search steps; column-generation
    rounds) for results that do not depend on machine load; time_limit stays a safety cap.
    colgen_rounds: the rounds of the column-generation method alone (None: max_rounds), whose
    pricing rounds cost far more than the configuration LP's.
    branch_nodes: the node LPs of the configuration LP with branching alone (None: max_rounds),
    whose tree needs far more of them than the configuration LP needs rounds at the large sizes.
    search_s: the local-search heuristics' own search length in seconds (None: each method's
    documented default); a time limit only cuts it, it never becomes the search's length.
    no_time_limit: the caller asked for no limit (a limit of a year or more,
    `validate.time_limit`): time_limit is None and the methods' default limits do not apply.
    started: the `time.perf_counter()` reading at which the limit's clock started (the command
    line passes its own start, so that imports and reading count); None: when the run starts.
    """

    time_limit: float | None = None
    threads: int = 1
    seed: int = 0
    mip_rel_gap: float = 0.0
    presolve: bool | None = None
    max_steps: int | None = None
    max_rounds: int | None = None
    colgen_rounds: int | None = None
    branch_nodes: int | None = None
    search_s: float | None = None
    no_time_limit: bool = False
    started: float | None = None

    @classmethod
    def with_limit(cls, time_limit: Any, field: str = "time_limit", **kw: Any) -> RunOptions:
        """Options with a time limit checked at the boundary (`validate.time_limit`): None =
        the methods' defaults; a year or more = no limit at all (`no_time_limit`)."""
        from ..validate import time_limit as checked

        limit = checked(time_limit, field)
        return cls(time_limit=limit, no_time_limit=time_limit is not None and limit is None,
                   **kw)


def predicted_time_guard(problem: str, algorithm: str) -> Lazy:
    """The time guard of an exact method: its fitted time prediction against its limit
    (`solvers.guards.time_guard`, coefficients measured by benchmarks/bench_guards.py)."""
    return Lazy("crowdopt.solvers.guards:time_guard", (problem, algorithm))


def predicted_memory_guard(problem: str, algorithm: str) -> Lazy:
    """The memory guard of a Pyomo-built MILP: its nonzeros at the measured KB per nonzero
    (`solvers.guards.memory_guard`); an `applicable` reason, which --force does not lift."""
    return Lazy("crowdopt.solvers.guards:memory_guard", (problem, algorithm))


def _always(inst: Any) -> str | None:
    """The size guard of a method that applies to every instance."""
    return None


@dataclass(frozen=True)
class Method:
    """One way to solve a problem. kind: 'fast' (heuristic/closed form), 'exact', or 'bound'.

    run(instance, options) -> Outcome, usually a `Lazy` reference to a solver.
    applicable(instance): None if the method applies, else a one-line reason: what it cannot
    do at all, or a MEMORY guard (a table too large to hold); `force` does not lift it.
    time_guard(instance): None, or why the method is predicted to outlast its limit (the fitted
    prediction of `solvers.guards`); `force` runs the method anyway, under its time limit.
    time_limit: the default limit in seconds when the caller gives none (MILPs:
    MILP_DEFAULT_TIME), None for methods that always finish quickly.
    """

    algorithm: str
    kind: str
    run: Callable[[Any, RunOptions], Outcome]
    description: str = ""
    applicable: Callable[[Any], str | None] = _always
    time_limit: float | None = None
    time_guard: Callable[[Any], str | None] = _always

    def refuses(self, instance: Any, force: bool = False) -> str | None:
        """Why the method does not run on this instance (its `applicable` reason, then, unless
        `force`, its time guard's), else None."""
        return self.applicable(instance) or (None if force else self.time_guard(instance))


@dataclass(frozen=True)
class ProblemSpec:
    """A problem's catalogue entry: name, paper, sense, reader/writer, generator, evaluator and
    methods; `models` names the module of its public Pyomo builders (imported on request)."""

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
    # name -> one line: what it sets and its choices (`crowdopt generate PROBLEM --show-params`)
    generator_help: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_module(cls, module: Any, *, name: str, title: str, paper: str, sense: str,
                    methods: tuple[Method, ...]) -> ProblemSpec:
        """The spec of a problem whose `problems/` module follows the convention: from_dict,
        to_dict, generate, GENERATOR_PARAMS (with GENERATOR_HELP, a line per parameter),
        evaluate, solution_from_dict, solution_to_dict, example, size."""
        return cls(name=name, title=title, paper=paper, sense=sense,
                   from_dict=module.from_dict, to_dict=module.to_dict, generate=module.generate,
                   generator_params=module.GENERATOR_PARAMS,
                   generator_help=getattr(module, "GENERATOR_HELP", {}), evaluate=module.evaluate,
                   solution_from_dict=module.solution_from_dict,
                   solution_to_dict=module.solution_to_dict, methods=methods,
                   example=module.example, size=module.size,
                   models=module.__name__.replace(".problems.", ".models."))

    def document(self, instance: Any) -> dict:
        """The instance file document of `instance`: problem, schema_version, fields."""
        return {"problem": self.name, "schema_version": SCHEMA_VERSION, **self.to_dict(instance)}

    def method(self, name: str) -> Method:
        """The method called `name` (an algorithm, or a kind for its first method)."""
        for m in self.methods:
            if m.algorithm == name:
                return m
        kinds = {m.kind for m in self.methods}
        if name in kinds:
            return self.default(name)
        raise InputError("method", "one of " + ", ".join(
            sorted(kinds | {m.algorithm for m in self.methods})), name)

    def default(self, kind: str) -> Method:
        """The first method of a kind ('fast', 'exact', 'bound') in catalogue order."""
        for m in self.methods:
            if m.kind == kind:
                return m
        raise InputError("method", f"a problem with a {kind!r} method", self.name)

    def resolve(self, name: str, instance: Any, force: bool = False) -> Method:
        """The method to run for `name` on this instance, or a one-line InputError.

        A kind ('fast', 'exact', 'bound') means its first method, in catalogue order, that
        applies to the instance (past one method's size guard the next one runs); an algorithm
        name means that method, which must apply. `force`: time guards do not refuse (memory
        guards still do), so a kind means its first method.
        """
        m = self.method(name)
        kinds = {x.kind for x in self.methods}
        if name not in kinds or name == m.algorithm:
            reason = m.refuses(instance, force)
            if reason:
                raise InputError("method", f"a method that applies to this instance "
                                 f"({self.size(instance)})", name, note=reason)
            return m
        reasons = []
        for cand in self.methods:
            if cand.kind != name:
                continue
            reason = cand.refuses(instance, force)
            if reason is None:
                return cand
            reasons.append(f"{cand.algorithm}: {reason}")
        others = sorted(kinds - {name})
        hint = ("; other kinds of method: " + ", ".join(others)) if others else ""
        raise InputError("method", f"an {name} method that applies to this instance "
                         f"({self.size(instance)})", "none", note="; ".join(reasons) + hint)

    def builders(self) -> dict[str, Callable[[Any], Any]]:
        """algorithm -> public Pyomo builder of this problem's exact models (imports Pyomo)."""
        return dict(Lazy(self.models + ":BUILDERS").resolve())

    def decode(self, instance: Any, model: Any, result: Any) -> Any:
        """The typed solution of a solved Pyomo model of this problem (imports Pyomo)."""
        return Lazy(self.models + ":decode")(instance, model, result)


REFUTE_REL = 1e-7  # a feasible value this much (relative) better than a claimed optimum refutes it


def refutes(sense: str, value: float, claimed: float) -> bool:
    """Whether a feasible objective `value` beats a claimed optimum by more than REFUTE_REL
    (relative): a solver's "optimal" is then false (HiGHS 1.16 has returned one below a plan
    CBP finds)."""
    better = value - claimed if sense == "max" else claimed - value
    return better > REFUTE_REL * max(abs(value), abs(claimed))
