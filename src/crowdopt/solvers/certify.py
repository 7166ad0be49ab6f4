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

from ..registry import Evaluation, ProblemSpec

SCHEMA_VERSION = 1
TOL = 1e-7  # absolute + relative tolerance of every "equal" claim


def close(a: float, b: float, tol: float = TOL) -> bool:
    return abs(a - b) <= tol * (1.0 + max(abs(a), abs(b)))


PACKAGES = ("numpy", "scipy", "networkx", "pyomo", "highspy")


def versions() -> dict[str, str]:
    """Package versions from the installed metadata: nothing is imported, no solver is made
    (a fast path stays free of Pyomo and HiGHS). The HiGHS library version is added by
    `make_certificate` only when HiGHS ran, from the Highs object that ran."""
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__
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
                     seed: int | None = None, details: dict | None = None) -> dict[str, Any]:
    """Build the JSON certificate of one solution (+ bound) and check it for consistency."""
    objective = evaluation.objective if evaluation is not None else None
    feasible = bool(evaluation.feasible) if evaluation is not None else None
    incumbent = objective if feasible else None
    lower, upper = lower_upper(spec.sense, incumbent, bound)
    gap, rel_gap, ratio = gap_ratio(lower, upper)
    failures: list[str] = []
    if evaluation is not None and not evaluation.feasible:
        failures.append("solution infeasible: " + "; ".join(evaluation.violations[:3]))
    if reported_objective is not None and objective is not None and not close(reported_objective, objective, 1e-6):
        failures.append(f"reported objective {reported_objective!r} != recomputed {objective!r}")
    if gap is not None and gap < 0:
        failures.append(f"bound crosses the incumbent (lower {lower!r} > upper {upper!r})")
    if status == "optimal" and (gap is None or gap != 0.0):
        failures.append("status 'optimal' without a bound that closes the gap")
    proven = gap is not None and gap == 0.0 and not failures
    return {
        "schema_version": SCHEMA_VERSION,
        "problem": spec.name,
        "sense": spec.sense,
        "method": method,
        "algorithm": algorithm,
        "status": status,
        "objective": objective,
        "reported_objective": reported_objective,
        "primal_source": primal_source or algorithm,
        "bound": bound,
        "bound_source": bound_source,
        "lower": lower,
        "upper": upper,
        "gap": gap,
        "rel_gap": rel_gap,
        "ratio": ratio,
        "proven_optimal": proven,
        "feasible": feasible,
        "max_violation": evaluation.max_violation if evaluation is not None else None,
        "certified": not failures,
        "failures": failures,
        "times": times,
        "seed": seed,
        "details": details or {},
        "versions": _with_highs(cached_versions(), details),
    }


def _with_highs(vers: dict[str, str], details: Any) -> dict[str, str]:
    hv = highs_version_in(details)
    if hv:
        vers["highs"] = hv
    return vers
