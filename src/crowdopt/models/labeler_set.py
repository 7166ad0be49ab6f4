"""Exact Pyomo MILPs of `labeler-set` (digest 001 section 3, models P1 and P2).

- `build_mv_margin_model` (P1): a DP over the vote margin d = #right - #wrong of the selected
  labelers, taken in order of quality. q[i,d] = P(margin d after labelers 1..i); labeler i
  changes the distribution by z[i,d] = x_i * g[i,d], linearized exactly because x_i is binary.
  Objective sum_{d>=1} q[M,d] + q[M,0]/2 - lambda C(x) (eq. 2 with random ties).
- `build_wmv_pattern_model` (P2): one binary y (WMV right) and tau (tie) per correctness pattern
  of all M labelers; unselected labelers marginalize out of P(pattern) by themselves.
Both accept heterogeneous costs with a weight lambda, a budget and a size cap; they are for small
M (P1: M <= ~14; P2: 2^(M+1) binaries, M <= ~10). The selection x is indexed by the instance's
labeler ids (positions 0.. without ids): `x[labeler_id]`; `build_milp` picks the model of the
instance's rule, `decode` reads the selected set of a solved (possibly extended) model;
`FORMULATIONS` maps the exact method to its formulation (one plain solve, presolve on, the
adapter's feasibility tolerance 1e-9 keeping the pattern model's bound exact).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.util import quicksum

from ..problems.labeler_set import LabelerSetInstance, LabelerSetSolution
from ..problems.vote_accuracy import TIE_TOL
from .formulation import Formulation, Settings

SMALL_COEF = 1e-9  # HiGHS's small_matrix_value: smaller DP coefficients are left out
# a quality this close to 0 or 1 turns HiGHS presolve off on the margin MILP: with one within
# 1e-5 presolve returned 'optimal' below the optimum ([1 - 2e-9, 0.3]: 0.3, bound 0.3); none
# wrong from 1e-4 on (random instances, M <= 6), presolve off never
EXTREME_QUALITY = 1e-3
PATTERN_SLACK = 1e-6  # P2 strictness margin: above HiGHS feasibility tolerance (set to 1e-9)


def labeler_keys(inst: LabelerSetInstance) -> list:
    """The model index of each labeler: its id, else its position."""
    return list(inst.labeler_ids) if inst.labeler_ids else list(range(inst.n_labelers))


def _selection(m: pyo.ConcreteModel, inst: LabelerSetInstance, order: list[int]) -> list:
    """m.x[labeler id] binary; returns the x of each labeler in `order`."""
    keys = labeler_keys(inst)
    m.L = pyo.Set(initialize=keys, ordered=True)
    m.x = pyo.Var(m.L, domain=pyo.Binary)
    return [m.x[keys[i]] for i in order]


def _side_constraints(m: pyo.ConcreteModel, inst: LabelerSetInstance, order: list[int],
                      xs: list) -> None:
    M = len(order)
    c = [float(inst.cost_vector[i]) for i in order]
    m.nonempty = pyo.Constraint(expr=quicksum(xs) >= 1)
    paid = [c[k] * xs[k] for k in range(M) if c[k]]
    if inst.budget is not None and paid:  # no labeler costs anything: C(S) = 0 <= B holds
        m.budget = pyo.Constraint(expr=quicksum(paid) <= float(inst.budget))
    if inst.max_size is not None:
        m.size_cap = pyo.Constraint(expr=quicksum(xs) <= int(inst.max_size))
    m.cost_term = quicksum(float(inst.cost_weight) * c[k] * xs[k] for k in range(M)
                           if c[k] and inst.cost_weight)


def _coef(v: float) -> float:
    """A DP probability as a coefficient: below HiGHS's small-matrix value 1e-9 it is 0 (HiGHS
    drops it unscaled; scaled up next to 1s it reached a presolve that cut off the optimum,
    qualities 1 - 1e-12); the model is then exact up to 1e-9 per stage, within the certificate's
    1e-7."""
    return v if v >= SMALL_COEF else 0.0


def quality_order(inst: LabelerSetInstance) -> list[int]:
    """Labelers by quality, descending (stable): same optimum, faster solves (digest P1)."""
    return [int(i) for i in np.argsort(-inst.qualities, kind="stable")]


def build_mv_margin_model(inst: LabelerSetInstance) -> pyo.ConcreteModel:
    """P1: vote-margin DP MILP over x[labeler id]; the DP stage i is the i-th labeler in
    quality order (`quality_order`)."""
    order = quality_order(inst)
    p = [float(inst.qualities[i]) for i in order]
    M = len(order)
    m = pyo.ConcreteModel(name="labeler_set_mv_margin")
    xs = _selection(m, inst, order)
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
        pi, xi = p[i - 1], xs[i - 1]
        for d in range(-i, i + 1):
            g = (_coef(pi) * q(i - 1, d - 1) + _coef(1.0 - pi) * q(i - 1, d + 1)
                 - q(i - 1, d))
            z = m.z[i, d]
            m.step.add(m.q[i, d] == q(i - 1, d) + z)
            m.link.add(z <= xi)
            m.link.add(z >= -xi)
            m.link.add(z <= g + (1 - xi))
            m.link.add(z >= g - (1 - xi))
        m.total.add(quicksum(m.q[i, d] for d in range(-i, i + 1)) == 1.0)
    _side_constraints(m, inst, order, xs)
    acc = quicksum(m.q[M, d] for d in range(1, M + 1)) + 0.5 * m.q[M, 0]
    m.obj = pyo.Objective(expr=acc - m.cost_term, sense=pyo.maximize)
    return m


def build_wmv_pattern_model(inst: LabelerSetInstance) -> pyo.ConcreteModel:
    """P2: pattern MILP for WMV over x[labeler id] (patterns over labelers in input order)."""
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
    xs = _selection(m, inst, order)
    m.W = pyo.RangeSet(0, (1 << M) - 1)
    m.y = pyo.Var(m.W, domain=pyo.Binary)
    m.tau = pyo.Var(m.W, domain=pyo.Binary)
    m.win = pyo.ConstraintList()
    for om in range(1 << M):
        margin = quicksum((w[k] if bits[om, k] else -w[k]) * xs[k] for k in range(M) if w[k])
        m.win.add(margin >= win_at - big * (1 - m.y[om]))
        m.win.add(margin >= tie_at - big * (1 - m.tau[om]))
        m.win.add(m.y[om] + m.tau[om] <= 1)
    _side_constraints(m, inst, order, xs)
    acc = quicksum(float(prob[om]) * (m.y[om] + 0.5 * m.tau[om]) for om in range(1 << M))
    m.obj = pyo.Objective(expr=acc - m.cost_term, sense=pyo.maximize)
    return m


def build_milp(inst: LabelerSetInstance) -> pyo.ConcreteModel:
    """The exact MILP of the instance's vote rule: P1 (MV) or P2 (WMV)."""
    return build_mv_margin_model(inst) if inst.rule == "mv" else build_wmv_pattern_model(inst)


def decode(inst: LabelerSetInstance, m: pyo.ConcreteModel, res: Any) -> LabelerSetSolution:
    """The selected set x[labeler] > 1/2 of a solved (possibly extended) model."""
    pos = {k: i for i, k in enumerate(labeler_keys(inst))}
    sel = sorted(pos[k] for k, v in res.values(m.x).items() if v > 0.5)
    return LabelerSetSolution(np.array(sel, dtype=np.int64))


def encode(inst: LabelerSetInstance, m: pyo.ConcreteModel, sol: LabelerSetSolution) -> list:
    """The answer's x[labeler] (1 if selected) in a (possibly extended) model (`solvers.verify`
    fixes them; the DP or pattern variables are completed by a solve)."""
    keys = labeler_keys(inst)
    chosen = {keys[int(i)] for i in sol.selected}
    return [(v, 1.0 if k in chosen else 0.0) for k, v in m.x.items()]


def settings(inst: LabelerSetInstance) -> Settings:
    """HiGHS settings: presolve off on the margin MILP when a quality is within
    EXTREME_QUALITY of 0 or 1 (its presolve cut off the optimum there)."""
    q = np.asarray(inst.qualities, dtype=float)
    extreme = inst.rule == "mv" and bool(np.any(np.minimum(q, 1.0 - q) < EXTREME_QUALITY))
    return Settings(presolve=not extreme)


FORMULATIONS = {"milp": Formulation("labeler-set", "milp", build_milp, decode, settings,
                                    reads=("x",), encode=encode)}
BUILDERS = {name: f.model for name, f in FORMULATIONS.items()}
