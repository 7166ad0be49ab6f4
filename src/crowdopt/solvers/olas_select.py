"""Solvers of OLAS Model 10: the corrected Algorithm 1 fast path and exact references.

- `select_greedy` (Theorem 2 / digest A3'): scan the entropy-sorted pool once; labeler i (by
  accuracy) takes the c_i points starting at r_i = max(rho_i, r_{i-1} + c_{i-1}), where rho_i is
  its first allowed point; stop at the end of the pool or at the budget cap B (digest F3).
  O(u log u + M log M + M u) with numpy, the O(M u) part being the shared `allowed` matrix.
- exact references (models/olas_select.py, HiGHS, gap 0): `solve_prefix_lp` (full-size pools),
  `solve_bmatching_lp`, `solve_compact` (MILP, medium) and `solve_literal` (the paper's MILP,
  small pools). The LPs are exact because their matrices are totally unimodular (digest F1, F2);
  each checks that the returned vertex is integral and falls back to the MILP if not.
- `assign_theorem1`: the canonical (Theorem 1) assignment of a selected set; LP methods use it
  to turn a selection into the assignment that also satisfies (10e)-(10h) (digest F1).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from ..problems import olas_assign as P2
from ..problems import olas_select as P
from ..registry import MILP_DEFAULT_TIME, Method, Outcome, ProblemSpec, RunOptions
from ..status import Status
from .olas_assign import assign_sorted

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


def assign_theorem1(inst: P.OlasSelectInstance, selected: np.ndarray) -> P.OlasSelectSolution:
    """Theorem 1 assignment of a selected set (k-th highest entropy -> k-th capacity slot).

    For any selection that admits an assignment with all pairs allowed, this one is allowed too
    (bottleneck optimality of Theorem 1) and satisfies (10e)-(10h). `selected` is returned in
    entropy order (ties by pool order).
    """
    sel = np.sort(np.asarray(selected, dtype=np.int64))
    sub = P2.OlasAssignInstance(inst.accuracies, inst.capacities, inst.entropies[sel], inst.noise)
    z = assign_sorted(sub).assignment
    order = np.argsort(-inst.entropies[sel], kind="stable")
    return P.OlasSelectSolution(sel[order], z[order])


# ---------------------------------------------------------------------------- exact references

LITERAL_MAX_ROWS = 60_000  # (10e) rows; beyond this the literal model is refused (digest 7.6)
COMPACT_MAX_PAIRS = 20_000  # M*u; the compact MILP takes minutes beyond (digest 6.2 timings)
INTEGRAL_TOL = 1e-7


def _highs_options(opts: RunOptions, *, lp: bool) -> Any:
    # Model 10 is feasible by construction (y = 0), so an "infeasible" report is a HiGHS presolve
    # defect (digest 6.2): known_feasible makes the adapter retry without presolve.
    return opts.highs(known_feasible=True, lp_solver="simplex" if lp else "choose")


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
    """Exact: the paper's MILP (10a)-(10i) with pairwise (10e), HiGHS, gap 0 (small pools)."""
    from ..models.olas_select import build_model10_literal

    return _solve_milp(inst, opts or RunOptions(), build_model10_literal, "milp-dual-bound")


def solve_compact(inst: P.OlasSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact: the compact w-formulation MILP, HiGHS, gap 0 (medium pools)."""
    from ..models.olas_select import build_model10_compact

    return _solve_milp(inst, opts or RunOptions(), build_model10_compact, "milp-dual-bound")


def _solve_tu_lp(inst: P.OlasSelectInstance, opts: RunOptions, build: Any, var: str,
                 source: str) -> Outcome:
    """Solve a TU LP by simplex; check the returned vertex is integral, else re-solve as MILP.

    The selection is given the Theorem 1 assignment (so it also satisfies (10e)-(10h)).
    """
    if inst.max_selected == 0 or not P.allowed(inst).any():
        return Outcome("optimal", _empty(), 0.0, "empty (no allowed pair or no capacity)", 0.0)
    t0 = time.perf_counter()
    m = build(inst)
    build_s = time.perf_counter() - t0
    res = _solve(m, opts, lp=True)
    details: dict[str, Any] = {"build_s": build_s}
    if res.x is None:
        return _outcome(res, None, source, details)
    comp = getattr(m, var)
    vals = res.values(comp)
    frac = max((abs(v - round(v)) for v in vals.values()), default=0.0)
    details.update(lp_integral=frac <= INTEGRAL_TOL, lp_max_fractionality=frac,
                   lp_objective=res.objective)
    if frac > INTEGRAL_TOL:  # never expected (TU); flag it and fall back to the integer model
        warnings.warn(f"{source}: LP solution fractional by {frac:.3g}; re-solving as a MILP",
                      RuntimeWarning, stacklevel=3)
        import pyomo.environ as pyo

        for v in comp.values():
            v.domain = pyo.Binary
        res = _solve(m, opts, lp=False)
        details.update(fallback="milp")
        if res.x is None:
            return _outcome(res, None, source, details)
        vals = res.values(comp)
    from ..models.olas_select import decode

    sol = assign_theorem1(inst, decode(inst, m, res).selected)
    return _outcome(res, sol, source, details)


def solve_prefix_lp(inst: P.OlasSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact: the Hall prefix LP (digest F2), O(u + M) rows; Theorem 1 assignment of s = 1."""
    from ..models.olas_select import build_model10_prefix_lp

    return _solve_tu_lp(inst, opts or RunOptions(), build_model10_prefix_lp, "s",
                        "lp-prefix (TU, integral)")


def solve_bmatching_lp(inst: P.OlasSelectInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact: the b-matching LP (10a)-(10d) (digest F1); Theorem 1 assignment of the selection."""
    from ..models.olas_select import build_model10_bmatching_lp

    return _solve_tu_lp(inst, opts or RunOptions(), build_model10_bmatching_lp, "y",
                        "lp-bmatching (TU, integral)")


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


SPEC = ProblemSpec.from_module(
    P,
    name="olas-select",
    title="OLAS Model 10: joint query selection and labeler assignment under a noise bound",
    paper="000 (Ahadi et al.), Sec. 3.3, Theorem 2, Algorithm 1",
    sense="max",
    methods=(
        Method("greedy", "fast", _fast,
               "corrected Algorithm 1 (Theorem 2): one scan of the entropy-sorted pool, cap B"),
        Method("lp-prefix", "exact", solve_prefix_lp,
               "Hall prefix LP, O(u + M) rows, totally unimodular (integrality checked)"),
        Method("milp-compact", "exact", solve_compact,
               "compact MILP, (10e) as a monotone rank variable, HiGHS, gap 0",
               applicable=_compact_size, time_limit=MILP_DEFAULT_TIME),
        Method("milp-literal", "exact", solve_literal,
               "the paper's MILP (10a)-(10i) with pairwise (10e), HiGHS, gap 0 (small pools)",
               applicable=_literal_size, time_limit=MILP_DEFAULT_TIME),
        Method("lp-bmatching", "exact", solve_bmatching_lp,
               "b-matching LP (10a)-(10d), totally unimodular (integrality checked)"),
    ),
)
