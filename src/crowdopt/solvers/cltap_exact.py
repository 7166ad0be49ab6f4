"""Exact CL-TAP (paper 003) by a search on the bottleneck value theta [ours].

The `head-cover` formulation (`models.cltap.build_heads`, the max-min model in which a task is
named by its first annotator's label: no task symmetry) is loaded once through the one runner
(`exact_runner`); its passes (`search_passes`) search eta between the best-of primal (lb,
`cltap_construct.fast`) and the tightest cheap bound (ub: covering, counting, pairing;
`cltap_bounds`) by bounds on the live model alone: eta fixed at theta asks "every task reaches
theta", heads that cannot reach theta are fixed to 0. Feasible: its assignment (every c' >= theta,
eq. 10) becomes the incumbent and lb its value, raised further by a short local search.
Infeasible (confirmed without presolve): OPT < theta, so theta is the new bound. Thetas: first
just above lb (lb (1 + `STEP`)), whose refutation proves lb optimal (the best-of start often is,
and one proof is cheaper than a bisection whose steps near OPT are as hard); then the midpoint
while the relative gap is over `ASCENT_GAP`, else just above lb. An incumbent counts only where
it is a point of the loaded model (a user's extended model may cut it off; without a start that
it admits, the model is solved as it stands, max eta in one MILP).

Why a proof is a proof, step by step:
1. The model is truncated at a valid bound theta_M >= OPT (a weight counts min(phi, theta_M),
   eta <= theta_M). Every plan of value v maps to a point with eta = min(v, theta_M)
   (`encode_heads`: a task's head is its label of the lowest-numbered annotator with phi > 0,
   its later positive labels join it), and every point decodes to a plan of value >= eta
   (`decode_heads`, then `fill_prefixes`, which only adds labels). So max eta = OPT.
2. A step fixes eta = theta and fixes to 0 every head whose reach (its weight plus the best
   label of every later annotator, at most one per annotator on a task) is below theta: a plan
   of value >= theta uses no such head, so it still maps to a point of the step's model.
3. Hence "the step is infeasible" means no plan reaches theta: OPT < theta. That rests on
   HiGHS's report. Its presolve has called feasible steps infeasible (two instances whose
   optimum leaves annotators unused were "proven" 20 % and 4 % below their optimum), so a
   report made with presolve on is re-run without presolve (`CONFIRM_REFUTATIONS`) and only a
   confirmed one becomes the bound. The rows are divided by theta_M and eta is scaled by the
   adapter, so HiGHS's tolerance (1e-9) is relative to theta_M at every data scale.
4. A feasible step gives a point; its decoded plan is valued by the evaluator, never by
   HiGHS's eta, and becomes the incumbent only if that value beats lb.
5. The search stops when a refuted theta is within 2 STEP (relative) of lb: lb is then optimal
   within the certificates' relative tolerance (1e-7 > 2e-8). Where HiGHS cannot tell theta from
   lb (a feasible step whose plan does not beat lb, even at a margin of MAX_STEP) the run ends
   `feasible`, not proven.
6. The bound returned is always a confirmed refuted theta or a closed-form bound of the start,
   both >= OPT, so a run stopped by a time limit returns a valid bound with its incumbent (and
   is never called proven). tests/test_cltap_soundness.py checks all this against an
   independent enumeration, with mutations of steps 2 and 3 that it catches.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import threading
import time
from typing import Any

import numpy as np

from ..problems import cltap as P
from ..problems.catalogue import MILP_DEFAULT_TIME, Outcome, RunOptions
from ..status import Status
from . import cltap_bounds as CB
from .certify import gap_ratio
from .cltap_search import local_search

STEP = 1e-8  # relative margin above lb of the final test: a refutation proves lb optimal
ABS_TINY = 1e-13  # x max phi: what "0" means for a bound when lb = 0 (OPT = 0)
MAX_STEP = 1e-7  # the margin grows to this when HiGHS's tolerance (1e-9) meets lb exactly
ASCENT_GAP = 0.005  # relative gap below which the next theta is just above lb
DEFAULT_TIME = MILP_DEFAULT_TIME  # 120 s, as every MILP method
# best-of start: min(PRIMAL_MAX_S, PRIMAL_SHARE x time limit, PRIMAL_PER_BINARY x t a K) seconds
PRIMAL_SHARE = 0.05
PRIMAL_MAX_S = 1.0
PRIMAL_PER_BINARY = 1e-4
SEARCH_S = 0.2  # local search from every feasible step's assignment
# the start's configuration LP with branching on prefix lengths (`cltap_branch`): at most
# BRANCH_SHARE of the time limit (and BRANCH_MAX_S), BRANCH_NODES_PER_S node LPs per second of
# that and at most BRANCH_NODES (a deterministic budget that grows with the limit: at t = 40,
# a = 10, dec, 80 node LPs leave the bound at 0.152413, 400 (13 s CPU) take it to 0.152242)
BRANCH_SHARE = 0.25
BRANCH_MAX_S = 20.0
BRANCH_NODES = 400  # 0: no configuration-LP stage (tests that check it against head-cover)
BRANCH_NODES_PER_S = 20.0
# a step's "infeasible" becomes a bound only once a run without presolve confirms it
CONFIRM_REFUTATIONS = True
SEED = 0  # of the best-of start and local search: `solve` and `solve_model` (no seed) agree


def cheap_upper_bound(inst: P.CltapInstance) -> tuple[float, str]:
    """The tightest of the cheap bounds (covering, counting, pairing: milliseconds; first
    labels: about 2 s CPU at t = 1000, a = 100, 10 s on a loaded machine) and its source;
    remembered for the last few instances (by their data), since `certify` runs config-lp,
    config-branch and head-cover on one instance and each starts from it."""
    from .cltap_construct import cheap_bound

    # the data, and the functions that compute it (a test that replaces one misses the cache)
    key = (hashlib.blake2b(np.ascontiguousarray(inst.phi).tobytes(), digest_size=16).digest(),
           inst.phi.shape, int(inst.t), int(inst.b), id(cheap_bound), id(CB.zero_optimum),
           id(CB.pairing_bound), id(CB.first_labels_bound))
    with _CHEAP_LOCK:
        if key in _CHEAP:
            return _CHEAP[key]
    if CB.zero_optimum(inst):
        out = 0.0, "zero: fewer than t positive-weight labels fit"
    else:
        hi, src = cheap_bound(inst)
        for res in (CB.pairing_bound(inst, hi=hi), CB.first_labels_bound(inst, hi=hi)):
            if res.value < hi:
                hi, src = res.value, res.source
        out = hi, src
    with _CHEAP_LOCK:
        _CHEAP[key] = out
        while len(_CHEAP) > CHEAP_KEPT:
            _CHEAP.pop(next(iter(_CHEAP)))
    return out


CHEAP_KEPT = 4  # instances whose cheap bound is remembered
_CHEAP: dict = {}
_CHEAP_LOCK = threading.Lock()


# The start `solve_head_cover` just made, per thread (a server may run solves side by side):
# its `.start` is [(instance, seed, start)] or empty.
_LAST = threading.local()


def _last_start() -> list:
    """This thread's hand-over list from `solve_head_cover` to the search's passes."""
    if not hasattr(_LAST, "start"):
        _LAST.start = []
    return _LAST.start


def start_bounds(inst: P.CltapInstance, primal_s: float, seed: int = 0, bound_s: float = 0.0
                 ) -> tuple[P.CltapSolution, float, float, str]:
    """(best plan, its value, tightest bound, its source): the best-of primal and the cheap
    bounds, then, within `bound_s` seconds (and `branch_nodes` node LPs), the configuration LP
    with branching on prefix lengths, whose bound is often within 0.5 % of the optimum and whose
    worlds often hold a better plan; zero optimum: the empty solution. The start
    `solve_head_cover` made for this very instance object is reused (once) by the search's
    passes."""
    from .cltap_branch import branch_bound
    from .cltap_construct import fast

    last = _last_start()
    if last and last[0][0] is inst and last[0][1] == seed:
        return last.pop()[2]
    if CB.zero_optimum(inst):
        return (P.empty_solution(inst), 0.0, 0.0,
                "zero: fewer than t positive-weight labels fit")
    hi, src = cheap_upper_bound(inst)
    sol = fast(inst, time_limit=primal_s, seed=seed, target=hi)
    lb = P.evaluate(inst, sol).objective
    if bound_s > 0 and BRANCH_NODES > 0 and not proven(lb, hi, inst):
        res, plan = branch_bound(inst, lb, hi, start=sol, time_limit=bound_s,
                                 max_nodes=branch_nodes(bound_s), stop_within=ASCENT_GAP)
        if plan is not None and P.evaluate(inst, plan).objective > lb:
            sol, lb = plan, P.evaluate(inst, plan).objective
        if res.value < hi:
            hi, src = res.value, "config-branch: " + res.source
    return sol, lb, hi, src


def branch_seconds(limit: float) -> float:
    """The start's configuration-LP branching budget (BRANCH_SHARE, BRANCH_MAX_S)."""
    return min(BRANCH_MAX_S, BRANCH_SHARE * limit)


def branch_nodes(bound_s: float) -> int:
    """The start's node-LP budget for `bound_s` seconds (BRANCH_NODES_PER_S, BRANCH_NODES)."""
    return min(BRANCH_NODES, max(1, int(BRANCH_NODES_PER_S * bound_s)))


def proven(lb: float, ub: float, inst: P.CltapInstance, margin: float = STEP) -> bool:
    """Whether ub is within the search's last margin of lb (lb optimal)."""
    if lb > 0:  # relative only: weights from 1e-17 to 0.04 once "proved" 2.790e-13 for 2.7897e-13
        return ub <= lb * (1.0 + 2 * margin)
    return ub <= ABS_TINY * float(inst.phi.max(initial=0.0))


def primal_seconds(inst: P.CltapInstance, limit: float) -> float:
    """The best-of start's time budget (PRIMAL_MAX_S, PRIMAL_SHARE, PRIMAL_PER_BINARY)."""
    return min(PRIMAL_MAX_S, PRIMAL_SHARE * limit, PRIMAL_PER_BINARY * inst.t * inst.a * inst.K)


def solve_head_cover(inst: P.CltapInstance, opts: RunOptions | None = None) -> Outcome:
    """The `head-cover` formulation through the one runner (its matrix emitted as arrays,
    `models.cltap_heads.emit_heads`; its passes are the search of this module). Status optimal
    when the last refuted theta is within STEP of lb (or a cheap bound meets lb); time_limit
    otherwise, with the best assignment found and the last
    refuted theta (a limit that falls in the build or compile: the start and its cheap bound).
    Without a time limit in `opts` the limit is DEFAULT_TIME."""
    from ..models.cltap import FORMULATIONS
    from .exact_runner import solve_exact

    opts = opts or RunOptions()
    if opts.time_limit is None and not opts.no_time_limit:
        opts = dataclasses.replace(opts, time_limit=DEFAULT_TIME)
    t0 = time.perf_counter()
    limit = opts.time_limit or DEFAULT_TIME
    start = start_bounds(inst, primal_seconds(inst, limit), SEED, branch_seconds(limit))
    sol, lb, ub, src = start
    if proven(lb, ub, inst):  # the cheap bound meets the best-of start: no model to build
        return Outcome("optimal", sol, max(ub, lb), src, lb,
                       {"start_lb": lb, "start_ub": ub, "start_bound": src, "steps": [],
                        "time_s": time.perf_counter() - t0})
    _last_start()[:] = [(inst, SEED, start)]
    # the start (cheap bounds, best-of primal) counts against the limit, as a build does
    if opts.time_limit is not None:
        opts = dataclasses.replace(opts, time_limit=max(
            opts.time_limit - (time.perf_counter() - t0), 0.05))
    try:  # the build and compile run under the limit's timer, as every other build
        out = solve_exact(FORMULATIONS["head-cover"], inst, opts, stop_in_load=True)
    finally:
        _last_start().clear()
    if out.status is Status.TIME_LIMIT and out.solution is None:  # stopped in the build:
        why = str(out.details.get("message", "stopped by the time limit"))
        why = why.split(": HiGHS not started")[0]
        return Outcome("time_limit", sol, max(ub, lb), src, lb,  # the start is the answer
                       {**out.details, "start_lb": lb, "start_ub": ub, "start_bound": src,
                        "steps": [], "time_s": time.perf_counter() - t0,
                        "message": f"{why}: the best-of start and its cheap bound"})
    return out


def _reach(inst: P.CltapInstance) -> np.ndarray:
    """phi_jk + the best label of every later annotator: the most a task headed by (j, k) gets."""
    best = inst.phi.max(axis=1) if inst.K else np.zeros(inst.a)
    later = np.concatenate([np.cumsum(best[::-1])[::-1][1:], [0.0]])
    return inst.phi + later[:, None]


class _Search:
    """The loaded head-cover model and what the search keeps: incumbent, its point, bounds."""

    def __init__(self, ctx: Any) -> None:
        self.ctx, self.inst, self.hm, self.cols = ctx, ctx.inst, ctx.model, ctx.extras
        self.reach = _reach(self.inst)
        g = [(h, c) for h, c in self.cols["g"].items() if c >= 0]
        self.g_heads, self.g_cols = [h for h, _ in g], np.array([c for _, c in g], np.int32)
        self.g_hi = self.hm._col_hi[self.g_cols] * self.hm._cs[self.g_cols]
        eta = self.cols["eta"]
        self.eta_bounds = (self.hm._col_lo[eta] * self.hm._cs[eta],
                           self.hm._col_hi[eta] * self.hm._cs[eta])
        self.sol: P.CltapSolution | None = None
        self.x: np.ndarray | None = None
        self.lb = 0.0

    def offer(self, sol: P.CltapSolution) -> bool:
        """Take `sol` as the incumbent if it is better and a point of the loaded model (rows,
        bounds and integrality as loaded, the search's own bound changes undone)."""
        from ..models.cltap_heads import encode_heads

        ev = P.evaluate(self.inst, sol)
        if not ev.feasible or (self.sol is not None and ev.objective <= self.lb):
            return False
        x = encode_heads(self.inst, self.cols, sol, ev.objective, self.hm.num_col)
        if x is None:
            return False
        self.set_eta(*self.eta_bounds)
        self.set_heads(0.0)
        if self.hm._violation(x / self.hm._cs) > 1e-7:
            return False
        self.sol, self.x, self.lb = sol, x, ev.objective
        return True

    def set_eta(self, lo: float, hi: float) -> None:
        self.hm.set_col_bounds([self.cols["eta"]], lo, hi)

    def set_heads(self, need: float) -> None:
        """Heads that cannot reach `need` fixed to 0, the others back to their loaded bounds."""
        if not len(self.g_cols):
            return
        r = np.array([self.reach[h] for h in self.g_heads])
        self.hm.set_col_bounds(self.g_cols, 0.0, np.where(r >= need * (1 - 1e-9), self.g_hi, 0.0))

    def result(self, res: Any, status: Status, ub: float) -> Any:
        """`res` (a solve of this model) carrying the search's answer: the incumbent's point,
        value and the bound."""
        gap = max(ub - self.lb, 0.0)
        viol = self.hm._violation(self.x / self.hm._cs) if self.x is not None else None
        # the bound is a refuted theta or a closed-form bound, numbers the search chose, not a
        # solver's dual bound: no solver noise floor (objective_unit 0), the gap is relative
        return dataclasses.replace(
            res, status=status, objective=self.lb if self.x is not None else None, bound=ub,
            abs_gap=gap, rel_gap=gap_ratio(self.lb, ub)[1] if self.x is not None else None,
            x=self.x, max_violation=viol, row_duals=None, objective_unit=0.0)


def search_passes(ctx: Any) -> Any:
    """The passes of the `head-cover` formulation: the search on theta (module docstring) on the
    loaded model. Returns the formulation's PassResult (bound source: the refuted theta or the
    cheap bound of the start)."""
    from ..models.formulation import PassResult, solve_once

    inst, hm = ctx.inst, ctx.model
    t0 = time.perf_counter()
    limit = ctx.time_left()
    limit = math.inf if limit is None else limit  # no limit asked for (a year or more)
    sr = _Search(ctx)
    start, _, ub, src = start_bounds(inst, primal_seconds(inst, limit), SEED,
                                     branch_seconds(limit))
    if sr.cols["theta"] < ub:  # the model's own truncation value bounds eta too
        ub, src = sr.cols["theta"], "head-cover model: eta <= its theta"
    if not sr.offer(start):
        ctx.details["search"] = "the loaded model cuts off the best-of start: one max-min solve"
        return solve_once(ctx, "milp-dual-bound")
    ctx.details.update(start_lb=sr.lb, start_ub=ub, start_bound=src,
                       start_s=time.perf_counter() - t0)
    steps: list[dict[str, Any]] = []
    status, last = Status.OPTIMAL, None
    margin = STEP
    # A step's "infeasible" is the proof OPT < theta, but HiGHS presolve has called feasible
    # MIPs infeasible (at eta = lb (1 + 1e-8) on instances whose optimum leaves annotators
    # unused). A refutation becomes the bound `ub` only once a run without presolve confirms it
    # (step 3 of the module docstring). Midpoint steps only guide the search (`guide`): their
    # refutations go unconfirmed, since the final step just above lb, which is confirmed, would
    # find the plan an unconfirmed refutation wrongly ruled out (at t = 50 confirming every step
    # cost 3x the search: 38 s CPU against 13 s on inc seed 0).
    step_opts = hm.options.replace(known_feasible=False)
    guide = ub
    while not proven(sr.lb, ub, inst, margin):
        left = limit - (time.perf_counter() - t0)
        if left <= 0.05:
            status = Status.TIME_LIMIT
            break
        lb = sr.lb
        near = guide - lb <= ASCENT_GAP * guide
        final = lb > 0 and (near or not steps)
        theta = lb * (1.0 + margin) if final else 0.5 * (lb + guide)
        # with lb = 0 there is no step just above lb: every refutation is the bound, confirmed
        confirm = final or lb <= 0
        sr.set_eta(theta, theta)  # the feasibility problem: every task reaches theta
        sr.set_heads(theta)
        hm.options = step_opts.replace(time_limit=left if math.isfinite(left) else None,
                                       confirm_infeasible=confirm and CONFIRM_REFUTATIONS)
        res = last = hm.solve()
        step = {"theta": theta, "status": str(res.status), "solve_s": res.solve_s,
                "nodes": res.nodes, "presolve": res.presolve,
                "kind": "proof" if final else "guide"}
        if res.retried_without_presolve:
            step["presolve_recheck"] = ("presolve said infeasible, without it: "
                                        + ("infeasible" if res.status is Status.INFEASIBLE
                                           else str(res.status)))
        steps.append(step)
        if res.status is Status.INFEASIBLE:
            guide = theta
            if confirm or not res.presolve or not CONFIRM_REFUTATIONS:
                ub, src = theta, "head-cover MILP: every task reaching theta is infeasible"
        elif res.x is not None and res.status is Status.OPTIMAL:
            cand = ctx.decode(res)
            step["value"] = P.evaluate(inst, cand).objective
            better = local_search(inst, cand, time_limit=SEARCH_S, seed=SEED, target=ub)
            if not (sr.offer(better) or sr.offer(cand)):
                step["note"] = "decoded assignment does not improve lb: wider margin"
                margin *= 10
                if margin > MAX_STEP:  # HiGHS's tolerance cannot tell theta from lb: no proof
                    status = Status.FEASIBLE
                    ctx.details["message"] = (
                        f"not proven: the search cannot separate values within {MAX_STEP:g} "
                        "(relative) of the incumbent at HiGHS's tolerance; the bound is the "
                        "last refuted value")
                    break
        else:
            status = Status.TIME_LIMIT if res.status is Status.TIME_LIMIT else Status.ERROR
            break
        if sr.lb >= guide:  # an unconfirmed refutation was wrong: back to the proven bound
            guide = ub
    sr.set_eta(*sr.eta_bounds)
    sr.set_heads(0.0)
    if last is None:  # settled by the start (its plan checked on the loaded model by `offer`,
        last = hm.not_run(status)  # its bound valid for it): no solve to run
    ctx.details.update(steps=steps, search_s=time.perf_counter() - t0)
    return PassResult(sr.result(last, status, max(ub, sr.lb)), sr.sol, src)
