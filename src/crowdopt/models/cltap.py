"""Pyomo models of CL-TAP (paper 003): compact MILP (11)-(17), workplan formulation (18)-(24),
pricing problem (25)-(28) with the tightened budget row (26').

The compact model has a*t*K binaries x[i,j,k] and the epigraph variable eta (max-min). The
extended model has one lambda[i,h] per task and workplan of an explicit column list. The pricing
model is the multiple-choice knapsack of digest 2.4 (one iteration per annotator, sum k w <= b).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.util import quicksum

from ..problems.catalogue import Lazy, refutes
from ..problems.cltap import CltapInstance, CltapSolution, Workplan
from ..problems.cltap import evaluate as evaluate_plan
from ..problems.cltap import linear_correctness as workplan_cost
from ..status import Status
from .cltap_heads import decode_heads_values, emit_heads, encode_heads, heads_layout
from .formulation import ADDED_ROWS, UNCHANGED, Formulation, PassResult, Settings, solve_once
from .lazy import LazyModel


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
    m.eta = pyo.Var(domain=pyo.Reals)  # column 0, then lam in `pairs` order
    m.lam = pyo.Var(m.P, domain=pyo.NonNegativeReals if relax else pyo.Binary)
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
            if (j, k) not in using and (j, k - 1) not in using:
                return pyo.Constraint.Skip
            return usage(m, j, k) - usage(m, j, k - 1) <= 0

        m.prefix = pyo.Constraint(m.A, pyo.RangeSet(1, K - 1), rule=prefix)
    return m


def build_aggregated_master(inst: CltapInstance,
                            columns: Sequence[Workplan]) -> pyo.ConcreteModel:
    """The task-aggregated restricted master of (18)-(23) (digest 2.5), LP: nu[h] >= 0 the
    number of tasks (divided by t) given workplan h. max sum_h c'(W_h) nu_h s.t. `budget`:
    sum_h t |W_h| nu_h <= b; `pair[j,k]`: sum_{h uses (j,k)} t nu_h <= 1; `convex`:
    sum_h nu_h <= 1; `prefix[j,k]` (k >= 1): uses of (j,k) - uses of (j,k-1) <= 0. Column
    generation re-solves the same matrix as a live HiGHS model, adding columns warm
    (`solvers.cltap_colgen`); a test compares both entry for entry."""
    t, a, K = inst.t, inst.a, inst.K
    cost = [workplan_cost(inst, w) for w in columns]
    n = len(columns)
    m = pyo.ConcreteModel(name="cltap_aggregated_master")
    m.H = pyo.RangeSet(0, n - 1)
    m.nu = pyo.Var(m.H, domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=quicksum(cost[h] * m.nu[h] for h in range(n) if cost[h]),
                          sense=pyo.maximize)
    using: dict[tuple[int, int], list[int]] = {}
    for h, w in enumerate(columns):
        for j, k in w:
            using.setdefault((j, k), []).append(h)
    m.budget = pyo.Constraint(rule=lambda m: quicksum(
        float(t * len(columns[h])) * m.nu[h] for h in range(n) if columns[h]) <= int(inst.b)
        if any(columns) else pyo.Constraint.Skip)
    m.pair = pyo.Constraint([(j, k) for j in range(a) for k in range(K)],
                            rule=lambda m, j, k: quicksum(float(t) * m.nu[h]
                                                          for h in using[j, k]) <= 1
                            if (j, k) in using else pyo.Constraint.Skip)
    if n:
        m.convex = pyo.Constraint(expr=quicksum(m.nu[h] for h in range(n)) <= 1)

    def prefix(m: pyo.ConcreteModel, j: int, k: int) -> Any:
        if (j, k) not in using and (j, k - 1) not in using:
            return pyo.Constraint.Skip
        return (quicksum(m.nu[h] for h in using.get((j, k), []))
                - quicksum(m.nu[h] for h in using.get((j, k - 1), [])) <= 0)

    if K > 1:
        m.prefix = pyo.Constraint([(j, k) for j in range(a) for k in range(1, K)], rule=prefix)
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
    (tasks i, annotators j and iterations k are the instance's 0-based indices); a head-cover
    model (`build_heads`) by `decode_heads`."""
    if m.component("x") is None and m.component("g") is not None:  # a head-cover model
        return decode_heads(inst, m, res)
    z = np.full((inst.a, inst.K), -1, dtype=np.int64)
    for (i, j, k), v in res.values(m.x).items():
        if v > 0.5:
            z[j, k] = i
    return CltapSolution(z)


# what each component of the head-cover model is (Pyomo `doc=`; the problem's page tables it):
# the model `crowdopt.build_model(cltap_instance)` returns. Indices are 0-based: annotator j,
# iteration k (her k-th label), so a label is (j, k).
HEADS_DOC = {
    "H": "heads: the labels (j, k) that can head a task (the task's label of its lowest-numbered "
         "annotator)",
    "L": "links (j, k, j2, k2), j < j2: label (j2, k2) may join the task headed by (j, k)",
    "U": "every label (j, k): annotator j's k-th iteration",
    "g": "g[j, k] = 1: label (j, k) heads a task",
    "y": "y[j, k, j2, k2] = 1: label (j2, k2) joins the task headed by (j, k)",
    "u": "u[j, k] = 1: iteration k of annotator j is bought (inside her prefix)",
    "e": "e = 1: some task may have no head (then eta = 0)",
    "eta": "the least task's assurance c' (eq. 11), at most theta",
    "obj": "maximize eta: the least-assured task's c' (eq. 11)",
    "tasks": "sum g + t e >= t: every task has a head, or e = 1",
    "heads": "sum g <= t: at most t tasks (present where more than t labels could head)",
    "empty": "eta / theta + e <= 1: a task without a head has assurance 0",
    "cover": "eta <= c_h + theta (1 - g_h) for each head h, with c_h its task's weights "
             "truncated at theta (eq. 12), divided by theta",
    "one_per_annotator": "at most one label of each later annotator joins a head (eq. 14)",
    "label": "a label heads or joins at most one task, and only inside its annotator's "
             "prefix (eq. 15)",
    "prefix": "u[j, k] <= u[j, k-1]: an annotator's labels are bought in order (eq. 16)",
    "budget": "sum u <= b: the budget in labels (eq. 13)",
    "heads_first": "among an annotator's equal weights, the earlier label heads first (breaks "
                   "symmetry only)",
    "used_first": "among an annotator's equal weights, the earlier label is used first "
                  "(breaks symmetry only)",
}


def build_heads(inst: CltapInstance, theta: float | None = None, need: float = 0.0,
                lazy: bool = False) -> pyo.ConcreteModel:
    """Head-cover model [ours]: max eta = min_i c'(W_i) (11)-(17) without task symmetry.

    Tasks are identical (eq. 11 is symmetric in i), so a task is named by its *head*, its label
    of the lowest-numbered annotator; the compact model's t! task permutations disappear.
    g[j,k] = 1: label (j,k) heads a task; y[j,k,j',k'] = 1: label (j',k'), j' > j, joins the task
    headed by (j,k); u[j,k] = 1: iteration k of annotator j is inside her prefix; e = 1: some
    task may have no head. Rows: `tasks` sum g + t e >= t, `heads` sum g <= t (where more
    than t labels could head); `cover`
    eta <= c_h + theta (1 - g_h) with c_h the head's truncated weight sum_(labels)
    min(phi, theta) (12); `empty` eta <= theta (1 - e); at most one label of each later
    annotator per head (14); a label heads or joins at most one task and only inside the
    prefix (15); prefix rule u[j,k] <= u[j,k-1] (16); sum u <= b (13); the rows
    with eta are divided by theta (weights relative to the tested value). Runs of equal
    weights of one annotator are ordered (heads first, then joined labels: swapping equal labels
    changes nothing). Labels of the prefix in no task are added to any task their annotator has
    not labelled (n_j <= K <= t leaves one), which only raises c'.

    theta must be a valid upper bound (default: sum_j max_k phi_jk, one label per annotator):
    the optimum is then min(OPT, theta) = OPT. This max-min model at the tightest cheap bound
    is the `head-cover` formulation (what `build_model(inst, "head-cover")` returns). Its passes
    (`solvers.cltap_exact.search_passes`) search the bottleneck value on the loaded model by
    bounds alone: eta fixed at a tested value v asks "every task reaches v" (a feasibility
    problem), and heads that cannot reach v (their weight plus the best label of every later
    annotator) are fixed to 0. `need` > 0 leaves such heads out of the model instead.
    `lazy`: a `LazyModel` whose rows are filled on first need (what `build_model` returns: a
    user who only adds rows gets the rest emitted, `cltap_heads.emit_heads`), its binaries made
    on demand. The structure (which labels head, join, and which rows exist) is
    `cltap_heads.heads_layout`, shared with the emitter.
    """
    lay = heads_layout(inst, theta, need)
    heads, links, into, joins = lay.heads, lay.links, lay.into, lay.joins
    sc, tr, rest, t = lay.sc, lay.tr, lay.rest, int(inst.t)
    m = (LazyModel if lazy else pyo.ConcreteModel)(name="cltap_heads")
    m.theta = lay.theta  # the bound the weights are truncated at (eta <= theta)
    m.H = pyo.Set(initialize=heads, dimen=2, ordered=True, doc=HEADS_DOC["H"])
    m.L = pyo.Set(initialize=links, dimen=4, ordered=True, doc=HEADS_DOC["L"])
    m.U = pyo.Set(initialize=lay.labels, dimen=2, ordered=True, doc=HEADS_DOC["U"])
    m.g = pyo.Var(m.H, domain=pyo.Binary, dense=not lazy, doc=HEADS_DOC["g"])
    m.y = pyo.Var(m.L, domain=pyo.Binary, dense=not lazy, doc=HEADS_DOC["y"])
    m.u = pyo.Var(m.U, domain=pyo.Binary, dense=not lazy, doc=HEADS_DOC["u"])
    m.e = pyo.Var(domain=pyo.Binary, doc=HEADS_DOC["e"])
    # eta <= theta by `empty`; unboxed: the adapter scales it
    m.eta = pyo.Var(bounds=(0.0, None), doc=HEADS_DOC["eta"])
    m.obj = pyo.Objective(expr=m.eta, sense=pyo.maximize, doc=HEADS_DOC["obj"])
    # the rows, declared in their order and filled by `fill` (at once, or on first need)
    m.tasks = pyo.Constraint(doc=HEADS_DOC["tasks"])
    if len(heads) > t:  # else the row holds by itself
        m.heads = pyo.Constraint(doc=HEADS_DOC["heads"])
    m.empty = pyo.Constraint(doc=HEADS_DOC["empty"])
    m.cover = pyo.Constraint(heads, doc=HEADS_DOC["cover"])
    m.one_per_annotator = pyo.Constraint(list(lay.by_ann), doc=HEADS_DOC["one_per_annotator"])
    m.label = pyo.Constraint(lay.label_rows, doc=HEADS_DOC["label"])
    m.prefix = pyo.Constraint(lay.prefix_rows, doc=HEADS_DOC["prefix"])
    m.budget = pyo.Constraint(doc=HEADS_DOC["budget"])
    m.heads_first = pyo.Constraint(lay.heads_first_rows, doc=HEADS_DOC["heads_first"])
    m.used_first = pyo.Constraint(lay.used_first_rows, doc=HEADS_DOC["used_first"])

    def fill(m: pyo.ConcreteModel) -> None:
        g, y, u = m.g, m.y, m.u
        if lazy:  # every entry now, in index order (the compiled column order)
            for var in (g, y, u):
                for ix in var.index_set():
                    var[ix]

        def used(j: int, k: int) -> Any:
            return (g[j, k] if (j, k) in into else 0) + quicksum(
                y[lk] for lk in joins.get((j, k), []))

        m.tasks.set_value(quicksum(g[h] for h in heads) + t * m.e >= t)
        if len(heads) > t:
            m.heads.set_value(quicksum(g[h] for h in heads) <= t)
        # rows divided by theta: HiGHS's absolute feasibility tolerance becomes relative to theta
        m.empty.set_value(sc * m.eta + m.e <= 1.0)
        for j, k in heads:
            m.cover[j, k] = sc * m.eta + float(rest[j, k]) * g[j, k] - quicksum(
                sc * float(tr[lk[2], lk[3]]) * y[lk] for lk in into[j, k]) <= 1.0
        for (j, k, j2), lks in lay.by_ann.items():
            m.one_per_annotator[j, k, j2] = quicksum(y[lk] for lk in lks) <= g[j, k]
        for j, k in lay.label_rows:
            m.label[j, k] = used(j, k) <= u[j, k]
        for j, k in lay.prefix_rows:
            m.prefix[j, k] = u[j, k] <= u[j, k - 1]
        m.budget.set_value(quicksum(u[jk] for jk in lay.labels) <= int(inst.b))
        for j, k in lay.heads_first_rows:
            m.heads_first[j, k] = g[j, k] <= g[j, k - 1]
        for j, k in lay.used_first_rows:
            m.used_first[j, k] = used(j, k) <= used(j, k - 1)

    if lazy:  # an entry made on demand: a binary
        state = (None, None, False, pyo.Binary)  # raw bounds: those of the domain
        rows = ["tasks", "heads", "empty", "cover", "one_per_annotator", "label", "prefix",
                "budget", "heads_first", "used_first"]
        m.defer(fill, [r for r in rows if m.component(r) is not None],
                {m.g: state, m.y: state, m.u: state})
    else:
        fill(m)
    return m


def decode_heads(inst: CltapInstance, m: pyo.ConcreteModel, res: Any) -> CltapSolution:
    """Assignment of a solved head-cover model (`cltap_heads.decode_heads_values`)."""
    return decode_heads_values(inst, res.values(m.g).items(), res.values(m.y).items(),
                               res.values(m.u).items())


def heads_extras(inst: CltapInstance, m: pyo.ConcreteModel, column_of: dict) -> dict:
    """Columns of a loaded head-cover model for its passes: eta, e, g[h], y[link], u[j,k]
    (-1: not a column of the loaded model) and the model's truncation value theta."""
    def col(v: Any) -> int:
        return column_of.get(id(v), -1)

    return {"theta": float(m.theta), "eta": col(m.eta), "e": col(m.e),
            "g": {h: col(v) for h, v in m.g.items()}, "y": {lk: col(v) for lk, v in m.y.items()},
            "u": {jk: col(v) for jk, v in m.u.items()}}


def encode(inst: CltapInstance, m: pyo.ConcreteModel, sol: CltapSolution) -> list:
    """The answer's decision variables in a (possibly extended) compact or head-cover model
    (`solvers.verify` fixes them and completes eta): x[i, j, k] = 1 where task i has label
    (j, k); in a head-cover model g, y, u and e as `encode_heads` writes the assignment."""
    if m.component("x") is None and m.component("g") is not None:
        return encode_heads_vars(inst, m, sol)
    z = sol.task_of
    return [(v, 1.0 if z[j, k] == i else 0.0) for (i, j, k), v in m.x.items()]


def encode_heads_vars(inst: CltapInstance, m: pyo.ConcreteModel, sol: CltapSolution) -> list:
    """`encode_heads` of an assignment as (variable, value) pairs of a head-cover model's
    binaries g, y, u and e (a label the model has no variable for: KeyError)."""
    binaries = [m.e, *m.g.values(), *m.y.values(), *m.u.values()]
    pos = {id(v): k for k, v in enumerate(binaries)}
    cols = {"theta": float(m.theta), "eta": len(binaries), "e": 0,
            "g": {h: pos[id(v)] for h, v in m.g.items()},
            "y": {lk: pos[id(v)] for lk, v in m.y.items()},
            "u": {jk: pos[id(v)] for jk, v in m.u.items()}}
    x = encode_heads(inst, cols, sol, 0.0, len(binaries) + 1)
    if x is None:
        raise KeyError("a label of the assignment has no variable in the model")
    return list(zip(binaries, x[:len(binaries)].tolist(), strict=True))


_CBP = Lazy("crowdopt.solvers.cltap_cbp:cbp")


def compact_passes(ctx: Any) -> PassResult:
    """One solve; an "optimal" claim on the model as built is then checked against CBP's plan
    (Algorithm 1, milliseconds): a feasible plan above the claimed optimum refutes it. HiGHS
    1.16 has claimed such an optimum (one thread, presolve on, MIP feasibility tolerance 1e-9:
    0.162186 with bound 0.162186 where CBP's plan and the optimum are 0.243279). A refuted claim
    is solved again without presolve; if that is refuted too, the run reports the better plan as
    feasible, with no bound. On a user's changed model CBP's plan counts only where it is a
    point of that model (`ctx.point`, valued in the model's objective)."""
    out = solve_once(ctx)
    res = out.res
    if res.status is not Status.OPTIMAL or res.objective is None:
        return out
    plan = _CBP(ctx.inst)
    value = evaluate_plan(ctx.inst, plan).objective
    if ctx.point is not None:
        verdict = ctx.point(plan)
        if not verdict.point:
            return out
        value = value if ctx.point.same_objective else verdict.value
    if not refutes(res.sense, value, res.objective):
        return out
    refuted = {"claimed": res.objective, "bound": res.bound, "cbp": value,
               "presolve": ctx.model.options.presolve}
    ctx.details["refuted_claims"] = [refuted]
    warnings.warn(f"HiGHS claimed the optimum {res.objective:.9g} below CBP's plan "
                  f"{value:.9g}: the claim is refuted, solved again without presolve",
                  RuntimeWarning, stacklevel=2)
    ctx.model.options = ctx.options = ctx.model.options.replace(presolve=False)
    again = solve_once(ctx)
    res2 = again.res
    if res2.status is Status.OPTIMAL and not refutes(res2.sense, value, res2.objective):
        return again
    ctx.details["refuted_claims"].append({"claimed": res2.objective, "bound": res2.bound,
                                          "cbp": value, "presolve": False})
    if again.solution is not None and res2.objective is not None and (
            res2.objective > value if res2.sense == "max" else res2.objective < value):
        plan, value = again.solution, res2.objective
    unproven = dataclasses.replace(
        res2, status=Status.FEASIBLE, objective=value, bound=None, abs_gap=None, rel_gap=None,
        message="HiGHS's optimum was refuted by a better plan (with and without presolve)")
    return PassResult(unproven, plan, "none (the solver's claims were refuted)")


# the compact model is feasible by construction (x = 0, eta = 0): an "infeasible" report is a
# HiGHS defect, re-checked without presolve (digest 000 section 6.2 on the same HiGHS versions);
# an "optimal" claim is checked against CBP's plan (`compact_passes`)
FORMULATIONS = {"milp-compact": Formulation(
    "cltap", "milp-compact", build_compact, decode,
    lambda inst: Settings(known_feasible=True), passes=compact_passes, reads=("x",),
    encode=encode)}
# head-cover: the max-min model (feasible by construction: no head, e = t, eta = 0), HiGHS
# defaults (presolve on, gap 0); its passes (the search on eta, solvers/cltap_exact.py) fix eta
# and read "infeasible" at a tested value as the proof that OPT is below it, not as a defect.
HEAD_COVER_SETTINGS = Settings(known_feasible=True)
# Its model is truncated at the tightest cheap bound (covering, counting, pairing; milliseconds):
# the search tests values between the primal and that bound with a margin of 1e-8 relative to
# them, and the rows are divided by theta, so HiGHS's tolerance is relative to theta (at the
# loose default, sum_j max phi, a tested value 1000x below it met that tolerance exactly).
_CHEAP_BOUND = Lazy("crowdopt.solvers.cltap_exact:cheap_upper_bound")


def head_cover_theta(inst: CltapInstance) -> float | None:
    """The `head-cover` formulation's truncation value: the tightest cheap bound (None where it
    is 0: the builder's default)."""
    theta = float(_CHEAP_BOUND(inst)[0])
    return theta if theta > 0 else None


def build_head_cover(inst: CltapInstance, lazy: bool = False) -> pyo.ConcreteModel:
    """The `head-cover` formulation's model: `build_heads` at the tightest cheap bound."""
    return build_heads(inst, head_cover_theta(inst), lazy=lazy)


def emit_head_cover(inst: CltapInstance) -> Any:
    """`build_head_cover` as arrays (`cltap_heads.emit_heads`)."""
    return emit_heads(inst, head_cover_theta(inst))


# The search is exact on the model as built and on one a user only added rows (and variables)
# to: those shrink the feasible set and keep the objective (max eta), so the start's cheap
# bound and the model's theta still bound it; the rows are in the loaded model, hence in every
# tested step (a refuted theta refutes the restricted model); an incumbent counts only if it
# is a point of the loaded model; heads that cannot reach theta cannot in a restriction either.
# Any other change (objective, bounds: the search sets eta's and the heads' bounds itself) gets
# one plain solve.
HEAD_COVER_ROUTE = ("the bottleneck search: eta fixed at tested values, each a feasibility "
                    "solve of the loaded model")


def eta_closed_downward(model: pyo.ConcreteModel, rows: Sequence[Any]) -> str | None:
    """Why added `rows` break the search's reading of a step (None: they keep it). A step
    reads "no point has eta = theta" as "OPT < theta", which needs the model closed downward in
    eta: lowering eta keeps a point a point. The built model bounds eta only from above (the
    cover and empty rows, eta >= 0), so it holds there; an added row keeps it where eta's
    coefficient can only bound eta from above (positive with no lower side, negative with no
    upper side). A row eta >= 0.99 V w with w a new binary did not, and the search proved
    2.6043 where the model's optimum is 3.0715."""
    from pyomo.repn import generate_standard_repn

    eta = model.component("eta")
    if eta is None:
        return None
    for row in rows:
        repn = generate_standard_repn(row.body, compute_values=True, quadratic=False)
        coef = sum(float(c) for v, c in zip(repn.linear_vars, repn.linear_coefs, strict=True)
                   if v is eta)
        if not repn.is_linear() and any(v is eta for v in repn.nonlinear_vars):
            return f"the added row {row.name} holds eta in a nonlinear term"
        if (coef > 0 and row.has_lb()) or (coef < 0 and row.has_ub()):
            return (f"the added row {row.name} bounds eta from below: the search's steps "
                    "(eta fixed at a tested value, infeasible read as the optimum below it) "
                    "need a model closed downward in eta")
    return None
# head-cover first: the default exact method and model (benchmarks/bench_cltap.py --frontier)
FORMULATIONS = {"head-cover": Formulation(
    "cltap", "head-cover", build_head_cover, decode_heads, lambda inst: HEAD_COVER_SETTINGS,
    Lazy("crowdopt.solvers.cltap_exact:search_passes"), extras=heads_extras,
    route=HEAD_COVER_ROUTE, valid_for=(UNCHANGED, ADDED_ROWS), reads=("g", "y", "u", "e", "eta"),
    encode=encode, condition=lambda model, change: eta_closed_downward(model, change.added),
    emit=emit_head_cover, lazy=lambda inst: build_head_cover(inst, lazy=True)),
    **FORMULATIONS}
BUILDERS = {name: f.model for name, f in FORMULATIONS.items()}
