"""Solvers of OLAS Model 2: the Theorem 1 sorted fast path and two exact references.

- `assign_sorted` (problems/olas_assign.py; Theorem 1 / digest A2): sort points by entropy and
  labelers by accuracy, both descending (stable), and fill the labelers' capacity slots in that
  order. O(N log N + M log M).
- `solve_threshold` (what `exact` means): the polynomial bottleneck method (digest 000 section
  6.1): binary search over the distinct eps values for the least threshold that admits a
  feasible assignment, checked by the nested Hall condition. It returns the optimum with a
  proof: the next smaller value is infeasible, so the optimum is also a lower bound.
- `solve_milp`: the epigraph MILP (models/olas_assign.py) through the HiGHS adapter, gap 0; a
  cross-check only, with the default MILP time limit; time guard fitted by bench_guards.py
  (solvers/guards.py).
"""

from __future__ import annotations

import numpy as np

from ..problems import olas_assign as P
from ..problems.catalogue import Outcome, RunOptions
from ..problems.olas_assign import assign_sorted


def _fast(inst: P.OlasAssignInstance, opts: RunOptions) -> Outcome:
    if not inst.feasible:
        return Outcome("infeasible", details={"message": "more points than total capacity"})
    return Outcome("feasible", assign_sorted(inst))


def solve_milp(inst: P.OlasAssignInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact Model 2 by the epigraph MILP and HiGHS (mip gap 0): a cross-check of `threshold`.
    Stopped by its time limit it returns the incumbent and the MIP dual bound. Time guard
    fitted by bench_guards.py (solvers/guards.py)."""
    from ..models.olas_assign import FORMULATIONS  # Pyomo loads only for exact solves
    from .exact_runner import solve_exact

    if inst.n_points == 0:
        return Outcome("optimal", P.OlasAssignSolution(np.zeros(0, np.int64)), 0.0, "empty", 0.0)
    return solve_exact(FORMULATIONS["milp-epigraph"], inst, opts or RunOptions())


def _hall_feasible(eps_sorted: np.ndarray, cum_cap: np.ndarray, theta: float) -> bool:
    """Is there an assignment with every eps <= theta? (labelers sorted by accuracy, desc.)

    By monotonicity the labelers allowed for point j form a prefix of length kappa_j; the
    nested Hall condition #{j : kappa_j <= i} <= C_i for all i is necessary and sufficient.
    """
    kappa = (eps_sorted <= theta).sum(axis=0)
    if (kappa == 0).any():
        return False
    counts = np.bincount(kappa, minlength=len(cum_cap) + 1)[1:]
    return bool(np.all(np.cumsum(counts) <= cum_cap))


def solve_threshold(inst: P.OlasAssignInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact Model 2 by bottleneck threshold search; proof = the next smaller value fails Hall.

    No size guard: O(N M log(N M)); bench_exact_overhead.py measured 3.2 s at N = 1.6M, M = 17
    (27M eps entries, t ~ n^1.3), so ~60 s lies beyond ~250M entries, where the instance's own
    eps matrix (8 bytes an entry, 2 GB) binds first."""
    if not inst.feasible:
        return Outcome("infeasible", details={"message": "more points than total capacity"})
    if inst.n_points == 0:
        return Outcome("optimal", P.OlasAssignSolution(np.zeros(0, np.int64)), 0.0, "empty")
    order_l = inst.labeler_order()
    eps = inst.eps_matrix()[order_l]
    cum_cap = np.cumsum(inst.capacities[order_l])
    values = np.unique(eps)
    lo, hi = 0, len(values) - 1  # values[hi] is feasible (every pair allowed)
    while lo < hi:
        mid = (lo + hi) // 2
        if _hall_feasible(eps, cum_cap, values[mid]):
            hi = mid
        else:
            lo = mid + 1
    theta = float(values[lo])
    # Theorem 1's assignment attains theta; the threshold proves it is optimal.
    sol = assign_sorted(inst)
    return Outcome("optimal", sol, theta, "bottleneck-threshold (Hall)", theta,
                   {"thresholds_tested": int(np.ceil(np.log2(len(values) + 1)))})


