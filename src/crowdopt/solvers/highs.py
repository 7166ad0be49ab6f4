"""The one place that talks to HiGHS.

Route (measured in benchmarks/bench_highs_routes.py): the Pyomo model is compiled once by
Pyomo's `LinearStandardFormCompiler` into sparse arrays, which are passed to a `highspy.Highs`
object. This is about 2x faster end to end than Pyomo's `pyomo.contrib.solver` HiGHS interface
on assignment-sized models, and keeps what we need: MIP dual bound, node count, LP row duals,
and a live Highs object to which column generation can add columns (`HighsModel.add_columns`).

Nothing from HiGHS or Pyomo leaks out: every outcome is a `HighsResult` with a `Status`.
Exact claims use `mip_rel_gap = 0` (the default here); a status is never proof on its own, the
result carries the bound and the gap. HiGHS 1.14-1.15 presolve can call a feasible MILP
"infeasible" (digests/000-olas.md section 6.2): every infeasible report obtained with presolve on
is re-checked with presolve off, and a model declared `known_feasible` that still comes back
infeasible is an `error`, never an infeasibility claim.

A `HighsModel` stays live after a solve: rows and columns can be added, costs, sense, bounds and
integrality changed, a start point given, and it re-solves warm (column generation, the min-|S|
second pass of worker selection, the MILP fallback of the TU LPs). Models whose structure is
fixed are loaded straight from numpy arrays (`from_arrays`); Pyomo models are compiled once
(`from_pyomo`). `capture()` records every call made on the highspy objects (and the time spent in
HiGHS, in the compiler and in this adapter) so that a benchmark can replay exactly the same
arrays and options on a fresh highspy object (benchmarks/bench_exact_overhead.py).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np
import scipy.sparse as sp

from ..models.formulation import MatrixForm
from ..status import Status
from ..validate import env_flag

INF = highspy.kHighsInf

__all__ = [
    "HighsModel",
    "HighsOptions",
    "HighsResult",
    "Status",
    "highs_version",
    "solve_model",
]


# A solve with a time limit returns by limit + this slack (wall clock) whatever HiGHS does:
# its presolve does not look at the clock, and a run still going then is left behind.
WATCHDOG_SLACK_S = 1.0
WATCHDOG = True
# a limit past this has no watchdog: a thread wait that long overflows the platform's clock
# (1e12 s: OverflowError), and a run that long outlives any watch anyway
WATCHDOG_MAX_S = 1e6
_LEFT_BEHIND: list[threading.Thread] = []  # runs the watchdog gave up on


def runs_left_behind() -> int:
    """How many HiGHS runs the watchdog left behind are still going (the CLI exits without
    waiting for them: `cli.main`)."""
    _LEFT_BEHIND[:] = [t for t in _LEFT_BEHIND if t.is_alive()]
    return len(_LEFT_BEHIND)


@dataclass(frozen=True)
class HighsOptions:
    """Solver settings. Defaults are for exact claims: gap 0, one thread, presolve on."""

    time_limit: float | None = None
    mip_rel_gap: float = 0.0
    mip_abs_gap: float = 0.0
    threads: int = 1
    presolve: bool = True
    # The model is feasible by construction (e.g. y = 0 is feasible): an "infeasible" report
    # is a solver defect, retried with presolve off and reported as `error` if it persists.
    known_feasible: bool = False
    # Re-run with presolve off whenever presolve reports infeasible/unbounded.
    confirm_infeasible: bool = True
    # Primal/MIP feasibility tolerance. HiGHS's default (1e-6 for MIP) lets an epigraph row be
    # violated by ~1e-7 and the "optimal" value then sits below the true optimum; exact claims
    # with objective values in [0, 1] need a tighter tolerance.
    feasibility_tol: float = 1e-9
    # LP only: which algorithm ("choose", "simplex", "ipm"); column generation wants simplex.
    lp_solver: str = "choose"
    # HiGHS log on stderr; None = the process-wide switch (CLI --verbose sets CROWDOPT_VERBOSE)
    verbose: bool | None = None
    extra: tuple[tuple[str, Any], ...] = ()  # raw HiGHS options as (name, value) pairs
    # Scale rows, unboxed continuous columns and the objective by powers of 2 before HiGHS sees
    # them (`model_scales`): HiGHS's absolute tolerances then mean the same at every data scale.
    scale: bool = True
    # Re-solve an "optimal" answer whose objective terms reached HiGHS far below its largest
    # cost, with the objective scaled by their magnitude (`HighsModel._rescaled`); a pass that
    # tests feasibility at a fixed objective (a search step) turns it off.
    rescale: bool = True

    def __post_init__(self) -> None:
        from ..errors import InputError

        if self.time_limit is not None and not (self.time_limit > 0 and math.isfinite(self.time_limit)):
            raise InputError("time_limit", "a number > 0 (seconds) or none", self.time_limit)
        if self.threads < 1:
            raise InputError("threads", "an integer >= 1", self.threads)

    @property
    def log(self) -> bool:
        """Whether HiGHS writes its log (always to stderr, never to stdout)."""
        if self.verbose is not None:
            return bool(self.verbose)
        return env_flag("CROWDOPT_VERBOSE")

    def replace(self, **kw: Any) -> HighsOptions:
        """A copy with some settings changed."""
        data = {k: getattr(self, k) for k in self.__dataclass_fields__}
        data.update(kw)
        return HighsOptions(**data)


def highs_options(run: Any, **defaults: Any) -> HighsOptions:
    """The `HighsOptions` of a method's `RunOptions`; `defaults` are the method's own settings
    (e.g. presolve=False, known_feasible=True), which explicit options override."""
    kw = {**defaults, "time_limit": run.time_limit, "threads": run.threads,
          "mip_rel_gap": run.mip_rel_gap}
    if run.presolve is not None:
        kw["presolve"] = run.presolve
    return HighsOptions(**kw)


@dataclass
class HighsResult:
    """Plain result of one solve. `objective` and `bound` are in the model's own sense."""

    status: Status
    objective: float | None
    bound: float | None
    abs_gap: float | None
    rel_gap: float | None
    time_s: float
    compile_s: float
    solve_s: float
    nodes: int
    is_mip: bool
    sense: str
    presolve: bool
    retried_without_presolve: bool = False
    presolve_disagreed: bool = False
    raw_status: str = ""
    message: str = ""
    max_violation: float | None = None
    highs_version: str = ""
    # the magnitude of the objective's terms at the answer (sum |c_j x_j|, the caller's units;
    # without a term at the answer, the smallest cost of one unit of a column): the objective
    # reached HiGHS scaled so that this is about 1 (or re-solved so: `HighsModel._rescaled`),
    # so HiGHS's absolute tolerances times it are its noise on our numbers
    objective_unit: float = 1.0
    # the objective was re-scaled by its terms at the answer and solved again
    rescaled: bool = False
    x: np.ndarray | None = None
    row_duals: np.ndarray | None = None
    _columns: dict[int, int] = field(default_factory=dict, repr=False)
    _rows: dict[int, list[int]] = field(default_factory=dict, repr=False)

    @property
    def has_solution(self) -> bool:
        """Whether the solve returned a point."""
        return self.x is not None

    def value(self, var: Any) -> float:
        """Value of one Pyomo variable (fixed or unused variables: their own value / 0)."""
        k = self._columns.get(id(var))
        if k is None or self.x is None:
            if var.fixed:
                return float(var.value)
            lo = var.lb if var.lb is not None else -math.inf
            hi = var.ub if var.ub is not None else math.inf
            return float(min(max(0.0, lo), hi))
        return float(self.x[k])

    def values(self, component: Any) -> dict:
        """{index: value} for an indexed Pyomo Var (or {None: value} for a scalar one)."""
        return {idx: self.value(v) for idx, v in component.items()}

    def dual(self, con: Any) -> float | None:
        """LP row dual d(objective)/d(rhs) of one Pyomo constraint (sum over its rows)."""
        if self.row_duals is None:
            return None
        rows = self._rows.get(id(con), [])
        return float(sum(self.row_duals[r] for r in rows))

    def duals(self, component: Any) -> dict:
        """The row duals of a Pyomo constraint component, by index."""
        return {idx: self.dual(c) for idx, c in component.items()}

    def summary(self) -> dict:
        """JSON-ready scalar fields."""
        return {
            "status": str(self.status),
            "objective": self.objective,
            "bound": self.bound,
            "abs_gap": self.abs_gap,
            "rel_gap": self.rel_gap,
            "time_s": self.time_s,
            "compile_s": self.compile_s,
            "solve_s": self.solve_s,
            "nodes": self.nodes,
            "is_mip": self.is_mip,
            "presolve": self.presolve,
            "retried_without_presolve": self.retried_without_presolve,
            "presolve_disagreed": self.presolve_disagreed,
            "raw_status": self.raw_status,
            "max_violation": self.max_violation,
            "message": self.message,
            "highs_version": self.highs_version,
            "objective_unit": self.objective_unit,
            "rescaled": self.rescaled,
        }


@contextlib.contextmanager
def stdout_to_stderr(target: str = "stderr") -> Iterator[None]:
    """Point file descriptor 1 at stderr (or /dev/null) for the duration, restored after.

    highspy 1.16 prints its banner on stdout inside `Highs()`, before any option can apply, and
    HiGHS logs (when asked for) are C-level writes to fd 1: both must never reach stdout, which
    belongs to the caller's JSON. Python's own buffered stdout is flushed first so that nothing
    written before is reordered.
    """
    try:
        sys.stdout.flush()
    except (AttributeError, ValueError, OSError):  # closed or replaced stdout
        pass
    try:
        saved = os.dup(1)
    except OSError:  # no fd 1 at all (daemonized): nothing to protect
        yield
        return
    sink = os.open(os.devnull, os.O_WRONLY) if target == "devnull" else None
    try:
        os.dup2(2 if sink is None else sink, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        if sink is not None:
            os.close(sink)


def new_highs(verbose: bool = False) -> highspy.Highs:
    """A `highspy.Highs` made with fd 1 redirected: the ONE way to make one. Its start-up
    banner goes to stderr when the caller asked for solver logs, else nowhere."""
    with stdout_to_stderr("stderr" if verbose else "devnull"):
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
    return h


def version_of(h: highspy.Highs) -> str:
    """The HiGHS version of a Highs object already in use (no new object, no banner)."""
    return f"{h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"


def highs_version() -> str:
    """The HiGHS version (creates a quiet Highs object; prefer `version_of` on one in use)."""
    return version_of(new_highs())


_SCHEDULER_THREADS: int | None = None


def _ensure_threads(threads: int) -> None:
    # HiGHS keeps one global task scheduler per process; changing the thread count needs a reset.
    global _SCHEDULER_THREADS
    if _SCHEDULER_THREADS is not None and _SCHEDULER_THREADS != threads:
        with stdout_to_stderr():
            highspy.Highs.resetGlobalScheduler(True)
    _SCHEDULER_THREADS = threads


# ---------------------------------------------------------------------- capture (benchmarks)
# Getters replayed once after each run: what any raw highspy caller reads to get its answer.
_READS = ("getModelStatus", "getInfo", "getSolution")


@dataclass
class HighsCapture:
    """What crowdopt did with HiGHS while `capture()` was active.

    `calls[k]` lists, for the k-th Highs object, every method called on it as
    (name, arguments, seconds), arguments copied at call time; `replay()` runs the same calls on
    fresh Highs objects. `highs_s` is the time spent inside highspy (object creation included),
    `compile_s` in Pyomo's compiler and `adapter_s` in this module's `HighsModel` methods in all
    (compile and HiGHS included; the adapter's own share is `adapter_s - compile_s - highs_s`).
    """

    calls: list[list[tuple[str, tuple, float]]] = field(default_factory=list)
    clock: Any = time.perf_counter  # time.process_time: CPU seconds (a loaded machine)
    adapter_s: float = 0.0
    compile_s: float = 0.0
    copy_s: float = 0.0  # copying the recorded arguments (excluded from the adapter's share)
    _depth: int = 0

    @property
    def highs_s(self) -> float:
        """Seconds spent inside HiGHS calls."""
        return sum(t for log in self.calls for _, _, t in log)

    @property
    def own_adapter_s(self) -> float:
        """Adapter seconds outside compile, HiGHS and copies."""
        return max(self.adapter_s - self.compile_s - self.highs_s - self.copy_s, 0.0)

    def replay_calls(self) -> list[list[tuple[str, tuple]]]:
        """Per Highs object, the calls a raw highspy caller makes for the same work: every
        state-changing call and run, and after each run one read of status, info and solution
        (whose primal values `replay` converts to an array)."""
        out = []
        for log in self.calls:
            seq: list[tuple[str, tuple]] = []
            read: set[str] = set()
            for name, args, _ in log:
                if name == "__init__":
                    continue
                if name in _READS:
                    if name not in read:
                        seq.append((name, args))
                        read.add(name)
                elif name.startswith(("get", "modelStatus", "version")):
                    continue
                else:
                    seq.append((name, args))
                    if name == "run":
                        read = set()
            out.append(seq)
        return out

    def replay(self) -> float:
        """Run the captured calls on fresh Highs objects; wall seconds (creation included)."""
        seqs = self.replay_calls()
        t0 = time.perf_counter()
        for seq in seqs:
            h = new_highs()
            with stdout_to_stderr():
                for name, args in seq:
                    out = getattr(h, name)(*args)
                    if name == "getSolution":  # what a caller needs: the primal values
                        np.asarray(out.col_value, dtype=float)
        return time.perf_counter() - t0


_CAPTURE: HighsCapture | None = None


@contextlib.contextmanager
def capture(clock: Any = None) -> Iterator[HighsCapture]:
    """Record every highspy call of the HighsModels made inside the block (not re-entrant);
    `clock` times the split (default wall time; `time.process_time` for CPU time)."""
    global _CAPTURE
    prev, _CAPTURE = _CAPTURE, HighsCapture(clock=clock or time.perf_counter)
    try:
        yield _CAPTURE
    finally:
        _CAPTURE = prev


def _copy_arg(a: Any) -> Any:
    return a.copy() if isinstance(a, np.ndarray) else a


class _Recorded:
    """A Highs object whose method calls are logged (with copied arguments) into a capture."""

    def __init__(self, h: highspy.Highs, log: list) -> None:
        self._h = h
        self._log = log

    def __getattr__(self, name: str) -> Any:
        f = getattr(self._h, name)
        if not callable(f):
            return f
        log = self._log

        def call(*args: Any) -> Any:
            clock = _CAPTURE.clock if _CAPTURE is not None else time.perf_counter
            t0 = clock()
            out = f(*args)
            t1 = clock()
            log.append((name, tuple(_copy_arg(a) for a in args), t1 - t0))
            if _CAPTURE is not None:  # the copies are the capture's cost, not the adapter's
                _CAPTURE.copy_s += clock() - t1
            return out

        return call


def _adapter_time(fn: Any) -> Any:
    """Count the wall time of an outermost HighsModel call into the active capture."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        cap = _CAPTURE
        if cap is None or cap._depth:
            return fn(*args, **kw)
        cap._depth += 1
        t0 = cap.clock()
        try:
            return fn(*args, **kw)
        finally:
            cap._depth -= 1
            cap.adapter_s += cap.clock() - t0
    return wrapper


@dataclass(kw_only=True)
class CompiledModel(MatrixForm):
    """A linear Pyomo model as arrays (Pyomo's `LinearStandardFormCompiler`, mixed form):
    columns in declaration order (`columns`: the Pyomo variables), A column-wise (CSC),
    `rows`: id(constraint) -> its row indices, `row_constraints`: the constraint of each row."""

    columns: list
    rows: dict[int, list[int]]
    row_constraints: list
    compile_s: float


class InfeasibleRow(Exception):
    """A row without a free variable (its variables all fixed, or none) that cannot hold: the
    model is infeasible before HiGHS sees it (Pyomo's compiler refuses to write it)."""


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _standard_form(model: Any) -> Any:
    """Pyomo's `LinearStandardFormCompiler` on `model` (mixed form, the model's own sense), its
    refusals as crowdopt errors: a nonlinear row or objective, an active component it cannot
    take, a fixed variable without a value are one-line InputErrors naming the component; a
    constant row that cannot hold is `InfeasibleRow`.

    Columns come in the order the rows and objective first mention each Var component (each
    in index order): Pyomo 6.10's `column_order=True` maps a fixed entry of a Var other
    entries of which are columns to another entry of that Var (`TemplateVarRecorder`), so a
    fixed variable that a row or the objective mentions would come back as a free column."""
    import re

    from pyomo.common.errors import InfeasibleConstraintException, InvalidExpressionError
    from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

    from ..errors import InputError

    try:
        return LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=None)
    except InfeasibleConstraintException as exc:
        raise InfeasibleRow(_first_line(exc)) from None
    except InvalidExpressionError as exc:
        where = re.search(r"\((.*?)\)", _first_line(exc))
        raise InputError("model." + (where.group(1) if where else "?"),
                         "linear terms (HiGHS takes linear rows and a linear objective)",
                         "nonlinear terms") from None
    except (ValueError, TypeError, ZeroDivisionError) as exc:
        raise InputError("model", "a linear Pyomo model (rows, objective, variables)",
                         _first_line(exc).replace("\t", " ")) from None


def _declaration_order(model: Any, cols: list) -> np.ndarray | None:
    """The permutation that puts compiled columns in declaration order (Var components as
    declared, each in index order), None if they already are. A column whose variable is not
    one of the model's (deleted from it while a row still uses it, or another model's) is an
    InputError naming it."""
    from operator import methodcaller

    from pyomo.core.base import SortComponents
    from pyomo.environ import Var

    from ..errors import InputError

    rank = {id(c): k for k, c in enumerate(model.component_objects(
        Var, descend_into=True, sort=SortComponents.ORDERED_INDICES))}
    comps = list(map(methodcaller("parent_component"), cols))
    ranks = np.fromiter((rank.get(id(c), -1) for c in comps), dtype=np.int64, count=len(cols))
    if ranks.size and ranks.min() < 0:
        v = cols[int(np.argmin(ranks))]
        raise InputError(f"model.{v.parent_component().name}", "a variable of the model",
                         f"{v.name}, which a row or the objective uses but the model does not "
                         "hold (deleted, or another model's)")
    if not ranks.size or np.all(ranks[1:] >= ranks[:-1]):
        return None
    return np.argsort(ranks, kind="stable")


def _column_kind() -> Any:
    """A function var -> 1 (an integer interval domain) or 0 (a continuous interval), one
    look-up per domain object; any other domain ({0, 2}, RangeSet(0, 2, 2), {0.5, 1.5}) is an
    InputError naming the variable: HiGHS takes intervals, and {0, 2} passed as [0, 2] was
    "proven" at a point with the variable at 1."""
    from ..errors import InputError

    seen: dict[int, int] = {}

    def kind(v: Any) -> int:
        d = v.domain
        k = seen.get(id(d))
        if k is None:
            if v.is_integer():
                k = 1
            elif v.is_continuous():
                k = 0
            else:
                raise InputError(f"model.{v.name}", "a variable whose domain is a continuous "
                                 "or an integer interval (Reals, Binary, Integers, bounds)",
                                 f"the domain {d}")
            seen[id(d)] = k
        return k

    return kind


@_adapter_time
def compile_pyomo(model: Any) -> CompiledModel:
    """Compile a linear Pyomo model (one active objective or none) into arrays, as written:
    fixed variables are constants at their value (in the row bounds and the objective's
    offset), bounds as set, deactivated components left out, Expressions expanded. Columns in
    declaration order (each Var component in index order, unused ones dropped): an order array
    emitters reproduce, whatever the objective mentions first. Refusals: `_standard_form`; two
    active objectives are an InputError naming them."""
    from ..errors import InputError

    clock = _CAPTURE.clock if _CAPTURE is not None else time.perf_counter
    t0 = clock()
    info = _standard_form(model)
    cols = info.columns
    n = len(cols)
    if len(info.objectives) > 1:
        raise InputError("model", "one active objective",
                         ", ".join(o.name for o in info.objectives))
    perm = _declaration_order(model, cols)
    if perm is not None:
        cols = [cols[k] for k in perm]
        info.c = info.c[:, perm]
        info.A = info.A[:, perm] if info.A is not None else None
    if info.objectives:
        c = np.asarray(info.c.toarray()[0], dtype=float) if n else np.zeros(0)
        offset = float(info.c_offset[0])
        sense = "max" if int(info.objectives[0].sense) == -1 else "min"
    else:
        c, offset, sense = np.zeros(n), 0.0, "min"
    A = sp.csc_array(info.A) if info.A is not None else sp.csc_array((0, n))
    row_lo, row_hi, rows, cons = _row_bounds(info, A.shape[0])
    col_lo, col_hi, integ = _column_bounds(cols)
    compile_s = clock() - t0
    if _CAPTURE is not None:
        _CAPTURE.compile_s += compile_s
    return CompiledModel(c=c, A=A, row_lo=row_lo, row_hi=row_hi, col_lo=col_lo, col_hi=col_hi,
                         integrality=integ, sense=sense, offset=offset, columns=list(cols),
                         rows=rows, row_constraints=cons, compile_s=compile_s)


def _row_bounds(info: Any, m: int) -> tuple[np.ndarray, np.ndarray, dict, list]:
    """The rows of Pyomo's standard form as bounds (an equality row both, `<=` the upper,
    `>=` the lower), the rows of each constraint (by id) and each row's constraint."""
    rhs = np.asarray(info.rhs, dtype=float)
    row_lo, row_hi = np.full(m, -INF), np.full(m, INF)
    index: dict[int, list[int]] = {}
    cons = []
    for r, entry in enumerate(info.rows):
        con, kind = entry[0], entry[1]
        if kind == 0:
            row_lo[r] = row_hi[r] = rhs[r]
        elif kind == 1:
            row_hi[r] = rhs[r]
        else:
            row_lo[r] = rhs[r]
        index.setdefault(id(con), []).append(r)
        cons.append(con)
    return row_lo, row_hi, index, cons


def _column_bounds(cols: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each variable's bounds (None: infinite) and integrality as HiGHS takes them."""
    col_lo = np.array([(-INF if v.lb is None else float(v.lb)) for v in cols], dtype=float)
    col_hi = np.array([(INF if v.ub is None else float(v.ub)) for v in cols], dtype=float)
    integ = np.fromiter(map(_column_kind(), cols), dtype=np.int32, count=len(cols))
    return col_lo, col_hi, integ


@_adapter_time
def compile_rows(model: Any, rows: list, registered: Any, n_registered: int) -> CompiledModel:
    """The rows `rows` (ConstraintData of `model`, a user's additions) compiled onto the
    columns of an emitted model: a variable `registered(var)` maps to a column >= 0 keeps
    that column, every other variable the rows use becomes a new column after the
    `n_registered` ones, in the model's declaration order (Var components as declared, each in
    the order the rows first use its entries): the columns and rows a whole compile of the
    model gives after its registered part. Rows as Pyomo's compiler writes them (a ranged row
    is two), fixed variables as constants; the model itself is not walked (a lazily built
    model stays unbuilt). Returns the rows (A over all columns, bounds) and the new columns
    (`columns`, their bounds and integrality); `c` is empty."""
    import pyomo.environ as pyo

    from ..models.snapshot import peeking

    clock = _CAPTURE.clock if _CAPTURE is not None else time.perf_counter
    t0 = clock()
    tmp = pyo.ConcreteModel()
    tmp.rows = pyo.Reference({k: r for k, r in enumerate(rows)}, ctype=pyo.Constraint)
    info = _standard_form(tmp)
    cols = list(info.columns)
    at = np.fromiter((registered(v) for v in cols), dtype=np.int64, count=len(cols))
    new = [k for k, j in enumerate(at) if j < 0]
    with peeking(model):
        perm = _declaration_order(model, [cols[k] for k in new])
    if perm is not None:
        new = [new[k] for k in perm]
    at[new] = n_registered + np.arange(len(new))
    A = sp.csc_array(info.A) if info.A is not None else sp.csc_array((0, len(cols)))
    coo = A.tocoo()
    A = sp.csc_array((coo.data, (coo.row, at[coo.col])),
                     shape=(A.shape[0], n_registered + len(new)))
    row_lo, row_hi, index, cons = _row_bounds(info, A.shape[0])
    newvars = [cols[k] for k in new]
    col_lo, col_hi, integ = _column_bounds(newvars)
    compile_s = clock() - t0
    if _CAPTURE is not None:
        _CAPTURE.compile_s += compile_s
    return CompiledModel(c=np.zeros(0), A=A, row_lo=row_lo, row_hi=row_hi, col_lo=col_lo,
                         col_hi=col_hi, integrality=integ, sense="min", offset=0.0,
                         columns=newvars, rows=index, row_constraints=cons,
                         compile_s=compile_s)


# ---------------------------------------------------------------------- scaling
SCALE_PASSES = 12  # geometric scaling passes: each halves the log-range left between row and column


def _segments(idx: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order, non-empty groups, their starts in order) of the entries grouped by `idx`."""
    order = np.argsort(idx, kind="stable")
    counts = np.bincount(idx, minlength=size)
    groups = np.flatnonzero(counts)
    starts = (np.cumsum(counts) - counts)[groups]
    return order, groups, starts


def _centres(v: np.ndarray, seg: tuple[np.ndarray, np.ndarray, np.ndarray], size: int
             ) -> np.ndarray:
    """Per group, the middle of the smallest and largest log2 magnitude (0 for an empty one)."""
    order, groups, starts = seg
    out = np.zeros(size)
    if groups.size:
        w = v[order]
        out[groups] = 0.5 * (np.minimum.reduceat(w, starts) + np.maximum.reduceat(w, starts))
    return out


# a row's largest scaled entry is at most 2^SCALED_MAX_LOG2, so that HiGHS's feasibility
# tolerance (1e-9, absolute) stays far above the rounding of the row's activity (2^10 x 2.2e-16
# = 2.3e-13 per term). Centring alone put a head-cover cover row (entries 1 down to 1e-13
# beside labels of 1e-25) at 2^25, its right-hand side 3.3e7, where 1e-9 is below double
# precision, and HiGHS called a feasible step infeasible (t = 20, a = 10, nonmono seed 1: a
# plan of 2.0627 "proven", 2.0810 feasible). A cap of 2^1 did as well there, but rescaled
# every row wider than 2^2 and the t = 50 nonmono proof took 87 s instead of 47 s
SCALED_MAX_LOG2 = 10
# an optimum whose objective terms reached HiGHS 2^10 (~1e3) below its largest cost is solved
# again with the objective scaled by those terms (`HighsModel._rescaled`)
RESCALE_BELOW_LOG2 = 10
# past 2^20 (~1e6) between the largest cost and those terms no scaling is safe for a MIP: a
# labeler priced at 1e12 beside qualities of 0.7 was still "proven" 0.1 % below the optimum
# after the second pass (the branch and bound's pruning and presolve work in absolute units of
# the whole objective): the answer is feasible, not proven. An LP's optimality rests on its
# reduced costs, which the second pass puts in the answer's units: no such limit
SAFE_RANGE_LOG2 = 20
# a continuous column boxed within 2^-10 of 0 (or reaching past 2^10) is scaled by its box: a
# head-cover eta in [0, 1.6e-9] left as it was made HiGHS stop 15-25 % below the optimum, its
# bound "meeting" the objective within its absolute tolerances (1e-9); at 1e-7 none did
BOX_LOG2 = 10
# a row entry 2^-50 (4 units in the last place) below the row's largest, and below HiGHS's
# small_matrix_value (1e-9) as given, is rounding noise: HiGHS would drop it unscaled, and it
# cannot move the row's activity in double precision (a head-cover cover row at weights of
# 4e-16 spans 0.3 to 3e15 = 2^-53: legit, and kept, its small entries being 0.3)
NOISE_LOG2 = 50
NOISE_ABS_LOG2 = -30


def model_scales(A: Any, c: np.ndarray, integrality: np.ndarray, col_lo: np.ndarray,
                 col_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Powers of 2 (row_scale, col_scale, objective_scale) for the model min/max c'x,
    lo <= Ax <= hi: HiGHS gets R A S, S c * objective_scale, bounds R lo, S^-1 lo.

    Geometric scaling (each row and column centred on magnitude 1, a row's largest entry at
    most 2^SCALED_MAX_LOG2, so that a tolerance is relative to it) over rows and the
    continuous columns without a finite box (epigraph variables, weights: an integer column
    keeps scale 1, so integrality is untouched), then the objective divided by its largest
    coefficient. A CL-TAP epigraph `z <= sum phi x` with phi ~ 1e-8 thus reaches HiGHS as
    `z' <= sum (phi/phi_max) x`: its absolute tolerances (feasibility 1e-9, gap 0) become
    relative ones. A boxed continuous column keeps scale 1 (0/1 relaxations are untouched)
    unless its box lies within 2^-BOX_LOG2 of 0 or reaches past 2^BOX_LOG2: then it is scaled
    by the box's magnitude, so that its values, and an objective made of them, are of order 1
    for HiGHS (a max-min eta in [0, 1e-9]). Powers of 2 keep every unscaled number exact.
    """
    m, n = A.shape
    rs = np.zeros(m)
    boxed = np.isfinite(col_lo) & np.isfinite(col_hi)
    free = (integrality == 0) & ~boxed
    reach = np.where(boxed, np.maximum(np.abs(col_lo), np.abs(col_hi)), 1.0)
    with np.errstate(divide="ignore"):
        e = np.log2(reach)
    far = (integrality == 0) & boxed & (reach > 0) & (np.abs(e) > BOX_LOG2)
    box = np.where(far, np.round(e), 0.0)  # the fixed scale of a far-boxed column
    cs = box.copy()
    data = np.abs(np.asarray(A.data))
    if far.any() or np.any((data != 0) & (data != 1.0)):  # a 0/+-1 matrix stays
        coo = A.tocoo()
        keep = coo.data != 0
        r, k = coo.row[keep].astype(np.intp), coo.col[keep].astype(np.intp)
        L = np.log2(np.abs(coo.data[keep]))
        # an entry below 2^-NOISE_LOG2 of its row's largest steers no scale (HiGHS then drops
        # it, as it would unscaled): a head-cover coefficient 1 - 1.0 = 1.1e-16 beside 146
        # (2^-60) pulled its row's scale to 2^40 and the free eta's to 2^-34, and HiGHS
        # presolve answered 0.3 where the model's optimum is 0.3049
        top = np.full(m, -np.inf)
        np.maximum.at(top, r, L)
        significant = (L >= top[r] - NOISE_LOG2) | (L >= NOISE_ABS_LOG2)
        r_all, k_all, L_all = r, k, L  # the cap below counts them all (a scaled column
        # can lift a small entry above the rest)
        r, k, L = r[significant], k[significant], L[significant]
        rseg, cseg = _segments(r, m), _segments(k, n)
        for _ in range(SCALE_PASSES):
            rs = -_centres(L + cs[k], rseg, m)
            new = np.where(free, -_centres(L + rs[r], cseg, n), box)
            done = np.max(np.abs(new - cs), initial=0.0) < 0.25
            cs = new
            if done:
                break
        # a free column whose cost is within 2^RESCALE_BELOW_LOG2 of the largest keeps its
        # scaled cost within that of the largest scaled one: a head-cover cover row with a
        # head 1e-12 short of theta (g) beside eta (107) scaled eta by 2^-26, its cost 1
        # reached HiGHS as 1.5e-8 beside g's 0.3, and presolve answered 0.3 where the
        # model's optimum is 0.3093
        cabs = np.abs(np.asarray(c, float))
        with np.errstate(divide="ignore"):
            lc = np.log2(cabs)
        if np.any(free & (cabs > 0)):
            near = free & (cabs > 0) & (lc >= np.max(lc) - RESCALE_BELOW_LOG2)
            top_c = np.max(np.where(cabs > 0, lc + cs, -np.inf))
            cs = np.where(near, np.maximum(cs, top_c - RESCALE_BELOW_LOG2 - lc), cs)
        rs, cs = np.round(-_centres(L + cs[k], rseg, m)), np.round(cs)
        # then every row's largest entry at most 2^SCALED_MAX_LOG2 (a row spanning 1 to
        # 1e-300 would centre at 1e-150 and reach HiGHS at 1e150, past its 1e15 limit); not in
        # the passes, where a cap drifts rows down and columns up without end (the right-hand
        # sides to 2^-138)
        top = np.full(m, -np.inf)
        np.maximum.at(top, r_all, L_all + cs[k_all])
        rs = np.minimum(rs, _row_cap(top))
    rs, cs = np.exp2(rs), np.exp2(cs)
    return rs, cs, objective_scale(np.asarray(c, float) * cs)


def _row_cap(top_log2: np.ndarray) -> np.ndarray:
    """The largest log2 row scale that keeps a row whose largest entry is 2^top_log2 at most
    2^SCALED_MAX_LOG2 (`model_scales`, `HighsModel.add_rows`)."""
    return np.floor(SCALED_MAX_LOG2 - top_log2)


def objective_scale(c: np.ndarray) -> float:
    """The power of 2 that brings the largest |cost| to [0.71, 1.41] (1 for a zero objective)."""
    big = float(np.max(np.abs(c), initial=0.0))
    return float(np.exp2(-np.round(np.log2(big)))) if big > 0 and math.isfinite(big) else 1.0


def _column_scales(A_cols: Any, free: np.ndarray) -> np.ndarray:
    """Scales of new columns (already row-scaled): geometric centre for free ones, else 1."""
    A_cols = sp.csc_array(A_cols)
    out = np.zeros(A_cols.shape[1])
    data = A_cols.data
    nz = data != 0
    if nz.any():
        k = np.repeat(np.arange(A_cols.shape[1]), np.diff(A_cols.indptr))[nz]
        out = -_centres(np.log2(np.abs(data[nz])), _segments(k, A_cols.shape[1]),
                        A_cols.shape[1])
    return np.exp2(np.round(np.where(free, out, 0.0)))


def _run_limit(h: Any, seconds: float | None) -> float:
    """HiGHS's time_limit for one more run of `h` lasting at most `seconds`: HiGHS compares
    its limit with the run time of the object over all its runs (`getRunTime`), so a model
    solved again and again (a search's steps, a branch and bound's node LPs) whose past runs
    took longer than the limit asked for stopped at once with 'time limit'."""
    if not seconds:
        return INF
    return float(seconds) + float(h.getRunTime())


class HighsModel:
    """A model loaded into one `highspy.Highs`: solve, modify, re-solve warm.

    Build it from a Pyomo model (`from_pyomo`) or from arrays (`from_arrays`). Later changes
    (`add_columns`, `add_rows`, `set_objective`, `set_col_bounds`, `set_row_bounds`,
    `set_integrality`, `set_start`) act on the live Highs object: LP re-solves keep the simplex
    basis, a MIP re-solve starts from the point given to `set_start`.
    """

    @_adapter_time
    def __init__(self, *, c: np.ndarray, A: sp.csc_array, row_lo: np.ndarray, row_hi: np.ndarray,
                 col_lo: np.ndarray, col_hi: np.ndarray, integrality: np.ndarray | None,
                 sense: str = "min", offset: float = 0.0, options: HighsOptions | None = None,
                 compile_s: float = 0.0) -> None:
        self.options = options or HighsOptions()
        self.sense = sense
        self.offset = float(offset)
        self.compile_s = compile_s
        self._columns: dict[int, int] = {}
        self._rows: dict[int, list[int]] = {}
        # column-wise (CSC) or row-wise (CSR) arrays both go to HiGHS without conversion
        rowwise = sp.issparse(A) and A.format == "csr"
        A = sp.csr_array(A) if rowwise else sp.csc_array(A)
        self.num_row, self.num_col = A.shape
        self.is_mip = integrality is not None and bool(np.any(integrality))
        self._integrality = (np.asarray(integrality, dtype=np.int32)
                             if integrality is not None else np.zeros(self.num_col, np.int32))
        c = np.asarray(c, dtype=float)
        self._cost = c.copy()  # the objective in the caller's units (`_answer_unit`)
        # copies: the live model changes its bounds (passes, searches), the caller's arrays
        # (a compiled model the verification re-checks points on) stay as given
        row_lo, row_hi = np.array(row_lo, dtype=float), np.array(row_hi, dtype=float)
        col_lo, col_hi = np.array(col_lo, dtype=float), np.array(col_hi, dtype=float)
        # what HiGHS sees (and what the stored arrays hold): R A S, R row bounds, S^-1 column
        # bounds, sigma S c; results are mapped back (`_unscale`)
        if self.options.scale and self.num_col:
            self._rs, self._cs, self._sigma = model_scales(A, c, self._integrality, col_lo,
                                                           col_hi)
        else:
            self._rs, self._cs, self._sigma = np.ones(self.num_row), np.ones(self.num_col), 1.0
        self.scaled = bool(self._sigma != 1.0 or np.any(self._rs != 1.0)
                           or np.any(self._cs != 1.0))
        if self.scaled:
            if np.any(self._rs != 1.0) or np.any(self._cs != 1.0):  # else only the objective
                A = (sp.diags_array(self._rs) @ A @ sp.diags_array(self._cs)).asformat(A.format)
                row_lo, row_hi = row_lo * self._rs, row_hi * self._rs
                col_lo, col_hi = col_lo / self._cs, col_hi / self._cs
            c = c * self._cs * self._sigma
        self._A = A  # kept (scaled) for the feasibility check of the returned point
        self._row_lo, self._row_hi = row_lo, row_hi
        self._col_lo, self._col_hi = col_lo, col_hi
        self._typical_memo: np.ndarray | None = None
        _ensure_threads(self.options.threads)
        clock = _CAPTURE.clock if _CAPTURE is not None else time.perf_counter
        t_new = clock()
        self.h = new_highs(self.options.log)
        if _CAPTURE is not None:
            self.h = _Recorded(self.h, [("__init__", (), clock() - t_new)])
            _CAPTURE.calls.append(self.h._log)
        self._overrun: threading.Thread | None = None  # a run the watchdog left behind
        self._watching = False
        self._version = version_of(self.h)
        self._apply_options(self.options)
        # the flat-array passModel: no HighsLp object, no Python list of integrality enums
        start = np.asarray(A.indptr[:-1], dtype=np.int32)  # the start of each column (row)
        with stdout_to_stderr():
            loaded = self.h.passModel(
                int(self.num_col), int(self.num_row), int(A.nnz),
                2 if rowwise else 1,  # HiGHS MatrixFormat: 1 = column-wise, 2 = row-wise
                -1 if sense == "max" else 1, self.offset * self._sigma,
                np.ascontiguousarray(c, dtype=float), self._col_lo, self._col_hi,
                self._row_lo, self._row_hi, start, np.asarray(A.indices, dtype=np.int32),
                np.asarray(A.data, dtype=float), self._integrality)
        # a model HiGHS refuses (a coefficient past its 1e15 limit, ...) is left empty: solving
        # that would claim 'optimal' for the empty model, so every solve returns the error
        self._refused = "" if loaded != highspy.HighsStatus.kError else (
            "HiGHS refused the model (passModel error): matrix coefficients "
            f"up to {np.max(np.abs(A.data), initial=0.0):.3g}"
            + (" after scaling" if self.scaled else ""))

    # ------------------------------------------------------------------ construction
    @classmethod
    @_adapter_time
    def from_pyomo(cls, model: Any, options: HighsOptions | None = None) -> HighsModel:
        """Compile a linear Pyomo model (one active objective or none) into HiGHS arrays."""
        return cls.from_compiled(compile_pyomo(model), options)

    @classmethod
    @_adapter_time
    def from_compiled(cls, form: CompiledModel, options: HighsOptions | None = None, *,
                      relax_integrality: bool = False) -> HighsModel:
        """Load a compiled Pyomo model; `relax_integrality` loads its integer columns as
        continuous (an LP whose vertex is integral; `set_integrality` restores them)."""
        obj = cls(c=form.c, A=form.A, row_lo=form.row_lo, row_hi=form.row_hi,
                  col_lo=form.col_lo, col_hi=form.col_hi,
                  integrality=None if relax_integrality else form.integrality,
                  sense=form.sense, offset=form.offset, options=options,
                  compile_s=form.compile_s)
        obj._columns = {id(v): k for k, v in enumerate(form.columns)}
        obj._rows = form.rows
        obj._pyomo_columns = form.columns
        return obj

    @classmethod
    @_adapter_time
    def from_arrays(cls, c: Any, A: Any, row_lo: Any, row_hi: Any, col_lo: Any, col_hi: Any,
                    integrality: Any = None, sense: str = "min", offset: float = 0.0,
                    options: HighsOptions | None = None) -> HighsModel:
        """Load arrays directly: A column-wise (CSC) or row-wise (CSR), passed without
        conversion; integrality None (or all 0) for an LP."""
        A = A if sp.issparse(A) and A.format in ("csr", "csc") else sp.csc_array(A)
        return cls(c=np.asarray(c, float), A=A, row_lo=row_lo, row_hi=row_hi,
                   col_lo=col_lo, col_hi=col_hi, integrality=integrality, sense=sense,
                   offset=offset, options=options)

    # ------------------------------------------------------------------ modification
    @_adapter_time
    def add_columns(self, cost: Any, lo: Any, hi: Any, A_cols: Any) -> np.ndarray:
        """Append continuous columns (A_cols: num_row x k sparse); returns their indices."""
        A_cols = sp.csc_array(A_cols)
        if A_cols.shape[0] != self.num_row:
            raise ValueError(f"add_columns: expected {self.num_row} rows, got {A_cols.shape[0]}")
        k = A_cols.shape[1]
        cost = np.asarray(cost, float).reshape(k)
        self._cost = np.concatenate([self._cost, cost])
        lo = np.broadcast_to(np.asarray(lo, float), (k,)).copy()
        hi = np.broadcast_to(np.asarray(hi, float), (k,)).copy()
        cs = np.ones(k)
        if self.scaled:
            A_cols = sp.csc_array(sp.diags_array(self._rs) @ A_cols)
            if self.options.scale:
                cs = _column_scales(A_cols, ~(np.isfinite(lo) & np.isfinite(hi)))
                A_cols = sp.csc_array(A_cols @ sp.diags_array(cs))
            cost, lo, hi = cost * cs * self._sigma, lo / cs, hi / cs
        self._cs = np.concatenate([self._cs, cs])
        self.scaled = self.scaled or bool(np.any(cs != 1.0))
        self.h.addCols(k, cost, lo, hi, int(A_cols.nnz), A_cols.indptr[:-1].astype(np.int32),
                       A_cols.indices.astype(np.int32), A_cols.data.astype(float))
        first = self.num_col
        self.num_col += k
        self._A = sp.hstack([self._A, A_cols], format="csc")
        self._col_lo = np.concatenate([self._col_lo, lo])
        self._col_hi = np.concatenate([self._col_hi, hi])
        self._integrality = np.concatenate([self._integrality, np.zeros(k, np.int32)])
        return np.arange(first, first + k)

    @_adapter_time
    def add_rows(self, lo: Any, hi: Any, A_rows: Any) -> np.ndarray:
        """Append rows lo <= A_rows x <= hi (A_rows: k x num_col sparse); returns their indices."""
        R = sp.csr_array(A_rows)
        if R.shape[1] != self.num_col:
            raise ValueError(f"add_rows: expected {self.num_col} columns, got {R.shape[1]}")
        k = R.shape[0]
        lo = np.broadcast_to(np.asarray(lo, float), (k,)).copy()
        hi = np.broadcast_to(np.asarray(hi, float), (k,)).copy()
        rs = np.ones(k)
        if self.scaled:
            R = sp.csr_array(R @ sp.diags_array(self._cs))
            rs = _column_scales(R.T, np.ones(k, bool))  # a row's scale: its columns' centre
            top = np.max(np.abs(R), axis=1).toarray() if R.nnz else np.zeros(k)
            big = top > 0  # capped as in model_scales
            rs[big] = np.minimum(rs[big], np.exp2(_row_cap(np.log2(top[big]))))
            R = sp.csr_array(sp.diags_array(rs) @ R)
            lo, hi = lo * rs, hi * rs
        self._rs = np.concatenate([self._rs, rs])
        self.h.addRows(k, lo, hi, int(R.nnz), np.asarray(R.indptr[:-1], dtype=np.int32),
                       np.asarray(R.indices, dtype=np.int32), np.asarray(R.data, dtype=float))
        first = self.num_row
        self.num_row += k
        self._A = sp.vstack([self._A, R], format=self._A.format)
        self._row_lo = np.concatenate([self._row_lo, lo])
        self._row_hi = np.concatenate([self._row_hi, hi])
        return np.arange(first, first + k)

    @_adapter_time
    def set_objective(self, c: Any, sense: str | None = None, offset: float | None = None) -> None:
        """Replace every column cost (and optionally the sense and the constant offset)."""
        self._cost = np.ascontiguousarray(c, dtype=float).reshape(self.num_col).copy()
        c = self._cost * self._cs
        sigma = objective_scale(c) if self.options.scale else 1.0
        self.scaled = self.scaled or sigma != 1.0
        self.h.changeColsCost(self.num_col, np.arange(self.num_col, dtype=np.int32), c * sigma)
        if sense is not None and sense != self.sense:
            self.h.changeObjectiveSense(highspy.ObjSense.kMaximize if sense == "max"
                                        else highspy.ObjSense.kMinimize)
            self.sense = sense
        if offset is not None:
            self.offset = float(offset)
        if offset is not None or sigma != self._sigma:
            self.h.changeObjectiveOffset(self.offset * sigma)
        self._sigma = sigma

    @_adapter_time
    def set_integrality(self, cols: Any, integer: bool = True) -> None:
        """Make columns integer (or continuous): e.g. an LP re-solved as a MIP."""
        cols = np.asarray(cols, dtype=np.int32)
        if integer:
            self._unscale_columns(cols[self._cs[cols] != 1.0])
        self.h.changeColsIntegrality(len(cols), cols, np.full(len(cols), int(integer), np.uint8))
        self._integrality[cols] = int(integer)
        self.is_mip = bool(self._integrality.any())

    def _unscale_columns(self, cols: np.ndarray) -> None:
        """Give columns scale 1 again (before they become integer: x' = x must hold)."""
        if not cols.size:
            return
        A = sp.csc_array(self._A)
        f = self._cs[cols]  # x = f x'; the column's entries were multiplied by f
        for j, fj in zip(cols.tolist(), f.tolist()):
            lo, hi = A.indptr[j], A.indptr[j + 1]
            for r, v in zip(A.indices[lo:hi].tolist(), A.data[lo:hi].tolist()):
                self.h.changeCoeff(int(r), int(j), v / fj)
            A.data[lo:hi] /= fj
        self._A = A.asformat(self._A.format)
        self._col_lo[cols] *= f
        self._col_hi[cols] *= f
        self.h.changeColsBounds(len(cols), cols, self._col_lo[cols].copy(),
                                self._col_hi[cols].copy())
        cost = np.asarray(self.h.getLp().col_cost_, dtype=float)[cols] / f
        self.h.changeColsCost(len(cols), cols, np.ascontiguousarray(cost))
        self._cs[cols] = 1.0

    @_adapter_time
    def set_start(self, x: Any) -> None:
        """A full start point for the next solve (a MIP keeps it as incumbent if feasible)."""
        x = np.ascontiguousarray(x, dtype=float).reshape(self.num_col) / self._cs
        self.h.setSolution(self.num_col, np.arange(self.num_col, dtype=np.int32), x)

    @_adapter_time
    def set_row_bounds(self, rows: Any, lo: Any, hi: Any) -> None:
        """Change the bounds of some rows of the live model."""
        rows = np.asarray(rows, dtype=np.int32)
        lo = np.broadcast_to(np.asarray(lo, float), rows.shape) * self._rs[rows]
        hi = np.broadcast_to(np.asarray(hi, float), rows.shape) * self._rs[rows]
        self.h.changeRowsBounds(len(rows), rows, lo, hi)
        self._row_lo[rows] = lo
        self._row_hi[rows] = hi

    @_adapter_time
    def set_col_bounds(self, cols: Any, lo: Any, hi: Any) -> None:
        """Change the bounds of some columns of the live model."""
        cols = np.asarray(cols, dtype=np.int32)
        lo = np.broadcast_to(np.asarray(lo, float), cols.shape) / self._cs[cols]
        hi = np.broadcast_to(np.asarray(hi, float), cols.shape) / self._cs[cols]
        self.h.changeColsBounds(len(cols), cols, lo, hi)
        self._col_lo[cols] = lo
        self._col_hi[cols] = hi

    # ------------------------------------------------------------------ solving
    def _apply_options(self, opt: HighsOptions) -> None:
        h = self.h
        h.setOptionValue("output_flag", opt.log)
        h.setOptionValue("threads", int(opt.threads))
        h.setOptionValue("mip_rel_gap", float(opt.mip_rel_gap))
        h.setOptionValue("mip_abs_gap", float(opt.mip_abs_gap) * getattr(self, "_sigma", 1.0))
        h.setOptionValue("presolve", "on" if opt.presolve else "off")
        h.setOptionValue("time_limit", _run_limit(h, opt.time_limit))
        h.setOptionValue("solver", opt.lp_solver)
        h.setOptionValue("mip_feasibility_tolerance", float(opt.feasibility_tol))
        h.setOptionValue("primal_feasibility_tolerance", float(opt.feasibility_tol))
        for name, value in opt.extra:
            h.setOptionValue(name, value)

    @_adapter_time
    def solve(self) -> HighsResult:
        """Run HiGHS; re-check a suspicious outcome without presolve; re-solve an optimum whose
        objective terms reached HiGHS far below its largest cost (`_rescaled`); return a plain
        result.

        With a time limit the run is watched (`WATCHDOG_SLACK_S`): HiGHS presolve does not
        look at the clock (a long knapsack row ran 230 s past a 1 s limit), so a run still
        going at limit + slack is left behind and the solve returns `time_limit` with the
        incumbent and bound HiGHS reported so far; this model then refuses further solves.
        """
        t0 = time.perf_counter()
        self._typical_memo = None  # the model may have changed since the last solve
        res = self._solve_once(self.options, t0)
        if self.options.rescale and res.status is Status.OPTIMAL and res.x is not None:
            res = self._rescaled(res, t0)
        return res

    def _answer_unit(self, x: np.ndarray | None) -> float:
        """The magnitude of the objective's terms that decide the optimum, caller's units: the
        larger of sum |c_j x_j| at `x` and the smallest term a column can bring (|c_j| times
        its typical magnitude, `_typical`: an answer whose terms are below that, an eta of
        1e-10 where the optimum is 0, is HiGHS's noise). HiGHS's noise on our numbers is its
        absolute tolerance times this (the certificates' floor), never times max |c|."""
        if not self.num_col:
            return 1.0 / self._sigma
        m = 0.0
        if x is not None and x.size == self.num_col:
            m = float(np.sum(np.abs(self._cost * x)))
            m = m if math.isfinite(m) else 0.0
        terms = np.abs(self._cost) * self._typical()
        terms = terms[(terms > 0) & np.isfinite(terms)]
        least = float(terms.min()) if terms.size else 0.0
        return max(m, least) or 1.0 / self._sigma

    def _typical(self) -> np.ndarray:
        """Per column, the magnitude its values take (caller's units): its box where it has
        one; an unboxed column with a cost, the bound one of its rows implies (every other
        column of the row boxed: head-cover's `empty` row eta / theta + e <= 1 gives
        eta <= theta); else its scale (what the geometric scaling made order 1). Computed once
        per `solve` (the rows' activity ranges for all rows at once, then each unboxed column's
        rows)."""
        if self._typical_memo is not None:
            return self._typical_memo
        lo, hi = self._col_lo, self._col_hi  # as HiGHS sees them
        boxed = np.isfinite(lo) & np.isfinite(hi)
        typ = np.where(boxed, np.maximum(np.abs(np.where(boxed, lo, 0.0)),
                                         np.abs(np.where(boxed, hi, 0.0))), 1.0)
        need = np.flatnonzero(~boxed & (self._cost != 0))
        if need.size and self.num_row:
            R = sp.csr_array(self._A, copy=True)
            R.sum_duplicates()
            rows = np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))
            k, v = R.indices, R.data
            fin = boxed[k]
            lo_k, hi_k = np.where(fin, lo[k], 0.0), np.where(fin, hi[k], 0.0)
            # each row's least and most activity over its boxed columns, and how many of its
            # columns are unboxed (a row with another unboxed column implies nothing)
            least = np.bincount(rows, np.minimum(v * lo_k, v * hi_k), minlength=R.shape[0])
            most = np.bincount(rows, np.maximum(v * lo_k, v * hi_k), minlength=R.shape[0])
            free = np.bincount(rows, ~fin, minlength=R.shape[0])
            A = sp.csc_array(self._A, copy=True)
            A.sum_duplicates()
            with np.errstate(invalid="ignore", divide="ignore"):
                for j in need.tolist():
                    r = A.indices[A.indptr[j]:A.indptr[j + 1]]
                    a = A.data[A.indptr[j]:A.indptr[j + 1]]
                    keep = (a != 0) & (free[r] == 1)  # j itself is the one unboxed column
                    r, a = r[keep], a[keep]
                    r_hi, r_lo = self._row_hi[r], self._row_lo[r]
                    over = np.where(np.isfinite(r_hi), (r_hi - least[r]) / a,
                                    np.where(a > 0, np.inf, -np.inf))
                    under = np.where(np.isfinite(r_lo), (r_lo - most[r]) / a,
                                     np.where(a > 0, -np.inf, np.inf))
                    top = np.where(a > 0, over, under)
                    bottom = np.where(a > 0, under, over)
                    up = min(hi[j], float(top.min(initial=np.inf)))
                    down = max(lo[j], float(bottom.max(initial=-np.inf)))
                    reach = [abs(b) for b in (up, down) if math.isfinite(b)]
                    if reach and max(reach) > 0:
                        typ[j] = max(reach)
        self._typical_memo = typ * self._cs
        return self._typical_memo

    def _rescaled(self, res: HighsResult, t0: float) -> HighsResult:
        """An optimum whose deciding terms (`_answer_unit`) reached HiGHS below
        2^-RESCALE_BELOW_LOG2 of its largest cost is solved again with the objective scaled by
        them (its point as the start): they then sit well above HiGHS's absolute tolerances
        (one labeler priced at 1e8 beside qualities of 0.7 left the deciding terms at 1e-5 and
        HiGHS "proved" 0.876933 where 0.877733 exists; an objective e.s - 1e12 s_0 over
        entropies near 0.5 was "proven" 0, all points left out). Where the largest term a
        MIP's column can bring is more than 2^SAFE_RANGE_LOG2 times them, no power of 2 keeps
        both within HiGHS's tolerances: the answer (of the second pass, if better) is only
        feasible, with the reason."""
        unit = self._answer_unit(res.x)
        res.objective_unit = unit
        if not (unit > 0 and math.isfinite(unit)):
            return res
        unsafe = None
        if self.is_mip:
            top = float(np.max(np.abs(self._cost) * self._typical(), initial=0.0)) / unit
            if top > 2.0 ** SAFE_RANGE_LOG2:
                top = self._presolved_cost_range(unit)
            if top > 2.0 ** SAFE_RANGE_LOG2:
                unsafe = (f"not proven: the objective's largest term can be {top:.3g} times "
                          "the terms that decide the optimum; no scaling keeps both within "
                          "HiGHS's tolerances")
        if self._sigma * unit < 2.0 ** -RESCALE_BELOW_LOG2:
            res = self._second_pass(res, t0, float(np.exp2(-np.round(np.log2(unit)))))
        if unsafe is not None and res.status is Status.OPTIMAL:
            res.status = Status.FEASIBLE
            res.bound = res.abs_gap = res.rel_gap = None
            res.message = unsafe
        return res

    def _second_pass(self, first: HighsResult, t0: float, sigma: float) -> HighsResult:
        """`first` solved again with the objective scaled by `sigma`, from its point."""
        x = first.x
        self._set_sigma(sigma)
        if self.is_mip:
            self.set_start(x)
        opt = self.options
        left = None
        if opt.time_limit is not None:  # the second pass shares the limit (at least 0.5 s)
            left = max(opt.time_limit - (time.perf_counter() - t0), 0.5)
        res = self._solve_once(opt.replace(time_limit=left), t0)
        res.rescaled = True
        res.objective_unit = self._answer_unit(res.x if res.x is not None else x)
        if res.x is None and res.status is not Status.OPTIMAL:  # no answer: keep the first's
            res.x, res.objective = first.x, first.objective
            res.max_violation = first.max_violation
        return res

    def _presolved_cost_range(self, unit: float) -> float:
        """The largest cost of the model HiGHS presolve leaves, over `unit` (caller's units):
        a column whose cost is far above the answer's terms but that the rows rule out (a
        worker no budget affords) is gone after presolve and unsettles nothing. Presolve runs
        on a copy of the loaded arrays; a copy it cannot reduce keeps every column."""
        A = sp.csc_array(self._A)
        h = new_highs()
        h.setOptionValue("threads", int(self.options.threads))  # the process's one scheduler
        h.setOptionValue("mip_feasibility_tolerance", float(self.options.feasibility_tol))
        h.setOptionValue("primal_feasibility_tolerance", float(self.options.feasibility_tol))
        c = self._cost * self._cs * self._sigma
        with stdout_to_stderr():
            h.passModel(int(self.num_col), int(self.num_row), int(A.nnz), 1,
                        -1 if self.sense == "max" else 1, self.offset * self._sigma,
                        np.ascontiguousarray(c), self._col_lo, self._col_hi, self._row_lo,
                        self._row_hi, np.asarray(A.indptr[:-1], np.int32),
                        np.asarray(A.indices, np.int32), np.asarray(A.data, float),
                        self._integrality)
            h.presolve()
        try:
            left = np.asarray(h.getPresolvedLp().col_cost_, dtype=float)
        except Exception:  # noqa: BLE001 - no presolved model: judge by every column
            left = c
        big = float(np.max(np.abs(left), initial=0.0)) / self._sigma
        return big / unit

    def _set_sigma(self, sigma: float) -> None:
        """Scale the objective HiGHS sees by `sigma` (costs and offset)."""
        c = self._cost * self._cs * sigma
        self.h.changeColsCost(self.num_col, np.arange(self.num_col, dtype=np.int32),
                              np.ascontiguousarray(c))
        self.h.changeObjectiveOffset(self.offset * sigma)
        self._sigma = sigma
        self.scaled = self.scaled or sigma != 1.0

    def _solve_once(self, opt: HighsOptions, t0: float) -> HighsResult:
        """One run of HiGHS under `opt`, its suspicious outcomes re-checked without presolve."""
        if self._overrun is not None and self._overrun.is_alive():
            return self._stopped(0.0, Status.ERROR, "an earlier solve of this model overran "
                                 "its time limit and is still running in HiGHS")
        if self._refused:
            return self._stopped(0.0, Status.ERROR, self._refused)
        self._apply_options(opt)
        raw = self._run(opt.time_limit)
        if raw is None:
            return self._stopped(time.perf_counter() - t0, Status.TIME_LIMIT, (
                f"stopped by the watchdog {opt.time_limit:.3g} s + {WATCHDOG_SLACK_S:g} s after "
                "the start (HiGHS did not stop by its own time limit, e.g. inside presolve)"))
        retried = disagreed = False
        first_raw = raw
        if opt.presolve and (opt.confirm_infeasible or opt.known_feasible) and self._suspicious(raw):
            retried = True
            self.h.clearSolver()
            self.h.setOptionValue("presolve", "off")
            left = None
            if opt.time_limit is not None:  # the re-check shares the limit (at least 0.5 s)
                left = max(opt.time_limit - (time.perf_counter() - t0), 0.5)
                self.h.setOptionValue("time_limit", _run_limit(self.h, left))
            raw = self._run(left)
            if raw is None:
                return self._stopped(time.perf_counter() - t0, Status.TIME_LIMIT,
                                     "stopped by the watchdog while re-checking without "
                                     "presolve")
            disagreed = raw != first_raw
            self.h.setOptionValue("presolve", "on")
            if disagreed:
                warnings.warn(
                    f"HiGHS presolve reported {self.h.modelStatusToString(first_raw)!r}; "
                    f"without presolve: {self.h.modelStatusToString(raw)!r} (kept the latter)",
                    RuntimeWarning, stacklevel=2)
        solve_s = time.perf_counter() - t0
        res = self._result(raw, solve_s, presolve=opt.presolve and not retried)
        res.retried_without_presolve = retried
        res.presolve_disagreed = disagreed
        if opt.known_feasible and res.status is Status.INFEASIBLE:
            res.status = Status.ERROR
            res.message = ("HiGHS reported a feasible-by-construction model infeasible "
                           "(with and without presolve)")
        return res

    def _suspicious(self, raw: Any) -> bool:
        """A status worth re-checking without presolve: infeasible/unbounded claims, solver
        errors, or "optimal" with a point that violates the model (HiGHS 1.14-1.15 presolve)."""
        K = highspy.HighsModelStatus
        if raw in (K.kInfeasible, K.kUnboundedOrInfeasible, K.kUnbounded, K.kSolveError,
                   K.kPresolveError, K.kPostsolveError):
            return True
        if raw == K.kOptimal and self.num_col:
            _, x, viol = self._point()
            return x.size == self.num_col and viol > 1e-5
        return False

    def _run(self, time_limit: float | None = None) -> Any:
        """One HiGHS run; its model status, or None when the watchdog gave up on it."""
        # HiGHS writes its log (verbose) and some warnings at C level on fd 1: send them to stderr
        self._last = None
        if time_limit is None or not WATCHDOG or time_limit > WATCHDOG_MAX_S:
            with stdout_to_stderr():
                self.h.run()
            return self.h.getModelStatus()
        self._seen = {}
        h = self.h._h if isinstance(self.h, _Recorded) else self.h
        if self.is_mip and not self._watching:
            h.cbMipImprovingSolution.subscribe(self._on_incumbent)
            self._watching = True
        done = threading.Event()
        error: list[BaseException] = []

        def run() -> None:
            try:
                self.h.run()
            except BaseException as exc:  # pragma: no cover - re-raised in the caller
                error.append(exc)
            finally:
                done.set()

        with stdout_to_stderr():
            # not a daemon: the interpreter waits for a run left behind before it exits (HiGHS
            # torn down under a running solve aborts the process)
            thread = threading.Thread(target=run, name="highs-run", daemon=False)
            thread.start()
            finished = done.wait(time_limit + WATCHDOG_SLACK_S)
        if not finished:
            self._overrun = thread
            _LEFT_BEHIND.append(thread)
            return None
        if error:
            raise error[0]
        return self.h.getModelStatus()

    def _on_incumbent(self, event: Any) -> None:
        """HiGHS callback: keep the latest incumbent and bound (what a watchdog stop returns)."""
        out = event.data_out
        self._seen = {"x": np.array(out.mip_solution, dtype=float),
                      "objective": float(out.objective_function_value),
                      "bound": float(out.mip_dual_bound)}

    def _stopped(self, solve_s: float, status: Status, message: str) -> HighsResult:
        """The result of a run the watchdog left behind (or refused): the last incumbent and
        bound HiGHS reported through its callback, unscaled; nothing read from the busy object."""
        seen = getattr(self, "_seen", {}) if status is Status.TIME_LIMIT else {}
        x = objective = bound = viol = None
        if seen.get("x") is not None and seen["x"].size == self.num_col:
            viol = self._violation(seen["x"])
            x = seen["x"] * self._cs
            objective = seen["objective"] / self._sigma
        if seen.get("bound") is not None and math.isfinite(seen["bound"]):
            bound = seen["bound"] / self._sigma
        abs_gap = rel_gap = None
        if objective is not None and bound is not None:
            abs_gap = abs(objective - bound)
            rel_gap = abs_gap / max(abs(objective), 1e-300) if abs_gap > 0 else 0.0
        return HighsResult(
            status=status, objective=objective, bound=bound, abs_gap=abs_gap, rel_gap=rel_gap,
            time_s=self.compile_s + solve_s, compile_s=self.compile_s, solve_s=solve_s, nodes=0,
            is_mip=self.is_mip, sense=self.sense, presolve=self.options.presolve,
            raw_status="watchdog", message=message, max_violation=viol,
            highs_version=self._version, objective_unit=self._answer_unit(x), x=x,
            _columns=self._columns, _rows=self._rows)

    def _point(self) -> tuple[Any, np.ndarray, float | None]:
        """(solution, primal values, max violation) of the last run, read from HiGHS once."""
        if getattr(self, "_last", None) is None:
            sol = self.h.getSolution()
            x = np.asarray(sol.col_value, dtype=float)
            self._last = (sol, x, self._violation(x) if x.size == self.num_col else None)
        return self._last

    def _result(self, raw: Any, solve_s: float, presolve: bool) -> HighsResult:
        h = self.h
        info = h.getInfo()
        K = highspy.HighsModelStatus
        has_primal = int(info.primal_solution_status) == 2  # kSolutionStatusFeasible
        status = {
            K.kOptimal: Status.OPTIMAL,
            K.kModelEmpty: Status.OPTIMAL,
            K.kInfeasible: Status.INFEASIBLE,
            K.kUnbounded: Status.UNBOUNDED,
            K.kTimeLimit: Status.TIME_LIMIT,
        }.get(raw, Status.ERROR)
        message = "" if status is not Status.ERROR else f"HiGHS status {h.modelStatusToString(raw)}"
        x = duals = viol = None
        objective = bound = None
        if raw == K.kModelEmpty:
            x = np.zeros(0)
            objective = bound = self.offset
            has_primal = True
        elif has_primal or status is Status.OPTIMAL:
            sol, x, viol = self._point()
            objective = float(info.objective_function_value) / self._sigma
            if x.size == self.num_col:
                x = x * self._cs  # HiGHS's x' is S^-1 x
            if not self.is_mip and sol.dual_valid:
                duals = np.asarray(sol.row_dual, dtype=float) * self._rs / self._sigma
        if self.is_mip:
            db = float(info.mip_dual_bound) / self._sigma
            if math.isfinite(db):
                bound = db
        elif status is Status.OPTIMAL and objective is not None:
            bound = objective  # LP: primal = dual objective at optimality (duals returned)
        if status is Status.OPTIMAL and bound is None and objective is not None:
            bound = objective
        abs_gap = rel_gap = None
        if objective is not None and bound is not None:
            abs_gap = abs(objective - bound)
            rel_gap = abs_gap / max(abs(objective), 1e-10) if abs_gap > 0 else 0.0
        if raw == K.kModelEmpty and x.size == self.num_col:
            viol = self._violation(x)
        if status is Status.OPTIMAL and viol is not None and viol > 1e-5:
            status = Status.ERROR
            message = f"HiGHS claimed optimal but the point violates the model by {viol:.3g}"
        nodes = int(info.mip_node_count) if self.is_mip and info.mip_node_count >= 0 else 0
        return HighsResult(
            status=status, objective=objective, bound=bound, abs_gap=abs_gap, rel_gap=rel_gap,
            time_s=self.compile_s + solve_s, compile_s=self.compile_s, solve_s=solve_s,
            nodes=nodes, is_mip=self.is_mip, sense=self.sense, presolve=presolve,
            raw_status=h.modelStatusToString(raw), message=message, max_violation=viol,
            highs_version=version_of(h),
            objective_unit=self._answer_unit(x if x is not None and x.size else None),
            x=x, row_duals=duals, _columns=self._columns, _rows=self._rows)

    def not_run(self, status: Status, message: str = "") -> HighsResult:
        """The result of no HiGHS run on this model (no point, no bound, 0 s of solving): a
        pass that settled the answer by arguments of its own (a bound meeting a plan it checked
        on this model) fills in its answer, and pays no solve it does not need."""
        return HighsResult(
            status=status, objective=None, bound=None, abs_gap=None, rel_gap=None,
            time_s=self.compile_s, compile_s=self.compile_s, solve_s=0.0, nodes=0,
            is_mip=self.is_mip, sense=self.sense, presolve=False, raw_status="not run",
            message=message, highs_version=self._version, _columns=self._columns,
            _rows=self._rows)

    def violation(self, x: Any) -> float:
        """Max violation of the loaded model's rows, bounds and integrality by a point in the
        caller's units (a scaled column is compared as HiGHS sees it, x / its scale)."""
        return self._violation(np.asarray(x, dtype=float) / self._cs)

    def _violation(self, x: np.ndarray) -> float:
        """Max violation of rows, bounds and integrality by x as HiGHS sees it (scaled)."""
        v = 0.0
        if self.num_row:
            ax = self._A @ x
            v = max(v, float(np.max(np.maximum(self._row_lo - ax, 0.0), initial=0.0)),
                    float(np.max(np.maximum(ax - self._row_hi, 0.0), initial=0.0)))
        if self.num_col:
            v = max(v, float(np.max(np.maximum(self._col_lo - x, 0.0), initial=0.0)),
                    float(np.max(np.maximum(x - self._col_hi, 0.0), initial=0.0)))
            ints = self._integrality.astype(bool)
            if ints.any():
                xi = x[ints]
                v = max(v, float(np.max(np.abs(xi - np.round(xi)), initial=0.0)))
        return v


def solve_model(model: Any, options: HighsOptions | None = None, **kw: Any) -> HighsResult:
    """Compile a Pyomo model and solve it with HiGHS (keyword arguments override `options`)."""
    opts = (options or HighsOptions()).replace(**kw) if kw else (options or HighsOptions())
    return HighsModel.from_pyomo(model, opts).solve()
