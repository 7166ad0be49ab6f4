"""Where a campaign's state lives: the `CampaignStore` interface (every SQL statement of the
campaign is one of its methods) and its default, the SQLite file.

A campaign target names the store: a file path (`SqliteStore`: one file, nothing to start) or
`postgresql://[user[:password]@]host[:port]/db?campaign=NAME` (`store_postgres.PostgresStore`:
many campaigns per database, several servers on one campaign); `stores.open_store` and
`stores.create_store` take either. `Campaign`, the HTTP service, the report, the events and the
webhooks use only the methods below, never a connection.

The tables (the same in both stores; the SQLite file reached them through the migrations):

- `schema_version` (one row) and `campaign` (one row): policy, parameters, seed, budget,
  batching, class labels, `seq` (the last event number), the status summary's head, the
  webhook endpoints' revision and the admin's caps on /next per role (schema 4);
- `items`, `workers` (ids as text, in input order: the policy's indices), `pairs` (the
  (item, worker) pairs a heterogeneous policy may buy, when restricted);
- `decisions`: every policy decision, numbered k = 1, 2, ... and stamped with its event
  number `seq`; `queries`: the labels each decision asks for (one per worker slot) with the
  lease bookkeeping (`handed`, `lease_until`, `leased_to`, `open`);
- `answers`: every recorded answer, stamped with its event number, unique per query and per
  (item, worker); a late answer (its query was re-issued and answered by someone else first)
  has `query` NULL and `late_for` the query it was leased for (schema 2);
- `tokens` (schema 2): SHA-256 hashes of the HTTP bearer tokens with their role (admin, read,
  worker) and, for a worker token, the worker it answers as; the token itself is never stored;
- `handouts` (schema 3): every hand-out of a query (its first issue and each re-issue after a
  lease ran out): to whom (NULL: anyone), the lease, the late window (`late_until`), and the
  paid answer it yielded. A hand-out is `live` until it yields its one paid answer, is voided
  (its query named a worker and was answered, or the admin released it) or its late window
  closes; a live hand-out reserves one label of the budget. Every stored or late answer names
  its hand-out;
- `summary` (schema 3) and the `summary_*` columns of `campaign`: what `status` needs of the
  policy state (e.g. each item's Beta posterior), appended by every write transaction for the
  items and workers it changed (rows are appended, not updated in place: a record touches a
  few pages whatever items it answers; the superseded rows are dropped once they outnumber
  the items and workers), the campaign row stamped with the event number the summary is
  current for: a reader of an up-to-date store reports without replaying the log;
- `endpoints`, `events`, `outbox` (schema 3): the registered webhook URLs (added and removed
  explicitly; schema 4: the server delivering each one holds a claim on it), the events
  (answers recorded, budget thresholds, done) written in the transaction that caused them,
  and one delivery row per (event, endpoint): pending, delivered or failed.

Decisions and answers share one increasing event counter, so the ordered log of both is a
query away: the policy state is rebuilt (or caught up) from it, never read from a pickle.

Transactions. `begin(write=True)` serializes the writers of one campaign (SQLite: the file's
write lock, `BEGIN IMMEDIATE`; PostgreSQL: a lock on the campaign's row); a writer that waits
longer than its wait limit fails with nothing changed (`Busy`); a serialization failure of the
database is `Conflict`, which the caller retries. `begin(write=False)` is a snapshot that never
waits for a writer. The SQLite file: WAL with `synchronous=NORMAL` keeps every committed
transaction through a crash of the process (kill -9): a commit is in the WAL file before
`COMMIT` returns; only a power loss can drop the last commits (CROWDOPT_CAMPAIGN_SYNC=FULL
fsyncs each commit). A file the user may only read opens with `mode=ro`.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import CrowdoptError, InputError

SCHEMA_VERSION = 4
DEFAULT_BUSY_TIMEOUT = 60.0
INF = float("inf")  # a summary value that is none (read back as nan)


class StoreError(CrowdoptError):
    """The store could not complete an operation (it was rolled back as a whole): locked
    beyond the wait limit, read-only, full, damaged or unreachable. The CLI exits 6."""

    exit_code = 6


class Busy(StoreError):
    """Another process held the campaign's write lock longer than the wait limit (retry)."""


class Conflict(Busy):
    """The database refused a transaction as not serializable (or a deadlock): nothing was
    changed; the operation is run again."""


def is_url(target: Any) -> bool:
    """Whether a campaign target names a PostgreSQL campaign (else: a SQLite file)."""
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def token_hash(token: str) -> str:
    """What the store keeps of a bearer token (tokens are 192 random bits: a plain hash)."""
    return hashlib.sha256(token.encode()).hexdigest()


class CampaignStore:
    """One campaign's state: transactions, the event log, hand-outs, answers, tokens, the
    status summary, the webhook outbox and the schema's migrations.

    The statements are written once, here, in the SQL both databases speak (`?` parameters;
    a dialect translates them); a store overrides only what its database does differently.
    One object is used by one thread at a time."""

    dialect = ""
    NO_LIMIT = "LIMIT -1"  # a LIMIT clause that limits nothing

    def __init__(self, conn: Any, location: Any, readonly: bool):
        self.conn = conn  # the DB-API connection (tests and tools only)
        self.location = location  # a Path (SQLite) or the URL without its password
        self.readonly = readonly
        # called before every statement run (each row of a batch): tests kill a process there
        self.trace: Callable[[str], None] | None = None

    # ---------------------------------------------------------------- plumbing
    def _sql(self, sql: str) -> str:
        return sql

    def _x(self, sql: str, args: Sequence[Any] = ()) -> Any:
        if self.trace is not None:
            self.trace(sql)
        return self.conn.execute(self._sql(sql), args)

    def _many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if rows:
            if self.trace is not None:
                for _ in rows:  # one call per statement run, as SQLite's trace callback
                    self.trace(sql)
            self._executemany(self._sql(sql), rows)

    def _executemany(self, sql: str, rows: list) -> None:
        self.conn.executemany(sql, rows)

    def _one(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self._x(sql, args).fetchone()

    def _all(self, sql: str, args: Sequence[Any] = ()) -> list:
        return self._x(sql, args).fetchall()

    # ---------------------------------------------------------------- life
    @property
    def default_name(self) -> str:
        """The campaign's name when init gives none (the file's name; the URL's campaign)."""
        raise NotImplementedError  # pragma: no cover

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def version(self) -> int:
        """Schema version (0: no crowdopt schema)."""
        raise NotImplementedError  # pragma: no cover

    def migrate(self, *, create: bool = False) -> int:
        """Bring the schema to the newest version (see the store); returns the version."""
        raise NotImplementedError  # pragma: no cover

    # ---------------------------------------------------------------- transactions
    def begin(self, write: bool, *, lock: bool = True) -> None:
        """Start a write transaction (serialized with the campaign's other writers, waiting
        at most the wait limit; `lock=False`: a write that needs no campaign lock, e.g. the
        outbox's delivery marks, where the database can tell the two apart) or a read
        snapshot (never waits)."""
        raise NotImplementedError  # pragma: no cover

    def commit(self) -> None:
        """Commit the transaction."""
        self._x("COMMIT")

    def rollback(self) -> None:
        """Roll the transaction back, if one is open (errors of a broken connection are
        swallowed: the transaction is gone with it)."""
        raise NotImplementedError  # pragma: no cover

    def set_wait(self, seconds: float) -> None:
        """How long a write waits for another writer of the campaign (0: not at all)."""
        raise NotImplementedError  # pragma: no cover

    def failure(self, exc: BaseException) -> StoreError | None:
        """The store error a database exception means (`Busy`, `Conflict`, `StoreError`), or
        None when `exc` is not the database's."""
        raise NotImplementedError  # pragma: no cover

    def checkpoint(self) -> None:
        """Make the committed transactions durable in the main database file where the store
        defers it (SQLite's WAL checkpoint; a no-op elsewhere). The server runs it on a thread
        of its own, never on its event loop."""

    # ---------------------------------------------------------------- campaign row
    def campaign_row(self) -> tuple | None:
        """(policy, params, seed, budget, batching, classes, open_workers, created_at,
        crowdopt_version, name) of the campaign (name None before schema 3)."""
        name = "name" if self.version() >= 3 else "NULL"
        return self._one("SELECT policy, params, seed, budget, batching, classes, "
                         f"open_workers, created_at, crowdopt_version, {name} FROM campaign")

    def insert_campaign(self, row: dict, tokens: list[tuple[str, str, float]],
                        items: list[tuple], workers: list[tuple], pairs: list[tuple] | None
                        ) -> None:
        """Fill a new campaign (inside the creating transaction)."""
        self._x("INSERT INTO campaign (id, policy, params, seed, budget, batching, classes, "
                "open_workers, token, created_at, crowdopt_version, name, caps) VALUES "
                "(1, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?)",
                (row["policy"], row["params"], row["seed"], row["budget"], row["batching"],
                 row["classes"], row["open_workers"], row["created_at"], row["version"],
                 row["name"], row["caps"]))
        self._many("INSERT INTO tokens (role, hash, created_at) VALUES (?, ?, ?)", tokens)
        self._many("INSERT INTO items (idx, id, max_labels) VALUES (?, ?, ?)", items)
        self._many("INSERT INTO workers (idx, id, data) VALUES (?, ?, ?)", workers)
        if pairs is not None:
            self._many("INSERT INTO pairs (item, worker) VALUES (?, ?)", pairs)

    def head(self) -> tuple[int, int, int]:
        """(seq, summary_seq, endpoints_rev): the last event, the event the summary is
        current for, the endpoints' revision (before schema 3: seq, -1, 0)."""
        if self.version() < 3:
            return (self._one("SELECT seq FROM campaign")[0], -1, 0)
        return tuple(self._one("SELECT seq, summary_seq, endpoints_rev FROM campaign"))

    def summary_head(self) -> tuple[int, int, int, int, str | None]:
        """(seq, summary_seq, summary_applied, summary_exhausted, summary_data)."""
        return tuple(self._one("SELECT seq, summary_seq, summary_applied, summary_exhausted, "
                               "summary_data FROM campaign"))

    def caps(self) -> str | None:
        """The admin's caps on /next per role (JSON text; None: the defaults)."""
        if self.version() < 4:
            return None
        return self._one("SELECT caps FROM campaign")[0]

    def set_caps(self, caps: str | None) -> None:
        """Store the caps (inside a write transaction)."""
        self._x("UPDATE campaign SET caps = ?", (caps,))

    # ---------------------------------------------------------------- items, workers
    def count(self, table: str) -> int:
        """Rows of `items` or `workers`."""
        return self._one(f"SELECT count(*) FROM {_table(table)}")[0]

    def items(self) -> list[tuple[str, int | None]]:
        """(id, max_labels) of every item, by index."""
        return self._all("SELECT id, max_labels FROM items ORDER BY idx")

    def ids_between(self, table: str, start: int, stop: int) -> list[str]:
        """The ids of items or workers with index in [start, stop), by index."""
        return [r[0] for r in self._x(f"SELECT id FROM {_table(table)} WHERE idx >= ? AND "
                                      "idx < ? ORDER BY idx", (start, stop))]

    def ids_at(self, table: str, idx: list[int]) -> dict[int, str]:
        """index -> id of the items or workers at `idx` (read 500 at a time)."""
        found: dict[int, str] = {}
        for k in range(0, len(idx), 500):
            part = idx[k:k + 500]
            found.update(self._all(f"SELECT idx, id FROM {_table(table)} WHERE idx IN "
                                   f"({','.join('?' * len(part))})", part))
        return found

    def workers_from(self, n: int) -> list[tuple[int, str, str | None]]:
        """(idx, id, data) of the workers with index >= n, by index."""
        return self._all("SELECT idx, id, data FROM workers WHERE idx >= ? ORDER BY idx", (n,))

    def add_workers(self, rows: list[tuple[int, str]]) -> None:
        """Register workers (idx, id) met by their first answer."""
        self._many("INSERT INTO workers (idx, id) VALUES (?, ?)", rows)

    def pairs(self) -> list[tuple[int, int]]:
        """The allowed (item, worker) pairs (empty: all), in order."""
        return [tuple(r) for r in self._x("SELECT item, worker FROM pairs ORDER BY item, "
                                          "worker")]

    # ---------------------------------------------------------------- the log
    def decisions_after(self, seq: int) -> list[tuple]:
        """(k, seq, kind, item, data) of the decisions logged after event `seq`."""
        return self._all("SELECT k, seq, kind, item, data FROM decisions WHERE seq > ? "
                         "ORDER BY seq", (seq,))

    def queries_from(self, k: int) -> Iterator[tuple[int, int, int, int | None]]:
        """(id, k, item, worker) of the queries of decisions k and later, by (k, pos)."""
        return iter(self._all("SELECT id, k, item, worker FROM queries WHERE k >= ? ORDER BY "
                              "k, pos", (k,)))

    def answers_after(self, seq: int) -> list[tuple]:
        """(seq, query, item, worker, label, recorded_at) of the answers after event `seq`."""
        return self._all("SELECT seq, query, item, worker, label, recorded_at FROM answers "
                         "WHERE seq > ? ORDER BY seq", (seq,))

    def log_decisions(self, decisions: list[tuple], queries: list[tuple]) -> None:
        """Append decisions (k, seq, kind, item, data, created_at) and their queries
        (id, k, pos, item, worker, round)."""
        self._many("INSERT INTO decisions (k, seq, kind, item, data, created_at) VALUES "
                   "(?, ?, ?, ?, ?, ?)", decisions)
        self._many("INSERT INTO queries (id, k, pos, item, worker, round) VALUES "
                   "(?, ?, ?, ?, ?, ?)", queries)

    def set_head(self, seq: int, applied: int, exhausted: bool, data: str | None) -> None:
        """Stamp the campaign with its last event and the summary current for it."""
        self._x("UPDATE campaign SET seq = ?, summary_seq = ?, summary_applied = ?, "
                "summary_exhausted = ?, summary_data = ?",
                (seq, seq, int(applied), int(exhausted), data))

    # ---------------------------------------------------------------- queries, hand-outs
    def live_handouts(self, now: float) -> list[tuple]:
        """(id, query, worker, late_until, query open) of the live hand-outs whose late window
        is open at `now`, by closing time."""
        return self._all("SELECT h.id, h.query, h.worker, h.late_until, q.open FROM handouts h "
                         "JOIN queries q ON q.id = h.query WHERE h.live = 1 AND "
                         "h.late_until >= ? ORDER BY h.late_until, h.id", (now,))

    def available_queries(self, now: float) -> Iterator[tuple]:
        """(id, k, item, worker, round) of the open queries not on a running lease, by id."""
        return iter(self._x("SELECT id, k, item, worker, round FROM queries WHERE open = 1 AND "
                            "(lease_until IS NULL OR lease_until < ?) ORDER BY id", (now,)))

    def hand_out(self, qids: list[int], worker: str | None, now: float, until: float,
                 late_until: float) -> None:
        """Lease queries `qids` to `worker` (None: anyone) until `until`, a hand-out each."""
        self._many("UPDATE queries SET handed = handed + 1, lease_until = ?, leased_to = ? "
                   "WHERE id = ?", [(until, worker, q) for q in qids])
        self._many("INSERT INTO handouts (query, worker, handed_at, lease_until, late_until) "
                   "VALUES (?, ?, ?, ?, ?)", [(q, worker, now, until, late_until) for q in qids])

    def release(self, worker: str, now: float) -> tuple[int, int]:
        """End `worker`'s live hand-outs now (they pay no answer any more) and put the
        queries it holds a running lease on back in line; returns (hand-outs, queries)."""
        held = self._one("SELECT count(*) FROM handouts WHERE live = 1 AND worker = ? AND "
                         "late_until >= ?", (worker, now))[0]
        self._x("UPDATE handouts SET live = 0, late_until = ? WHERE live = 1 AND worker = ? "
                "AND late_until >= ?", (now, worker, now))
        leased = self._one("SELECT count(*) FROM queries WHERE open = 1 AND leased_to = ? AND "
                           "lease_until >= ?", (worker, now))[0]
        self._x("UPDATE queries SET lease_until = ? WHERE open = 1 AND leased_to = ? AND "
                "lease_until >= ?", (now, worker, now))
        return held, leased

    def handed(self, qid: int) -> int:
        """How many times query `qid` was handed out."""
        return self._one("SELECT handed FROM queries WHERE id = ?", (qid,))[0]

    def handed_queries_of(self, item: int) -> list[int]:
        """Ids of the queries on `item` handed out at least once."""
        return [r[0] for r in self._x("SELECT id FROM queries WHERE item = ? AND handed > 0",
                                      (item,))]

    def queries(self, open_only: bool = False) -> list[tuple]:
        """(id, k, item, worker, round, lease_until) of the queries (open_only: handed out
        and not answered), by id."""
        sql = "SELECT id, k, item, worker, round, lease_until FROM queries"
        if open_only:
            sql += " WHERE open = 1 AND handed > 0"
        return self._all(sql + " ORDER BY id")

    def open_queries(self) -> list[tuple]:
        """(id, item, worker, handed, lease_until, leased_to) of the open queries, by id."""
        return self._all("SELECT id, item, worker, handed, lease_until, leased_to FROM queries "
                         "WHERE open = 1 ORDER BY id")

    # ---------------------------------------------------------------- answers
    def store_answers(self, answers: list[tuple], closed: list[int], void: list[int],
                      used: list[tuple[int, int]]) -> None:
        """Write answers (seq, query, late_for, item, worker, label, recorded_at, hand-out),
        close the queries answered, void hand-outs, and mark hand-outs used (answer seq,
        hand-out id)."""
        self._many("INSERT INTO answers (seq, query, late_for, item, worker, label, "
                   "recorded_at, handout) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", answers)
        self._many("UPDATE queries SET open = 0 WHERE id = ?", [(q,) for q in closed])
        self._many("UPDATE handouts SET live = 0 WHERE id = ?", [(h,) for h in void])
        self._many("UPDATE handouts SET live = 0, answer = ? WHERE id = ?", used)

    def answers_page(self, offset: int, limit: int | None) -> list[tuple[int, int, int]]:
        """(item, worker, label) of the answers in event order, `limit` from `offset`."""
        if limit is None:
            return self._all(f"SELECT item, worker, label FROM answers ORDER BY seq "
                             f"{self.NO_LIMIT} OFFSET ?", (offset,))
        return self._all("SELECT item, worker, label FROM answers ORDER BY seq LIMIT ? "
                         "OFFSET ?", (limit, offset))

    def answer_count(self) -> int:
        """How many answers are recorded."""
        return self._one("SELECT count(*) FROM answers")[0]

    def answer_rows(self) -> list[tuple]:
        """(item, worker, label, late, recorded_at) of every answer in event order."""
        return self._all("SELECT item, worker, label, CASE WHEN query IS NULL THEN 1 ELSE 0 "
                         "END, recorded_at FROM answers ORDER BY seq")

    def paid_answers(self) -> list[tuple]:
        """The audit of the money: (seq, item id, worker id, label index, late, hand-out id,
        hand-out worker, handed_at, late_until, recorded_at) of every answer, in event order
        (hand-out columns None for an answer that names none: there must be none)."""
        return self._all("SELECT a.seq, i.id, w.id, a.label, CASE WHEN a.query IS NULL THEN 1 "
                         "ELSE 0 END, a.handout, h.worker, h.handed_at, h.late_until, "
                         "a.recorded_at FROM answers a LEFT JOIN handouts h ON h.id = a.handout "
                         "JOIN workers w ON w.idx = a.worker JOIN items i ON i.idx = a.item "
                         "ORDER BY a.seq")

    # ---------------------------------------------------------------- status summary
    def log_counts(self, applied: int | None) -> tuple[int, int, int]:
        """(queries, decisions, queries of decisions 1..applied; 0 when applied is None)."""
        (n_q,) = self._one("SELECT count(*) FROM queries")
        (n_d,) = self._one("SELECT count(*) FROM decisions")
        n_a = 0 if applied is None else self._one("SELECT count(*) FROM queries WHERE k <= ?",
                                                  (applied,))[0]
        return n_q, n_d, n_a

    def summary_rows(self) -> list[tuple]:
        """(kind, idx, x, y, z) of the summary in append order, a missing value infinite."""
        return self._all("SELECT kind, idx, coalesce(x, ?), coalesce(y, ?), coalesce(z, ?) "
                         "FROM summary ORDER BY id", (INF, INF, INF))

    def clear_summary(self) -> None:
        """Drop every summary row (a whole summary follows)."""
        self._x("DELETE FROM summary")

    def append_summary(self, rows: list[tuple]) -> None:
        """Append summary rows (kind, idx, x, y, z)."""
        self._many("INSERT INTO summary (kind, idx, x, y, z) VALUES (?, ?, ?, ?, ?)", rows)

    def summary_keys(self) -> int:
        """How many items and workers (kind, idx) the summary holds rows for."""
        return self._one("SELECT count(*) FROM (SELECT DISTINCT kind, idx FROM summary) d")[0]

    def summary_last_id(self) -> int:
        """The id of the last summary row (0: none)."""
        return self._one("SELECT max(id) FROM summary")[0] or 0

    def compact_summary(self) -> None:
        """Keep the last summary row of each item and worker, renumbered from 1 (the table
        stays within about twice the items and workers)."""
        self._x("CREATE TEMP TABLE IF NOT EXISTS summary_keep (kind INTEGER, idx INTEGER, "
                "x DOUBLE PRECISION, y DOUBLE PRECISION, z DOUBLE PRECISION)")
        self._x("DELETE FROM summary_keep")
        self._x("INSERT INTO summary_keep SELECT s.kind, s.idx, s.x, s.y, s.z FROM summary s "
                "JOIN (SELECT max(id) AS id FROM summary GROUP BY kind, idx) m ON m.id = s.id "
                "ORDER BY s.id")
        self._x("DELETE FROM summary")
        self._x("INSERT INTO summary (kind, idx, x, y, z) SELECT kind, idx, x, y, z FROM "
                "summary_keep")
        self._x("DELETE FROM summary_keep")

    def last_exploit_workers(self) -> list[int]:
        """LS_OL: the workers of the last exploitation decision (by slot)."""
        (k,) = self._one("SELECT max(k) FROM decisions WHERE kind = 'exploit'")
        if k is None:
            return []
        return [w for (w,) in self._x("SELECT worker FROM queries WHERE k = ? ORDER BY pos",
                                      (k,))]

    # ---------------------------------------------------------------- tokens
    def add_token(self, role: str, worker: str | None, digest: str, now: float,
                  revoke_old: bool) -> None:
        """Store a token's hash; `revoke_old`: the role's (worker's) live tokens end now."""
        if revoke_old:
            self._x("UPDATE tokens SET revoked_at = ? WHERE role = ? AND worker IS NOT "
                    "DISTINCT FROM ? AND revoked_at IS NULL", (now, role, worker))
        self._x("INSERT INTO tokens (role, worker, hash, created_at) VALUES (?, ?, ?, ?)",
                (role, worker, digest, now))

    def token_roles(self) -> dict[str, tuple[str, str | None]]:
        """hash -> (role, worker) of the live tokens (schema 1: its one admin token)."""
        if self.version() < 2:
            (tok,) = self._one("SELECT token FROM campaign")
            return {token_hash(tok): ("admin", None)} if tok else {}
        return {h: (r, w) for h, r, w in self._x(
            "SELECT hash, role, worker FROM tokens WHERE revoked_at IS NULL")}

    # ---------------------------------------------------------------- webhook endpoints
    def add_endpoints(self, urls: list[str], now: float) -> None:
        """Register webhook URLs (a removed one again), inside a write transaction; events
        written from then on get a delivery for each."""
        for u in urls:
            self._x("INSERT INTO endpoints (url, active, added_at) VALUES (?, 1, ?) "
                    "ON CONFLICT (url) DO UPDATE SET active = 1", (u, now))
        self._x("UPDATE campaign SET endpoints_rev = endpoints_rev + 1")

    def remove_endpoints(self, urls: list[str]) -> list[str]:
        """Remove webhook URLs: no event is written for them any more (what is pending stays
        listed, undelivered); returns the URLs that were registered."""
        gone = []
        for u in urls:
            if self._one("SELECT 1 FROM endpoints WHERE url = ? AND active = 1", (u,)):
                gone.append(u)
            self._x("UPDATE endpoints SET active = 0 WHERE url = ?", (u,))
        self._x("UPDATE campaign SET endpoints_rev = endpoints_rev + 1")
        return gone

    def active_endpoints(self) -> list[int]:
        """Ids of the registered endpoints."""
        return [r[0] for r in self._x("SELECT id FROM endpoints WHERE active = 1 ORDER BY id")]

    def endpoints(self) -> list[tuple[int, str, int]]:
        """(id, url, active) of every endpoint ever registered."""
        return self._all("SELECT id, url, active FROM endpoints ORDER BY id")

    # ---------------------------------------------------------------- events, outbox
    def add_event(self, kind: str, body: str, now: float, endpoints: list[int]) -> int:
        """Write an event and one pending delivery per endpoint; returns its id."""
        (eid,) = self._one("INSERT INTO events (kind, body, created_at) VALUES (?, ?, ?) "
                           "RETURNING id", (kind, body, now))
        self._many("INSERT INTO outbox (event, endpoint, next_at) VALUES (?, ?, ?)",
                   [(eid, e, now) for e in endpoints])
        return eid

    def event_bodies(self) -> list[str]:
        """The JSON body of every event, in order (what the receivers must have got)."""
        return [r[0] for r in self._x("SELECT body FROM events ORDER BY id")]

    def has_event(self, kind: str) -> bool:
        """Whether an event of `kind` was written."""
        return self._one("SELECT 1 FROM events WHERE kind = ? LIMIT 1", (kind,)) is not None

    def outbox_counts(self, endpoint: int) -> dict[str, int]:
        """state -> deliveries of `endpoint`."""
        return dict(self._all("SELECT state, count(*) FROM outbox WHERE endpoint = ? GROUP BY "
                              "state", (endpoint,)))

    def deliveries(self, state: str | None, limit: int) -> list[tuple]:
        """(event, kind, url, state, attempts, created_at, next_at, done_at, last_error) of the
        last `limit` deliveries (of `state`), newest first."""
        sql = ("SELECT o.event, e.kind, p.url, o.state, o.attempts, e.created_at, o.next_at, "
               "o.done_at, o.last_error FROM outbox o JOIN events e ON e.id = o.event "
               "JOIN endpoints p ON p.id = o.endpoint")
        args: tuple = ()
        if state is not None:
            sql += " WHERE o.state = ?"
            args = (state,)
        return self._all(sql + " ORDER BY o.event DESC, p.id LIMIT ?", (*args, limit))

    def pending_deliveries(self) -> int:
        """Deliveries still pending for the registered endpoints."""
        return self._one("SELECT count(*) FROM outbox o JOIN endpoints p ON p.id = o.endpoint "
                         "WHERE o.state = 'pending' AND p.active = 1")[0]

    def endpoints_with_pending(self) -> list[int]:
        """Registered endpoints with pending deliveries."""
        return [r[0] for r in self._x(
            "SELECT DISTINCT o.endpoint FROM outbox o JOIN endpoints p ON p.id = o.endpoint "
            "WHERE o.state = 'pending' AND p.active = 1 ORDER BY o.endpoint")]

    def next_due(self, endpoint: int, after: int) -> float | None:
        """When the first pending delivery of `endpoint` after event `after` is due."""
        row = self._one("SELECT next_at FROM outbox WHERE endpoint = ? AND state = 'pending' "
                        "AND event > ? ORDER BY event LIMIT 1", (endpoint, after))
        return None if row is None else row[0]

    def pending_events(self, endpoint: int, after: int, limit: int) -> list[tuple]:
        """(event, attempts, next_at, kind, body, created_at, url) of `endpoint`'s pending
        deliveries after event `after`, in event order."""
        return self._all("SELECT o.event, o.attempts, o.next_at, e.kind, e.body, e.created_at, "
                         "p.url FROM outbox o JOIN events e ON e.id = o.event JOIN endpoints p "
                         "ON p.id = o.endpoint WHERE o.endpoint = ? AND o.state = 'pending' AND "
                         "o.event > ? ORDER BY o.event LIMIT ?", (endpoint, after, limit))

    def mark_delivered(self, marks: list[tuple]) -> None:
        """Mark deliveries (attempts, done_at, endpoint, event) delivered."""
        self._many("UPDATE outbox SET state = 'delivered', attempts = ?, done_at = ?, "
                   "last_error = NULL WHERE endpoint = ? AND event = ?", marks)

    def mark_failed(self, endpoint: int, event: int, attempts: int, now: float,
                    error: str) -> None:
        """Give a delivery up (past the horizon)."""
        self._x("UPDATE outbox SET state = 'failed', attempts = ?, done_at = ?, last_error = ? "
                "WHERE endpoint = ? AND event = ?", (attempts, now, error, endpoint, event))

    def retry_later(self, endpoint: int, event: int, attempts: int, at: float,
                    error: str) -> None:
        """Note a failed attempt; the next one not before `at`."""
        self._x("UPDATE outbox SET attempts = ?, next_at = ?, last_error = ? WHERE "
                "endpoint = ? AND event = ?", (attempts, at, error, endpoint, event))

    def claim_endpoint(self, endpoint: int, owner: str, now: float, until: float) -> bool:
        """Take (or renew) the delivery of `endpoint` for `owner` until `until`, unless
        another owner's claim still runs: one server delivers an endpoint at a time."""
        cur = self._x("UPDATE endpoints SET claimed_by = ?, claimed_until = ? WHERE id = ? AND "
                      "active = 1 AND (claimed_by IS NULL OR claimed_by = ? OR "
                      "claimed_until < ?)", (owner, until, endpoint, owner, now))
        return cur.rowcount == 1

    def unclaim_endpoints(self, owner: str) -> None:
        """Give `owner`'s claims up (a server stopping)."""
        self._x("UPDATE endpoints SET claimed_by = NULL, claimed_until = 0 WHERE claimed_by = ?",
                (owner,))


def _table(name: str) -> str:
    if name not in ("items", "workers"):
        raise ValueError(f"table: expected items or workers, found {name!r}")
    return name


# ----------------------------------------------------------------------------- SQLite
def _script(conn: sqlite3.Connection, sql: str) -> None:
    """Run `;`-terminated statements one by one (inside the caller's transaction:
    `executescript` would commit it first)."""
    stmt = ""
    for line in sql.splitlines(keepends=True):
        stmt += line
        if sqlite3.complete_statement(stmt):
            conn.execute(stmt)
            stmt = ""
    if stmt.strip():
        raise ValueError(f"incomplete SQL statement: {stmt!r}")


def _v1(conn: sqlite3.Connection) -> None:
    _script(conn, """
    CREATE TABLE campaign (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        policy TEXT NOT NULL,
        params TEXT NOT NULL,            -- JSON, validated at init
        seed INTEGER NOT NULL,
        budget INTEGER NOT NULL,
        batching TEXT NOT NULL,
        classes TEXT NOT NULL,           -- JSON list of label values (text)
        open_workers INTEGER NOT NULL,   -- 1: workers are registered on their first answer
        token TEXT NOT NULL,
        created_at REAL NOT NULL,
        crowdopt_version TEXT NOT NULL,
        seq INTEGER NOT NULL DEFAULT 0   -- last event number (decisions and answers)
    );
    CREATE TABLE items (
        idx INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        max_labels INTEGER               -- NULL: no cap
    );
    CREATE TABLE workers (
        idx INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        data TEXT                        -- JSON (e.g. a CL-TAP accuracy curve)
    );
    CREATE TABLE pairs (
        item INTEGER NOT NULL REFERENCES items(idx),
        worker INTEGER NOT NULL REFERENCES workers(idx),
        PRIMARY KEY (item, worker)
    ) WITHOUT ROWID;
    CREATE TABLE decisions (
        k INTEGER PRIMARY KEY,           -- 1, 2, ... in decision order
        seq INTEGER NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        item INTEGER NOT NULL REFERENCES items(idx),
        data TEXT,                       -- JSON (LS_OL tester, CL-TAP iteration)
        created_at REAL NOT NULL
    );
    CREATE TABLE queries (
        id INTEGER PRIMARY KEY,
        k INTEGER NOT NULL REFERENCES decisions(k),
        pos INTEGER NOT NULL,            -- slot within the decision
        item INTEGER NOT NULL REFERENCES items(idx),
        worker INTEGER REFERENCES workers(idx),   -- NULL: any worker (homogeneous Opt-KG)
        round INTEGER NOT NULL,          -- earlier queries on the same item
        handed INTEGER NOT NULL DEFAULT 0,
        lease_until REAL,
        leased_to TEXT,
        open INTEGER NOT NULL DEFAULT 1,
        UNIQUE (k, pos)
    );
    CREATE INDEX queries_open ON queries(id) WHERE open = 1;
    CREATE TABLE answers (
        seq INTEGER PRIMARY KEY,
        query INTEGER NOT NULL UNIQUE REFERENCES queries(id),
        item INTEGER NOT NULL REFERENCES items(idx),
        worker INTEGER NOT NULL REFERENCES workers(idx),
        label INTEGER NOT NULL,          -- class index
        recorded_at REAL NOT NULL,
        UNIQUE (item, worker)
    );
    """)


def _v2(conn: sqlite3.Connection) -> None:
    """Late answers (query NULL, late_for) and hashed tokens (the plain token is erased)."""
    _script(conn, """
    CREATE TABLE answers_v2 (
        seq INTEGER PRIMARY KEY,
        query INTEGER UNIQUE REFERENCES queries(id),   -- NULL: a late answer
        late_for INTEGER REFERENCES queries(id),       -- the answered query it was leased for
        item INTEGER NOT NULL REFERENCES items(idx),
        worker INTEGER NOT NULL REFERENCES workers(idx),
        label INTEGER NOT NULL,
        recorded_at REAL NOT NULL,
        UNIQUE (item, worker)
    );
    INSERT INTO answers_v2 (seq, query, item, worker, label, recorded_at)
        SELECT seq, query, item, worker, label, recorded_at FROM answers;
    DROP TABLE answers;
    ALTER TABLE answers_v2 RENAME TO answers;
    CREATE TABLE tokens (
        id INTEGER PRIMARY KEY,
        role TEXT NOT NULL CHECK (role IN ('admin', 'read', 'worker')),
        worker TEXT,                      -- a worker token answers only as this worker
        hash TEXT NOT NULL UNIQUE,        -- SHA-256 of the token
        created_at REAL NOT NULL,
        revoked_at REAL
    );
    """)
    row = conn.execute("SELECT token FROM campaign").fetchone()
    if row is not None and row[0]:
        conn.execute("INSERT INTO tokens (role, hash, created_at) VALUES ('admin', ?, ?)",
                     (token_hash(row[0]), time.time()))
    conn.execute("PRAGMA secure_delete = ON")  # the freed bytes of the old token are zeroed
    conn.execute("UPDATE campaign SET token = ''")


def _v3(conn: sqlite3.Connection) -> None:
    """Hand-outs (one paid answer each, a late window), the status summary, the webhook
    outbox, and the campaign's name. Existing queries get the hand-outs their state implies:
    an answered query the one its answer used, an open leased query its last lease (late
    window: the default lease again), a late answer the hand-out it was leased under."""
    _script(conn, """
    ALTER TABLE campaign ADD COLUMN name TEXT NOT NULL DEFAULT '';
    ALTER TABLE campaign ADD COLUMN summary_seq INTEGER NOT NULL DEFAULT -1;
    ALTER TABLE campaign ADD COLUMN summary_applied INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE campaign ADD COLUMN summary_exhausted INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE campaign ADD COLUMN summary_data TEXT;   -- JSON: the policy's scalars
    ALTER TABLE campaign ADD COLUMN endpoints_rev INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE handouts (
        id INTEGER PRIMARY KEY,
        query INTEGER NOT NULL REFERENCES queries(id),
        worker TEXT,                      -- handed to this worker (NULL: anyone)
        handed_at REAL NOT NULL,
        lease_until REAL NOT NULL,
        late_until REAL NOT NULL,         -- its answer is accepted (and paid) until then
        live INTEGER NOT NULL DEFAULT 1,  -- 0: it yielded its answer, or was voided
        answer INTEGER                    -- the event number of the answer it yielded
    );
    CREATE INDEX handouts_live ON handouts(late_until) WHERE live = 1;
    ALTER TABLE answers ADD COLUMN handout INTEGER REFERENCES handouts(id);
    CREATE TABLE summary (
        id INTEGER PRIMARY KEY,           -- append order: the last row of (kind, idx) holds
        kind INTEGER NOT NULL,            -- 0: an item, 1: a worker
        idx INTEGER NOT NULL,
        x REAL, y REAL, z REAL
    );
    CREATE TABLE endpoints (
        id INTEGER PRIMARY KEY,
        url TEXT NOT NULL UNIQUE,
        active INTEGER NOT NULL DEFAULT 1,  -- 0: removed
        added_at REAL NOT NULL
    );
    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,               -- the JSON POSTed (with its delivery id)
        created_at REAL NOT NULL
    );
    CREATE TABLE outbox (
        event INTEGER NOT NULL REFERENCES events(id),
        endpoint INTEGER NOT NULL REFERENCES endpoints(id),
        state TEXT NOT NULL DEFAULT 'pending'
            CHECK (state IN ('pending', 'delivered', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_at REAL NOT NULL,            -- the next attempt, not before
        last_error TEXT,
        done_at REAL,
        PRIMARY KEY (endpoint, event)
    ) WITHOUT ROWID;
    CREATE INDEX outbox_pending ON outbox(endpoint, event) WHERE state = 'pending';
    """)
    lease = 600.0  # core.DEFAULT_LEASE (core imports this module)
    conn.execute("""INSERT INTO handouts (query, worker, handed_at, lease_until, late_until,
                    live, answer)
                    SELECT q.id, q.leased_to, coalesce(q.lease_until - ?, a.recorded_at),
                           coalesce(q.lease_until, a.recorded_at),
                           coalesce(q.lease_until + ?, a.recorded_at), 0, a.seq
                    FROM queries q JOIN answers a ON a.query = q.id""", (lease, lease))
    conn.execute("""INSERT INTO handouts (query, worker, handed_at, lease_until, late_until)
                    SELECT id, leased_to, lease_until - ?, lease_until, lease_until + ?
                    FROM queries WHERE open = 1 AND handed > 0 AND lease_until IS NOT NULL""",
                 (lease, lease))
    conn.execute("""INSERT INTO handouts (query, worker, handed_at, lease_until, late_until,
                    live, answer)
                    SELECT a.late_for, NULL, a.recorded_at, a.recorded_at, a.recorded_at, 0,
                           a.seq
                    FROM answers a WHERE a.query IS NULL AND a.late_for IS NOT NULL""")
    conn.execute("UPDATE answers SET handout = (SELECT h.id FROM handouts h WHERE h.answer = "
                 "answers.seq)")


def _v4(conn: sqlite3.Connection) -> None:
    """The admin's caps on /next per role, and the claim of the server delivering each
    webhook endpoint (several servers, one delivering an endpoint at a time)."""
    _script(conn, """
    ALTER TABLE campaign ADD COLUMN caps TEXT;   -- JSON {role: {n, lease, late_window}}
    ALTER TABLE endpoints ADD COLUMN claimed_by TEXT;
    ALTER TABLE endpoints ADD COLUMN claimed_until REAL NOT NULL DEFAULT 0;
    """)


# MIGRATIONS[v - 1] brings a database from version v - 1 to v (index 0 creates the schema).
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v1, _v2, _v3, _v4]


def connect(path: str | Path, *, readonly: bool = False,
            busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, foreign keys on.
    `readonly`: SQLite's `mode=ro` (a file the user may only read; nothing is written)."""
    if readonly:
        return _connect_ro(Path(path), busy_timeout)
    conn = sqlite3.connect(str(path), timeout=busy_timeout, isolation_level=None,
                           check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if mode.lower() != "wal":
        conn.close()
        raise InputError("DB", "a file system where SQLite can use WAL", mode)
    conn.execute(f"PRAGMA synchronous = {sync_mode()}")
    conn.execute("PRAGMA foreign_keys = ON")
    # room for the B-trees a large record touches (SQLite's default 2 MB makes the
    # per-row cost of a 100k-row batch grow); memory is taken only as pages are used
    conn.execute("PRAGMA cache_size = -65536")
    return conn


def sync_mode() -> str:
    """NORMAL (a commit is durable through a crash of the process, no fsync) or FULL
    (CROWDOPT_CAMPAIGN_SYNC=FULL: each commit is fsynced)."""
    sync = os.environ.get("CROWDOPT_CAMPAIGN_SYNC", "NORMAL").upper()
    return sync if sync in ("NORMAL", "FULL") else "NORMAL"


def _connect_ro(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """`mode=ro`; on a folder this process may not write (a read-only mount, another user's
    folder) SQLite cannot create the WAL index (-shm) it needs: when no WAL file holds
    commits (the last writer closed cleanly) the file alone is the whole campaign, and it is
    opened `immutable=1` (no -shm, no locks)."""
    base = "file:" + urllib.parse.quote(str(path.absolute()))

    def open_(query: str) -> sqlite3.Connection:
        conn = sqlite3.connect(base + query, uri=True, timeout=busy_timeout,
                               isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        conn.execute("PRAGMA query_only = 1")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn

    try:
        return open_("?mode=ro")
    except sqlite3.OperationalError as exc:
        wal = Path(str(path) + "-wal")
        msg = str(exc)
        if ("unable to open" not in msg and "readonly" not in msg) or (
                wal.exists() and wal.stat().st_size > 0):
            raise
    return open_("?mode=ro&immutable=1")


def version(conn: sqlite3.Connection) -> int:
    """Schema version of an open SQLite database (0: no crowdopt schema)."""
    has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                       "'schema_version'").fetchone()
    if not has:
        return 0
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return int(row[0]) if row else 0


def newer(path: Any, v: int, target: int) -> InputError:
    """The error for a campaign written by a newer crowdopt."""
    return InputError("DB", f"a campaign of schema version <= {target}", f"version {v} in "
                      f"{path}", note="written by a newer crowdopt; upgrade crowdopt")


def not_a_campaign(path: Any) -> InputError:
    """The error for a database without the campaign schema."""
    return InputError("DB", "a campaign file (crowdopt campaign init)", str(path))


def migrate(conn: sqlite3.Connection, path: str | Path = "DB", *, create: bool = False) -> int:
    """Bring a SQLite file's schema to the newest version, one transaction per step; returns
    the version. A database written by a newer crowdopt (higher version) is refused, not
    touched; a file without the schema is created only when `create` (init), else it is not a
    campaign. An up-to-date file is checked in a read snapshot: opening never waits for a
    writer."""
    target = len(MIGRATIONS)
    v = version(conn)
    if v == target:
        return v
    if v > target:
        raise newer(path, v, target)
    if v == 0 and not create:
        raise not_a_campaign(path)
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            v = version(conn)
            if v > target:
                raise newer(path, v, target)
            if v == target:
                conn.execute("COMMIT")
                return v
            if v == 0 and not create:
                raise not_a_campaign(path)
            MIGRATIONS[v](conn)
            if v == 0:
                conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                conn.execute("INSERT INTO schema_version VALUES (1)")
            else:
                conn.execute("UPDATE schema_version SET version = ?", (v + 1,))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


class SqliteStore(CampaignStore):
    """A campaign in one SQLite file (WAL): the default, nothing to start. Writers of the
    file (any process) queue on its write lock; readers never wait (WAL snapshots)."""

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection, path: Path, readonly: bool):
        super().__init__(conn, Path(path), readonly)
        self._version: int | None = None

    @property
    def default_name(self) -> str:
        """The file's name (never its folder)."""
        return self.location.name

    def version(self) -> int:
        """The file's schema version (read again until it is the newest)."""
        if self._version is None or self._version < len(MIGRATIONS):
            self._version = version(self.conn)
        return self._version

    def migrate(self, *, create: bool = False) -> int:
        """Bring the file to the newest schema (see the module function `migrate`)."""
        self._version = migrate(self.conn, self.location, create=create)
        return self._version

    def begin(self, write: bool, *, lock: bool = True) -> None:
        """`BEGIN IMMEDIATE` (the file's write lock) or `BEGIN` (a WAL snapshot)."""
        self._x("BEGIN IMMEDIATE" if write else "BEGIN")

    def rollback(self) -> None:
        """`ROLLBACK` when a transaction is open."""
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open."""
        return self.conn.in_transaction

    def set_wait(self, seconds: float) -> None:
        """SQLite's busy timeout."""
        self.conn.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")

    def failure(self, exc: BaseException) -> StoreError | None:
        """A locked file is `Busy`; any other SQLite error a `StoreError`."""
        if not isinstance(exc, sqlite3.Error):
            return None
        if isinstance(exc, sqlite3.OperationalError) and (
                "locked" in str(exc) or "busy" in str(exc)):
            return Busy(f"campaign file {self.location}: {exc} (another process held the "
                        "write lock too long; nothing was changed, retry)")
        return StoreError(f"campaign file {self.location}: {exc} (nothing was changed)")

    def defer_checkpoints(self) -> None:
        """Commits on this connection never checkpoint the WAL (which fsyncs): a server's
        writer, whose checkpoints run on a thread of their own (`checkpoint`)."""
        self.conn.execute("PRAGMA wal_autocheckpoint = 0")

    def checkpoint(self) -> None:
        """A passive WAL checkpoint (it never waits for readers or writers); when it copied
        every frame, the WAL is started over by a write of this connection: the first
        frame after a complete checkpoint syncs the WAL's header, and that sync is then
        made here, not by whichever writer comes next (a server's event loop)."""
        busy, log, done = self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if busy or done != log:
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            # a write that changes a page (the header's user_version, unused otherwise:
            # SQLite skips an UPDATE that rewrites a value unchanged, and writes no frame)
            (v,) = self.conn.execute("PRAGMA user_version").fetchone()
            self.conn.execute(f"PRAGMA user_version = {(int(v) + 1) % 1_000_000}")
            self.conn.execute("COMMIT")
        except BaseException:
            self.rollback()
            raise


def open_sqlite(path: str | os.PathLike, *, readonly: bool | None,
                busy_timeout: float) -> SqliteStore:
    """Open a campaign file (migrating an older schema in place); see `open_store`."""
    path = Path(path)
    if not path.is_file():
        raise InputError("DB", "an existing campaign file", str(path))
    if readonly is None:
        readonly = not (os.access(path, os.W_OK) and os.access(path.parent or ".", os.W_OK))
    try:
        if not readonly:  # refuse a file without the schema before WAL mode writes to it
            probe = connect(path, readonly=True, busy_timeout=busy_timeout)
            try:
                v = version(probe)
            except sqlite3.OperationalError:  # busy: the writable open reports it
                v = None
            finally:
                probe.close()
            if v == 0:
                raise not_a_campaign(path)
        conn = connect(path, readonly=readonly, busy_timeout=busy_timeout)
    except sqlite3.DatabaseError as exc:
        raise InputError("DB", "a campaign file", f"{path} ({exc})") from None
    st = SqliteStore(conn, path, readonly)
    try:
        if readonly:
            v = st.version()
            if not 1 <= v <= SCHEMA_VERSION:
                raise InputError("DB", f"a campaign file of schema version 1..."
                                 f"{SCHEMA_VERSION}", f"{path} (version {v})")
        else:
            st.migrate()
        return st
    except sqlite3.OperationalError as exc:
        conn.close()
        if "locked" in str(exc) or "busy" in str(exc):
            raise Busy(f"campaign file {path}: {exc} (another process holds the write "
                       "lock; nothing was changed)") from None
        raise StoreError(f"campaign file {path}: {exc}") from None
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise InputError("DB", "a campaign file", f"{path} ({exc})") from None
    except BaseException:
        conn.close()
        raise


def create_sqlite(path: Path, fill: Callable[[CampaignStore], None]) -> None:
    """A new campaign file filled by `fill` in one transaction; it appears complete or not
    at all (a temporary file renamed into place)."""
    if os.path.lexists(path):  # a dangling symlink too: never written through
        raise InputError("DB", "a new file (init never overwrites)", str(path))
    tmp = path.with_name(f".{path.name}.init-{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    conn = connect(tmp)
    st = SqliteStore(conn, tmp, False)
    try:
        st.migrate(create=True)
        st.begin(True)
        fill(st)
        st.commit()
        conn.close()
        os.replace(tmp, path)
    except BaseException:
        st.rollback()
        conn.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        raise
