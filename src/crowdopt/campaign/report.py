"""`Campaign.status()`: budget (spent, reserved, left), leases, current labels with confidence,
worker reliabilities.

Two sources give the same document: the caught-up in-memory policy (`from_memory`: the server,
a writer, any object that replayed the log) and the file's status summary (`from_summary`: a
reader of an up-to-date file; no replay, so a finished 100k-item campaign reports in a
fraction of a second)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .summary import summary_view

SOURCES = {"optkg-het": "posterior mean of rho (one-coin model, Sec. 5)",
           "lsol": "p_hat: agreement with tester consensus (LS_OL)",
           "cltap": "forecast accuracy over the planned iterations (CL-TAP input)"}


@dataclass
class PolicyState:
    """What a status reads of a campaign besides its queries: the answers (columns in event
    order), decision counts, and the policy's labels, confidences and reliabilities."""

    item: np.ndarray
    worker: np.ndarray
    label: np.ndarray
    late: np.ndarray
    time: np.ndarray
    n_queries: int  # queries decided
    n_decisions: int
    applied: int  # decisions the committed policy has observed
    applied_queries: int  # queries of those decisions
    lab: np.ndarray  # class index per item (-1: none)
    conf: np.ndarray
    rel: np.ndarray | None
    exhausted: Callable[[int], bool]  # no next decision within that many labels
    lsol: dict | None


def _lsol_labels(n: int, outputs: np.ndarray, p: np.ndarray, K: int, p_clip: float,
                 item: np.ndarray, worker: np.ndarray, label: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """LS_OL: each arrival's output, with the posterior of the weighted vote of every answer,
    weighted by the log-odds of p_hat (Sec. 4), through the one aggregation door."""
    lab = outputs.astype(np.int64)
    known = worker < len(p)
    if not known.any():  # no answer yet: no label has a confidence
        return lab, np.full(n, np.nan)
    from ..crowd.runner import run_method  # the aggregation methods: LS_OL only
    from ..crowd.tables import LabelTable

    table = LabelTable(np.arange(n), np.arange(len(p)), np.arange(K), item[known],
                       worker[known], label[known])
    # a clip of 0 would give a perfect labeler an infinite weight: keep it finite
    post = run_method(table, "wmv", accuracies=p, clip=max(p_clip, 1e-12),
                      ties="first").posteriors
    conf = np.where(lab >= 0, post[np.arange(n), np.maximum(lab, 0)], np.nan)
    return lab, conf


def from_memory(camp, mem) -> PolicyState:
    """The state of a caught-up in-memory campaign (`_Mem`)."""
    from .drivers import LsolDriver, PairDriver, PlanDriver

    item, worker, label, late, at = mem.log.columns()
    A = mem.A
    n = camp.n_items
    lsol = None
    rel = None
    if isinstance(A, LsolDriver):
        L = A.learner
        outputs = np.full(n, -1, dtype=np.int64)
        for i, y in A.outputs.items():
            outputs[i] = y
        p = L.p_hat()
        lab, conf = _lsol_labels(n, outputs, p, L.K, L.p_clip, item, worker, label)
        rel = p
        # the set of the last exploitation step in the log (the current set would need the
        # pi(S) search again: seconds on a finished campaign)
        last = next((w for kind, _, w, _ in reversed(mem.decs.props) if kind == "exploit"), ())
        lsol = {"testers": int(L.n), "steps": dict(L.steps),
                "selected": camp.names("workers", last)}
    else:
        lab, conf = A.labels()
        if isinstance(A, PairDriver):
            rel = A.pol.reliability()
        elif isinstance(A, PlanDriver):
            rel = A.reliability()
    decs = mem.decs
    applied_q = sum(map(len, decs.qids[:mem.applied])) if camp.batching == "exact" else 0
    return PolicyState(item, worker, label, late, at, mem.n_queries, len(decs), mem.applied,
                       applied_q, lab, conf, rel,
                       lambda left: mem.applied == len(decs) and A.exhausted(left), lsol)


def from_summary(camp, applied: int, exhausted: bool, data: str | None) -> PolicyState:
    """The state read from the store's status summary (current for its last event)."""
    st = camp.store
    rows = st.answer_rows()
    arr = np.fromiter(itertools.chain.from_iterable(rows), dtype=float,
                      count=5 * len(rows)).reshape(-1, 5)
    ints = arr[:, :3].astype(np.int64)
    item, worker, label = ints[:, 0], ints[:, 1], ints[:, 2]
    late, at = arr[:, 3] > 0, arr[:, 4]
    n_q, n_d, applied_q = st.log_counts(applied if camp.batching == "exact" else None)
    n = camp.n_items
    # a missing value as infinity: every value read is a float (the view turns it into nan)
    rows = st.summary_rows()
    flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=float,
                       count=5 * len(rows)).reshape(-1, 5)
    view = summary_view(camp.policy, n, flat, json.loads(data) if data else None)
    lsol = None
    if camp.policy == "lsol":
        d = view.data or {}
        outputs = np.where(np.isnan(view.x), -1, view.x).astype(np.int64)
        lab, conf = _lsol_labels(n, outputs, view.wx, d["K"], d["p_clip"], item, worker,
                                 label)
        rel = view.wx
        sel = camp.names("workers", st.last_exploit_workers())
        lsol = {"testers": d["testers"], "steps": d["steps"], "selected": sel}
    else:
        lab, conf = view.labels()
        rel = view.reliability()
    return PolicyState(item, worker, label, late, at, n_q, n_d, applied, applied_q, lab, conf,
                       rel, lambda left: bool(exhausted), lsol)


RATE_WINDOW = 600.0  # seconds the answer rate is counted over


def _rates(times: np.ndarray, now: float, window: float = RATE_WINDOW
           ) -> tuple[float | None, float | None, float | None, int]:
    """Answers per minute over the last `window` seconds (or over the time since the first
    answer when that is shorter), the time of the last answer, the window the rate is over
    (seconds, at least 1) and the answers in it: nothing happening makes the rate fall, and
    the window says over what."""
    if not times.size:
        return None, None, None, 0
    since = max(float(times.min()), now - window)
    n = int(np.count_nonzero(times >= since))
    span = max(now - since, 1.0)
    return 60.0 * n / span, float(times.max()), span, n


def _histogram(conf: np.ndarray, bins: int = 10) -> dict:
    """Counts of the labels' confidence in `bins` equal bins over [1/K, 1] (here [0.5, 1] for
    the binary policies: a confidence is never below a half)."""
    c = conf[np.isfinite(conf)]
    lo = 0.5 if c.size == 0 or c.min() >= 0.5 else float(np.floor(c.min() * 10) / 10)
    edges = np.linspace(lo, 1.0, bins + 1)
    counts = np.histogram(np.clip(c, lo, 1.0), bins=edges)[0] if c.size else np.zeros(bins)
    return {"edges": [float(e) for e in edges], "counts": [int(x) for x in counts]}


def status(camp, ps: PolicyState, gold: Mapping[str, Any] | None, now: float, *,
           offset: int = 0, limit: int | None = None, top: int | None = None) -> dict:
    """The campaign's status document at time `now` (the clock of leases). `offset`/`limit`
    page the per-item labels, the workers and the expired leases (the totals and summaries
    always cover everything); `top` adds the `top` least confident labels and the `top`
    workers with the most answers (`least_confident`, `busiest_workers`: what the text report
    shows, without building the whole lists)."""
    a_item, a_worker, a_label, a_late = ps.item, ps.worker, ps.label, ps.late
    n_ans = len(a_item)
    n_late = int(a_late.sum())
    rows = camp.store.open_queries()
    n_leased, expired, waiting = 0, [], 0
    for qid, item, w, handed, until, to in rows:
        if not handed:
            waiting += 1
        elif until < now:
            expired.append((qid, item, w, to, until))
        else:
            n_leased += 1
    n_expired = len(expired)
    expired = expired[offset:None if limit is None else offset + limit]  # the page's
    e_items = camp.names("items", [e[1] for e in expired])
    e_workers = dict(zip(ws := sorted({e[2] for e in expired if e[2] is not None}),
                         camp.names("workers", ws)))
    expired = [{"query": qid, "item": i, "worker": None if w is None else e_workers[w],
                "leased_to": to, "lease_until": until}
               for (qid, _, w, to, until), i in zip(expired, e_items)]
    n_open = len(rows)
    extra = camp._reservations(now)[1]
    issued = ps.n_queries
    n_items = camp.n_items
    lab = np.asarray(ps.lab, dtype=np.int64).copy()
    conf = np.asarray(ps.conf, dtype=float).copy()
    per_item = np.bincount(a_item, minlength=n_items) if n_ans else np.zeros(n_items, np.int64)
    unanswered = per_item == 0  # never an answer: no label, whatever the prior says
    lab[unanswered] = -1
    conf[unanswered | (lab < 0)] = np.nan
    labelled = lab >= 0
    sl = slice(offset, None if limit is None else offset + limit)
    class_of = np.array([*camp.classes, None], dtype=object)  # -1: None

    def floats(x: np.ndarray) -> list:
        """Python floats, None where not finite (JSON has no nan)."""
        return np.where(np.isfinite(x), x, None).tolist()

    def label_rows(idx) -> list[dict]:
        """The rows of items `idx` (a slice or an index array)."""
        confs = floats(conf[idx])
        ids = camp.names("items", range(n_items)[idx] if isinstance(idx, slice)
                         else idx.tolist())
        return [{"item": i, "label": y, "confidence": c, "answers": k} for i, y, c, k in
                zip(ids, class_of[lab[idx]].tolist(), confs, per_item[idx].tolist())]

    items = label_rows(sl)
    rel = ps.rel
    nw = camp.count("workers")  # (in the caller's read transaction: as the answers)
    n_by = np.bincount(a_worker, minlength=nw) if n_ans else np.zeros(nw, np.int64)
    hit = (lab[a_item] == a_label) if n_ans else np.zeros(0, bool)
    agree = np.bincount(a_worker, weights=hit, minlength=nw) if n_ans else np.zeros(nw)

    def worker_rows(idx) -> list[dict]:
        """The rows of workers `idx` (a range or an index list)."""
        ix = np.asarray(idx, dtype=np.int64)
        n = n_by[ix]
        with np.errstate(invalid="ignore", divide="ignore"):
            ag = floats(agree[ix] / n)  # None where no answer
        names = camp.names("workers", idx)
        if rel is None:
            return [{"worker": w, "answers": k, "agreement": a}
                    for w, k, a in zip(names, n.tolist(), ag)]
        r = np.full(ix.size, np.nan)
        inside = ix < len(rel)
        r[inside] = np.asarray(rel, dtype=float)[ix[inside]]
        return [{"worker": w, "answers": k, "agreement": a, "reliability": x}
                for w, k, a, x in zip(names, n.tolist(), ag, floats(r))]

    workers = worker_rows(range(nw)[sl])
    spent = n_ans
    reserved = n_open + extra
    left = camp.budget - spent - reserved
    done = (not n_open and not extra and n_ans - n_late == issued
            and ps.exhausted(camp.budget - spent))
    rate, last, span, in_window = _rates(ps.time, now)
    eta = None
    if not done and rate:
        eta = 60.0 * (max(left, 0) + n_open) / rate
    out: dict[str, Any] = {
        "campaign": str(camp.path), "name": camp.name, "policy": camp.policy,
        "params": camp.params, "seed": camp.seed, "batching": camp.batching,
        "classes": camp.classes, "budget": camp.budget, "spent": spent,
        "reserved": reserved, "left": left, "answers": n_ans, "late": n_late,
        "late_windows_open": extra, "issued": issued, "decisions": ps.n_decisions,
        "applied": ps.applied,
        "answers_waiting": n_ans - n_late - ps.applied_queries
        if camp.batching == "exact" else 0,
        "open": {"leased": n_leased, "expired": n_expired, "not_handed_out": waiting},
        "expired_leases": expired, "done": bool(done),
        "items": n_items, "labelled": int(labelled.sum()), "workers_known": nw,
        "answers_per_minute": rate, "rate_window_seconds": span,
        "answers_in_window": in_window, "last_answer_at": last, "eta_seconds": eta,
        "confidence_histogram": _histogram(conf[labelled]),
        "mean_confidence": float(np.nanmean(conf[labelled])) if labelled.any() else None,
        "answer_agreement": float(hit.mean()) if n_ans else None,
        "page": {"offset": offset, "limit": limit, "labels_total": n_items,
                 "workers_total": nw, "expired_total": n_expired},
        "labels": items, "workers": workers,
        "reliability_source": SOURCES.get(camp.policy) or "agreement with the current labels "
                                                          "only; the homogeneous model has no "
                                                          "worker parameter",
    }
    if top is not None:
        # labelled items by confidence (none: last), workers by answers, ties in order
        key = np.where(np.isfinite(conf), conf, 2.0)
        least = np.flatnonzero(labelled)
        least = least[np.argsort(key[least], kind="stable")[:top]]
        out["least_confident"] = label_rows(least)
        out["busiest_workers"] = worker_rows(np.argsort(-n_by, kind="stable")[:top].tolist())
    if ps.lsol is not None:
        out["lsol"] = ps.lsol
    if gold is not None:
        g = {str(k): str(v) for k, v in gold.items()}
        hits = [camp.classes[int(lab[i])] == g[camp.item_ids[i]] for i in range(n_items)
                if labelled[i] and camp.item_ids[i] in g]
        out["gold_items"] = len(hits)
        out["accuracy"] = float(np.mean(hits)) if hits else None
    return out
