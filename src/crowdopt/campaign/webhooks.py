"""Webhooks: the outbox's events POSTed as JSON, HMAC-signed, retried until delivered or past
the horizon.

Endpoints are registered and removed explicitly (`campaign webhook add|remove`, and
`campaign serve --webhook URL` adds URL): a server started without `--webhook` changes none,
and every registered endpoint gets every event, whichever process recorded the answers. The
events are rows of the campaign's store (`events`: written with the answers that caused
them, so none is lost by a crash or a restart of a server). `Delivery` is a small pool of
threads in each server started with `--webhook`: it delivers every registered endpoint, each
one served by one thread of one server at a time (a claim on the endpoint in the store,
renewed while it delivers, taken over CLAIM seconds after a server died), its events in order
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
import socket
import sys
import threading
import time
import urllib.parse
from pathlib import Path

from ..errors import InputError
from . import store, stores

BACKOFF, BACKOFF_MAX = 0.5, 30.0  # seconds: the first retry, the longest wait
HORIZON = 86400.0  # seconds an event is retried (24 h)
CLAIM = 15.0  # seconds a server's claim on an endpoint lasts unless renewed


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


def _change_endpoints(db: str | os.PathLike, fn) -> list[str]:
    st = stores.open_store(db)
    try:
        st.begin(True)
        out = fn(st)
        st.commit()
        return out
    except BaseException as exc:
        st.rollback()
        err = st.failure(exc)
        if err is not None:
            raise err from None
        raise
    finally:
        st.close()


def register(db: str | os.PathLike, urls: list[str]) -> None:
    """Register `urls`: every event written from now on gets a delivery for each (the other
    registered endpoints stay as they are)."""
    check_urls(urls)
    if urls:
        _change_endpoints(db, lambda st: st.add_endpoints(list(urls), time.time()))


def unregister(db: str | os.PathLike, urls: list[str]) -> list[str]:
    """Remove `urls`: no event is written for them any more (their pending deliveries stay
    listed, undelivered); returns those that were registered."""
    return _change_endpoints(db, lambda st: st.remove_endpoints(list(urls)))


class Delivery:
    """The server's delivery pool: `threads` threads share the active endpoints (one thread
    per endpoint at a time, its events in order). `wake()` after a record; `close()` stops.
    Deliveries are marked in the file in batches, at most `mark_every` seconds apart (a crash
    before a mark re-sends those events, with the same delivery ids)."""

    def __init__(self, db: str | os.PathLike, secret: bytes, *, threads: int = 4,
                 horizon: float = HORIZON, backoff: float = BACKOFF,
                 backoff_max: float = BACKOFF_MAX, poll: float = 1.0, timeout: float = 10.0,
                 mark_every: float = 0.5, linger: float = 0.02, owner: str | None = None):
        self.db, self.secret = str(db), secret
        # who claims the endpoints: a server names itself by host and port, so that it
        # takes its claims back at once after a restart
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.claims: dict[int, float] = {}  # endpoint -> until when this pool holds it
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
        """Deliveries still pending for the registered endpoints (tests)."""
        st = stores.open_store(self.db, readonly=True)
        try:
            return st.pending_deliveries()
        finally:
            st.close()

    # ---------------------------------------------------------------- threads
    def _run(self) -> None:
        conn = stores.open_store(self.db, busy_timeout=5.0)
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
                except Exception as exc:  # a busy, damaged or unreachable store: later
                    err = conn.failure(exc)
                    if err is None:
                        raise
                    conn.rollback()
                    print(f"webhooks: {err}", file=sys.stderr, flush=True)
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
                conn.unclaim_endpoints(self.owner)
            except Exception as exc:  # noqa: BLE001 - a store gone: the claims lapse
                print(f"webhooks: {conn.failure(exc) or exc}", file=sys.stderr, flush=True)
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

    def _mark(self, conn: store.CampaignStore, marks: list[tuple]) -> None:
        if marks:
            try:
                conn.begin(True, lock=False)
                conn.mark_delivered(marks)
                conn.commit()
            except BaseException:
                conn.rollback()
                with self.cv:  # written next time
                    self.marks = marks + self.marks
                raise
            self.delivered += len(marks)

    def _claim(self, conn: store.CampaignStore) -> int | None:
        """A registered endpoint no thread serves whose next unsent event is due and that no
        other server delivers (under `cv`)."""
        now = time.time()
        self.n_active = len(conn.active_endpoints())
        for ep in conn.endpoints_with_pending():
            if ep in self.busy:
                continue
            due = conn.next_due(ep, self.sent.get(ep, 0))
            if due is not None and due <= now and self._hold(conn, ep, now):
                self.busy.add(ep)
                return ep
        return None

    def _hold(self, conn: store.CampaignStore, ep: int, now: float) -> bool:
        """Whether this pool holds endpoint `ep`'s claim (taken or renewed when less than
        half of it is left): one server delivers an endpoint at a time."""
        if self.claims.get(ep, 0.0) - now > CLAIM / 2:
            return True
        if conn.claim_endpoint(ep, self.owner, now, now + CLAIM):
            self.claims[ep] = now + CLAIM
            return True
        self.claims.pop(ep, None)
        with self.cv:
            self.sent.pop(ep, None)  # another server delivers it: read it anew when back
        return False

    def _serve(self, conn: store.CampaignStore, ep: int) -> None:
        """Send endpoint `ep`'s unsent pending events in order until one fails or none is
        due."""
        while not self.stop:
            with self.cv:
                after = self.sent.get(ep, 0)
            if not self._hold(conn, ep, time.time()):
                return
            rows = conn.pending_events(ep, after, 200)
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
                    conn.mark_failed(ep, event, attempts + 1, now, err)
                    self.failed += 1
                    with self.cv:
                        self.sent[ep] = event
                    print(f"webhook {url}: event {event} ({kind}) failed: {err}; retried "
                          f"for {self.horizon:g} s", file=sys.stderr, flush=True)
                    continue
                wait = min(self.backoff_max, self.backoff * 2.0 ** attempts)
                conn.retry_later(ep, event, attempts + 1, now + wait, err)
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
