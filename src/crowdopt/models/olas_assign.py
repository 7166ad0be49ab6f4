"""Pyomo model of OLAS Model 2 (paper 000, eqs. 2a-2d) with the epigraph linearization.

min eta  s.t.  eta >= sum_i eps_ij z_ij  (all j),  sum_i z_ij = 1 (2b),  sum_j z_ij <= c_i (2c),
z binary. Its LP relaxation is NOT exact (digest 000 T1.5): solve it as a MILP.

Public extension point: `build_model2` indexes labelers and points by the instance's ids
(`z[labeler_id, point_id]`, positions 0.. where it has none); `decode` reads the assignment of
a solved (possibly extended) model; `FORMULATIONS` maps the exact method name to its
formulation (one plain solve, presolve on) and `BUILDERS` to its builder.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.util import quicksum

from ..problems.olas_assign import OlasAssignInstance, OlasAssignSolution, OlasPool
from ..problems.olas_noise import TINY
from .formulation import Formulation


def labeler_keys(inst: OlasPool) -> list:
    """The model index of each labeler: its id, else its position (caller's order)."""
    return list(inst.labeler_ids) if inst.labeler_ids else list(range(inst.n_labelers))


def point_keys(inst: OlasPool) -> list:
    """The model index of each point: its id, else its position (caller's order)."""
    return list(inst.point_ids) if inst.point_ids else list(range(inst.n_points))


def build_model2(inst: OlasAssignInstance) -> pyo.ConcreteModel:
    """The epigraph MILP of Model 2 over z[labeler, point] (ids), eta = the worst noise (2a);
    tiny eps values are clipped to 0 (digest 000 7.18)."""
    eps = inst.eps_matrix()
    M, N = eps.shape
    coef = [[float(v) if v >= TINY else 0.0 for v in row] for row in eps]
    cap = [int(c) for c in inst.capacities]
    L, P = labeler_keys(inst), point_keys(inst)
    m = pyo.ConcreteModel(name="olas_model2")
    m.I = pyo.Set(initialize=L, ordered=True)
    m.J = pyo.Set(initialize=P, ordered=True)
    m.z = pyo.Var(m.I, m.J, domain=pyo.Binary)
    m.eta = pyo.Var(domain=pyo.Reals)
    m.obj = pyo.Objective(expr=m.eta, sense=pyo.minimize)
    z = m.z
    jpos = {k: j for j, k in enumerate(P)}
    ipos = {k: i for i, k in enumerate(L)}
    m.epigraph = pyo.Constraint(m.J, rule=lambda m, pk: m.eta >= quicksum(
        coef[i][jpos[pk]] * z[L[i], pk] for i in range(M) if coef[i][jpos[pk]]))
    m.once = pyo.Constraint(m.J, rule=lambda m, pk: quicksum(z[lk, pk] for lk in L) == 1)
    m.capacity = pyo.Constraint(m.I, rule=lambda m, lk: quicksum(
        z[lk, pk] for pk in P) <= cap[ipos[lk]])
    return m


def decode(inst: OlasAssignInstance, m: pyo.ConcreteModel, res: Any) -> OlasAssignSolution:
    """The assignment z[labeler, point] > 1/2 of a solved model (-1 = a point left out)."""
    li = {k: i for i, k in enumerate(labeler_keys(inst))}
    pj = {k: j for j, k in enumerate(point_keys(inst))}
    z = np.full(inst.n_points, -1, dtype=np.int64)
    for (lk, pk), v in res.values(m.z).items():
        if v > 0.5:
            z[pj[pk]] = li[lk]
    return OlasAssignSolution(z)


def encode(inst: OlasAssignInstance, m: pyo.ConcreteModel, sol: OlasAssignSolution) -> list:
    """The answer's z[labeler, point] (1 on its pairs, 0 elsewhere) in a (possibly extended)
    model: what the verification step fixes to re-check it as a point (`solvers.verify`)."""
    L, P = labeler_keys(inst), point_keys(inst)
    on = {(L[int(a)], P[j]) for j, a in enumerate(sol.assignment) if a >= 0}
    return [(v, 1.0 if k in on else 0.0) for k, v in m.z.items()]


FORMULATIONS = {"milp-epigraph": Formulation("olas-assign", "milp-epigraph", build_model2, decode,
                                             reads=("z",), encode=encode)}
BUILDERS = {name: f.model for name, f in FORMULATIONS.items()}
