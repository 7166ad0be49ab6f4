"""Webhooks of `campaign serve --webhook URL`: events POSTed as JSON, HMAC-signed, retried.

Events: `answers` (after each record that stored answers: counts, spent, budget), `budget`
(the spend crossed 25, 50, 75 or 100 % of the budget), `done` (the campaign finished). Each
POST carries `X-Crowdopt-Event`, `X-Crowdopt-Delivery` (a unique id: receivers drop repeats)
and `X-Crowdopt-Signature: sha256=HEX`, the HMAC-SHA256 of the body under the secret in
DB.webhook-secret. A failed delivery (no answer, or a status other than 2xx) is retried after
0.5, 1, 2, 4, 8 s, then dropped with a line on stderr. Deliveries run in one background thread,
in event order, so the service never waits for a receiver.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import queue
import secrets
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from ..errors import InputError

BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0)
THRESHOLDS = (0.25, 0.5, 0.75, 1.0)


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


class Webhooks:
    """A queue of events and the thread that delivers them to every URL."""

    def __init__(self, urls: list[str], secret: bytes, campaign: str,
                 backoff: tuple[float, ...] = BACKOFF):
        self.urls, self.secret, self.campaign, self.backoff = list(urls), secret, campaign, backoff
        self.q: queue.Queue = queue.Queue()
        self.crossed = -1  # index of the last budget threshold announced
        self.done_sent = False
        self.delivered = 0
        self.failed = 0
        self.thread = threading.Thread(target=self._run, name="crowdopt-webhooks", daemon=True)
        self.thread.start()

    # ---------------------------------------------------------------- events
    def emit(self, event: str, data: dict) -> None:
        """Queue an event for every webhook (signed, sent in the background)."""
        doc = {"event": event, "campaign": self.campaign, "time": time.time(),
               "delivery": secrets.token_hex(8), **data}
        self.q.put(doc)

    def answers(self, camp, res: dict) -> None:
        """After a record that stored answers: the counts, then thresholds and completion."""
        mem = camp._mem  # the writer's state, just committed: no count over the table
        spent = mem.log.n if mem is not None else camp.conn.execute(
            "SELECT count(*) FROM answers").fetchone()[0]
        budget = camp.budget
        self.emit("answers", {k: res[k] for k in ("rows", "stored", "late", "duplicates",
                                                  "rejected")} | {"spent": spent,
                                                                  "budget": budget})
        if self.crossed < 0:  # a restarted server: thresholds passed before are not resent
            self.crossed = sum(spent - res["recorded"] >= t * budget for t in THRESHOLDS) - 1
        while self.crossed + 1 < len(THRESHOLDS) and spent >= THRESHOLDS[self.crossed + 1] * budget:
            self.crossed += 1
            self.emit("budget", {"fraction": THRESHOLDS[self.crossed], "spent": spent,
                                 "budget": budget})
        if not self.done_sent and (spent >= budget or self._done(camp)):
            self.done_sent = True
            self.emit("done", {"spent": spent, "budget": budget})

    @staticmethod
    def _done(camp) -> bool:
        (open_q,) = camp.conn.execute("SELECT count(*) FROM queries WHERE open = 1").fetchone()
        if open_q:
            return False
        mem = camp._mem
        return mem is not None and mem.exhausted

    # ---------------------------------------------------------------- delivery
    def _post(self, url: str, body: bytes, doc: dict) -> bool:
        req = urllib.request.Request(url, data=body, method="POST", headers={
            "Content-Type": "application/json", "User-Agent": "crowdopt-webhook",
            "X-Crowdopt-Event": doc["event"], "X-Crowdopt-Delivery": doc["delivery"],
            "X-Crowdopt-Signature": sign(self.secret, body)})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return 200 <= r.status < 300
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def _deliver(self, url: str, doc: dict) -> None:
        body = json.dumps(doc).encode()
        for wait in (0.0, *self.backoff):
            if wait:
                time.sleep(wait)
            if self._post(url, body, doc):
                self.delivered += 1
                return
        self.failed += 1
        print(f"webhook {url}: event {doc['event']} dropped after {len(self.backoff) + 1} "
              "attempts", file=sys.stderr, flush=True)

    def _run(self) -> None:
        while True:
            doc = self.q.get()
            if doc is None:
                return
            for url in self.urls:
                self._deliver(url, doc)
            self.q.task_done()

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until every queued event was delivered or dropped (tests)."""
        end = time.monotonic() + timeout
        while self.q.unfinished_tasks and time.monotonic() < end:
            time.sleep(0.02)

    def close(self) -> None:
        """Stop the sender after the queued events."""
        self.q.put(None)
