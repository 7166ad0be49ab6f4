"""Upper bounds for CL-TAP (paper 003, Sec. 5): closed form, pricing, column generation.

- `closed_form_bound`: the compact LP relaxation of (11)-(17) in closed form (digest 2.5/3.4):
  (1/t) x the LP relaxation of a multiple-choice knapsack over prefix lengths, solved greedily
  on the upper concave hulls of C_j(n) = sum_{k<=n} phi_jk. O(aK log aK).
- `mckp_dp`: exact multiple-choice knapsack by DP (digest 3.3 PRICE): the pricing problem
  (25)-(28) with the tightened row (26') sum k w_jk <= b, and the averaging integer bound.
- `column_generation`: Algorithm 2 on the workplan formulation (18)-(24). The restricted master is
  a live HiGHS LP (`HighsModel.add_columns`, primal simplex, warm start) or, for comparison, a
  Pyomo model rebuilt each round. Every round reports the RMP value and the Lagrangian bound
  z + sum_i max(0, Lambda_i - delta_i) (digest 2.4, valid whenever pricing is exact); the result
  is the best such bound, which equals the master LP at convergence.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..problems.cltap import CltapInstance, CltapSolution, Workplan, empty_solution
from ..problems.cltap import linear_correctness as workplan_cost
from ..status import Status
from .cltap_cbp import cbp

INF = math.inf  # = highspy.kHighsInf; HiGHS is imported only where a model is solved


# ----------------------------------------------------------------------------- closed form
def upper_hull_segments(C: np.ndarray) -> list[tuple[float, int]]:
    """(slope, length) of the upper concave hull of the points (n, C[n]), n = 0..K."""
    hull = [0]
    for n in range(1, len(C)):
        while len(hull) >= 2:
            n1, n2 = hull[-2], hull[-1]
            # drop n2 if it lies on or below the chord n1 -> n
            if (C[n2] - C[n1]) * (n - n1) <= (C[n] - C[n1]) * (n2 - n1):
                hull.pop()
            else:
                break
        hull.append(n)
    return [((C[q] - C[p]) / (q - p), q - p) for p, q in zip(hull, hull[1:])]


def _closed_form(inst: CltapInstance) -> tuple[float, np.ndarray, np.ndarray]:
    """(UB_LP, n_lo, n_hi): the greedy's prefix lengths without and with its partial segment."""
    segs: list[tuple[float, int, int]] = []
    C = np.concatenate([np.zeros((inst.a, 1)), np.cumsum(inst.phi, axis=1)], axis=1)
    for j in range(inst.a):
        segs += [(slope, length, j) for slope, length in upper_hull_segments(C[j])]
    segs.sort(key=lambda s: -s[0])  # stable: an annotator's segments stay in hull order
    B, tot = float(inst.b), 0.0
    n_lo = np.zeros(inst.a, dtype=np.int64)
    n_hi = n_lo.copy()
    for slope, length, j in segs:
        if B <= 0 or slope <= 0:
            break
        take = min(B, float(length))
        tot += slope * take
        B -= take
        n_hi[j] += length
        if take == length:
            n_lo[j] += length
    return tot / inst.t, n_lo, n_hi


def closed_form_bound(inst: CltapInstance) -> float:
    """UB_LP of the compact relaxation (digest 3.4): hull segments taken by decreasing slope."""
    return _closed_form(inst)[0]


def spread_assignment(inst: CltapInstance, n: np.ndarray) -> CltapSolution:
    """Annotator j's first n_j iterations on tasks (o_j + k) mod t, o_j = n_1 + ... + n_{j-1}:
    one label per (task, annotator) since n_j <= K <= t, labels spread evenly over tasks."""
    z = empty_solution(inst).task_of
    off = 0
    for j in range(inst.a):
        nj = int(min(n[j], inst.K))
        z[j, :nj] = (off + np.arange(nj)) % inst.t
        off += nj
    return CltapSolution(z)


def closed_form_columns(inst: CltapInstance, tight: bool = True) -> list[Workplan]:
    """Workplans of the two spread assignments at the closed form's prefix lengths. Mixed, they
    reach the LP bound in the master when it equals UB_LP (digest 2.5), so column generation
    starts at the optimum and only has to prove it; workplans outside H are dropped."""
    _, n_lo, n_hi = _closed_form(inst)
    out: list[Workplan] = []
    for n in (n_lo, n_hi):
        for wp in spread_assignment(inst, n).workplans(inst.t):
            w = tuple(sorted(wp))
            cost = sum(k + 1 for _, k in w) if tight else len(w)
            if w and cost <= inst.b:
                out.append(w)
    return out


# ----------------------------------------------------------------------------- knapsack DP
def _mckp_table(profit: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray, int]:
    """DP table of `mckp_dp`: F[c] = best profit with capacity <= c, arg[j, c] = j's item (the
    lightest of the best; -1: none beats F without j). Per group, every capacity's window of
    F at once (a strided view; an item that a lighter one beats on profit at -inf), not a
    Python loop over the items: the supply of a box of prefix lengths is a call per
    certificate of `cltap_branch`."""
    a, K = profit.shape
    cap = int(max(0, min(cap, K * (K + 1) // 2 * a)))
    F = np.zeros(cap + 1)
    arg = np.full((a, cap + 1), -1, dtype=np.int64)
    n = min(K, cap)
    if n == 0:
        return F, arg, cap
    cs = np.arange(cap + 1)
    for j in range(a):
        r = np.asarray(profit[j, :n], dtype=float)
        # an item that a lighter one beats (or meets) on profit never wins: F rises with c
        r = np.where(r > np.maximum.accumulate(np.concatenate([[0.0], r[:-1]])), r, -np.inf)
        if not np.isfinite(r).any():
            continue
        # F reversed: window cap - c of it is F[c - 1], F[c - 2], ... (item k: F[c - k - 1])
        rev = np.concatenate([F[::-1][1:], np.full(n, -np.inf)])
        cand = np.lib.stride_tricks.sliding_window_view(rev, n)[::-1] + r[None, :]
        i = np.argmax(cand, axis=1)  # the first maximum: the lightest item
        v = cand[cs, i]
        better = v > F
        arg[j, better] = i[better]
        F = np.where(better, v, F)
    return F, arg, cap


def _backtrack(arg: np.ndarray, c: int) -> list[tuple[int, int]]:
    items: list[tuple[int, int]] = []
    for j in range(arg.shape[0] - 1, -1, -1):
        k = int(arg[j, c])
        if k >= 0:
            items.append((j, k))
            c -= k + 1
    return sorted(items)


def mckp_dp(profit: np.ndarray, cap: int) -> tuple[float, list[tuple[int, int]]]:
    """max sum profit[j, k] y_jk s.t. sum (k+1) y_jk <= cap, <= 1 item per group j, y binary.

    DP over capacity (digest 3.3), vectorized over the capacity axis; items dominated by a
    lighter item of the same group with at least the same profit are skipped. O(a K cap).
    Returns (value, [(j, k)]).
    """
    F, arg, cap = _mckp_table(profit, cap)
    return float(F[cap]), _backtrack(arg, cap)


def mckp_pool(profit: np.ndarray, cap: int, n: int) -> list[tuple[float, Workplan]]:
    """The optimum and up to n-1 runners-up: the optima at the next smaller capacities where
    the DP value drops (distinct workplans, best first). Extra columns per pricing round."""
    F, arg, cap = _mckp_table(profit, cap)
    out = [(float(F[cap]), tuple(_backtrack(arg, cap)))]
    c = cap
    while len(out) < n and c > 0:
        drops = np.flatnonzero(F[:c] < F[c] - 1e-12)
        if not drops.size:
            break
        c = int(drops[-1])
        if F[c] <= 0:
            break
        out.append((float(F[c]), tuple(_backtrack(arg, c))))
    return out


def price_dp(reward: np.ndarray, b: int, tight: bool = True) -> tuple[float, Workplan]:
    """Pricing (25)-(28): best workplan for rewards r_jk; tight = (26'), else (26) sum w <= b."""
    if tight:
        val, items = mckp_dp(reward, b)
        return val, tuple(items)
    kbest = np.argmax(reward, axis=1)
    best = reward[np.arange(reward.shape[0]), kbest]
    order = [j for j in np.argsort(-best, kind="stable") if best[j] > 0][: max(b, 0)]
    return float(best[order].sum()), tuple(sorted((int(j), int(kbest[j])) for j in order))


def price_milp(reward: np.ndarray, b: int, tight: bool = True, time_limit: float | None = None
               ) -> tuple[float, Workplan]:
    """Pricing (25)-(28) as a Pyomo MILP (`models.cltap_masters.PRICING`) through the exact
    runner (the check of `price_dp`)."""
    from ..models.cltap_masters import PRICING, Pricing
    from ..problems.catalogue import RunOptions
    from .exact_runner import run

    done = run(PRICING, Pricing(reward, b, tight), RunOptions(time_limit=time_limit))
    res = done.result.res
    if res.status is not Status.OPTIMAL:
        raise RuntimeError(f"pricing MILP: {res.status} {res.message}")
    return float(res.objective), done.result.solution


def average_integer_bound(inst: CltapInstance) -> float:
    """UB_avg = (1/t) max{sum_j C_j(n_j) : sum n_j <= b} (digest 2.5), OPT <= UB_avg <= UB_LP."""
    C = np.cumsum(inst.phi, axis=1)
    return mckp_dp(C, inst.b)[0] / inst.t


# ----------------------------------------------------------------------------- master
@dataclass
class ColgenRound:
    round: int
    rmp: float  # restricted master value (a lower bound on the master LP)
    lagrangian: float  # valid upper bound of this round (at the duals priced last)
    best: float  # best bound so far
    columns: int  # workplans in H'
    added: int
    master_s: float
    pricing_s: float


@dataclass
class ColgenResult:
    bound: float  # best (smallest) valid upper bound
    rmp: float
    converged: bool
    rounds: list[ColgenRound] = field(default_factory=list)
    workplans: list[Workplan] = field(default_factory=list)
    time_s: float = 0.0
    status: str = "optimal"


class _Master:
    """The restricted master LP of (18)-(23) (`aggregated=False`, the paper's: variables
    lambda[i, h] for chosen (task, workplan) pairs) or its task-aggregated form (digest 2.5, one
    nu per workplan): the formulation `models.cltap_masters.COLGEN_MASTER`. Engine "highspy":
    its emitter's matrix (every row of `ColgenRows`) as a live HiGHS model, the emitter's new
    columns appended warm; engine "pyomo": its Pyomo model rebuilt and solved each round.
    """

    def __init__(self, inst: CltapInstance, aggregated: bool, engine: str,
                 options: Any) -> None:
        from ..models.cltap_masters import ColgenMaster, ColgenRows, emit_colgen_master
        from .highs import HighsModel

        if engine not in ("highspy", "pyomo"):
            raise ValueError(f"engine must be 'highspy' or 'pyomo', not {engine!r}")
        self.inst, self.agg, self.engine, self.options = inst, aggregated, engine, options
        self.rows = ColgenRows(inst, aggregated)
        self.K, self.num_row = inst.K, self.rows.num_row
        self.r_budget, self.r_pair = self.rows.r_budget, self.rows.r_pair
        self.r_convex, self.r_prefix = self.rows.r_convex, self.rows.r_prefix
        self.rhs = self.rows.rhs
        self.columns: list[Workplan] = []  # distinct workplans
        self.index: dict[Workplan, int] = {}
        self.pairs: dict[tuple[int, int], None] = {}  # (task, column), in column order
        self.model: Any = None  # a live HighsModel (engine "highspy")
        if engine == "highspy":
            e = emit_colgen_master(ColgenMaster(inst, [], None if aggregated else []),
                                   all_rows=True)
            self.model = HighsModel.from_arrays(e.c, e.A, e.row_lo, e.row_hi, e.col_lo,
                                                e.col_hi, None, e.sense, options=options)

    def data(self) -> Any:
        """The master as the formulation's data (`ColgenMaster`)."""
        from ..models.cltap_masters import ColgenMaster

        return ColgenMaster(self.inst, list(self.columns),
                            None if self.agg else list(self.pairs))

    def has(self, i: int | None, w: Workplan) -> bool:
        h = self.index.get(w)
        return h is not None and (self.agg or (i, h) in self.pairs)

    def add(self, items: list[tuple[int | None, Workplan]]) -> int:
        """Add (task, workplan) variables (task None in the aggregated master); returns count."""
        new: list[tuple[int | None, Workplan]] = []
        for i, w in items:
            if self.has(i, w):
                continue
            h = self.index.get(w)
            if h is None:
                h = self.index[w] = len(self.columns)
                self.columns.append(w)
            if not self.agg:
                self.pairs[(i, h)] = None
            new.append((i, w))
        if new and self.engine == "highspy":
            cost, A = self.rows.columns(new)
            self.model.add_columns(cost, 0.0, INF, A)
        return len(new)

    def solve(self) -> tuple[float, np.ndarray]:
        """(RMP value, row duals d obj / d rhs >= 0 in the row layout above)."""
        if self.engine == "highspy":
            if self.model.num_col == 0:  # empty aggregated master: z = 0, y = 0 is dual optimal
                return 0.0, np.zeros(self.num_row)
            res = self.model.solve()
            if res.status is Status.TIME_LIMIT:
                raise TimeoutError("restricted master: time limit")
            if res.status is not Status.OPTIMAL or res.row_duals is None:
                raise RuntimeError(f"restricted master: {res.status} {res.message}")
            return float(res.objective), np.maximum(res.row_duals, 0.0)
        return self._solve_pyomo()

    def _solve_pyomo(self) -> tuple[float, np.ndarray]:
        """Build the formulation's Pyomo model and solve it (the slow reference route); the
        duals of its rows go to their keys' places in the row layout (0 for absent rows)."""
        from ..models.cltap_masters import COLGEN_MASTER
        from .highs import solve_model

        if not self.columns:
            return 0.0, np.zeros(self.num_row)
        m = COLGEN_MASTER.model(self.data())
        res = solve_model(m, self.options)
        if res.status is not Status.OPTIMAL:
            raise RuntimeError(f"restricted master (Pyomo): {res.status} {res.message}")
        y = np.zeros(self.num_row)
        for r, (name, idx) in enumerate(self.rows.keys()):
            con = m.find_component(name)
            if con is not None and idx in con:
                y[r] = res.dual(con[idx])
        return float(res.objective), np.maximum(y, 0.0)

    def prices(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(alpha per task (faithful) or [1], pi[a, K], delta per task or [delta]) from duals y;
        pi_jk = beta + gamma_jk + eps_jk - eps_j,k+1 (eps_j1 = eps_j,K+1 = 0, digest D2)."""
        inst, K, a = self.inst, self.K, self.inst.a
        scale = float(inst.t) if self.agg else 1.0
        beta = y[self.r_budget]
        gamma = y[self.r_pair:self.r_pair + a * K].reshape(a, K)
        eps = np.zeros((a, K + 1))
        if K > 1:
            eps[:, 1:K] = y[self.r_prefix:self.r_prefix + a * (K - 1)].reshape(a, K - 1)
        pi = scale * (beta + gamma) + eps[:, :K] - eps[:, 1:K + 1]
        if self.agg:
            return np.ones(1), pi, y[self.r_convex:self.r_convex + 1]
        alpha = y[:inst.t]
        return alpha, pi, y[self.r_convex:self.r_convex + inst.t]

    def fixed_part(self, y: np.ndarray) -> float:
        """Dual objective without the convexity rows: b beta + sum gamma."""
        n = self.inst.a * self.K
        return float(self.rhs[self.r_budget] * y[self.r_budget]
                     + y[self.r_pair:self.r_pair + n].sum())


def heuristic_columns(inst: CltapInstance, w: Workplan) -> list[Workplan]:
    """HEURISTIC_SEARCH (digest 3.3): give w to task 0, each annotator's earlier iterations to the
    neediest other tasks, continue CBP; return the nonempty workplans of that assignment."""
    z = empty_solution(inst).task_of
    c = np.zeros(inst.t)
    for j, k in w:
        z[j, k] = 0
        c[0] += inst.phi[j, k]
    for j, k in w:
        if k == 0:
            continue
        key = c.copy()
        key[0] = np.inf
        tasks = np.lexsort((np.arange(inst.t), key))[:k]
        z[j, :k] = tasks
        c[tasks] += inst.phi[j, :k]
    if int((z >= 0).sum()) > inst.b:
        return []
    sol = cbp(inst, start=CltapSolution(z))
    return [tuple(sorted(wp)) for wp in sol.workplans(inst.t) if wp]


def _price_all(master: _Master, y: np.ndarray, tight: bool, pool: int = 1
               ) -> tuple[float, list[tuple[np.ndarray, float, Workplan]]]:
    """Price every task (cached by distinct alpha_i): the Lagrangian bound at duals y,
    L(y) = b beta + sum gamma + sum_i Lambda_i (>= z + sum max(0, Lambda_i - delta_i), both valid
    since delta_i := Lambda_i makes y dual feasible), and [(tasks, Lambda, W)] per group."""
    inst = master.inst
    alpha, pi, _ = master.prices(y)
    if not master.agg:
        s = alpha.sum()
        alpha = alpha / s if s > 0 else np.full(inst.t, 1.0 / inst.t)  # sum alpha = 1 (eta)
    keys = np.round(alpha, 12)
    groups = []
    total = 0.0
    for key in np.unique(keys):
        tasks = np.flatnonzero(keys == key)
        reward = float(key) * inst.phi - pi
        if tight and pool > 1:
            found = mckp_pool(reward, inst.b, pool)
        else:
            found = [price_dp(reward, inst.b, tight)]
        total += found[0][0] * len(tasks)
        groups += [(tasks, lam, w) for lam, w in found]
    return master.fixed_part(y) + total, groups


def column_generation(inst: CltapInstance, *, aggregated: bool = False, engine: str = "highspy",
                      tight: bool = True, time_limit: float | None = None,
                      max_rounds: int = 100_000, tol: float = 1e-9, heuristic: bool = True,
                      smoothing: float = 0.0, pool: int = 1, seed_closed_form: bool = True,
                      initial: list[Workplan] | None = None, callback: Any = None
                      ) -> ColgenResult:
    """Algorithm 2 (digest 3.3) with exact DP pricing. Each round: solve the RMP, price every
    task, add the improving (task, workplan) columns and the workplans of a heuristic completion
    (CBP continued from the best new column) wherever their reduced cost is positive. Stops at
    convergence (no positive reduced cost) or at the time limit / round cap, returning the best
    Lagrangian bound of all rounds (never the RMP value of an unfinished run, digest D5).
    `smoothing` in [0, 1) prices at a convex combination of the best-bound duals and the current
    ones (Wentges stabilization, with a plain pricing round whenever it finds no column).
    `pool` > 1 also offers the DP optima at the next smaller capacities (multiple pricing).
    Initial columns: CBP's workplans (`initial` replaces them) and, with `seed_closed_form`, those
    of `closed_form_columns` (without them the master tails off badly for increasing p).
    """
    from ..models.cltap_masters import COLGEN_MASTER_SETTINGS
    from ..problems.catalogue import RunOptions
    from .exact_runner import formulation_options

    t0 = time.perf_counter()
    opts = formulation_options(COLGEN_MASTER_SETTINGS, RunOptions())
    master = _Master(inst, aggregated, engine, opts)
    start = list(initial) if initial is not None else [
        tuple(sorted(wp)) for wp in cbp(inst).workplans(inst.t) if wp]
    if seed_closed_form:
        start += closed_form_columns(inst, tight)
    if aggregated:
        master.add([(None, w) for w in start])
    else:  # each start workplan for every task: the CBP assignment is an RMP point
        master.add([(i, w) for w in dict.fromkeys(start) for i in range(inst.t)])
    out = ColgenResult(bound=math.inf, rmp=0.0, converged=False)
    center: np.ndarray | None = None
    for rnd in range(1, max_rounds + 1):
        ta = time.perf_counter()
        if time_limit is not None and master.model is not None:
            # one master LP may stall for minutes: give it only the time that is left; HiGHS's
            # limit counts its run time across re-solves, so the earlier rounds' master time
            # is added (else the limit binds at about half the budget)
            left = max(time_limit - (ta - t0), 0.05)
            used = sum(r.master_s for r in out.rounds)
            master.model.options = master.model.options.replace(time_limit=used + left)
        try:
            z, y = master.solve()
        except TimeoutError:
            out.status = "time_limit"  # the bounds of the finished rounds stay valid
            break
        tb = time.perf_counter()
        alpha, pi, delta = master.prices(y)
        ys = y if center is None or smoothing <= 0 else smoothing * center + (1 - smoothing) * y
        new: list[tuple[int | None, Workplan]] = []
        lag = math.inf
        for _attempt in (0, 1):
            lag_s, groups = _price_all(master, ys, tight, pool)
            lag = min(lag, lag_s)
            if lag_s < out.bound:
                out.bound, center = lag_s, ys.copy()
            elif center is None:
                center = ys.copy()
            cand = [w for _, _, w in groups if w]
            if heuristic and cand:
                best = max(cand, key=lambda w: workplan_cost(inst, w))
                cand += heuristic_columns(inst, best)
            new = _improving(master, cand, alpha, pi, delta, tol * (1.0 + abs(z)))
            if new or ys is y:
                break
            ys = y  # mispricing: the smoothed duals found nothing; price at the RMP duals
        tc = time.perf_counter()
        added = master.add(new)
        out.rmp = z
        out.rounds.append(ColgenRound(rnd, z, lag, out.bound, len(master.columns), added,
                                      tb - ta, tc - tb))
        if callback is not None:
            callback(out.rounds[-1])
        if not added:
            out.converged = out.bound - z <= 1e-7 * (1.0 + abs(z))
            out.status = "optimal" if out.converged else "stalled"
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            out.status = "time_limit"
            break
    else:
        out.status = "round cap"  # max_rounds: the deterministic budget, not the clock
    out.workplans = list(master.columns)
    out.time_s = time.perf_counter() - t0
    return out


def _improving(master: _Master, cand: list[Workplan], alpha: np.ndarray, pi: np.ndarray,
               delta: np.ndarray, tol: float) -> list[tuple[int | None, Workplan]]:
    """(task, workplan) pairs not in the master with reduced cost alpha_i c_h - pi.w - delta_i
    > tol at the RMP duals (aggregated: c_h - pi.w - delta)."""
    out: list[tuple[int | None, Workplan]] = []
    seen: set[Workplan] = set()
    for w in cand:
        if w in seen:
            continue
        seen.add(w)
        c_h = workplan_cost(master.inst, w)
        pw = float(sum(pi[j, k] for j, k in w))
        rc = alpha * c_h - pw - delta
        for i in np.flatnonzero(rc > tol):
            task = None if master.agg else int(i)
            if not master.has(task, w):
                out.append((task, w))
    return out
