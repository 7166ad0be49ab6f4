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
- `decode`: the solution a solved (possibly extended) model holds; `BUILDERS`: method -> builder.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.util import quicksum

from ..problems.olas_select import (
    OlasSelectInstance,
    OlasSelectSolution,
    assign_theorem1,
    kappa,
    sorted_allowed,
)
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


def build_model10_bmatching_lp(inst: OlasSelectInstance) -> pyo.ConcreteModel:
    """(10a)-(10d) with 0 <= y[labeler id, point id] <= 1 on allowed pairs only: a bipartite
    b-matching LP. Its constraint matrix (plus the budget row) is totally unimodular, so a basic
    optimal solution is integral, and its optimum equals Model 10's (digest F1). Side rows a
    user adds may break that: make y binary then (`for v in m.y.values(): v.domain =
    pyo.Binary`)."""
    e, c = _sorted_data(inst)
    lk, pk = _rank_keys(inst)
    pairs = _pairs(inst)
    m = pyo.ConcreteModel(name="olas_model10_bmatching_lp")
    m.P = pyo.Set(initialize=[(lk[i], pk[j]) for i, j in pairs], dimen=2, ordered=True)
    m.y = pyo.Var(m.P, bounds=(0, 1))
    m.obj = pyo.Objective(expr=quicksum(e[j] * m.y[lk[i], pk[j]] for i, j in pairs),
                          sense=pyo.maximize)
    _once_and_capacity(m, pairs, c, lk, pk)
    _budget(m, inst, [m.y[lk[i], pk[j]] for i, j in pairs])
    return m


def build_model10_prefix_lp(inst: OlasSelectInstance) -> pyo.ConcreteModel:
    """Hall prefix LP (digest F2) over s[point id]: max sum e_j s_j, sum_{j: kappa_j <= i} s_j
    <= C_i (the i best labelers' capacity), i = 0..M. kappa_j (allowed labelers of point j) is
    non-decreasing in entropy rank, so every row is a prefix of the pool: an interval matrix,
    totally unimodular, hence an integral LP. It has no assignment variables: `decode` gives
    the selection the Theorem 1 assignment."""
    e, c = _sorted_data(inst)
    _, pk = _rank_keys(inst)
    k = kappa(inst)  # non-decreasing along the entropy order
    M, u = len(c), len(e)
    cum = [0]
    for ci in c:
        cum.append(cum[-1] + ci)
    m = pyo.ConcreteModel(name="olas_model10_prefix_lp")
    m.s = pyo.Var(point_keys(inst), bounds=(0, 1))
    m.obj = pyo.Objective(expr=quicksum(e[j] * m.s[pk[j]] for j in range(u)), sense=pyo.maximize)
    # row i covers the prefix {j : kappa_j <= i}; keep only rows that add points
    ends = [int(v) for v in np.searchsorted(k, np.arange(M + 1), side="right")]
    rows = [i for i in range(M + 1) if ends[i] > 0 and (i == 0 or ends[i] > ends[i - 1])]
    m.hall = pyo.Constraint(
        rows, rule=lambda m, i: quicksum(m.s[pk[j]] for j in range(ends[i])) <= cum[i])
    _budget(m, inst, [m.s[pk[j]] for j in range(u)])
    return m


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
    return assign_theorem1(inst, chosen)


BUILDERS = {
    "lp-prefix": build_model10_prefix_lp,
    "milp-compact": build_model10_compact,
    "milp-literal": build_model10_literal,
    "lp-bmatching": build_model10_bmatching_lp,
}
