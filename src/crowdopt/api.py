"""Solve, compare and certify any registered problem: the functions behind the CLI.

`solve(instance)` runs one method and returns a `MethodResult` whose objective is recomputed by
the problem's evaluator and which carries a certificate. `compare` runs every fast path and the
exact model and measures each against the best bound found in the same run. `certify` combines
the best primal solution with the tightest valid bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .errors import CrowdoptError, InputError, SolverError
from .instances import load_instance
from .registry import Evaluation, Method, ProblemSpec, RunOptions
from .solvers.certify import gap_ratio, lower_upper, make_certificate


@dataclass
class MethodResult:
    problem: str
    method: str  # fast | exact | bound
    algorithm: str
    status: str  # optimal | feasible | infeasible | time_limit | error | skipped
    objective: float | None
    bound: float | None
    bound_source: str | None
    gap: float | None
    time_s: float
    solution: Any = None
    evaluation: Evaluation | None = None
    certificate: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    message: str = ""

    def to_json(self, spec: ProblemSpec | None = None, instance: Any = None) -> dict[str, Any]:
        out = {
            "method": self.method,
            "algorithm": self.algorithm,
            "status": self.status,
            "objective": self.objective,
            "bound": self.bound,
            "bound_source": self.bound_source,
            "gap": self.gap,
            "time_s": self.time_s,
            "message": self.message,
            "certificate": self.certificate,
        }
        if spec is not None and self.solution is not None:
            out["solution"] = spec.solution_to_dict(instance, self.solution)
        return out


def _as_spec_instance(instance: Any, problem: str | None = None) -> tuple[ProblemSpec, Any]:
    if isinstance(instance, tuple) and len(instance) == 2 and isinstance(instance[0], ProblemSpec):
        return instance
    if isinstance(instance, str | dict) or hasattr(instance, "__fspath__"):
        return load_instance(str(instance) if not isinstance(instance, dict) else instance)
    spec = getattr(instance, "SPEC", None)
    if spec is None and problem is not None:
        from .registry import get_problem
        spec = get_problem(problem)
    if spec is None:
        from .registry import get_problem
        spec = get_problem(getattr(instance, "problem", None))
    return spec, instance


def run_method(spec: ProblemSpec, instance: Any, method: Method | str,
               options: RunOptions | None = None) -> MethodResult:
    """Run one method; evaluate its solution with the problem's evaluator; certify it."""
    options = options or RunOptions()
    m = spec.method(method) if isinstance(method, str) else method
    reason = m.applicable(instance)
    if reason:
        return MethodResult(spec.name, m.kind, m.algorithm, "skipped", None, None, None, None,
                            0.0, message=reason)
    t0 = time.perf_counter()
    try:
        out = m.run(instance, options)
    except InputError:
        raise
    except (SolverError, CrowdoptError) as exc:
        return MethodResult(spec.name, m.kind, m.algorithm, "error", None, None, None, None,
                            time.perf_counter() - t0, message=str(exc))
    elapsed = time.perf_counter() - t0
    evaluation = spec.evaluate(instance, out.solution) if out.solution is not None else None
    objective = evaluation.objective if evaluation is not None else None
    incumbent = objective if evaluation is not None and evaluation.feasible else None
    lower, upper = lower_upper(spec.sense, incumbent, out.bound)
    gap = gap_ratio(lower, upper)[0]
    times = {"total_s": elapsed, **{k: v for k, v in out.details.items() if k.endswith("_s")}}
    cert = make_certificate(spec, method=m.kind, algorithm=m.algorithm, status=out.status,
                            evaluation=evaluation, bound=out.bound, bound_source=out.bound_source,
                            times=times, reported_objective=out.reported_objective,
                            seed=options.seed, details=out.details)
    return MethodResult(spec.name, m.kind, m.algorithm, out.status, objective, out.bound,
                        out.bound_source, gap, elapsed, out.solution, evaluation, cert,
                        out.details, out.details.get("message", ""))


def solve(instance: Any, method: str = "fast", *, time_limit: float | None = None,
          threads: int = 1, seed: int = 0) -> MethodResult:
    """Solve an instance (object, dict, or path) with 'fast', 'exact', or an algorithm name."""
    spec, inst = _as_spec_instance(instance)
    return run_method(spec, inst, method, RunOptions(time_limit, threads, seed))


def _best_bound(spec: ProblemSpec, results: list[MethodResult]) -> tuple[float | None, str | None]:
    best, source = None, None
    for r in results:
        if r.bound is None or r.status in ("error", "skipped"):
            continue
        better = best is None or (r.bound > best if spec.sense == "min" else r.bound < best)
        if better:
            best, source = r.bound, f"{r.algorithm}:{r.bound_source}"
    return best, source


def _best_primal(spec: ProblemSpec, results: list[MethodResult]) -> MethodResult | None:
    best = None
    for r in results:
        if r.evaluation is None or not r.evaluation.feasible:
            continue
        if best is None or (r.objective < best.objective if spec.sense == "min"
                            else r.objective > best.objective):
            best = r
    return best


def compare(instance: Any, *, time_limit: float | None = None, threads: int = 1,
            seed: int = 0, algorithms: list[str] | None = None) -> list[MethodResult]:
    """Every fast path and exact model side by side; each gap against the run's best bound
    (the bound methods join in when no exact model gives a bound)."""
    spec, inst = _as_spec_instance(instance)
    opts = RunOptions(time_limit, threads, seed)
    methods = [spec.method(a) for a in algorithms] if algorithms else [
        m for m in spec.methods if m.kind in ("fast", "exact")]
    results = [run_method(spec, inst, m, opts) for m in methods]
    best, source = _best_bound(spec, results)
    if best is None and not algorithms:
        # every exact model skipped (too large) or failed: fall back to the bound methods
        results += [run_method(spec, inst, m, opts) for m in spec.methods if m.kind == "bound"]
        best, source = _best_bound(spec, results)
    for r in results:
        if r.evaluation is not None and r.evaluation.feasible and best is not None:
            lower, upper = lower_upper(spec.sense, r.objective, best)
            gap, rel, ratio = gap_ratio(lower, upper)
            r.gap = gap
            r.certificate.update(bound=best, bound_source=source, lower=lower, upper=upper,
                                 gap=gap, rel_gap=rel, ratio=ratio,
                                 proven_optimal=gap == 0.0 and r.certificate["certified"])
            if gap is not None and gap < 0:
                r.certificate["certified"] = False
                r.certificate["failures"].append("objective beats a valid bound")
    return results


def certify(instance: Any, solution: Any = None, *, time_limit: float | None = None,
            threads: int = 1, seed: int = 0) -> dict[str, Any]:
    """Best primal (given solution, else best fast path / exact incumbent) vs tightest bound."""
    spec, inst = _as_spec_instance(instance)
    opts = RunOptions(time_limit, threads, seed)
    t0 = time.perf_counter()
    runs: list[MethodResult] = []
    if solution is None:
        runs += [run_method(spec, inst, m, opts) for m in spec.methods if m.kind == "fast"]
    runs += [run_method(spec, inst, m, opts) for m in spec.methods if m.kind in ("exact", "bound")]
    bound, bound_source = _best_bound(spec, runs)
    if solution is not None:
        evaluation = spec.evaluate(inst, solution)
        primal_source = "given"
        status = "feasible"
        algorithm = "given"
    else:
        best = _best_primal(spec, runs)
        evaluation = best.evaluation if best else None
        primal_source = best.algorithm if best else None
        algorithm = primal_source or "none"
        status = "feasible" if best else "no_solution"
        solution = best.solution if best else None
    any_time_limit = any(r.status == "time_limit" for r in runs)
    cert = make_certificate(spec, method="certify", algorithm=algorithm, status=status,
                            evaluation=evaluation, bound=bound, bound_source=bound_source,
                            times={"total_s": time.perf_counter() - t0,
                                   **{r.algorithm + "_s": r.time_s for r in runs}},
                            primal_source=primal_source, seed=seed,
                            details={"runs": [r.to_json() for r in runs],
                                     "time_limit_hit": any_time_limit})
    if any(r.status == "error" for r in runs):
        cert["failures"].append("a method failed: " + "; ".join(
            f"{r.algorithm}: {r.message}" for r in runs if r.status == "error"))
        cert["certified"] = False
    if any(r.status == "infeasible" for r in runs) and evaluation is not None and evaluation.feasible:
        cert["failures"].append("a method reported infeasible but a feasible solution exists")
        cert["certified"] = False
    cert["problem_size"] = spec.size(inst)
    cert["_solution"] = solution
    return cert
