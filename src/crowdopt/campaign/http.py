"""The HTTP service of a campaign (optional extra `serve`: Starlette + uvicorn).

Endpoints (JSON in, JSON out) and who may call them (`Authorization: Bearer TOKEN`, else 401;
a token without the right 403):

- POST /next    {"n": 1, "worker": null, "lease": 600, "late_window": 600}
  -> {"queries": [...], "count": k} (admin, worker: a worker token gets only its own queries,
  handed out to it; n <= MAX_N)
- POST /record  {"answers": [{"item", "worker", "label"}, ...]}  -> counts and an outcome per
  row (stored, duplicate, late, rejected + reason); a worker token answers only as itself
- GET  /status?offset=0&limit=100  -> the `campaign status --json` document, paged (admin, read;
  a read token sees the campaign's name where an admin sees its file path)
- GET  /export?what=answers|labels&offset=0&limit=10000  -> paged rows (admin, read)
- GET  /?offset=0  the status page, its worker table paged by links (admin, read; the token may
  also be given as ?token=)

The scheme of the Authorization header is case-insensitive (RFC 7235): `bearer` works.

Reads answer with a `Server-Timing` header: `app` (wall) and `cpu` (the worker thread's CPU)
milliseconds of the database work and the computed document (its JSON text is not in them).

The event loop never touches the database: every call runs in a worker thread. Writes
(next/record) go through one Campaign object under a lock, each waiting at most WRITE_WAIT
seconds for the lock and for other processes' writers: otherwise 503 with Retry-After, nothing
changed. Reads (status, export, the page) use a second, read-only Campaign: they never wait for
a writer (SQLite WAL). Bodies over MAX_BODY bytes get 413; bad JSON, nesting, a bad `n` 422.
"""

from __future__ import annotations

import asyncio
import gc
import ipaddress
import json
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import CrowdoptError, InputError
from ..validate import json_int
from . import store
from .core import Busy, Campaign, StoreError

INSTALL = "pip install 'crowdopt[serve]'"
MAX_BODY = 8 * 1024 * 1024  # bytes of a request body
MAX_N = 1000  # queries per /next
MAX_DEPTH = 8  # JSON nesting of a body ({"answers": [{...}]} is 3)
WRITE_WAIT = 2.0  # seconds a write waits for the lock
STATUS_LIMIT, EXPORT_LIMIT, PAGE_ROWS = 100, 10_000, 50  # default page sizes
ROLES = {"/next": ("admin", "worker"), "/record": ("admin", "worker"),
         "/status": ("admin", "read"), "/export": ("admin", "read"), "/": ("admin", "read")}


class BindError(CrowdoptError):
    """The server could not listen on its address (the CLI exits 7)."""

    exit_code = 7


def _require() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise InputError("campaign serve", f"the serve extra ({INSTALL})",
                         "starlette/uvicorn not installed") from None


def _fields(body: Any, allowed: set[str]) -> dict:
    if not isinstance(body, dict):
        raise InputError("body", "a JSON object", type(body).__name__)
    extra = sorted(set(body) - allowed)
    if extra:
        raise InputError("body", f"keys among {', '.join(sorted(allowed))}", extra[0])
    return body


def _too_deep(doc: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed JSON value nests lists/objects deeper than `limit` (iterative;
    stops at the first node too deep)."""
    stack = [(doc, 1)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, dict):
            x = x.values()
        elif not isinstance(x, list):
            continue
        if d > limit:
            return True
        stack.extend((v, d + 1) for v in x if isinstance(v, dict | list))
    return False


def _int_param(request, name: str, default: int | None, hi: int | None = None) -> int | None:
    v = request.query_params.get(name)
    if v is None:
        return default
    try:
        x = int(v)
    except ValueError:
        x = -1
    if x < 0 or (hi is not None and x > hi):
        raise InputError(name, f"an integer in [0, {hi}]" if hi else "an integer >= 0", v)
    return x


class Tokens:
    """The live token hashes, re-read from the file at most once a second (rotation by
    `campaign token` takes effect within a second)."""

    def __init__(self, camp: Campaign, lock: threading.Lock):
        self.camp, self.lock = camp, lock
        self.roles: dict[str, tuple[str, str | None]] = {}
        self.at = -1.0

    def stale(self) -> bool:
        """Whether the roles were read over a second ago."""
        return time.monotonic() - self.at > 1.0

    def refresh(self) -> None:
        """Re-read the hashes (a database read: call it off the event loop)."""
        with self.lock:
            self.roles = self.camp.token_roles()
        self.at = time.monotonic()

    def role(self, token: str) -> tuple[str, str | None] | None:
        """The (role, worker) of a bearer token, or None (call `refresh` when `stale`)."""
        # a lookup by SHA-256: timing reveals nothing usable about a token (a preimage)
        return self.roles.get(store.token_hash(token))


def bearer(header: str) -> str | None:
    """The token of an `Authorization: Bearer TOKEN` header (scheme in any case), or None."""
    scheme, _, tok = header.strip().partition(" ")
    tok = tok.strip()
    return tok if scheme.lower() == "bearer" and tok else None


def for_role(st: dict, role: str) -> dict:
    """A status document as `role` may see it: the file's path for an admin, the campaign's
    name for everyone else (a read token is handed to people outside the server)."""
    if role == "admin":
        return st
    return {**st, "campaign": st["name"]}


def create_app(db: str, *, webhooks: list[str] | None = None,
               webhook_secret: bytes | None = None, gold: Any = None,
               horizon: float | None = None):
    """The ASGI app serving campaign file `db` (`gold`: the gold file or data set, for the
    page; `webhooks`: the endpoints events are delivered to, `horizon` seconds at most)."""
    _require()
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse
    from starlette.routing import Route

    from .webhooks import HORIZON, Delivery, register

    writer = Campaign.open(db, busy_timeout=WRITE_WAIT)
    reader = Campaign.open(db, readonly=True)
    reader.trust_log = True  # `writer` checks the logged decisions (at its next write)
    # a long-lived reader follows the log in memory (each status costs what changed since);
    # the file's summary is for the one-shot readers (the CLI)
    reader.use_summary = False
    if gold is not None:
        from .io import read_gold_map

        gold = read_gold_map(gold, reader.item_ids, reader.classes)
    wlock, rlock = threading.Lock(), threading.Lock()
    tokens = Tokens(reader, rlock)
    if not writer.readonly:
        register(db, webhooks or [])  # the endpoints new events are written for
    hooks = None
    if webhooks:
        hooks = Delivery(db, webhook_secret or b"", horizon=horizon or HORIZON)

    def error(status: int, msg: str, **headers: str) -> JSONResponse:
        return JSONResponse({"error": msg}, status_code=status, headers=headers or None)

    def locked(lock: threading.Lock, fn, *a):
        if not lock.acquire(timeout=WRITE_WAIT):
            raise Busy("the campaign is busy with other requests")
        try:
            return fn(*a)
        finally:
            lock.release()

    def timed(lock: threading.Lock, fn, *a) -> tuple[Any, str]:
        """`locked`, and a Server-Timing header value: the worker thread's wall and CPU
        milliseconds (the CPU figure does not depend on the machine's load)."""
        t0, c0 = time.perf_counter(), time.thread_time()
        out = locked(lock, fn, *a)
        return out, (f"app;dur={1000 * (time.perf_counter() - t0):.2f}, "
                     f"cpu;dur={1000 * (time.thread_time() - c0):.2f}")

    def endpoint(path: str, fn, write: bool, html: bool = False):
        async def run(request: Request):
            tok = bearer(request.headers.get("authorization", ""))
            if tok is None and html:
                tok = request.query_params.get("token")
            if tokens.stale():
                await run_in_threadpool(tokens.refresh)
            role = None if tok is None else tokens.role(tok)
            if role is None:
                return error(401, "unauthorized: send 'Authorization: Bearer TOKEN' (DB.token, "
                             "DB.read-token or a token from `campaign token`)",
                             **{"WWW-Authenticate": "Bearer"})
            if role[0] not in ROLES[path]:
                return error(403, f"forbidden: a {role[0]} token may not use {path}")
            body = None
            if request.method == "POST":
                size = request.headers.get("content-length")
                if size is not None and (not size.isdigit() or int(size) > MAX_BODY):
                    return error(413, f"body: expected at most {MAX_BODY} bytes, found {size}")
                chunks, n = [], 0
                async for chunk in request.stream():
                    n += len(chunk)
                    if n > MAX_BODY:
                        return error(413, f"body: expected at most {MAX_BODY} bytes, found more")
                    chunks.append(chunk)
                raw = b"".join(chunks)
                deep = error(422, f"body: expected JSON nested at most {MAX_DEPTH} deep, "
                             "found deeper")
                try:
                    # a 5,000-digit integer becomes inf: the field's own check refuses it
                    body = json.loads(raw or b"{}", parse_int=json_int)
                except RecursionError:
                    return deep
                except ValueError:  # JSONDecodeError, UnicodeDecodeError
                    return error(422, "body: expected a JSON object, found invalid JSON")
                if _too_deep(body):
                    return deep
            try:
                timing = None
                if write:
                    out = await run_in_threadpool(locked, wlock, fn, body, role, request)
                else:
                    out, timing = await run_in_threadpool(timed, rlock, fn, body, role,
                                                          request)
            except InputError as exc:
                return error(422, str(exc))
            except Busy as exc:
                return error(503, f"busy: {exc}; retry", **{"Retry-After": "1"})
            except StoreError as exc:
                return error(503, str(exc), **{"Retry-After": "5"})
            except CrowdoptError as exc:
                return error(500, str(exc))
            headers = None if timing is None else {"Server-Timing": timing}
            if html:
                return HTMLResponse(out, headers=headers)
            return JSONResponse(out, headers=headers)
        return run

    def next_(body: Any, role, request) -> dict:
        b = _fields(body, {"n", "worker", "lease", "late_window"})
        n = b.get("n", 1)
        if isinstance(n, int) and not isinstance(n, bool) and n > MAX_N:
            raise InputError("n", f"an integer in [1, {MAX_N}] per request", n)
        worker = b.get("worker")
        if role[0] == "worker":
            if worker is not None and str(worker) != role[1]:
                raise InputError("worker", f"{role[1]!r} (this token's worker)", worker)
            worker = role[1]
        qs = writer.next(n, worker=worker, lease=b.get("lease"),
                         late_window=b.get("late_window"))
        return {"queries": [q.to_dict() for q in qs], "count": len(qs)}

    def record(body: Any, role, request) -> dict:
        rows = body.get("answers") if isinstance(body, dict) else None
        if isinstance(body, dict):
            _fields(body, {"answers"})
        if not isinstance(rows, list):
            raise InputError("body", '{"answers": [{"item", "worker", "label"}, ...]}',
                             type(rows).__name__)
        res = writer.record(rows, as_worker=role[1] if role[0] == "worker" else None)
        if hooks is not None and res["recorded"]:
            hooks.wake()  # the record wrote its events: deliver them now
        return res

    def status(body: Any, role, request) -> dict:
        return for_role(reader.status(gold=gold, offset=_int_param(request, "offset", 0),
                                      limit=_int_param(request, "limit", STATUS_LIMIT,
                                                       100_000)), role[0])

    def export(body: Any, role, request) -> dict:
        from .export import export_rows

        what = request.query_params.get("what", "answers")
        off = _int_param(request, "offset", 0)
        lim = _int_param(request, "limit", EXPORT_LIMIT, 1_000_000)
        if what == "answers":
            rows = reader.answers(offset=off, limit=lim)
            total = reader.conn.execute("SELECT count(*) FROM answers").fetchone()[0]
            return {"what": what, "offset": off, "limit": lim, "total": total,
                    "answers": [{"item": i, "worker": w, "label": y} for i, w, y in rows]}
        header, rows = export_rows(reader, what)
        return {"what": what, "offset": off, "limit": lim, "total": len(rows),
                "labels": [dict(zip(header, r)) for r in rows[off:off + lim]]}

    def page(body: Any, role, request) -> str:
        from .page import render_page

        off = _int_param(request, "offset", 0)
        st = for_role(reader.status(gold=gold, offset=off, limit=PAGE_ROWS), role[0])
        tok = request.query_params.get("token")  # kept in the page's links when given so
        return render_page(st, reader.answer_times(), token=tok)

    app = Starlette(routes=[
        Route("/next", endpoint("/next", next_, True), methods=["POST"]),
        Route("/record", endpoint("/record", record, True), methods=["POST"]),
        Route("/status", endpoint("/status", status, False), methods=["GET"]),
        Route("/export", endpoint("/export", export, False), methods=["GET"]),
        Route("/", endpoint("/", page, False, html=True), methods=["GET"]),
    ])
    app.state.campaigns = (writer, reader)
    app.state.hooks = hooks
    return app


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port), or `BindError` with the reason in one line."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InputError("--port", "an integer in [0, 65535]", port)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise BindError(f"cannot listen on {host}:{port}: the host does not resolve "
                        f"({exc})") from None
    last = None
    for fam, typ, proto, _, addr in infos:
        sock = socket.socket(fam, typ, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(addr)
            sock.listen(128)
            sock.set_inheritable(True)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    raise BindError(f"cannot listen on {host}:{port}: {last.strerror if last else 'no address'}")


def serve(db: str, host: str = "127.0.0.1", port: int = 8000, *, certfile: str | None = None,
          keyfile: str | None = None, webhooks: list[str] | None = None,
          webhook_secret_file: str | None = None, gold: Any = None,
          webhook_horizon: float | None = None) -> int:
    """Run the service until interrupted (uvicorn, one process); returns the exit code."""
    _require()
    import uvicorn

    for f, name in ((certfile, "--certfile"), (keyfile, "--keyfile")):
        if f is not None and not Path(f).is_file():
            raise InputError(name, "an existing PEM file", f)
    secret = None
    if webhooks:
        from .webhooks import check_urls, load_secret

        check_urls(webhooks)
        secret = load_secret(webhook_secret_file or f"{db}.webhook-secret")
    app = create_app(db, webhooks=webhooks, webhook_secret=secret, gold=gold,
                     horizon=webhook_horizon)
    # the modules and the campaigns' state so far live as long as the server: out of the
    # garbage collector's full passes, which otherwise visit them all (tens of ms each)
    gc.collect()
    gc.freeze()
    # hand the interpreter lock between threads every 1 ms (default 5 ms): a status read does
    # not sit behind several write requests' time slices
    sys.setswitchinterval(0.001)
    sock = bind(host, port)
    scheme = "https" if certfile else "http"
    if not certfile and not _loopback(host):
        print(f"warning: serving {db} on {host} over plain HTTP: bearer tokens and answers "
              "travel unencrypted; use --certfile/--keyfile or a TLS proxy", file=sys.stderr,
              flush=True)
    real_port = sock.getsockname()[1]
    print(f"serving {db} on {scheme}://{host}:{real_port} (status page at /, POST /next "
          f"/record, GET /status /export; tokens in {db}.token and {db}.read-token)",
          flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False,
                            ssl_certfile=certfile, ssl_keyfile=keyfile)
    server = uvicorn.Server(config)
    try:
        asyncio.run(server.serve(sockets=[sock]))
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        if app.state.hooks is not None:
            app.state.hooks.close()
    return 0
