"""The campaign's SQLite file: schema, migrations, connection settings, transactions.

One file holds a whole campaign (stdlib `sqlite3`, WAL journal):

- `schema_version` (one row) and `campaign` (one row): policy, parameters, seed, budget,
  batching, class labels, the HTTP bearer token, and `seq`, the last event number;
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
  (its query named a worker and was answered) or its late window closes; a live hand-out
  reserves one label of the budget. Every stored or late answer names its hand-out;
- `summary` (schema 3) and the `summary_*` columns of `campaign`: what `status` needs of the
  policy state (e.g. each item's Beta posterior), appended by every write transaction for the
  items and workers it changed (rows are appended, not updated in place: a record touches a
  few pages whatever items it answers; the superseded rows are dropped once they outnumber
  the items and workers), the campaign row stamped with the event number the summary is
  current for: a reader of an up-to-date file reports without replaying the log;
- `endpoints`, `events`, `outbox` (schema 3): the webhook URLs of the last `serve --webhook`,
  the events (answers recorded, budget thresholds, done) written in the transaction that caused
  them, and one delivery row per (event, endpoint): pending, delivered or failed.

Decisions and answers share one increasing event counter, so the ordered log of both is a
query away: the policy state is rebuilt (or caught up) from it, never read from a pickle.

Every write is one `BEGIN IMMEDIATE ... COMMIT` transaction (writers queue on the lock for at
most `busy_timeout`, then fail with nothing changed); readers use a plain `BEGIN` snapshot and
never wait for a writer (WAL). A file the user may only read opens with `mode=ro`. WAL with `synchronous=NORMAL` keeps every committed transaction through
a crash of the process (kill -9): a commit is in the WAL file before `COMMIT` returns; only a
power loss can drop the last commits (set CROWDOPT_CAMPAIGN_SYNC=FULL to fsync each commit).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from ..errors import InputError

SCHEMA_VERSION = 3
DEFAULT_BUSY_TIMEOUT = 60.0


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


def token_hash(token: str) -> str:
    """What the file keeps of a bearer token (tokens are 192 random bits: a plain hash)."""
    return hashlib.sha256(token.encode()).hexdigest()


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
        active INTEGER NOT NULL DEFAULT 1,  -- 0: not in the last serve's --webhook list
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


# MIGRATIONS[v - 1] brings a database from version v - 1 to v (index 0 creates the schema).
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_v1, _v2, _v3]


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
    sync = os.environ.get("CROWDOPT_CAMPAIGN_SYNC", "NORMAL").upper()
    if sync not in ("NORMAL", "FULL"):
        sync = "NORMAL"
    conn.execute(f"PRAGMA synchronous = {sync}")
    conn.execute("PRAGMA foreign_keys = ON")
    # room for the B-trees a large record touches (SQLite's default 2 MB makes the
    # per-row cost of a 100k-row batch grow); memory is taken only as pages are used
    conn.execute("PRAGMA cache_size = -65536")
    return conn


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
    """Schema version of an open database (0: no crowdopt schema)."""
    has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                       "'schema_version'").fetchone()
    if not has:
        return 0
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: sqlite3.Connection, path: str | Path = "DB", *, create: bool = False) -> int:
    """Bring the schema to the newest version, one transaction per step; returns the version.
    A database written by a newer crowdopt (higher version) is refused, not touched; a file
    without the schema is created only when `create` (init), else it is not a campaign.
    An up-to-date file is checked in a read snapshot: opening never waits for a writer."""
    target = len(MIGRATIONS)
    v = version(conn)
    if v == target:
        return v
    if v > target:
        raise InputError("DB", f"a campaign of schema version <= {target}",
                         f"version {v} in {path}", note="written by a newer crowdopt; upgrade "
                         "crowdopt")
    if v == 0 and not create:
        raise InputError("DB", "a campaign file (crowdopt campaign init)", str(path))
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            v = version(conn)
            if v > target:
                raise InputError("DB", f"a campaign of schema version <= {target}",
                                 f"version {v} in {path}",
                                 note="written by a newer crowdopt; upgrade crowdopt")
            if v == target:
                conn.execute("COMMIT")
                return v
            if v == 0 and not create:
                raise InputError("DB", "a campaign file (crowdopt campaign init)", str(path))
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
