"""Certificates: the recomputed objective, feasibility, a bound with its source, gap and ratio.

A certificate never trusts a solver's own number: the objective comes from the problem's one
evaluator, feasibility from the same evaluator (with the worst violation), and optimality only
from a bound (MILP dual bound, LP relaxation, column generation, closed form) that meets the
objective within `TOL`.
"""

from __future__ import annotations

import math
import platform
from typing import Any

from ..problems.catalogue import Evaluation, ProblemSpec
from ..results import SCHEMA_VERSION, Certificate, jsonable
from ..status import Status

__all__ = ["SCHEMA_VERSION", "TOL", "Certificate", "add_failures", "close", "gap_ratio",
           "lower_upper", "make_certificate", "versions", "with_bound"]
TOL = 1e-7  # absolute + relative tolerance of every "equal" claim


def close(a: float, b: float, tol: float = TOL) -> bool:
    return abs(a - b) <= tol * (1.0 + max(abs(a), abs(b)))


PACKAGES = ("numpy", "scipy", "networkx", "pyomo", "highspy")


def versions() -> dict[str, str]:
    """Package versions from the installed metadata: nothing is imported, no solver is made
    (a fast path stays free of Pyomo and HiGHS). The HiGHS library version is added by
    `make_certificate` only when HiGHS ran, from the Highs object that ran."""
    from importlib.metadata import PackageNotFoundError, version

    from ..version import __version__
    out = {"crowdopt": __version__, "python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:  # pragma: no cover - a broken install
            out[name] = "missing"
    return out


_VERSIONS: dict[str, str] | None = None


def cached_versions() -> dict[str, str]:
    global _VERSIONS
    if _VERSIONS is None:
        _VERSIONS = versions()
    return dict(_VERSIONS)


def highs_version_in(details: Any, depth: int = 2) -> str | None:
    """The HiGHS version a method's details report (adapter summaries carry `highs_version`)."""
    if not isinstance(details, dict):
        return None
    v = details.get("highs_version")
    if isinstance(v, str) and v:
        return v
    if depth > 0:
        for sub in details.values():
            found = highs_version_in(sub, depth - 1)
            if found:
                return found
    return None


def lower_upper(sense: str, objective: float | None, bound: float | None
                ) -> tuple[float | None, float | None]:
    """(lower, upper) on the optimum: for min the objective is the upper side, for max the lower."""
    return (bound, objective) if sense == "min" else (objective, bound)


def gap_ratio(lower: float | None, upper: float | None) -> tuple[float | None, float | None, float | None]:
    """(absolute gap, relative gap, ratio lower/upper); None where undefined."""
    if lower is None or upper is None:
        return None, None, None
    gap = upper - lower
    if abs(gap) <= TOL * (1.0 + max(abs(lower), abs(upper))):
        gap = 0.0
    denom = max(abs(lower), abs(upper))
    rel = 0.0 if gap == 0.0 else (gap / denom if denom > 0 else math.inf)
    if upper == 0.0 and lower == 0.0:
        ratio = 1.0
    elif gap == 0.0:
        ratio = 1.0
    elif upper > 0 and lower >= 0:
        ratio = lower / upper
    else:
        ratio = None
    return gap, rel, ratio


def make_certificate(spec: ProblemSpec, *, method: str, algorithm: str, status: str,
                     evaluation: Evaluation | None, bound: float | None,
                     bound_source: str | None, times: dict[str, float],
                     reported_objective: float | None = None, primal_source: str | None = None,
                     seed: int | None = None, details: dict | None = None,
                     failures: list[str] | None = None, notes: list[str] | None = None,
                     problem_size: str | None = None, solution: dict | None = None,
                     objective_must_match: bool = False) -> Certificate:
    """The certificate of one solution (+ bound), checked for consistency.

    Failures: the solution is infeasible for the evaluator; the solver's own objective claims
    a better value than the recomputed one (a solver's number is never trusted); the bound
    crosses the objective; 'optimal' without a closed gap. A solver objective WORSE than the
    recomputed one is only a note (an epigraph variable above the max at a time-limited
    incumbent: the recomputed value stands), unless `objective_must_match` (a user's model,
    whose objective may not be the problem's: any difference at the point voids the transfer
    of its bound). `failures`/`notes` add the caller's checks.
    """
    objective = float(evaluation.objective) if evaluation is not None else None
    feasible = bool(evaluation.feasible) if evaluation is not None else None
    incumbent = objective if feasible else None
    lower, upper = lower_upper(spec.sense, incumbent, bound)
    gap, rel_gap, ratio = gap_ratio(lower, upper)
    fails: list[str] = []
    notes = list(notes or [])
    if evaluation is not None and not evaluation.feasible:
        fails.append("solution infeasible: " + "; ".join(evaluation.violations[:3]))
    if (reported_objective is not None and objective is not None
            and not close(reported_objective, objective, 1e-6)):
        better_claimed = (reported_objective < objective if spec.sense == "min"
                          else reported_objective > objective)
        if better_claimed:
            fails.append(f"reported objective {reported_objective!r} != recomputed {objective!r}")
        elif objective_must_match:
            fails.append(f"the model's objective {reported_objective!r} differs from the "
                         f"problem's {objective!r} at the returned point: its bound does not "
                         "bound the problem's objective (a changed objective, or an epigraph "
                         "variable left loose at a time-limited point)")
        else:
            notes.append(f"the solver's objective {reported_objective!r} is worse than the "
                         f"recomputed {objective!r} (a loose epigraph at a non-optimal point); "
                         "the recomputed value is used")
    if gap is not None and gap < 0:
        fails.append(f"bound crosses the incumbent (lower {lower!r} > upper {upper!r})")
    if Status(status) is Status.OPTIMAL and (gap is None or gap != 0.0):
        fails.append("status 'optimal' without a bound that closes the gap")
    fails += list(failures or [])
    return Certificate(
        problem=spec.name, sense=spec.sense, method=method, algorithm=algorithm,
        status=Status(status), objective=objective,
        reported_objective=_num(reported_objective), primal_source=primal_source or algorithm,
        bound=_num(bound), bound_source=bound_source, lower=_num(lower), upper=_num(upper),
        gap=_num(gap), rel_gap=_num(rel_gap), ratio=_num(ratio),
        proven_optimal=gap is not None and gap == 0.0 and not fails, feasible=feasible,
        max_violation=_num(evaluation.max_violation) if evaluation is not None else None,
        certified=not fails, failures=tuple(fails), notes=tuple(notes),
        times=jsonable(times), seed=seed, details=dict(details or {}),
        versions=_with_highs(cached_versions(), details), problem_size=problem_size,
        solution=solution)


def _num(v: Any) -> float | None:
    """A plain float (numpy scalars converted here, at the source) or None."""
    return None if v is None else float(v)


def with_bound(cert: Certificate, bound: float | None, bound_source: str | None) -> Certificate:
    """The certificate measured against another valid bound (compare: the run's best bound);
    a bound that crosses the objective is a failure."""
    if bound is None or not cert.feasible or cert.objective is None:
        return cert
    lower, upper = lower_upper(cert.sense, cert.objective, bound)
    gap, rel, ratio = gap_ratio(lower, upper)
    fails = list(cert.failures)
    if gap is not None and gap < 0:
        fails.append("objective beats a valid bound")
    certified = not fails
    return cert.replace(bound=_num(bound), bound_source=bound_source, lower=_num(lower),
                        upper=_num(upper), gap=_num(gap), rel_gap=_num(rel), ratio=_num(ratio),
                        proven_optimal=gap == 0.0 and certified, certified=certified,
                        failures=tuple(fails))


def add_failures(cert: Certificate, failures: list[str]) -> Certificate:
    """The certificate with more failed checks (no longer certified, nor proven)."""
    if not failures:
        return cert
    return cert.replace(failures=(*cert.failures, *failures), certified=False,
                        proven_optimal=False)


def _with_highs(vers: dict[str, str], details: Any) -> dict[str, str]:
    hv = highs_version_in(details)
    if hv:
        vers["highs"] = hv
    return vers
