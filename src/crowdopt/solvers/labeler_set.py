"""Solvers of `labeler-set`: the top-k fast path, a local search, and two exact references.

- `select_top_k` (paper 001 Thms 1-2 for MV, Thm 4 for WMV; digest A1): order labelers by
  quality (MV: p_i; WMV: |p_i - 1/2|, since a labeler with p < 1/2 and a negative log-odds
  weight is a flipped good one), evaluate every prefix (MV: odd prefixes only, Thm 1) with the
  O(M^2) prefix recursion, keep the best feasible one. Exact without costs, with equal costs and
  with a size cap; a heuristic with heterogeneous costs (digest P1: top-k loses in ~12% of
  random cost instances).
- `local_search`: best top-k, then add / drop / swap moves while the objective improves.
- `solve_enumeration`: every non-empty subset (exhaustive; MV M <= 22, WMV M <= 20).
- `solve_milp`: the digest's MILPs (models/labeler_set.py) through the HiGHS adapter, gap 0.
"""

from __future__ import annotations

import time

import numpy as np

from ..problems import labeler_set as P
from ..problems.catalogue import (
    Evaluation,
    Outcome,
    RunOptions,
)
from ..problems.vote_accuracy import pi_mv_prefix, pi_wmv

# Size guards (M labelers), where benchmarks/bench_exact_overhead.py (`--guards`, seed 0) measured
# about 60 s on the 2-core development machine, unless memory binds first:
# - milp, MV (vote-margin MILP): 14.6 s at M = 14, 30 s at 15, 50 s at 16 (x1.85 a labeler).
# - milp, WMV (pattern MILP, 2^(M+1) patterns): 25 s at M = 10, 35 s at 11, time limit (120 s)
#   at 12.
# - enumeration, MV (vectorized, blocks of ENUM_CHUNK sets, so memory stays a few MB): 11.2 s at
#   M = 22 (x2 a labeler; the guard was set when one (2^M, M+1) table took 4 GB there).
# - enumeration, WMV (one exact WMV accuracy per set, ~30 us each): 1.8 s at M = 16, 79 s at 21
#   (x2.1 a labeler): ~37 s at 20.
# These timings are now fitted across shapes by benchmarks/bench_guards.py: both methods have a
# time guard (solvers/guards.py), not a size cap. What stays is a MEMORY guard of the WMV pattern
# MILP: 3 * 2^M rows of M terms each as Pyomo objects (~1 GB at M = 16).
PATTERN_MAX_LABELERS = 16


def quality_rank(inst: P.LabelerSetInstance) -> np.ndarray:
    """Labelers best first (stable, ties by index): p for MV, |p - 1/2| for WMV."""
    key = inst.qualities if inst.rule == "mv" else np.abs(inst.qualities - 0.5)
    return np.argsort(-key, kind="stable")


def prefix_values(inst: P.LabelerSetInstance, order: np.ndarray,
                  odd_only: bool = True) -> np.ndarray:
    """Objective pi(top-m) - lambda C(top-m), m = 1..M (-inf where infeasible or skipped).

    odd_only (MV): skip even m (Thm 1); the learner turns it off for K-ary labels (digest 7.25).
    """
    M = inst.n_labelers
    if inst.rule == "mv":
        acc = pi_mv_prefix(inst.qualities[order])
        sizes = np.arange(1, M + 1)
        if odd_only:  # Thm 1: an odd prefix is never worse
            acc = np.where(sizes % 2 == 1, acc, -np.inf)
    else:
        w = inst.weights
        acc = np.array([pi_wmv(inst.qualities[order[:m]], w[order[:m]], inst.wmv_eps)
                        for m in range(1, M + 1)])
    cum_cost = np.cumsum(inst.cost_vector[order])
    val = acc - inst.cost_weight * cum_cost
    ok = np.ones(M, dtype=bool)
    if inst.budget is not None:
        ok &= ~P.over_budget(cum_cost, inst.budget)
    if inst.max_size is not None:
        ok &= np.arange(1, M + 1) <= inst.max_size
    return np.where(ok, val, -np.inf)


def select_top_k(inst: P.LabelerSetInstance) -> P.LabelerSetSolution | None:
    """Best feasible top-k (odd k for MV); None if no prefix is feasible. Ties: smaller k."""
    order = quality_rank(inst)
    val = prefix_values(inst, order)
    if not np.isfinite(val).any():
        return None
    k = int(np.argmax(val)) + 1  # first maximum = smallest k (cheapest)
    return P.LabelerSetSolution(np.sort(order[:k]))


def _nothing_fits(inst: P.LabelerSetInstance, method: str) -> Outcome:
    """The outcome of a heuristic that found no set within the budget: 'infeasible' only when
    that is proven (costs are >= 0, so every non-empty set costs at least the cheapest
    labeler), else 'no_solution' (a cheaper set than its candidates fits)."""
    cheapest = float(inst.cost_vector.min())
    if P.over_budget(cheapest, inst.budget):
        return Outcome("infeasible", details={"message": (
            f"no labeler fits the budget: the cheapest costs {cheapest:g} > {inst.budget:g}")})
    return Outcome("no_solution", details={"message": (
        f"no top-k set fits the budget, but cheaper sets do (a labeler costs {cheapest:g} <= "
        f"{inst.budget:g}): the problem is feasible; try "
        + ("local-search or " if method == "top-k" else "") + "an exact method")})


def _fast(inst: P.LabelerSetInstance, opts: RunOptions) -> Outcome:
    sol = select_top_k(inst)
    if sol is None:
        return _nothing_fits(inst, "top-k")
    if inst.uniform_costs and inst.wmv_eps == 0.0:
        # Thms 1-2 (MV) / Thm 4 (WMV, with the flip of p < 1/2): top-k is optimal.
        obj = P.evaluate(inst, sol).objective
        return Outcome("optimal", sol, obj, "structure theorems (top-k, Thms 1, 2, 4)", obj)
    return Outcome("feasible", sol)


def local_search(inst: P.LabelerSetInstance, start: P.LabelerSetSolution | None = None,
                 max_rounds: int = 1000) -> P.LabelerSetSolution | None:
    """First-improvement add / drop / swap search from the best top-k (heuristic); when no
    top-k set fits the budget, from the best single labeler that does (None if none fits)."""
    sol = start or select_top_k(inst)
    if sol is None:
        singles = [P.LabelerSetSolution(np.array([i], np.int64))
                   for i in range(inst.n_labelers)]
        scored = [(P.evaluate(inst, s), s) for s in singles]
        feasible = [(ev.objective, -i, s) for i, (ev, s) in enumerate(scored) if ev.feasible]
        if not feasible:
            return None
        sol = max(feasible, key=lambda x: (x[0], x[1]))[2]
    M = inst.n_labelers
    cur = set(int(i) for i in sol.selected)

    def value(s: set[int]) -> float:
        ev: Evaluation = P.evaluate(inst, P.LabelerSetSolution(np.array(sorted(s), np.int64)))
        return ev.objective if ev.feasible else -np.inf

    best = value(cur)
    for _ in range(max_rounds):
        moves = [cur | {j} for j in range(M) if j not in cur]
        moves += [cur - {i} for i in cur if len(cur) > 1]
        moves += [(cur - {i}) | {j} for i in cur for j in range(M) if j not in cur]
        improved = False
        for cand in moves:
            v = value(cand)
            if v > best + 1e-12:
                cur, best, improved = cand, v, True
                break
        if not improved:
            break
    return P.LabelerSetSolution(np.array(sorted(cur), dtype=np.int64))


def _local(inst: P.LabelerSetInstance, opts: RunOptions) -> Outcome:
    sol = local_search(inst)
    if sol is None:
        return _nothing_fits(inst, "local-search")
    return Outcome("feasible", sol)


def _local_size(inst: P.LabelerSetInstance) -> str | None:
    if inst.n_labelers > 60 or (inst.rule == "wmv" and inst.n_labelers > 16):
        return "local search evaluates O(M^2) sets per move: M too large"
    return None


def subset_accuracies_mv(p: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
    """pi(S) for every subset S (bit mask; all 2^M by default), vectorized counting recursion."""
    M = len(p)
    masks = np.arange(1 << M) if masks is None else np.asarray(masks, dtype=np.int64)
    dist = np.zeros((len(masks), M + 1))
    dist[:, 0] = 1.0
    size = np.zeros(len(masks), dtype=np.int64)
    for i in range(M):
        inn = ((masks >> i) & 1).astype(bool)
        d = dist[inn]
        new = d * (1.0 - p[i])
        new[:, 1:] += d[:, :-1] * p[i]
        dist[inn] = new
        size += inn
    c = np.arange(M + 1)
    win = (2 * c[None, :] > size[:, None]).astype(float)
    tie = (2 * c[None, :] == size[:, None]).astype(float)
    return (dist * (win + 0.5 * tie)).sum(axis=1)


ENUM_CHUNK = 1 << 15  # sets per block: the clock is read between blocks, memory stays small


def solve_enumeration(inst: P.LabelerSetInstance, opts: RunOptions | None = None) -> Outcome:
    """Exhaustive search over all 2^M - 1 non-empty sets (the brute-force reference), block by
    block: a time limit stops it between blocks with the best set seen (no bound). Time guard
    fitted by bench_guards.py (solvers/guards.py)."""
    t0 = time.perf_counter()
    limit = opts.time_limit if opts is not None else None
    M = inst.n_labelers
    total = (1 << M) - 1
    best_val, best_set, seen = -np.inf, None, 0
    for lo in range(1, total + 1, ENUM_CHUNK):
        masks = np.arange(lo, min(lo + ENUM_CHUNK, total + 1), dtype=np.int64)
        member = ((masks[:, None] >> np.arange(M)) & 1).astype(bool)
        if inst.rule == "mv":
            acc = subset_accuracies_mv(inst.qualities, masks)
        else:
            w = inst.weights
            acc = np.array([pi_wmv(inst.qualities[row], w[row], inst.wmv_eps)
                            for row in member])
        cost = member @ inst.cost_vector
        val = acc - inst.cost_weight * cost
        ok = np.ones(len(masks), dtype=bool)
        if inst.budget is not None:
            ok &= ~P.over_budget(cost, inst.budget)
        if inst.max_size is not None:
            ok &= member.sum(axis=1) <= inst.max_size
        val = np.where(ok, val, -np.inf)
        k = int(np.argmax(val))
        if val[k] > best_val:  # strict: the first (smallest mask) of equal values is kept
            best_val, best_set = float(val[k]), np.flatnonzero(member[k]).astype(np.int64)
        seen += len(masks)
        if limit is not None and seen < total and time.perf_counter() - t0 > limit:
            details = {"sets": seen, "message": f"stopped by the time limit ({limit:g} s) "
                       f"after {seen} of {total} sets: best set seen, no bound"}
            if best_set is None:
                return Outcome("time_limit", details=details)
            return Outcome("time_limit", P.LabelerSetSolution(best_set), None, None, best_val,
                           details)
    if best_set is None:
        return Outcome("infeasible", details={"message": "no non-empty set fits the budget"})
    return Outcome("optimal", P.LabelerSetSolution(best_set), best_val, "exhaustive enumeration",
                   best_val, {"sets": total})


def solve_milp(inst: P.LabelerSetInstance, opts: RunOptions | None = None) -> Outcome:
    """Exact by the vote-margin MILP (MV) or the pattern MILP (WMV) and HiGHS, gap 0. Time guard
    fitted by bench_guards.py; memory guard PATTERN_MAX_LABELERS for the WMV pattern model."""
    # Pyomo and HiGHS load only here, so the fast path and the learner stay light to import.
    from ..models.labeler_set import FORMULATIONS
    from .exact_runner import solve_exact

    out = solve_exact(FORMULATIONS["milp"], inst, opts or RunOptions())
    out.details["model"] = "vote-margin" if inst.rule == "mv" else "pattern"
    return out


def _milp_size(inst: P.LabelerSetInstance) -> str | None:
    """Memory guard of the WMV pattern MILP (3 * 2^M rows held as Pyomo objects)."""
    if inst.rule == "wmv" and inst.n_labelers > PATTERN_MAX_LABELERS:
        return (f"memory: the WMV pattern MILP holds 3 * 2^M rows, M = {inst.n_labelers} > "
                f"{PATTERN_MAX_LABELERS}")
    return None
