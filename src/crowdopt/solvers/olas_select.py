"""Solvers of OLAS Model 10: the corrected Algorithm 1 fast path and exact references.

- `select_greedy` (Theorem 2 / digest A3'): scan the entropy-sorted pool once; labeler i (by
  accuracy) takes the c_i points starting at r_i = max(rho_i, r_{i-1} + c_{i-1}), where rho_i is
  its first allowed point; stop at the end of the pool or at the budget cap B (digest F3).
  O(u log u + M log M + M u) with numpy, the O(M u) part being the shared `allowed` matrix.
- exact references: the formulations of models/olas_select.py (builder, array emitter,
  settings and passes) run by solvers/exact_runner.py, HiGHS, gap 0: `solve_prefix_lp`
  (full-size pools), `solve_bmatching_lp`, `solve_compact` (MILP, medium) and `solve_literal`
  (the paper's MILP, small pools). The TU models are solved as LPs (digest F1, F2); the pass
  checks that the returned vertex is integral and falls back to the MILP if not.
- `assign_theorem1` (problems/olas_select.py): the canonical (Theorem 1) assignment of a
  selected set; LP methods use it to turn a selection into the assignment that also satisfies
  (10e)-(10h) (digest F1).
"""

from __future__ import annotations

import numpy as np

from ..problems import olas_select as P
from ..problems.catalogue import Outcome, RunOptions

# Pyomo and HiGHS load only inside the exact methods: the greedy fast path imports neither.


def select_greedy(inst: P.OlasSelectInstance) -> P.OlasSelectSolution:
    """Corrected Algorithm 1 (A3'): contiguous blocks r_i..r_i+c_i-1, truncated at B.

    `selected` lists pool indices in entropy order (descending, ties by pool order) and
    `assignment` the labeler index of each; the objective is optimal for (10a)-(10i) + B.
    """
    ol, op = inst.labeler_order(), inst.point_order()
    u = inst.n_points
    rho = P.first_allowed(inst)  # staircase (validated by make_instance): one row at a time
    caps = inst.capacities[ol]
    limit = inst.max_selected
    pos: list[np.ndarray] = []
    lab: list[np.ndarray] = []
    v = taken = 0
    for k in range(len(ol)):
        if taken >= limit:
            break
        v = max(v, int(rho[k]))  # r_k: never move backwards (worse labelers are noisier)
        if v >= u:
            break  # r_k and every later r do not exist
        take = min(int(caps[k]), u - v, limit - taken)
        if take > 0:
            pos.append(np.arange(v, v + take))
            lab.append(np.full(take, ol[k], dtype=np.int64))
            taken += take
        v += int(caps[k])
    if not pos:
        return P.OlasSelectSolution(np.zeros(0, np.int64), np.zeros(0, np.int64))
    return P.OlasSelectSolution(op[np.concatenate(pos)].astype(np.int64), np.concatenate(lab))


# ---------------------------------------------------------------------------- exact references

# milp-literal and milp-compact have time guards fitted across pool shapes by
# benchmarks/bench_guards.py (solvers/guards.py); the LPs have none (memory binds first).


def _empty() -> P.OlasSelectSolution:
    return P.OlasSelectSolution(np.zeros(0, np.int64), np.zeros(0, np.int64))


def _solve(name: str, inst: P.OlasSelectInstance, opts: RunOptions | None,
           route: str = "arrays") -> Outcome:
    """Run the formulation `name` of models/olas_select.py through the exact runner (its
    settings and passes); an instance with nothing to select is answered without HiGHS."""
    if inst.max_selected == 0 or not (P.first_allowed(inst) < inst.n_points).any():
        return Outcome("optimal", _empty(), 0.0, "empty (no allowed pair or no capacity)", 0.0)
    from ..models.olas_select import FORMULATIONS
    from .exact_runner import solve_exact

    return solve_exact(FORMULATIONS[name], inst, opts or RunOptions(), route)


def solve_literal(inst: P.OlasSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact: the paper's MILP (10a)-(10i) with pairwise (10e), HiGHS, gap 0 (small pools).
    Time guard fitted by bench_guards.py (solvers/guards.py)."""
    return _solve("milp-literal", inst, opts)


def solve_compact(inst: P.OlasSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact: the compact w-formulation MILP, HiGHS, gap 0 (medium pools). Time guard
    fitted by bench_guards.py (solvers/guards.py)."""
    return _solve("milp-compact", inst, opts)


def solve_prefix_lp(inst: P.OlasSelectInstance, opts: RunOptions | None = None, *,
                    route: str = "arrays") -> Outcome:
    """Exact: the Hall prefix model (digest F2), O(u + M) rows, solved as its LP (TU, the
    vertex checked integral, else the MILP); Theorem 1 assignment of the selection.

    route "arrays" (the registered method): `models.olas_select.emit_prefix_lp`; "pyomo": the
    builder `build_model10_prefix_lp`, compiled once. Same matrix, settings and passes.
    No size guard: bench_exact_overhead.py measured 0.10 s at u = 100,000 (M = 17), t ~ u^0.9,
    0.6 KB per column, so ~60 s lies near u = 6e7, where memory (~36 GB) binds first.
    """
    return _solve("lp-prefix", inst, opts, route)


def solve_bmatching_lp(inst: P.OlasSelectInstance, opts: RunOptions | None = None, *,
                       route: str = "arrays") -> Outcome:
    """Exact: the b-matching model (10a)-(10d) (digest F1) solved as its LP (TU, checked);
    the Theorem 1 assignment of the selection.

    route "arrays" (the registered method): `models.olas_select.emit_bmatching_lp`; "pyomo":
    the builder `build_model10_bmatching_lp`, compiled once. Same matrix, settings and passes.
    No size guard: bench_exact_overhead.py measured 0.41 s at 680,000 columns (u = 40,000,
    M = 17), t ~ n^1.0, 0.37 KB per column, so ~60 s lies near 1e8 columns, where memory
    (~37 GB) binds first.
    """
    return _solve("lp-bmatching", inst, opts, route)


def _fast(inst: P.OlasSelectInstance, opts: RunOptions) -> Outcome:
    return Outcome("feasible", select_greedy(inst))
