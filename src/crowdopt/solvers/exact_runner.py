"""The one runner of exact formulations: load a formulation's matrix into HiGHS (from its
Pyomo model, or from its array emitter), run the formulation's own settings and passes, and
turn the result into an `Outcome`.

`crowdopt.solve(inst, method)` calls `run(form, inst, opts)` (the array emitter where the
formulation has one); `crowdopt.solve_model(inst, model)` calls `run(form, inst, opts,
model=model)` on the user's (possibly extended) Pyomo model. Both routes pass HiGHS the same
arrays in the same order for an unmodified model, and the same settings and passes: only the
way the matrix is emitted differs. A formulation's settings become HiGHS options in one place
(`formulation_options`, through the adapter's `highs_options`).
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..models.formulation import Formulation, PassResult, Settings
from ..models.snapshot import ADDED_ROWS, UNCHANGED, is_lazy, peeking
from ..problems.catalogue import Outcome
from ..status import Status
from .highs import (
    WATCHDOG_MAX_S,
    HighsModel,
    HighsOptions,
    compile_pyomo,
    compile_rows,
    highs_options,
)
from .verify import PointCheck, pyomo_writer

MIN_SOLVE_S = 0.5  # HiGHS's share of a time limit the matrix build has used up


class OutOfTime(Exception):
    """The time limit ran out between two stages of loading a model (build, compile)."""


def _check_clock(deadline: float | None, t0: float, stage: str) -> None:
    """Between stages of a load: past the deadline, stop before the next (costly) stage."""
    if deadline is not None and time.perf_counter() > deadline:
        raise OutOfTime(f"stopped by the time limit after {stage} "
                        f"({time.perf_counter() - t0:.3g} s): HiGHS not started, no solution")


@contextmanager
def _stop_at(deadline: float | None, t0: float, stage: str) -> Iterator[None]:
    """Stop a stage of a load at the deadline, not after it: on the main thread (where Python
    delivers signals) a SIGALRM timer raises `OutOfTime` inside the stage, and a Pyomo build or
    compile, being Python, stops at its next bytecode. Elsewhere, or when the process already
    uses SIGALRM or its timer, or past WATCHDOG_MAX_S (the platform's timer overflows), the
    clock is read after the stage (`_check_clock`)."""
    if (deadline is None or not hasattr(signal, "setitimer")
            or deadline - time.perf_counter() > WATCHDOG_MAX_S
            or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None)
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0):
        yield
        _check_clock(deadline, t0, stage)
        return
    left = deadline - time.perf_counter()
    if left <= 0:
        raise OutOfTime(f"stopped by the time limit before {stage} "
                        f"({time.perf_counter() - t0:.3g} s): HiGHS not started, no solution")

    def ring(signum: int, frame: Any) -> None:
        raise OutOfTime(f"stopped by the time limit while {stage} "
                        f"({time.perf_counter() - t0:.3g} s): HiGHS not started, no solution")

    quiet = logging.getLogger("pyomo.core")  # a rule the timer stops is logged, then raised:
    level = quiet.level                       # the exception alone says it
    previous = signal.signal(signal.SIGALRM, ring)
    quiet.setLevel(logging.CRITICAL)
    signal.setitimer(signal.ITIMER_REAL, left)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        quiet.setLevel(level)


def formulation_options(settings: Settings, opts: Any) -> HighsOptions:
    """The HiGHS options of a formulation's settings under the run options `opts` (time_limit,
    threads, mip_rel_gap, presolve: None = the formulation's own)."""
    return highs_options(opts, presolve=settings.presolve,
                         known_feasible=settings.known_feasible,
                         lp_solver=settings.lp_solver, extra=settings.extra)


@dataclass
class Context:
    """What a formulation's passes see of the loaded model (models/formulation.py)."""

    inst: Any
    model: HighsModel
    decode: Callable[[Any], Any]
    c: np.ndarray
    int_cols: np.ndarray
    extras: dict
    options: HighsOptions
    details: dict = field(default_factory=dict)
    t0: float = field(default_factory=time.perf_counter)
    # answers re-checked as points of a user's changed model (`verify.PointCheck`); None on a
    # model as built, where every plan the evaluator calls feasible is a point
    point: Any = None
    compiled: Any = None  # the compiled Pyomo model (route "pyomo" or "model"), or the mixed
    point_write: Any = None  # the mixed route's `PointCheck.write` (the emitted columns)
    added: Any = None  # the mixed route's compiled additions (`compile_rows`)
    assembled: Any = None  # the mixed route's whole matrix (emitted part and additions)
    # whether `compiled` holds the registered rows too (None: all but the mixed route's)
    registered_rows: bool | None = None

    def time_left(self) -> float | None:
        """Seconds left of the time limit (at least 1 s: a later pass always gets a try)."""
        if self.options.time_limit is None:
            return None
        return max(self.options.time_limit - (time.perf_counter() - self.t0), 1.0)


@dataclass
class ExactRun:
    """A finished run: the pass result, the live model, the details of both stages and the
    point check of a changed model (None on a model as built)."""

    result: PassResult
    model: HighsModel
    route: str
    details: dict
    point: Any = None


def load(form: Formulation, inst: Any, hopts: HighsOptions, integral_lp: bool,
         model: Any = None, arrays: bool = True, deadline: float | None = None) -> Context:
    """Load the formulation's matrix: from `model` (a Pyomo model, compiled once), else from
    the array emitter if the formulation has one (and `arrays`), else from a freshly built
    Pyomo model. `integral_lp` loads the integer columns as continuous. `deadline`
    (perf_counter): `OutOfTime` is raised when it passes during the emit, the build or the
    compile (`_stop_at`), before HiGHS starts."""
    t0 = time.perf_counter()
    if model is None and arrays and form.emit is not None:
        with _stop_at(deadline, t0, "emitting the matrix"):
            e = form.emit(inst)
        build_s = time.perf_counter() - t0
        hm = HighsModel.from_arrays(e.c, e.A, e.row_lo, e.row_hi, e.col_lo, e.col_hi,
                                    None if integral_lp else e.integrality, sense=e.sense,
                                    offset=e.offset, options=hopts)
        ctx = Context(inst, hm, lambda res: e.decode(res.x), np.asarray(e.c, float),
                      np.flatnonzero(e.integrality).astype(np.int32), dict(e.extras), hopts)
        ctx.details.update(route="arrays", build_s=build_s, compile_s=0.0)
        return ctx
    route = "pyomo" if model is None else "model"
    if model is None:
        with _stop_at(deadline, t0, "building the Pyomo model"):
            model = form.build(inst)  # no record: no user will change it
    build_s = time.perf_counter() - t0
    with _stop_at(deadline, t0, "compiling the Pyomo model"):
        compiled = compile_pyomo(model)
    hm = HighsModel.from_compiled(compiled, hopts, relax_integrality=integral_lp)
    extras = form.extras(inst, model, hm._columns) if form.extras is not None else {}
    ctx = Context(inst, hm, lambda res: form.decode(inst, model, res), compiled.c,
                  np.flatnonzero(compiled.integrality).astype(np.int32), extras, hopts,
                  compiled=compiled)
    ctx.details.update(route=route, build_s=build_s, compile_s=compiled.compile_s)
    return ctx


def load_mixed(form: Formulation, inst: Any, model: Any, rows: list, hopts: HighsOptions,
               integral_lp: bool, deadline: float | None = None) -> Context:
    """A user's model of a formulation with an emitter, its registered part still unbuilt
    (`models.lazy`): the registered part emitted as arrays, the user's added `rows` (and the
    new variables in them) compiled onto its columns (`compile_rows`), appended in the order a
    whole compile gives; decoded, and re-checked as points, on the emitted columns."""
    from ..models.formulation import MatrixForm

    t0 = time.perf_counter()
    with _stop_at(deadline, t0, "emitting the matrix"):
        e = form.emit(inst)
    n_reg = e.A.shape[1]
    # the emitted columns are the registered Var components in declaration order, each in its
    # index order (the emitter reproduces the compiled model's columns: tested): a registered
    # entry's column is its component's offset plus its place in the index set
    offset: dict[int, int] = {}
    at = 0
    for comp, *_ in model.crowdopt_build.snapshot.variables:
        offset[id(comp)] = at
        at += len(comp.index_set()) if comp.is_indexed() else 1
    if at != n_reg:  # the record's variables are not the emitted columns
        raise AssertionError(f"{form.method}: {at} registered variables, {n_reg} emitted columns")

    places: dict[int, dict] = {}  # per registered component: index -> place in its index set

    def registered(v: Any) -> int:
        comp = v.parent_component()
        start = offset.get(id(comp))
        if start is None:
            return -1
        if not comp.is_indexed():
            return start
        place = places.get(id(comp))
        if place is None:  # one pass in C over the ordered set (Pyomo's ord() rebuilds it
            ix = comp.index_set()  # in Python: 0.1-0.4 s at 100k entries)
            place = places[id(comp)] = dict(zip(ix, range(len(ix))))
        return start + place[v.index()]

    with _stop_at(deadline, t0, "compiling the added rows"), peeking(model):
        add = compile_rows(model, rows, registered, n_reg)
    n_new = len(add.columns)
    A = e.A if not rows else _below(sp.csc_array(e.A), add.A, n_new)
    arrays = MatrixForm(c=np.concatenate([np.asarray(e.c, float), np.zeros(n_new)]), A=A,
                        row_lo=np.concatenate([e.row_lo, add.row_lo]),
                        row_hi=np.concatenate([e.row_hi, add.row_hi]),
                        col_lo=np.concatenate([e.col_lo, add.col_lo]),
                        col_hi=np.concatenate([e.col_hi, add.col_hi]),
                        integrality=np.concatenate([np.asarray(e.integrality, np.int32),
                                                    add.integrality]),
                        sense=e.sense, offset=e.offset)
    build_s = time.perf_counter() - t0
    hm = HighsModel.from_arrays(arrays.c, A, arrays.row_lo, arrays.row_hi, arrays.col_lo,
                                arrays.col_hi, None if integral_lp else arrays.integrality,
                                sense=e.sense, offset=e.offset, options=hopts)
    extras = dict(e.extras)
    if "card" in extras:  # per column: the new columns have no size
        extras["card"] = np.concatenate([extras["card"], np.zeros(n_new, np.int32)])
    if "size" in extras:
        size = extras["size"]
        extras["size"] = lambda: np.concatenate([size(), np.zeros(n_new)])
    # answers are re-checked on the added rows only: the registered rows hold for every plan
    # the evaluator calls feasible (the formulation is exact: tested), which the checks ask too;
    # where the encoder leaves columns to the check's completion (`Emitted.decision`: an
    # objective variable), the registered rows bound them and the whole matrix is checked
    whole = e.decision is not None
    added = arrays if whole else MatrixForm(
        c=arrays.c, A=add.A, row_lo=add.row_lo, row_hi=add.row_hi, col_lo=arrays.col_lo,
        col_hi=arrays.col_hi, integrality=arrays.integrality, sense=e.sense, offset=e.offset)
    ctx = Context(inst, hm, lambda res: e.decode(res.x[:n_reg]), arrays.c,
                  np.flatnonzero(arrays.integrality).astype(np.int32), extras, hopts,
                  compiled=added)
    ctx.details.update(route="mixed", build_s=build_s, compile_s=add.compile_s,
                       emitted={"rows": int(e.A.shape[0]), "columns": n_reg},
                       compiled={"rows": int(add.A.shape[0]), "columns": n_new})
    fixed = np.arange(n_reg) if e.decision is None else np.asarray(e.decision)
    ctx.point_write = lambda sol: (fixed, e.encode(sol)[fixed])
    ctx.registered_rows = whole
    ctx.added, ctx.assembled = add, arrays
    return ctx


def _below(A: Any, B: Any, n_new: int) -> Any:
    """[[A, 0], [B]] in CSC: the registered matrix A (CSC, sorted) widened by `n_new` empty
    columns, with the added rows B (as many columns as the result) below it, built by index
    arithmetic in O(nnz) (scipy's CSC vstack stacks along the minor axis: 0.5 s at 650k
    entries, over the whole solve's time)."""
    r, n = A.shape
    A = sp.csc_array((A.data, A.indices, np.concatenate(
        [A.indptr, np.full(n_new, A.indptr[-1], A.indptr.dtype)])), shape=(r, n + n_new))
    A.sort_indices()
    B = sp.csc_array(B)
    B.sort_indices()
    if B.shape[1] != n + n_new:
        raise AssertionError(f"added rows over {B.shape[1]} columns, {n + n_new} expected")
    a_count, b_count = np.diff(A.indptr), np.diff(B.indptr)
    indptr = A.indptr.astype(np.int64) + B.indptr.astype(np.int64)
    nnz = A.nnz + B.nnz
    index_type = np.int32 if nnz < 2**31 and r + B.shape[0] < 2**31 else np.int64
    data = np.empty(nnz, np.result_type(A.data, B.data))
    indices = np.empty(nnz, index_type)
    # in column j, A's entries first, then B's: A's k-th entry moves by B's entries before
    # column j, B's k-th entry lands after A's whole column j
    at_a = np.arange(A.nnz) + np.repeat(B.indptr[:-1].astype(np.int64), a_count)
    at_b = np.arange(B.nnz) + np.repeat(A.indptr[1:].astype(np.int64), b_count)
    data[at_a], indices[at_a] = A.data, A.indices
    data[at_b], indices[at_b] = B.data, B.indices + r
    return sp.csc_array((data, indices, indptr.astype(index_type)),
                        shape=(r + B.shape[0], n + n_new))


def mixed_route(form: Formulation, model: Any, change: Any) -> bool:
    """Whether a user's model takes the mixed route: a formulation with an emitter, the
    model's registered part unbuilt (`models.lazy.is_lazy`), and only rows (and variables in
    them) added to it."""
    return (form.emit is not None and is_lazy(model) and change is not None
            and change.kind in (UNCHANGED, ADDED_ROWS))


def run(form: Formulation, inst: Any, opts: Any, model: Any = None,
        route: str = "arrays", stop_in_load: bool = False, change: Any = None) -> ExactRun:
    """Load (see `load`; route "pyomo" forces the Pyomo builder) and run the passes.
    `stop_in_load`: with a time limit, raise `OutOfTime` if the load alone used it up.
    `change` (a `snapshot.Change` of the user's `model`): on a changed model the passes and
    the verification re-check answers as points of it (`Context.point`)."""
    settings = form.settings(inst)
    hopts = formulation_options(settings, opts)
    if model is not None:  # a user's rows may contradict: feasibility is no longer by
        hopts = hopts.replace(known_feasible=False)  # construction (the same re-check runs)
    if route not in ("arrays", "pyomo"):
        raise ValueError(f"route must be 'arrays' or 'pyomo', not {route!r}")
    t0 = time.perf_counter()
    deadline = t0 + hopts.time_limit if stop_in_load and hopts.time_limit is not None else None
    if model is not None and mixed_route(form, model, change):
        ctx = load_mixed(form, inst, model, list(change.added), hopts, settings.integral_lp,
                         deadline)
    else:
        ctx = load(form, inst, hopts, settings.integral_lp, model, arrays=route == "arrays",
                   deadline=deadline)
    if hopts.time_limit is not None:  # building the matrix counts against the limit
        left = max(hopts.time_limit - (time.perf_counter() - t0), MIN_SOLVE_S)
        ctx.options = ctx.model.options = ctx.model.options.replace(time_limit=left)
    ctx.details["presolve"] = hopts.presolve
    if model is not None and (change is None or change.kind != UNCHANGED):
        ctx.point = point_check(form, inst, model, ctx, change, hopts.time_limit)
    result = form.passes(ctx)
    ctx.details["time_s"] = time.perf_counter() - ctx.t0
    return ExactRun(result, ctx.model, ctx.details["route"], ctx.details, ctx.point)


def point_check(form: Formulation, inst: Any, model: Any, ctx: Context, change: Any,
                time_limit: float | None) -> PointCheck | None:
    """The point check of a changed (or unknown) model: its formulation's encoder on a fresh
    copy of the loaded arrays; None where the formulation has no encoder (its answers are
    then checked by the evaluator and the adapter's point violation only)."""
    same = change is not None and change.same_objective
    write = getattr(ctx, "point_write", None)
    if write is None and form.encode is not None and ctx.compiled is not None:
        write = pyomo_writer(form.encode, inst, model, ctx.model._columns)
    if write is None:
        return None
    return PointCheck(ctx.compiled, write, same, time_limit,
                      registered_rows=(ctx.details.get("route") != "mixed"
                                       if ctx.registered_rows is None else ctx.registered_rows))


def outcome(done: ExactRun) -> Outcome:
    """The `Outcome` of a run: status, solution, bound and objective claim of the pass result,
    and every detail (the HiGHS summary of the bound's run, the passes' records)."""
    res = done.result.res
    details = {**res.summary(), **done.details}
    if res.status is Status.ERROR:
        details["message"] = details.get("message") or res.message
        return Outcome("error", None, None, None, None, details)
    if res.status is Status.INFEASIBLE:
        return Outcome("infeasible", None, None, None, None, details)
    bound = None if res.bound is None else res.bound + 0.0  # no "-0"
    return Outcome(res.status, done.result.solution, bound, done.result.source,
                   res.objective, details)


def solve_exact(form: Formulation, inst: Any, opts: Any, route: str = "arrays",
                stop_in_load: bool = True) -> Outcome:
    """A registered exact method: `run` then `outcome`. `stop_in_load`: a time limit used up
    by building the model is status time_limit without a solution (off for formulations whose
    passes find a primal without HiGHS)."""
    t0 = time.perf_counter()
    try:
        return outcome(run(form, inst, opts, route=route, stop_in_load=stop_in_load))
    except OutOfTime as exc:
        return Outcome("time_limit", details={"message": str(exc),
                                              "build_s": time.perf_counter() - t0})
