"""Pyomo models of OLAS Model 10 (paper 000, eqs. 10a-10i) and its exact reformulations.

Variables are indexed by the instance's ids (`y[labeler_id, point_id]`, `s[point_id]`; the
caller's positions 0.. where the instance has no ids), so a user can extend a model in her own
terms. The formulations themselves rank labelers by accuracy (descending) and points by
entropy (descending), as the paper assumes: rank-ordered rows ((10e), (10h), the Hall prefixes)
are built from `inst.labeler_order()` / `inst.point_order()`. Every model applies (10d) through
the ONE shared predicate `allowed` (variable fixing or omission, digest 000 section 7.4), never
as the numeric row y_ij eps_ij <= beta. The optional budget adds sum y <= B (digest F3).

- `build_model10_literal`: (10a)-(10i) as printed, (10e) pairwise; small pools only.
- `build_model10_compact`: (10e) replaced by a monotone labeler-rank variable w_j (digest 2.4).
- `build_model10_bmatching_lp`: (10a)-(10d) as an LP; totally unimodular (digest F1).
- `build_model10_prefix_lp`: the Hall prefix LP over s_j, O(u + M) rows (digest F2).
- `decode`: the solution a solved (possibly extended) model holds.
- `emit_prefix_lp`, `emit_bmatching_lp`: the same two TU matrices straight from numpy (the
  registered route: u = 100,000 points would be ~2M Pyomo objects).
- `FORMULATIONS`: method -> `Formulation` (builder, emitter, decoder, HiGHS settings, passes);
  `BUILDERS`: method -> builder of a tagged model (what `crowdopt.build_model` returns).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyomo.core.util import quicksum

from ..problems.olas_select import (
    OlasSelectInstance,
    OlasSelectSolution,
    allowed,
    assign_theorem1,
    kappa,
    sorted_allowed,
)
from .formulation import (
    Emitted,
    Formulation,
    PassResult,
    Settings,
    integral_lp_stage,
    solve_integral_lp,
    solve_once,
)
from .lazy import LazyModel
from .olas_assign import labeler_keys, point_keys


def _sorted_data(inst: OlasSelectInstance) -> tuple[list[float], list[int]]:
    e = [float(v) for v in inst.entropies[inst.point_order()]]
    c = [int(v) for v in inst.capacities[inst.labeler_order()]]
    return e, c


def _rank_keys(inst: OlasSelectInstance) -> tuple[list, list]:
    """(model index of the labeler of each accuracy rank, of the point of each entropy rank)."""
    L, P = labeler_keys(inst), point_keys(inst)
    return ([L[i] for i in inst.labeler_order()], [P[j] for j in inst.point_order()])


def _pairs(inst: OlasSelectInstance) -> list[tuple[int, int]]:
    """Allowed (labeler rank, point rank) pairs."""
    A = sorted_allowed(inst)
    return [(int(i), int(j)) for i, j in zip(*A.nonzero(), strict=True)]


def _budget(m: pyo.ConcreteModel, inst: OlasSelectInstance, terms: list) -> None:
    if inst.budget is not None and terms:
        m.budget = pyo.Constraint(expr=quicksum(terms) <= int(inst.budget))


def _policy_z(m: pyo.ConcreteModel, loads: list, c: list[int], lk: list) -> None:
    """(10f)-(10h) with (10g) multiplied by c_i (digest 7.5): z_i = 1 iff labeler i has room.
    Indexed by labeler id; (10h) links each labeler to the next one in accuracy order."""
    M = len(c)
    rank = {k: i for i, k in enumerate(lk)}
    m.z = pyo.Var(lk, domain=pyo.Binary)
    m.spare_ub = pyo.Constraint(lk, rule=lambda m, k: m.z[k] <= c[rank[k]] - loads[rank[k]])  # (10f)
    m.spare_lb = pyo.Constraint(lk, rule=lambda m, k: c[rank[k]] * m.z[k]
                                >= c[rank[k]] - loads[rank[k]])  # (10g)
    m.fill_order = pyo.Constraint(
        lk[:M - 1], rule=lambda m, k: loads[rank[k] + 1]
        <= c[rank[k] + 1] * (1 - m.z[k]))  # (10h)


def _once_and_capacity(m: pyo.ConcreteModel, pairs: list, c: Any, lk: list, pk: list) -> list:
    """Rows (10b) each point at most once and (10c) capacities over the given (rank) pairs of
    m.y[labeler id, point id]; returns the load expression of every labeler (rank order)."""
    by_point: dict[Any, list] = {}
    by_lab: dict[int, list] = {}
    for i, j in pairs:
        v = m.y[lk[i], pk[j]]
        by_point.setdefault(pk[j], []).append(v)
        by_lab.setdefault(i, []).append(v)
    m.once = pyo.Constraint([pk[j] for j in sorted({j for _, j in pairs})],
                            rule=lambda m, p: quicksum(by_point[p]) <= 1)
    loads = [quicksum(by_lab.get(i, [])) for i in range(len(c))]
    rank = {k: i for i, k in enumerate(lk)}
    m.capacity = pyo.Constraint([lk[i] for i in sorted(by_lab)],
                                rule=lambda m, k: loads[rank[k]] <= c[rank[k]])
    return loads


def build_model10_literal(inst: OlasSelectInstance) -> pyo.ConcreteModel:
    """(10a)-(10i) as in the paper over y[labeler id, point id]; y fixed to 0 where not allowed
    (10d); (10e) pairwise. (10e) rows whose two variables are not both free are trivially
    satisfied and omitted. Small pools only."""
    e, c = _sorted_data(inst)
    lk, pk = _rank_keys(inst)
    A = sorted_allowed(inst)
    m = pyo.ConcreteModel(name="olas_model10_literal")
    m.L = pyo.Set(initialize=labeler_keys(inst), ordered=True)
    m.U = pyo.Set(initialize=point_keys(inst), ordered=True)
    m.y = pyo.Var(m.L, m.U, domain=pyo.Binary)
    for i, j in zip(*np.nonzero(~A), strict=True):
        m.y[lk[i], pk[j]].fix(0)  # (10d) by variable fixing
    free = _pairs(inst)
    m.obj = pyo.Objective(expr=quicksum(e[j] * m.y[lk[i], pk[j]] for i, j in free),
                          sense=pyo.maximize)
    loads = _once_and_capacity(m, free, c, lk, pk)  # (10b), (10c)
    # (10e): y_kl <= 1 - y_ij for k < i, l > j (ranks; both pairs allowed)
    cross = [(i, j, k, l) for i, j in free for k, l in free if k < i and l > j]
    m.no_cross = pyo.Constraint(range(len(cross)), rule=lambda m, r: m.y[
        lk[cross[r][2]], pk[cross[r][3]]] + m.y[lk[cross[r][0]], pk[cross[r][1]]] <= 1)
    _policy_z(m, loads, c, lk)
    _budget(m, inst, [m.y[lk[i], pk[j]] for i, j in free])
    return m


def build_model10_compact(inst: OlasSelectInstance) -> pyo.ConcreteModel:
    """Compact MILP: (10e) as w[point] in [1, M], non-decreasing along the entropy order, with
    w = rank(i) on selected pairs: w_j >= 1 + (i-1) y_ij and w_j <= i + (M-i)(1 - y_ij) for
    allowed (i, j) (1-based ranks); keeps (10b), (10c), (10f)-(10h). O(M u) rows."""
    e, c = _sorted_data(inst)
    lk, pk = _rank_keys(inst)
    M, u = len(c), len(e)
    pairs = _pairs(inst)
    m = pyo.ConcreteModel(name="olas_model10_compact")
    m.P = pyo.Set(initialize=[(lk[i], pk[j]) for i, j in pairs], dimen=2, ordered=True)
    m.y = pyo.Var(m.P, domain=pyo.Binary)
    m.w = pyo.Var(point_keys(inst), bounds=(1, M))
    m.obj = pyo.Objective(expr=quicksum(e[j] * m.y[lk[i], pk[j]] for i, j in pairs),
                          sense=pyo.maximize)
    loads = _once_and_capacity(m, pairs, c, lk, pk)
    after = {pk[j]: pk[j + 1] for j in range(u - 1)}  # the next point in entropy order
    m.w_monotone = pyo.Constraint(pk[:u - 1] if u else [],
                                  rule=lambda m, p: m.w[p] <= m.w[after[p]])
    rank_l = {k: i for i, k in enumerate(lk)}
    # rank r = i + 1 (1-based): w_j >= 1 + (r-1) y, w_j <= r + (M-r)(1-y)
    m.w_lo = pyo.Constraint(m.P, rule=lambda m, a, p: m.w[p] >= 1 + rank_l[a] * m.y[a, p])
    m.w_hi = pyo.Constraint(m.P, rule=lambda m, a, p: m.w[p] <= (rank_l[a] + 1)
                            + (M - rank_l[a] - 1) * (1 - m.y[a, p]))
    _policy_z(m, loads, c, lk)
    _budget(m, inst, [m.y[lk[i], pk[j]] for i, j in pairs])
    return m


def build_model10_bmatching_lp(inst: OlasSelectInstance, lazy: bool = False
                               ) -> pyo.ConcreteModel:
    """(10a)-(10d) with binary y[labeler id, point id] on allowed pairs only: a bipartite
    b-matching. Its constraint matrix (plus the budget row) is totally unimodular, so the LP
    relaxation has an integral optimal vertex and its optimum equals Model 10's (digest F1):
    the formulation solves the LP and checks the vertex; side rows a user adds may break total
    unimodularity, and then the check falls back to the MILP. `lazy`: a `LazyModel` whose
    objective and rows are filled on first need (what `build_model` returns)."""
    e, c = _sorted_data(inst)
    lk, pk = _rank_keys(inst)
    pairs = _pairs(inst)
    m = (LazyModel if lazy else pyo.ConcreteModel)(name="olas_model10_bmatching_lp")
    m.P = pyo.Set(initialize=[(lk[i], pk[j]) for i, j in pairs], dimen=2, ordered=True)
    m.y = pyo.Var(m.P, domain=pyo.Binary, dense=not lazy)
    m.obj = pyo.Objective(expr=0.0, sense=pyo.maximize)
    points = sorted({j for _, j in pairs})
    labs = sorted({i for i, _ in pairs})
    m.once = pyo.Constraint([pk[j] for j in points])
    m.capacity = pyo.Constraint([lk[i] for i in labs])
    budget = inst.budget is not None and bool(pairs)
    if budget:
        m.budget = pyo.Constraint()

    def fill(m: pyo.ConcreteModel) -> None:
        m.obj.expr = quicksum(e[j] * m.y[lk[i], pk[j]] for i, j in pairs)
        by_point: dict[Any, list] = {}
        by_lab: dict[int, list] = {}
        for i, j in pairs:
            v = m.y[lk[i], pk[j]]
            by_point.setdefault(j, []).append(v)
            by_lab.setdefault(i, []).append(v)
        for j in points:  # (10b) each point at most once
            m.once[pk[j]] = quicksum(by_point[j]) <= 1
        for i in labs:  # (10c) capacities
            m.capacity[lk[i]] = quicksum(by_lab[i]) <= c[i]
        if budget:
            m.budget.set_value(quicksum(m.y[lk[i], pk[j]] for i, j in pairs)
                               <= int(inst.budget))

    return _filled_or_deferred(m, fill, lazy, ["obj", "once", "capacity", "budget"], m.y)


def _filled_or_deferred(m: pyo.ConcreteModel, fill: Any, lazy: bool, placeholders: list[str],
                        var: Any) -> pyo.ConcreteModel:
    """`m` filled now, or (lazy) on first need, its sparse `var`'s entries made on demand."""
    if lazy:
        m.defer(fill, placeholders, {var: (None, None, False, pyo.Binary)})
    else:
        fill(m)
    return m


def build_model10_prefix_lp(inst: OlasSelectInstance, lazy: bool = False) -> pyo.ConcreteModel:
    """Hall prefix model (digest F2) over binary s[point id]: max sum e_j s_j,
    sum_{j: kappa_j <= i} s_j <= C_i (the i best labelers' capacity), i = 0..M. kappa_j
    (allowed labelers of point j) is non-decreasing in entropy rank, so every row is a prefix of
    the pool: an interval matrix, totally unimodular, hence its LP relaxation is integral (the
    formulation solves the LP and checks the vertex). It has no assignment variables: `decode`
    gives the selection the Theorem 1 assignment. `lazy`: a `LazyModel` whose objective and
    rows are filled on first need (what `build_model` returns)."""
    e, c = _sorted_data(inst)
    _, pk = _rank_keys(inst)
    k = kappa(inst)  # non-decreasing along the entropy order
    M, u = len(c), len(e)
    cum = [0]
    for ci in c:
        cum.append(cum[-1] + ci)
    m = (LazyModel if lazy else pyo.ConcreteModel)(name="olas_model10_prefix_lp")
    m.s = pyo.Var(pk, domain=pyo.Binary, dense=not lazy)  # ids in entropy order: prefixes
    m.obj = pyo.Objective(expr=0.0, sense=pyo.maximize)
    # row i covers the prefix {j : kappa_j <= i}; keep only rows that add points
    ends = [int(v) for v in np.searchsorted(k, np.arange(M + 1), side="right")]
    rows = [i for i in range(M + 1) if ends[i] > 0 and (i == 0 or ends[i] > ends[i - 1])]
    m.hall = pyo.Constraint(rows)
    budget = inst.budget is not None and u > 0
    if budget:
        m.budget = pyo.Constraint()

    def fill(m: pyo.ConcreteModel) -> None:
        s = [m.s[p] for p in pk]
        m.obj.expr = quicksum(e[j] * s[j] for j in range(u))
        for i in rows:
            m.hall[i] = quicksum(s[:ends[i]]) <= cum[i]
        if budget:
            m.budget.set_value(quicksum(s) <= int(inst.budget))

    return _filled_or_deferred(m, fill, lazy, ["obj", "hall", "budget"], m.s)


def decode(inst: OlasSelectInstance, m: pyo.ConcreteModel, res: Any) -> OlasSelectSolution:
    """The solution a solved model holds, in entropy order: the pairs y[labeler, point] > 1/2
    as they are (so a user's rows on the assignment are respected), or, for the prefix LP
    (selection s only), the selected points with the Theorem 1 assignment."""
    li = {k: i for i, k in enumerate(labeler_keys(inst))}
    pj = {k: j for j, k in enumerate(point_keys(inst))}
    rank_p = np.empty(inst.n_points, np.int64)
    rank_p[inst.point_order()] = np.arange(inst.n_points)
    if m.component("y") is not None:
        pairs = [(li[a], pj[p]) for (a, p), v in res.values(m.y).items() if v > 0.5]
        pairs.sort(key=lambda q: rank_p[q[1]])
        return OlasSelectSolution(np.array([p for _, p in pairs], dtype=np.int64),
                                  np.array([a for a, _ in pairs], dtype=np.int64))
    chosen = np.array([pj[p] for p, v in res.values(m.s).items() if v > 0.5], dtype=np.int64)
    return _assign_selection(inst, chosen)


def encode(inst: OlasSelectInstance, m: pyo.ConcreteModel, sol: OlasSelectSolution) -> list:
    """The answer's decision variables in a (possibly extended) model: s[point] (1 if
    selected) and y[labeler, point] (1 on its pairs), whichever the model has (the
    verification step fixes them to re-check the answer as a point: `solvers.verify`)."""
    L, P = labeler_keys(inst), point_keys(inst)
    out: list = []
    if m.component("s") is not None:
        chosen = {P[int(j)] for j in sol.selected}
        out += [(v, 1.0 if k in chosen else 0.0) for k, v in m.s.items()]
    if m.component("y") is not None:
        on = {(L[int(a)], P[int(j)]) for j, a in zip(sol.selected, sol.assignment, strict=True)}
        known = set(m.y)
        if not on <= known:  # a pair the model has no variable for
            raise KeyError(f"y{sorted(on - known, key=str)[0]}")
        out += [(v, 1.0 if k in on else 0.0) for k, v in m.y.items()]
    return out


def _assign_selection(inst: OlasSelectInstance, chosen: np.ndarray) -> OlasSelectSolution:
    """The Theorem 1 assignment of a selection. A selection past the pool's capacity (a model
    whose Hall rows a user deactivated) keeps its lowest-entropy excess on the most accurate
    labeler, over capacity: the evaluator reports that solution infeasible."""
    cap = int(np.sum(inst.capacities))
    if len(chosen) <= cap or not inst.n_labelers:
        return assign_theorem1(inst, chosen)
    by_entropy = chosen[np.argsort(-inst.entropies[chosen], kind="stable")]
    head = assign_theorem1(inst, by_entropy[:cap])
    rest = by_entropy[cap:]
    return OlasSelectSolution(np.concatenate([head.selected, rest]),
                              np.concatenate([head.assignment, np.full(len(rest),
                                              inst.labeler_order()[0], dtype=np.int64)]))


# ---------------------------------------------------------------------------- array emitters
def emit_prefix_lp(inst: OlasSelectInstance) -> Emitted:
    """`build_model10_prefix_lp` as arrays: column j = s of the j-th point by entropy (m.s is
    declared in that order), cost e_j, binary; one row sum_{j < end_i} s_j <= C_i per kept
    labeler rank i (end_i = #{j : kappa_j <= i}), then the budget row. Every row is a prefix
    of the columns, so column j lies in a suffix of the rows: built column-wise in one pass;
    O(M u) nonzeros, no Pyomo object."""
    op = inst.point_order()
    e = np.asarray(inst.entropies, dtype=float)[op]
    c = np.asarray(inst.capacities, dtype=np.int64)[inst.labeler_order()]
    # = kappa(inst): count the allowed labelers of each point before reordering the points
    k = np.count_nonzero(allowed(inst), axis=0)[op]
    M, u = len(c), len(e)
    cum = np.concatenate([[0], np.cumsum(c)]).astype(float)
    ends = np.searchsorted(k, np.arange(M + 1), side="right")
    prev = np.concatenate([[0], ends[:-1]])
    keep = np.flatnonzero((ends > 0) & ((np.arange(M + 1) == 0) | (ends > prev)))
    budget = inst.budget is not None and u > 0
    R = len(keep)
    row_hi = np.concatenate([cum[keep], [float(inst.budget)] if budget else []])
    # column j lies in the kept rows r >= first(j) (their prefixes reach past j): built
    # column-wise, each column's rows first(j)..R-1 (and the budget row R), sorted
    first = np.searchsorted(ends[keep], np.arange(u), side="right")
    counts = R - first + (1 if budget else 0)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    nnz = int(indptr[-1])
    index = (np.arange(nnz, dtype=np.int64) - np.repeat(indptr[:-1] - first, counts))
    A = sp.csc_array((np.ones(nnz), index.astype(np.int32), indptr), shape=(len(row_hi), u))

    def decode(x: np.ndarray) -> OlasSelectSolution:
        return assign_theorem1(inst, op[x > 0.5].astype(np.int64))

    rank = np.empty(u, np.int64)
    rank[op] = np.arange(u)

    def encode(sol: OlasSelectSolution) -> np.ndarray:
        x = np.zeros(u)
        x[rank[np.asarray(sol.selected, np.int64)]] = 1.0
        return x

    return Emitted(
        c=e, A=A, row_lo=np.full(len(row_hi), -np.inf), row_hi=row_hi,
        col_lo=np.zeros(u), col_hi=np.ones(u), integrality=np.ones(u, np.int32), sense="max",
        columns=lambda: [("s", p) for p in _rank_keys(inst)[1]],
        rows=lambda: [("hall", int(i)) for i in keep] + ([("budget", None)] if budget else []),
        decode=decode, encode=encode)


def emit_bmatching_lp(inst: OlasSelectInstance) -> Emitted:
    """`build_model10_bmatching_lp` as arrays: one binary column y per allowed (labeler rank,
    point rank) pair in row-major order (Pyomo's order of m.P), cost e_j; rows once[point] for
    every point with an allowed pair (entropy order), capacity[labeler] for every labeler with
    one (accuracy order), then the budget row. Column-wise, 2-3 nonzeros a column."""
    e = np.asarray(inst.entropies, dtype=float)[inst.point_order()]
    c = np.asarray(inst.capacities, dtype=np.int64)[inst.labeler_order()]
    Aok = sorted_allowed(inst)
    li, pj = np.nonzero(Aok)  # row-major: the Pyomo builder's pair order
    n = len(li)
    pts = np.flatnonzero(Aok.any(axis=0))
    labs = np.flatnonzero(Aok.any(axis=1))
    once_row = np.full(len(e), -1, dtype=np.int64)
    once_row[pts] = np.arange(len(pts))
    cap_row = np.full(len(c), -1, dtype=np.int64)
    cap_row[labs] = len(pts) + np.arange(len(labs))
    budget = inst.budget is not None and n > 0
    m_rows = len(pts) + len(labs) + (1 if budget else 0)
    per = 3 if budget else 2
    index = np.empty((n, per), dtype=np.int32)
    index[:, 0] = once_row[pj]
    index[:, 1] = cap_row[li]
    if budget:
        index[:, 2] = m_rows - 1
    indptr = (np.arange(n + 1) * per).astype(np.int64)
    A = sp.csc_array((np.ones(n * per), index.ravel(), indptr), shape=(m_rows, n))
    row_hi = np.concatenate([np.ones(len(pts)), c[labs].astype(float),
                             [float(inst.budget)] if budget else []])
    ol, op = inst.labeler_order(), inst.point_order()

    def decode(x: np.ndarray) -> OlasSelectSolution:
        on = np.flatnonzero(x > 0.5)  # pairs in labeler-rank order: sort by point rank
        on = on[np.argsort(pj[on], kind="stable")]
        return OlasSelectSolution(op[pj[on]].astype(np.int64), ol[li[on]].astype(np.int64))

    def pair_columns(labelers: np.ndarray, points: np.ndarray) -> np.ndarray:
        # columns are the allowed pairs in row-major rank order: a pair's column is its
        # position in that order (a binary search), -1 if the pair is not allowed
        rank_l = np.empty(len(ol), np.int64)
        rank_l[ol] = np.arange(len(ol))
        rank_p = np.empty(len(op), np.int64)
        rank_p[op] = np.arange(len(op))
        rl, rp = rank_l[labelers], rank_p[points]
        pos = np.searchsorted(li * len(op) + pj, rl * len(op) + rp)
        return np.where(Aok[rl, rp], pos, -1)

    def encode(sol: OlasSelectSolution) -> np.ndarray:
        cols = pair_columns(np.asarray(sol.assignment, np.int64),
                            np.asarray(sol.selected, np.int64))
        if len(cols) and cols.min() < 0:
            raise KeyError("a pair of the solution is not allowed (no y for it)")
        x = np.zeros(n)
        x[cols] = 1.0
        return x

    return Emitted(
        c=e[pj], A=A, row_lo=np.full(m_rows, -np.inf), row_hi=row_hi, col_lo=np.zeros(n),
        col_hi=np.ones(n), integrality=np.ones(n, np.int32), sense="max",
        columns=lambda: _pair_keys(inst, li, pj),
        rows=lambda: _bmatching_row_keys(inst, pts, labs, budget),
        decode=decode, extras={"pair_columns": pair_columns, "pair_cols": np.arange(n)},
        encode=encode)


def _pair_keys(inst: OlasSelectInstance, li: np.ndarray, pj: np.ndarray) -> list:
    lk, pk = _rank_keys(inst)
    return [("y", (lk[i], pk[j])) for i, j in zip(li, pj, strict=True)]


def _bmatching_row_keys(inst: OlasSelectInstance, pts: np.ndarray, labs: np.ndarray,
                        budget: bool) -> list:
    lk, pk = _rank_keys(inst)
    return ([("once", pk[j]) for j in pts] + [("capacity", lk[i]) for i in labs]
            + ([("budget", None)] if budget else []))


def _bmatching_extras(inst: OlasSelectInstance, m: pyo.ConcreteModel, column_of: dict) -> dict:
    """The Pyomo route's pair -> column map of m.y (the columns the model compiled)."""
    li = {k: i for i, k in enumerate(labeler_keys(inst))}
    pj = {k: j for j, k in enumerate(point_keys(inst))}
    col = np.full((inst.n_labelers, inst.n_points), -1, dtype=np.int64)
    for (a, p), v in m.y.items():
        col[li[a], pj[p]] = column_of.get(id(v), -1)

    def pair_columns(labelers: np.ndarray, points: np.ndarray) -> np.ndarray:
        return col[labelers, points]

    return {"pair_columns": pair_columns, "pair_cols": col[col >= 0]}


# ---------------------------------------------------------------------------- passes
def _canonical(ctx: Any, sol: OlasSelectSolution, x: np.ndarray) -> OlasSelectSolution:
    """The Theorem 1 assignment of the same selection (it also satisfies (10e)-(10h)), kept
    only where the model admits it: every pair a column, the point feasible for every row of
    the (possibly extended) model, the objective unchanged. Else the pairs as solved."""
    canon = _assign_selection(ctx.inst, sol.selected)
    cols = ctx.extras["pair_columns"](canon.assignment, canon.selected)
    if len(cols) and cols.min() < 0:
        return sol
    pair_cols = ctx.extras["pair_cols"]
    if len(pair_cols) == len(x):  # every column a pair (the model as built)
        x1 = np.zeros(len(x))
    else:
        x1 = np.array(x, dtype=float)
        x1[pair_cols] = 0.0
    x1[cols] = 1.0
    ok = (ctx.model.violation(x1) <= 1e-9
          and float(ctx.c @ x1) >= float(ctx.c @ x) - 1e-9 * max(1.0, abs(float(ctx.c @ x))))
    return canon if ok else sol


def _prefix_passes(ctx: Any) -> PassResult:
    return solve_integral_lp(ctx, "lp-prefix (TU, integral)")


def _bmatching_passes(ctx: Any) -> PassResult:
    res, source = integral_lp_stage(ctx, "lp-bmatching (TU, integral)")
    if res.x is None:
        return PassResult(res, None, source)
    return PassResult(res, _canonical(ctx, ctx.decode(res), res.x), source)


def _milp_passes(ctx: Any) -> PassResult:
    return solve_once(ctx, "milp-dual-bound")


# HiGHS settings of the TU models, from raw replays of the same arrays with the settings flipped
# (benchmarks/bench_exact_overhead.py --presolve, the "presolve" table): presolve off, primal
# simplex (simplex_strategy 4). At u = 100,000 (prefix) / 40,000 (b-matching), M = 17, medians
# of 3: dual simplex with presolve on 25.7 s / 10.0 s, primal on 21.1 s / 0.91 s, dual off
# 7.3 s / 9.6 s, primal off 0.13 s / 0.47 s; all four give the same objective and an integral
# vertex (the returned vertex is checked anyway). Model 10 is feasible by construction (y = 0),
# so an "infeasible" report is a HiGHS presolve defect (digest 6.2): known_feasible.
TU_SETTINGS = Settings(presolve=False, lp_solver="simplex", known_feasible=True,
                       extra=(("simplex_strategy", 4),), integral_lp=True)
# the TU route is exact on any model, whatever a user changed (`integral_lp_stage`: an
# integral optimal vertex of the relaxation is a MILP optimum; the b-matching's Theorem 1
# assignment is kept only where it is a point of the loaded model with the same objective)
TU_ROUTE = "the LP relaxation, its vertex checked integral, else the MILP (gap 0)"
MILP_SETTINGS = Settings(known_feasible=True)
# The literal Model 10 with presolve on: Heart pool u = 216, M = 5, no answer after 77 s of
# HiGHS CPU (presolve ignores the time limit); presolve off: optimal in 0.63 s.
LITERAL_SETTINGS = Settings(presolve=False, known_feasible=True)

FORMULATIONS = {
    "lp-prefix": Formulation("olas-select", "lp-prefix", build_model10_prefix_lp, decode,
                             lambda inst: TU_SETTINGS, _prefix_passes, emit_prefix_lp,
                             route=TU_ROUTE, reads=("s",), encode=encode,
                             lazy=lambda inst: build_model10_prefix_lp(inst, lazy=True)),
    "milp-compact": Formulation("olas-select", "milp-compact", build_model10_compact, decode,
                                lambda inst: MILP_SETTINGS, _milp_passes, reads=("y",),
                                encode=encode),
    "milp-literal": Formulation("olas-select", "milp-literal", build_model10_literal, decode,
                                lambda inst: LITERAL_SETTINGS, _milp_passes, reads=("y",),
                                encode=encode),
    "lp-bmatching": Formulation("olas-select", "lp-bmatching", build_model10_bmatching_lp,
                                decode, lambda inst: TU_SETTINGS, _bmatching_passes,
                                emit_bmatching_lp, _bmatching_extras,
                                route=TU_ROUTE + "; the Theorem 1 assignment of its selection "
                                "where the model admits it", reads=("y",), encode=encode,
                                lazy=lambda inst: build_model10_bmatching_lp(inst, lazy=True)),
}
BUILDERS = {name: f.model for name, f in FORMULATIONS.items()}
