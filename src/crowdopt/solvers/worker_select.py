"""Solvers of worker selection (paper 004): Algorithm 1, the integer-cost DP, two exact MILPs.

- `select_prefix` (Algorithm 1, Theorem 4): sort the workers by G (descending, ties by index),
  scan EVERY prefix k = 1..min(K, M) (the curve is not unimodal, digest 2.3) and return the
  smallest k whose F_k = T_k/sqrt(k) is within the shared tie tolerance of the maximum.
  Exact because a fixed-size set is best when it is the top k (digest 3.2). O(M log M).
- `select_costs_dp` (extension, digest 2.6): with integer costs Algorithm 1 is not exact; a DP
  over (worker, size, spend) gives best[k][b] = max sum of x, then max_k max_b best/sqrt(k).
  O(M B C) time and memory for the choice table.
- `solve_formulation_a` / `solve_compact`: the formulations of models/worker_select.py (formulation
  A emitted as arrays) through solvers/exact_runner.py with gap 0, then their second pass of
  digest 2.5 (F_hat >= F* - tol, minimize |S|), so the exact path returns the same k* as
  Algorithm 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..problems import worker_select as P
from ..problems.catalogue import Outcome, RunOptions
from ..problems.worker_select import tie_tol
from .guards import MEMORY_MAX_GB

# Pyomo and HiGHS are imported inside the exact methods: the fast path (used in experiment loops
# and `crowdopt select`) must not pay Pyomo's import time.

# milp-a and milp-compact have time guards fitted by benchmarks/bench_guards.py across shapes
# (solvers/guards.py). What stays here are MEMORY guards, from bench_exact_overhead.py:
# - milp-a: 1.44 KB per binary with uniform costs (8.6 GB at 6M binaries), 3 KB with costs
#   (4.5 GB at 1.5M): refused past FORMULATION_A_MAX_GB.
# - cost-dp (M*B*(C+1) cells): a one-byte choice table per cell, 0.16 s at 1.05e8 cells; memory
#   binds long before time (60 s would be ~4e10 cells, 40 GB): 2e8 cells = 200 MB.
FORMULATION_A_MAX_GB = MEMORY_MAX_GB  # the one memory cap of the Pyomo-built MILPs
FORMULATION_A_KB_PER_BINARY = {False: 1.44, True: 3.0}  # has costs -> KB
DP_MAX_CELLS = 200_000_000


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
    """The integer-cost DP's table size (workers x sizes x spend)."""
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


def _solve(name: str, inst: P.WorkerSelectInstance, opts: RunOptions | None,
           route: str = "arrays") -> Outcome:
    """Run the formulation `name` of models/worker_select.py (its settings and its two-stage
    pass) through the exact runner."""
    from ..models.worker_select import FORMULATIONS
    from .exact_runner import solve_exact

    return solve_exact(FORMULATIONS[name], inst, opts or RunOptions(), route)


def solve_formulation_a(inst: P.WorkerSelectInstance, opts: RunOptions | None = None, *,
                        route: str = "arrays") -> Outcome:
    """Exact selection by formulation A (digest 2.4 A) and the |S|-minimizing second pass
    (`models.worker_select.lexicographic`).

    route "arrays" (the registered method): `models.worker_select.emit_formulation_a`, the
    same matrix straight from numpy; "pyomo": the builder `build_formulation_a` compiled once.
    Same settings (presolve off) and passes.

    Time guard fitted by bench_guards.py (solvers/guards.py); memory guard
    FORMULATION_A_MAX_GB (the note at the constants gives the memory per binary).
    """
    return _solve("milp-a", inst, opts, route)


def solve_compact(inst: P.WorkerSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact selection by the compact McCormick model (digest 2.4 B), small instances only.

    Pyomo-built (M + B binaries: the build is negligible next to HiGHS), compiled once; the
    second pass runs on the same live model. Time guard fitted by bench_guards.py
    (solvers/guards.py): the weak relaxation grows fast with M.
    """
    return _solve("milp-compact", inst, opts)


def _a_size(inst: P.WorkerSelectInstance) -> str | None:
    """Memory guard of formulation A (M*B binaries at the measured KB per binary)."""
    n = inst.n_workers * inst.cap
    gb = n * FORMULATION_A_KB_PER_BINARY[bool(inst.has_costs)] / 2 ** 20
    if gb > FORMULATION_A_MAX_GB:
        return (f"memory: formulation A has M*B = {n} binaries, ~{gb:.3g} GB > "
                f"{FORMULATION_A_MAX_GB:g} GB")
    return None


def _dp_size(inst: P.WorkerSelectInstance) -> str | None:
    if not inst.has_costs:
        return "the DP is for instances with costs (Algorithm 1 is exact without them)"
    if dp_cells(inst) > DP_MAX_CELLS:
        return (f"memory: DP table too large ({dp_cells(inst)} cells > {DP_MAX_CELLS}); "
                "use milp-a")
    return None
