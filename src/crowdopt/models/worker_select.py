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
second pass that minimizes |S| among the optima (digest 2.5), and `m.obj` (maximize m.value).
Presolve: off for formulation A (digest 2.4: presolve dominates the time; one knapsack row per k
with costs, DESIGN HiGHS traps), see `PRESOLVE`; each model carries its setting as
`m.presolve_hint`, which `crowdopt.solve_model` follows.

Workers are indexed by the instance's ids (positions 0.. without ids): `z[worker_id, k]` in
formulation A, `z[worker_id]` in the compact model; `decode` reads the selected set of a solved
(possibly extended) model; `BUILDERS` maps the exact method name to its builder.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.util import quicksum

from ..problems.worker_select import WorkerSelectInstance, WorkerSelectSolution

# per-model presolve setting (DESIGN.md "HiGHS and Pyomo traps"; digest 004 section 2.4)
PRESOLVE = {"formulation-a": False, "compact": True, "compact-costs": False}


def worker_keys(inst: WorkerSelectInstance) -> list:
    """The model index of each worker: its id, else its position."""
    return list(inst.worker_ids) if inst.worker_ids else list(range(inst.n_workers))


def build_formulation_a(inst: WorkerSelectInstance) -> pyo.ConcreteModel:
    """Formulation A: per-cardinality selectors y[k] and copies z[worker, k] (digest 2.4 A)."""
    x = [float(v) for v in inst.scores]
    M, B = inst.n_workers, inst.cap
    W = worker_keys(inst)
    root = [0.0] + [1.0 / math.sqrt(k) for k in range(1, B + 1)]
    m = pyo.ConcreteModel(name="worker_select_formulation_a")
    m.I = pyo.Set(initialize=W, ordered=True)
    m.Kset = pyo.RangeSet(1, B)
    m.y = pyo.Var(m.Kset, domain=pyo.Binary)
    m.z = pyo.Var(m.I, m.Kset, domain=pyo.Binary)
    m.value = pyo.Expression(expr=quicksum(
        x[i] * root[k] * m.z[W[i], k] for k in range(1, B + 1) for i in range(M) if x[i] != 0.0))
    m.size = pyo.Expression(expr=quicksum(k * m.y[k] for k in range(1, B + 1)))
    m.obj = pyo.Objective(expr=m.value, sense=pyo.maximize)
    m.one_size = pyo.Constraint(expr=quicksum(m.y[k] for k in range(1, B + 1)) == 1)
    m.card = pyo.Constraint(m.Kset, rule=lambda m, k: quicksum(
        m.z[w, k] for w in W) == k * m.y[k])
    m.link = pyo.Constraint(m.I, m.Kset, rule=lambda m, w, k: m.z[w, k] <= m.y[k])
    if inst.costs is not None:
        c = [int(v) for v in inst.costs]
        C = int(inst.budget)
        m.budget_row = pyo.Constraint(m.Kset, rule=lambda m, k: quicksum(
            c[i] * m.z[W[i], k] for i in range(M) if c[i]) <= C * m.y[k])
    m.kind = "formulation-a"
    m.presolve_hint = PRESOLVE[m.kind]
    return m


def build_compact(inst: WorkerSelectInstance) -> pyo.ConcreteModel:
    """Compact McCormick model: z[worker] and y[k], M + B binaries, r = 1/sqrt|S| (digest 2.4 B)."""
    x = [float(v) for v in inst.scores]
    M, B = inst.n_workers, inst.cap
    W = worker_keys(inst)
    m = pyo.ConcreteModel(name="worker_select_compact")
    m.I = pyo.Set(initialize=W, ordered=True)
    m.Kset = pyo.RangeSet(1, B)
    m.y = pyo.Var(m.Kset, domain=pyo.Binary)
    m.z = pyo.Var(m.I, domain=pyo.Binary)
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
        m.budget_row = pyo.Constraint(expr=quicksum(
            c[i] * m.z[W[i]] for i in range(M) if c[i]) <= int(inst.budget))
        m.kind = "compact-costs"
    else:
        m.kind = "compact"
    m.presolve_hint = PRESOLVE[m.kind]
    return m


def decode(inst: WorkerSelectInstance, m: pyo.ConcreteModel, res: Any) -> WorkerSelectSolution:
    """The selected workers (z > 1/2, in either model) of a solved (possibly extended) model."""
    pos = {k: i for i, k in enumerate(worker_keys(inst))}
    picked = {pos[idx[0] if isinstance(idx, tuple) else idx]
              for idx, v in res.values(m.z).items() if v > 0.5}
    return WorkerSelectSolution(np.array(sorted(picked), dtype=np.int64))


def add_second_pass(m: pyo.ConcreteModel, floor: float) -> None:
    """Stage 2 of digest 2.5: keep F_hat >= floor (= F* - tol) and minimize |S|."""
    m.obj.deactivate()
    m.floor = pyo.Constraint(expr=m.value >= float(floor))
    m.obj_size = pyo.Objective(expr=m.size, sense=pyo.minimize)


BUILDERS = {"milp-a": build_formulation_a, "milp-compact": build_compact}
