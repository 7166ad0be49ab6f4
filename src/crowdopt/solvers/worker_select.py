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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..problems import worker_select as P
from ..problems.catalogue import Outcome, RunOptions
from ..problems.worker_select import tie_tol

# Pyomo and HiGHS are imported inside the exact methods: the fast path (used in experiment loops
# and `crowdopt select`) must not pay Pyomo's import time.

# Size guards, each where benchmarks/bench_exact_overhead.py (`--guards`, seed 0) measured about
# 60 s on the 2-core development machine, unless memory binds first:
# - milp-a, uniform costs (M*B binaries; the integral LP and its warm shrink pass): 0.7 s at
#   0.3M, 11.9 s and 2.9 GB at 2M, 49.5 s and 8.6 GB at 6M binaries (t ~ n^1.3, 1.44 KB each).
# - milp-a with costs (the MILP, 3 KB per binary): 3.9 s at 0.16M, 36.7 s and 3.0 GB at 1.0M,
#   65 s and 4.5 GB at 1.5M binaries (M = B = 1224).
# - milp-compact (M workers, weak relaxation): 0.72 s at M = 60, 26 s at 120, 30 s at 140
#   (t ~ M^4.4): ~60 s at M = 160.
# - cost-dp (M*B*(C+1) cells): a one-byte choice table per cell, 0.16 s at 1.05e8 cells; memory
#   binds long before time (60 s would be ~4e10 cells, 40 GB): 2e8 cells = 200 MB.
FORMULATION_A_MAX_BINARIES = 6_000_000
FORMULATION_A_COSTS_MAX_BINARIES = 1_500_000
# presolve for formulation A (digest 2.4: presolve dominates its time); the same setting as
# models.worker_select.PRESOLVE["formulation-a"] (a test checks they agree)
PRESOLVE_A = False
INTEGRAL_TOL = 1e-7  # an LP vertex farther than this from integers is fractional
INF_ = float("inf")
COMPACT_MAX_WORKERS = 160
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


@dataclass
class LexModel:
    """A worker-selection MILP loaded into HiGHS, with what the two stages need.

    `value` and `size()` are the coefficient vectors of F_hat and |S| over the model's columns
    (`size` made on demand: only the MILP pass needs it, and memory peaks in HiGHS),
    `card[j]` the cardinality k a column belongs to (0 if none) and `decode(res)` the selected
    worker indices (positions) of a solved `HighsResult`.
    """

    model: Any  # a live solvers.highs.HighsModel
    int_cols: np.ndarray  # the binary columns
    value: np.ndarray
    size: Callable[[], np.ndarray]
    card: np.ndarray
    decode: Callable[[Any], np.ndarray]
    kind: str
    build_s: float
    route: str


def formulation_a_arrays(inst: P.WorkerSelectInstance) -> dict[str, Any]:
    """Formulation A (digest 2.4 A; cost rows of 2.6) as HiGHS arrays, straight from numpy.

    The same model as `models.worker_select.build_formulation_a` (tests/test_worker_select.py
    checks both give the same optimum). Columns: y_k (k = 1..B) first, then z_ik at
    B + (k-1) M + i. Rows: sum_k y_k = 1; sum_i z_ik - k y_k = 0 (k = 1..B); z_ik - y_k <= 0
    (row 1 + B + (k-1) M + i); with costs sum_i c_i z_ik - C y_k <= 0 (k = 1..B). About 4 nonzeros
    (5 with costs) per binary, int32 indices: no Pyomo object is made.
    """
    import scipy.sparse as sp

    x = np.asarray(inst.scores, dtype=float)
    M, B = inst.n_workers, inst.cap
    costs = inst.costs is not None
    nz = M * B
    n = B + nz
    k = np.arange(1, B + 1)
    link0 = 1 + B  # first link row
    cost0 = link0 + nz  # first cost row
    m_rows = cost0 + (B if costs else 0)
    # y_k: [one_size, card_k, link (k, 0..M-1), cost_k]
    ny = M + 2 + (1 if costs else 0)
    y_idx = np.empty((B, ny), dtype=np.int32)
    y_val = np.empty((B, ny), dtype=float)
    y_idx[:, 0], y_val[:, 0] = 0, 1.0
    y_idx[:, 1], y_val[:, 1] = k, -k
    y_idx[:, 2:M + 2] = link0 + (k[:, None] - 1) * M + np.arange(M)[None, :]
    y_val[:, 2:M + 2] = -1.0
    if costs:
        y_idx[:, -1], y_val[:, -1] = cost0 + k - 1, -float(inst.budget)
    # z_ik: [card_k, link (k, i), cost_k if c_i != 0]
    kk = np.repeat(k, M)
    ii = np.tile(np.arange(M), B)
    z_rows = [kk, link0 + (kk - 1) * M + ii]
    z_vals = [np.ones(nz), np.ones(nz)]
    z_count = np.full(nz, 2, dtype=np.int64)
    if costs:
        c = np.asarray(inst.costs, dtype=float)
        keep = np.tile(c != 0, B)
        z_count += keep
        z_rows.append(np.where(keep, cost0 + kk - 1, -1))
        z_vals.append(np.tile(c, B))
    z_idx = np.stack(z_rows, axis=1).astype(np.int32)
    z_val = np.stack(z_vals, axis=1)
    if costs:  # drop the zero-cost entries (the Pyomo builder omits them too)
        mask = z_idx >= 0
        z_idx, z_val = z_idx[mask], z_val[mask]
    indptr = np.concatenate([[0], np.cumsum(np.concatenate([np.full(B, ny), z_count]))])
    A = sp.csc_array((np.concatenate([y_val.ravel(), z_val.ravel()]),
                      np.concatenate([y_idx.ravel(), z_idx.ravel()]),
                      indptr.astype(np.int32)), shape=(m_rows, n))
    root = 1.0 / np.sqrt(k.astype(float))
    value = np.concatenate([np.zeros(B), (root[:, None] * x[None, :]).ravel()])
    row_lo = np.full(m_rows, -INF_)
    row_hi = np.zeros(m_rows)
    row_lo[0] = row_hi[0] = 1.0
    row_lo[1:B + 1] = 0.0
    return {"c": value, "A": A, "row_lo": row_lo, "row_hi": row_hi,
            "col_lo": np.zeros(n), "col_hi": np.ones(n), "integrality": np.ones(n, np.int32),
            "card": np.concatenate([k, kk]).astype(np.int32), "M": M, "B": B}



def _load_a_arrays(inst: P.WorkerSelectInstance, hopts: Any) -> LexModel:
    from .highs import HighsModel

    t0 = time.perf_counter()
    a = formulation_a_arrays(inst)
    build_s = time.perf_counter() - t0
    # uniform costs: loaded as the LP (integral, see _solve_lexicographic); costs: the MILP
    integ = None if inst.costs is None else a["integrality"]
    hm = HighsModel.from_arrays(a["c"], a["A"], a["row_lo"], a["row_hi"], a["col_lo"], a["col_hi"],
                                integ, sense="max", options=hopts)
    M, B = a["M"], a["B"]

    def decode(res: Any) -> np.ndarray:
        z = res.x[B:].reshape(B, M)
        return np.flatnonzero(z.max(axis=0, initial=0.0) > 0.5).astype(np.int64)

    def size() -> np.ndarray:  # |S| = sum_k k y_k; made only if the MILP pass needs it
        return np.concatenate([np.arange(1, B + 1, dtype=float), np.zeros(M * B)])

    return LexModel(hm, np.arange(hm.num_col, dtype=np.int32), a["c"], size, a["card"], decode,
                    "formulation-a", build_s, "arrays")


def _load_pyomo(inst: P.WorkerSelectInstance, hopts: Any, build: Callable) -> LexModel:
    """A Pyomo builder of models/worker_select.py compiled once (the reference route)."""
    from pyomo.repn import generate_standard_repn

    from ..models.worker_select import decode as decode_model
    from .highs import HighsModel

    t0 = time.perf_counter()
    m = build(inst)
    build_s = time.perf_counter() - t0
    hm = HighsModel.from_pyomo(m, hopts)
    n = hm.num_col
    col = hm._columns

    def coefficients(expr: Any) -> np.ndarray:
        out = np.zeros(n)
        repn = generate_standard_repn(expr, compute_values=True)
        for v, a in zip(repn.linear_vars, repn.linear_coefs, strict=True):
            out[col[id(v)]] += float(a)
        return out

    card = np.zeros(n, dtype=np.int64)
    for k, v in m.y.items():
        card[col[id(v)]] = k
    if m.z.dim() == 2:
        for (_, k), v in m.z.items():
            if id(v) in col:
                card[col[id(v)]] = k

    def decode(res: Any) -> np.ndarray:
        return decode_model(inst, m, res).selected

    size = coefficients(m.size)
    return LexModel(hm, np.flatnonzero(hm._integrality), coefficients(m.value),
                    lambda: size, card, decode, m.kind, build_s, "pyomo")


def lp_bound_proves(lp_max: float, floor: float) -> bool:
    """The LP optimum over the smaller sizes is an upper bound on F_hat of every smaller set (a
    relaxation): below the floor by more than HiGHS's tolerances, no smaller set is optimal."""
    return lp_max < floor - 1e-7 * max(1.0, abs(floor))


def _shrink_lp(inst: P.WorkerSelectInstance, lm: LexModel, sol: P.WorkerSelectSolution,
               floor: float, stage2: Any, details: dict) -> tuple[P.WorkerSelectSolution, bool]:
    """Stage 2 on the integral LP (uniform costs): fix out every size >= k = |best| and re-solve
    max F_hat by dual simplex, warm: only bounds change, so the stage-1 basis stays dual feasible
    (no row, no new costs). An optimum below the floor proves that no smaller set reaches
    F* - tol; an integral vertex at or above it is a smaller optimal set (k shrinks, repeat).
    Returns (best set, proven); unproven (a fractional or inconsistent vertex) leaves the MILP
    pass to the caller."""
    from .highs import Status

    hm = lm.model
    hm.options = stage2.replace(extra=stage2.extra + (("simplex_strategy", 1),))
    best, runs = sol, []
    while len(best.selected) > 1:
        hm.set_col_bounds(np.flatnonzero(lm.card >= len(best.selected)), 0.0, 0.0)
        res = hm.solve()
        runs.append(res.summary())
        details["stage2"] = {**res.summary(), "lp_runs": len(runs)}
        if res.status is Status.INFEASIBLE:
            return best, True
        if res.status is not Status.OPTIMAL or res.x is None:
            return best, False
        if lp_bound_proves(res.objective, floor):
            return best, True
        cand = P.WorkerSelectSolution(lm.decode(res))
        ev = P.evaluate(inst, cand)
        if not (ev.feasible and ev.objective >= floor
                and len(cand.selected) < len(best.selected)):
            return best, False
        best = cand
    return best, True


def _solve_lexicographic(inst: P.WorkerSelectInstance, opts: RunOptions | None,
                         load: Callable[[Any], LexModel], presolve: bool,
                         integral_lp: bool = False) -> Outcome:
    """Stage 1: max F_hat, exact; stage 2 (digest 2.5): min |S| s.t. F_hat >= F* - tol.

    Both stages run on ONE live HiGHS model, nothing is rebuilt or recompiled.

    integral_lp (formulation A with uniform costs: its LP relaxation is Balas' disjunctive hull,
    integral, digest 2.4 A): stage 1 is the LP (dual simplex), its vertex checked integral (else
    the columns are made integer and the MILP is solved, gap 0), and its optimum is the bound.
    Stage 2 is `_shrink_lp`: bound changes and warm dual simplex re-solves of the same LP.
    Otherwise (and if `_shrink_lp` cannot conclude) stage 2 is the MILP min |S| s.t.
    F_hat >= floor on the live model: the floor row added, the costs changed to |S|, the sizes
    above the best set's fixed out (that set is feasible, so they cannot be needed), gap 0,
    started from the stage-1 point.
    """
    import scipy.sparse as sp

    from .highs import Status, highs_options

    opts = opts or RunOptions()
    t0 = time.perf_counter()
    hopts = highs_options(opts, presolve=presolve, known_feasible=not inst.has_costs,
                          lp_solver="simplex" if integral_lp else "choose")
    presolve = hopts.presolve  # an explicit --presolve overrides the model's setting
    lm = load(hopts)
    hm = lm.model
    ints = np.flatnonzero(hm._integrality) if not integral_lp else lm.int_cols
    if integral_lp and hm.is_mip:
        hm.set_integrality(ints, False)
    res1 = hm.solve()
    details: dict[str, Any] = {"model": lm.kind, "route": lm.route, "presolve": presolve,
                               "build_s": lm.build_s, "compile_s": hm.compile_s,
                               "stage1": res1.summary(), "nodes": res1.nodes}
    source = "milp-dual-bound"
    if integral_lp and res1.x is not None and res1.status is Status.OPTIMAL:
        frac = float(np.max(np.abs(res1.x[ints] - np.round(res1.x[ints])), initial=0.0))
        details.update(lp_integral=frac <= INTEGRAL_TOL, lp_max_fractionality=frac)
        if frac > INTEGRAL_TOL:  # never expected (disjunctive hull): solve the MILP instead
            hm.set_integrality(ints, True)
            res1 = hm.solve()
            details.update(fallback="milp", stage1=res1.summary(), nodes=res1.nodes)
        else:
            source = "lp-relaxation (integral vertex, disjunctive hull)"
    if res1.status is Status.INFEASIBLE:
        return Outcome("infeasible", details=details)
    if res1.x is None:
        return Outcome(res1.status, None, res1.bound, source, details=details)
    x1 = res1.x
    sol = P.WorkerSelectSolution(lm.decode(res1))
    ev1 = P.evaluate(inst, sol)
    if res1.status is not Status.OPTIMAL or not ev1.feasible:
        return Outcome(res1.status, sol, res1.bound, source, res1.objective, details)
    floor = ev1.objective - tie_tol(ev1.objective)
    k1 = len(sol.selected)
    details["second_pass"] = "kept stage 1"
    if k1 > 1:  # |S| >= 1: a one-worker optimum is already the smallest
        def left() -> float | None:
            if opts.time_limit is None:
                return None
            return max(opts.time_limit - (time.perf_counter() - t0), 1.0)

        stage2 = hopts.replace(time_limit=left(), known_feasible=True,
                               extra=_SECOND_PASS_TOLERANCES)
        best, proven = sol, False
        if not hm.is_mip:  # the integral LP: shrink by bound changes, warm dual simplex
            best, proven = _shrink_lp(inst, lm, sol, floor, stage2, details)
            if proven:
                details["second_pass"] = "lp (smaller sizes bounded below the floor)"
            else:  # the MILP below, on the same live model with only sizes > |best| fixed
                hm.set_col_bounds(np.flatnonzero(lm.card > 0), 0.0, 1.0)
                hm.set_integrality(ints, True)
                details["stage2_lp"] = details.pop("stage2", None)
        if not proven:
            hm.add_rows([floor], [INF_], sp.csr_array(lm.value[None, :]))
            hm.set_objective(lm.size(), sense="min")
            above = np.flatnonzero(lm.card > len(best.selected))
            if above.size:
                hm.set_col_bounds(above, 0.0, 0.0)
            if best is sol:
                hm.set_start(np.round(x1))
            hm.options = stage2.replace(time_limit=left())
            res2 = hm.solve()
            details["stage2"] = res2.summary()
            if res2.x is not None:
                cand = P.WorkerSelectSolution(lm.decode(res2))
                ev2 = P.evaluate(inst, cand)
                if ev2.feasible and ev2.objective >= floor and \
                        len(cand.selected) <= len(best.selected):
                    best = cand
                    details["second_pass"] = str(res2.status)
        sol = best
    details["k"] = len(sol.selected)
    details["time_s"] = time.perf_counter() - t0
    return Outcome("optimal", sol, res1.bound, source, res1.objective, details)


def solve_formulation_a(inst: P.WorkerSelectInstance, opts: RunOptions | None = None, *,
                        route: str = "arrays") -> Outcome:
    """Exact selection by formulation A (digest 2.4 A) and the |S|-minimizing second pass.

    route "arrays" (the registered method): the model is built straight from numpy
    (`formulation_a_arrays`), presolve off; "pyomo": the reference Pyomo builder
    `models.worker_select.build_formulation_a` compiled once. Both give the same optimum.

    Size guards (M*B binaries), measured by bench_exact_overhead.py --guards at ~60 s:
    FORMULATION_A_MAX_BINARIES (6M) for uniform costs, FORMULATION_A_COSTS_MAX_BINARIES (1.5M)
    with costs; the notes at the constants give the timings.
    """
    if route == "pyomo":
        from ..models.worker_select import PRESOLVE, build_formulation_a

        return _solve_lexicographic(inst, opts, lambda h: _load_pyomo(inst, h, build_formulation_a),
                                    PRESOLVE["formulation-a"], integral_lp=not inst.has_costs)
    if route != "arrays":
        raise ValueError(f"route must be 'arrays' or 'pyomo', not {route!r}")
    return _solve_lexicographic(inst, opts, lambda h: _load_a_arrays(inst, h), PRESOLVE_A,
                                integral_lp=not inst.has_costs)


def solve_compact(inst: P.WorkerSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact selection by the compact McCormick model (digest 2.4 B), small instances only.

    Pyomo-built (M + B binaries: the build is negligible next to HiGHS), compiled once; the
    second pass runs on the same live model. Size guard COMPACT_MAX_WORKERS (M = 160, ~60 s in
    bench_exact_overhead.py --guards): see its note.
    """
    from ..models.worker_select import PRESOLVE, build_compact

    kind = "compact-costs" if inst.has_costs else "compact"
    return _solve_lexicographic(inst, opts, lambda h: _load_pyomo(inst, h, build_compact),
                                PRESOLVE[kind])


def _a_size(inst: P.WorkerSelectInstance) -> str | None:
    n = inst.n_workers * inst.cap
    lim = FORMULATION_A_COSTS_MAX_BINARIES if inst.has_costs else FORMULATION_A_MAX_BINARIES
    if n > lim:
        return f"formulation A too large (M*B = {n} binaries > {lim})"
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
