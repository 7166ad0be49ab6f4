"""Solvers of worker selection (paper 004): Algorithm 1, the integer-cost DP, two exact MILPs.

- `select_prefix` (Algorithm 1, Theorem 4): sort the workers by G (descending, ties by index),
  scan EVERY prefix k = 1..min(K, M) (the curve is not unimodal, digest 2.3) and return the
  smallest k whose F_k = T_k/sqrt(k) is within the shared tie tolerance of the maximum.
  Exact because a fixed-size set is best when it is the top k (digest 3.2). O(M log M).
- `select_costs_dp` (extension, digest 2.6): with integer costs Algorithm 1 is not exact; a DP
  over (worker, size, spend) gives best[k][b] = max sum of x, then max_k max_b best/sqrt(k).
  O(M B C) time and memory for the choice table.
- `solve_formulation_a` / `solve_compact`: the Pyomo models of models/worker_select.py through
  the HiGHS adapter with gap 0, then the second pass of digest 2.5 (F_hat >= F* - tol, minimize
  |S|), so the exact path returns the same k* as Algorithm 1.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..problems import worker_select as P
from ..problems.worker_select import tie_tol
from ..registry import MILP_DEFAULT_TIME, Method, Outcome, ProblemSpec, RunOptions

# Pyomo and HiGHS are imported inside the exact methods: the fast path (used in experiment loops
# and `crowdopt select`) must not pay Pyomo's import time.

FORMULATION_A_MAX_BINARIES = 2_000_000
COMPACT_MAX_WORKERS = 60
DP_MAX_CELLS = 200_000_000
# stage 2 must not accept a set worse than F* - tol because of HiGHS's 1e-6 feasibility slack
_SECOND_PASS_TOLERANCES = (("mip_feasibility_tolerance", 1e-9),
                           ("primal_feasibility_tolerance", 1e-9))


@dataclass
class SelectResult:
    """A selection with its record: chosen indices, k* = |S*|, F_hat(S*), the curve F_k."""

    selected: np.ndarray  # sorted worker indices
    k: int
    value: float
    curve: np.ndarray  # F_k for k = 1..B (-inf where no set of size k is feasible)
    tol: float
    order: np.ndarray | None = None  # Algorithm 1's worker order (descending G)


def select_prefix(x: np.ndarray, max_workers: int) -> SelectResult:
    """Algorithm 1: top-k prefixes by G, all k scanned, smallest maximizing k (eq. 11)."""
    x = np.asarray(x, dtype=float)
    B = min(int(max_workers), len(x))
    order = np.argsort(-x, kind="stable")
    curve = np.cumsum(x[order[:B]]) / np.sqrt(np.arange(1, B + 1))
    best = float(curve.max())
    tol = tie_tol(best)
    k = int(np.argmax(curve >= best - tol)) + 1
    return SelectResult(np.sort(order[:k]), k, float(curve[k - 1]), curve, tol, order)


def top_k(x: np.ndarray, k: int) -> np.ndarray:
    """The k workers with the largest x (ties by index): the best set of size k (digest 2.3)."""
    return np.sort(np.argsort(-np.asarray(x, dtype=float), kind="stable")[:k])


def dp_cells(inst: P.WorkerSelectInstance) -> int:
    return inst.n_workers * (inst.cap + 1) * (int(inst.budget) + 1)


def select_costs_dp(x: np.ndarray, costs: np.ndarray, budget: int,
                    max_workers: int) -> SelectResult | None:
    """Exact integer-cost selection by DP (digest 2.6); None if no single worker fits."""
    x = np.asarray(x, dtype=float)
    c = np.asarray(costs, dtype=np.int64)
    M, C = len(x), int(budget)
    B = min(int(max_workers), M)
    best = np.full((B + 1, C + 1), -np.inf)  # best[k, b]: max sum of x, size k, spend exactly b
    best[0, 0] = 0.0
    take = np.zeros((M, B + 1, C + 1), dtype=bool)
    for i in range(M):
        ci = int(c[i])
        if ci > C:
            continue
        cand = best[:-1, : C + 1 - ci] + x[i]  # a fresh array: 0/1 semantics
        target = best[1:, ci:]
        better = cand > target
        take[i, 1:, ci:] = better
        np.copyto(target, cand, where=better)
    T = best[1:].max(axis=1)
    if not np.isfinite(T).any():
        return None
    curve = T / np.sqrt(np.arange(1, B + 1))
    top = float(np.max(curve[np.isfinite(curve)]))
    tol = tie_tol(top)
    k = int(np.argmax(curve >= top - tol)) + 1
    b = int(np.argmax(best[k]))
    chosen = []
    kk = k
    for i in range(M - 1, -1, -1):
        if kk == 0:
            break
        if take[i, kk, b]:
            chosen.append(i)
            kk -= 1
            b -= int(c[i])
    return SelectResult(np.array(sorted(chosen), dtype=np.int64), k, float(curve[k - 1]),
                        curve, tol)


# ----------------------------------------------------------------------------- methods
def _record(r: SelectResult, path: str) -> dict:
    return {"path": path, "k": r.k, "value": r.value, "tie_tol": r.tol,
            "curve": [float(v) if math.isfinite(v) else None for v in r.curve]}


def _fast(inst: P.WorkerSelectInstance, opts: RunOptions) -> Outcome:
    """Algorithm 1 on uniform costs; the exact integer-cost DP when costs are given."""
    if not inst.has_costs:
        r = select_prefix(inst.scores, inst.max_workers)
        return Outcome("feasible", P.WorkerSelectSolution(r.selected),
                       reported_objective=r.value, details=_record(r, "algorithm-1"))
    reason = _dp_size(inst)
    if reason:
        return Outcome("error", details={"message": reason})
    r = select_costs_dp(inst.scores, inst.costs, inst.budget, inst.max_workers)
    if r is None:
        return Outcome("infeasible", details={"message": "no worker's cost fits the budget"})
    return Outcome("feasible", P.WorkerSelectSolution(r.selected), reported_objective=r.value,
                   details=_record(r, "cost-dp"))


def solve_dp(inst: P.WorkerSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """The integer-cost DP as an exact method: it enumerates every (size, spend) state."""
    r = select_costs_dp(inst.scores, inst.costs, inst.budget, inst.max_workers)
    if r is None:
        return Outcome("infeasible", details={"message": "no worker's cost fits the budget"})
    return Outcome("optimal", P.WorkerSelectSolution(r.selected), r.value,
                   "integer-cost DP (every size and spend)", r.value, _record(r, "cost-dp"))


def _solve_lexicographic(inst: P.WorkerSelectInstance, opts: RunOptions | None,
                         build) -> Outcome:
    """Stage 1: max F_hat at gap 0; stage 2: min |S| s.t. F_hat >= F* - tol (digest 2.5)."""
    from ..models.worker_select import PRESOLVE, add_second_pass, decode
    from .highs import Status, solve_model

    opts = opts or RunOptions()
    t0 = time.perf_counter()
    m = build(inst)
    build_s = time.perf_counter() - t0
    hopts = opts.highs(presolve=PRESOLVE[m.kind], known_feasible=not inst.has_costs)
    presolve = hopts.presolve
    res1 = solve_model(m, hopts)
    details = {"model": m.kind, "presolve": presolve, "build_s": build_s,
               "stage1": res1.summary(), "nodes": res1.nodes}
    if res1.status is Status.INFEASIBLE:
        return Outcome("infeasible", details=details)
    if res1.x is None:
        return Outcome(res1.status, None, res1.bound, "milp-dual-bound", details=details)
    sol = decode(inst, m, res1)
    ev1 = P.evaluate(inst, sol)
    if res1.status is not Status.OPTIMAL or not ev1.feasible:
        return Outcome(res1.status, sol, res1.bound, "milp-dual-bound", res1.objective,
                       details)
    floor = ev1.objective - tie_tol(ev1.objective)
    add_second_pass(m, floor)
    left = None
    if opts.time_limit is not None:
        left = max(opts.time_limit - (time.perf_counter() - t0), 1.0)
    res2 = solve_model(m, hopts.replace(time_limit=left, known_feasible=True,
                                        extra=_SECOND_PASS_TOLERANCES))
    details["stage2"] = res2.summary()
    details["second_pass"] = "kept stage 1"
    if res2.x is not None:
        sol2 = decode(inst, m, res2)
        ev2 = P.evaluate(inst, sol2)
        if ev2.feasible and ev2.objective >= floor and len(sol2.selected) <= len(sol.selected):
            sol = sol2
            details["second_pass"] = str(res2.status)
    details["k"] = len(sol.selected)
    details["time_s"] = time.perf_counter() - t0
    return Outcome("optimal", sol, res1.bound, "milp-dual-bound", res1.objective, details)


def solve_formulation_a(inst: P.WorkerSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact selection by formulation A (digest 2.4 A) and the |S|-minimizing second pass."""
    from ..models.worker_select import build_formulation_a

    return _solve_lexicographic(inst, opts, build_formulation_a)


def solve_compact(inst: P.WorkerSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact selection by the compact McCormick model (digest 2.4 B), small instances only."""
    from ..models.worker_select import build_compact

    return _solve_lexicographic(inst, opts, build_compact)


def _a_size(inst: P.WorkerSelectInstance) -> str | None:
    n = inst.n_workers * inst.cap
    if n > FORMULATION_A_MAX_BINARIES:
        return f"formulation A too large (M*B = {n} binaries > {FORMULATION_A_MAX_BINARIES})"
    return None


def _compact_size(inst: P.WorkerSelectInstance) -> str | None:
    if inst.n_workers > COMPACT_MAX_WORKERS:
        return (f"compact model only for M <= {COMPACT_MAX_WORKERS} (weak relaxation); "
                "use milp-a")
    return None


def _dp_size(inst: P.WorkerSelectInstance) -> str | None:
    if not inst.has_costs:
        return "the DP is for instances with costs (Algorithm 1 is exact without them)"
    if dp_cells(inst) > DP_MAX_CELLS:
        return f"DP table too large ({dp_cells(inst)} cells > {DP_MAX_CELLS}); use milp-a"
    return None


SPEC = ProblemSpec.from_module(
    P,
    name="worker-select",
    title="Worker selection: max sum G / sqrt|S|, |S| <= K (optional costs and budget)",
    paper="004 (Li & Liu), eq. 11, Algorithm 1, Theorem 4",
    sense="max",
    methods=(
        Method("sort-scan", "fast", _fast,
               "Algorithm 1 (sort by G, scan every prefix, smallest best k); "
               "with costs the exact integer-cost DP"),
        Method("milp-a", "exact", solve_formulation_a,
               "formulation A (per-cardinality selectors), HiGHS gap 0, then min |S| among optima",
               applicable=_a_size, time_limit=MILP_DEFAULT_TIME),
        Method("milp-compact", "exact", solve_compact,
               "compact McCormick model, HiGHS gap 0, then min |S| (small instances)",
               applicable=_compact_size, time_limit=MILP_DEFAULT_TIME),
        Method("cost-dp", "exact", solve_dp, "integer-cost DP over (worker, size, spend)",
               applicable=_dp_size),
    ),
)
