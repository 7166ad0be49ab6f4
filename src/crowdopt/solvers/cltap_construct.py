"""CL-TAP (paper 003) constructions beyond CBP and the best-of `fast` path [ours].

- `lpt_place`: given prefix lengths n_j (sum <= b, n_j <= K), place every label (j, k), k < n_j,
  heaviest phi first (LPT) on the task with the lowest c' so far (eq. 10's per-task linear
  correctness) that j has not labelled yet (one label per (task, annotator), constraint (15)).
  The prefix rule (16) holds by construction (the labels of j are exactly her first n_j).
- `alloc_lpt`: prefix lengths of the truncated covering bound's allocation at theta (the
  multiple-choice knapsack over min(phi, theta), `cltap_bounds.covering_allocation`), then LPT.
- `cbp_phi`: CBP (Algorithm 1) ranking runs by average weight phi instead of accuracy p
  (digest B2 option).
- `full_rows`: for b >= 2t, K = t, the best pair of whole rows (exhaustive), more rows greedily.
- `fast`: every construction (CBP, CBP-phi, allocation-then-LPT at the covering bound and at
  UB_LP, LPT on CBP's prefix lengths, whole rows, the layered plan of `cltap_layers` above the
  best of them), the best one by the evaluator, then the local search
  from it with the whole remaining budget, stopping early only when the incumbent meets the
  tightest cheap bound (covering, counting): then it is proven optimal.
"""

from __future__ import annotations

import time

import numpy as np

from ..problems.cltap import CltapInstance, CltapSolution, empty_solution, evaluate
from .cltap_bounds import counting_bound, covering_allocation, covering_bound
from .cltap_cbp import cbp
from .cltap_layers import layered
from .cltap_search import local_search


def lpt_place(inst: CltapInstance, n: np.ndarray) -> CltapSolution:
    """Labels of the prefixes n, heaviest first, each to the neediest task j has not labelled
    (ties: lowest task index). Feasible for (13)-(17) whenever sum n <= b and n_j <= K <= t."""
    n = np.minimum(np.asarray(n, dtype=np.int64), inst.K)
    z = empty_solution(inst).task_of
    jj = np.repeat(np.arange(inst.a), n)
    kk = np.concatenate([np.arange(m) for m in n]) if len(n) else np.zeros(0, dtype=np.int64)
    order = np.argsort(-inst.phi[jj, kk], kind="stable")
    c = np.zeros(inst.t)
    lab = np.zeros((inst.a, inst.t), dtype=bool)
    for q in order:
        j, k = int(jj[q]), int(kk[q])
        i = int(np.argmin(np.where(lab[j], np.inf, c)))
        z[j, k] = i
        lab[j, i] = True
        c[i] += inst.phi[j, k]
    return CltapSolution(z)


def alloc_lpt(inst: CltapInstance, theta: float | None = None) -> CltapSolution:
    """Allocation-then-LPT: prefix lengths maximizing sum min(phi, theta) within the budget
    (theta = the covering bound by default), placed by `lpt_place`."""
    if theta is None:
        theta = covering_bound(inst).value
    if theta <= 0:
        theta = float(inst.phi.max()) if inst.phi.size else 0.0
    return lpt_place(inst, covering_allocation(inst, theta))


def full_rows(inst: CltapInstance) -> CltapSolution | None:
    """Whole-row construction for b >= 2t, K = t: m = floor(b / t) annotators each label every
    task once (a full prefix, so any order of her iterations over the tasks is allowed by (16));
    the best pair is searched exhaustively (task k gets row 1's k-th smallest and row 2's k-th
    largest weight, the bottleneck pairing), further rows greedily (heaviest label on the
    neediest task); the budget left, b - m t, is spent by CBP from there (Algorithm 1 with a
    start). With increasing curves CBP itself takes two full rows, ranked by average p: the
    exhaustive pair is what it misses. None when the shape does not apply."""
    t, a, K = inst.t, inst.a, inst.K
    if K < t or inst.b < 2 * t or a < 2:
        return None
    m = min(a, inst.b // t)
    srt = np.sort(inst.phi, axis=1)  # ascending weights of each full row
    best_v, pair = -np.inf, (0, 1)
    for j in range(a):
        v = (srt[j][None, :] + srt[:, ::-1]).min(axis=1)
        v[j] = -np.inf
        k = int(np.argmax(v))
        if v[k] > best_v:
            best_v, pair = float(v[k]), (j, k)
    chosen = [pair[0], pair[1]]
    c = srt[pair[0]] + srt[pair[1]][::-1]  # c[q] = value of the q-th task so far
    while len(chosen) < m:
        order = np.argsort(c, kind="stable")
        cand = [j for j in range(a) if j not in chosen]
        vals = [float((c[order] + srt[j][::-1]).min()) for j in cand]
        j = cand[int(np.argmax(vals))]
        c[order] += srt[j][::-1]
        chosen.append(j)
    # rebuild the placement: row 1 in order, then each row's heaviest on the neediest task
    z = empty_solution(inst).task_of
    cc = np.zeros(t)
    for j in chosen:
        order = np.argsort(cc, kind="stable")  # neediest first
        ks = np.argsort(-inst.phi[j], kind="stable")  # heaviest iteration first
        z[j, ks] = order
        cc[order] += inst.phi[j, ks]
    return cbp(inst, start=CltapSolution(z))


def cbp_phi(inst: CltapInstance) -> CltapSolution:
    """CBP (Algorithm 1) with runs ranked by their average weight phi (digest B2)."""
    return cbp(inst, avg_on="phi")


def constructions(inst: CltapInstance, theta: float | None = None,
                  deadline: float | None = None) -> dict[str, CltapSolution]:
    """Every construction by name (CBP first). `deadline` (perf_counter): the constructions
    after CBP start only while it has not passed (at t = 1000, a = 100 each costs seconds)."""
    from .cltap_colgen import _closed_form, closed_form_bound

    def more() -> bool:
        return deadline is None or time.perf_counter() < deadline

    s_cbp = cbp(inst)
    out = {"cbp": s_cbp}
    if more():
        out["cbp-phi"] = cbp_phi(inst)
    if more():
        out["alloc-lpt"] = alloc_lpt(inst, theta)
    if more():
        ub = closed_form_bound(inst)
        if ub > 0:
            out["alloc-lpt@ub-lp"] = lpt_place(inst, covering_allocation(inst, ub))
    if more():
        _, n_lo, _ = _closed_form(inst)
        out["lpt@lp-lengths"] = lpt_place(inst, np.floor(np.asarray(n_lo) + 1e-9).astype(np.int64))
    if more():
        out["lpt@cbp-lengths"] = lpt_place(inst, (s_cbp.task_of >= 0).sum(axis=1))
    rows = full_rows(inst) if more() else None
    if rows is not None:
        out["full-rows"] = rows
    if more():
        lo = max(evaluate(inst, s).objective for s in out.values())
        hi = None if theta is None else max(theta, lo)
        plan = layered(inst, lo=lo, hi=hi, deadline=deadline)
        if plan is not None:
            out["layered"] = plan
    return out


def cheap_bound(inst: CltapInstance) -> tuple[float, str]:
    """min(covering bound (LP relaxation of G), counting bound): both valid, milliseconds."""
    cov = covering_bound(inst)
    cnt = counting_bound(inst, hi=cov.value if cov.value > 0 else None)
    return (cov.value, cov.source) if cov.value <= cnt.value else (cnt.value, cnt.source)


def fast(inst: CltapInstance, *, time_limit: float = 2.0, seed: int = 0,
         target: float | None = None, stats: dict | None = None,
         max_steps: int | None = None) -> CltapSolution:
    """Best of all constructions (those after CBP only while `time_limit` lasts), then the local
    search (Sec. 4.3) from it for the rest of `time_limit`, stopping early only when min c' meets `target` (default: the cheap bound),
    i.e. when the incumbent is proven optimal. `max_steps`: a deterministic budget of search
    steps (then `time_limit` is only a safety cap; stats say which one stopped it)."""
    t0 = time.perf_counter()
    bound, _ = cheap_bound(inst)
    if target is None:
        target = bound
    cands = constructions(inst, theta=bound, deadline=t0 + time_limit)
    scores = {k: evaluate(inst, s).objective for k, s in cands.items()}
    best = max(scores, key=lambda k: scores[k])  # first maximum: CBP wins ties
    ls_stats: dict = {}
    sol = local_search(inst, cands[best], time_limit=max(0.0, time_limit
                                                         - (time.perf_counter() - t0)),
                       seed=seed, target=target, stats=ls_stats,
                       **({} if max_steps is None else {"max_steps": max_steps}))
    if stats is not None:
        stats.update(constructions=scores, start=best, target=target, local_search=ls_stats,
                     time_s=time.perf_counter() - t0)
    return sol
