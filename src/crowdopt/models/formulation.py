"""One formulation object per exact method: Pyomo builder, optional array emitter, decoder,
HiGHS settings and passes.

The Pyomo builder is canonical: it is what `crowdopt.build_model` returns and users extend. An
array emitter, where a method has one, emits the SAME matrix straight from numpy (same columns
in the same order as Pyomo's `LinearStandardFormCompiler` gives them, same rows, coefficients,
bounds, integrality and objective; tests compare both entry for entry), because building
millions of Pyomo objects costs far more than HiGHS on those models. The settings and passes
(presolve, simplex strategy, the integrality check of a totally unimodular LP and its MILP
fallback, worker selection's min-|S| second pass) belong to the formulation, not to a route:
`solvers/exact_runner.py` runs them on whichever matrix was loaded, so `crowdopt.solve(inst, m)`
and `crowdopt.solve_model(inst, crowdopt.build_model(inst, m))` do the same work.

A formulation also says which changes of a user's model its passes stay exact under
(`valid_for`, kinds of `models.snapshot.compare`, and `condition`, a check of the change
itself, e.g. head-cover's search needs added rows that keep the model closed downward in eta),
which of its variables its decoder and passes read (`reads`), and how an answer is written
back in those variables (`encode`, what the verification step re-checks as a point of the
model solved: `solvers.verify`); outside its conditions `crowdopt.solve_model` runs
`plain(form)`: one HiGHS solve of the model as given.

Passes see the loaded model through a small context (duck-typed: this layer does not import
the HiGHS adapter): `ctx.model` (a live `solvers.highs.HighsModel`), `ctx.decode(res)`,
`ctx.int_cols`, `ctx.c` (objective), `ctx.extras`, `ctx.details`, `ctx.time_left()`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..status import Status
from .snapshot import ADDED_ROWS, CHANGED, UNCHANGED, Snapshot, record

# an LP vertex farther than this from integers is fractional: HiGHS's own feasibility tolerance
# (1e-9, `HighsOptions.feasibility_tol`), so that a vertex the check calls integral rounds to a
# point of the model (at 1e-7 a user's row `1e8 s <= 1e8 - 1` let s = 1 - 1e-8 round to 1)
INTEGRAL_TOL = 1e-9


@dataclass(frozen=True)
class Settings:
    """HiGHS settings of a formulation (explicit user options override `presolve`).

    integral_lp: the model's integer columns are relaxed for the first solve (its LP relaxation
    is integral: a totally unimodular matrix or a disjunctive hull); the vertex is checked and,
    if fractional, the columns are made integer again and the MILP is solved (gap 0).
    """

    presolve: bool = True
    lp_solver: str = "choose"
    known_feasible: bool = False
    extra: tuple[tuple[str, Any], ...] = ()
    integral_lp: bool = False


@dataclass(kw_only=True)
class MatrixForm:
    """A linear model as arrays: min/max c x + offset s.t. row_lo <= A x <= row_hi,
    col_lo <= x <= col_hi, integrality (1 = integer column); A sparse, column-wise."""

    c: np.ndarray
    A: Any
    row_lo: np.ndarray
    row_hi: np.ndarray
    col_lo: np.ndarray
    col_hi: np.ndarray
    integrality: np.ndarray
    sense: str
    offset: float = 0.0


@dataclass(kw_only=True)
class Emitted(MatrixForm):
    """A formulation's matrix emitted from numpy (CSC, canonical). `columns()`/`rows()` give
    each column's (variable name, index) and each row's (constraint name, index), as the
    compiled Pyomo model names them (made on demand: tests only). `decode(x)` is the typed
    solution of a point and `extras` what the formulation's passes need (e.g. worker
    selection's |S| coefficients); `encode` lets a user's extended model, solved as these
    arrays plus the user's rows (`solvers.exact_runner.load_mixed`), re-check answers."""

    columns: Callable[[], list]
    rows: Callable[[], list]
    decode: Callable[[np.ndarray], Any]
    extras: dict = field(default_factory=dict)
    # a solution's values of every emitted column: what the verification step fixes on a
    # user's model built on these columns
    encode: Callable[[Any], np.ndarray] | None = None
    # the columns `encode` writes (None: all); the others (head-cover's eta) are completed by
    # the point check, which then needs the registered rows that bound them: the mixed route
    # checks such answers on the whole assembled matrix
    decision: np.ndarray | None = None


@dataclass
class PassResult:
    """What a formulation's passes end with: `res` the run that carries the bound and the
    objective claim, `solution` the typed solution (None if HiGHS returned no point), `source`
    the bound's name."""

    res: Any
    solution: Any
    source: str


def solve_once(ctx: Any, source: str = "milp-dual-bound") -> PassResult:
    """The plain pass: one solve, decode the point."""
    res = ctx.model.solve()
    return PassResult(res, ctx.decode(res) if res.x is not None else None, source)


def max_fractionality(x: np.ndarray, cols: np.ndarray) -> float:
    """Largest distance of x[cols] from an integer (0 for no columns)."""
    xi = x[cols]
    return float(np.max(np.abs(xi - np.round(xi)), initial=0.0))


def integral_lp_stage(ctx: Any, source: str) -> tuple[Any, str]:
    """Solve the relaxed model (integer columns loaded continuous, `Settings.integral_lp`);
    check the vertex is integral, else make the columns integer on the same live model and
    re-solve it as a MILP (presolve on, HiGHS's own LP algorithm, gap 0). Returns (result,
    bound source); the check goes into `ctx.details`.

    Exact for any model, whatever a user changed (rows, bounds, fixings, objective): the LP
    is a relaxation of the MILP, so an integral optimal vertex is an optimum of the MILP and
    an infeasible LP an infeasible MILP; an unbounded LP decides nothing (the MILP may be
    infeasible) and goes to the MILP, as a fractional vertex does."""
    hm = ctx.model
    res = hm.solve()
    if not len(ctx.int_cols) or res.status in (Status.INFEASIBLE, Status.TIME_LIMIT,
                                               Status.ERROR):
        return res, source
    if res.status is Status.OPTIMAL and res.x is not None:
        frac = max_fractionality(res.x, ctx.int_cols)
        ctx.details.update(lp_integral=frac <= INTEGRAL_TOL, lp_max_fractionality=frac,
                           lp_objective=res.objective)
        if frac <= INTEGRAL_TOL:
            return res, source
    hm.set_integrality(ctx.int_cols, True)
    hm.options = hm.options.replace(lp_solver="choose", presolve=True, extra=())
    res = hm.solve()
    ctx.details.update(fallback="milp", lp_stage=ctx.details.get("stage1"))
    return res, "milp-dual-bound"


def solve_integral_lp(ctx: Any, source: str) -> PassResult:
    """The pass of a totally unimodular model: `integral_lp_stage`, then decode."""
    res, source = integral_lp_stage(ctx, source)
    return PassResult(res, ctx.decode(res) if res.x is not None else None, source)


ANY_CHANGE = (UNCHANGED, ADDED_ROWS, CHANGED)
ONE_SOLVE = "one HiGHS solve of the model as given (gap 0)"


@dataclass(frozen=True)
class Formulation:
    """One exact method of one problem (see the module docstring).

    build(inst) -> Pyomo model; decode(inst, model, res) -> solution of a solved Pyomo model;
    settings(inst) -> Settings; passes(ctx) -> PassResult; emit(inst) -> Emitted (optional);
    extras(inst, model, column_of) -> the Pyomo route's counterpart of `Emitted.extras`, where
    column_of maps id(var) -> column. `route` names what the passes do; `valid_for` lists the
    kinds of change of a user's model (`snapshot.compare`) under which they stay exact (one
    solve: any) and `condition(model, change)` says why they are not on this very change (None:
    they are); `reads` the variables the decoder and passes read; `encode(inst, model,
    solution)` -> [(variable, value)] the answer's values of the decision variables.
    """

    problem: str
    method: str
    build: Callable[[Any], Any]
    decode: Callable[[Any, Any, Any], Any]
    settings: Callable[[Any], Settings] = lambda inst: Settings()
    passes: Callable[[Any], PassResult] = solve_once
    emit: Callable[[Any], Emitted] | None = None
    extras: Callable[[Any, Any, dict], dict] | None = None
    route: str = ONE_SOLVE
    valid_for: tuple[str, ...] = ANY_CHANGE
    reads: tuple[str, ...] = ()
    encode: Callable[[Any, Any, Any], list] | None = None
    condition: Callable[[Any, Any], str | None] | None = None
    # the builder of what `model` returns where it differs from `build`: a `LazyModel` that
    # fills its registered part on first need (formulations with an emitter)
    lazy: Callable[[Any], Any] | None = None

    def exact_under(self, model: Any, change: Any) -> str | None:
        """Why the passes are not exact on `model` after `change` (a `snapshot.Change`); None
        where they stay exact (its kind in `valid_for`, and `condition` holds)."""
        if change.kind not in self.valid_for:
            return (f"{self.method}'s passes ({self.route}) are exact only on a model that is "
                    + " or has ".join(self.valid_for))
        if self.condition is not None and change.kind != UNCHANGED:
            return self.condition(model, change)
        return None

    def model(self, inst: Any, instance: str | None = None) -> Any:
        """The Pyomo model with the record of what was built (`Built`: this formulation, the
        digest of the instance it was built for, its snapshot)."""
        m = (self.lazy or self.build)(inst)
        m.crowdopt_build = Built(self.problem, self.method, instance, record(m))
        return m


def plain(form: Formulation) -> Formulation:
    """`form` solved by one HiGHS solve of its model as given (gap 0, no pass): the route of a
    user's change its passes are not valid for. Presolve stays the formulation's choice (a
    per-model setting: HiGHS presolve defects on some models); nothing is relaxed first."""
    def settings(inst: Any) -> Settings:
        return Settings(presolve=form.settings(inst).presolve)

    return dataclasses.replace(form, settings=settings, passes=solve_once, emit=None,
                               extras=None, route=ONE_SOLVE, valid_for=ANY_CHANGE,
                               condition=None, lazy=None)


@dataclass(frozen=True, eq=False)
class Built:
    """What `Formulation.model` built: (problem, method), the digest of the instance
    (`crowdopt.build_model` sets it; None: not known) and the model's snapshot then."""

    problem: str
    method: str
    instance: str | None
    snapshot: Snapshot


def tag_of(model: Any) -> Built | None:
    """The record of a model a formulation built (and a user may have changed since), or
    None for a model it did not build; anything else under that name is returned as found
    (the caller refuses it)."""
    return getattr(model, "crowdopt_build", None)
