"""CL-TAP's LP masters and pricing MILP as formulations (paper 003, Sec. 5; digest 2.4-2.5).

- `COLGEN_MASTER`: the restricted master of (18)-(23), one lambda[i, h] per (task, workplan)
  pair (Pyomo model `models.cltap.build_extended`, relaxed), or its task-aggregated form
  (digest 2.5), one nu[h] per workplan (`models.cltap.build_aggregated_master`).
- `CONFIG_MASTER`: the configuration LP of `solvers.cltap_bounds.config_lp_bound` over label
  classes (segments) and covers; Pyomo model `build_config_master`.
- `FLOW_MASTER`: the same configuration LP with every cover at once, as a flow through the
  unit levels of the annotators in turn (`solvers.cltap_branch`); Pyomo model
  `build_flow_master`.
- `PRICING`: the pricing MILP (25)-(28) (`models.cltap.build_pricing`), the check of the DP.

Each master's Pyomo builder is the model a user reads and extends; its array emitter emits the
SAME matrix (columns and rows in the compiled Pyomo order, keyed alike; tests compare both entry
for entry). Column generation runs the emitter's matrix as a live HiGHS model and appends the
emitter's columns warm, round after round: the live model also keeps the rows no column uses
yet (`all_rows=True`), which Pyomo cannot hold and which constrain nothing. Settings: simplex
without presolve, so the basis survives `add_columns`; column generation prices from a primal
simplex (strategy 4). Pyomo is imported only by the builders: the array masters run without it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..problems.cltap import CltapInstance, Workplan
from ..problems.cltap import linear_correctness as workplan_cost
from .formulation import Emitted, Formulation, Settings

INF = math.inf

COLGEN_MASTER_SETTINGS = Settings(presolve=False, lp_solver="simplex", known_feasible=True,
                                  extra=(("simplex_strategy", 4),))
CONFIG_MASTER_SETTINGS = Settings(presolve=False, lp_solver="simplex", known_feasible=True)
# the flow LP is highly degenerate: the interior point method (with crossover, for the row
# duals the certificates read) solves it several times faster than a warm dual simplex
FLOW_MASTER_SETTINGS = Settings(presolve=True, lp_solver="ipm", known_feasible=True)


# ----------------------------------------------------------------------------- colgen masters
@dataclass(frozen=True)
class ColgenMaster:
    """A restricted master: the instance, its workplans (nonempty) and, for the faithful
    master, its (task, workplan index) variables in column order (None = aggregated)."""

    inst: CltapInstance
    columns: Sequence[Workplan]
    pairs: Sequence[tuple[int, int]] | None = None


class ColgenRows:
    """The row layout of a master, every row (also those no column uses yet).

    Faithful: [0, t) bottleneck (19); t budget (20); t+1+jK+k pair (21); then t convex (22);
    then prefix (23) for k >= 1. Aggregated: 0 budget; 1+jK+k pair; 1+aK convex; then prefix.
    """

    def __init__(self, inst: CltapInstance, aggregated: bool) -> None:
        t, a, K = inst.t, inst.a, inst.K
        self.inst, self.agg, self.K = inst, aggregated, K
        self.r_budget = 0 if aggregated else t
        self.r_pair = self.r_budget + 1
        self.r_convex = self.r_pair + a * K
        self.r_prefix = self.r_convex + (1 if aggregated else t)
        self.num_row = self.r_prefix + a * (K - 1)
        self.rhs = np.zeros(self.num_row)
        self.rhs[self.r_budget] = inst.b
        self.rhs[self.r_pair:self.r_prefix] = 1.0

    def keys(self) -> list:
        """(constraint name, index) of every row, as the Pyomo model names them."""
        inst = self.inst
        pairs = [(j, k) for j in range(inst.a) for k in range(inst.K)]
        prefix = [("prefix", (j, k)) for j in range(inst.a) for k in range(1, inst.K)]
        if self.agg:
            return ([("budget", None)] + [("pair", p) for p in pairs] + [("convex", None)]
                    + prefix)
        return ([("bottleneck", i) for i in range(inst.t)] + [("budget", None)]
                + [("pair", p) for p in pairs] + [("convex", i) for i in range(inst.t)]
                + prefix)

    def columns(self, items: Sequence[tuple[int | None, Workplan]]
                ) -> tuple[np.ndarray, sp.csc_array]:
        """Objective and matrix (all rows) of (task, workplan) variables (task None: the
        aggregated master's nu): budget, pair and prefix entries, then the task's bottleneck
        -c_h and convexity 1 (faithful), or the convexity 1 and objective c_h (aggregated)."""
        K, t = self.K, self.inst.t
        scale = float(t) if self.agg else 1.0
        cost = np.zeros(len(items))
        rr: list[int] = []
        vv: list[float] = []
        cc: list[int] = []
        for col, (i, w) in enumerate(items):
            c_h = workplan_cost(self.inst, w)
            rows = [self.r_budget] if w else []  # no zero entries: Pyomo writes none
            vals = [scale * len(w)] if w else []
            for j, k in w:
                rows.append(self.r_pair + j * K + k)
                vals.append(scale)
                if k >= 1:
                    rows.append(self.r_prefix + j * (K - 1) + k - 1)
                    vals.append(1.0)
                if k + 1 < K:
                    rows.append(self.r_prefix + j * (K - 1) + k)
                    vals.append(-1.0)
            if self.agg:
                rows.append(self.r_convex)
                vals.append(1.0)
                cost[col] = c_h
            else:
                rows += [i, self.r_convex + i] if c_h else [self.r_convex + i]
                vals += [-c_h, 1.0] if c_h else [1.0]
            rr += rows
            vv += vals
            cc += [col] * len(rows)
        return cost, sp.csc_array((vv, (rr, cc)), shape=(self.num_row, len(items)))

    def eta(self) -> tuple[np.ndarray, sp.csc_array]:
        """The faithful master's epigraph column eta (objective 1, +1 in every bottleneck row);
        none in the aggregated master."""
        if self.agg:
            return np.zeros(0), sp.csc_array((self.num_row, 0))
        t = self.inst.t
        return np.ones(1), sp.csc_array((np.ones(t), (np.arange(t), np.zeros(t, int))),
                                        shape=(self.num_row, 1))


def _items(d: ColgenMaster) -> list[tuple[int | None, Workplan]]:
    if d.pairs is None:
        return [(None, w) for w in d.columns]
    return [(i, d.columns[h]) for i, h in d.pairs]


def _var_keys(d: ColgenMaster) -> list:
    if d.pairs is None:
        return [("nu", h) for h in range(len(d.columns))]
    return [("eta", None)] + [("lam", (i, h)) for i, h in d.pairs]


def emit_colgen_master(d: ColgenMaster, all_rows: bool = False) -> Emitted:
    """The master's matrix from numpy: eta (faithful) then one column per variable in order,
    rows in the layout of `ColgenRows`; without `all_rows` the rows no entry uses are left out,
    as the Pyomo model leaves them out (then it is that model, entry for entry)."""
    lay = ColgenRows(d.inst, d.pairs is None)
    c0, A0 = lay.eta()
    c1, A1 = lay.columns(_items(d))
    A = sp.hstack([A0, A1], format="csc")
    c = np.concatenate([c0, c1])
    n = A.shape[1]
    keep = np.arange(lay.num_row) if all_rows else np.flatnonzero(np.diff(A.tocsr().indptr))
    A = sp.csc_array(A[keep])
    keys = _var_keys(d)
    col_lo = np.zeros(n)
    if d.pairs is not None:
        col_lo[0] = -INF
    return Emitted(c=c, A=A, row_lo=np.full(len(keep), -INF), row_hi=lay.rhs[keep],
                   col_lo=col_lo, col_hi=np.full(n, INF), integrality=np.zeros(n, np.int32),
                   sense="max", columns=lambda: keys,
                   rows=lambda: [lay.keys()[r] for r in keep],
                   decode=lambda x: {k: float(v) for k, v in zip(keys, x) if k[0] != "eta"})


def build_colgen_master(d: ColgenMaster) -> Any:
    """The Pyomo model of a master: `build_extended` (relaxed, the given pairs) or
    `build_aggregated_master`."""
    from .cltap import build_aggregated_master, build_extended

    if d.pairs is None:
        return build_aggregated_master(d.inst, d.columns)
    return build_extended(d.inst, d.columns, relax=True, pairs=d.pairs)


def decode_colgen_master(d: ColgenMaster, m: Any, res: Any) -> dict:
    """Each variable's value by key, ("lam", (i, h)) or ("nu", h), as `Emitted.decode`."""
    var = m.nu if d.pairs is None else m.lam
    return {(var.name, k): float(v) for k, v in res.values(var).items()}


COLGEN_MASTER = Formulation("cltap", "colgen-master", build_colgen_master,
                            decode_colgen_master, lambda d: COLGEN_MASTER_SETTINGS,
                            emit=emit_colgen_master)


# ----------------------------------------------------------------------------- configuration LP
@dataclass(frozen=True)
class ConfigMaster:
    """The configuration LP at one need level: label classes (segments) s with n[s] labels,
    `later`: the segments that continue an annotator's previous one, budget b, covers (tuples
    of segments) with their unit sums; a cover with fewer units than `level` is closed (x = 0)."""

    n: np.ndarray
    later: np.ndarray
    b: int
    configs: Sequence[tuple[int, ...]] = ()
    units: Sequence[int] = ()
    level: int = 0


@dataclass(frozen=True)
class ConfigRows:
    """Row layout: [0, S) cover rows (gamma), [S, 2S) capacity rows w_s <= n_s (mu),
    [2S, 2S + P) prefix rows (eps), then the budget row (beta)."""

    S: int
    P: int
    r_mu: int = field(init=False)
    r_pre: int = field(init=False)
    r_b: int = field(init=False)
    num_row: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "r_mu", self.S)
        object.__setattr__(self, "r_pre", 2 * self.S)
        object.__setattr__(self, "r_b", 2 * self.S + self.P)
        object.__setattr__(self, "num_row", 2 * self.S + self.P + 1)

    def covers(self, configs: Sequence[tuple[int, ...]]) -> sp.csc_array:
        """Columns of covers x_C: 1 in the cover row of each of their segments."""
        rr = np.concatenate([np.asarray(c, dtype=np.int64) for c in configs] or [[]])
        cc = np.repeat(np.arange(len(configs)), [len(c) for c in configs])
        return sp.csc_array((np.ones(len(rr)), (rr.astype(np.int64), cc)),
                            shape=(self.num_row, len(configs)))


def cover_bounds(units: Sequence[int], level: int) -> np.ndarray:
    """Upper bounds of cover columns: open (inf) with at least `level` units, else 0."""
    return np.where(np.asarray(units, dtype=np.int64) >= level, INF, 0.0)


def emit_config_master(d: ConfigMaster) -> Emitted:
    """`build_config_master` as arrays: columns w[0..S) then x[0..#covers)."""
    nseg = np.asarray(d.n, dtype=float)
    later = np.asarray(d.later, dtype=np.int64)
    S, P, nc = len(nseg), len(later), len(d.configs)
    lay = ConfigRows(S, P)
    rows = np.concatenate([np.arange(S), lay.r_mu + np.arange(S), np.full(S, lay.r_b),
                           lay.r_pre + np.arange(P), lay.r_pre + np.arange(P)])
    cols = np.concatenate([np.arange(S), np.arange(S), np.arange(S), later, later - 1])
    vals = np.concatenate([-np.ones(S), np.ones(S), np.ones(S), 1.0 / nseg[later],
                           -1.0 / nseg[later - 1]])
    W = sp.csc_array((vals, (rows, cols)), shape=(lay.num_row, S))
    A = sp.hstack([W, lay.covers(d.configs)], format="csc")
    row_hi = np.zeros(lay.num_row)
    row_hi[lay.r_mu:lay.r_pre] = nseg
    row_hi[lay.r_b] = d.b
    keys = [("w", s) for s in range(S)] + [("x", c) for c in range(nc)]
    return Emitted(
        c=np.concatenate([np.zeros(S), np.ones(nc)]), A=A, row_lo=np.full(lay.num_row, -INF),
        row_hi=row_hi, col_lo=np.zeros(S + nc),
        col_hi=np.concatenate([np.full(S, INF), cover_bounds(d.units, d.level)]),
        integrality=np.zeros(S + nc, np.int32), sense="max", columns=lambda: keys,
        rows=lambda: ([("cover", s) for s in range(S)] + [("cap", s) for s in range(S)]
                      + [("prefix", p) for p in range(P)] + [("budget", None)]),
        decode=lambda x: {k: float(v) for k, v in zip(keys, x)})


def build_config_master(d: ConfigMaster) -> Any:
    """max sum_C x_C s.t. `cover[s]`: sum_{C contains s} x_C - w_s <= 0; `cap[s]`: w_s <= n_s;
    `prefix[p]`: w_s / n_s - w_{s-1} / n_{s-1} <= 0 for s = later[p] (rule (16)); `budget`:
    sum_s w_s <= b (13); w >= 0, 0 <= x_C <= (inf if C has >= level units else 0)."""
    import pyomo.environ as pyo
    from pyomo.core.util import quicksum

    nseg = [float(v) for v in d.n]
    later = [int(s) for s in d.later]
    ub = cover_bounds(d.units, d.level)
    S, nc = len(nseg), len(d.configs)
    m = pyo.ConcreteModel(name="cltap_config_master")
    m.S = pyo.RangeSet(0, S - 1)
    m.C = pyo.RangeSet(0, nc - 1)
    m.w = pyo.Var(m.S, domain=pyo.NonNegativeReals)
    m.x = pyo.Var(m.C, bounds=lambda m, c: (0.0, None if ub[c] == INF else float(ub[c])))
    m.obj = pyo.Objective(expr=quicksum(m.x[c] for c in m.C), sense=pyo.maximize)
    containing: dict[int, list[int]] = {s: [] for s in range(S)}
    for c, cfg in enumerate(d.configs):
        for s in cfg:
            containing[int(s)].append(c)
    m.cover = pyo.Constraint(m.S, rule=lambda m, s: quicksum(
        m.x[c] for c in containing[s]) - m.w[s] <= 0)
    m.cap = pyo.Constraint(m.S, rule=lambda m, s: m.w[s] <= nseg[s])
    m.prefix = pyo.Constraint(range(len(later)), rule=lambda m, p: (
        (1.0 / nseg[later[p]]) * m.w[later[p]]
        - (1.0 / nseg[later[p] - 1]) * m.w[later[p] - 1] <= 0))
    m.budget = pyo.Constraint(expr=quicksum(m.w[s] for s in m.S) <= int(d.b))
    return m


def decode_config_master(d: ConfigMaster, m: Any, res: Any) -> dict:
    """Each variable's value by key, ("w", s) or ("x", c), as `Emitted.decode`."""
    return {(var.name, k): float(v) for var in (m.w, m.x) for k, v in res.values(var).items()}


CONFIG_MASTER = Formulation("cltap", "config-master", build_config_master,
                            decode_config_master, lambda d: CONFIG_MASTER_SETTINGS,
                            emit=emit_config_master)


# ----------------------------------------------------------------------------- flow LP
@dataclass(frozen=True)
class FlowMaster:
    """The configuration LP at need level N as an arc flow (`build_flow_master`).

    Layers: one annotator each, or a pool of annotators (`pooled`: a task may take any number
    of the pool's labels, a relaxation); classes: (layer, units) with units in 1..N (units at N
    or more are N); segments: runs of labels of one annotator in one class, n[s] labels each,
    `seg_class` their class; `later`: the segments that continue their annotator's previous one
    (prefix rule (16)); budget b (13); `w_lo`/`w_hi`: bounds on the labels of each segment in
    the prefixes (a box of prefix lengths; default 0 and n)."""

    pooled: tuple[bool, ...]
    cls_layer: np.ndarray
    cls_units: np.ndarray
    n: np.ndarray
    seg_class: np.ndarray
    later: np.ndarray
    b: int
    N: int
    w_lo: np.ndarray | None = None
    w_hi: np.ndarray | None = None


@dataclass(frozen=True)
class FlowArcs:
    """The flow network of a `FlowMaster`: node (l, c) = level c (units so far, N = enough)
    after the first l layers, index l (N + 1) + c; arcs frm -> to carrying class `cls` (-1: the
    layer adds nothing); exchange pairs (lower, higher) of consecutive classes of a layer."""

    frm: np.ndarray
    to: np.ndarray
    cls: np.ndarray
    ex_lo: np.ndarray
    ex_hi: np.ndarray
    num_nodes: int
    source: int
    sink: int


def flow_arcs(d: FlowMaster) -> FlowArcs:
    """Arcs layer by layer: a skip arc from every node of the layer's start, then for each class
    of the layer (units v, ascending) an arc from each level c < N to min(c + v, N) (inside the
    layer's end for a pool, so that it may add several labels). An arc that overshoots N while
    a smaller class of the layer also reaches N from c is left out: the exchange columns (a
    label of a higher class used as one of a lower class) carry its flow at the same cost."""
    N, nl = int(d.N), len(d.pooled)
    L = N + 1
    c = np.arange(L)
    frm: list[np.ndarray] = []
    to: list[np.ndarray] = []
    cls: list[np.ndarray] = []
    ex_lo: list[int] = []
    ex_hi: list[int] = []
    units = np.asarray(d.cls_units, dtype=np.int64)
    layer = np.asarray(d.cls_layer, dtype=np.int64)
    for lay in range(nl):
        frm.append(lay * L + c)
        to.append((lay + 1) * L + c)
        cls.append(np.full(L, -1, dtype=np.int64))
        mine = np.flatnonzero(layer == lay)
        mine = mine[np.argsort(units[mine], kind="stable")]
        ex_lo += [int(x) for x in mine[:-1]]
        ex_hi += [int(x) for x in mine[1:]]
        base = (lay + 1) if d.pooled[lay] else lay
        smallest = int(units[mine[0]]) if len(mine) else N
        for k in mine:
            v = int(units[k])
            lv = c[:N]
            lv = lv[(lv + v < N) | (lv + smallest < N) | (v == smallest)]
            frm.append(base * L + lv)
            to.append((lay + 1) * L + np.minimum(lv + v, N))
            cls.append(np.full(len(lv), k, dtype=np.int64))
    return FlowArcs(np.concatenate(frm), np.concatenate(to), np.concatenate(cls),
                    np.array(ex_lo, dtype=np.int64), np.array(ex_hi, dtype=np.int64),
                    (nl + 1) * L, 0, nl * L + N)


def _flow_bounds(d: FlowMaster) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(d.n, dtype=float)
    lo = np.zeros(len(n)) if d.w_lo is None else np.asarray(d.w_lo, dtype=float)
    hi = n if d.w_hi is None else np.asarray(d.w_hi, dtype=float)
    return lo, hi


def emit_flow_master(d: FlowMaster) -> Emitted:
    """`build_flow_master` as arrays: columns f (arcs), e (exchanges), w (segments), X."""
    g = flow_arcs(d)
    nA, nE, S, C = len(g.frm), len(g.ex_lo), len(d.n), len(d.cls_units)
    nseg = np.asarray(d.n, dtype=float)
    later = np.asarray(d.later, dtype=np.int64)
    P = len(later)
    seg_class = np.asarray(d.seg_class, dtype=np.int64)
    has = seg_class >= 0
    cw, cx = nA + nE, nA + nE + S  # first w column, the X column
    r_cls, r_pre = g.num_nodes, g.num_nodes + C
    r_b = r_pre + P
    lab = g.cls >= 0
    rows = np.concatenate([g.to, g.frm, [g.source, g.sink], r_cls + g.cls[lab],
                           r_cls + g.ex_lo, r_cls + g.ex_hi, r_cls + seg_class[has],
                           r_pre + np.arange(P), r_pre + np.arange(P), np.full(S, r_b)])
    cols = np.concatenate([np.arange(nA), np.arange(nA), [cx, cx], np.flatnonzero(lab),
                           nA + np.arange(nE), nA + np.arange(nE), cw + np.flatnonzero(has),
                           cw + later, cw + later - 1, cw + np.arange(S)])
    vals = np.concatenate([np.ones(nA), -np.ones(nA), [1.0, -1.0], np.ones(int(lab.sum())),
                           -np.ones(nE), np.ones(nE), -np.ones(int(has.sum())),
                           1.0 / nseg[later], -1.0 / nseg[later - 1], np.ones(S)])
    num_row = r_b + 1
    A = sp.csc_array((vals, (rows, cols)), shape=(num_row, cx + 1))
    w_lo, w_hi = _flow_bounds(d)
    c = np.zeros(cx + 1)
    c[cx] = 1.0
    keys = ([("f", k) for k in range(nA)] + [("e", k) for k in range(nE)]
            + [("w", s) for s in range(S)] + [("X", None)])
    return Emitted(
        c=c, A=A, row_lo=np.concatenate([np.zeros(g.num_nodes), np.full(C + P + 1, -INF)]),
        row_hi=np.concatenate([np.zeros(g.num_nodes + C + P), [float(d.b)]]),
        col_lo=np.concatenate([np.zeros(nA + nE), w_lo, [0.0]]),
        col_hi=np.concatenate([np.full(nA + nE, INF), w_hi, [INF]]),
        integrality=np.zeros(cx + 1, np.int32), sense="max", columns=lambda: keys,
        rows=lambda: ([("node", r) for r in range(g.num_nodes)]
                      + [("cap", k) for k in range(C)] + [("prefix", p) for p in range(P)]
                      + [("budget", None)]),
        decode=lambda x: {k: float(v) for k, v in zip(keys, x)},
        extras={"arcs": g, "w0": cw, "r_cls": r_cls})


def build_flow_master(d: FlowMaster) -> Any:
    """max X (tasks covered) s.t. `node[(l, c)]`: inflow - outflow = 0 (+X at the source (0, 0),
    -X at the sink (last layer, N)); `cap[k]`: the flow of class k's arcs, plus the labels
    lent to the next lower class, minus those borrowed from the next higher one, at most the
    class's labels in the prefixes, sum of w_s over its segments; `prefix[p]`: w_s / n_s -
    w_{s-1} / n_{s-1} <= 0 for s = later[p] (16); `budget`: sum_s w_s <= b (13); f, e >= 0,
    w_lo <= w <= w_hi. A path from source to sink is a cover: at most one label per annotator
    (layer; any number from a pool) whose units reach N."""
    import pyomo.environ as pyo
    from pyomo.core.util import quicksum

    g = flow_arcs(d)
    nA, nE, S, C = len(g.frm), len(g.ex_lo), len(d.n), len(d.cls_units)
    nseg = [float(v) for v in d.n]
    later = [int(s) for s in d.later]
    w_lo, w_hi = _flow_bounds(d)
    m = pyo.ConcreteModel(name="cltap_flow_master")
    m.f = pyo.Var(range(nA), domain=pyo.NonNegativeReals)
    m.e = pyo.Var(range(nE), domain=pyo.NonNegativeReals)
    m.w = pyo.Var(range(S), bounds=lambda m, s: (float(w_lo[s]), float(w_hi[s])))
    m.X = pyo.Var(domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=m.X, sense=pyo.maximize)
    into: dict[int, list[int]] = {}
    out: dict[int, list[int]] = {}
    by_cls: dict[int, list[int]] = {k: [] for k in range(C)}
    for a in range(nA):
        into.setdefault(int(g.to[a]), []).append(a)
        out.setdefault(int(g.frm[a]), []).append(a)
        if g.cls[a] >= 0:
            by_cls[int(g.cls[a])].append(a)
    lend: dict[int, list[int]] = {k: [] for k in range(C)}
    borrow: dict[int, list[int]] = {k: [] for k in range(C)}
    for e in range(nE):
        lend[int(g.ex_hi[e])].append(e)
        borrow[int(g.ex_lo[e])].append(e)
    segs: dict[int, list[int]] = {k: [] for k in range(C)}
    for s, k in enumerate(d.seg_class):
        if k >= 0:
            segs[int(k)].append(s)

    def node(m, r):
        x = (m.X if r == g.source else 0) - (m.X if r == g.sink else 0)
        return (quicksum(m.f[a] for a in into.get(r, [])) - quicksum(
            m.f[a] for a in out.get(r, [])) + x == 0)

    m.node = pyo.Constraint(range(g.num_nodes), rule=node)
    m.cap = pyo.Constraint(range(C), rule=lambda m, k: (
        quicksum(m.f[a] for a in by_cls[k]) + quicksum(m.e[e] for e in lend[k])
        - quicksum(m.e[e] for e in borrow[k]) - quicksum(m.w[s] for s in segs[k]) <= 0))
    m.prefix = pyo.Constraint(range(len(later)), rule=lambda m, p: (
        (1.0 / nseg[later[p]]) * m.w[later[p]]
        - (1.0 / nseg[later[p] - 1]) * m.w[later[p] - 1] <= 0))
    m.budget = pyo.Constraint(expr=quicksum(m.w[s] for s in range(S)) <= int(d.b))
    return m


def decode_flow_master(d: FlowMaster, m: Any, res: Any) -> dict:
    """Each variable's value by key, ("f", a), ("e", k), ("w", s) or ("X", None)."""
    out = {(var.name, k): float(v) for var in (m.f, m.e, m.w) for k, v in res.values(var).items()}
    out[("X", None)] = float(res.value(m.X))
    return out


FLOW_MASTER = Formulation("cltap", "flow-master", build_flow_master, decode_flow_master,
                          lambda d: FLOW_MASTER_SETTINGS, emit=emit_flow_master)


# ----------------------------------------------------------------------------- pricing
@dataclass(frozen=True)
class Pricing:
    """Pricing (25)-(28): rewards r_jk, budget b, tight = (26') sum (k+1) w <= b."""

    reward: np.ndarray
    b: int
    tight: bool = True


def build_pricing_model(d: Pricing) -> Any:
    """`models.cltap.build_pricing` of the data."""
    from .cltap import build_pricing

    return build_pricing(d.reward, d.b, tight=d.tight)


def decode_pricing(d: Pricing, m: Any, res: Any) -> Workplan:
    """The chosen (annotator, iteration) pairs, sorted."""
    return tuple(sorted(jk for jk, v in res.values(m.w).items() if v > 0.5))


# w = 0 is feasible: an "infeasible" report is a HiGHS defect (re-checked)
PRICING = Formulation("cltap", "pricing-milp", build_pricing_model, decode_pricing,
                      lambda d: Settings(known_feasible=True))
