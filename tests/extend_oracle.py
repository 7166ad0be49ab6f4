"""The independent route for models a user extended, and the modifications the differential
test of `crowdopt.solve_model` draws (tests/test_extend_differential.py,
benchmarks/bench_extend_routes.py).

Independent of crowdopt's compiler, scaling and passes: Pyomo writes the model to MPS, a
fresh `highspy.Highs` reads it and solves it (gap 0, HiGHS's own objective scaling); where every column of the read model is
an integer with a small finite range, brute force over all points of the same arrays checks
HiGHS too. `compare` holds a `solve_model` result against it: the same status, and equal
model objectives within a relative 1e-7; a proof where the independent route finds better
is a false proof.
"""

from __future__ import annotations

import itertools
import math
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import highspy
import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyomo.common.errors import InfeasibleConstraintException

import crowdopt
from crowdopt import Status
from crowdopt.solvers.highs import new_highs

REL = 1e-7  # objectives agree within this relative tolerance
BRUTE_MAX_POINTS = 1 << 12  # brute force where the integer box has at most this many points


@dataclass(frozen=True)
class Answer:
    """The independent route's answer: status ('optimal', 'infeasible', 'unbounded',
    'other'), the model objective, its scale (largest |cost|) and the brute-force optimum
    (None where not run; -inf/inf sense-wise when no point is feasible)."""

    status: str
    objective: float | None
    scale: float
    brute: float | None
    time_s: float


_STATUS = {highspy.HighsModelStatus.kOptimal: "optimal",
           highspy.HighsModelStatus.kInfeasible: "infeasible",
           highspy.HighsModelStatus.kUnbounded: "unbounded",
           highspy.HighsModelStatus.kUnboundedOrInfeasible: "unbounded"}


def independent(model: Any) -> Answer:
    """Solve `model` as Pyomo writes it to MPS, read by a fresh highspy object, with presolve
    and without: HiGHS presolve at the 1e-9 tolerance has called a point 0.16 below the
    optimum optimal (a labeler-set pattern model with a user's binary capped at 0; without
    presolve, and at 1e-7, it finds the optimum). Where the run without presolve finds a better
    optimum (or one where presolve found none), its point, checked on the exact arrays
    (`holds`), stands."""
    t0 = time.process_time()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.mps")
        try:
            model.write(path, io_options={"symbolic_solver_labels": True})
        except InfeasibleConstraintException:  # a constant row that cannot hold
            return Answer("infeasible", None, 1.0, None, time.process_time() - t0)
        status, objective, scale, brute, _ = _read_and_run(path, "on")
        other, value, _, _, x = _read_and_run(path, "off")
        if other == "optimal" and (status != "optimal" or (
                value > objective if _objective(model).sense == pyo.maximize
                else value < objective)):
            a = read_mps(path)
            if x.size == len(a.c):
                x[a.integ] = np.round(x[a.integ])
                if holds(a, x):
                    status, objective = other, value
    return Answer(status, objective, scale, brute, time.process_time() - t0)


def _read_and_run(path: str, presolve: str) -> tuple:
    """One fresh highspy object on the MPS file: (status, objective, scale, brute force (with
    presolve only), the point's column values)."""
    h = new_highs()
    h.readModel(path)
    lp = h.getLp()
    cost = np.asarray(lp.col_cost_, dtype=float)
    scale = float(np.max(np.abs(cost), initial=0.0)) or 1.0
    # HiGHS's own objective scaling (a power of 2): its absolute tolerances then mean the
    # same for an objective x 1e-8 (without it HiGHS took 0 for an optimum of 1.7e-9); the
    # feasibility tolerance of exact claims (at HiGHS's 1e-6 an epigraph row gave up 1e-6)
    for name, value in (("mip_rel_gap", 0.0), ("mip_abs_gap", 0.0), ("threads", 1),
                        ("user_objective_scale", -round(math.log2(scale))),
                        ("mip_feasibility_tolerance", 1e-9),
                        ("primal_feasibility_tolerance", 1e-9), ("presolve", presolve)):
        h.setOptionValue(name, value)
    h.run()
    status = _STATUS.get(h.getModelStatus(), "other")
    objective = float(h.getInfo().objective_function_value) if status == "optimal" else None
    x = np.asarray(h.getSolution().col_value, dtype=float)
    return status, objective, scale, (_brute(h, lp) if presolve == "on" else None), x


@dataclass(frozen=True)
class Arrays:
    """A linear model as Pyomo's MPS writer wrote it, read by `read_mps` (dense, exact)."""

    c: np.ndarray
    A: np.ndarray
    rlo: np.ndarray
    rhi: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    integ: np.ndarray
    offset: float
    maximize: bool


def read_mps(path: str) -> Arrays:
    """A free-format MPS file as Pyomo writes it (ROWS, COLUMNS, RHS, RANGES, BOUNDS with BV,
    LI, UI, FX, FR, MI, PL, LO, UP; integer MARKER blocks), every coefficient as written:
    HiGHS's own reader drops entries below its small_matrix_value (1e-9), which at weights of
    1e-13 reads another model."""
    rows: dict[str, int] = {}
    kinds: list[str] = []
    obj = None
    cols: dict[str, int] = {}
    entries: list[tuple[int, int, float]] = []
    cost: dict[int, float] = {}
    rhs: dict[int, float] = {}
    ranges: dict[int, float] = {}
    bounds: list[tuple[str, str, float]] = []
    integer: set[int] = set()
    maximize, section, marker = False, "", False
    for line in open(path, encoding="utf-8"):
        if line.startswith("*") or not line.strip():
            continue
        if not line[0].isspace():
            section = line.split()[0]
            continue
        f = line.split()
        if section == "OBJSENSE":
            maximize = f[0].upper().startswith("MAX")
        elif section == "ROWS":
            if f[0] == "N":
                obj = obj or f[1]
            else:
                rows[f[1]] = len(kinds)
                kinds.append(f[0])
        elif section == "COLUMNS":
            if "'MARKER'" in f:
                marker = "'INTORG'" in f
                continue
            j = cols.setdefault(f[0], len(cols))
            if marker:
                integer.add(j)
            for name, val in zip(f[1::2], f[2::2], strict=True):
                if name == obj:
                    cost[j] = float(val)
                else:
                    entries.append((rows[name], j, float(val)))
        elif section == "RHS":
            for name, val in zip(f[1::2], f[2::2], strict=True):
                if name == obj:
                    cost[-1] = -float(val)
                else:
                    rhs[rows[name]] = float(val)
        elif section == "RANGES":
            for name, val in zip(f[1::2], f[2::2], strict=True):
                ranges[rows[name]] = float(val)
        elif section == "BOUNDS":
            bounds.append((f[0], f[2], float(f[3]) if len(f) > 3 else 0.0))
    n, m = len(cols), len(kinds)
    A = np.zeros((m, n))
    for i, j, v in entries:
        A[i, j] += v
    c = np.zeros(n)
    for j, v in cost.items():
        if j >= 0:
            c[j] = v
    rlo, rhi = np.full(m, -np.inf), np.full(m, np.inf)
    for i, k in enumerate(kinds):
        b = rhs.get(i, 0.0)
        if k in ("E", "G"):
            rlo[i] = b
        if k in ("E", "L"):
            rhi[i] = b
        if i in ranges:
            r = ranges[i]
            if k == "G":
                rhi[i] = b + abs(r)
            elif k == "L":
                rlo[i] = b - abs(r)
            else:
                rlo[i], rhi[i] = (b, b + r) if r > 0 else (b + r, b)
    lo, hi = np.zeros(n), np.full(n, np.inf)
    integ = np.zeros(n, bool)
    integ[list(integer)] = True
    for kind, name, v in bounds:
        j = cols[name]
        if kind == "BV":
            lo[j], hi[j], integ[j] = 0.0, 1.0, True
        elif kind in ("LO", "LI"):
            lo[j] = v
            integ[j] |= kind == "LI"
        elif kind in ("UP", "UI"):
            hi[j] = v
            integ[j] |= kind == "UI"
        elif kind == "FX":
            lo[j] = hi[j] = v
        elif kind == "FR":
            lo[j], hi[j] = -np.inf, np.inf
        elif kind == "MI":
            lo[j] = -np.inf
        elif kind == "PL":
            hi[j] = np.inf
    return Arrays(c, A, rlo, rhi, lo, hi, integ, cost.get(-1, 0.0), maximize)


def holds(a: Arrays, x: np.ndarray) -> bool:
    """Whether x is a point of the arrays: integer columns integral, bounds and rows within
    1e-9 relative to their terms' magnitude (an absolute tolerance would accept a row of
    weights near 1e-9 violated by 1 %)."""
    if np.any(a.integ & (np.abs(x - np.round(x)) > 0)):
        return False
    if np.any(x < a.lo - 1e-9 * np.abs(a.lo)) or np.any(x > a.hi + 1e-9 * np.abs(a.hi)):
        return False
    ax = a.A @ x
    mag = np.abs(a.A) @ np.abs(x)
    tol_lo = 1e-9 * (mag + np.where(np.isfinite(a.rlo), np.abs(a.rlo), 0.0))
    tol_hi = 1e-9 * (mag + np.where(np.isfinite(a.rhi), np.abs(a.rhi), 0.0))
    return bool(np.all(ax >= a.rlo - tol_lo) and np.all(ax <= a.rhi + tol_hi))


def witnesses(model: Any) -> tuple[list[float], float]:
    """Feasible values of `model`'s objective that no crowdopt route produced. Pyomo writes the
    model to MPS, `read_mps` reads it back exactly; a fresh highspy object solves it with each
    row divided by its largest entry and the objective by its largest, its smallest and no
    coefficient (powers of 2, HiGHS's defaults otherwise: independent of crowdopt's scaling);
    each point, integer columns rounded, counts where it `holds` on the exact arrays, valued
    there. Plus the best integer point where the model is a small pure-integer one. Returns the
    values and the objective's scale (its largest |cost|)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.mps")
        try:
            model.write(path, io_options={"symbolic_solver_labels": True})
        except InfeasibleConstraintException:
            return [], 1.0
        a = read_mps(path)
    n = len(a.c)
    nz = np.abs(a.c[a.c != 0])
    scale = float(nz.max()) if nz.size else 1.0
    if n == 0:
        return [a.offset], scale
    top = np.max(np.abs(a.A), axis=1, initial=0.0) if a.A.size else np.zeros(0)
    rs = np.where(top > 0, np.exp2(-np.round(np.log2(np.where(top > 0, top, 1.0)))), 1.0)
    As = a.A * rs[:, None]
    values = []
    for big in sorted({scale, float(nz.min()) if nz.size else 1.0, 1.0}):
        sigma = float(np.exp2(-np.round(np.log2(big))))
        h = new_highs()
        for name, value in (("mip_rel_gap", 0.0), ("threads", 1), ("time_limit", 30.0),
                            ("mip_feasibility_tolerance", 1e-9),
                            ("primal_feasibility_tolerance", 1e-9), ("small_matrix_value", 1e-12)):
            h.setOptionValue(name, value)
        cs = np.ascontiguousarray(a.c * sigma)
        csc = sp.csc_array(As)
        h.passModel(n, As.shape[0], int(csc.nnz), 1, -1 if a.maximize else 1, a.offset * sigma,
                    cs, a.lo, a.hi, a.rlo * rs, a.rhi * rs,
                    np.asarray(csc.indptr[:-1], np.int32), np.asarray(csc.indices, np.int32),
                    np.asarray(csc.data, float), a.integ.astype(np.int32))
        h.run()
        if not h.getInfo().primal_solution_status:
            continue
        x = np.asarray(h.getSolution().col_value, dtype=float)
        if x.size != n:
            continue
        x[a.integ] = np.round(x[a.integ])
        if holds(a, x):
            values.append(float(a.c @ x + a.offset))
    brute = _brute_arrays(a)
    if brute is not None and math.isfinite(brute):
        values.append(brute)
    return values, scale


def _brute_arrays(a: Arrays) -> float | None:
    """The best point of small pure-integer arrays that `holds` (None where not brute-able)."""
    n = len(a.c)
    if n == 0 or not np.all(a.integ) or not (np.all(np.isfinite(a.lo))
                                              and np.all(np.isfinite(a.hi))):
        return None
    ranges = [range(int(math.ceil(lo)), int(math.floor(hi)) + 1)
              for lo, hi in zip(a.lo, a.hi, strict=True)]
    if math.prod(len(r) for r in ranges) > BRUTE_MAX_POINTS:
        return None
    best = None
    for x in itertools.product(*ranges):
        x = np.array(x, dtype=float)
        if holds(a, x):
            v = float(a.c @ x + a.offset)
            if best is None or (v > best if a.maximize else v < best):
                best = v
    return best


def _brute(h: Any, lp: Any) -> float | None:
    """The optimum over every integer point of the read arrays (None if a column is not an
    integer with a finite range, or there are too many points)."""
    n = lp.num_col_
    lo, hi = np.asarray(lp.col_lower_), np.asarray(lp.col_upper_)
    integ = np.asarray([int(v) for v in lp.integrality_]) if len(lp.integrality_) else \
        np.zeros(n, int)
    if n == 0 or not np.all(integ == 1) or not (np.all(np.isfinite(lo))
                                                 and np.all(np.isfinite(hi))):
        return None
    ranges = [range(int(math.ceil(a - 1e-9)), int(math.floor(b + 1e-9)) + 1)
              for a, b in zip(lo, hi, strict=True)]
    if math.prod(len(r) for r in ranges) > BRUTE_MAX_POINTS:
        return None
    A = np.zeros((lp.num_row_, n))
    m = lp.a_matrix_
    for j in range(n):
        for k in range(m.start_[j], m.start_[j + 1]):
            A[m.index_[k], j] = m.value_[k]
    X = np.array(list(itertools.product(*ranges)), dtype=float).reshape(-1, n)
    ax = X @ A.T
    tol = 1e-9 * np.maximum(1.0, np.abs(ax))
    ok = np.all((ax >= np.asarray(lp.row_lower_) - tol) & (ax <= np.asarray(lp.row_upper_) + tol),
                axis=1)
    values = X[ok] @ np.asarray(lp.col_cost_) + lp.offset_
    maximize = lp.sense_ == highspy.ObjSense.kMaximize
    if not len(values):
        return -math.inf if maximize else math.inf
    return float(values.max() if maximize else values.min())


def model_objective(r: crowdopt.Result) -> float | None:
    """The objective of the model at `solve_model`'s answer (the solver's, in the model's
    own terms; the problem's evaluator may differ where the user changed the objective)."""
    return r.details.get("objective")


@dataclass(frozen=True)
class Verdict:
    """One modified solve held against the independent route."""

    agree: bool
    false_proof: bool
    why: str


def compare(r: crowdopt.Result, ans: Answer, maximize: bool) -> Verdict:
    """Same status, equal objectives within REL (plus 1e-9 of the objective's scale); a
    proof where the independent route finds a better objective is a false proof."""
    mine = model_objective(r)
    best = ans.objective
    if ans.brute is not None and ans.status == "optimal" and math.isfinite(ans.brute):
        best = ans.brute if best is None else (max(best, ans.brute) if maximize
                                               else min(best, ans.brute))
    tol = REL * max(abs(mine or 0.0), abs(best or 0.0)) + 1e-9 * ans.scale
    better = (best is not None and mine is not None
              and (best > mine + tol if maximize else best < mine - tol))
    false_proof = bool(r.certificate is not None and r.certificate.proven_optimal and better)
    if ans.status == "optimal":
        if r.status is not Status.OPTIMAL or mine is None:
            return Verdict(False, false_proof, f"independent optimal {best!r}, crowdopt "
                           f"{r.status} ({r.message})")
        if abs(mine - best) > tol:
            return Verdict(False, false_proof, f"objective {mine!r} vs independent {best!r}")
        if ans.brute is not None and abs(ans.brute - best) > tol:
            return Verdict(False, false_proof, f"brute force {ans.brute!r} vs {best!r}")
        return Verdict(True, False, "")
    if ans.status == "infeasible":
        ok = r.status is Status.INFEASIBLE and not (ans.brute is not None
                                                     and math.isfinite(ans.brute))
        return Verdict(ok, False, "" if ok else f"independent infeasible, crowdopt {r.status}")
    if ans.status == "unbounded":
        ok = r.status in (Status.UNBOUNDED, Status.INFEASIBLE) and not r.proven_optimal
        return Verdict(ok, False, "" if ok else f"independent unbounded, crowdopt {r.status}")
    return Verdict(False, false_proof, f"independent status {ans.status}")


# ----------------------------------------------------------------------------- modifications
Pick = Callable[[list], Any]  # picks one element of a nonempty list (hypothesis-driven)


def _free_integers(m: Any) -> list:
    return [v for v in m.component_data_objects(pyo.Var, descend_into=True)
            if not v.fixed and v.is_integer() and v.lb != v.ub]


def _continuous(m: Any) -> list:
    return [v for v in m.component_data_objects(pyo.Var, descend_into=True)
            if not v.fixed and not v.is_integer()]


def _objective(m: Any) -> Any:
    return next(m.component_data_objects(pyo.Objective, active=True, descend_into=True))


def _replace_objective(m: Any, expr: Any, sense: Any = None) -> None:
    obj = _objective(m)
    obj.deactivate()
    m.user_objective = pyo.Objective(expr=expr, sense=obj.sense if sense is None else sense)


def _subset(pick: Pick, pool: list, most: int = 4) -> list:
    k = pick(list(range(1, min(most, len(pool)) + 1)))
    start = pick(list(range(len(pool))))
    return [pool[(start + 3 * i) % len(pool)] for i in range(k)]


def none(m: Any, pick: Pick) -> str:
    return "unchanged"


def extra_row(m: Any, pick: Pick) -> str:
    pool = _free_integers(m)
    if not pool:
        return "no integer variable"
    vs = _subset(pick, pool)
    k = pick(list(range(len(vs))))
    m.user_row = pyo.Constraint(expr=sum(vs) <= k)
    return f"sum of {len(vs)} <= {k}"


def forbid_pair(m: Any, pick: Pick) -> str:
    pool = _free_integers(m)
    if len(pool) < 2:
        return "fewer than two integer variables"
    a = pick(pool)
    b = pick([v for v in pool if v is not a])
    m.user_pair = pyo.Constraint(expr=a + b <= 1)
    return f"{a.name} + {b.name} <= 1"


def objective_coefficient(m: Any, pick: Pick) -> str:
    pool = _free_integers(m) + _continuous(m)
    if not pool:
        return "no variable"
    v = pick(pool)
    c = pick([-1.0, -0.3, 0.3, 1.0])
    _replace_objective(m, _objective(m).expr + c * v)
    return f"objective + {c} {v.name}"


def _one_integer(m: Any, pick: Pick) -> Any:
    """A free integer variable of the model, or None."""
    pool = _free_integers(m)
    return pick(pool) if pool else None


def objective_expression(m: Any, pick: Pick) -> str:
    v = _one_integer(m, pick)
    if v is None:
        return "no integer variable"
    m.user_expr = pyo.Expression(expr=_objective(m).expr + 0.3 * v)
    _replace_objective(m, m.user_expr)
    return f"objective over an Expression, + 0.3 {v.name}"


def fix(m: Any, pick: Pick) -> str:
    v = _one_integer(m, pick)
    if v is None:
        return "no integer variable"
    v.fix(pick([int(v.lb), int(v.ub)]))
    return f"{v.name} fixed at {v.value}"


def unfix(m: Any, pick: Pick) -> str:
    fixed = [v for v in m.component_data_objects(pyo.Var, descend_into=True) if v.fixed]
    held = [v for v in m.component_data_objects(pyo.Var, descend_into=True)
            if not v.fixed and v.is_integer() and v.lb == v.ub]
    if fixed:
        v = pick(fixed)
        v.unfix()
        return f"{v.name} unfixed"
    if held:
        v = pick(held)
        v.setub(v.lb + 1)
        return f"{v.name} freed ({v.lb}..{v.ub})"
    return "nothing fixed"


def tighter_bound(m: Any, pick: Pick) -> str:
    cont = [v for v in _continuous(m) if v.ub is not None or v.lb is not None]
    pool = cont or _free_integers(m)
    if not pool:
        return "no variable"
    v = pick(pool)
    if v.is_integer():
        v.setub(v.lb)
        return f"{v.name} <= {v.lb}"
    lo = v.lb if v.lb is not None else v.ub - 2.0
    hi = v.ub if v.ub is not None else lo + 2.0
    frac = pick([0.0, 0.25, 0.5, 0.9])
    side = pick(["ub", "lb"])
    cut = lo + frac * (hi - lo) if side == "ub" else hi - frac * (hi - lo)
    (v.setub if side == "ub" else v.setlb)(cut)
    return f"{v.name} {'<=' if side == 'ub' else '>='} {cut:g}"


def deactivate_row(m: Any, pick: Pick) -> str:
    rows = list(m.component_data_objects(pyo.Constraint, active=True, descend_into=True))
    if not rows:
        return "no row"
    c = pick(rows)
    c.deactivate()
    return f"{c.name} deactivated"


def deactivate_all_rows(m: Any, pick: Pick) -> str:
    for c in m.component_objects(pyo.Constraint, active=True, descend_into=True):
        c.deactivate()
    return "every row deactivated"


def scaled_small(m: Any, pick: Pick) -> str:
    _replace_objective(m, 1e-8 * _objective(m).expr)
    return "objective x 1e-8"


def scaled_large(m: Any, pick: Pick) -> str:
    _replace_objective(m, 1e8 * _objective(m).expr)
    return "objective x 1e8"


def infeasible_row(m: Any, pick: Pick) -> str:
    pool = _free_integers(m)
    if not pool:
        m.user_v = pyo.Var(bounds=(0, 1))
        m.user_impossible = pyo.Constraint(expr=m.user_v >= 2)
        return "a new variable in [0, 1] >= 2"
    vs = _subset(pick, pool)
    m.user_impossible = pyo.Constraint(expr=sum(vs) >= sum(v.ub for v in vs) + 1)
    return f"sum of {len(vs)} >= its maximum + 1"


def new_variable_row(m: Any, pick: Pick) -> str:
    pool = _free_integers(m)
    if not pool:
        return "no integer variable"
    vs = _subset(pick, pool, 3)
    m.user_w = pyo.Var(domain=pyo.Binary)
    m.user_link = pyo.Constraint(range(len(vs)), rule=lambda m, i: m.user_w >= vs[i])
    m.user_cap = pyo.Constraint(expr=m.user_w <= pick([0, 1]))
    return f"new binary w >= {len(vs)} variables, w <= {m.user_cap.upper}"


def flip_sense(m: Any, pick: Pick) -> str:
    obj = _objective(m)
    _replace_objective(m, obj.expr, pyo.minimize if obj.sense == pyo.maximize else pyo.maximize)
    return "sense flipped"


MODIFICATIONS: dict[str, Callable[[Any, Pick], str]] = {
    f.__name__: f for f in (none, extra_row, forbid_pair, objective_coefficient,
                            objective_expression, fix, unfix, tighter_bound, deactivate_row,
                            deactivate_all_rows, scaled_small, scaled_large, infeasible_row,
                            new_variable_row, flip_sense)}


# ----------------------------------------------------------------------------- instances
def small_instance(problem: str, draw: Callable[[list], Any], seed: int) -> Any:
    """A small random instance of `problem` (every model proves it in milliseconds), its
    shape drawn by `draw` (picks one of a list)."""
    if problem == "olas-assign":
        return crowdopt.generate(problem, seed, points=draw([1, 2, 3, 5, 6]),
                                 labelers=draw([1, 2, 3]), decimals=draw([-1, 1]))
    if problem == "olas-select":
        return crowdopt.generate(problem, seed, points=draw([1, 3, 5, 8]),
                                 labelers=draw([1, 2, 3]), beta=draw([0.02, 0.1, 0.3]),
                                 budget=draw([-1, 0, 2, 5]),
                                 noise=draw(["linear", "superellipse"]), decimals=draw([-1, 1]))
    if problem == "labeler-set":
        return crowdopt.generate(problem, seed, labelers=draw([1, 2, 3, 4]),
                                 rule=draw(["mv", "wmv"]), costs=draw(["none", "random"]),
                                 decimals=2)
    if problem == "worker-select":
        M = draw([1, 2, 4, 6])
        return crowdopt.generate(problem, seed, workers=M, max_workers=draw([1, 2, M, M + 1]),
                                 cost_max=draw([0, 0, 5]))
    t = draw([1, 2, 3])
    return crowdopt.generate(problem, seed, t=t, a=draw([1, 2, 3]), K=draw(list(range(1, t + 1))),
                             trend=draw(["dec", "inc"]))


@dataclass(frozen=True)
class Case:
    """One modified solve: what was drawn, the two answers, the verdict, the route."""

    problem: str
    method: str
    kind: str
    what: str
    passes: str
    change: str
    verdict: Verdict
    time_s: float
    independent_s: float


def run_case(problem: str, method: str, inst: Any, kind: str, pick: Pick) -> Case:
    """Build the model, apply the modification `kind`, solve it both ways, compare."""
    m = crowdopt.build_model(inst, method)
    what = MODIFICATIONS[kind](m, pick)
    maximize = _objective(m).sense == pyo.maximize
    t0 = time.process_time()
    ans = independent(m)
    try:
        r = crowdopt.solve_model(inst, m, time_limit=60)
    except Exception as exc:  # noqa: BLE001 - a crash is a disagreement, reported as such
        verdict = Verdict(False, False, f"solve_model raised {type(exc).__name__}: {exc}")
        r = None
    took = time.process_time() - t0 - ans.time_s
    if r is not None:
        verdict = compare(r, ans, maximize)
    if not verdict.agree:
        verdict = Verdict(False, verdict.false_proof, verdict.why + f" [{what}; "
                          f"{inst.spec.name} {inst.to_dict()}]")
    details = r.details if r is not None else {}
    return Case(problem, method, kind, what, str(details.get("passes", "")),
                str(details.get("change_kind", "")), verdict, took, ans.time_s)
