"""CL-TAP (paper 003): the configuration LP with branching on prefix lengths [ours].

Why this relaxation. Every bound of `cltap_bounds` is a relaxation of one of two kinds: it
averages labels over the tasks (covering, first labels) or it prices them (the configuration
LP: a task needs a *cover*, at most one label per annotator (14) whose weights reach the tested
value theta). Pricing is the stronger kind: by LP duality the configuration LP is the best bound
any price certificate (a price per label, below) can give, and the covering bound is the special
price min(phi, theta) / theta. What the configuration LP still misses is that prefixes are
integers: it may use half of an annotator's prefix (half of each of her labels, her strong late
ones included, at half their budget) beside half of another's, a mixture of worlds no plan
realises. With rising curves that mixture is where its value comes from (inc t = 100, a = 10,
seed 0: the LP reaches 2.0 where the best plan is 1.83). So the bound here is the configuration
LP inside a branch and bound on the prefix lengths of the annotators: a node is a box
lo_j <= n_j <= hi_j, its relaxation the configuration LP restricted to it. With every annotator's
length branched to an integer it is the relaxation "integer prefixes, fractional covers" (within
0.1-1 % of the optimum at t = 30-100 where the optimum is known; `bench_cltap.py --ceiling`).

The LP: `models.cltap_masters.FLOW_MASTER`, every cover at once as a flow through unit levels
(weights in units delta = theta / grid, rounded to the nearest unit, small ones up; the grid as
fine as the LP's size allows, `grid_for`; annotators one by one, or pooled: any number of the
pool's labels per task), so no column generation.

Why a refutation is a proof (the LP only finds prices; nothing HiGHS reports is trusted):
1. Prices gamma_jk >= 0 per label (the LP's duals of its class rows). For a box B of prefix
   lengths, supply(B) = an upper bound on sum_j sum_{k < n_j} gamma_jk over n in B within the
   budget (13): the integer knapsack over the prefix lengths, solved exactly by the
   multiple-choice knapsack DP (`cltap_colgen.mckp_dp`) where it is small enough, else its LP
   (`cltap_bounds._lagrangian_lp`, weak duality: any multiplier of the budget row gives an
   upper bound). The integer maximum is what a plan can pay; the LP may also buy half of a
   whole row for half its budget.
2. Let c = supply(B) (1 + REL) / t. Every plan with prefixes in B and value v puts on each
   task i a label set T_i (at most one label per annotator, (14)) with weight >= v; the T_i are
   disjoint (15) and inside the prefixes, so sum_i gamma(T_i) <= supply(B) <= t c: some task has
   gamma(T_i) <= c. Hence v <= W(c) = the largest weight of a set of labels, at most one per
   annotator and inside the box's longest prefixes (k < hi_j), whose price is at most c
   (`cover_weight`: a knapsack DP over price units with the weights as they are; prices
   rounded down, so it only over-counts the sets).
3. OPT over B is at most W(c); the bound is the largest W over the leaves of a tree of boxes
   that together hold all prefix vectors (the children of a box are lo_j..m and m..hi_j of
   one annotator j: every integer n_j of the box is in one of them). Rounding,
   pooling and the LP's own tolerances only change which prices are found, never this argument.
The run keeps the leaves of that tree, each with the least W found for it or for a box around
it (any of them bounds its plans), so its bound is their largest W at every moment. A tested
theta is refuted when every leaf's W is below it (a box whose shortest prefixes exceed the budget
holds no plan); the next level starts from these leaves, not from the root, and works only on
those whose W is not below it, the heaviest first. A leaf that no LP refutes at theta is tried at
levels raised half way to its W (`_raise`); one that still stands ends the level. Levels go down
from the tightest cheap bound towards the best plan in steps while they fall, then by bisection;
once the bound fell, a level may take a quarter of the node LPs left (LEVEL_SHARE) and one cut
there counts as standing; once the bound is below a level so cut, the search goes down again, by
half the share of its last descent that stood. A run stopped by its node budget or its
clock returns the leaves' largest W, so every stop is valid (the levels only choose where the
work goes). Leaves that the LP cannot refute are worlds (integer prefix lengths) worth a
plan: the labels of those prefixes placed heaviest first on the neediest task
(`cltap_construct.lpt_place`), then the local search.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..problems.cltap import CltapInstance, CltapSolution, evaluate
from .cltap_bounds import REL, BoundResult, _lagrangian_lp, mckp_lp, zero_optimum
from .cltap_colgen import mckp_dp

GRIDS = (200, 150, 100, 75, 50)  # units per tested value (delta = theta / grid), finest first
COARSE_GRIDS = (30, 50)  # tried first, each box escalating to the next on failure (`grid_ladder`)
ARC_BUDGET = 40_000  # the base grid is the finest whose flow LP has about this many arcs
SMALL_UNITS = 1.0  # labels under this many units are rounded up, heavier ones to the nearest
COST_UNITS = 1000  # price units of the certificate's knapsack (price c = COST_UNITS units)
FINE_COST_UNITS = 16_000  # its units when the heaviest set at COST_UNITS is only a rounding's
MAX_LAYERS = 12  # annotators modelled one by one; the others share a pool
# (grid multiple, level offset) of a node's further LPs: when the base LP's prices miss a real
# cover (lower levels: near covers count), and when it does not refute and cannot split
PRICE_TRIES = ((1, -1),)
LEAF_TRIES = ((2, 0), (2, -1), (4, 0))
RAISES = 3  # a leaf no LP refutes is tried at levels raised half way to the bound this often
REPAIRS = 2  # real covers then added to the last LP as columns
LEVELS_KEPT = 3  # tested values whose LPs a run keeps live
LEVEL_SHARE = 4  # once the bound fell, a level may take 1 / LEVEL_SHARE of the node LPs left,
LEVEL_MIN = 20  # at least LEVEL_MIN: one leaf's deep tree then cannot hold the bound for good
# (`bench_cltap.py --large-ceiling --nodes 1600,1600`, inc, seed 0: t = 200, a = 20 ends at 3.2499
# and t = 1000, a = 100 at 4.4985; at commit a82184a, without the share, 3.2836 and 4.5944)
RECENT = 3  # refuting prices of the LPs kept to try on the next boxes (and the covering price)
DEFAULT_NODES = 400  # node LPs of one run (the deterministic budget; `max_rounds`)
GAP = 1e-7  # a bound within this (relative) of the best plan proves it
SEPARATION = 1e-5  # levels closer than this (relative) are not told apart
FIRST_STEP = 0.25  # the first level tested: this share of the way from the bound to the plan
STEP_GROWTH = 1.0  # the share grows by this factor after each refuted level (at most 0.5): 1, a
# constant quarter (inc t = 100, a = 10, seed 0, 150 node LPs: bound 1.934 where doubling the share
# gave 1.952: its second level, half way to the plan, used the level budget and fell short)
# a box's supply is the integer knapsack over prefix lengths (exact DP) up to this many
# (annotator, length, budget) cells, else its LP: with rising curves the LP buys half of a whole
# row (its strong late labels) for half its budget, which no integer prefix does (inc t = 100,
# a = 10, seed 0, 150 node LPs: bound 1.9176 against 1.9363 with the LP)
SUPPLY_DP_CELLS = 2_000_000


# ----------------------------------------------------------------------------- certificates
def supply(gamma: np.ndarray, lo: np.ndarray, hi: np.ndarray, b: int) -> float:
    """An upper bound on sum_j sum_{k < n_j} gamma[j, k] over integer prefix lengths with
    lo <= n <= hi and sum n <= b (-inf: no such lengths): the prefix sums from lo_j shifted to
    0, the budget left b - sum lo, and the knapsack over them: its integer maximum by the
    multiple-choice knapsack DP when it has at most SUPPLY_DP_CELLS cells, else its LP (the
    Lagrangian dual, whose every multiplier bounds the LP, hence the integer maximum, from
    above)."""
    a, K = gamma.shape
    left = int(b) - int(lo.sum())
    if left < 0 or np.any(lo > hi):
        return -math.inf
    G = np.concatenate([np.zeros((a, 1)), np.cumsum(gamma, axis=1)], axis=1)
    rows = np.arange(a)
    base = float(G[rows, lo].sum())
    width = int((hi - lo).max(initial=0))
    if width == 0 or left == 0:
        return base
    idx = np.minimum(lo[:, None] + np.arange(width + 1)[None, :], hi[:, None])
    C = G[rows[:, None], idx] - G[rows, lo][:, None]  # flat past hi_j: no gain
    if a * width * left <= SUPPLY_DP_CELLS:
        return base + mckp_dp(C[:, 1:], left)[0]
    return base + float(_lagrangian_lp(C, left)[0])


def cover_weight(phi: np.ndarray, gamma: np.ndarray, price: float, hi: np.ndarray | None = None,
                 units: int = COST_UNITS) -> tuple[float, list[tuple[int, int]]]:
    """The largest weight of a set of labels, at most one per annotator and among her first
    hi_j (all by default), whose total price gamma is at most `price` >= 0, and one such set (a
    relaxation: prices rounded down to price / units, so every such set is counted: the sum of
    its rounded prices is within `units`)."""
    inside = np.ones(phi.shape, dtype=bool) if hi is None else (
        np.arange(phi.shape[1])[None, :] < hi[:, None])  # past hi_j: in no plan of the box
    if not price > 0:  # only labels of price 0: the heaviest of each annotator
        free = np.where(inside & (gamma <= 0), phi, -np.inf)
        k = free.argmax(axis=1)
        rows = np.flatnonzero(free[np.arange(phi.shape[0]), k] > -np.inf)
        return float(phi[rows, k[rows]].sum()), [(int(j), int(k[j])) for j in rows]
    eps = price / units
    kap = np.floor(gamma / eps * (1.0 - 1e-12)).astype(np.int64)  # kap eps <= gamma
    kap = np.where(inside, kap, units + 1)
    W = np.zeros(units + 1)  # W[x]: the heaviest set with rounded price <= x units
    xs = np.arange(units + 1)
    picks: list[tuple[int, np.ndarray, np.ndarray]] = []
    for j in range(phi.shape[0]):
        ok = kap[j] <= units
        if not ok.any():
            continue
        best = np.full(units + 1, -np.inf)
        np.maximum.at(best, kap[j][ok], phi[j][ok])
        best = np.maximum.accumulate(best)  # the heaviest label of j within x units
        steps = np.flatnonzero(best > np.concatenate([[-np.inf], best[:-1]]))
        if not len(steps):
            continue
        src = xs[None, :] - steps[:, None]
        cand = np.where(src >= 0, W[np.maximum(src, 0)] + best[steps][:, None], -np.inf)
        arg = cand.argmax(axis=0)
        top = cand[arg, xs]
        take = top > W
        picks.append((j, np.where(take, steps[arg], -1), best))
        W = np.where(take, top, W)
    chosen: list[tuple[int, int]] = []
    x = units
    for j, step, best in reversed(picks):
        if step[x] < 0:
            continue
        cost = int(step[x])
        want = best[cost]
        k = int(np.flatnonzero((kap[j] <= cost) & (phi[j] == want))[0])
        chosen.append((j, k))
        x -= cost
    return float(W[units]), chosen[::-1]


def heaviest_single(phi: np.ndarray, gamma: np.ndarray, price: float, hi: np.ndarray,
                    units: int = COST_UNITS) -> tuple[float, list[tuple[int, int]]]:
    """The heaviest single label inside the box's longest prefixes whose price, rounded down as
    in `cover_weight`, is within `price`, and that label: a set `cover_weight` counts, so its W
    is at least this (-inf, []: none)."""
    inside = np.arange(phi.shape[1])[None, :] < hi[:, None]
    if price > 0:
        ok = np.floor(gamma / (price / units) * (1.0 - 1e-12)) <= units
    else:
        ok = gamma <= 0
    masked = np.where(inside & ok, phi, -math.inf)
    j, k = np.unravel_index(int(np.argmax(masked)), phi.shape)
    if masked[j, k] == -math.inf:
        return -math.inf, []
    return float(phi[j, k]), [(int(j), int(k))]


def price_bound(phi: np.ndarray, gamma: np.ndarray, t: int, lo: np.ndarray, hi: np.ndarray,
                b: int, refute_below: float | None = None) -> tuple[float, list[tuple[int, int]]]:
    """(OPT over the plans with prefix lengths in [lo, hi] is at most this, the heaviest set
    below the price: module docstring, steps 1-2); -inf when no prefix lengths of the box fit
    the budget. Negative prices count as 0 in both steps: step 2 needs the supply of the very
    prices the cheap set is priced at. With `refute_below`, a caller that only asks whether
    the bound falls below it gets (inf, that label) without the knapsack DP when one label within
    the price already weighs that much (W can only be heavier): the covering price min(phi,
    theta) / theta of a box that holds a label >= theta, tried on every box, is such a case.
    It also gets the DP again with finer price units when its heaviest set is only counted
    through the rounding of its prices."""
    gamma = np.maximum(gamma, 0.0)
    s = supply(gamma, lo, hi, b)
    if s == -math.inf:
        return -math.inf, []
    price = s * (1.0 + REL) / t
    if refute_below is not None:
        single, label = heaviest_single(phi, gamma, price, hi)
        if single >= refute_below:
            return math.inf, label
    w, chosen = cover_weight(phi, gamma, price, hi)
    if (refute_below is not None and w >= refute_below
            and sum(gamma[j, k] for j, k in chosen) > price):
        # the heaviest set is counted only through the rounding of its prices (a set of m
        # labels may be priced up to m price / units low): the LP's refutations often sit
        # within that of the price
        w, chosen = cover_weight(phi, gamma, price, hi, FINE_COST_UNITS)
    return (w * (1.0 + 1e-12) if w > 0 else w), chosen


def covering_price_bound(phi: np.ndarray, theta0: float, t: int, lo: np.ndarray, hi: np.ndarray,
                         b: int, refute_below: float) -> float:
    """`price_bound` (asked whether it falls below `refute_below`) of the covering price
    min(phi, theta0) / theta0, without the knapsack DP when its price c is below 1: a label
    >= theta0 costs exactly 1, so none is in a set of price <= c, and every other label weighs
    theta0 times its price, so W(c) <= theta0 c. (On rising curves with a box that cuts the
    strong late labels, the DP over these distinct prices took most of the certificates' time.)"""
    gamma = np.minimum(phi, theta0) / theta0
    s = supply(gamma, lo, hi, b)
    if s == -math.inf:
        return -math.inf
    c = s * (1.0 + REL) / t
    if c < 1.0:
        return max(theta0 * c * (1.0 + 1e-12), 0.0)
    return price_bound(phi, gamma, t, lo, hi, b, refute_below=refute_below)[0]


# ----------------------------------------------------------------------------- the node LP
def grid_for(inst: CltapInstance, layers: list[list[int]], theta: float) -> int:
    """The finest grid of GRIDS whose flow LP at theta has at most ARC_BUDGET arcs, counted as
    sum over layers of (N + 1) x its classes (distinct units): weights are rounded by up to half
    a unit, so a fine grid finds better prices (at t = 50, a = 3 the grid 200 proves optima the
    grid 50 leaves 0.5 % open), a coarse one keeps large LPs fast."""
    for g in GRIDS:
        u = unit_weights(inst.phi, theta / g, g)
        arcs = sum((g + 1) * len(np.unique(u[m][u[m] > 0])) for m in layers)
        if arcs <= ARC_BUDGET:
            return g
    return GRIDS[-1]


def unit_weights(phi: np.ndarray, delta: float, N: int) -> np.ndarray:
    """Units of every label: 0 for phi = 0, rounded up under SMALL_UNITS units, else to the
    nearest unit, at least 1, capped at N."""
    x = phi / delta
    u = np.where(x < SMALL_UNITS, np.floor(x) + 1, np.floor(x + 0.5))
    u = np.where(phi > 0, np.maximum(u, 1), 0)
    return np.minimum(u, N).astype(np.int64)


def flow_data(inst: CltapInstance, theta: float, grid: int, offset: int,
              layers: list[list[int]]) -> tuple[Any, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The `FlowMaster` of the tested value theta (delta = theta / grid, need level
    grid + offset; `layers`: the annotators of each layer) and its segments (annotator, first
    iteration, length): runs of equal units of one annotator, in order."""
    from ..models.cltap_masters import FlowMaster

    N = grid + offset
    u = unit_weights(inst.phi, theta / grid, N)
    a, K = u.shape
    starts = np.ones((a, K), dtype=bool)
    starts[:, 1:] = u[:, 1:] != u[:, :-1]
    jj, kk = np.nonzero(starts)
    nxt = np.append(kk[1:], K)
    nxt[np.append(jj[1:] != jj[:-1], True)] = K
    seg_n = nxt - kk
    su = u[jj, kk]
    layer_of = np.empty(a, dtype=np.int64)
    for li, members in enumerate(layers):
        layer_of[members] = li
    key = layer_of[jj] * (N + 1) + su
    pos = su > 0
    uniq, inv = np.unique(key[pos], return_inverse=True)
    seg_class = np.full(len(jj), -1, dtype=np.int64)
    seg_class[pos] = inv
    later = np.flatnonzero(jj[1:] == jj[:-1]) + 1
    data = FlowMaster(tuple(len(m) > 1 for m in layers), uniq // (N + 1), uniq % (N + 1),
                      seg_n.astype(float), seg_class, later, int(inst.b), N)
    return data, (jj, kk, seg_n)


@dataclass
class Level:
    """The flow LP of one tested value theta at one grid: segments (runs of equal units of one
    annotator), the live model, and how to read prices and prefix lengths back."""

    inst: CltapInstance
    theta: float
    grid: int
    offset: int
    layers: list[list[int]]
    model: Any = None
    seg_ann: np.ndarray = field(default=None, repr=False)
    seg_k0: np.ndarray = field(default=None, repr=False)
    seg_n: np.ndarray = field(default=None, repr=False)
    seg_class: np.ndarray = field(default=None, repr=False)
    w0: int = 0
    r_cls: int = 0
    solves: int = 0
    added: bool = False  # a column was added since the last solve: primal simplex next

    def build(self, options: Any) -> Level:
        """The flow LP of this level in HiGHS, kept live: each node only changes its bounds."""
        from ..models.cltap_masters import FLOW_MASTER, emit_flow_master
        from .exact_runner import formulation_options
        from .highs import HighsModel

        data, (self.seg_ann, self.seg_k0, self.seg_n) = flow_data(
            self.inst, self.theta, self.grid, self.offset, self.layers)
        self.seg_class = np.asarray(data.seg_class)
        e = emit_flow_master(data)
        self.w0, self.r_cls = e.extras["w0"], e.extras["r_cls"]
        self.model = HighsModel.from_arrays(
            e.c, e.A, e.row_lo, e.row_hi, e.col_lo, e.col_hi, None, e.sense,
            options=formulation_options(FLOW_MASTER.settings(data), options))
        return self

    def solve(self, lo: np.ndarray, hi: np.ndarray, time_limit: float | None
              ) -> tuple[float | None, np.ndarray | None, np.ndarray | None]:
        """(LP value, labels used per segment, price per label) in the box; None where HiGHS
        gave no optimal point (the node then counts as not refuted)."""
        j, k0, n = self.seg_ann, self.seg_k0, self.seg_n
        w_lo = np.clip(lo[j] - k0, 0, n).astype(float)
        w_hi = np.clip(hi[j] - k0, 0, n).astype(float)
        cols = self.w0 + np.arange(len(n))
        self.model.set_col_bounds(cols, w_lo, w_hi)
        # the interior point method for the level's first LP (cold, with crossover for the
        # duals), then the simplex method warm from the last basis (a child box differs from its
        # parent's by one bound; primal simplex after a column was added). A fixed rule, not the
        # faster of the two so far: the LP's duals are the certificates' prices and a degenerate
        # LP has many, so a choice by the clock made the bound differ from run to run (inc
        # t = 100, a = 10, 150 node LPs: 1.9363 or 1.9520); warm simplex was as fast or faster
        # (LP seconds at t = 50, a = 5: 4.5 against 6.9 for IPM; t = 200, a = 20: 9.1 and 12.9)
        way = "ipm" if self.solves == 0 else "simplex"
        self.model.options = self.model.options.replace(
            time_limit=time_limit, lp_solver=way,
            extra=(("simplex_strategy", 4 if self.added else 1),))
        self.solves += 1
        self.added = False
        res = self.model.solve()
        if str(res.status) != "optimal" or res.x is None or res.row_duals is None:
            return None, None, None
        w = res.x[cols]
        duals = np.maximum(res.row_duals[self.r_cls:self.r_cls + int(self.seg_class.max()) + 1],
                           0.0)
        seg_price = np.where(self.seg_class >= 0, duals[np.maximum(self.seg_class, 0)], 0.0)
        gamma = np.repeat(seg_price, n).reshape(self.inst.a, self.inst.K)
        return float(res.objective), w, gamma

    def add_cover(self, labels: list[tuple[int, int]]) -> None:
        """A cover of real labels (weight >= the tested value) as a column of the LP: the
        rounding to units may leave it out of the flow, which then prices its labels too low."""
        import scipy.sparse as sp

        cls = np.repeat(self.seg_class, self.seg_n).reshape(self.inst.a, self.inst.K)
        rows = sorted({int(cls[j, k]) for j, k in labels if cls[j, k] >= 0})
        if not rows:
            return
        col = sp.csc_array((np.ones(len(rows)), (self.r_cls + np.array(rows), np.zeros(
            len(rows), dtype=np.int64))), shape=(self.model.num_row, 1))
        self.model.add_columns(np.ones(1), 0.0, math.inf, col)
        self.added = True

    def lengths(self, w: np.ndarray) -> np.ndarray:
        """Labels used per annotator (fractional)."""
        out = np.zeros(self.inst.a)
        np.add.at(out, self.seg_ann, w)
        return out

    def mixed(self, w: np.ndarray) -> np.ndarray:
        """Per annotator, the labels her LP prefix leaves unpaid before her last used segment:
        0 when the prefix is a step (full segments, then one partly used run of equal labels,
        the same as its first labels), else a mixture of prefix lengths."""
        used = w > 1e-9
        last = np.full(self.inst.a, -1)
        np.maximum.at(last, self.seg_ann[used], np.flatnonzero(used))
        before = np.arange(len(w)) < last[self.seg_ann]
        out = np.zeros(self.inst.a)
        np.add.at(out, self.seg_ann[before], (self.seg_n - w)[before])
        return out


# ----------------------------------------------------------------------------- the search
@dataclass
class _Run:
    """What one run keeps: budgets, the best plan, the levels tried, counters."""

    inst: CltapInstance
    options: Any
    deadline: float
    max_nodes: int
    layers: list[list[int]]
    branchable: np.ndarray
    grid: int = GRIDS[-1]
    nodes: int = 0
    lp_s: float = 0.0
    cert_s: float = 0.0
    best: CltapSolution | None = None
    best_value: float = -math.inf
    worlds: set = field(default_factory=set)
    world: CltapSolution | None = None  # the best plan placed in a world (any value)
    world_value: float = -math.inf
    searched: CltapSolution | None = None  # the world the local search last started from
    log: list = field(default_factory=list)
    cache: dict = field(default_factory=dict)

    root_stood: float = -math.inf  # the highest level whose root LP on the finest grid stood
    level_cap: int = 0  # node LPs of the level being tested (0: the run's budget only)

    def out_of_budget(self) -> bool:
        return (self.nodes >= self.max_nodes or time.perf_counter() >= self.deadline
                or 0 < self.level_cap <= self.nodes)

    def level(self, theta: float, grid: int, offset: int) -> Level:
        key = (theta, grid, offset)
        if key not in self.cache:  # the LPs of the last LEVELS_KEPT levels (raised leaves)
            kept = list(dict.fromkeys(k[0] for k in self.cache if k[0] != theta))
            kept = set(kept[-(LEVELS_KEPT - 1):]) | {theta}
            self.cache = {k: v for k, v in self.cache.items() if k[0] in kept}
            self.cache[key] = Level(self.inst, theta, grid, offset, self.layers).build(
                self.options)
        return self.cache[key]

    def add_world(self, lv: Level, w: np.ndarray) -> None:
        """A plan from the LP's prefix lengths (rounded down, within the budget): LPT."""
        from .cltap_construct import lpt_place

        n = np.floor(lv.lengths(w) + 1e-6).astype(np.int64)
        n = np.minimum(n, self.inst.K)
        while n.sum() > self.inst.b:
            n[int(np.argmax(n))] -= 1
        key = tuple(n)
        if key in self.worlds or len(self.worlds) > 200:
            return
        self.worlds.add(key)
        sol = lpt_place(self.inst, n)
        v = evaluate(self.inst, sol).objective
        if v > self.world_value:
            self.world, self.world_value = sol, v


def _branch(lv: Level, w: np.ndarray, lo: np.ndarray, hi: np.ndarray,
            branchable: np.ndarray) -> tuple[int, int] | None:
    """(annotator j, m) to split into lo_j..m and m..hi_j (the two boxes share n_j = m, and
    together hold every prefix length of the box): j the branchable annotator whose LP prefix
    reaches furthest past the labels it pays for (a mixture of lengths), m the start of one
    of her segments strictly inside (lo_j, hi_j), the nearest to what she pays for; None if
    no annotator mixes (or none can be split)."""
    paid = lv.lengths(w)
    mixed = np.where(branchable, lv.mixed(w), 0.0)
    for j in np.argsort(-mixed, kind="stable"):
        if mixed[j] <= 1e-6:
            return None
        starts = lv.seg_k0[lv.seg_ann == j]
        inside = starts[(starts > lo[j]) & (starts < hi[j])]
        if len(inside):
            return int(j), int(inside[np.argmin(np.abs(inside - paid[j]))])
    return None


def _solve(run: _Run, lv: Level, theta: float, lo: np.ndarray, hi: np.ndarray
           ) -> tuple[str, float, Any, Any, list]:
    """One LP of a node and its certificate: (outcome, W, labels per segment, prices, the
    heaviest set below the price); outcome "refuted" (W < theta), "prices" (the LP refutes but
    its prices miss a real cover), "open" (the LP does not refute) or "none" (no LP answer)."""
    inst = run.inst
    c0 = time.perf_counter()
    val, w, gamma = lv.solve(lo, hi, max(run.deadline - time.perf_counter(), 0.05))
    run.lp_s += time.perf_counter() - c0
    run.nodes += 1
    if val is None:
        return "none", math.inf, None, None, []
    c0 = time.perf_counter()
    wv, heavy = price_bound(inst.phi, gamma, inst.t, lo, hi, inst.b, refute_below=theta)
    run.cert_s += time.perf_counter() - c0
    if wv < theta:
        return "refuted", wv, w, gamma, heavy
    if val >= inst.t * (1 - 1e-6):
        run.add_world(lv, w)
        return "open", wv, w, gamma, heavy
    return "prices", wv, w, gamma, heavy


def _node(run: _Run, theta: float, lo: np.ndarray, hi: np.ndarray, grid: int
          ) -> tuple[str, float, Any, tuple[int, int] | None]:
    """A node of the tree: ("refuted", W, prices, None), ("branch", W, prices, (j, m)), or
    ("fail", ...) when neither a certificate nor a split is found, ("budget", ...) when the
    budget ran out. The LP at the base grid first; prices that miss a real cover (rounding to
    units left it out): the LP at lower levels (near covers count), then with that cover added
    as a column; an LP that does not refute: a split, else finer grids."""
    out, wv, w, gamma, heavy = "none", math.inf, None, None, []
    base = run.level(theta, grid, 0)
    if run.out_of_budget():
        return "budget", wv, None, None
    out, wv, w, gamma, heavy = _solve(run, base, theta, lo, hi)
    if out == "refuted":
        return out, wv, gamma, None
    first_w, first_gamma = w, gamma
    if out == "open":
        split = _branch(base, w, lo, hi, run.branchable)
        if split is not None:
            return "branch", wv, gamma, split
        tries = LEAF_TRIES
    else:
        tries = PRICE_TRIES
    for mult, off in tries:
        if run.out_of_budget():
            return "budget", wv, None, None
        lv = run.level(theta, grid * mult, off)
        out, wv, w, gamma, heavy = _solve(run, lv, theta, lo, hi)
        if out == "refuted":
            return out, wv, gamma, None
    repairs = 0
    while out == "prices" and repairs < REPAIRS and not run.out_of_budget():
        lv.add_cover(heavy)
        repairs += 1
        out, wv, w, gamma, heavy = _solve(run, lv, theta, lo, hi)
        if out == "refuted":
            return out, wv, gamma, None
    if run.out_of_budget():
        return "budget", wv, None, None
    if first_w is not None:
        split = _branch(base, first_w, lo, hi, run.branchable) or _widest(
            run.inst, base.lengths(first_w), lo, hi, run.branchable)
        if split is not None:
            return "branch", wv, first_gamma, split
    return "fail", wv, gamma, None


def _widest(inst: CltapInstance, paid: np.ndarray, lo: np.ndarray, hi: np.ndarray,
            branchable: np.ndarray) -> tuple[int, int] | None:
    """(j, m) when no annotator mixes but the node is not refuted (prices that miss a real
    cover, a leaf whose equal units hide unequal labels): the branchable annotator whose box
    holds the most weight beyond its shortest prefix, split strictly inside (lo_j, hi_j) at
    the length her LP prefix pays for (the narrower boxes cut the labels a certificate may
    count and the supply it may claim); None when every such box is a single length."""
    rows = np.flatnonzero(branchable & (hi - lo >= 2))
    if not len(rows):
        return None
    G = np.concatenate([np.zeros((inst.a, 1)), np.cumsum(inst.phi, axis=1)], axis=1)
    spread = G[rows, hi[rows]] - G[rows, lo[rows]]
    j = int(rows[np.argmax(spread)])
    return j, int(np.clip(np.rint(paid[j]), lo[j] + 1, hi[j] - 1))


Leaf = tuple  # (lo, hi, W): a box of prefix lengths and a valid bound on every plan in it


def refute(run: _Run, theta: float, leaves: list[Leaf]) -> tuple[str, list[Leaf]]:
    """Depth-first tree of boxes at theta, grown from `leaves` (boxes that together hold every
    prefix vector, each with a W that bounds its plans): (outcome, the new leaves), outcome
    "fell" (every leaf below theta), "raised" (some only below raised levels), "stood" (a leaf
    stands) or "budget". A box's W is the least W found for it or any box around it, so a leaf
    already below theta costs nothing and the next level starts from the last level's leaves,
    not from the root. A leaf that no LP refutes at its level is tried again at a level raised
    half way to its W, at most RAISES times (a W found at any level bounds its box: step 2 of
    the module docstring); one that still stands, or a node budget that runs out, ends the level
    with the leaves as they are, each still bounded, so the caller's bound is their largest W."""
    inst = run.inst
    a, K = inst.a, inst.K
    ladder = grid_ladder(run.grid)
    if len(ladder) > 1 and theta > run.root_stood and not run.out_of_budget():
        # the whole box once on the finest grid first: where its LP refutes at the root (dec
        # t = 100, a = 10: most levels) the coarse grids' rounding would branch for tens of
        # node LPs instead; its W bounds every leaf. Skipped below a level where it stood
        lo, hi = np.zeros(a, dtype=np.int64), np.full(a, K, dtype=np.int64)
        out, wv, _, _, _ = _solve(run, run.level(theta, ladder[-1], 0), theta, lo, hi)
        leaves = [(llo, lhi, min(w, wv)) for llo, lhi, w in leaves]
        if out == "refuted":
            return "fell", leaves
        run.root_stood = max(run.root_stood, theta)
    done: list[Leaf] = []
    # the heaviest W first (a stop leaves the largest W as low as the work done allows); each
    # box's children next (depth first: a child's LP is warm from its parent's basis)
    stack = [(lo, hi, w, ladder[0], theta, 0) for lo, hi, w in sorted(leaves, key=lambda x: x[2])]
    # prices that refuted a node lately, tried on the next ones, as (prices, None), and always
    # the covering bound's, as (None, theta): min(phi, theta) / theta, exact weights, no
    # rounding (kept, not pushed out by the LPs' prices: on the leaves of the level before, it
    # refutes most boxes the LPs' prices miss)
    recent: list[tuple[np.ndarray | None, float | None]] = [(None, theta)]
    while stack:
        lo, hi, bound, grid, th, raised = stack.pop()
        if bound < th:
            done.append((lo, hi, bound))
            continue
        c0 = time.perf_counter()
        for gamma, theta0 in recent[::-1]:
            if theta0 is not None:
                known = covering_price_bound(inst.phi, theta0, inst.t, lo, hi, inst.b, th)
            else:
                known = price_bound(inst.phi, gamma, inst.t, lo, hi, inst.b, refute_below=th)[0]
            bound = min(bound, known)
            if bound < th:
                break
        run.cert_s += time.perf_counter() - c0
        if bound < th:
            done.append((lo, hi, bound))
            continue
        out, wv, gamma, split = _node(run, th, lo, hi, grid)
        bound = min(bound, wv)
        if out == "refuted":
            done.append((lo, hi, bound))
            recent = recent[:1] + (recent[1:] + [(gamma, None)])[-RECENT:]
            continue
        if out == "fail" and grid < ladder[-1]:
            stack += [(blo, bhi, bound, g, th, raised) for blo, bhi, g in _again(lo, hi, grid,
                                                                                  ladder)]
            continue
        if out == "fail" and raised < RAISES and th < bound * (1 - SEPARATION):
            stack += _raise(lo, hi, bound, ladder[-1], th, raised)
            continue
        if out != "branch":
            return ("budget" if out == "budget" else "stood"), _carry(done, (lo, hi, bound), stack)
        stack += [(clo, chi, bound, grid, th, raised)
                  for clo, chi in _children(lo, hi, *split)[::-1]]
    return ("fell" if all(w < theta for _, _, w in done) else "raised"), done


def _carry(done: list[Leaf], leaf: Leaf, stack: list[tuple]) -> list[Leaf]:
    """The leaves of a level that ends early (a leaf stands, or the budget ran out): those done,
    the one that ended it and those not reached, each with its W (dropping any would claim its
    prefix lengths bounded by the others)."""
    return done + [leaf] + [x[:3] for x in stack[::-1]]


def grid_ladder(finest: int) -> list[int]:
    """The grids a box is tried on, coarsest first: COARSE_GRIDS below `finest` (the arc
    budget's, `grid_for`), then `finest`. A coarse LP is several times faster and its tree often
    smaller (inc t = 100, a = 10, seed 0, level 1.93: grid 30 refutes in 44 node LPs and 4.7 s
    CPU, grid 75 in 131 and 65 s); a box it cannot refute nor split is tried again finer."""
    return [g for g in COARSE_GRIDS if g < finest] + [finest]


def _again(lo: np.ndarray, hi: np.ndarray, grid: int, ladder: list[int]
           ) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """The box that `grid` could neither refute nor split, to be tried on the next finer grid
    of `ladder` (dropping it would claim its prefix lengths refuted)."""
    return [(lo, hi, ladder[ladder.index(grid) + 1])]


def _raise(lo: np.ndarray, hi: np.ndarray, bound: float, grid: int, th: float, raised: int
           ) -> list[tuple[np.ndarray, np.ndarray, float, int, float, int]]:
    """The leaf that no LP refutes at level `th`, to be tried at the level half way to its
    bound (dropping it would claim its prefix lengths bounded by the other leaves' W)."""
    return [(lo, hi, bound, grid, th + 0.5 * (bound - th), raised + 1)]


def _children(lo: np.ndarray, hi: np.ndarray, j: int, m: int
              ) -> list[tuple[np.ndarray, np.ndarray]]:
    """The boxes lo_j..m and m..hi_j of annotator j: every prefix length of the box is in one."""
    left_hi, right_lo = hi.copy(), lo.copy()
    left_hi[j], right_lo[j] = m, m
    return [(lo, left_hi), (right_lo, hi)]


def _search_world(run: _Run, ub: float, deadline: float, steps: int) -> None:
    """The local search (`steps` steps, the deterministic budget; the deadline a safety cap)
    from the best world's plan, once per new best world; a better plan becomes the run's."""
    from .cltap_search import local_search

    if run.world is None or steps <= 0 or run.world is run.searched:
        return
    run.searched = run.world
    better = local_search(run.inst, run.world, time_limit=max(deadline - time.perf_counter(),
                                                              0.0),
                          seed=0, target=ub, max_steps=steps)
    v = evaluate(run.inst, better).objective
    if v > run.best_value:
        run.best, run.best_value = better, v


def layers_of(inst: CltapInstance, theta: float, keep: np.ndarray | None = None
              ) -> list[list[int]]:
    """Annotators one by one (all of them when a <= MAX_LAYERS), else the MAX_LAYERS longest
    prefixes of the covering knapsack's LP at theta (then the strongest) one by one and the
    others in one pool; `keep` (prefix lengths of a plan) are always one by one."""
    a = inst.a
    if a <= MAX_LAYERS:
        return [[j] for j in range(a)]
    _, n = mckp_lp(np.minimum(inst.phi, theta), inst.b)
    score = n + (0 if keep is None else 2.0 * inst.K * (keep > 0))
    order = np.lexsort((-inst.phi.max(axis=1), -score))
    alone = sorted(int(j) for j in order[:MAX_LAYERS])
    rest = sorted(set(range(a)) - set(alone))
    return [[j] for j in alone] + ([rest] if rest else [])


def _new_run(inst: CltapInstance, hi: float, keep: np.ndarray | None, max_nodes: int,
             deadline: float, options: Any, branching: bool = True) -> _Run:
    """A run's state: the layers at the bound `hi` (`keep`: prefix lengths of a plan, whose
    annotators stay one by one), the annotators alone in a layer branchable (none without
    `branching`), and the grid of its LPs."""
    from ..problems.catalogue import RunOptions

    layers = layers_of(inst, hi, keep)
    branchable = np.zeros(inst.a, dtype=bool)
    for members in layers:
        if len(members) == 1 and branching:
            branchable[members[0]] = True
    return _Run(inst, options or RunOptions(), deadline, max_nodes, layers, branchable,
                grid_for(inst, layers, hi))


def level_tree(inst: CltapInstance, theta: float, hi: float, *, keep: np.ndarray | None = None,
               max_nodes: int = 10**6, time_limit: float = 3600.0, options: Any = None
               ) -> dict[str, Any]:
    """The tree of boxes that refutes the one level theta from the root box (a valid bound `hi`
    on every plan), no other level tested: how many node LPs the certificates need to show that
    no plan reaches theta. Returns outcome ("fell": every plan is below theta; "stood",
    "raised" or "budget" as in `refute`), bound (the leaves' largest W, valid at any stop),
    node LPs, leaves, open leaves (W not below theta: a stop before the tree is done leaves
    them) and per annotator the leaves whose box is narrower than [0, K]."""
    from ..errors import InputError

    if not (math.isfinite(theta) and math.isfinite(hi) and 0 < theta <= hi):
        raise InputError("theta, hi", "finite levels with 0 < theta <= hi", [theta, hi])
    if keep is not None:
        keep = np.asarray(keep)
        if keep.shape != (inst.a,) or not np.issubdtype(keep.dtype, np.integer) or \
                np.any(keep < 0) or np.any(keep > inst.K):
            raise InputError("keep", f"{inst.a} integer prefix lengths in [0, {inst.K}]",
                             keep.tolist())
    t0 = time.perf_counter()
    if zero_optimum(inst):  # every plan is 0: below any theta > 0, with no LP
        return {"outcome": "fell", "bound": 0.0, "nodes": 0, "leaves": 0, "open": 0,
                "split": [0] * inst.a, "time_s": 0.0}
    run = _new_run(inst, hi, keep, max_nodes, t0 + time_limit, options)
    root = (np.zeros(inst.a, dtype=np.int64), np.full(inst.a, inst.K, dtype=np.int64), hi)
    outcome, leaves = refute(run, theta, [root])
    split = sum(((lo > 0) | (top < inst.K)).astype(int) for lo, top, _ in leaves)
    return {"outcome": outcome, "bound": max(w for _, _, w in leaves), "nodes": run.nodes,
            "leaves": len(leaves), "open": int(sum(w >= theta for _, _, w in leaves)),
            "split": np.asarray(split).tolist(), "lp_s": run.lp_s,
            "certificate_s": run.cert_s, "time_s": time.perf_counter() - t0}


def world_bound(inst: CltapInstance, n: np.ndarray, lo: float, hi: float, levels: int = 10,
                time_limit: float = 3600.0, options: Any = None) -> tuple[float, int]:
    """A valid bound on every plan whose prefix lengths are exactly n (a "world"): the
    refutation of `refute` (price certificates, step 2 of the module docstring) on the one box
    lo_j = hi_j = n_j, its levels bisected on [lo, hi] `levels` times; (the least W found, node
    LPs). Nothing is mixed within one box, so this is "integer prefixes, fractional covers" at
    that world: how far a plan is from the best plan with its workloads. A run cut by
    `time_limit` still returns a valid bound (its leaves keep their W)."""
    from ..errors import InputError

    n = np.asarray(n)
    if n.shape != (inst.a,) or not np.issubdtype(n.dtype, np.integer) or np.any(n < 0) or \
            np.any(n > inst.K):
        raise InputError("n", f"{inst.a} integer prefix lengths in [0, {inst.K}]", n.tolist())
    if not (math.isfinite(lo) and math.isfinite(hi) and 0 <= lo <= hi):
        raise InputError("lo, hi", "finite levels with 0 <= lo <= hi", [lo, hi])
    if zero_optimum(inst):  # no positive-weight cover: every plan is 0 (no LP to build)
        return 0.0, 0
    n = n.astype(np.int64)
    run = _new_run(inst, hi, n, 10**9, time.perf_counter() + time_limit, options)
    bound = math.inf
    for _ in range(levels):
        theta = (lo + hi) / 2
        out, leaves = refute(run, theta, [(n.copy(), n.copy(), bound)])
        bound = min(bound, max(w for _, _, w in leaves))
        lo, hi = (lo, min(theta, bound)) if out == "fell" else (theta, hi)
    return bound, run.nodes


def branch_bound(inst: CltapInstance, lo: float, hi: float, *, start: CltapSolution | None = None,
                 time_limit: float | None = 60.0, max_nodes: int | None = None,
                 options: Any = None, search_steps: int = 50, branching: bool = True,
                 stop_within: float = 0.0) -> tuple[BoundResult, CltapSolution | None]:
    """The bound of the module docstring between a plan's value `lo` (its plan `start`) and a
    valid bound `hi`, and the best plan it met (None if none beats `lo`). Stops at `max_nodes`
    node LPs (default DEFAULT_NODES) or `time_limit` seconds, with a valid bound either way:
    the largest W of the leaves (`hi` until every leaf has a lower one). Without
    `branching` every level is tested at the root box alone: the configuration LP's own bound
    (what the LP says before any prefix length is fixed). With `stop_within` > 0 it stops once a
    level within `stop_within` (relative) of the best plan stands: a caller whose own proof step
    starts there (head-cover's search) gains nothing from bisecting that last stretch, and no
    level gets a share of the node LPs (LEVEL_SHARE): head-cover's start keeps the levels of a
    run without it."""
    t0 = time.perf_counter()
    det: dict[str, Any] = {}
    if zero_optimum(inst):
        return BoundResult(0.0, "zero: fewer than t positive-weight labels fit in the budget",
                           det), None
    if not hi > lo * (1 + GAP):
        det["skipped"] = "nothing to prove (the bound meets the plan)"
        return BoundResult(hi, "input bound (nothing to prove)", det), None
    deadline = t0 + (time_limit if time_limit is not None else math.inf)
    keep = None if start is None else (start.task_of >= 0).sum(axis=1)
    run = _new_run(inst, hi, keep, DEFAULT_NODES if max_nodes is None else max_nodes, deadline,
                   options, branching)
    layers = run.layers
    det["grid"] = run.grid
    run.best, run.best_value = start, lo
    ub, refuted, failed, cut = hi, False, lo, False  # cut: `failed` is a level its share cut
    leaves: list[Leaf] = [(np.zeros(inst.a, dtype=np.int64),
                           np.full(inst.a, inst.K, dtype=np.int64), hi)]
    stop, step = "converged", FIRST_STEP
    down = FIRST_STEP  # the share of the next descent from the bound (halved when one stands)
    while ub > run.best_value * (1 + GAP):
        if run.out_of_budget():
            stop = "node budget" if run.nodes >= run.max_nodes else "time limit"
            break
        if cut and failed >= ub * (1 - SEPARATION):  # the bound fell below a level its share
            failed, step, cut = -math.inf, down, False  # cut: down again, by the share last halved
        low = max(failed, run.best_value)
        descending = failed <= run.best_value
        if ub - low <= SEPARATION * ub:
            stop = f"levels within {SEPARATION:g} of each other"
            break
        # down from the bound (a level near it falls in a few nodes, and its W is often well
        # below it), in steps of `step` while levels fall; bisection once one stands
        theta = ub - step * (ub - low)
        nodes0 = run.nodes
        if refuted and not stop_within > 0:  # once the bound fell; not in head-cover's start,
            # which needs a level near the plan to stand soon (`bench_cltap.py --frontier
            # --wall-factor 3 --methods head-cover --a 10 --trends dec --t-list 40`: gap 0.01348
            # at commit 073318f, where the start had the share; 0.01324 without it)
            run.level_cap = nodes0 + max(LEVEL_MIN, (run.max_nodes - nodes0) // LEVEL_SHARE)
        outcome, leaves = refute(run, theta, leaves)
        capped = (outcome == "budget" and run.nodes < run.max_nodes
                  and time.perf_counter() < run.deadline)
        run.level_cap = 0
        if capped:  # the level's own share ran out: bisect upwards, as if it stood
            outcome = "stood"
        fell = outcome == "fell"
        worst = max((w for _, _, w in leaves), default=-math.inf)
        run.log.append({"theta": theta, "refuted": fell, "W": worst, "nodes": run.nodes - nodes0,
                        "leaves": len(leaves)})
        if max(worst, 0.0) < ub:
            ub, refuted = max(worst, 0.0), True
        if fell:
            step = min(0.5, STEP_GROWTH * step)
        elif outcome in ("stood", "raised"):  # a leaf stands at theta, raised or not
            if descending:  # a descent from the bound that stood: the next one goes half as far
                down = max(step / 2, 1 / 64)
            failed, step, cut = theta, 0.5, capped
            if theta <= run.best_value * (1 + stop_within):
                stop = f"a level within {stop_within:g} of the best plan stands"
                break
        # the local search from a new best world now, not only at the end: the next level is
        # placed between the bound and the best plan, so a better plan moves it down
        _search_world(run, ub, deadline, search_steps)
    _search_world(run, ub, deadline, search_steps)
    improved = run.best is not None and run.best_value > lo
    det.update(levels=run.log, nodes=run.nodes, lp_s=run.lp_s, certificate_s=run.cert_s,
               layers=len(layers), pooled=sum(len(m) for m in layers if len(m) > 1),
               worlds=len(run.worlds), best_plan=run.best_value, stopped=stop,
               time_s=time.perf_counter() - t0)
    src = ("configuration LP with branching on prefix lengths (price certificates)" if refuted
           else "input bound (prefix branching refuted nothing)")
    return BoundResult(ub, src, det), (run.best if improved else None)
