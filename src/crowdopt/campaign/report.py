"""`Campaign.status()`: budget, leases, current labels with confidence, worker reliabilities."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..problems.vote_accuracy import log_odds
from .drivers import LsolDriver, PairDriver, PlanDriver


def _labels(camp, mem, answers: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Class index (-1: none yet) and confidence per item, from the committed policy."""
    n = len(camp.item_ids)
    A = mem.A
    if isinstance(A, LsolDriver):
        L = A.learner
        lab = np.full(n, -1, dtype=np.int64)
        for i, y in A.outputs.items():
            lab[i] = y
        w = log_odds(L.p_hat(), L.p_clip) + math.log(L.K - 1)  # the WMV weights (Sec. 4)
        score = np.zeros((n, L.K))
        for item, worker, label in answers:
            if worker < len(w):
                score[item, label] += w[worker]
        score -= score.max(axis=1, keepdims=True)
        post = np.exp(score)
        post /= post.sum(axis=1, keepdims=True)
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


def status(camp, mem, gold: Mapping[str, Any] | None, now: float) -> dict:
    """The campaign's status document at time `now` (the clock of leases)."""
    conn = camp.conn
    answers = conn.execute("SELECT item, worker, label FROM answers ORDER BY seq").fetchall()
    n_ans = len(answers)
    rows = conn.execute("SELECT q.id, q.item, q.worker, q.handed, q.lease_until, q.leased_to "
                        "FROM queries q WHERE q.open = 1 ORDER BY q.id").fetchall()
    leased, expired, waiting = [], [], 0
    for qid, item, w, handed, until, to in rows:
        if not handed:
            waiting += 1
            continue
        rec = {"query": qid, "item": camp.item_ids[item],
               "worker": None if w is None else camp.worker_ids[w], "leased_to": to,
               "lease_until": until}
        (expired if until < now else leased).append(rec)
    issued = mem.n_queries
    lab, conf = _labels(camp, mem, answers)
    per_item = np.bincount([a[0] for a in answers], minlength=len(camp.item_ids)) \
        if answers else np.zeros(len(camp.item_ids), dtype=np.int64)
    items = [{"item": camp.item_ids[i],
              "label": camp.classes[int(lab[i])] if lab[i] >= 0 else None,
              "confidence": None if not np.isfinite(conf[i]) else float(conf[i]),
              "answers": int(per_item[i])} for i in range(len(camp.item_ids))]
    rel, rel_src = _reliability(camp, mem)
    nw = len(camp.worker_ids)
    n_by = np.zeros(nw, dtype=np.int64)
    agree = np.zeros(nw, dtype=np.int64)
    for item, worker, label in answers:
        n_by[worker] += 1
        agree[worker] += int(lab[item] == label)
    workers = []
    for j in range(nw):
        row = {"worker": camp.worker_ids[j], "answers": int(n_by[j]),
               "agreement": float(agree[j] / n_by[j]) if n_by[j] else None}
        if rel is not None:
            row["reliability"] = float(rel[j]) if j < len(rel) and np.isfinite(rel[j]) else None
        workers.append(row)
    done = (not leased and not expired and not waiting and n_ans == issued
            and (issued >= camp.budget or _exhausted(camp, mem)))
    out: dict[str, Any] = {
        "campaign": str(camp.path), "policy": camp.policy, "params": camp.params,
        "seed": camp.seed, "batching": camp.batching, "classes": camp.classes,
        "budget": camp.budget, "spent": n_ans, "answers": n_ans, "issued": issued,
        "left": camp.budget - issued, "decisions": len(mem.decs),
        "applied": mem.applied, "answers_waiting": n_ans - sum(
            len(d.qids) for d in mem.decs[:mem.applied]) if camp.batching == "exact" else 0,
        "open": {"leased": len(leased), "expired": len(expired), "not_handed_out": waiting},
        "expired_leases": expired, "done": bool(done),
        "items": len(camp.item_ids), "workers_known": nw,
        "labels": items, "workers": workers,
        "reliability_source": rel_src or "agreement with the current labels only; the "
                                         "homogeneous model has no worker parameter",
    }
    if isinstance(mem.A, LsolDriver):
        st = mem.A.learner.state()
        out["lsol"] = {"testers": st["testers"], "steps": st["steps"],
                       "selected": [camp.worker_ids[j] for j in st["selected"]]}
    if gold is not None:
        g = {str(k): str(v) for k, v in gold.items()}
        hits = [(it["label"] == g[it["item"]]) for it in items
                if it["item"] in g and it["label"] is not None]
        out["gold_items"] = len(hits)
        out["accuracy"] = float(np.mean(hits)) if hits else None
    return out
