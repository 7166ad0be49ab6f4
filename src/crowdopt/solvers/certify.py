"""Certificates: the recomputed objective, feasibility, a bound with its source, gap and ratio.

A certificate never trusts a solver's own number: the objective comes from the problem's one
evaluator, feasibility from the same evaluator (with the worst violation), and optimality only
from a bound (MILP dual bound, LP relaxation, column generation, closed form) that meets the
objective within `REL_TOL` of the larger magnitude (plus `ABS_TOL`, a floor far below any
objective a user means): the claim is the same at every scale of the data. A bound on the
wrong side of the objective by more than that is a failure, never a gap of 0. `certified` and
`proven_optimal` also need a feasible solution with a finite objective and finite bounds.
"""

from __future__ import annotations

import math
import platform
from typing import Any

from ..problems.catalogue import Evaluation, ProblemSpec
from ..results import SCHEMA_VERSION, Certificate, jsonable
from ..status import Status

__all__ = ["ABS_TOL", "REL_TOL", "SCHEMA_VERSION", "TOLERANCES", "Certificate", "add_failures",
           "close", "gap_ratio", "lower_upper", "make_certificate", "tolerance", "versions",
           "with_bound", "without_bound"]
REL_TOL = 1e-7  # relative tolerance of every "equal" / "crossing" claim (bound vs objective)
ABS_TOL = 1e-30  # absolute floor: only two numbers both within 1e-30 of 0 are equal regardless
OBJECTIVE_REL_TOL = 1e-6  # a solver's objective vs the evaluator's at the same point
# HiGHS's absolute noise on the objective it saw (scaled: largest cost 1); times the
# result's `objective_unit` it is the solver's noise in our units (a bound of 4e-12 over an
# optimum of 0 at phi ~ 1), and the floor of the comparisons of that solver's numbers
SOLVER_ABS_TOL = 1e-8  # 10x HiGHS feasibility tolerance (1e-9) in its scaled units
# what every certificate records under `tolerances`
TOLERANCES = {"rel": REL_TOL, "abs": ABS_TOL, "objective_rel": OBJECTIVE_REL_TOL}


def tolerance(a: float, b: float, rel: float = REL_TOL, floor: float = 0.0) -> float:
    """How far apart a and b may be and still be called equal: relative to the larger, plus
    `floor` (a solver's own absolute noise in our units, 0 when no solver number is involved)."""
    return rel * max(abs(a), abs(b)) + ABS_TOL + floor


def close(a: float, b: float, rel: float = REL_TOL, floor: float = 0.0) -> bool:
    """Whether a and b agree within the certificates' relative tolerance (plus `floor`)."""
    return abs(a - b) <= tolerance(a, b, rel, floor)


def finite(v: Any) -> bool:
    """Whether v is a finite number (not None, inf or NaN)."""
    return v is not None and math.isfinite(v)


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
    """The package and solver versions, computed once per process."""
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


def gap_ratio(lower: float | None, upper: float | None, floor: float = 0.0
              ) -> tuple[float | None, float | None, float | None]:
    """(absolute gap, relative gap, ratio lower/upper); None where undefined (also for a
    non-finite side). A gap within `tolerance` of 0 is 0; a negative one (the bound crosses
    the objective) stays negative: the caller reports it as a failure."""
    if not finite(lower) or not finite(upper):
        return None, None, None
    gap = upper - lower
    if abs(gap) <= tolerance(lower, upper, floor=floor):
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
                     objective_must_match: bool = False,
                     uncertified: str | None = None) -> Certificate:
    """The certificate of one solution (+ bound), checked for consistency.

    Failures: the solution is infeasible for the evaluator; the solver's own objective claims
    a better value than the recomputed one (a solver's number is never trusted); the bound
    crosses the objective; 'optimal' without a closed gap. A solver objective WORSE than the
    recomputed one is only a note (an epigraph variable above the max at a time-limited
    incumbent: the recomputed value stands), unless `objective_must_match` (a user's model,
    whose objective may not be the problem's: any difference at the point voids the transfer
    of its bound). `failures`/`notes` add the caller's checks. `certified` also needs a
    feasible solution with a finite objective (no solution: not certified, and no failure);
    `proven_optimal` a certified solution whose gap is 0 within `tolerance`, from a run that
    was not stopped by a time limit (status time_limit is never a proof). `uncertified`: why
    nothing is claimed for the problem's objective (a user's model with another objective):
    not certified, no failure, the reason first among the notes.
    """
    objective = float(evaluation.objective) if evaluation is not None else None
    feasible = bool(evaluation.feasible) if evaluation is not None else None
    fails: list[str] = []
    notes = list(notes or [])
    if objective is not None and not math.isfinite(objective):
        fails.append(f"objective is not a finite number ({objective!r})")
    bound, bound_note, bound_fail = _checked_bound(spec.sense, bound, bound_source)
    notes += bound_note
    fails += bound_fail
    incumbent = objective if feasible and finite(objective) else None
    lower, upper = lower_upper(spec.sense, incumbent, bound)
    unit = (details or {}).get("objective_unit")
    floor = SOLVER_ABS_TOL * float(unit) if finite(unit) and unit > 0 else 0.0
    gap, rel_gap, ratio = gap_ratio(lower, upper, floor)
    if evaluation is not None and not evaluation.feasible:
        fails.append("solution infeasible: " + "; ".join(evaluation.violations[:3]))
    if (reported_objective is not None and finite(objective)
            and not close(reported_objective, objective, OBJECTIVE_REL_TOL, floor)):
        better_claimed = (reported_objective < objective if spec.sense == "min"
                          else reported_objective > objective)
        if better_claimed or not math.isfinite(reported_objective):
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
        fails.append(crossing(spec.sense, objective, primal_source or algorithm, bound,
                              bound_source))
    if Status(status) is Status.OPTIMAL and (gap is None or gap != 0.0):
        fails.append("status 'optimal' without a bound that closes the gap")
    fails += list(failures or [])
    certified = not fails and bool(feasible) and finite(objective) and not uncertified
    if uncertified:
        notes.insert(0, uncertified)
    # a run stopped by its time limit proves nothing, whatever its numbers say (DESIGN rule 4)
    stopped = Status(status) is Status.TIME_LIMIT
    if stopped and certified and gap == 0.0:
        notes.append("stopped by a time limit: the bound meets the objective within the "
                     "tolerance, but the run is not a proof")
    return Certificate(
        problem=spec.name, sense=spec.sense, method=method, algorithm=algorithm,
        status=Status(status), objective=objective,
        reported_objective=_num(reported_objective), primal_source=primal_source or algorithm,
        bound=_num(bound), bound_source=bound_source, lower=_num(lower), upper=_num(upper),
        gap=_num(gap), rel_gap=_num(rel_gap), ratio=_num(ratio),
        proven_optimal=certified and gap is not None and gap == 0.0 and not stopped,
        feasible=feasible,
        max_violation=_num(evaluation.max_violation) if evaluation is not None else None,
        certified=certified, failures=tuple(fails), notes=tuple(notes),
        times=jsonable(times), seed=seed, details=dict(details or {}),
        versions=_with_highs(cached_versions(), details), problem_size=problem_size,
        solution=solution, tolerances={**TOLERANCES, "solver_abs": floor})


def crossing(sense: str, objective: float | None, primal_source: str | None,
             bound: float | None, bound_source: str | None) -> str:
    """The failure of a bound on the wrong side of a feasible objective, with both sources."""
    side = "below" if sense == "max" else "above"
    return (f"bound crosses the objective: the {'upper' if sense == 'max' else 'lower'} bound "
            f"{bound!r} ({bound_source or 'unknown source'}) is {side} the feasible objective "
            f"{objective!r} ({primal_source or 'unknown source'}) by more than the relative "
            f"tolerance {REL_TOL:g}: one of them is wrong")


def _checked_bound(sense: str, bound: float | None, source: str | None
                   ) -> tuple[float | None, list[str], list[str]]:
    """(bound to use, notes, failures): NaN is a failure; an infinite bound on its own side
    (-inf lower, +inf upper) says nothing and is dropped; on the other side it claims that no
    solution exists, which a certificate never takes from a bound."""
    if bound is None or math.isfinite(bound):
        return bound, [], []
    vacuous = (bound < 0) if sense == "min" else (bound > 0)
    if vacuous:
        return None, [f"bound {bound!r} from {source} says nothing: dropped"], []
    return None, [], [f"bound is not a finite number ({bound!r} from {source})"]


def _num(v: Any) -> float | None:
    """A plain float (numpy scalars converted here, at the source) or None."""
    return None if v is None else float(v)


def with_bound(cert: Certificate, bound: float | None, bound_source: str | None) -> Certificate:
    """The certificate measured against another valid bound (compare: the run's best bound);
    a bound that crosses the objective is a failure naming both."""
    if bound is None or not math.isfinite(bound) or not cert.feasible or not finite(cert.objective):
        return cert
    lower, upper = lower_upper(cert.sense, cert.objective, bound)
    gap, rel, ratio = gap_ratio(lower, upper)
    fails = list(cert.failures)
    if gap is not None and gap < 0:
        fails.append(crossing(cert.sense, cert.objective, cert.primal_source, bound, bound_source))
    certified = not fails
    return cert.replace(bound=_num(bound), bound_source=bound_source, lower=_num(lower),
                        upper=_num(upper), gap=_num(gap), rel_gap=_num(rel), ratio=_num(ratio),
                        proven_optimal=(gap == 0.0 and certified
                                        and cert.status is not Status.TIME_LIMIT),
                        certified=certified,
                        failures=tuple(fails))


def without_bound(cert: Certificate | None, why: str) -> Certificate | None:
    """The certificate after its bound was refuted (`solvers.verify`): no bound, no gap, not
    proven; an 'optimal' status becomes 'feasible'; `why` joins the notes."""
    if cert is None:
        return None
    lower, upper = lower_upper(cert.sense, cert.objective if cert.feasible else None, None)
    return cert.replace(status=Status.FEASIBLE if cert.status is Status.OPTIMAL
                        else cert.status, bound=None, bound_source=None, lower=_num(lower),
                        upper=_num(upper), gap=None, rel_gap=None, ratio=None,
                        proven_optimal=False, notes=(*cert.notes, why))


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
