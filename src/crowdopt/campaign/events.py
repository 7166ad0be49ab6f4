"""Webhook events in the campaign's store (the outbox, see `store`): an event is written in the
transaction of the record that caused it, one delivery row per registered endpoint
(`campaign webhook add`, `serve --webhook`), so an event exists exactly when its answers do,
whichever process recorded them (a server, `campaign record`, Python); `webhooks.Delivery`
sends them.

Events: `answers` (after each record that stored answers: counts and the budget: spent,
reserved, left), `budget` (the spend crossed 25, 50, 75 or 100 % of the budget: each
threshold once, as the spend only grows), `done` (the campaign finished: once).
"""

from __future__ import annotations

import json
import secrets
from typing import Any

THRESHOLDS = (0.25, 0.5, 0.75, 1.0)
STATES = ("pending", "delivered", "failed")


def active_endpoints(camp) -> list[int]:
    """Ids of the endpoints new events are written for (re-read when the campaign row says
    endpoints were added or removed since: `endpoints_rev`, read with the event number)."""
    rev, eps = getattr(camp, "_endpoints", (None, []))
    if rev != camp.endpoints_rev:
        eps = camp.store.active_endpoints()
        camp._endpoints = (camp.endpoints_rev, eps)
    return eps


def enqueue(st, kind: str, data: dict, campaign: str, now: float,
            endpoints: list[int]) -> None:
    """Write event `kind` and one pending delivery per endpoint (inside the caller's
    transaction). The body carries a delivery id that stays the same on every retry: a
    receiver drops repeats by it."""
    doc = {"event": kind, "campaign": campaign, "time": now,
           "delivery": secrets.token_hex(8), **data}
    st.add_event(kind, json.dumps(doc), now, endpoints)


def after_record(camp, mem, counts: dict, spent0: int, budget: dict, now: float) -> None:
    """The events of a record that stored answers (inside its transaction): `answers`, the
    budget thresholds the spend crossed (from `spent0` to now), `done` when it finished."""
    eps = active_endpoints(camp)
    if not eps:
        return
    spent, total = budget["spent"], camp.budget
    data: dict[str, Any] = {"rows": sum(counts.values()), "stored": counts["stored"],
                            "late": counts["late"], "duplicates": counts["duplicate"],
                            "rejected": counts["rejected"], **budget, "budget": total}
    enqueue(camp.store, "answers", data, camp.name, now, eps)
    for t in THRESHOLDS:
        if spent0 < t * total <= spent:
            enqueue(camp.store, "budget", {"fraction": t, "spent": spent, "budget": total},
                    camp.name, now, eps)
    idle = mem.known == mem.n_queries and not mem.extra and mem.applied == len(mem.decs)
    if idle and mem.A.exhausted(total - spent) and not camp.store.has_event("done"):
        enqueue(camp.store, "done", {"spent": spent, "budget": total}, camp.name, now, eps)


def listing(st, state: str | None = None, limit: int = 50) -> dict:
    """Counts per endpoint and state, and the last `limit` deliveries (of `state`), read
    from store `st` in one snapshot."""
    st.begin(False)
    try:
        eps = []
        for eid, url, active in st.endpoints():
            n = st.outbox_counts(eid)
            eps.append({"url": url, "active": bool(active), **{s: n.get(s, 0) for s in STATES}})
        rows = st.deliveries(state, limit)
    finally:
        st.rollback()
    keys = ("event", "kind", "endpoint", "state", "attempts", "created_at", "next_at",
            "done_at", "last_error")
    deliveries = [dict(zip(keys, r)) for r in rows]
    totals = {s: sum(e[s] for e in eps) for s in STATES}
    return {"endpoints": eps, "totals": totals, "deliveries": deliveries}
