"""Pyomo models of OLAS Model 10 (paper 000, eqs. 10a-10i) and its exact reformulations.

All models index labelers by accuracy rank i (descending) and pool points by entropy rank j
(descending), as the paper assumes; `inst.labeler_order()` / `inst.point_order()` map ranks back.
Every model applies (10d) through the ONE shared predicate `allowed` (variable fixing or
omission, digest 000 section 7.4), never as the numeric row y_ij eps_ij <= beta. The optional
budget adds sum y <= B (digest F3).

- `build_model10_literal`: (10a)-(10i) as printed, (10e) pairwise; small pools only.
- `build_model10_compact`: (10e) replaced by a monotone labeler-rank variable w_j (digest 2.4).
- `build_model10_bmatching_lp`: (10a)-(10d) as an LP; totally unimodular (digest F1).
- `build_model10_prefix_lp`: the Hall prefix LP over s_j, O(u + M) rows (digest F2).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.util import quicksum

from ..problems.olas_select import OlasSelectInstance, kappa, sorted_allowed


def _sorted_data(inst: OlasSelectInstance) -> tuple[list[float], list[int]]:
    e = [float(v) for v in inst.entropies[inst.point_order()]]
    c = [int(v) for v in inst.capacities[inst.labeler_order()]]
    return e, c


def _pairs(inst: OlasSelectInstance) -> list[tuple[int, int]]:
    """Allowed (labeler rank, point rank) pairs."""
    A = sorted_allowed(inst)
    return [(int(i), int(j)) for i, j in zip(*A.nonzero(), strict=True)]


def _budget(m: pyo.ConcreteModel, inst: OlasSelectInstance, terms: list) -> None:
    if inst.budget is not None and terms:
        m.budget = pyo.Constraint(expr=quicksum(terms) <= int(inst.budget))


def _policy_z(m: pyo.ConcreteModel, loads: list, c: list[int]) -> None:
    """(10f)-(10h) with (10g) multiplied by c_i (digest 7.5): z_i = 1 iff labeler i has room."""
    M = len(c)
    m.z = pyo.Var(range(M), domain=pyo.Binary)
    m.spare_ub = pyo.Constraint(range(M), rule=lambda m, i: m.z[i] <= c[i] - loads[i])  # (10f)
    m.spare_lb = pyo.Constraint(range(M),
                                rule=lambda m, i: c[i] * m.z[i] >= c[i] - loads[i])  # (10g)
    m.fill_order = pyo.Constraint(
        range(M - 1), rule=lambda m, i: loads[i + 1] <= c[i + 1] * (1 - m.z[i]))  # (10h)


def _once_and_capacity(m: pyo.ConcreteModel, pairs: list, c: Any) -> list:
    """Rows (10b) each point at most once and (10c) capacities over the given pairs of m.y;
    returns the load expression of every labeler (rank order)."""
    by_point: dict[int, list] = {}
    by_lab: dict[int, list] = {}
    for i, j in pairs:
        by_point.setdefault(j, []).append(m.y[i, j])
        by_lab.setdefault(i, []).append(m.y[i, j])
    m.once = pyo.Constraint(sorted(by_point), rule=lambda m, j: quicksum(by_point[j]) <= 1)
    loads = [quicksum(by_lab.get(i, [])) for i in range(len(c))]
    m.capacity = pyo.Constraint(sorted(by_lab), rule=lambda m, i: loads[i] <= c[i])
    return loads


def build_model10_literal(inst: OlasSelectInstance) -> pyo.ConcreteModel:
    """(10a)-(10i) as in the paper; y_ij fixed to 0 where not allowed (10d); (10e) pairwise.

    (10e) rows whose two variables are not both free are trivially satisfied and omitted.
    """
    e, c = _sorted_data(inst)
    M, u = len(c), len(e)
    A = sorted_allowed(inst)
    m = pyo.ConcreteModel(name="olas_model10_literal")
    m.y = pyo.Var(range(M), range(u), domain=pyo.Binary)
    for i in range(M):
        for j in range(u):
            if not A[i, j]:
                m.y[i, j].fix(0)  # (10d) by variable fixing
    free = _pairs(inst)
    m.obj = pyo.Objective(expr=quicksum(e[j] * m.y[i, j] for i, j in free), sense=pyo.maximize)
    loads = _once_and_capacity(m, free, c)  # (10b), (10c)
    # (10e): y_kl <= 1 - y_ij for k < i, l > j (both pairs allowed)
    cross = [(i, j, k, l) for i, j in free for k, l in free if k < i and l > j]
    m.no_cross = pyo.Constraint(cross, rule=lambda m, i, j, k, l: m.y[k, l] + m.y[i, j] <= 1)
    _policy_z(m, loads, c)
    _budget(m, inst, [m.y[i, j] for i, j in free])
    return m


def build_model10_compact(inst: OlasSelectInstance) -> pyo.ConcreteModel:
    """Compact MILP: (10e) as w_j in [1, M] non-decreasing with w_j = i on selected pairs.

    For allowed (i, j) (ranks 1-based in the formula): w_j >= 1 + (i-1) y_ij and
    w_j <= i + (M-i)(1 - y_ij); keeps (10b), (10c), (10f)-(10h). O(M u) rows.
    """
    e, c = _sorted_data(inst)
    M, u = len(c), len(e)
    pairs = _pairs(inst)
    m = pyo.ConcreteModel(name="olas_model10_compact")
    m.P = pyo.Set(initialize=pairs, dimen=2, ordered=True)
    m.y = pyo.Var(m.P, domain=pyo.Binary)
    m.w = pyo.Var(range(u), bounds=(1, M))
    m.obj = pyo.Objective(expr=quicksum(e[j] * m.y[i, j] for i, j in pairs), sense=pyo.maximize)
    loads = _once_and_capacity(m, pairs, c)
    m.w_monotone = pyo.Constraint(range(u - 1), rule=lambda m, j: m.w[j] <= m.w[j + 1])
    # rank r = i + 1 (1-based): w_j >= 1 + (r-1) y, w_j <= r + (M-r)(1-y)
    m.w_lo = pyo.Constraint(m.P, rule=lambda m, i, j: m.w[j] >= 1 + i * m.y[i, j])
    m.w_hi = pyo.Constraint(
        m.P, rule=lambda m, i, j: m.w[j] <= (i + 1) + (M - i - 1) * (1 - m.y[i, j]))
    _policy_z(m, loads, c)
    _budget(m, inst, [m.y[i, j] for i, j in pairs])
    return m


def build_model10_bmatching_lp(inst: OlasSelectInstance) -> pyo.ConcreteModel:
    """(10a)-(10d) with 0 <= y <= 1 on allowed pairs only: a bipartite b-matching LP.

    Its constraint matrix (plus the budget row) is totally unimodular, so a basic optimal
    solution is integral, and its optimum equals Model 10's (digest F1).
    """
    e, c = _sorted_data(inst)
    pairs = _pairs(inst)
    m = pyo.ConcreteModel(name="olas_model10_bmatching_lp")
    m.P = pyo.Set(initialize=pairs, dimen=2, ordered=True)
    m.y = pyo.Var(m.P, bounds=(0, 1))
    m.obj = pyo.Objective(expr=quicksum(e[j] * m.y[i, j] for i, j in pairs), sense=pyo.maximize)
    _once_and_capacity(m, pairs, c)
    _budget(m, inst, [m.y[i, j] for i, j in pairs])
    return m


def build_model10_prefix_lp(inst: OlasSelectInstance) -> pyo.ConcreteModel:
    """Hall prefix LP (digest F2): max sum e_j s_j, sum_{j: kappa_j <= i} s_j <= C_i, i = 0..M.

    kappa_j (allowed labelers of point j) is non-decreasing in entropy rank, so every row is a
    prefix of the pool: an interval matrix, totally unimodular, hence an integral LP.
    """
    e, c = _sorted_data(inst)
    k = kappa(inst)  # non-decreasing along the entropy order
    M, u = len(c), len(e)
    cum = [0]
    for ci in c:
        cum.append(cum[-1] + ci)
    m = pyo.ConcreteModel(name="olas_model10_prefix_lp")
    m.s = pyo.Var(range(u), bounds=(0, 1))
    m.obj = pyo.Objective(expr=quicksum(e[j] * m.s[j] for j in range(u)), sense=pyo.maximize)
    # row i covers the prefix {j : kappa_j <= i}; keep only rows that add points
    ends = [int(v) for v in np.searchsorted(k, np.arange(M + 1), side="right")]
    rows = [i for i in range(M + 1) if ends[i] > 0 and (i == 0 or ends[i] > ends[i - 1])]
    m.hall = pyo.Constraint(
        rows, rule=lambda m, i: quicksum(m.s[j] for j in range(ends[i])) <= cum[i])
    _budget(m, inst, [m.s[j] for j in range(u)])
    return m
