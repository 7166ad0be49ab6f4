"""The Python API: solve, compare and certify any registered problem; build, extend and solve
its exact Pyomo models. The CLI calls these same functions and prints their `to_dict()`.

- `solve(instance, method)` runs one method; the objective is recomputed by the problem's
  evaluator and the `Result` carries a `Certificate` (bound, gap, checks).
- `compare(instance)` runs every fast path and exact model (after one untimed warm-up) and
  measures each against the best bound of the run.
- `certify(instance, solution=None)` pairs the given (or best found) solution with the
  tightest valid bound.
- `build_model(instance, method)` returns the Pyomo model of an exact method, indexed by the
  instance's ids; `solve_model(instance, model)` solves a (modified) model through the one
  HiGHS adapter and certifies it against the model's own bound; `decode` reads a solution.

An instance is an instance object: `OlasSelectInstance.from_arrays(...)` and the other
problems' constructors, or what `generate` and `load` return; a file or a document goes through
`load` first, as the CLI does. Anything else is a one-line InputError naming `instance`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import CrowdoptError, InputError, SolverError
from .instances import load_instance
from .models.snapshot import peeking
from .registry import (
    MILP_DEFAULT_TIME,
    Instance,
    Method,
    ProblemInstance,
    ProblemSpec,
    RunOptions,
    Solution,
    get_problem,
)
from .results import Certificate, Comparison, Result
from .solutions import read_solution as read_solution_of
from .solutions import read_solution_file
from .solvers.certify import (
    SOLVER_ABS_TOL,
    gap_ratio,
    lower_upper,
    make_certificate,
    tolerance,
    with_bound,
    without_bound,
)
from .solvers.verify import Candidate, Claim, better, refutation_message, settle, verify_run
from .status import Status
from .validate import MAX_INT, NO_LIMIT_S, integer, real
from .validate import time_limit as time_limit_of

if TYPE_CHECKING:  # pragma: no cover - annotations only: Pyomo and the adapter load on use
    import pyomo.environ as pyo

    from .solvers.highs import HighsResult

MethodResult = Result  # the name of crowdopt 0.1

__all__ = ["MethodResult", "build_model", "certify", "compare", "decode", "generate", "load",
           "read_solution", "run_method", "solve", "solve_model"]

MODEL_FEASIBILITY_TOL = 1e-6  # max violation of a user model's rows at the returned point


# ----------------------------------------------------------------------------- instances
def spec_and_instance(instance: Any) -> tuple[ProblemSpec, Any]:
    """(spec, instance) of an instance object; anything else is a one-line InputError that
    says how to get one (a file or a document goes through `load`)."""
    if isinstance(instance, ProblemInstance) and instance.problem:
        return instance.spec, instance
    expected = ("a crowdopt instance (e.g. OlasSelectInstance.from_arrays(...), "
                "crowdopt.generate(...) or crowdopt.load(path))")
    if isinstance(instance, str | bytes) or hasattr(instance, "__fspath__"):
        raise InputError("instance", expected, str(instance),
                         note="a file path: read it with crowdopt.load(path)")
    note = {dict: "an instance document: read it with crowdopt.load(document)",
            tuple: "the (spec, instance) pair of crowdopt 0.1 is retired: pass the instance"}
    raise InputError("instance", expected, type(instance).__name__,
                     note=next((v for k, v in note.items() if isinstance(instance, k)), ""))


def generate(problem: str, seed: int = 0, **params: Any) -> Instance:
    """A random instance of `problem`; the instance knows its problem: `instance.spec`,
    `instance.to_dict()`.

    Args:
        problem: olas-assign, olas-select, labeler-set, worker-select or cltap.
        seed: the generator's seed (0 to 2**63 - 1): the same seed, the same instance.
        **params: the generator's parameters, each with a default (each problem's page lists
            them, `crowdopt generate PROBLEM --show-params` prints them).

    Returns:
        The instance.

    Raises:
        InputError: an unknown problem or parameter, or a value out of range (one line naming
            it).
    """
    spec = get_problem(problem)
    unknown = sorted(set(params) - set(spec.generator_params))
    if unknown:
        raise InputError(unknown[0], "a generator parameter of " + spec.name + " (" +
                         ", ".join(sorted(spec.generator_params)) + ")", "an unknown name")
    return spec.generate(integer(seed, "seed", lo=0, hi=MAX_INT), **params)


def load(source: str | os.PathLike | dict) -> Instance:
    """Read and validate an instance, as `crowdopt solve FILE` does.

    Args:
        source: a file path, '-' (standard input), or a parsed JSON document (dict) with its
            `problem` and `schema_version`.

    Returns:
        The instance.

    Raises:
        InputError: a file that cannot be read or a bad field (one line naming it).
    """
    return load_instance(source)[1]


def read_solution(instance: Instance, source: str | os.PathLike | dict | Result | Solution
                  ) -> Solution:
    """The typed solution of `instance` that `source` holds, read by the one reader that
    `crowdopt certify --solution FILE` uses (`crowdopt.solutions`).

    Args:
        instance: the instance the solution is of.
        source: a path or '-' (a JSON file), a parsed document (a bare solution, or a result,
            certificate or comparison document), a `Result` or a typed solution. A solution
            names the instance's ids (their exact type), or 0-based positions where it has
            none (`crowdopt schema solution-PROBLEM`).

    Returns:
        The typed solution (`OlasSelectSolution`, ...).

    Raises:
        InputError: anything else (one line naming the field).
    """
    spec, inst = spec_and_instance(instance)
    if isinstance(source, str) or hasattr(source, "__fspath__"):
        return read_solution_file(spec, inst, source)
    return read_solution_of(spec, inst, source)


def _options(time_limit: Any, threads: Any, seed: Any, mip_rel_gap: Any,
             presolve: Any, search_time: Any = None) -> RunOptions:
    """RunOptions from the API's keyword arguments, each checked at the boundary."""
    if presolve is not None and not isinstance(presolve, bool):
        raise InputError("presolve", "True, False or None", presolve)
    if search_time is not None:
        search_time = real(search_time, "search_time", lo=0.0, lo_open=True, hi=MAX_SEARCH_S)
    return RunOptions.with_limit(time_limit, threads=integer(threads, "threads", lo=1, hi=1024),
                                 seed=integer(seed, "seed", lo=0, hi=MAX_INT),
                                 mip_rel_gap=real(mip_rel_gap, "mip_rel_gap", lo=0.0),
                                 presolve=presolve, search_s=search_time)


def _flag(value: Any, field: str) -> bool:
    """A yes/no argument by the one flag rule (`validate.flag`)."""
    from .validate import flag

    return flag(value, field)


def _method_name(method: Any, field: str = "method") -> str:
    if not isinstance(method, str):
        raise InputError(field, "a method name (fast, exact, bound or an algorithm)", method)
    return method


# ----------------------------------------------------------------------------- one method
def run_method(spec: ProblemSpec, instance: Any, method: Method | str,
               options: RunOptions | None = None, force: bool = False) -> Result:
    """Run one method as named (a method that does not apply is `skipped`, with the reason;
    `force`: past its time guard it runs anyway, under its time limit); evaluate its solution
    with the problem's evaluator; certify it."""
    options = options or RunOptions()
    m = spec.method(method) if isinstance(method, str) else method
    reason = m.refuses(instance, force)
    if reason:
        return Result(problem=spec.name, method=m.kind, algorithm=m.algorithm,
                      status=Status.SKIPPED, message=reason, instance=instance)
    forced = m.time_guard(instance) if force else None  # run past its time guard
    own_limit = False
    if options.time_limit is None and not options.no_time_limit and (
            m.time_limit is not None or forced):
        options = dataclasses.replace(options, time_limit=m.time_limit or MILP_DEFAULT_TIME)
        own_limit = True
    # a limit the caller gave runs from the caller's start (the command line's: reading the
    # instance counts) and the solver modules' imports count against it too; the method's own
    # default limit (e.g. best-of's 2 s search) runs from the method's start
    t0 = (options.started if options.started is not None and not own_limit
          else time.perf_counter())
    limit = options.time_limit
    if m.kind != "fast":
        _import_solvers(spec, m)
    if limit is not None:
        used = time.perf_counter() - t0
        if limit - used < MIN_LEFT_S:
            why = (f"the time limit ({limit:g} s) was used up before {m.algorithm} started "
                   f"({used:.3g} s: reading, imports): no solution")
            cert = make_certificate(spec, method=m.kind, algorithm=m.algorithm,
                                    status=Status.TIME_LIMIT, evaluation=None, bound=None,
                                    bound_source=None, times={"total_s": used},
                                    seed=options.seed, details={"message": why,
                                                                "time_limit_s": limit},
                                    problem_size=spec.size(instance))
            return Result(problem=spec.name, method=m.kind, algorithm=m.algorithm,
                          status=Status.TIME_LIMIT, time_s=used, instance=instance,
                          message=why, certificate=cert, details={"time_limit_s": limit})
        options = dataclasses.replace(options, time_limit=limit - used)
    try:
        out = m.run(instance, options)
    except InputError:
        raise
    except (SolverError, CrowdoptError) as exc:
        return Result(problem=spec.name, method=m.kind, algorithm=m.algorithm,
                      status=Status.ERROR, time_s=time.perf_counter() - t0, message=str(exc),
                      instance=instance)
    elapsed = time.perf_counter() - t0
    evaluation = spec.evaluate(instance, out.solution) if out.solution is not None else None
    objective = evaluation.objective if evaluation is not None else None
    incumbent = objective if evaluation is not None and evaluation.feasible else None
    lower, upper = lower_upper(spec.sense, incumbent, out.bound)
    floor = solver_floor(out.details)
    gap = gap_ratio(lower, upper, floor)[0]
    status = out.status
    message = str(out.details.get("message", ""))
    if status is Status.TIME_LIMIT and not message:
        message = (f"stopped by the time limit ({limit:g} s): "
                   + ("best solution found and the bound so far" if out.solution is not None
                      else "no solution found"))
    if status is Status.OPTIMAL and gap is not None and gap > 0:
        # HiGHS calls a solution within mip_rel_gap (or its own tolerances, e.g. a bound of
        # 4e-12 over an optimum of 0) 'optimal'; without gap 0 it is not proven
        status = Status.FEASIBLE
        message = message or (f"stopped at mip_rel_gap {options.mip_rel_gap:g}"
                              if options.mip_rel_gap > 0 else
                              f"the solver reports optimal, but its bound is {gap:.3g} from the "
                              "recomputed objective (beyond the relative tolerance): not proven")
    # the one verification step: a proof is checked against every fast method's plan, a bound
    # a feasible value crosses is dropped with its proof, the best answer seen is kept
    t1 = time.perf_counter()
    v = verify_run(spec, instance, m.algorithm, status, out.solution, evaluation, out.bound,
                   _source_of(m.algorithm, out.bound_source), floor,
                   dataclasses.replace(options, time_limit=limit, started=t0))
    verify_s = time.perf_counter() - t1
    # a presolved solve's bound refuted by a point: a presolve defect (HiGHS has cut off optima
    # at the 1e-9 tolerance); the same method runs once more without presolve (`_retried`)
    retry = _presolve_retry(v, out.details, options.presolve, limit, t0)
    details = dict(out.details)
    if v.record:
        details["verification"] = {**v.record, "time_s": verify_s}
    if v.record.get("refuted"):
        r = v.record["refuted"][0]
        details["refuted_by"] = {"method": r["by"], "objective": r["crossed_by"],
                                 "claimed": r["bound"]}
        if not retry:
            warnings.warn(v.message, RuntimeWarning, stacklevel=2)
    status, message = v.status, v.message or message
    bound, bound_source = out.bound, out.bound_source
    if v.bound is None:
        bound = bound_source = None
    if v.solution is not out.solution:
        evaluation = v.evaluation
        objective = evaluation.objective if evaluation is not None else None
    if v.value is not None:
        gap = gap_ratio(*lower_upper(spec.sense, v.value, bound), floor)[0]
    elapsed = time.perf_counter() - t0
    times = {"total_s": elapsed, **{k: x for k, x in out.details.items() if k.endswith("_s")},
             "verify_s": verify_s}
    if forced:
        details["forced"] = forced
    if limit is not None:
        details.setdefault("time_limit_s", limit)  # the limit given, not what was left of it
    cert = make_certificate(spec, method=m.kind, algorithm=m.algorithm, status=status,
                            evaluation=evaluation, bound=bound, bound_source=bound_source,
                            times=times, reported_objective=(out.reported_objective
                                                             if v.solution is out.solution
                                                             else None),
                            primal_source=v.primal_source, seed=options.seed, details=details,
                            problem_size=spec.size(instance))
    result = Result(problem=spec.name, method=m.kind, algorithm=m.algorithm, status=status,
                    objective=objective, bound=bound, bound_source=bound_source, gap=gap,
                    time_s=elapsed, message=message, solution=v.solution, certificate=cert,
                    evaluation=evaluation, details=details, instance=instance)
    if not retry:
        return result
    return _retried(result, lambda: run_method(spec, instance, m, dataclasses.replace(
        options, presolve=False, time_limit=None if limit is None else max(
            limit - (time.perf_counter() - t0), MIN_LEFT_S), started=None), force),
        spec.sense, lambda r: _feasible_value(r, r.objective), v, t0)


MIN_LEFT_S = 0.05  # less than this left of a limit: the method is not started


def _presolve_retry(v: Any, details: dict, presolve: bool | None, limit: float | None,
                    t0: float) -> bool:
    """Whether a run is solved again without presolve: its bound was refuted by a point, the
    solve used presolve by the formulation's own setting (not the caller's), and time is
    left."""
    left = math.inf if limit is None else limit - (time.perf_counter() - t0)
    return (bool(v.record.get("refuted")) and details.get("presolve") is True
            and presolve is None and left >= MIN_LEFT_S)


def _feasible_value(r: Result, value: float | None) -> float | None:
    """`value` (the run's objective in the terms compared) where the run's answer is feasible
    for the evaluator, else None: a retry weighs only feasible answers."""
    return value if r.evaluation is not None and r.evaluation.feasible else None


def _retried(first: Result, again: Callable[[], Result], sense: str,
             value: Callable[[Result], float | None], refuted: Any, t0: float) -> Result:
    """The better of a run whose presolved bound was refuted (`first`) and its run without
    presolve (`again()`): the second unless the first's answer is better (a second run cut by
    the time left may end worse; a proven one only by more than the tolerance). Either way the
    refuted first bound is on record (`details.presolve_retry`) and the time counts both runs."""
    second = again()
    total = time.perf_counter() - t0
    v1, v2 = value(first), value(second)
    ahead = v1 is not None and (v2 is None or (better(sense, v1, v2) and (
        not second.proven_optimal or abs(v1 - v2) > tolerance(v1, v2))))
    kept = first if ahead else second
    record = {"refuted": refuted.record["refuted"], "first_s": total - second.time_s,
              "kept": "without presolve" if kept is second else "the first run's answer",
              "why": "the presolved solve's bound was crossed by a point of the model: solved "
                     "again without presolve"}
    if kept is first:
        record["second"] = {"status": str(second.status), "objective": v2}
        warnings.warn(refuted.message, RuntimeWarning, stacklevel=3)
    kept.details["presolve_retry"] = record
    if kept.certificate is not None:
        kept.certificate.details["presolve_retry"] = record
        kept.certificate.times["total_s"] = total
    return dataclasses.replace(kept, time_s=total)


def _import_solvers(spec: ProblemSpec, m: Method) -> None:
    """Import what an exact or bound method runs on (its solver module, the problem's models,
    Pyomo and HiGHS through them): done here, the imports count against its time limit."""
    import importlib

    from .models.pyomo_env import without_scipy_extras
    from .problems.catalogue import Lazy

    without_scipy_extras()
    if isinstance(m.run, Lazy):
        m.run.resolve()
    if spec.models:
        importlib.import_module(spec.models)
    importlib.import_module("crowdopt.solvers.exact_runner")


def _source_of(algorithm: str, bound_source: str | None) -> str:
    """A bound's name as comparisons print it: 'algorithm:source'."""
    return f"{algorithm}:{bound_source}" if bound_source else algorithm


def solver_floor(details: Any) -> float:
    """The solver's absolute noise on a run's numbers (`SOLVER_ABS_TOL` times the magnitude of
    the objective's terms at the answer, `objective_unit`), 0 where no solver number is
    involved."""
    unit = details.get("objective_unit") if isinstance(details, dict) else None
    return SOLVER_ABS_TOL * float(unit) if unit and unit > 0 else 0.0


def solve(instance: Instance, method: str = "fast", *, time_limit: float | None = None,
          threads: int = 1, seed: int = 0, mip_rel_gap: float = 0.0,
          presolve: bool | None = None, force: bool = False,
          search_time: float | None = None, started: float | None = None) -> Result:
    """Solve an instance with one method and certify the answer.

    Args:
        instance: an instance object (`OlasSelectInstance.from_arrays(...)` and the other
            problems' constructors, `generate`, `load`); a file or document: `load(path)`
            first.
        method: 'fast' (the paper's fast path), 'exact' (the first exact method that applies
            to the instance: past one method's size guard the next one runs; none left is an
            InputError), 'bound', or an algorithm name (`crowdopt solve --help`, or
            `[m.algorithm for m in instance.spec.methods]`).
        time_limit: seconds per solve (a year or more: no limit at all); None = the method's
            default (MILP_DEFAULT_TIME = 120 s for MILPs, none for the others). A MILP stopped
            by it returns status 'time_limit' with its incumbent and bound.
        threads: HiGHS threads.
        seed: the seed of randomized methods.
        mip_rel_gap: HiGHS's relative gap (0 = proofs; a run stopped at a larger gap is
            'feasible', not 'optimal').
        presolve: force HiGHS presolve on or off (None = each model's own setting).
        force: run the method even past its time guard (its fitted time prediction exceeds
            the default limit: `crowdopt.solvers.guards`), under the time limit; memory guards
            still refuse.
        search_time: seconds of a local-search heuristic's search (CL-TAP's cbp+ls and
            best-of; None = its default, 2 s); a time limit only cuts it.
        started: the `time.perf_counter()` reading at which the limit's clock started (the
            command line passes its own start: reading and imports count); None = this call.

    Returns:
        A frozen `Result`: status, objective (recomputed by the problem's evaluator), bound,
            gap, solution (typed, by the instance's ids), certificate; `print(result)` is one
            line, `result.summary()` a few, `result.to_dict()` the CLI's JSON.

    Raises:
        InputError: a bad argument, or no exact method left for the instance (one line).
    """
    t0 = time.perf_counter() if started is None else real(started, "started")
    spec, inst = spec_and_instance(instance)
    opts = dataclasses.replace(_options(time_limit, threads, seed, mip_rel_gap, presolve,
                                        search_time), started=t0)
    force = _flag(force, "force")
    return run_method(spec, inst, spec.resolve(_method_name(method), inst, force), opts, force)


# ----------------------------------------------------------------------------- side by side
def _settle_runs(spec: ProblemSpec, results: list[Result], given: Any = None,
                 solution: Any = None) -> tuple[list[Result], float | None, str | None]:
    """The verification step across the runs of a comparison or a certificate: a bound that
    any run's feasible answer (or the given solution, evaluation `given`) crosses is refuted,
    dropped with the proof made from it (that run becomes `feasible`, its certificate loses
    the bound); the best bound is the tightest one left."""
    cands = [Candidate(r.algorithm, r.solution, r.evaluation, float(r.objective))
             for r in results if r.evaluation is not None and r.evaluation.feasible
             and r.objective is not None and math.isfinite(r.objective)]
    if given is not None and given.feasible and math.isfinite(given.objective):
        cands.append(Candidate("given", solution, given, float(given.objective)))
    claims = [Claim(float(r.bound), f"{r.algorithm}:{r.bound_source}", r.algorithm,
                    solver_floor(r.details)) for r in results
              if r.bound is not None and r.status not in (Status.ERROR, Status.SKIPPED)]
    settled = settle(spec.sense, cands, claims)
    refuted = settled.refuted_owners()
    out = []
    for r in results:
        if r.algorithm in refuted and r.bound is not None:
            why = refutation_message(settled, r.algorithm)
            warnings.warn(f"{r.algorithm}: {why}", RuntimeWarning, stacklevel=3)
            hit = next(x for x in settled.refuted if x["owner"] == r.algorithm)
            r = r.replace(status=Status.FEASIBLE if r.status is Status.OPTIMAL else r.status,
                          bound=None, bound_source=None, gap=None, message=why,
                          certificate=without_bound(r.certificate, why),
                          details={**r.details, "refuted_by": {
                              "method": hit["by"], "objective": hit["crossed_by"],
                              "claimed": hit["bound"]}})
        out.append(r)
    b = settled.bound
    return out, (b.value if b else None), (b.source if b else None)


def _best_bound(spec: ProblemSpec, results: list[Result]) -> tuple[float | None, str | None]:
    best, source = None, None
    for r in results:
        if r.bound is None or r.status in (Status.ERROR, Status.SKIPPED):
            continue
        better = best is None or (r.bound > best if spec.sense == "min" else r.bound < best)
        if better:
            best, source = r.bound, f"{r.algorithm}:{r.bound_source}"
    return best, source


def _best_primal(spec: ProblemSpec, results: list[Result]) -> Result | None:
    """The best feasible result; among equal objectives the first fast path (the paper's
    algorithm is what a certificate names when it is optimal), else the first in the list."""
    best = None
    for r in sorted(results, key=lambda r: r.method != "fast"):
        if r.evaluation is None or not r.evaluation.feasible:
            continue
        if best is None or (r.objective < best.objective if spec.sense == "min"
                            else r.objective > best.objective):
            best = r
    return best


def warm_up(spec: ProblemSpec, instance: Any, methods: list[Method], force: bool = False) -> float:
    """Pay the one-off costs before anything is timed; returns the seconds spent.

    Runs the first applicable fast method once (module imports, numpy's first calls, the
    instance's cached matrices) and, when an exact or bound method will run, solves a
    one-variable model through the HiGHS adapter (Pyomo, its compiler and HiGHS loaded).
    """
    t0 = time.perf_counter()
    runnable = [m for m in methods if m.refuses(instance, force) is None]
    fast = [m for m in runnable if m.kind == "fast"]
    if fast:
        try:
            fast[0].run(instance, RunOptions())
        except CrowdoptError:
            pass  # the timed run reports it
    if any(m.kind in ("exact", "bound") for m in runnable):
        import pyomo.environ as pyo

        from .solvers.highs import solve_model as adapter_solve

        m = pyo.ConcreteModel()
        m.x = pyo.Var(domain=pyo.Binary)
        m.c = pyo.Constraint(expr=m.x <= 1)
        m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
        adapter_solve(m)
    return time.perf_counter() - t0


def _pick(spec: ProblemSpec, inst: Any, name: str, force: bool = False) -> Method:
    """The method `name` stands for in a comparison: a kind falls through size guards like in
    `solve`; a method that does not apply is kept (and reported 'skipped', not an error)."""
    try:
        return spec.resolve(name, inst, force)
    except InputError:
        pass
    try:
        return spec.method(name)
    except InputError as exc:  # an unknown name: the field the caller gave it in
        raise InputError("algorithms", exc.expected, exc.found, note=exc.note) from None


# certify: the fast paths' part of what is left of an overall limit once the cheapest bound ran
# (the rest is for the proofs: at t = 1000, a = 100 the constructions alone took the whole 10 s)
FAST_SHARE = 0.5
# search_time above a year is not a search budget anyone means
MAX_SEARCH_S = NO_LIMIT_S


class _Clock:
    """One overall time budget for a run of several methods, and each method's share of it:
    its own limit (`method_time_limit`, else the method's default) cut to what is left."""

    MIN_S = 0.05  # less than this left: the next method is skipped, not started

    def __init__(self, total: float | None, per_method: float | None,
                 force: bool = False, no_method_limit: bool = False,
                 t0: float | None = None) -> None:
        self.t0 = time.perf_counter() if t0 is None else t0
        self.total, self.per_method = total, per_method
        self.force = force  # run methods past their time guards
        self.no_method_limit = no_method_limit  # a per-method limit of a year or more

    def left(self) -> float | None:
        return None if self.total is None else self.total - (time.perf_counter() - self.t0)

    def used_up(self) -> str | None:
        left = self.left()
        if left is not None and left < self.MIN_S:
            return f"not run: the overall time limit ({self.total:g} s) was used up"
        return None

    def share(self, fraction: float) -> _Clock:
        """A clock for a phase that may use `fraction` of what is left of the overall limit
        (the same clock when there is no overall limit)."""
        left = self.left()
        if left is None:
            return self
        part = _Clock(max(fraction * left, 0.0), self.per_method, self.force,
                      self.no_method_limit)
        part.t0 = time.perf_counter()
        return part

    def run(self, spec: ProblemSpec, inst: Any, m: Method, opts: RunOptions) -> Result:
        reason = self.used_up()
        if reason:
            return Result(problem=spec.name, method=m.kind, algorithm=m.algorithm,
                          status=Status.SKIPPED, message=reason, instance=inst)
        limit = None if self.no_method_limit else (
            self.per_method if self.per_method is not None else m.time_limit)
        left = self.left()
        if left is not None:
            limit = left if limit is None else min(limit, left)
        return run_method(spec, inst, m, dataclasses.replace(
            opts, time_limit=limit, no_time_limit=limit is None and self.no_method_limit),
            self.force)


def _limits(total_time_limit: Any, time_limit: Any) -> tuple[float | None, float | None, bool]:
    """(overall, per method) seconds, checked at the boundary (a year or more: no limit,
    None), and whether the per-method limit was given as no limit."""
    per_method = time_limit_of(time_limit, "time_limit")
    return (time_limit_of(total_time_limit, "total_time_limit"), per_method,
            time_limit is not None and per_method is None)


def compare(instance: Instance, *, algorithms: list[str] | None = None,
            time_limit: float | None = None, threads: int = 1, seed: int = 0,
            mip_rel_gap: float = 0.0, presolve: bool | None = None,
            warmup: bool = True, total_time_limit: float | None = None,
            force: bool = False, search_time: float | None = None,
            started: float | None = None) -> Comparison:
    """Every fast path and exact model side by side (or only `algorithms`), each measured
    against the best bound found in the run; when no exact model gives a bound (all too
    large), the bound methods join in.

    Args:
        instance: an instance object, as in `solve`.
        algorithms: only these algorithm names, each once (None: every fast and exact method;
            an empty list is refused).
        time_limit: seconds per method; None = each method's default (120 s for MILPs); a
            year or more (validate.NO_LIMIT_S) = no limit for any method, as for
            total_time_limit.
        threads: HiGHS threads.
        seed: the seed of randomized methods.
        mip_rel_gap: HiGHS's relative gap (0 = proofs).
        presolve: force HiGHS presolve on or off (None = each model's setting).
        warmup: True or False, like force: pay one-off costs (imports, the first HiGHS solve,
            the instance's cached matrices) before timing, reported apart as `warmup_s`
            (inside the overall limit).
        total_time_limit: seconds for the whole comparison (None: no overall limit); each
            method gets at most what is left, and a method with nothing left is reported
            'skipped'.
        force: run exact methods past their time guards too (under the time limits).
        search_time: seconds of each local-search heuristic's search (None: its default,
            2 s); the time limits only cut it.
        started: the `time.perf_counter()` reading at which the overall limit's clock
            started (the command line passes its own start); None = this call.

    Returns:
        A `Comparison`: a sequence of `Result`s with the run's `bound`, `best`, `table()` and
            `to_dict()` (the CLI's JSON).
    """
    t0 = time.perf_counter() if started is None else real(started, "started")
    spec, inst = spec_and_instance(instance)
    opts = _options(None, threads, seed, mip_rel_gap, presolve, search_time)
    total, per_method, no_limit = _limits(total_time_limit, time_limit)
    clock = _Clock(total, per_method, _flag(force, "force"), no_limit, t0)
    warmup = _flag(warmup, "warmup")
    if algorithms is not None and (isinstance(algorithms, str) or not isinstance(
            algorithms, list | tuple) or not algorithms):
        raise InputError("algorithms", "a non-empty list of algorithm names (None: every fast "
                         "and exact method)", algorithms)
    if algorithms is not None and len(set(map(str, algorithms))) < len(algorithms):
        raise InputError("algorithms", "each algorithm name once", list(algorithms))
    methods = [_pick(spec, inst, _method_name(a, "algorithms"), clock.force) for a in algorithms] \
        if algorithms is not None else [
        m for m in spec.methods if m.kind in ("fast", "exact")]
    warm = warm_up(spec, inst, methods, clock.force) if warmup else 0.0
    results = [clock.run(spec, inst, m, opts) for m in methods]
    results, best, source = _settle_runs(spec, results)
    if best is None and algorithms is None:
        # every exact model skipped (too large) or failed: fall back to the bound methods
        bounds = [m for m in spec.methods if m.kind == "bound"]
        if warmup and bounds and not clock.used_up():
            warm += warm_up(spec, inst, bounds, clock.force)
        results += [clock.run(spec, inst, m, opts) for m in bounds]
        results, best, source = _settle_runs(spec, results)
    out = []
    for r in results:
        if r.evaluation is not None and r.evaluation.feasible and best is not None:
            lower, upper = lower_upper(spec.sense, r.objective, best)
            r = r.replace(gap=gap_ratio(lower, upper)[0],
                          certificate=with_bound(r.certificate, best, source))
        out.append(r)
    return Comparison(problem=spec.name, size=spec.size(inst), results=tuple(out), bound=best,
                      bound_source=source, warmup_s=warm)


def proof_order(methods: list[Method]) -> list[Method]:
    """Cheapest proof first: methods that always finish quickly (closed forms, LPs, DPs,
    size-guarded enumerations: no default time limit) before MILPs, each group in the
    catalogue's order."""
    return sorted(methods, key=lambda m: m.time_limit is not None)


def _closed_by(spec: ProblemSpec, objective: float | None, primal: str | None,
               runs: list[Result], gap: float) -> str | None:
    """Why no further proof is needed (the best bound meets the objective: gap 0, or a
    relative gap within `gap`), else None."""
    bound, source = _best_bound(spec, runs)
    if objective is None or bound is None:
        return None
    g, rel, _ = gap_ratio(*lower_upper(spec.sense, objective, bound))
    if g is None or g < 0 or not (g == 0.0 or rel <= gap):
        return None
    what = "gap 0" if g == 0.0 else f"relative gap {rel:.3g} <= --gap {gap:g}"
    return f"not needed: the bound of {source} meets the objective of {primal} ({what})"


def certify(instance: Instance, solution: Solution | Result | dict | None = None, *, time_limit: float | None = None,
            threads: int = 1, seed: int = 0, mip_rel_gap: float = 0.0,
            presolve: bool | None = None, total_time_limit: float | None = None,
            gap: float = 0.0, force: bool = False, max_steps: int | None = None,
            max_rounds: int | None = None, colgen_rounds: int | None = None,
            branch_nodes: int | None = None, search_time: float | None = None,
            started: float | None = None) -> Certificate:
    """The quality certificate of a solution: lower and upper bounds on the optimum, gap and
    ratio, feasibility, and every check that failed.

    The bound is the tightest one among the exact and bound methods, run cheapest proof
    first (`proof_order`) until a bound meets the objective; the methods left are listed in
    `details.skipped` with the reason. The cheapest one (the first quick bound: a closed form
    where the problem has one) runs before anything else, even past the overall limit, so a
    certificate always has the cheapest bound there is; the fast paths then share at most
    FAST_SHARE of the limit.

    Args:
        instance: an instance object, as in `solve`.
        solution: a typed solution, a `Result`, or its JSON form (ids or indices); None = the
            best solution the fast paths (and exact models) find.
        time_limit: seconds per method; None = each method's default (120 s for MILPs); a
            year or more (validate.NO_LIMIT_S) = no limit for any method, as for
            total_time_limit.
        threads: HiGHS threads.
        seed: the seed of randomized methods.
        mip_rel_gap: HiGHS's relative gap (0 = proofs).
        presolve: force HiGHS presolve on or off (None = each model's setting).
        total_time_limit: seconds for the whole certification (None: no overall limit); each
            method gets at most what is left, a method with nothing left is skipped.
        gap: stop once the relative gap is at most this (0 = only a proof stops early).
        force: run exact methods past their time guards too (under the time limits).
        max_steps: a deterministic work budget of local-search steps per method, where a
            method has one (CL-TAP): the certificate is then the same on a loaded and on a
            quiet machine unless a time limit binds first (the method's details say which
            limit stopped it). None = time limits only.
        max_rounds: a work budget of column-generation and LP rounds per method, as
            max_steps.
        colgen_rounds: the column-generation method's own round budget (None: max_rounds);
            its pricing rounds cost far more than the configuration LP's.
        branch_nodes: the node LPs of the configuration LP with branching (CL-TAP
            `config-branch`; None: max_rounds): its tree of prefix lengths needs far more of
            them at the papers' sizes than the configuration LP needs rounds.
        search_time: seconds of each local-search heuristic's search (None: its default,
            2 s); the time limits only cut it.
        started: the `time.perf_counter()` reading at which the overall limit's clock
            started (the command line passes its own start); None = this call.

    Returns:
        A frozen `Certificate` (`certified`, `proven_optimal`, `lower`, `upper`, `gap`,
            `ratio`, `bound_source`, `failures`, ...); `to_dict()` is `crowdopt certify
            --json`.
    """
    spec, inst = spec_and_instance(instance)
    solution = read_solution_of(spec, inst, solution) if solution is not None else None
    opts = dataclasses.replace(
        _options(None, threads, seed, mip_rel_gap, presolve, search_time),
        max_steps=None if max_steps is None else integer(max_steps, "max_steps", lo=1),
        max_rounds=None if max_rounds is None else integer(max_rounds, "max_rounds", lo=1),
        colgen_rounds=None if colgen_rounds is None else integer(colgen_rounds, "colgen_rounds",
                                                                 lo=1),
        branch_nodes=None if branch_nodes is None else integer(branch_nodes, "branch_nodes", lo=1))
    stop_gap = real(gap, "gap", lo=0.0)
    total, per_method, no_limit = _limits(total_time_limit, time_limit)
    t0 = time.perf_counter() if started is None else real(started, "started")
    clock = _Clock(total, per_method, _flag(force, "force"), no_limit, t0)
    runs: list[Result] = []
    given = spec.evaluate(inst, solution) if solution is not None else None
    provers = proof_order([m for m in spec.methods if m.kind in ("exact", "bound")])
    first = next((m for m in provers if m.time_limit is None
                  and m.refuses(inst, clock.force) is None), None)
    if first is not None:  # the cheapest bound, whatever the clock says: never no bound at all
        runs.append(run_method(spec, inst, first, opts, clock.force))
        provers.remove(first)
    if solution is None:
        fast = clock.share(FAST_SHARE)
        runs += [fast.run(spec, inst, m, opts) for m in spec.methods if m.kind == "fast"]
    stop: str | None = None
    skipped: list[dict] = []
    for m in provers:
        if stop is None:
            if given is not None:
                objective, primal = (given.objective if given.feasible else None), "given"
            else:
                best = _best_primal(spec, runs)
                objective = best.objective if best else None
                primal = best.algorithm if best else None
            stop = _closed_by(spec, objective, primal, runs, stop_gap) or clock.used_up()
        if stop is not None:
            skipped.append({"algorithm": m.algorithm, "reason": stop})
            runs.append(Result(problem=spec.name, method=m.kind, algorithm=m.algorithm,
                               status=Status.SKIPPED, message=stop, instance=inst))
            continue
        runs.append(clock.run(spec, inst, m, opts))
    runs, bound, bound_source = _settle_runs(spec, runs, given, solution)
    if solution is not None:
        evaluation = given
        primal_source = "given"
        status = Status.FEASIBLE
        algorithm = "given"
    else:
        best = _best_primal(spec, runs)
        evaluation = best.evaluation if best else None
        primal_source = best.algorithm if best else None
        algorithm = primal_source or "none"
        status = Status.FEASIBLE if best else Status.NO_SOLUTION
        solution = best.solution if best else None
    failures = []
    errors = [r for r in runs if r.status is Status.ERROR]
    if errors:
        failures.append("a method failed: " + "; ".join(f"{r.algorithm}: {r.message}"
                                                      for r in errors))
    if (any(r.status is Status.INFEASIBLE for r in runs) and evaluation is not None
            and evaluation.feasible):
        failures.append("a method reported infeasible but a feasible solution exists")
    out_of_time = any(r.status is Status.TIME_LIMIT for r in runs) or any(
        "overall time limit" in s["reason"] for s in skipped)
    return make_certificate(
        spec, method="certify", algorithm=algorithm, status=status, evaluation=evaluation,
        bound=bound, bound_source=bound_source,
        times={"total_s": time.perf_counter() - t0,
               **{r.algorithm + "_s": r.time_s for r in runs if r.status is not Status.SKIPPED}},
        primal_source=primal_source, seed=seed, failures=failures,
        details={"runs": [r.to_dict(solution=False) for r in runs], "skipped": skipped,
                 "order": [r.algorithm for r in runs], "time_limit_hit": out_of_time,
                 "total_time_limit_s": clock.total, "time_limit_s": clock.per_method,
                 "max_steps": opts.max_steps, "max_rounds": opts.max_rounds,
                 "colgen_rounds": opts.colgen_rounds, "branch_nodes": opts.branch_nodes,
                 "stop_gap": stop_gap},
        problem_size=spec.size(inst),
        solution=spec.solution_to_dict(inst, solution) if solution is not None else None)


# ----------------------------------------------------------------------------- Pyomo models
def build_model(instance: Instance, method: str | None = None) -> pyo.ConcreteModel:
    """The Pyomo `ConcreteModel` of an exact method, indexed by the instance's ids (its
    integer positions where it has none), ready to extend with your own constraints.

    Solve the (modified) model with `solve_model`. Imports Pyomo.

    Args:
        instance: an instance object, as in `solve`.
        method: an exact method with a model (`instance.spec.builders()` lists them); None =
            the first one that applies.

    Returns:
        The model, with a record of what built it (`solve_model` reads it).
    """
    from .models.pyomo_env import without_scipy_extras

    spec, inst = spec_and_instance(instance)
    without_scipy_extras()
    builders = spec.builders()
    if method is None:
        method = next((a for a in builders if spec.method(a).applicable(inst) is None), None)
        if method is None:
            raise InputError("method", "an exact model that applies to this instance",
                             "none", note="; ".join(f"{a}: {spec.method(a).applicable(inst)}"
                                                    for a in builders))
    if method not in builders:
        raise InputError("method", "an exact method with a Pyomo model (" +
                         ", ".join(builders) + ")", method)
    reason = spec.method(method).applicable(inst)
    if reason:
        raise InputError("method", f"a model that fits this instance ({spec.size(inst)})",
                         method, note=reason)
    # the model carries the record of what was built (`models.formulation.Built`): the
    # instance's digest (solve_model checks the pairing) and the model's snapshot (solve_model
    # sees what the user changed since, `models.snapshot.compare`)
    return builders[method](inst, _fingerprint(spec, inst))


def _fingerprint(spec: ProblemSpec, inst: Any) -> str:
    """A digest of an instance's data: a model built from one instance is refused with
    another (its variables are indexed by the other's ids; decoding would fail or mislead).
    Arrays are hashed as bytes (at 100,000 points the instance's JSON took 0.08 s, twice per
    extended solve); caches and the generator's notes (`meta`) are left out."""
    import hashlib
    import json

    import numpy as np

    h = hashlib.sha256(spec.name.encode())
    if not dataclasses.is_dataclass(inst):
        h.update(json.dumps(spec.to_dict(inst), sort_keys=True, default=str).encode())
        return h.hexdigest()
    for f in dataclasses.fields(inst):
        if f.name.startswith("_") or f.name == "meta":
            continue
        v = getattr(inst, f.name)
        h.update(f.name.encode())
        if isinstance(v, np.ndarray):
            h.update(f"{v.dtype.str}{v.shape}".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        else:
            h.update(repr(v).encode())
    return h.hexdigest()


def _record_of(spec: ProblemSpec, inst: Any, model: Any) -> Any:
    """The record `build_model` left on `model` (None: a model it did not make); a model that
    is no Pyomo model, of another problem or instance, or whose record was overwritten, is a
    one-line InputError."""
    import pyomo.environ as pyo

    from .models.formulation import Built, tag_of

    if not isinstance(model, pyo.Block):
        raise InputError("model", "a Pyomo model (crowdopt.build_model(instance))",
                         type(model).__name__)
    rec = tag_of(model)
    if rec is None:
        return None
    if not isinstance(rec, Built):
        raise InputError("model.crowdopt_build", "the record crowdopt.build_model leaves on "
                         "its model, as it left it", type(rec).__name__)
    forms = _formulations(spec)
    if rec.problem != spec.name or rec.method not in forms:
        raise InputError("model", f"a {spec.name} model (crowdopt.build_model(instance))",
                         f"a {rec.problem} {rec.method} model")
    if rec.instance is not None and rec.instance != _fingerprint(spec, inst):
        raise InputError("model", "a model built from this instance "
                         "(crowdopt.build_model(instance))", f"the model {model.name!r} of "
                         "another instance")
    return rec


def _formulations(spec: ProblemSpec) -> dict:
    import importlib

    return getattr(importlib.import_module(spec.models), "FORMULATIONS", {})


def _one_objective(model: Any) -> None:
    """A model solve_model takes has exactly one active objective (a feasibility model has
    no bound to certify; two are not one problem)."""
    import pyomo.environ as pyo

    objs = list(model.component_data_objects(pyo.Objective, active=True, descend_into=True))
    if len(objs) != 1:
        raise InputError("model", "one active objective",
                         ", ".join(o.name for o in objs[:4]) if objs else "none")


def _fixed_values(model: Any) -> None:
    """Every fixed variable holds a finite value within its bounds (an integer one an
    integer): a binary fixed to 5 is a one-line InputError naming it, not a solve."""
    import math

    import pyomo.environ as pyo

    for v in model.component_data_objects(pyo.Var, descend_into=True):
        if not v.fixed:
            continue
        x = v.value
        lo, hi = v.lb, v.ub
        if not isinstance(x, int | float) or not math.isfinite(x):
            raise InputError(f"model.{v.name}", "a fixed variable with a finite value", x)
        if ((lo is not None and x < lo - 1e-9 * max(1.0, abs(lo)))
                or (hi is not None and x > hi + 1e-9 * max(1.0, abs(hi)))):
            raise InputError(f"model.{v.name}", f"a value within its bounds [{lo}, {hi}]", x)
        if v.is_integer() and abs(x - round(x)) > 1e-9:
            raise InputError(f"model.{v.name}", f"an integer (its domain is {v.domain.name})", x)


def _same_variable(model: Any, snap: Any, name: str) -> None:
    """The variable `name` the formulation's decoder or passes read is the one build_model
    made, with the same entries; else a one-line InputError naming it."""
    from .models.snapshot import same_objects

    built = snap.variable(name)
    if built is None:
        return
    comp, data = built
    now = model.component(name)
    expected = f"the variable {name} build_model made ({len(data)} entries)"
    if now is None:
        raise InputError(f"model.{name}", expected, "deleted")
    if now is not comp:
        raise InputError(f"model.{name}", expected, f"another {now.ctype.__name__} "
                         f"({len(now) if now.is_indexed() else 1} entries)")
    sparse = id(comp) in snap.defaults
    entries = list(comp._data.values() if sparse else comp.values())
    if sparse:  # entries made on demand join, none may go
        have = {id(v) for v in entries}
        if not all(id(v) in have for v in data):
            raise InputError(f"model.{name}", expected, "entries deleted")
    elif not same_objects(entries, data):
        raise InputError(f"model.{name}", expected, f"{len(comp)} entries")


def _decoder(spec: ProblemSpec) -> Any:
    """The problem's decoder for a model build_model did not make: a model without the
    variables it reads (or of another shape) is a one-line InputError, not a traceback."""
    def decode(inst: Any, model: Any, res: Any) -> Any:
        try:
            return spec.decode(inst, model, res)
        except (AttributeError, KeyError, TypeError, IndexError, ValueError) as exc:
            raise InputError("model", f"the variables of a {spec.name} model as "
                             "crowdopt.build_model makes them (its decoder reads them)",
                             f"{type(exc).__name__}: {exc}") from None
    return decode


def _route(spec: ProblemSpec, model: Any, rec: Any) -> tuple[Any, dict, Any]:
    """(the formulation to run, what the details say about the route, the model's change):
    a formulation's passes where they stay exact under the user's change
    (`Formulation.exact_under`: the kind of change and the formulation's own condition on it),
    else one plain solve of the model as given; a model build_model did not make: one plain
    solve (change None)."""
    from .models.formulation import ONE_SOLVE, Formulation, plain
    from .models.snapshot import ADDED_ROWS, UNCHANGED, compare

    if rec is None:
        form = Formulation(spec.name, "model", lambda inst: model, _decoder(spec))
        return form, {"change": "unknown (the model carries no record of build_model)",
                      "passes": ONE_SOLVE, "passes_why": "a model build_model did not make "
                      "is solved as given"}, None
    form = _formulations(spec)[rec.method]
    change = compare(rec.snapshot, model)
    for name in form.reads if change.kind != UNCHANGED else ():
        _same_variable(model, rec.snapshot, name)
    if change.kind != UNCHANGED:
        _fixed_values(model)
    info = {"change": change.what, "change_kind": change.kind,
            **({"deleted": list(change.deleted)} if change.deleted else {})}
    why_not = form.exact_under(model, change)
    if why_not is None:
        why = {UNCHANGED: "the model is as build_model returned it",
               ADDED_ROWS: "added rows only restrict the model, and they meet the passes' "
                           "condition; the passes carry them into every solve and stay exact"}.get(
            change.kind, "its passes are exact whatever the model holds")
        return form, {**info, "passes": form.route, "passes_why": why}, change
    return plain(form), {**info, "passes": ONE_SOLVE, "passes_why": why_not}, change


def decode(instance: Instance, model: pyo.ConcreteModel, result: HighsResult) -> Solution:
    """The typed solution that a solved model of this instance holds.

    Args:
        instance: the instance the model is of.
        model: a model built by `build_model` or a problem's builder, possibly extended,
            solved.
        result: the adapter's `HighsResult` of that solve (`crowdopt.solvers.highs`).

    Returns:
        The typed solution.
    """
    spec, inst = spec_and_instance(instance)
    return spec.decode(inst, model, result)


def solve_model(instance: Instance, model: pyo.ConcreteModel, *, time_limit: float | None = None,
                threads: int = 1, mip_rel_gap: float = 0.0,
                presolve: bool | None = None) -> Result:
    """Solve a (user-modified) Pyomo model of this instance through the one HiGHS adapter,
    decode its solution and certify it against the MODEL'S OWN bound.

    What the certificate claims, and checks:
    - objective: the problem's evaluator on the decoded solution (never the solver's number);
    - bound: the model's own MIP dual bound (its LP optimum for an LP), so `gap == 0` proves
      the solution optimal FOR THE MODEL AS GIVEN (with your constraints), not for the
      original problem; `details.scope` says so;
    - feasibility: for the model's rows, bounds and integrality (the adapter's max violation
      of the returned point, <= 1e-6) AND for the original problem (the evaluator): added
      constraints only restrict, so a point infeasible for the original problem means the
      model was relaxed or decoded wrongly, and the certificate fails;
    - the model's objective at the point must equal the evaluator's (within 1e-6) and have
      the problem's sense: the bound is a bound on the model's objective, and transfers to the
      problem's only where the two agree. A model with a changed objective (e.g. a penalty
      term) is solved but not certified; certify such a model yourself.

    Which route runs (`details.passes`, `details.passes_why`, `details.change`): the model
    `build_model` returned, unchanged, is solved with its formulation's HiGHS settings and
    passes exactly as `solve(instance, method)` solves it (the TU models' LP with its
    integrality check, worker selection's min-|S| pass, CL-TAP's head-cover search). A changed
    model keeps those passes only where they stay exact under the change (the TU LP route for
    any change; the min-|S| pass and the head-cover search when rows, and variables in them,
    were only added); any other change, and a model build_model did not make, gets one plain
    HiGHS solve of the model as given (gap 0). Every model reaches HiGHS as written: fixed
    variables at their value, bounds as set, deactivated components left out.

    Refused with a one-line InputError naming the component: no Pyomo model; a model of
    another problem or instance, or whose `crowdopt_build` record was overwritten; none or
    two active objectives; nonlinear terms; a variable the decoder reads deleted or reshaped;
    a variable a row uses but the model no longer holds; a fixed value outside its bounds or
    domain. A row whose variables are all fixed and that cannot hold is status infeasible.

    Args:
        instance: the instance the model is of.
        model: the Pyomo model: `build_model(instance, method)`, changed or not, or a model
            of your own over the same variables.
        time_limit: seconds; None = MILP_DEFAULT_TIME (120 s).
        threads: HiGHS threads.
        mip_rel_gap: HiGHS's relative gap (0 = proofs).
        presolve: force HiGHS presolve on or off (None = the formulation's own setting).

    Returns:
        A `Result` (method 'model').

    Raises:
        InputError: a model that cannot be passed (one line naming the component).
    """
    from .solvers.exact_runner import run
    from .solvers.highs import InfeasibleRow

    spec, inst = spec_and_instance(instance)
    checked = _options(time_limit, threads, 0, mip_rel_gap, presolve)
    limit = checked.time_limit if time_limit is not None else MILP_DEFAULT_TIME
    t0 = time.perf_counter()
    rec = _record_of(spec, inst, model)
    with peeking(model):  # a model whose registered part is built on first need stays unbuilt
        _one_objective(model)
        if rec is None:
            _fixed_values(model)
        form, route, change = _route(spec, model, rec)
    opts = RunOptions(time_limit=limit, threads=threads, mip_rel_gap=mip_rel_gap,
                      presolve=presolve, no_time_limit=checked.no_time_limit)
    try:
        done = run(form, inst, opts, model=model, change=change)
    except InfeasibleRow as exc:
        return _infeasible_row(spec, inst, model, str(exc), route, time.perf_counter() - t0)
    except InputError as exc:  # Pyomo's compiler on a row of a deleted variable: name it
        if exc.field != "model" or not route.get("deleted"):
            raise
        raise InputError(f"model.{route['deleted'][0]}", "a variable of the model",
                         "deleted while a row or the objective still uses it") from None
    res, hm = done.result.res, done.model
    algorithm = str(model.name)
    # the model's objective is the problem's where build_model made it and the user left its
    # terms, sense, Expressions and Params alone: only then do its values and bound speak of
    # the problem's objective
    same = change is not None and change.same_objective and res.sense == spec.sense
    scope = (f"optimality is for the model {model.name!r} as given (its own rows and bound), "
             f"not for the original {spec.name} problem")
    details = {**res.summary(), **done.details, **route, "scope": scope, "time_limit_s": limit,
               "formulation": form.method}
    solution = done.result.solution
    evaluation = spec.evaluate(inst, solution) if solution is not None else None
    status = res.status
    if status is Status.OPTIMAL and mip_rel_gap > 0 and res.abs_gap:
        status = Status.FEASIBLE
    bound_source = (f"model {model.name!r}: " +
                    ("MIP dual bound" if res.is_mip else "LP optimum (its own bound)"))
    floor = solver_floor(details)
    if status is Status.OPTIMAL and res.objective is not None and res.bound is not None:
        g = gap_ratio(*lower_upper(res.sense, res.objective, res.bound), floor)[0]
        if g is not None and g > 0:
            status = Status.FEASIBLE
    # the verification step, in the model's terms: its answer a point of it, the fast plans
    # that are points as a net, a bound a point's value crosses refuted
    t1 = time.perf_counter()
    v = verify_run(spec, inst, algorithm, status, solution, evaluation, res.bound,
                   bound_source, floor, RunOptions(), point=done.point, same_objective=same,
                   own_value=res.objective, sense=res.sense, own_x=res.x)
    details["verification"] = {**v.record, "time_s": time.perf_counter() - t1}
    retry = _presolve_retry(v, details, presolve, limit, t0)  # as in `run_method`
    if v.record.get("refuted") and not retry:
        warnings.warn(v.message, RuntimeWarning, stacklevel=2)
    status, solution, evaluation = v.status, v.solution, v.evaluation
    model_value = v.value if v.value is not None else res.objective
    if v.solution is not done.result.solution and v.value is not None:
        details["objective"] = v.value
    gap = (gap_ratio(*lower_upper(res.sense, model_value, v.bound), floor)[0]
           if model_value is not None and v.bound is not None else None)
    proven = (status is Status.OPTIMAL and gap == 0.0 and solution is not None)
    details["model"] = {"name": model.name, "rows": hm.num_row, "columns": hm.num_col,
                        "is_mip": res.is_mip, "sense": res.sense, "objective": model_value,
                        "bound": v.bound, "status": str(status), "proven": proven,
                        "objective_is_problems": same}
    failures: list[str] = []
    if res.max_violation is not None and res.max_violation > MODEL_FEASIBILITY_TOL:
        failures.append(f"the returned point violates the model's rows by {res.max_violation:.3g}")
    elapsed = time.perf_counter() - t0
    times = {"total_s": elapsed, "compile_s": res.compile_s, "solve_s": res.solve_s,
             "verify_s": details["verification"]["time_s"]}
    if same:
        cert = make_certificate(spec, method="model", algorithm=algorithm, status=status,
                                evaluation=evaluation, bound=v.bound, bound_source=bound_source,
                                times=times, reported_objective=(
                                    res.objective if solution is done.result.solution
                                    else None),
                                primal_source=v.primal_source, details=details,
                                failures=failures, problem_size=spec.size(inst),
                                objective_must_match=True)
    else:  # no claim on the problem's objective: the model's own is in details.model
        cert = make_certificate(spec, method="model", algorithm=algorithm,
                                status=(Status.FEASIBLE if status is Status.OPTIMAL
                                        else status),
                                evaluation=evaluation, bound=None, bound_source=None,
                                times=times, primal_source=v.primal_source, details=details,
                                failures=failures, problem_size=spec.size(inst),
                                uncertified=(
                                    "the model's objective is not the problem's (changed "
                                    "terms, sense, Expression or Param, or a model "
                                    "build_model did not make): nothing is claimed for the "
                                    f"{spec.name} objective; the model's own result is in "
                                    "details.model"))
    objective = evaluation.objective if evaluation is not None else None
    message = v.message or res.message
    if status is Status.INFEASIBLE:
        message = message or "the model has no feasible point (your constraints contradict)"
    result = Result(problem=spec.name, method="model", algorithm=algorithm, status=status,
                    objective=objective, bound=v.bound, bound_source=v.bound_source and
                    bound_source, gap=gap, time_s=elapsed, message=message, solution=solution,
                    certificate=cert, evaluation=evaluation, details=details, instance=inst)
    if not retry:
        return result
    return _retried(result, lambda: solve_model(
        instance, model, time_limit=math.inf if limit is None else max(
            limit - (time.perf_counter() - t0), MIN_LEFT_S), threads=threads,
        mip_rel_gap=mip_rel_gap, presolve=False), res.sense, lambda r: _feasible_value(
            r, r.details.get("model", {}).get("objective")), v, t0)


def _infeasible_row(spec: ProblemSpec, inst: Any, model: Any, why: str, route: dict,
                    elapsed: float) -> Result:
    """The result of a model with a row no point can hold (its variables all fixed): status
    infeasible, before HiGHS (Pyomo's compiler refuses to write such a row)."""
    message = f"the model has no feasible point: {why}"
    details = {**route, "message": message, "model": {"name": model.name}}
    cert = make_certificate(spec, method="model", algorithm=str(model.name),
                            status=Status.INFEASIBLE, evaluation=None, bound=None,
                            bound_source=None, times={"total_s": elapsed}, details=details,
                            problem_size=spec.size(inst))
    return Result(problem=spec.name, method="model", algorithm=str(model.name),
                  status=Status.INFEASIBLE, time_s=elapsed, message=message, certificate=cert,
                  details=details, instance=inst)
