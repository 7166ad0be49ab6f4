"""Pyomo models of CL-TAP (paper 003): compact MILP (11)-(17), workplan formulation (18)-(24),
pricing problem (25)-(28) with the tightened budget row (26').

The compact model has a*t*K binaries x[i,j,k] and the epigraph variable eta (max-min). The
extended model has one lambda[i,h] per task and workplan of an explicit column list. The pricing
model is the multiple-choice knapsack of digest 2.4 (one iteration per annotator, sum k w <= b).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.util import quicksum

from ..problems.cltap import CltapInstance, CltapSolution, Workplan
from ..problems.cltap import linear_correctness as workplan_cost
from .formulation import Formulation, Settings


def build_compact(inst: CltapInstance, *, relax: bool = False, drop_prefix: bool = False,
                  symmetry_break: bool = False) -> pyo.ConcreteModel:
    """(11) max eta s.t. (12) eta <= c'(W_i), (13) budget, (14) per (i,j), (15) per (j,k),
    (16) prefix, (17) binary (or [0,1] with relax=True). Symmetry rows c'(W_{i-1}) <= c'(W_i) are
    optional and off by default (digest 5.5: they can hurt badly)."""
    t, a, K = inst.t, inst.a, inst.K
    phi = [[float(v) for v in row] for row in inst.phi]
    m = pyo.ConcreteModel(name="cltap_compact")
    m.T = pyo.RangeSet(0, t - 1)
    m.A = pyo.RangeSet(0, a - 1)
    m.I = pyo.RangeSet(0, K - 1)
    m.x = pyo.Var(m.T, m.A, m.I, domain=pyo.UnitInterval if relax else pyo.Binary)
    m.eta = pyo.Var(domain=pyo.Reals)
    m.obj = pyo.Objective(expr=m.eta, sense=pyo.maximize)

    def cprime(m, i):
        return quicksum(phi[j][k] * m.x[i, j, k] for j in range(a) for k in range(K) if phi[j][k])

    m.bottleneck = pyo.Constraint(m.T, rule=lambda m, i: m.eta <= cprime(m, i))
    m.budget = pyo.Constraint(expr=quicksum(m.x[i, j, k] for i in range(t) for j in range(a)
                                            for k in range(K)) <= int(inst.b))
    m.once = pyo.Constraint(m.T, m.A, rule=lambda m, i, j:
                            quicksum(m.x[i, j, k] for k in range(K)) <= 1)
    m.one_task = pyo.Constraint(m.A, m.I, rule=lambda m, j, k:
                                quicksum(m.x[i, j, k] for i in range(t)) <= 1)
    if not drop_prefix and K > 1:
        m.prefix = pyo.Constraint(m.A, pyo.RangeSet(1, K - 1), rule=lambda m, j, k:
                                  quicksum(m.x[i, j, k] for i in range(t))
                                  <= quicksum(m.x[i, j, k - 1] for i in range(t)))
    if symmetry_break and t > 1:
        m.symmetry = pyo.Constraint(pyo.RangeSet(1, t - 1), rule=lambda m, i:
                                    cprime(m, i - 1) <= cprime(m, i))
    return m


def feasible_workplans(inst: CltapInstance, tight: bool = True) -> list[Workplan]:
    """Every nonempty workplan: <= 1 pair per annotator and sum (k+1) <= b (tight, digest 1.7 =
    the paper's feasible set H) or |W| <= b (loose). Exponential: tiny instances only."""
    out: list[Workplan] = []

    def rec(j: int, cur: list[tuple[int, int]], used: int) -> None:
        if j == inst.a:
            if cur:
                out.append(tuple(cur))
            return
        rec(j + 1, cur, used)
        for k in range(inst.K):
            cost = (k + 1) if tight else 1
            if used + cost <= inst.b:
                cur.append((j, k))
                rec(j + 1, cur, used + cost)
                cur.pop()

    rec(0, [], 0)
    return out


def build_extended(inst: CltapInstance, columns: Sequence[Workplan], *, relax: bool = True,
                   pairs: Sequence[tuple[int, int]] | None = None) -> pyo.ConcreteModel:
    """(18)-(24) over the given workplans: lambda[i,h] >= 0 (LP, the restricted master) or binary.

    `pairs` lists the (task, column) variables to create (default: every task x every column).
    Rows: (19) `bottleneck[i]` (dual alpha_i), (20) `budget` (beta), (21) `pair[j,k]` (gamma),
    (22) `convex[i]` (delta_i), (23) `prefix[j,k]`, k >= 1 (epsilon). No explicit lambda <= 1 in
    the LP (digest D3): (22) implies it and explicit bounds would carry their own duals.
    """
    t, a, K = inst.t, inst.a, inst.K
    cost = [workplan_cost(inst, w) for w in columns]
    if pairs is None:
        pairs = [(i, h) for i in range(t) for h in range(len(columns))]
    pairs = list(pairs)
    m = pyo.ConcreteModel(name="cltap_extended")
    m.T = pyo.RangeSet(0, t - 1)
    m.A = pyo.RangeSet(0, a - 1)
    m.I = pyo.RangeSet(0, K - 1)
    m.P = pyo.Set(initialize=pairs, dimen=2)
    m.lam = pyo.Var(m.P, domain=pyo.NonNegativeReals if relax else pyo.Binary)
    m.eta = pyo.Var(domain=pyo.Reals)
    m.obj = pyo.Objective(expr=m.eta, sense=pyo.maximize)
    by_task: dict[int, list[int]] = {i: [] for i in range(t)}
    using: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for i, h in pairs:
        by_task[i].append(h)
        for j, k in columns[h]:
            using.setdefault((j, k), []).append((i, h))
    m.bottleneck = pyo.Constraint(m.T, rule=lambda m, i: m.eta <= quicksum(
        cost[h] * m.lam[i, h] for h in by_task[i] if cost[h]))
    m.budget = pyo.Constraint(rule=lambda m: quicksum(
        len(columns[h]) * m.lam[i, h] for i, h in pairs) <= int(inst.b) if pairs
        else pyo.Constraint.Skip)

    def usage(m, j, k):
        return quicksum(m.lam[ih] for ih in using.get((j, k), []))

    m.pair = pyo.Constraint(m.A, m.I, rule=lambda m, j, k:
                            usage(m, j, k) <= 1 if (j, k) in using else pyo.Constraint.Skip)
    m.convex = pyo.Constraint(m.T, rule=lambda m, i: quicksum(m.lam[i, h] for h in by_task[i])
                              <= 1 if by_task[i] else pyo.Constraint.Skip)
    if K > 1:
        def prefix(m, j, k):
            if (j, k) not in using:
                return pyo.Constraint.Skip
            return usage(m, j, k) - usage(m, j, k - 1) <= 0

        m.prefix = pyo.Constraint(m.A, pyo.RangeSet(1, K - 1), rule=prefix)
    return m


def build_pricing(reward: np.ndarray, b: int, *, tight: bool = True) -> pyo.ConcreteModel:
    """(25) max sum r_jk w_jk, (26') sum (k+1) w_jk <= b (or (26) sum w <= b), (27) one
    iteration per annotator, (28) w binary. reward r_jk = alpha_i phi_jk - pi_jk (digest 2.4)."""
    a, K = reward.shape
    r = [[float(v) for v in row] for row in reward]
    m = pyo.ConcreteModel(name="cltap_pricing")
    m.A = pyo.RangeSet(0, a - 1)
    m.I = pyo.RangeSet(0, K - 1)
    m.w = pyo.Var(m.A, m.I, domain=pyo.Binary)
    m.obj = pyo.Objective(expr=quicksum(r[j][k] * m.w[j, k] for j in range(a) for k in range(K)),
                          sense=pyo.maximize)
    m.budget = pyo.Constraint(expr=quicksum(((k + 1) if tight else 1) * m.w[j, k]
                                            for j in range(a) for k in range(K)) <= int(b))
    m.choice = pyo.Constraint(m.A, rule=lambda m, j: quicksum(m.w[j, k] for k in range(K)) <= 1)
    return m


def decode(inst: CltapInstance, m: pyo.ConcreteModel, res: Any) -> CltapSolution:
    """task_of[j, k] = i where x[i, j, k] > 1/2 in a solved (possibly extended) compact model
    (tasks i, annotators j and iterations k are the instance's 0-based indices)."""
    z = np.full((inst.a, inst.K), -1, dtype=np.int64)
    for (i, j, k), v in res.values(m.x).items():
        if v > 0.5:
            z[j, k] = i
    return CltapSolution(z)


# the compact model is feasible by construction (x = 0, eta = 0): an "infeasible" report is a
# HiGHS defect, re-checked without presolve (digest 000 section 6.2 on the same HiGHS versions)
FORMULATIONS = {"milp-compact": Formulation(
    "cltap", "milp-compact", build_compact, decode,
    lambda inst: Settings(known_feasible=True))}
BUILDERS = {name: f.model for name, f in FORMULATIONS.items()}
