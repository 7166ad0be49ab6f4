"""Exact Pyomo MILPs of `labeler-set` (digest 001 section 3, models P1 and P2).

- `build_mv_margin_model` (P1): a DP over the vote margin d = #right - #wrong of the selected
  labelers, taken in order of quality. q[i,d] = P(margin d after labelers 1..i); labeler i
  changes the distribution by z[i,d] = x_i * g[i,d], linearized exactly because x_i is binary.
  Objective sum_{d>=1} q[M,d] + q[M,0]/2 - lambda C(x) (eq. 2 with random ties).
- `build_wmv_pattern_model` (P2): one binary y (WMV right) and tau (tie) per correctness pattern
  of all M labelers; unselected labelers marginalize out of P(pattern) by themselves.
Both accept heterogeneous costs with a weight lambda, a budget and a size cap; they are for small
M (P1: M <= ~14; P2: 2^(M+1) binaries, M <= ~10).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.util import quicksum

from ..problems.labeler_set import LabelerSetInstance
from ..problems.vote_accuracy import TIE_TOL

PATTERN_SLACK = 1e-6  # P2 strictness margin: above HiGHS feasibility tolerance (set to 1e-9)


def _side_constraints(m: pyo.ConcreteModel, inst: LabelerSetInstance, order: list[int]) -> None:
    M = len(order)
    c = [float(inst.cost_vector[i]) for i in order]
    m.nonempty = pyo.Constraint(expr=quicksum(m.x[k] for k in range(M)) >= 1)
    if inst.budget is not None:
        m.budget = pyo.Constraint(expr=quicksum(c[k] * m.x[k] for k in range(M) if c[k])
                                  <= float(inst.budget))
    if inst.max_size is not None:
        m.size_cap = pyo.Constraint(expr=quicksum(m.x[k] for k in range(M))
                                    <= int(inst.max_size))
    m.cost_term = quicksum(float(inst.cost_weight) * c[k] * m.x[k] for k in range(M)
                           if c[k] and inst.cost_weight)


def quality_order(inst: LabelerSetInstance) -> list[int]:
    """Labelers by quality, descending (stable): same optimum, faster solves (digest P1)."""
    return [int(i) for i in np.argsort(-inst.qualities, kind="stable")]


def build_mv_margin_model(inst: LabelerSetInstance) -> tuple[pyo.ConcreteModel, list[int]]:
    """P1: vote-margin DP MILP. Returns (model, order); model.x[k] is labeler order[k]."""
    order = quality_order(inst)
    p = [float(inst.qualities[i]) for i in order]
    M = len(order)
    m = pyo.ConcreteModel(name="labeler_set_mv_margin")
    m.K = pyo.RangeSet(0, M - 1)
    m.x = pyo.Var(m.K, domain=pyo.Binary)
    qidx = [(i, d) for i in range(M + 1) for d in range(-i, i + 1)]
    zidx = [(i, d) for i in range(1, M + 1) for d in range(-i, i + 1)]
    m.q = pyo.Var(qidx, bounds=(0.0, 1.0))
    m.z = pyo.Var(zidx, bounds=(-1.0, 1.0))

    def q(i: int, d: int):
        return m.q[i, d] if -i <= d <= i else 0.0

    m.start = pyo.Constraint(expr=m.q[0, 0] == 1.0)
    m.step = pyo.ConstraintList()
    m.link = pyo.ConstraintList()
    m.total = pyo.ConstraintList()
    for i in range(1, M + 1):
        pi, xi = p[i - 1], m.x[i - 1]
        for d in range(-i, i + 1):
            g = pi * q(i - 1, d - 1) + (1.0 - pi) * q(i - 1, d + 1) - q(i - 1, d)
            z = m.z[i, d]
            m.step.add(m.q[i, d] == q(i - 1, d) + z)
            m.link.add(z <= xi)
            m.link.add(z >= -xi)
            m.link.add(z <= g + (1 - xi))
            m.link.add(z >= g - (1 - xi))
        m.total.add(quicksum(m.q[i, d] for d in range(-i, i + 1)) == 1.0)
    _side_constraints(m, inst, order)
    acc = quicksum(m.q[M, d] for d in range(1, M + 1)) + 0.5 * m.q[M, 0]
    m.obj = pyo.Objective(expr=acc - m.cost_term, sense=pyo.maximize)
    return m, order


def build_wmv_pattern_model(inst: LabelerSetInstance) -> tuple[pyo.ConcreteModel, list[int]]:
    """P2: pattern MILP for WMV. Returns (model, order); model.x[k] is labeler order[k]."""
    order = list(range(inst.n_labelers))
    p = inst.qualities
    w = [float(v) for v in inst.weights]
    M = len(order)
    bits = ((np.arange(1 << M)[:, None] >> np.arange(M)) & 1).astype(bool)
    prob = np.where(bits, p, 1.0 - p).prod(axis=1)
    e = max(float(inst.wmv_eps), TIE_TOL)
    win_at = e + PATTERN_SLACK / 2  # margin >= e  (HiGHS: strict enough with tolerance 1e-9)
    tie_at = -e + PATTERN_SLACK / 2  # margin > -e
    big = float(sum(abs(v) for v in w) + e + 1.0)
    m = pyo.ConcreteModel(name="labeler_set_wmv_pattern")
    m.K = pyo.RangeSet(0, M - 1)
    m.W = pyo.RangeSet(0, (1 << M) - 1)
    m.x = pyo.Var(m.K, domain=pyo.Binary)
    m.y = pyo.Var(m.W, domain=pyo.Binary)
    m.tau = pyo.Var(m.W, domain=pyo.Binary)
    m.win = pyo.ConstraintList()
    for om in range(1 << M):
        margin = quicksum((w[k] if bits[om, k] else -w[k]) * m.x[k] for k in range(M) if w[k])
        m.win.add(margin >= win_at - big * (1 - m.y[om]))
        m.win.add(margin >= tie_at - big * (1 - m.tau[om]))
        m.win.add(m.y[om] + m.tau[om] <= 1)
    _side_constraints(m, inst, order)
    acc = quicksum(float(prob[om]) * (m.y[om] + 0.5 * m.tau[om]) for om in range(1 << M))
    m.obj = pyo.Objective(expr=acc - m.cost_term, sense=pyo.maximize)
    return m, order
