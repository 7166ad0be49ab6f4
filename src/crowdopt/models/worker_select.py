"""Pyomo models of worker selection (paper 004, eq. 11; digest 004 section 2.4).

HiGHS cannot take the ratio sum(x)/sqrt(|S|), but |S| takes only B = min(K, M) values, so a
selector y_k (k = 1..B) fixes the denominator:

- `build_formulation_a` (digest 2.4 A, the default): disaggregated by cardinality, z_ik = 1 if
  worker i is chosen and |S| = k. Max sum_k sum_i (x_i/sqrt k) z_ik s.t. sum_k y_k = 1,
  sum_i z_ik = k y_k, z_ik <= y_k. For uniform costs its LP relaxation is integral (HiGHS ends
  at the root). Cost extension (digest 2.6): sum_i c_i z_ik <= C y_k for every k.
- `build_compact` (digest 2.4 B, McCormick): z_i binary, r = sum_k y_k/sqrt k, v_i = z_i r
  linearized by v_i <= z_i, v_i <= r, v_i >= r - (1 - z_i). Exact but with a weak relaxation:
  an independent second check on small instances. Cost extension: sum_i c_i z_i <= C.

Both models expose `m.value` (F_hat as a linear expression) and `m.size` (|S|), used by the
second pass that minimizes |S| among the optima (digest 2.5, `lexicographic`), and `m.obj`
(maximize m.value). Presolve: off for formulation A (digest 2.4: presolve dominates the time;
one knapsack row per k with costs, DESIGN HiGHS traps), see `PRESOLVE`.

Workers are indexed by the instance's ids (positions 0.. without ids): `z[worker_id, k]` in
formulation A, `z[worker_id]` in the compact model; `decode` reads the selected set of a solved
(possibly extended) model. `emit_formulation_a` emits formulation A's matrix from numpy (the
registered route: millions of binaries). `FORMULATIONS`: method -> `Formulation` (builder,
emitter, decoder, settings, the two-stage pass); `BUILDERS`: method -> builder of a tagged
model (what `crowdopt.build_model` returns; `crowdopt.solve_model` runs the same passes on it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyomo.core.util import quicksum

from ..problems.worker_select import WorkerSelectInstance, WorkerSelectSolution, tie_tol
from ..status import Status
from . import formulation
from .formulation import (
    ADDED_ROWS,
    UNCHANGED,
    Emitted,
    Formulation,
    PassResult,
    Settings,
    integral_lp_stage,
    max_fractionality,
)
from .lazy import LazyModel

# per-model presolve setting (DESIGN.md "HiGHS and Pyomo traps"; digest 004 section 2.4)
PRESOLVE = {"formulation-a": False, "compact": True, "compact-costs": False}


def worker_keys(inst: WorkerSelectInstance) -> list:
    """The model index of each worker: its id, else its position."""
    return list(inst.worker_ids) if inst.worker_ids else list(range(inst.n_workers))


def never_chosen(inst: WorkerSelectInstance) -> np.ndarray:
    """Workers no optimum selects, by the best score x* a worker affordable alone has: if x* > 0,
    a negative score (dropping it raises sum x > 0 and lowers |S|, so F = sum x / sqrt|S| rises;
    costs only fall); if x* <= 0, a score below x* (F(S) <= sqrt|S| max_S x <= max_S x, so the
    best single is optimal). Their columns are held at 0 and left out of the objective: a score
    of -1e12 beside 0.3 left in made HiGHS's objective scale hide 0.3 and claim 1e-9 optimal
    (kept in the objective with the column held at 0, it still did: 9-12 of 300 instances). An
    extension that forces such a worker in must lift its bound and add its score to m.obj."""
    x = np.asarray(inst.scores, dtype=float)
    alone = np.ones(len(x), bool) if inst.costs is None else \
        np.asarray(inst.costs, dtype=float) <= float(inst.budget)
    if not alone.any():
        return np.zeros(len(x), bool)
    best = float(x[alone].max())
    return x < 0 if best > 0 else x < best


def build_formulation_a(inst: WorkerSelectInstance, lazy: bool = False) -> pyo.ConcreteModel:
    """Formulation A: per-cardinality selectors y[k] and copies z[worker, k] (digest 2.4 A).
    `lazy`: a `LazyModel` whose rows, objective and Expressions are filled on first need (what
    `build_model` returns), the copies made on demand."""
    out = never_chosen(inst)
    x = [0.0 if o else float(v) for v, o in zip(inst.scores, out, strict=True)]
    M, B = inst.n_workers, inst.cap
    W = worker_keys(inst)
    root = [0.0] + [1.0 / math.sqrt(k) for k in range(1, B + 1)]
    m = (LazyModel if lazy else pyo.ConcreteModel)(name="worker_select_formulation_a")
    m.I = pyo.Set(initialize=W, ordered=True)
    m.Kset = pyo.RangeSet(1, B)
    m.y = pyo.Var(m.Kset, domain=pyo.Binary)
    # z[worker_id, k] over the pairs in cardinality-major order (k, then workers): the
    # column and row order the registered emitter uses (HiGHS's simplex is order-sensitive)
    m.IK = pyo.Set(initialize=[(w, k) for k in range(1, B + 1) for w in W], dimen=2,
                   ordered=True)
    held = {w for w, o in zip(W, out, strict=True) if o}
    m.z = pyo.Var(m.IK, domain=pyo.Binary, bounds=lambda m, w, k: (0, 0 if w in held else 1),
                  dense=not lazy)
    m.value = pyo.Expression()
    m.size = pyo.Expression()
    m.obj = pyo.Objective(expr=0.0, sense=pyo.maximize)
    m.one_size = pyo.Constraint()
    m.card = pyo.Constraint(m.Kset)
    m.link = pyo.Constraint(m.IK)
    costs = inst.costs is not None and any(int(v) for v in inst.costs)
    if costs:  # (every cost 0: the budget holds for any set, no row; as in the compact model)
        m.budget_row = pyo.Constraint(m.Kset)
    m.kind = "formulation-a"

    def fill(m: pyo.ConcreteModel) -> None:
        m.value.set_value(quicksum(x[i] * root[k] * m.z[W[i], k] for k in range(1, B + 1)
                                   for i in range(M) if x[i] != 0.0))
        m.size.set_value(quicksum(k * m.y[k] for k in range(1, B + 1)))
        m.obj.expr = m.value
        m.one_size.set_value(quicksum(m.y[k] for k in range(1, B + 1)) == 1)
        for k in range(1, B + 1):
            m.card[k] = quicksum(m.z[w, k] for w in W) == k * m.y[k]
        for w, k in m.IK:
            m.link[w, k] = m.z[w, k] <= m.y[k]
        if costs:
            c = [int(v) for v in inst.costs]
            C = int(inst.budget)
            for k in range(1, B + 1):
                m.budget_row[k] = quicksum(c[i] * m.z[W[i], k] for i in range(M)
                                           if c[i]) <= C * m.y[k]

    if lazy:  # an entry made on demand: bounds by the rule, held ones at 0
        m.defer(fill, ["value", "size", "obj", "one_size", "card", "link", "budget_row"],
                {m.z: lambda v: (0, 0 if v.index()[0] in held else 1, False, pyo.Binary)})
    else:
        fill(m)
    return m


def build_compact(inst: WorkerSelectInstance) -> pyo.ConcreteModel:
    """Compact McCormick model: z[worker] and y[k], M + B binaries, r = 1/sqrt|S| (digest 2.4 B)."""
    out = never_chosen(inst)
    x = [0.0 if o else float(v) for v, o in zip(inst.scores, out, strict=True)]
    M, B = inst.n_workers, inst.cap
    W = worker_keys(inst)
    held = {w for w, o in zip(W, out, strict=True) if o}
    m = pyo.ConcreteModel(name="worker_select_compact")
    m.I = pyo.Set(initialize=W, ordered=True)
    m.Kset = pyo.RangeSet(1, B)
    m.y = pyo.Var(m.Kset, domain=pyo.Binary)
    m.z = pyo.Var(m.I, domain=pyo.Binary, bounds=lambda m, w: (0, 0 if w in held else 1))
    m.v = pyo.Var(m.I, bounds=(0.0, 1.0))
    m.r = pyo.Var(bounds=(1.0 / math.sqrt(B), 1.0))
    m.value = pyo.Expression(expr=quicksum(x[i] * m.v[W[i]] for i in range(M) if x[i] != 0.0))
    m.size = pyo.Expression(expr=quicksum(m.z[w] for w in W))
    m.obj = pyo.Objective(expr=m.value, sense=pyo.maximize)
    m.one_size = pyo.Constraint(expr=quicksum(m.y[k] for k in range(1, B + 1)) == 1)
    m.card = pyo.Constraint(expr=m.size == quicksum(k * m.y[k] for k in range(1, B + 1)))
    m.root = pyo.Constraint(expr=m.r == quicksum((1.0 / math.sqrt(k)) * m.y[k]
                                                 for k in range(1, B + 1)))
    m.v_le_z = pyo.Constraint(m.I, rule=lambda m, i: m.v[i] <= m.z[i])
    m.v_le_r = pyo.Constraint(m.I, rule=lambda m, i: m.v[i] <= m.r)
    m.v_ge = pyo.Constraint(m.I, rule=lambda m, i: m.v[i] >= m.r - (1 - m.z[i]))
    if inst.costs is not None:
        c = [int(v) for v in inst.costs]
        paid = [c[i] * m.z[W[i]] for i in range(M) if c[i]]
        if paid:  # every cost 0: the budget holds for any set (a constant row is an error)
            m.budget_row = pyo.Constraint(expr=quicksum(paid) <= int(inst.budget))
        m.kind = "compact-costs"
    else:
        m.kind = "compact"
    return m


def decode(inst: WorkerSelectInstance, m: pyo.ConcreteModel, res: Any) -> WorkerSelectSolution:
    """The selected workers (z > 1/2, in either model) of a solved (possibly extended) model."""
    pos = {k: i for i, k in enumerate(worker_keys(inst))}
    picked = {pos[idx[0] if isinstance(idx, tuple) else idx]
              for idx, v in res.values(m.z).items() if v > 0.5}
    return WorkerSelectSolution(np.array(sorted(picked), dtype=np.int64))


def encode(inst: WorkerSelectInstance, m: pyo.ConcreteModel, sol: WorkerSelectSolution) -> list:
    """The answer's decision variables in a (possibly extended) model of either formulation:
    y[k] = 1 at k = |S|, and z[worker] (compact) or z[worker, k] (formulation A) 1 for the
    selected workers (at k = |S|); the compact model's v and r are completed by a solve
    (`solvers.verify`)."""
    W = worker_keys(inst)
    chosen = {W[int(i)] for i in sol.selected}
    k_sel = len(chosen)
    out = [(v, 1.0 if k == k_sel else 0.0) for k, v in m.y.items()]
    for idx, v in m.z.items():
        if isinstance(idx, tuple):
            w, k = idx
            out.append((v, 1.0 if w in chosen and k == k_sel else 0.0))
        else:
            out.append((v, 1.0 if idx in chosen else 0.0))
    return out


# ---------------------------------------------------------------------------- array emitter
def emit_formulation_a(inst: WorkerSelectInstance) -> Emitted:
    """`build_formulation_a` as arrays, in Pyomo's column order: y_k (k = 1..B), then z[i, k]
    at B + (k-1) M + i (m.z is declared cardinality-major); rows one_size, card[k] (sum_i z_ik -
    k y_k = 0), link[i, k] (z_ik - y_k <= 0) at 1 + B + (k-1) M + i, then with costs budget_row[k]
    (sum_i c_i z_ik - C y_k <= 0). About 4 nonzeros (5 with costs) a binary, int32 indices:
    no Pyomo object is made (6M binaries fit in memory; as Pyomo objects they would not)."""
    out = never_chosen(inst)
    x = np.where(out, 0.0, np.asarray(inst.scores, dtype=float))
    M, B = inst.n_workers, inst.cap
    costs = inst.costs is not None
    nz = M * B
    n = B + nz
    k = np.arange(1, B + 1)
    link0 = 1 + B  # first link row
    cost0 = link0 + nz  # first cost row
    m_rows = cost0 + (B if costs else 0)
    C = float(inst.budget) if costs else 0.0
    # y_k: [one_size, card_k, link (k, 0..M-1), cost_k if C != 0]
    ycost = costs and C != 0.0
    ny = M + 2 + (1 if ycost else 0)
    y_idx = np.empty((B, ny), dtype=np.int32)
    y_val = np.empty((B, ny), dtype=float)
    y_idx[:, 0], y_val[:, 0] = 0, 1.0
    y_idx[:, 1], y_val[:, 1] = k, -k
    y_idx[:, 2:M + 2] = link0 + (k[:, None] - 1) * M + np.arange(M)[None, :]
    y_val[:, 2:M + 2] = -1.0
    if ycost:
        y_idx[:, -1], y_val[:, -1] = cost0 + k - 1, -C
    # z_ik at B + (k-1) M + i: [card_k, link (k, i), cost_k if c_i != 0]
    kk = np.repeat(k, M)
    ii = np.tile(np.arange(M), B)
    z_rows = [kk, link0 + (kk - 1) * M + ii]
    z_vals = [np.ones(nz), np.ones(nz)]
    z_count = np.full(nz, 2, dtype=np.int64)
    if costs:
        c = np.asarray(inst.costs, dtype=float)
        keep = np.tile(c != 0, B)
        z_count += keep
        z_rows.append(np.where(keep, cost0 + kk - 1, -1))
        z_vals.append(np.tile(c, B))
    z_idx = np.stack(z_rows, axis=1).astype(np.int32)
    z_val = np.stack(z_vals, axis=1)
    if costs:  # drop the zero-cost entries (Pyomo's compiler drops zero coefficients too)
        mask = z_idx >= 0
        z_idx, z_val = z_idx[mask], z_val[mask]
    indptr = np.concatenate([[0], np.cumsum(np.concatenate([np.full(B, ny), z_count]))])
    A = sp.csc_array((np.concatenate([y_val.ravel(), z_val.ravel()]),
                      np.concatenate([y_idx.ravel(), z_idx.ravel()]),
                      indptr.astype(np.int64)), shape=(m_rows, n))
    root = 1.0 / np.sqrt(k.astype(float))
    value = np.concatenate([np.zeros(B), (root[:, None] * x[None, :]).ravel()])
    row_lo = np.full(m_rows, -np.inf)
    row_hi = np.zeros(m_rows)
    row_lo[0] = row_hi[0] = 1.0
    row_lo[1:B + 1] = 0.0
    if costs and not np.any(inst.costs):  # every cost 0: no budget rows (as the builder)
        A = sp.csc_array(A[:cost0])
        row_lo, row_hi = row_lo[:cost0], row_hi[:cost0]
    W = worker_keys(inst)
    n_rows = A.shape[0]

    def row_keys() -> list:
        return ([("one_size", None)] + [("card", int(v)) for v in k]
                + [("link", (w, int(v))) for v in k for w in W]
                + [("budget_row", int(v)) for v in k])[:n_rows]

    def decode(xv: np.ndarray) -> WorkerSelectSolution:
        z = xv[B:].reshape(B, M)
        return WorkerSelectSolution(np.flatnonzero(z.max(axis=0, initial=0.0) > 0.5)
                                    .astype(np.int64))

    card = np.concatenate([k, kk]).astype(np.int32)
    def encode(sol: WorkerSelectSolution) -> np.ndarray:
        sel = np.asarray(sol.selected, np.int64)
        xv = np.zeros(n)
        if 1 <= len(sel) <= B:
            xv[len(sel) - 1] = 1.0
            xv[B + (len(sel) - 1) * M + sel] = 1.0
        elif len(sel):
            raise KeyError(f"|S| = {len(sel)} has no y (1..{B})")
        return xv

    return Emitted(
        c=value, A=A, row_lo=row_lo, row_hi=row_hi, col_lo=np.zeros(n),
        col_hi=np.concatenate([np.ones(B), np.tile(~out, B).astype(float)]),
        integrality=np.ones(n, np.int32), sense="max",
        columns=lambda: [("y", int(v)) for v in k] + [("z", (w, int(v))) for v in k for w in W],
        rows=row_keys, decode=decode,
        extras={"kind": "formulation-a", "card": card,
                "size": lambda: np.concatenate([k.astype(float), np.zeros(nz)])},
        encode=encode)


def _model_extras(inst: WorkerSelectInstance, m: pyo.ConcreteModel, column_of: dict) -> dict:
    """The Pyomo route's pass data: |S| coefficients (m.size) and each column's cardinality k
    (y[k], and z[worker, k] in formulation A; 0 elsewhere)."""
    from pyomo.repn import generate_standard_repn

    n = len(column_of)
    card = np.zeros(n, dtype=np.int64)
    for k, v in m.y.items():
        if id(v) in column_of:
            card[column_of[id(v)]] = k
    z = m.component("z")
    if z is not None and z.dim() == 2:
        for (_, k), v in z.items():
            if id(v) in column_of:
                card[column_of[id(v)]] = k
    extras: dict[str, Any] = {"kind": getattr(m, "kind", m.name), "card": card}
    size_expr = m.component("size")
    if size_expr is not None:
        size = np.zeros(n)
        repn = generate_standard_repn(size_expr, compute_values=True)
        for v, a in zip(repn.linear_vars, repn.linear_coefs, strict=True):
            if id(v) in column_of:
                size[column_of[id(v)]] += float(a)
        extras["size"] = lambda: size
    return extras


# ---------------------------------------------------------------------------- passes
# stage 2 must not accept a set worse than F* - tol because of HiGHS's 1e-6 feasibility slack
SECOND_PASS_TOLERANCES = (("mip_feasibility_tolerance", 1e-9),
                          ("primal_feasibility_tolerance", 1e-9))


def lp_bound_proves(lp_max: float, floor: float) -> bool:
    """The LP optimum over the smaller sizes is an upper bound on F_hat of every smaller set (a
    relaxation): below the floor by more than HiGHS's tolerances, no smaller set is optimal."""
    return lp_max < floor - 1e-7 * max(1.0, abs(floor))


def _shrink_lp(ctx: Any, sol: WorkerSelectSolution, floor: float,
               stage2: Any) -> tuple[WorkerSelectSolution, bool]:
    """Stage 2 on the integral LP (uniform costs): fix out every size >= k = |best| and re-solve
    max F_hat by dual simplex, warm: only bounds change, so the stage-1 basis stays dual feasible
    (no row, no new costs). An optimum below the floor proves that no smaller set reaches
    F* - tol; an integral vertex at or above it is a smaller optimal set (k shrinks, repeat).
    Returns (best set, proven); unproven (a fractional or inconsistent vertex) leaves the MILP
    pass to the caller (the sizes' loaded bounds are restored by `lexicographic`)."""
    hm, card, details = ctx.model, ctx.extras["card"], ctx.details
    hm.options = stage2.replace(extra=stage2.extra + (("simplex_strategy", 1),))
    best, runs = sol, 0
    while len(best.selected) > 1:
        hm.set_col_bounds(np.flatnonzero(card >= len(best.selected)), 0.0, 0.0)
        res = hm.solve()
        runs += 1
        details["stage2"] = {**res.summary(), "lp_runs": runs}
        if res.status is Status.INFEASIBLE:
            return best, True
        if res.status is not Status.OPTIMAL or res.x is None:
            return best, False
        if lp_bound_proves(res.objective, floor):
            return best, True
        cand = ctx.decode(res)
        if not (max_fractionality(res.x, ctx.int_cols) <= formulation.INTEGRAL_TOL
                and res.objective >= floor and len(cand.selected) < len(best.selected)):
            return best, False
        best = cand
    return best, True


def lexicographic(ctx: Any) -> PassResult:
    """Stage 1: max F_hat, exact; stage 2 (digest 2.5): min |S| s.t. F_hat >= F* - tol, so the
    exact methods return the same k* as Algorithm 1. Both stages run on ONE live HiGHS model.

    Integral LP (formulation A, uniform costs: Balas' disjunctive hull, digest 2.4 A): stage 1
    is the LP, its vertex checked integral (else the MILP) and its optimum is the bound; stage 2
    is `_shrink_lp` (bound changes, warm dual simplex). Otherwise, and when `_shrink_lp` cannot
    conclude, stage 2 is the MILP min |S| s.t. F_hat >= floor on the live model: the floor row
    added, the costs changed to |S|, the sizes above the best set's fixed out (that set is
    feasible, so they cannot be needed), gap 0, started from the stage-1 point. On a user's
    model the floor is on the model's own objective; a model with no `size` expression or a
    minimizing objective gets stage 1 only.

    Exact on the model as built and on one a user only added rows (and variables) to
    (`valid_for`): stage 1 solves the loaded model, so the rows are in it; stage 2's floor is
    on the model's objective, unchanged; every bound it changes is a size's (fixed out, then
    restored to its loaded bound), and a set it keeps is a point of the loaded model at or
    above the floor. A changed objective, bound or fixing gets one plain solve instead: the
    tie tolerance is calibrated to F_hat and the size bounds are the builder's."""
    hm, details = ctx.model, ctx.details
    details["formulation"] = ctx.extras.get("kind", "")
    if not hm.is_mip and len(ctx.int_cols):  # loaded relaxed: the integral LP
        res1, source = integral_lp_stage(ctx, "lp-relaxation (integral vertex, disjunctive hull)")
    else:
        res1, source = hm.solve(), "milp-dual-bound"
    details.update(stage1=res1.summary(), nodes=res1.nodes)
    if res1.x is None:
        return PassResult(res1, None, source)
    x1 = res1.x
    sol = ctx.decode(res1)
    details["second_pass"] = "kept stage 1"
    size = ctx.extras.get("size")
    if res1.status is not Status.OPTIMAL or size is None or hm.sense != "max":
        if res1.status is Status.OPTIMAL:
            details["second_pass"] = "none (no size expression or not maximizing)"
        details["k"] = len(sol.selected)
        return PassResult(res1, sol, source)
    floor = res1.objective - tie_tol(res1.objective)
    if len(sol.selected) > 1:  # |S| >= 1: a one-worker optimum is already the smallest
        stage2 = ctx.options.replace(time_limit=ctx.time_left(), known_feasible=True,
                                     extra=SECOND_PASS_TOLERANCES)
        card = ctx.extras["card"]
        sized = np.flatnonzero(card > 0)
        loaded = (hm._col_lo[sized] * hm._cs[sized], hm._col_hi[sized] * hm._cs[sized])
        best, proven = sol, False
        if not hm.is_mip:  # the integral LP: shrink by bound changes, warm dual simplex
            best, proven = _shrink_lp(ctx, sol, floor, stage2)
            if proven:
                details["second_pass"] = "lp (smaller sizes bounded below the floor)"
            else:  # the MILP below, on the same live model with only sizes > |best| fixed
                hm.set_col_bounds(sized, *loaded)
                hm.set_integrality(ctx.int_cols, True)
                details["stage2_lp"] = details.pop("stage2", None)
        if not proven:
            hm.add_rows([floor], [np.inf], sp.csr_array(ctx.c[None, :]))
            hm.set_objective(size(), sense="min")
            above = np.flatnonzero(card > len(best.selected))
            if above.size:
                hm.set_col_bounds(above, 0.0, 0.0)
            if best is sol:
                hm.set_start(np.round(x1))
            hm.options = stage2.replace(time_limit=ctx.time_left())
            res2 = hm.solve()
            details["stage2"] = res2.summary()
            if res2.x is not None and res2.status in (Status.OPTIMAL, Status.TIME_LIMIT):
                cand = ctx.decode(res2)
                if (float(ctx.c @ res2.x) >= floor - 1e-9 * max(1.0, abs(floor))
                        and len(cand.selected) <= len(best.selected)):
                    best = cand
                    details["second_pass"] = str(res2.status)
        sol = best
    details["k"] = len(sol.selected)
    return PassResult(res1, sol, source)


def _settings_a(inst: WorkerSelectInstance) -> Settings:
    integral = not inst.has_costs
    return Settings(presolve=PRESOLVE["formulation-a"], known_feasible=not inst.has_costs,
                    lp_solver="simplex" if integral else "choose", integral_lp=integral)


def _settings_compact(inst: WorkerSelectInstance) -> Settings:
    kind = "compact-costs" if inst.has_costs else "compact"
    return Settings(presolve=PRESOLVE[kind], known_feasible=not inst.has_costs)


LEXICOGRAPHIC = "max F_hat (the integral LP where it applies, else the MILP), then min |S|"
LEXICOGRAPHIC_VALID = (UNCHANGED, ADDED_ROWS)  # see `lexicographic`
FORMULATIONS = {
    "milp-a": Formulation("worker-select", "milp-a", build_formulation_a, decode, _settings_a,
                          lexicographic, emit_formulation_a, _model_extras,
                          route=LEXICOGRAPHIC, valid_for=LEXICOGRAPHIC_VALID, reads=("y", "z"),
                          encode=encode, lazy=lambda inst: build_formulation_a(inst, lazy=True)),
    "milp-compact": Formulation("worker-select", "milp-compact", build_compact, decode,
                                _settings_compact, lexicographic, None, _model_extras,
                                route=LEXICOGRAPHIC, valid_for=LEXICOGRAPHIC_VALID,
                                reads=("y", "z"), encode=encode),
}
BUILDERS = {name: f.model for name, f in FORMULATIONS.items()}
