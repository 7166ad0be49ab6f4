"""Solvers of OLAS Model 10: the corrected Algorithm 1 fast path and exact references.

- `select_greedy` (Theorem 2 / digest A3'): scan the entropy-sorted pool once; labeler i (by
  accuracy) takes the c_i points starting at r_i = max(rho_i, r_{i-1} + c_{i-1}), where rho_i is
  its first allowed point; stop at the end of the pool or at the budget cap B (digest F3).
  O(u log u + M log M + M u) with numpy, the O(M u) part being the shared `allowed` matrix.
- exact references (models/olas_select.py, HiGHS, gap 0): `solve_prefix_lp` (full-size pools),
  `solve_bmatching_lp`, `solve_compact` (MILP, medium) and `solve_literal` (the paper's MILP,
  small pools). The LPs are exact because their matrices are totally unimodular (digest F1, F2);
  each checks that the returned vertex is integral and falls back to the MILP if not.
- `assign_theorem1` (problems/olas_select.py): the canonical (Theorem 1) assignment of a
  selected set; LP methods use it to turn a selection into the assignment that also satisfies
  (10e)-(10h) (digest F1).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from ..problems import olas_select as P
from ..problems.catalogue import Outcome, RunOptions
from ..problems.olas_select import assign_theorem1
from ..status import Status

# Pyomo and HiGHS load only inside the exact methods: the greedy fast path imports neither.


def select_greedy(inst: P.OlasSelectInstance) -> P.OlasSelectSolution:
    """Corrected Algorithm 1 (A3'): contiguous blocks r_i..r_i+c_i-1, truncated at B.

    `selected` lists pool indices in entropy order (descending, ties by pool order) and
    `assignment` the labeler index of each; the objective is optimal for (10a)-(10i) + B.
    """
    ol, op = inst.labeler_order(), inst.point_order()
    A = P.allowed(inst)[ol][:, op]  # staircase, validated by make_instance
    u = inst.n_points
    rho = np.where(A.any(axis=1), A.argmax(axis=1), u) if u else np.zeros(len(ol), np.int64)
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

# Size guards, from benchmarks/bench_exact_overhead.py `--guards` (seed 0) on the 2-core
# development machine; MILP times vary by instance, so each is the largest size measured near
# (below) 60 s:
# - milp-literal, nominal (10e) rows M(M-1)/2 * u(u-1)/2 (superellipse noise, M = 12): 1.0 s at
#   208,560, 27 s at 737,550, 32 s at 993,366 rows.
# - milp-compact, u*M pairs (Spambase-like pool: linear noise, capacity 16, M = 17): 15 s at
#   20,000, 37 s at 30,600, 32 s at 40,800, 39 s at 61,200 (the sparse superellipse family of
#   the overhead table: 11 s at 136,000).
LITERAL_MAX_ROWS = 1_000_000
COMPACT_MAX_PAIRS = 60_000
INTEGRAL_TOL = 1e-7


def _highs_options(opts: RunOptions, *, lp: bool) -> Any:
    # Model 10 is feasible by construction (y = 0), so an "infeasible" report is a HiGHS presolve
    # defect (digest 6.2): known_feasible makes the adapter retry without presolve.
    from .highs import highs_options

    return highs_options(opts, known_feasible=True, lp_solver="simplex" if lp else "choose")


def _solve(m: Any, opts: RunOptions, *, lp: bool) -> Any:
    """Solve through the adapter. Model 10 is feasible by construction, so `known_feasible`
    makes the adapter re-check any suspicious status (infeasible, 'Solve error', a violated
    'optimal' point) without presolve: the HiGHS 1.14-1.15 defects of digest 6.2."""
    from .highs import solve_model

    return solve_model(m, _highs_options(opts, lp=lp))


def _empty() -> P.OlasSelectSolution:
    return P.OlasSelectSolution(np.zeros(0, np.int64), np.zeros(0, np.int64))


def _outcome(res: Any, sol: P.OlasSelectSolution | None, source: str,
             details: dict) -> Outcome:
    details = {**res.summary(), **details}
    if res.status is Status.OPTIMAL:
        return Outcome("optimal", sol, res.bound, source, res.objective, details)
    if res.status is Status.TIME_LIMIT:
        return Outcome("time_limit", sol, res.bound, source, res.objective, details)
    details.setdefault("message", res.message)
    return Outcome("error", None, None, None, None, details)


def _solve_milp(inst: P.OlasSelectInstance, opts: RunOptions, build: Any, source: str) -> Outcome:
    if inst.max_selected == 0 or not P.allowed(inst).any():
        return Outcome("optimal", _empty(), 0.0, "empty (no allowed pair or no capacity)", 0.0)
    t0 = time.perf_counter()
    m = build(inst)
    build_s = time.perf_counter() - t0
    res = _solve(m, opts, lp=False)
    sol = None
    if res.x is not None:
        from ..models.olas_select import decode

        sol = decode(inst, m, res)
    return _outcome(res, sol, source, {"build_s": build_s})


def solve_literal(inst: P.OlasSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact: the paper's MILP (10a)-(10i) with pairwise (10e), HiGHS, gap 0 (small pools).
    Size guard LITERAL_MAX_ROWS (1M nominal (10e) rows: ~30-60 s in bench_exact_overhead.py
    --guards)."""
    from ..models.olas_select import build_model10_literal

    return _solve_milp(inst, opts or RunOptions(), build_model10_literal, "milp-dual-bound")


def solve_compact(inst: P.OlasSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact: the compact w-formulation MILP, HiGHS, gap 0 (medium pools). Size guard
    COMPACT_MAX_PAIRS (u*M = 60,000: ~40-60 s in bench_exact_overhead.py --guards)."""
    from ..models.olas_select import build_model10_compact

    return _solve_milp(inst, opts or RunOptions(), build_model10_compact, "milp-dual-bound")


def prefix_lp_arrays(inst: P.OlasSelectInstance) -> dict[str, Any]:
    """The Hall prefix LP (digest F2) as HiGHS arrays, straight from numpy.

    The same model as `models.olas_select.build_model10_prefix_lp` (tests check both give the
    same optimum): column j = s_j (j-th point by entropy, descending), cost e_j, bounds [0, 1];
    one row sum_{j < end_i} s_j <= C_i per labeler rank i = 0..M whose prefix adds points
    (end_i = #{j : kappa_j <= i}), then the budget row sum_j s_j <= B if any. Every row is a
    prefix of the columns, so the matrix is built row-wise (CSR): one arange per row.
    """
    import scipy.sparse as sp

    e = np.asarray(inst.entropies, dtype=float)[inst.point_order()]
    c = np.asarray(inst.capacities, dtype=np.int64)[inst.labeler_order()]
    # = P.kappa(inst): count the allowed labelers of each point before reordering the points
    k = np.count_nonzero(P.allowed(inst), axis=0)[inst.point_order()]
    M, u = len(c), len(e)
    cum = np.concatenate([[0], np.cumsum(c)]).astype(float)
    ends = np.searchsorted(k, np.arange(M + 1), side="right")
    prev = np.concatenate([[0], ends[:-1]])
    rows = np.flatnonzero((ends > 0) & ((np.arange(M + 1) == 0) | (ends > prev)))
    lengths = [int(ends[i]) for i in rows]
    row_hi = list(cum[rows])
    if inst.budget is not None and u > 0:
        lengths.append(u)
        row_hi.append(float(inst.budget))
    m_rows = len(lengths)
    indptr = np.zeros(m_rows + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(lengths)
    nnz = int(indptr[-1])
    index = np.empty(nnz, dtype=np.int32)
    for r, n in enumerate(lengths):
        index[indptr[r]:indptr[r + 1]] = np.arange(n, dtype=np.int32)
    A = sp.csr_array((np.ones(nnz), index, indptr.astype(np.int32)), shape=(m_rows, u))
    return {"c": e, "A": A, "row_lo": np.full(m_rows, -np.inf), "row_hi": np.array(row_hi),
            "col_lo": np.zeros(u), "col_hi": np.ones(u), "point_rank": np.arange(u)}


def bmatching_lp_arrays(inst: P.OlasSelectInstance) -> dict[str, Any]:
    """The b-matching LP (10a)-(10d) (digest F1) as HiGHS arrays, straight from numpy.

    The same model as `models.olas_select.build_model10_bmatching_lp`: one column y_ij per
    allowed (labeler rank i, point rank j) pair in row-major order, cost e_j, bounds [0, 1];
    rows: sum_i y_ij <= 1 for every point with an allowed pair, sum_j y_ij <= c_i for every
    labeler with one, then the budget row sum y <= B if any.
    """
    import scipy.sparse as sp

    e = np.asarray(inst.entropies, dtype=float)[inst.point_order()]
    c = np.asarray(inst.capacities, dtype=np.int64)[inst.labeler_order()]
    Aok = P.sorted_allowed(inst)
    li, pj = np.nonzero(Aok)  # row-major: the Pyomo builder's pair order
    n = len(li)
    pts = np.flatnonzero(Aok.any(axis=0))
    labs = np.flatnonzero(Aok.any(axis=1))
    once_row = np.full(len(e), -1, dtype=np.int64)
    once_row[pts] = np.arange(len(pts))
    cap_row = np.full(len(c), -1, dtype=np.int64)
    cap_row[labs] = len(pts) + np.arange(len(labs))
    budget = inst.budget is not None and n > 0
    m_rows = len(pts) + len(labs) + (1 if budget else 0)
    per = 3 if budget else 2
    index = np.empty((n, per), dtype=np.int32)
    index[:, 0] = once_row[pj]
    index[:, 1] = cap_row[li]
    if budget:
        index[:, 2] = m_rows - 1
    indptr = (np.arange(n + 1) * per).astype(np.int32)
    A = sp.csc_array((np.ones(n * per), index.ravel(), indptr), shape=(m_rows, n))
    row_hi = np.concatenate([np.ones(len(pts)), c[labs].astype(float),
                             [float(inst.budget)] if budget else []])
    return {"c": e[pj], "A": A, "row_lo": np.full(m_rows, -np.inf), "row_hi": row_hi,
            "col_lo": np.zeros(n), "col_hi": np.ones(n), "point_rank": pj}


# HiGHS settings of the TU LPs, from raw replays of the same arrays with the settings flipped
# (benchmarks/bench_exact_overhead.py --presolve, the "presolve" table): presolve off, primal
# simplex (simplex_strategy 4). At u = 100,000 (prefix) / 40,000 (b-matching), M = 17, medians
# of 3: dual simplex with presolve on 25.7 s / 10.0 s, primal on 21.1 s / 0.91 s, dual off
# 7.3 s / 9.6 s, primal off 0.13 s / 0.47 s; all four give the same objective and an integral
# vertex (the returned vertex is checked anyway, `_solve_tu_lp`).
TU_LP_PRESOLVE = {"lp-prefix": False, "lp-bmatching": False}
TU_LP_SIMPLEX_STRATEGY = 4  # primal


def _tu_arrays(make: Any, name: str) -> Any:
    """Loader of an array-built TU LP: (HighsModel, selection of a solved result, build_s)."""
    def load(inst: P.OlasSelectInstance, opts: RunOptions) -> tuple[Any, Any, float]:
        from .highs import HighsModel

        t0 = time.perf_counter()
        a = make(inst)
        build_s = time.perf_counter() - t0
        hopts = _highs_options(opts, lp=True).replace(
            presolve=TU_LP_PRESOLVE[name],
            extra=(("simplex_strategy", TU_LP_SIMPLEX_STRATEGY),))
        hm = HighsModel.from_arrays(a["c"], a["A"], a["row_lo"], a["row_hi"], a["col_lo"],
                                    a["col_hi"], None, sense="max", options=hopts)
        order, rank = inst.point_order(), np.asarray(a["point_rank"], dtype=np.int64)
        return hm, (lambda res: order[rank[res.x > 0.5]]), build_s
    return load


def _tu_pyomo(build: Any) -> Any:
    """Loader of a Pyomo-built TU LP (the reference route), compiled once; decoded by the
    public `models.olas_select.decode`."""
    def load(inst: P.OlasSelectInstance, opts: RunOptions) -> tuple[Any, Any, float]:
        from ..models.olas_select import decode
        from .highs import HighsModel

        t0 = time.perf_counter()
        m = build(inst)
        build_s = time.perf_counter() - t0
        hm = HighsModel.from_pyomo(m, _highs_options(opts, lp=True))
        return hm, (lambda res: decode(inst, m, res).selected), build_s
    return load


def _solve_tu_lp(inst: P.OlasSelectInstance, opts: RunOptions, load: Any,
                 source: str) -> Outcome:
    """Solve a TU LP by simplex; check the returned vertex is integral, else make the columns
    integer on the same live model and re-solve it as a MILP (gap 0).

    The selection is given the Theorem 1 assignment (so it also satisfies (10e)-(10h)).
    """
    if inst.max_selected == 0 or not P.allowed(inst).any():
        return Outcome("optimal", _empty(), 0.0, "empty (no allowed pair or no capacity)", 0.0)
    hm, selection, build_s = load(inst, opts)
    res = hm.solve()
    details: dict[str, Any] = {"build_s": build_s, "compile_s": hm.compile_s}
    if res.x is None:
        return _outcome(res, None, source, details)
    x = res.x
    frac = float(np.max(np.abs(x - np.round(x)), initial=0.0))
    details.update(lp_integral=frac <= INTEGRAL_TOL, lp_max_fractionality=frac,
                   lp_objective=res.objective)
    if frac > INTEGRAL_TOL:  # never expected (TU); flag it and fall back to the integer model
        warnings.warn(f"{source}: LP solution fractional by {frac:.3g}; re-solving as a MILP",
                      RuntimeWarning, stacklevel=3)
        from .highs import HighsOptions

        hm.set_integrality(np.arange(hm.num_col), True)
        hm.options = hm.options.replace(lp_solver=HighsOptions().lp_solver, presolve=True,
                                        extra=())
        res = hm.solve()
        details.update(fallback="milp")
        if res.x is None:
            return _outcome(res, None, source, details)
    sol = assign_theorem1(inst, selection(res))
    return _outcome(res, sol, source, details)


def solve_prefix_lp(inst: P.OlasSelectInstance, opts: RunOptions | None = None, *,
                    route: str = "arrays") -> Outcome:
    """Exact: the Hall prefix LP (digest F2), O(u + M) rows; Theorem 1 assignment of s = 1.

    route "arrays" (the registered method): `prefix_lp_arrays`, presolve per TU_LP_PRESOLVE;
    "pyomo": the reference builder `models.olas_select.build_model10_prefix_lp`, compiled once.
    No size guard: bench_exact_overhead.py measured 0.10 s at u = 100,000 (M = 17), t ~ u^0.9,
    0.6 KB per column, so ~60 s lies near u = 6e7, where memory (~36 GB) binds first.
    """
    if route == "pyomo":
        from ..models.olas_select import build_model10_prefix_lp

        load = _tu_pyomo(build_model10_prefix_lp)
    else:
        load = _tu_arrays(prefix_lp_arrays, "lp-prefix")
    return _solve_tu_lp(inst, opts or RunOptions(), load, "lp-prefix (TU, integral)")


def solve_bmatching_lp(inst: P.OlasSelectInstance, opts: RunOptions | None = None, *,
                       route: str = "arrays") -> Outcome:
    """Exact: the b-matching LP (10a)-(10d) (digest F1); Theorem 1 assignment of the selection.

    route "arrays" (the registered method): `bmatching_lp_arrays`; "pyomo": the reference
    builder `models.olas_select.build_model10_bmatching_lp`, compiled once.
    No size guard: bench_exact_overhead.py measured 0.41 s at 680,000 columns (u = 40,000,
    M = 17), t ~ n^1.0, 0.37 KB per column, so ~60 s lies near 1e8 columns, where memory
    (~37 GB) binds first.
    """
    if route == "pyomo":
        from ..models.olas_select import build_model10_bmatching_lp

        load = _tu_pyomo(build_model10_bmatching_lp)
    else:
        load = _tu_arrays(bmatching_lp_arrays, "lp-bmatching")
    return _solve_tu_lp(inst, opts or RunOptions(), load, "lp-bmatching (TU, integral)")


def _fast(inst: P.OlasSelectInstance, opts: RunOptions) -> Outcome:
    return Outcome("feasible", select_greedy(inst))


def literal_rows(inst: P.OlasSelectInstance) -> int:
    """Nominal number of (10e) rows, M(M-1)/2 * u(u-1)/2 (the size the paper's model has)."""
    M, u = inst.n_labelers, inst.n_points
    return M * (M - 1) // 2 * (u * (u - 1) // 2)


def _literal_size(inst: P.OlasSelectInstance) -> str | None:
    rows = literal_rows(inst)
    if rows > LITERAL_MAX_ROWS:
        return (f"literal model has {rows} (10e) rows (limit {LITERAL_MAX_ROWS}); "
                "use milp-compact or lp-prefix")
    return None


def _compact_size(inst: P.OlasSelectInstance) -> str | None:
    pairs = inst.n_points * inst.n_labelers
    if pairs > COMPACT_MAX_PAIRS:
        return (f"compact MILP with u*M = {pairs} pairs (limit {COMPACT_MAX_PAIRS}) takes "
                "minutes; use lp-prefix")
    return None
