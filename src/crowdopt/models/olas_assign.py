"""Pyomo model of OLAS Model 2 (paper 000, eqs. 2a-2d) with the epigraph linearization.

min eta  s.t.  eta >= sum_i eps_ij z_ij  (all j),  sum_i z_ij = 1 (2b),  sum_j z_ij <= c_i (2c),
z binary. Its LP relaxation is NOT exact (digest 000 T1.5): solve it as a MILP.
"""

from __future__ import annotations

import pyomo.environ as pyo
from pyomo.core.util import quicksum

from ..problems.olas_assign import OlasAssignInstance
from ..problems.olas_noise import TINY


def build_model2(inst: OlasAssignInstance) -> pyo.ConcreteModel:
    """The epigraph MILP of Model 2 (tiny eps values are clipped to 0, digest 000 7.18)."""
    eps = inst.eps_matrix()
    M, N = eps.shape
    coef = [[float(v) if v >= TINY else 0.0 for v in row] for row in eps]
    cap = [int(c) for c in inst.capacities]
    m = pyo.ConcreteModel(name="olas_model2")
    m.I = pyo.RangeSet(0, M - 1)
    m.J = pyo.RangeSet(0, N - 1)
    m.z = pyo.Var(m.I, m.J, domain=pyo.Binary)
    m.eta = pyo.Var(domain=pyo.Reals)
    m.obj = pyo.Objective(expr=m.eta, sense=pyo.minimize)
    m.epigraph = pyo.Constraint(
        m.J, rule=lambda m, j: m.eta >= quicksum(coef[i][j] * m.z[i, j] for i in range(M) if coef[i][j]))
    m.once = pyo.Constraint(m.J, rule=lambda m, j: quicksum(m.z[i, j] for i in range(M)) == 1)
    m.capacity = pyo.Constraint(m.I, rule=lambda m, i: quicksum(m.z[i, j] for j in range(N)) <= cap[i])
    return m
