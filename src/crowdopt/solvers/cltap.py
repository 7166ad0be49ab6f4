"""Solvers of CL-TAP (paper 003) and its problem spec: fast policies, exact models, bounds.

Fast: `cbp` (Algorithm 1, digest 3.1), `cbp+ls` (CBP then the Sec. 4.3 local search), and the
baselines `rnd`, `rgl`, `pa`, `ta` (digest 3.7). Exact: `head-cover` (the default;
`cltap_exact`: a search on the bottleneck value in a MILP without task symmetry, eta fixed per
step; t = 50, a = 3 in seconds), `milp-compact` (11)-(17) through the HiGHS adapter at gap 0
(where HiGHS proves it within about a minute, t*a*K <= 4000 binaries) and `brute-force` (tiny
instances). Bounds: `lp-closed-form` (the compact LP relaxation, digest 3.4),
`column-generation` (Algorithm 2, the best Lagrangian bound, digest 2.4) and the tighter bounds of
`cltap_bounds`: `covering` / `covering-dp` (truncated machine covering, G by its LP
relaxation / the exact knapsack DP), `counting` (labels per task), `pairing` (covering + a Hall
condition on two-label tasks), `config-lp` (configuration LP with one label per task and
annotator) and `config-branch` (that LP with every cover at once, in a branch and bound on the
prefix lengths, `cltap_branch`). `certify` takes the tightest and names it. Fast
constructions of `cltap_construct`: `cbp-phi`, `alloc-lpt`, `layered` (`cltap_layers`: a
steep row, partial rows, a finishing layer, at a target found by bisection), `full-rows` (inside
`best-of`) and
`best-of` (every construction, then local search); `cbp` stays the first, default, fast method.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from ..problems import cltap as P
from ..problems.catalogue import Outcome, RunOptions
from ..problems.cltap import default_search_time
from . import cltap_bounds as CB
from .cltap_baselines import BASELINES
from .cltap_cbp import cbp
from .cltap_colgen import closed_form_bound, column_generation
from .cltap_construct import alloc_lpt, cbp_phi, cheap_bound, constructions
from .cltap_construct import fast as fast_best_of
from .cltap_exact import cheap_upper_bound
from .cltap_layers import layered
from .cltap_search import local_search

BRUTE_MAX_STATES = 200_000
COLGEN_MAX_PAIRS = 5_000  # a*K of the master; beyond it use lp-closed-form (equal if b >= t)
COLGEN_DEFAULT_TIME = 30.0
CONFIG_DEFAULT_TIME = 10.0  # its Farley bound is valid whenever it stops
CONFIG_MAX_PAIRS = 40_000
BRANCH_DEFAULT_TIME = 60.0  # config-branch: its bound is valid whenever it stops
BRANCH_MAX_LABELS = 2_000_000  # a K of the prefix structure its LP holds
MILP_DEFAULT_TIME = 120.0  # without --time-limit; a time-limited MILP still returns its bound


def solve_milp(inst: P.CltapInstance, opts: RunOptions | None = None, *,
               symmetry_break: bool = False) -> Outcome:
    """Exact CL-TAP by the compact MILP (11)-(17) and HiGHS at gap 0; bound = MIP dual bound.
    Without a time limit in `opts` the limit is MILP_DEFAULT_TIME (the bound stays valid).
    Time guard fitted across shapes by bench_guards.py (solvers/guards.py)."""
    import dataclasses

    from ..models.cltap import FORMULATIONS, build_compact  # Pyomo, HiGHS: exact solves only
    from .exact_runner import solve_exact

    opts = opts or RunOptions()
    if opts.time_limit is None and not opts.no_time_limit:
        opts = dataclasses.replace(opts, time_limit=MILP_DEFAULT_TIME)
    form = FORMULATIONS["milp-compact"]
    if symmetry_break:
        form = dataclasses.replace(form, build=lambda i: build_compact(i, symmetry_break=True))
    return solve_exact(form, inst, opts, route="pyomo")


def _state_key(used: int, c: np.ndarray) -> tuple:
    """A brute-force state: labels used and the sorted task values, as the floats they are
    (no rounding: at weights of 1e-8 rounding merged states and missed the optimum)."""
    return used, tuple(np.sort(c))


def brute_force(inst: P.CltapInstance) -> tuple[float, P.CltapSolution]:
    """Exhaustive optimum (digest 3.8): DP over annotators; state = (labels used, c' vector),
    each annotator adds a prefix of length n mapped injectively to tasks. Tiny instances only."""
    t, K, b = inst.t, inst.K, inst.b
    states: dict[tuple, tuple[np.ndarray, list[tuple[int, ...]]]] = {
        (0, (0.0,) * t): (np.zeros(t), [])}
    for j in range(inst.a):
        nxt: dict[tuple, tuple[np.ndarray, list[tuple[int, ...]]]] = {}
        for (used, _), (c, plan) in states.items():
            for n in range(0, min(K, b - used) + 1):
                for perm in itertools.permutations(range(t), n):
                    c2 = c.copy()
                    c2[list(perm)] += inst.phi[j, :n]
                    key = _state_key(used + n, c2)
                    if key not in nxt:
                        nxt[key] = (c2, plan + [perm])
        states = nxt
        if len(states) > BRUTE_MAX_STATES:
            raise ValueError("brute force: instance too large")
    best_val, best_plan = -np.inf, None
    for c, plan in states.values():
        if c.min() > best_val:
            best_val, best_plan = float(c.min()), plan
    z = P.empty_solution(inst).task_of
    for j, perm in enumerate(best_plan):
        z[j, :len(perm)] = perm
    return best_val, P.CltapSolution(z)


def _brute(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    val, sol = brute_force(inst)
    return Outcome("optimal", sol, val, "exhaustive enumeration", val)


def _brute_size(inst: P.CltapInstance) -> str | None:
    if inst.t > 4 or inst.a > 3:
        return "brute force only for t <= 4 and a <= 3"
    return None


# Guards of head-cover, on the links (label pairs of two annotators) of its model, a(a-1)/2 K^2.
# Time, in three cases: (1) CBP already meets the cheap bound (covering, counting; a zero
# optimum): the start proves it without a model, at any size (t = 320 flat, a = 3: 0.15 s CPU),
# no time guard; (2) a crowd that learns (more than a quarter of the curves' steps rise): the
# fitted guard (solvers/guards.py, "cltap/head-cover/learning", bench_guards.py: within 3x at
# every frontier instance, a = 3 to 10); (3) other crowds, whose time is not their size (a = 10
# dec took 1 s at t = 10, 22 s at t = 15): refused past HEAD_COVER_MAX_LINKS (t = 50, a = 3,
# 7,500 links, is proven in seconds). --force lifts the time guard. Memory: one binary and two
# rows per link in Pyomo (~1 KB), refused past HEAD_COVER_MEMORY_LINKS even when forced.
HEAD_COVER_MAX_LINKS = 10_000
HEAD_COVER_MEMORY_LINKS = 4_000_000


def _head_cover_links(inst: P.CltapInstance) -> int:
    return inst.a * (inst.a - 1) // 2 * inst.K ** 2


def start_proves(inst: P.CltapInstance) -> bool:
    """Whether CBP meets the cheap bound (or the optimum is 0): then head-cover's start, which
    is at least as good on both sides, proves the optimum without building a model."""
    if CB.zero_optimum(inst):
        return True
    value = P.evaluate(inst, cbp(inst)).objective
    return value >= cheap_bound(inst)[0] * (1.0 - 1e-9)


def _head_cover_time(inst: P.CltapInstance) -> str | None:
    """Time guard of head-cover (the three cases above); --force lifts it."""
    from .guards import figures, time_guard

    if start_proves(inst):
        return None
    if figures("cltap", "head-cover", inst)["learning"]:
        return time_guard("cltap", "head-cover", inst)
    n = _head_cover_links(inst)
    if n > HEAD_COVER_MAX_LINKS:
        return (f"head-cover model has {n:,} links (a(a-1)/2 K^2 > {HEAD_COVER_MAX_LINKS:,}) "
                "and its start does not prove the optimum: past the measured frontier; use "
                "the bounds, or --force runs it anyway under the time limit")
    return None


def _head_cover_memory(inst: P.CltapInstance) -> str | None:
    """Memory guard of head-cover (HEAD_COVER_MEMORY_LINKS links); --force does not lift it."""
    n = _head_cover_links(inst)
    if n > HEAD_COVER_MEMORY_LINKS:
        return (f"memory: head-cover model has up to {n:,} links (a(a-1)/2 K^2 > "
                f"{HEAD_COVER_MEMORY_LINKS:,})")
    return None


def _cbp(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    return Outcome("feasible", cbp(inst))


def search_budget(opts: RunOptions) -> float:
    """A local search's length in seconds: its own setting (`search_s`, else
    $CROWDOPT_SEARCH_TIME, else LS_DEFAULT_TIME), cut by the time limit, never taken from it
    (a limit of 1e308 s is no reason to search for ever). With a step budget (`max_steps`) the
    steps fix the work, whatever the search clock; the time limit stays a safety cap."""
    if opts.max_steps is not None:  # a fixed amount of work: the limit is only a safety cap
        return math.inf if opts.time_limit is None else opts.time_limit
    own = opts.search_s if opts.search_s is not None else default_search_time()
    return own if opts.time_limit is None else min(own, opts.time_limit)


def _cbp_ls(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    t0 = time.perf_counter()
    start = cbp(inst)
    cbp_s = time.perf_counter() - t0
    limit = search_budget(opts)
    stats: dict = {}
    sol = local_search(inst, start, time_limit=max(0.0, limit - cbp_s), seed=opts.seed,
                       stats=stats, **_steps(opts))
    return Outcome("feasible", sol, details={"cbp_s": cbp_s, "time_budget_s": limit,
                                             "cbp_objective": P.evaluate(inst, start).objective,
                                             "local_search": stats})


def _steps(opts: RunOptions) -> dict:
    """The local search's step budget from the options (none: its default cap)."""
    return {} if opts.max_steps is None else {"max_steps": opts.max_steps}


def _cbp_phi(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    return Outcome("feasible", cbp_phi(inst))


def _alloc_lpt(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    return Outcome("feasible", alloc_lpt(inst))


def _layered(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    """The layered plan above CBP's value, below the cheap bound; CBP's plan where it finds none
    (a fixed amount of work; the time limit only cuts the bisection)."""
    start = cbp(inst)
    lo = P.evaluate(inst, start).objective
    hi, _ = cheap_bound(inst)
    deadline = None if opts.time_limit is None else time.perf_counter() + opts.time_limit
    sol = layered(inst, lo=lo, hi=max(hi, lo), deadline=deadline)
    return Outcome("feasible", start if sol is None else sol,
                   details={"layered": sol is not None, "cbp_objective": lo})


def _fast(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    limit = search_budget(opts)
    stats: dict = {}
    sol = fast_best_of(inst, time_limit=limit, seed=opts.seed, stats=stats, **_steps(opts))
    return Outcome("feasible", sol, details={**stats, "time_budget_s": limit})


def _bound_outcome(res: CB.BoundResult) -> Outcome:
    return Outcome("feasible", None, res.value, res.source, details=res.details)


def _covering(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    return _bound_outcome(CB.covering_bound(inst))


def _pairing(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    return _bound_outcome(CB.pairing_bound(inst))


def _first_labels(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    return _bound_outcome(CB.first_labels_bound(inst))


def _covering_dp(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    return _bound_outcome(CB.covering_bound(inst, exact=True))


def _covering_dp_size(inst: P.CltapInstance) -> str | None:
    work = inst.a * inst.K * inst.b
    if work > CB.DP_MAX_WORK:
        return f"knapsack DP work a*K*b = {work} > {CB.DP_MAX_WORK}; use covering (its LP)"
    return None


def _counting(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    return _bound_outcome(CB.counting_bound(inst))


def config_lp_from(inst: P.CltapInstance, hi: float, hi_src: str, time_limit: float,
                   t0: float | None = None, max_rounds: int | None = None) -> CB.BoundResult:
    """The configuration LP between the best construction (lo) and a valid bound `hi` (named
    `hi_src`), within `time_limit` seconds counted from `t0` (default: now) and at most
    `max_rounds` column-generation rounds (the deterministic budget)."""
    t0 = time.perf_counter() if t0 is None else t0
    lo = max(P.evaluate(inst, s).objective for s in constructions(inst, theta=hi).values())
    res = CB.config_lp_bound(inst, lo=lo, hi=hi, time_limit=max(0.1, time_limit - (
        time.perf_counter() - t0)), max_rounds=max_rounds)
    if res.source.startswith("input bound"):
        res.source = f"{hi_src} (configuration LP: {res.details.get('skipped', 'no gain')})"
    return res


def _config_lp(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    """Configuration LP between the best construction (lo) and the tightest cheap bound (hi,
    `cheap_upper_bound`: zero optimum, covering, counting, pairing, first labels)."""
    limit = opts.time_limit if opts.time_limit is not None else CONFIG_DEFAULT_TIME
    t0 = time.perf_counter()
    hi, hi_src = cheap_upper_bound(inst)
    return _bound_outcome(config_lp_from(inst, hi, hi_src, limit, t0, opts.max_rounds))


def _config_lp_size(inst: P.CltapInstance) -> str | None:
    if inst.a * inst.K > CONFIG_MAX_PAIRS:
        return (f"a*K = {inst.a * inst.K} labels (> {CONFIG_MAX_PAIRS}): the configuration LP "
                "is not tried; covering/counting bounds apply")
    return None


def _config_branch(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    """The configuration LP with branching on prefix lengths (`cltap_branch`) between the best
    construction (its plan is returned, or a better one the search met) and the tightest cheap
    bound; `branch_nodes` (else `max_rounds`): its node LPs (the deterministic budget), the time
    limit a safety cap.
    Status optimal when the bound meets the plan."""
    from .cltap_branch import branch_bound

    limit = opts.time_limit if opts.time_limit is not None else BRANCH_DEFAULT_TIME
    t0 = time.perf_counter()
    hi, hi_src = cheap_upper_bound(inst)
    cands = constructions(inst, theta=hi, deadline=t0 + 0.2 * limit)
    scores = {k: P.evaluate(inst, s).objective for k, s in cands.items()}
    name = max(scores, key=lambda k: scores[k])
    start, lo = cands[name], scores[name]
    res, plan = branch_bound(inst, lo, hi, start=start, options=opts,
                             time_limit=max(0.1, limit - (time.perf_counter() - t0)),
                             max_nodes=(opts.branch_nodes if opts.branch_nodes is not None
                                        else opts.max_rounds))
    sol = plan if plan is not None else start
    value = P.evaluate(inst, sol).objective
    src = res.source
    if src.startswith("input bound"):
        src = f"{hi_src} (prefix branching: {res.details.get('skipped', 'refuted nothing')})"
    proven = res.value <= value * (1 + 1e-7) or res.value <= 0.0
    details = {**res.details, "start": name, "start_value": lo, "start_bound": hi,
               "start_bound_source": hi_src}
    return Outcome("optimal" if proven else "feasible", sol, res.value, src, details=details)


def _config_branch_size(inst: P.CltapInstance) -> str | None:
    if inst.a * inst.K > BRANCH_MAX_LABELS:
        return (f"a*K = {inst.a * inst.K} labels (> {BRANCH_MAX_LABELS}): the prefix "
                "structure of its LP is not built; the cheap bounds apply")
    return None


def _baseline(name: str, inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    """The baseline `name` of BASELINES (ta, pa, rgl, rnd), seeded by the options."""
    return Outcome("feasible", BASELINES[name](inst, seed=opts.seed))


def _closed_form(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    ub = closed_form_bound(inst)
    return Outcome("feasible", None, ub, "closed-form LP relaxation (concave-hull greedy)")


def _colgen(inst: P.CltapInstance, opts: RunOptions) -> Outcome:
    """Aggregated-master column generation (equal to the faithful master, digest 2.5) with
    Wentges smoothing; the bound is the best Lagrangian bound, min'ed with the closed form (both
    valid), and the source says which one it is. Its round budget: `colgen_rounds`, else
    `max_rounds`; stopped by it, the bound is still the best Lagrangian one (never the RMP's)."""
    limit = opts.time_limit if opts.time_limit is not None else COLGEN_DEFAULT_TIME
    rounds = opts.colgen_rounds if opts.colgen_rounds is not None else opts.max_rounds
    res = column_generation(inst, aggregated=True, smoothing=0.5, pool=5, time_limit=limit,
                            **({} if rounds is None else {"max_rounds": rounds}))
    cf = closed_form_bound(inst)
    details = {"rounds": len(res.rounds), "converged": res.converged, "rmp": res.rmp,
               "lagrangian_bound": res.bound, "closed_form": cf, "columns": len(res.workplans),
               "colgen_status": res.status, "colgen_s": res.time_s,
               "master_s": sum(r.master_s for r in res.rounds),
               "pricing_s": sum(r.pricing_s for r in res.rounds),
               # every round: [round, RMP value, Lagrangian bound, best bound so far]
               "trace": [[r.round, r.rmp, r.lagrangian, r.best] for r in res.rounds[-500:]]}
    close = abs(res.bound - cf) <= 1e-7 * (1.0 + abs(cf))
    if res.converged:
        src = "column generation (converged" + (", = closed form)" if close else ")")
    elif res.bound < cf:
        src = f"column generation (Lagrangian bound, stopped after {len(res.rounds)} rounds)"
    else:
        src = (f"closed form (column generation stopped after {len(res.rounds)} rounds with a "
               "weaker Lagrangian bound)")
    return Outcome("feasible", None, min(res.bound, cf), src, details=details)


def _colgen_size(inst: P.CltapInstance) -> str | None:
    if inst.a * inst.K > COLGEN_MAX_PAIRS:
        return (f"master has a*K = {inst.a * inst.K} pair rows (> {COLGEN_MAX_PAIRS}); "
                "lp-closed-form gives the compact LP bound instantly (equal when b >= t)")
    return None
