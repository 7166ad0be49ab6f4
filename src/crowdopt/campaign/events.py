"""Webhook events in the campaign file (the outbox, see `store`): an event is written in the
transaction of the record that caused it, one delivery row per endpoint of the last
`campaign serve --webhook`, so an event exists exactly when its answers do, whichever process
recorded them (the server, `campaign record`, Python); `webhooks.Delivery` sends them.

Events: `answers` (after each record that stored answers: counts and the budget: spent,
reserved, left), `budget` (the spend crossed 25, 50, 75 or 100 % of the budget: each
threshold once, as the spend only grows), `done` (the campaign finished: once).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from typing import Any

THRESHOLDS = (0.25, 0.5, 0.75, 1.0)
STATES = ("pending", "delivered", "failed")


def active_endpoints(camp) -> list[int]:
    """Ids of the endpoints new events are written for (re-read when the campaign row says a
    server registered endpoints since: `endpoints_rev`, read with the event number)."""
    rev, eps = getattr(camp, "_endpoints", (None, []))
    if rev != camp.endpoints_rev:
        eps = [r[0] for r in camp.conn.execute("SELECT id FROM endpoints WHERE active = 1")]
        camp._endpoints = (camp.endpoints_rev, eps)
    return eps


def enqueue(conn: sqlite3.Connection, kind: str, data: dict, campaign: str, now: float,
            endpoints: list[int]) -> None:
    """Write event `kind` and one pending delivery per endpoint (inside the caller's
    transaction). The body carries a delivery id that stays the same on every retry: a
    receiver drops repeats by it."""
    doc = {"event": kind, "campaign": campaign, "time": now,
           "delivery": secrets.token_hex(8), **data}
    cur = conn.execute("INSERT INTO events (kind, body, created_at) VALUES (?, ?, ?)",
                       (kind, json.dumps(doc), now))
    conn.executemany("INSERT INTO outbox (event, endpoint, next_at) VALUES (?, ?, ?)",
                     [(cur.lastrowid, e, now) for e in endpoints])


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
    enqueue(camp.conn, "answers", data, camp.name, now, eps)
    for t in THRESHOLDS:
        if spent0 < t * total <= spent:
            enqueue(camp.conn, "budget", {"fraction": t, "spent": spent, "budget": total},
                    camp.name, now, eps)
    idle = mem.known == mem.n_queries and not mem.extra and mem.applied == len(mem.decs)
    if idle and mem.A.exhausted(total - spent) and camp.conn.execute(
            "SELECT 1 FROM events WHERE kind = 'done' LIMIT 1").fetchone() is None:
        enqueue(camp.conn, "done", {"spent": spent, "budget": total}, camp.name, now, eps)


def listing(conn: sqlite3.Connection, state: str | None = None, limit: int = 50) -> dict:
    """Counts per endpoint and state, and the last `limit` deliveries (of `state`)."""
    eps = []
    for eid, url, active in conn.execute("SELECT id, url, active FROM endpoints ORDER BY id"):
        n = dict(conn.execute("SELECT state, count(*) FROM outbox WHERE endpoint = ? "
                              "GROUP BY state", (eid,)).fetchall())
        eps.append({"url": url, "active": bool(active), **{s: n.get(s, 0) for s in STATES}})
    sql = ("SELECT o.event, e.kind, p.url, o.state, o.attempts, e.created_at, o.next_at, "
           "o.done_at, o.last_error FROM outbox o JOIN events e ON e.id = o.event "
           "JOIN endpoints p ON p.id = o.endpoint")
    args: tuple = ()
    if state is not None:
        sql += " WHERE o.state = ?"
        args = (state,)
    rows = conn.execute(sql + " ORDER BY o.event DESC, p.id LIMIT ?", (*args, limit))
    keys = ("event", "kind", "endpoint", "state", "attempts", "created_at", "next_at",
            "done_at", "last_error")
    deliveries = [dict(zip(keys, r)) for r in rows]
    totals = {s: sum(e[s] for e in eps) for s in STATES}
    return {"endpoints": eps, "totals": totals, "deliveries": deliveries}
