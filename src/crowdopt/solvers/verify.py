"""The one verification step of every route [ours]: `crowdopt.solve`, `solve_model`, `compare`
and `certify` (and the CLI, sweeps and reproductions, which call them) end here, so that a
proof means one thing whichever route made it.

- `PointCheck` re-checks an answer as a point of the model that was solved, a user's rows and
  variables included: the answer's decision variables are fixed at its values
  (`Formulation.encode`) on a fresh copy of the loaded arrays, the other columns completed by one
  HiGHS solve, and the completed point's violation measured. On a model as built, every plan the
  problem's evaluator calls feasible is a point of it (each formulation is exact: the fast ==
  exact tests), so there the evaluator is the check and no solve runs.
- `fast_net` runs every fast method of the problem; a plan is kept where it is a point of the
  model solved, valued by the evaluator (or by the model's objective where a user changed it).
- `settle` treats every bound that a feasible value found anywhere in the run crosses as
  refuted: dropped, with every proof made from it; the best bound comes from the rest, and the
  answer is the best feasible one seen (a refuted run's answer is not kept over a better plan).

"Proven optimal" is then `solvers.certify.make_certificate`'s one rule on what this step
leaves: a feasible answer meets the best surviving bound within the relative tolerance, from a
run that no limit stopped.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import CrowdoptError, InputError
from ..problems.catalogue import Evaluation, ProblemSpec, RunOptions
from ..status import Status
from .certify import gap_ratio, lower_upper

# a completed point may violate a row that a free (completed) column is in by this much,
# relative to the row's terms (|A| |x| + |bounds|): HiGHS's noise on what it completes
POINT_TOL = 1e-8
# a row of fixed columns only is computed exactly: 1e-9 of its terms (a user's row
# `1e8 s <= 1e8 - 1` at s = 1 is violated by 1e-8 of its terms)
FIXED_ROW_TOL = 1e-9
# the net's local searches: this many seconds at most (a refutation needs a better plan, not
# the best one; the exact run's own start already searched)
NET_SEARCH_S = 0.05
POINT_TIME_S = 30.0  # the time limit of one completion solve


@dataclass(frozen=True)
class Candidate:
    """A feasible answer seen in a run: its source (an algorithm, or 'given'), the typed
    solution, the evaluator's verdict, and its value in the objective being verified (the
    problem's, or a user's model objective)."""

    source: str
    solution: Any
    evaluation: Evaluation
    value: float


@dataclass(frozen=True)
class Claim:
    """A bound a run claims: its value, its source as results name it, the run that claimed it
    (`owner`) and the solver's absolute noise in our units (`floor`, 0 for closed forms)."""

    value: float
    source: str
    owner: str
    floor: float = 0.0


@dataclass
class Settled:
    """What `settle` leaves: the best answer, the best surviving bound, the refuted bounds."""

    best: Candidate | None
    bound: Claim | None
    refuted: list[dict] = field(default_factory=list)

    def refuted_owners(self) -> set[str]:
        """The runs whose bound was refuted."""
        return {r["owner"] for r in self.refuted}


def better(sense: str, a: float, b: float) -> bool:
    """Whether value a is strictly better than b for the sense."""
    return a > b if sense == "max" else a < b


def crosses(sense: str, value: float, claim: Claim) -> bool:
    """Whether a feasible `value` lies beyond the bound `claim` by more than the certificates'
    tolerance (relative, plus the claim's noise floor): the bound is then false."""
    gap = gap_ratio(*lower_upper(sense, value, claim.value), claim.floor)[0]
    return gap is not None and gap < 0


def tighter(sense: str, a: float, b: float) -> bool:
    """Whether bound a is tighter than bound b (lower for max, higher for min)."""
    return a < b if sense == "max" else a > b


def settle(sense: str, candidates: Sequence[Candidate], claims: Sequence[Claim]) -> Settled:
    """The best candidate (the first among equals), every claim it crosses refuted (any
    candidate that crosses a bound makes the best one cross it too), and the tightest claim
    left."""
    best: Candidate | None = None
    for c in candidates:
        if math.isfinite(c.value) and (best is None or better(sense, c.value, best.value)):
            best = c
    out = Settled(best, None)
    for cl in claims:
        if not math.isfinite(cl.value):
            continue
        if best is not None and crosses(sense, best.value, cl):
            out.refuted.append({"bound": cl.value, "source": cl.source, "owner": cl.owner,
                                "crossed_by": best.value, "by": best.source})
        elif out.bound is None or tighter(sense, cl.value, out.bound.value):
            out.bound = cl
    return out


def refutation_message(settled: Settled, owner: str) -> str:
    """One line: which feasible value refuted `owner`'s bound."""
    r = next(x for x in settled.refuted if x["owner"] == owner)
    return (f"the bound {r['bound']:.9g} ({r['source']}) is crossed by the feasible value "
            f"{r['crossed_by']:.9g} ({r['by']}): refuted (a solver or method defect), "
            "not proven")


# ----------------------------------------------------------------------------- points
@dataclass(frozen=True)
class PointVerdict:
    """Whether an answer is a point of the model solved, the model's objective at its best
    completion (None where it is not a point), and why not."""

    point: bool
    value: float | None = None
    why: str = ""


class PointCheck:
    """Answers re-checked as points of one loaded model (see the module docstring).

    arrays: the model's matrix as loaded (a `MatrixForm`); write(solution) -> (columns,
    values) of the answer's decision variables, or a `PointVerdict` saying why it cannot be
    written (`pyomo_writer`: a formulation's encoder on a Pyomo model; an array emitter's
    `encode` on the emitted columns); same_objective: the model's objective is the problem's
    (a point is then valued by the evaluator, else by the model's objective at its
    completion)."""

    def __init__(self, arrays: Any, write: Callable[[Any], Any], same_objective: bool,
                 time_limit: float | None = None, registered_rows: bool = True) -> None:
        self.arrays, self.write, self.same_objective = arrays, write, same_objective
        # False: `arrays` hold only a user's added rows (the mixed route): an answer must then
        # also be feasible for the problem's evaluator, whose rows the registered ones are
        self.registered_rows = registered_rows
        self.time_limit = POINT_TIME_S if time_limit is None else min(time_limit, POINT_TIME_S)
        self._A: tuple | None = None
        self.solves = 0
        self.seconds = 0.0

    def __call__(self, solution: Any) -> PointVerdict:
        t0 = time.perf_counter()
        try:
            try:
                written = self.write(solution)
            except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
                return PointVerdict(False, None, f"not expressible in the model's variables "
                                    f"({type(exc).__name__}: {exc})")
            if isinstance(written, PointVerdict):
                return written
            cols, vals = written
            return self._complete(np.asarray(cols, dtype=np.int32),
                                  np.asarray(vals, dtype=float))
        finally:
            self.seconds += time.perf_counter() - t0

    def at(self, x: Any) -> PointVerdict:
        """The solver's own answer `x` (the loaded model's columns, the caller's units) as a
        point: its integer columns rounded (what the decoders read), the others completed."""
        t0 = time.perf_counter()
        try:
            x = np.asarray(x, dtype=float)
            ints = np.flatnonzero(np.asarray(self.arrays.integrality) != 0).astype(np.int32)
            if x.shape != (len(self.arrays.col_lo),):
                return PointVerdict(False, None, "the solver's point has another shape")
            return self._complete(ints, np.round(x[ints]))
        finally:
            self.seconds += time.perf_counter() - t0

    def _complete(self, idx: np.ndarray, v: np.ndarray) -> PointVerdict:
        """Columns `idx` fixed at `v`; the rows they alone make checked as they are (within
        FIXED_ROW_TOL of their terms: exact arithmetic on the fixed values), the others
        completed by one small solve over the free columns (the model's own objective on
        them), then checked within POINT_TOL of their terms (HiGHS's noise). The value is the
        model's objective at the completed point."""
        a = self.arrays
        n = len(a.col_lo)
        col_lo, col_hi = np.asarray(a.col_lo, float), np.asarray(a.col_hi, float)
        lo, hi = col_lo[idx], col_hi[idx]
        off = np.flatnonzero((v < lo - 1e-9 * np.maximum(1.0, np.abs(lo)))
                             | (v > hi + 1e-9 * np.maximum(1.0, np.abs(hi))))
        if off.size:
            return PointVerdict(False, None, f"column {int(idx[off[0]])} = {v[off[0]]:g} is "
                                f"outside its bounds [{lo[off[0]]:g}, {hi[off[0]]:g}]")
        x = np.zeros(n)
        x[idx] = v
        free = np.ones(n, bool)
        free[idx] = False
        A, A_abs, A_csc = self._matrices()
        row_lo, row_hi = np.asarray(a.row_lo, float), np.asarray(a.row_hi, float)
        touched = np.zeros(A.shape[0], bool)
        cols = np.flatnonzero(free)
        if cols.size:
            of_free = A_csc[:, cols]
            touched = np.bincount(of_free.indices, minlength=A.shape[0]) > 0
            if touched.any():
                verdict = self._solve_free(a, A, x, cols, np.flatnonzero(touched), row_lo,
                                           row_hi)
                if verdict is not None:
                    return verdict
            # a free column in no row: at its bound the objective prefers (0 if it can)
            loose = cols[np.diff(of_free.indptr) == 0]
            for j in loose.tolist():
                x[j] = _best_in_box(float(np.asarray(a.c, float)[j]), a.sense, col_lo[j],
                                    col_hi[j])
        ax = A @ x
        mag = A_abs @ np.abs(x) + np.where(np.isfinite(row_lo), np.abs(row_lo), 0.0) \
            + np.where(np.isfinite(row_hi), np.abs(row_hi), 0.0)
        tol = np.where(touched, POINT_TOL, FIXED_ROW_TOL) * mag
        viol = np.maximum(row_lo - ax, ax - row_hi) - tol
        if viol.size and viol.max() > 0:
            r = int(np.argmax(viol))
            return PointVerdict(False, None, f"row {r} is violated by "
                                f"{max(row_lo[r] - ax[r], ax[r] - row_hi[r]):.3g}")
        return PointVerdict(True, float(np.asarray(a.c, float) @ x + a.offset), "")

    def _matrices(self) -> tuple:
        """(A row-wise, |A| row-wise, A column-wise) of the checked model, made once."""
        if self._A is None:
            csr = sp.csr_array(self.arrays.A)
            self._A = (csr, abs(csr), sp.csc_array(self.arrays.A))
        return self._A

    def _solve_free(self, a: Any, A: Any, x: np.ndarray, cols: np.ndarray, rows: np.ndarray,
                    row_lo: np.ndarray, row_hi: np.ndarray) -> PointVerdict | None:
        """The free columns `cols` of the rows `rows` they appear in, solved (their bounds,
        integrality and costs, the fixed columns' activity moved into the row bounds); None
        and `x` completed when it has a point."""
        from .highs import HighsModel, HighsOptions

        sub = A[rows][:, cols]
        fixed = A[rows] @ x  # x holds only the fixed columns' values yet
        ints = np.asarray(a.integrality)[cols]
        hm = HighsModel.from_arrays(np.asarray(a.c, float)[cols], sp.csc_array(sub),
                                    row_lo[rows] - fixed, row_hi[rows] - fixed,
                                    np.asarray(a.col_lo, float)[cols],
                                    np.asarray(a.col_hi, float)[cols],
                                    ints if np.any(ints) else None, sense=a.sense,
                                    options=HighsOptions(time_limit=self.time_limit))
        res = hm.solve()
        self.solves += 1
        if res.status is not Status.OPTIMAL or res.x is None:
            return PointVerdict(False, None, f"no completion of it is a point of the model "
                                f"(HiGHS: {res.status}{': ' + res.message if res.message else ''})")
        x[cols] = res.x
        x[cols[ints != 0]] = np.round(x[cols[ints != 0]])
        return None


def _best_in_box(cost: float, sense: str, lo: float, hi: float) -> float:
    """A column in no row: the value of its box the objective prefers (0 where it is free)."""
    if cost == 0:
        return min(max(0.0, lo), hi)
    up = (cost > 0) == (sense == "max")
    return hi if up else lo


def pyomo_writer(encode: Callable[[Any, Any, Any], list], inst: Any, model: Any,
                 column_of: dict[int, int]) -> Callable[[Any], Any]:
    """The `PointCheck.write` of a compiled Pyomo model: the formulation's encoder (its
    (variable, value) pairs) on its columns (`column_of`: id(variable) -> column); a variable
    that is no column (fixed, or in no row) must hold the value where it is."""
    def write(solution: Any) -> Any:
        cols: list[int] = []
        vals: list[float] = []
        for var, val in encode(inst, model, solution):
            k = column_of.get(id(var))
            if k is not None:
                cols.append(k)
                vals.append(float(val))
                continue
            lo = var.value if var.fixed else var.lb
            hi = var.value if var.fixed else var.ub
            if (lo is not None and val < lo - 1e-9 * max(1.0, abs(lo))) or (
                    hi is not None and val > hi + 1e-9 * max(1.0, abs(hi))):
                return PointVerdict(False, None, f"{var.name} = {val:g} is outside "
                                    f"[{lo}, {hi}] in the model")
        return cols, vals

    return write


def candidate(spec: ProblemSpec, inst: Any, solution: Any, source: str,
              point: PointCheck | None = None, evaluation: Evaluation | None = None,
              same_objective: bool = True) -> tuple[Candidate | None, str]:
    """The candidate of an answer (None with the reason where it is not one). On the model as
    built (`point` None) an answer is a point iff the evaluator calls it feasible, and is valued
    by it. On a changed model the answer must be a point of it (`point`), valued by the model's
    objective at its completion (where the user left the problem's objective, a plan's
    completion has the plan's value; a user's relaxed model: a point of it may be infeasible
    for the problem)."""
    ev = evaluation if evaluation is not None else spec.evaluate(inst, solution)
    usable = (ev.feasible and ev.objective is not None and math.isfinite(ev.objective))
    if point is None:
        if not usable:
            return None, "infeasible for the problem's evaluator"
        return Candidate(source, solution, ev, float(ev.objective)), ""
    if not point.registered_rows and not usable:
        return None, "infeasible for the problem's evaluator (the model's registered rows)"
    verdict = point(solution)
    if not verdict.point:
        return None, "not a point of the model solved: " + verdict.why
    return Candidate(source, solution, ev, float(verdict.value)), ""


def fast_net(spec: ProblemSpec, inst: Any, options: RunOptions, *,
             skip: Sequence[str] = (), point: PointCheck | None = None
             ) -> tuple[list[Candidate], list[dict]]:
    """Every fast method of the problem that applies (but those in `skip`), each plan a
    candidate where it is one (`candidate`); local searches get at most NET_SEARCH_S and what
    is left of the run's limit (`options.started`, `time_limit`), none past it. Returns the
    candidates and a record per method."""
    own = options.search_s if options.search_s is not None else NET_SEARCH_S
    left = math.inf
    if options.time_limit is not None and options.started is not None:
        left = options.time_limit - (time.perf_counter() - options.started)
    opts = RunOptions(seed=options.seed, search_s=max(min(own, NET_SEARCH_S, left), 1e-3),
                      max_steps=options.max_steps)
    cands: list[Candidate] = []
    record: list[dict] = []
    for m in spec.methods:
        if m.kind != "fast" or m.algorithm in skip or m.refuses(inst, False):
            continue
        if left <= 0 and m.time_limit is not None:  # a search with no time left: the
            record.append({"algorithm": m.algorithm, "kept": False,  # quick ones still run
                           "why": "not run: the time limit was used up"})
            continue
        try:
            out = m.run(inst, opts)
        except InputError:
            raise
        except CrowdoptError as exc:
            record.append({"algorithm": m.algorithm, "kept": False, "why": str(exc)})
            continue
        if out.solution is None:
            record.append({"algorithm": m.algorithm, "kept": False, "why": "no solution"})
            continue
        cand, why = candidate(spec, inst, out.solution, m.algorithm, point,
                              same_objective=point.same_objective if point else True)
        if cand is None:
            record.append({"algorithm": m.algorithm, "kept": False, "why": why})
            continue
        cands.append(cand)
        record.append({"algorithm": m.algorithm, "kept": True, "value": cand.value})
    return cands, record


def _own_candidate(point: PointCheck, source: str, solution: Any, evaluation: Evaluation,
                   x: Any) -> tuple[Candidate | None, str]:
    """A run's own answer on a changed model: a point if the solver's point is one (rounded as
    the decoders read it; valued there: the model's objective at the solver's answer) or if the
    decoded answer written back is one (`Formulation.encode`; a decoder may normalize, e.g.
    head-cover places the prefix's unused labels on tasks, and a plan has several
    encodings)."""
    if not point.registered_rows and not evaluation.feasible:
        return None, "infeasible for the problem's evaluator (the model's registered rows)"
    at = point.at(x)
    if at.point:
        return Candidate(source, solution, evaluation, float(at.value)), ""
    back = point(solution)
    if back.point:
        return Candidate(source, solution, evaluation, float(back.value)), ""
    return None, f"not a point of the model solved: {at.why}; written back: {back.why}"


# ----------------------------------------------------------------------------- one run
@dataclass
class Verified:
    """A run after the verification step: its status (a refuted proof is `feasible`), the
    answer kept (the best feasible one seen), the surviving bound, a message where the step
    changed something, and the record for the run's details (`verification`)."""

    status: Status
    solution: Any
    evaluation: Evaluation | None
    primal_source: str
    value: float | None
    bound: float | None
    bound_source: str | None
    message: str
    record: dict


def verify_run(spec: ProblemSpec, inst: Any, algorithm: str, status: Status, solution: Any,
               evaluation: Evaluation | None, bound: float | None, bound_source: str | None,
               floor: float, options: RunOptions, *, point: PointCheck | None = None,
               same_objective: bool = True, own_value: float | None = None,
               net: bool = True, skip: Sequence[str] = (), sense: str | None = None,
               own_x: Any = None) -> Verified:
    """The verification step of one run (see the module docstring).

    (a) the run's answer is a candidate only where it is feasible for the evaluator and a point
    of the model solved (`point`; None: the model as built); valued by the evaluator where the
    model's objective is the problem's, else by the model's objective (`own_value` where no
    point check can complete it). (b) where the run claims a proof (status optimal), every
    fast method of the problem but those in `skip` (`fast_net`). (c) the run's bound is refuted
    where a candidate crosses it. (d) the answer is the best candidate. `sense`: the sense of
    the objective verified (a user's model may flip the problem's); `own_x`: the solver's
    point behind the answer (`_own_candidate`)."""
    status = Status(status)
    sense = sense or spec.sense
    record: dict[str, Any] = {}
    cands: list[Candidate] = []
    own: Candidate | None = None
    not_a_point = False
    if solution is not None and evaluation is not None:
        if point is None and not same_objective:  # a model with no encoder: its own value
            ok = own_value is not None and math.isfinite(own_value)
            own = Candidate(algorithm, solution, evaluation, float(own_value)) if ok else None
            why = "" if ok else "no value of the model's objective at the answer"
        elif point is not None and own_x is not None:
            own, why = _own_candidate(point, algorithm, solution, evaluation, own_x)
            not_a_point = own is None
        else:
            own, why = candidate(spec, inst, solution, algorithm, point, evaluation,
                                 same_objective)
            not_a_point = own is None and point is not None
        if own is None:
            record["answer_rejected"] = why
        else:
            cands.append(own)
    if net and status is Status.OPTIMAL:
        if point is None and not same_objective:  # plans cannot be valued in the model's terms
            record["net"] = "none: the model's objective is not the problem's and its plans " \
                            "cannot be completed as points"
        else:
            found, record["net"] = fast_net(spec, inst, options, skip=(algorithm, *skip),
                                            point=point)
            cands += found
    if point is not None:
        record["point_checks"] = {"solves": point.solves, "time_s": point.seconds}
    claims = []
    if bound is not None and math.isfinite(bound):
        claims.append(Claim(float(bound), bound_source or "bound", algorithm, floor))
    settled = settle(sense, cands, claims)
    message = ""
    if settled.refuted:
        record["refuted"] = settled.refuted
        message = refutation_message(settled, algorithm)
        bound, bound_source = None, None
        if status is Status.OPTIMAL:
            status = Status.FEASIBLE
    best = settled.best
    if best is None or (own is None and not not_a_point):
        # an answer the evaluator refuses is reported as it is (its certificate fails: a
        # defect to see, not to hide behind another plan), unless it is not even a point of
        # the model solved
        if not_a_point and best is None:
            message = message or ("the answer is not a point of the model solved ("
                                  + record["answer_rejected"] + "): no answer")
            if status in (Status.OPTIMAL, Status.FEASIBLE):
                status = Status.NO_SOLUTION
            return Verified(status, None, None, algorithm, None, bound, bound_source, message,
                            record)
        if not not_a_point:
            return Verified(status, solution, evaluation, algorithm, None, bound, bound_source,
                            message, record)
    if best is not own:
        record["answer"] = best.source
        if own is None and status is Status.OPTIMAL:
            status = Status.FEASIBLE
            message = message or ("the run's answer is not a point of the model solved ("
                                  + record.get("answer_rejected", "") + "); the best plan "
                                  f"that is: {best.source}")
    return Verified(status, best.solution, best.evaluation, best.source, best.value, bound,
                    bound_source, message, record)
