"""Webhooks of `campaign serve --webhook URL`: the outbox's events POSTed as JSON,
HMAC-signed, retried until delivered or past the horizon.

The events are rows of the campaign file (`events`: written with the answers that caused
them, so none is lost by a crash or a restart of the server). `Delivery` is a small pool of
threads in the server: each endpoint is served by one thread at a time, its events in order
(an event is sent after every earlier one of that endpoint was delivered or failed), while
other endpoints go on at their own pace. Each POST carries `X-Crowdopt-Event`,
`X-Crowdopt-Delivery` (the event's id, the same on every retry and after a restart: receivers
drop repeats: delivery is at least once) and `X-Crowdopt-Signature: sha256=HEX`, the
HMAC-SHA256 of the body under the secret in DB.webhook-secret. A failed attempt (no answer, or
a status other than 2xx) is retried after 0.5 s, doubling up to `backoff_max` (30 s), until the
event is `horizon` old (default 24 h): then it is marked failed and the endpoint's next event
goes. `crowdopt campaign events` lists pending, delivered and failed deliveries.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import os
import secrets
import sqlite3
import sys
import threading
import time
import urllib.parse
from pathlib import Path

from ..errors import InputError

BACKOFF, BACKOFF_MAX = 0.5, 30.0  # seconds: the first retry, the longest wait
HORIZON = 86400.0  # seconds an event is retried (24 h)


def check_urls(urls: list[str]) -> None:
    """Refuse a webhook address that is not an http(s)://host/path URL."""
    for u in urls:
        p = urllib.parse.urlsplit(u)
        if p.scheme not in ("http", "https") or not p.netloc:
            raise InputError("--webhook", "an http(s)://host/path URL", u)


def load_secret(path: str | os.PathLike) -> bytes:
    """The HMAC key: read from `path`, or made (32 random bytes, hex) into a new 0600 file
    created O_EXCL (never through a symlink)."""
    p = Path(path)
    if p.is_file():
        key = p.read_bytes().strip()  # the key's bytes, whatever the locale's encoding
        if not key:
            raise InputError("--webhook-secret-file", "a non-empty secret", str(p))
        return key
    key = secrets.token_hex(32)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
    except OSError as exc:
        raise InputError("--webhook-secret-file", "a readable file or a new path",
                         f"{p} ({exc.strerror})") from None
    with os.fdopen(fd, "w") as f:
        f.write(key + "\n")
    return key.encode()


def sign(secret: bytes, body: bytes) -> str:
    """The HMAC-SHA256 signature header value of a webhook body."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def register(db: str | os.PathLike, urls: list[str]) -> None:
    """Make `urls` the endpoints new events are written for (the others stay listed, with
    their pending deliveries, inactive until a server names them again)."""
    from . import store

    conn = store.connect(db)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE endpoints SET active = 0")
        conn.execute("UPDATE campaign SET endpoints_rev = endpoints_rev + 1")
        for u in urls:
            conn.execute("INSERT INTO endpoints (url, active, added_at) VALUES (?, 1, ?) "
                         "ON CONFLICT (url) DO UPDATE SET active = 1", (u, time.time()))
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        from .core import StoreError

        raise StoreError(f"campaign file {db}: {exc} (webhooks not registered)") from None
    finally:
        conn.close()


class Delivery:
    """The server's delivery pool: `threads` threads share the active endpoints (one thread
    per endpoint at a time, its events in order). `wake()` after a record; `close()` stops.
    Deliveries are marked in the file in batches, at most `mark_every` seconds apart (a crash
    before a mark re-sends those events, with the same delivery ids)."""

    def __init__(self, db: str | os.PathLike, secret: bytes, *, threads: int = 4,
                 horizon: float = HORIZON, backoff: float = BACKOFF,
                 backoff_max: float = BACKOFF_MAX, poll: float = 1.0, timeout: float = 10.0,
                 mark_every: float = 0.5, linger: float = 0.02):
        self.db, self.secret = str(db), secret
        self.horizon, self.backoff, self.backoff_max = horizon, backoff, backoff_max
        self.poll, self.timeout, self.mark_every, self.linger = poll, timeout, mark_every, linger
        self.cv = threading.Condition()
        self._local = threading.local()  # each thread's kept-alive connections
        self.busy: set[int] = set()  # endpoints a thread is serving
        self.n_active = 1 << 30  # active endpoints (read at each claim): more threads idle
        self.woken = False  # events were written since a serving thread last looked
        self.sent: dict[int, int] = {}  # endpoint -> its last event sent (marked or not)
        self.marks: list[tuple] = []  # (attempts, done_at, endpoint, event) not written yet
        self.marked_at = time.monotonic()
        self.stop = False
        self.delivered = self.failed = 0
        self.threads = [threading.Thread(target=self._run, name=f"crowdopt-webhooks-{k}",
                                         daemon=True) for k in range(threads)]
        for t in self.threads:
            t.start()

    def wake(self) -> None:
        """New events were written: look now rather than at the next poll (a thread that
        serves an endpoint claims again before it waits, so an idle one is woken only when
        some endpoint has no thread: a wake costs the threads the interpreter lock)."""
        with self.cv:
            self.woken = True
            if len(self.busy) < self.n_active:
                self.cv.notify()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the threads (pending deliveries stay in the file for the next server)."""
        with self.cv:
            self.stop = True
            self.cv.notify_all()
        for t in self.threads:
            t.join(timeout)

    def pending(self) -> int:
        """Deliveries still pending in the file for the active endpoints (tests)."""
        from . import store

        conn = store.connect(self.db, readonly=True)
        try:
            return conn.execute("SELECT count(*) FROM outbox o JOIN endpoints p ON "
                                "p.id = o.endpoint WHERE o.state = 'pending' AND "
                                "p.active = 1").fetchone()[0]
        finally:
            conn.close()

    # ---------------------------------------------------------------- threads
    def _run(self) -> None:
        from . import store

        conn = store.connect(self.db, busy_timeout=5.0)
        try:
            while True:
                with self.cv:
                    self.woken = False  # the claim looks at the file now
                    ep = None if self.stop else self._claim(conn)
                    # the deliveries are marked every `mark_every` s, not at each wake: a
                    # mark takes the file's write lock from the campaign's writers
                    marks = self._take_marks()
                    if ep is not None and len(self.busy) < self.n_active:
                        self.cv.notify()  # another thread for another endpoint
                self._mark(conn, marks)
                if ep is None:
                    with self.cv:
                        if self.stop:
                            return
                        if not self.woken:  # (else events came after the claim looked)
                            self.cv.wait(self.poll)
                    time.sleep(self.linger)  # let a few events gather: one round for them
                    continue
                try:
                    self._serve(conn, ep)
                except sqlite3.Error as exc:  # busy or damaged file: try again later
                    print(f"webhooks: campaign file {self.db}: {exc}", file=sys.stderr,
                          flush=True)
                    with self.cv:
                        self.sent.pop(ep, None)  # read again from the file
                    time.sleep(min(self.poll, 1.0))
                finally:
                    with self.cv:
                        self.busy.discard(ep)
        finally:
            try:
                with self.cv:
                    marks = self._take_marks(force=True)
                self._mark(conn, marks)
            finally:
                conn.close()

    def _take_marks(self, force: bool = False) -> list[tuple]:
        """The marks to write now (under `cv`): all of them when `force` or when the last
        write is `mark_every` old."""
        if not self.marks or not (force or time.monotonic() - self.marked_at >
                                  self.mark_every):
            return []
        marks, self.marks = self.marks, []
        self.marked_at = time.monotonic()
        return marks

    def _mark(self, conn: sqlite3.Connection, marks: list[tuple]) -> None:
        if marks:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("UPDATE outbox SET state = 'delivered', attempts = ?, "
                                 "done_at = ?, last_error = NULL WHERE endpoint = ? AND "
                                 "event = ?", marks)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                with self.cv:  # written next time
                    self.marks = marks + self.marks
                raise
            self.delivered += len(marks)

    def _claim(self, conn: sqlite3.Connection) -> int | None:
        """An active endpoint no thread serves whose next unsent event is due (under `cv`)."""
        now = time.time()
        self.n_active = conn.execute("SELECT count(*) FROM endpoints WHERE active = 1"
                                     ).fetchone()[0]
        for (ep,) in conn.execute("SELECT DISTINCT o.endpoint FROM outbox o JOIN endpoints p "
                                  "ON p.id = o.endpoint WHERE o.state = 'pending' AND "
                                  "p.active = 1").fetchall():
            if ep in self.busy:
                continue
            row = conn.execute("SELECT next_at FROM outbox WHERE endpoint = ? AND state = "
                               "'pending' AND event > ? ORDER BY event LIMIT 1",
                               (ep, self.sent.get(ep, 0))).fetchone()
            if row is not None and row[0] <= now:
                self.busy.add(ep)
                return ep
        return None

    def _serve(self, conn: sqlite3.Connection, ep: int) -> None:
        """Send endpoint `ep`'s unsent pending events in order until one fails or none is
        due."""
        while not self.stop:
            with self.cv:
                after = self.sent.get(ep, 0)
            rows = conn.execute(
                "SELECT o.event, o.attempts, o.next_at, e.kind, e.body, e.created_at, p.url "
                "FROM outbox o JOIN events e ON e.id = o.event JOIN endpoints p ON "
                "p.id = o.endpoint WHERE o.endpoint = ? AND o.state = 'pending' AND "
                "o.event > ? ORDER BY o.event LIMIT 200", (ep, after)).fetchall()
            if not rows or rows[0][2] > time.time():
                return  # the thread claims again before it waits
            for event, attempts, _, kind, body, created, url in rows:
                err = self._post(url, body.encode(), kind, json.loads(body)["delivery"])
                now = time.time()
                if err is None:
                    with self.cv:
                        self.sent[ep] = event
                        self.marks.append((attempts + 1, now, ep, event))
                        marks = self._take_marks()
                    self._mark(conn, marks)
                    continue
                with self.cv:
                    marks = self._take_marks(force=True)
                self._mark(conn, marks)  # what went before is marked first
                if now - created >= self.horizon:
                    conn.execute("UPDATE outbox SET state = 'failed', attempts = ?, "
                                 "done_at = ?, last_error = ? WHERE endpoint = ? AND "
                                 "event = ?", (attempts + 1, now, err, ep, event))
                    self.failed += 1
                    with self.cv:
                        self.sent[ep] = event
                    print(f"webhook {url}: event {event} ({kind}) failed: {err}; retried "
                          f"for {self.horizon:g} s", file=sys.stderr, flush=True)
                    continue
                wait = min(self.backoff_max, self.backoff * 2.0 ** attempts)
                conn.execute("UPDATE outbox SET attempts = ?, next_at = ?, last_error = ? "
                             "WHERE endpoint = ? AND event = ?",
                             (attempts + 1, now + wait, err, ep, event))
                return

    def _post(self, url: str, body: bytes, kind: str, delivery: str) -> str | None:
        """POST one event on this thread's kept-alive connection to the URL's host; None when
        the receiver took it (2xx), else the reason."""
        conns = self._local.__dict__.setdefault("conns", {})
        parts = urllib.parse.urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = {"Content-Type": "application/json", "User-Agent": "crowdopt-webhook",
                   "X-Crowdopt-Event": kind, "X-Crowdopt-Delivery": delivery,
                   "X-Crowdopt-Signature": sign(self.secret, body)}
        for again in (False, True):  # a kept-alive connection the receiver closed: reopen
            c = conns.get(url)
            if c is None:
                cls = (http.client.HTTPSConnection if parts.scheme == "https" else
                       http.client.HTTPConnection)
                c = conns[url] = cls(parts.netloc, timeout=self.timeout)
            try:
                c.request("POST", path, body=body, headers=headers)
                r = c.getresponse()
                r.read()
                if r.getheader("connection", "").lower() == "close":
                    c.close()
                    conns.pop(url, None)
                return None if 200 <= r.status < 300 else f"HTTP {r.status}"
            except (OSError, http.client.HTTPException, ValueError) as exc:
                c.close()
                conns.pop(url, None)
                if again or not isinstance(exc, (http.client.RemoteDisconnected,
                                                 ConnectionResetError, BrokenPipeError)):
                    return (str(exc) or type(exc).__name__)[:200]
        return "unreachable"  # pragma: no cover
