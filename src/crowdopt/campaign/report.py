"""`Campaign.status()`: budget, leases, current labels with confidence, worker reliabilities."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .drivers import LsolDriver, PairDriver, PlanDriver


def _labels(camp, mem, item: np.ndarray, worker: np.ndarray, label: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Class index (-1: none yet) and confidence per item, from the committed policy; for
    LS_OL the confidence is the posterior of the weighted vote of every answer, weighted by the
    log-odds of p_hat (Sec. 4), through the one aggregation door."""
    n = len(camp.item_ids)
    A = mem.A
    if isinstance(A, LsolDriver):
        from ..crowd.runner import run_method  # the aggregation methods: LS_OL only
        from ..crowd.tables import LabelTable

        L = A.learner
        lab = np.full(n, -1, dtype=np.int64)
        for i, y in A.outputs.items():
            lab[i] = y
        p = L.p_hat()
        known = worker < len(p)
        table = LabelTable(np.arange(n), np.arange(len(p)), np.arange(L.K), item[known],
                           worker[known], label[known])
        # a clip of 0 would give a perfect labeler an infinite weight: keep it finite
        post = run_method(table, "wmv", accuracies=p, clip=max(L.p_clip, 1e-12),
                          ties="first").posteriors
        conf = np.where(lab >= 0, post[np.arange(n), np.maximum(lab, 0)], np.nan)
        return lab, conf
    return A.labels()


def _reliability(camp, mem) -> tuple[np.ndarray | None, str | None]:
    A = mem.A
    if isinstance(A, PairDriver):
        return A.pol.reliability(), "posterior mean of rho (one-coin model, Sec. 5)"
    if isinstance(A, LsolDriver):
        return A.learner.p_hat(), "p_hat: agreement with tester consensus (LS_OL)"
    if isinstance(A, PlanDriver):
        p = 1.0 / (1.0 + np.exp(-A.logits))
        used = np.zeros(p.shape, dtype=bool)
        for j, k, _ in A.plan:
            used[j, k] = True
        cnt = used.sum(axis=1)
        return (np.where(cnt > 0, (p * used).sum(axis=1) / np.maximum(cnt, 1), np.nan),
                "forecast accuracy over the planned iterations (CL-TAP input)")
    return None, None


def _exhausted(camp, mem) -> bool:
    """Every decision answered and the policy has nothing more to decide within the budget."""
    if mem.applied < len(mem.decs):
        return False
    S = mem.A.clone()  # a copy: proposing draws the policy's ties
    if not S.determined():
        return False
    size = S.size()
    return size == 0 or size > camp.budget - mem.n_queries or S.propose() is None


def _rates(times: np.ndarray, now: float, window: float = 600.0
           ) -> tuple[float | None, float | None]:
    """Answers per minute over the last `window` seconds (or since the first answer when
    sooner), and the time of the last answer."""
    if not times.size:
        return None, None
    since = max(float(times.min()), now - window)
    n = int(np.count_nonzero(times >= since))
    span = max(now - since, 1.0)
    return 60.0 * n / span, float(times.max())


def _histogram(conf: np.ndarray, bins: int = 10) -> dict:
    """Counts of the labels' confidence in `bins` equal bins over [1/K, 1] (here [0.5, 1] for
    the binary policies: a confidence is never below a half)."""
    c = conf[np.isfinite(conf)]
    lo = 0.5 if c.size == 0 or c.min() >= 0.5 else float(np.floor(c.min() * 10) / 10)
    edges = np.linspace(lo, 1.0, bins + 1)
    counts = np.histogram(np.clip(c, lo, 1.0), bins=edges)[0] if c.size else np.zeros(bins)
    return {"edges": [float(e) for e in edges], "counts": [int(x) for x in counts]}


def status(camp, mem, gold: Mapping[str, Any] | None, now: float, *, offset: int = 0,
           limit: int | None = None) -> dict:
    """The campaign's status document at time `now` (the clock of leases). `offset`/`limit`
    page the per-item labels, the workers and the expired leases (the totals and summaries
    always cover everything)."""
    conn = camp.conn
    a_item, a_worker, a_label, a_late, a_time = mem.log.columns()
    n_ans = len(a_item)
    n_late = int(a_late.sum())
    rows = conn.execute("SELECT q.id, q.item, q.worker, q.handed, q.lease_until, q.leased_to "
                        "FROM queries q WHERE q.open = 1 ORDER BY q.id").fetchall()
    n_leased, expired, waiting = 0, [], 0
    for qid, item, w, handed, until, to in rows:
        if not handed:
            waiting += 1
        elif until < now:
            expired.append({"query": qid, "item": camp.item_ids[item],
                            "worker": None if w is None else camp.worker_ids[w],
                            "leased_to": to, "lease_until": until})
        else:
            n_leased += 1
    issued = mem.n_queries
    n_items = len(camp.item_ids)
    lab, conf = _labels(camp, mem, a_item, a_worker, a_label)
    lab = np.asarray(lab, dtype=np.int64).copy()
    conf = np.asarray(conf, dtype=float).copy()
    per_item = np.bincount(a_item, minlength=n_items) if n_ans else np.zeros(n_items, np.int64)
    unanswered = per_item == 0  # never an answer: no label, whatever the prior says
    lab[unanswered] = -1
    conf[unanswered | (lab < 0)] = np.nan
    labelled = lab >= 0
    sl = slice(offset, None if limit is None else offset + limit)
    items = [{"item": camp.item_ids[i], "label": camp.classes[y] if y >= 0 else None,
              "confidence": c if math.isfinite(c) else None, "answers": k}
             for i, y, c, k in zip(range(n_items)[sl], lab[sl].tolist(), conf[sl].tolist(),
                                   per_item[sl].tolist())]
    rel, rel_src = _reliability(camp, mem)
    nw = len(camp.worker_ids)
    n_by = np.bincount(a_worker, minlength=nw) if n_ans else np.zeros(nw, np.int64)
    hit = (lab[a_item] == a_label) if n_ans else np.zeros(0, bool)
    agree = np.bincount(a_worker, weights=hit, minlength=nw) if n_ans else np.zeros(nw)
    workers = []
    for j in range(nw)[sl]:
        row = {"worker": camp.worker_ids[j], "answers": int(n_by[j]),
               "agreement": float(agree[j] / n_by[j]) if n_by[j] else None}
        if rel is not None:
            row["reliability"] = float(rel[j]) if j < len(rel) and np.isfinite(rel[j]) else None
        workers.append(row)
    done = (not n_leased and not expired and not waiting and n_ans - n_late == issued
            and (issued + n_late >= camp.budget or _exhausted(camp, mem)))
    left = camp.budget - issued - n_late
    rate, last = _rates(a_time, now)
    outstanding = n_leased + len(expired) + waiting
    eta = None
    if not done and rate:
        eta = 60.0 * (max(left, 0) + outstanding) / rate
    out: dict[str, Any] = {
        "campaign": str(camp.path), "policy": camp.policy, "params": camp.params,
        "seed": camp.seed, "batching": camp.batching, "classes": camp.classes,
        "budget": camp.budget, "spent": n_ans, "answers": n_ans, "late": n_late,
        "issued": issued, "left": left, "decisions": len(mem.decs),
        "applied": mem.applied, "answers_waiting": n_ans - n_late - sum(
            map(len, mem.decs.qids[:mem.applied])) if camp.batching == "exact" else 0,
        "open": {"leased": n_leased, "expired": len(expired), "not_handed_out": waiting},
        "expired_leases": expired[sl], "done": bool(done),
        "items": n_items, "labelled": int(labelled.sum()), "workers_known": nw,
        "answers_per_minute": rate, "last_answer_at": last, "eta_seconds": eta,
        "confidence_histogram": _histogram(conf[labelled]),
        "mean_confidence": float(np.nanmean(conf[labelled])) if labelled.any() else None,
        "answer_agreement": float(hit.mean()) if n_ans else None,
        "page": {"offset": offset, "limit": limit, "labels_total": n_items,
                 "workers_total": nw, "expired_total": len(expired)},
        "labels": items, "workers": workers,
        "reliability_source": rel_src or "agreement with the current labels only; the "
                                         "homogeneous model has no worker parameter",
    }
    if isinstance(mem.A, LsolDriver):
        L = mem.A.learner
        # the set of the last exploitation step in the log (the current set would need the
        # pi(S) search again: seconds on a finished campaign)
        last = next((w for kind, _, w, _ in reversed(mem.decs.props) if kind == "exploit"), ())
        out["lsol"] = {"testers": int(L.n), "steps": dict(L.steps),
                       "selected": [camp.worker_ids[j] for j in last]}
    if gold is not None:
        g = {str(k): str(v) for k, v in gold.items()}
        hits = [camp.classes[int(lab[i])] == g[camp.item_ids[i]] for i in range(n_items)
                if labelled[i] and camp.item_ids[i] in g]
        out["gold_items"] = len(hits)
        out["accuracy"] = float(np.mean(hits)) if hits else None
    return out
