"""The HTTP service of a campaign: a small ASGI app served by uvicorn (optional extra `serve`).

Endpoints (JSON in, JSON out) and who may call them (`Authorization: Bearer TOKEN`, else 401;
a token without the right 403):

- POST /next    {"n": 1, "worker": null, "lease": 600, "late_window": 600}
  -> {"queries": [...], "count": k} (admin, worker: a worker token gets only its own queries,
  handed out to it; n <= MAX_N). n, lease and late_window are capped per role (`caps`, set by
  the admin): a request asking for more gets the cap, and `capped` in the reply says so
- POST /release {"worker": W} -> the counts of W's hand-outs ended (admin; `campaign release`)
- POST /record  {"answers": [{"item", "worker", "label"}, ...]}  -> counts and an outcome per
  row (stored, duplicate, late, rejected + reason); a worker token answers only as itself
- GET  /status?offset=0&limit=100  -> the `campaign status --json` document, paged (admin, read;
  a read token sees the campaign's name where an admin sees its file path)
- GET  /export?what=answers|labels&offset=0&limit=10000  -> paged rows (admin, read)
- GET  /?offset=0  the status page, its worker table paged by links (admin, read; the token may
  also be given as ?token=)

The scheme of the Authorization header is case-insensitive (RFC 7235): `bearer` works.
Every response carries SECURITY_HEADERS: a Content-Security-Policy that allows the page's own
style sheet and nothing else (no script, no framing: `frame-ancestors 'none'`), `nosniff`,
no referrer (a page opened with ?token= never sends its URL on), and `Cache-Control: no-store`
(no proxy or browser keeps a status or a token-bearing page).

Reads answer with a `Server-Timing` header: `app` (wall) and `cpu` (the worker thread's CPU)
milliseconds of the database work and the computed document (its JSON text is not in them).

Writes (next/record/release) go through one Campaign object, one at a time in arrival order:
with a SQLite file, a small one (at most INLINE_ROWS rows or queries) on the event loop when
nothing is queued and no other process holds the file's write lock (it never waits there, and
its commit never syncs to disk: the file's WAL checkpoints, which fsync, run on a thread of
their own every CHECKPOINT_EVERY seconds), the others on one writer thread, each waiting at
most WRITE_WAIT seconds in the queue and for other processes' writers: otherwise 503 with
Retry-After, nothing changed. With PostgreSQL (or CROWDOPT_CAMPAIGN_SYNC=FULL, where each
commit fsyncs) every write runs on the writer thread: the event loop never waits for the
database. Reads (status, export, the page) run on a second thread with a read-only Campaign:
they never wait for a writer (SQLite WAL, PostgreSQL snapshots). Bodies over MAX_BODY bytes get 413; bad JSON, nesting, a bad `n` 422; an
unknown path 404, a wrong method 405 (JSON `{"error": ...}` in every case).

The app is plain ASGI (no web framework: the routing is five paths, and a framework's layers
cost more per request than the campaign's own work); uvicorn serves it, with its C parser
(httptools) when installed.
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
import urllib.parse
from pathlib import Path
from typing import Any

from ..errors import CrowdoptError, InputError
from ..validate import MAX_INT, Shown, id_text, integer_text, json_int, json_loads
from . import caps as ccaps
from . import store, stores
from .core import Busy, Campaign, StoreError
from .page import CSP

INSTALL = "pip install 'crowdopt[serve]'"
MAX_BODY = 8 * 1024 * 1024  # bytes of a request body
MAX_N = ccaps.MAX_N  # queries per /next
MAX_DEPTH = 8  # JSON nesting of a body ({"answers": [{...}]} is 3)
WRITE_WAIT = 2.0  # seconds a write waits for the lock
INLINE_ROWS = 64  # a write of at most this many queries or answers runs on the event loop
CHECKPOINT_EVERY = 1.0  # seconds between the SQLite file's WAL checkpoints (off the loop)
STATUS_LIMIT, EXPORT_LIMIT, PAGE_ROWS = 100, 10_000, 50  # default page sizes
ROLES = {"/next": ("admin", "worker"), "/record": ("admin", "worker"),
         "/release": ("admin",),
         "/status": ("admin", "read"), "/export": ("admin", "read"), "/": ("admin", "read")}
SECURITY_HEADERS = [(b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"cache-control", b"no-store")]


class BindError(CrowdoptError):
    """The server could not listen on its address (the CLI exits 7)."""

    exit_code = 7


def _require() -> None:
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        raise InputError("campaign serve", f"the serve extra ({INSTALL})",
                         "uvicorn not installed") from None


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
    """Query parameter `name` by the integer rule of the command line (`validate.integer_text`:
    digits, at most 2^53; '1_0' and 2^64 are refused), in [0, hi]."""
    v = request.query_params.get(name)
    if v is None:
        return default
    return integer_text(v, name, lo=0, hi=MAX_INT if hi is None else hi)


# the query parameters each path reads: any other, or one given twice, is refused (422) like
# an unknown key of a body
QUERY_PARAMS = {"/next": (), "/record": (), "/release": (), "/status": ("offset", "limit"),
                "/export": ("what", "offset", "limit"), "/": ("offset", "token")}


def _check_query(request, path: str) -> None:
    """Refuse a query parameter `path` does not read, or one given twice (never "the last one
    wins"), in one line naming it."""
    allowed = QUERY_PARAMS[path]
    unknown = next((k for k in request.query_names if k not in allowed), None)
    if unknown is not None:
        raise InputError("query", "parameters among " + (", ".join(allowed) or "none")
                         + f" on {path}", unknown)
    if request.repeated is not None:
        raise InputError(request.repeated, "one value (the parameter once)",
                         Shown(f"{request.repeated} given twice"))


def _worker_param(worker: Any) -> Any:
    """The worker of a /next body by the id rule: a text by the text rule (a lone surrogate,
    NUL or U+200B is refused, 422), an integer within 2^53, never a boolean; None stays None."""
    if worker is None or isinstance(worker, int) and not isinstance(worker, bool):
        return worker
    if not isinstance(worker, str):
        raise InputError("worker", "a text or integer worker id", worker)
    return id_text(worker.strip(), "worker")


class Tokens:
    """The live token hashes and the caps on /next per role, re-read from the store at most
    once a second (rotation by `campaign token`, caps set by another server: within a
    second)."""

    def __init__(self, camp: Campaign):
        self.camp = camp
        self.roles: dict[str, tuple[str, str | None]] = {}
        self.caps: dict = ccaps.DEFAULT
        self.at = -1.0

    def stale(self) -> bool:
        """Whether the roles were read over a second ago."""
        return time.monotonic() - self.at > 1.0

    def refresh(self) -> None:
        """Re-read the hashes (a database read: call it on the reads' thread, the one user
        of `camp`'s connection)."""
        self.roles = self.camp.token_roles()
        self.caps = self.camp.next_caps()
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


class Request:
    """What an endpoint reads of an HTTP request: its method, query parameters (their names in
    order, and the first name given twice, which `_check_query` refuses) and headers
    (lower-case names)."""

    __slots__ = ("method", "query_params", "query_names", "repeated", "headers")

    def __init__(self, scope: dict):
        self.method = scope["method"]
        pairs = urllib.parse.parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                                       keep_blank_values=True)
        self.query_params = dict(pairs)
        self.query_names = [k for k, _ in pairs]
        self.repeated = next((k for i, k in enumerate(self.query_names)
                              if k in self.query_names[:i]), None)
        self.headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}


def _json_bytes(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False, allow_nan=False,
                      separators=(",", ":")).encode("utf-8")


async def _respond(send, status: int, body: bytes, ctype: bytes,
                   headers: dict[str, str] | None = None) -> None:
    head = [(b"content-type", ctype), (b"content-length", str(len(body)).encode()),
            *SECURITY_HEADERS]
    if headers:
        head += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


JSON_TYPE, HTML_TYPE = b"application/json", b"text/html; charset=utf-8"


class App:
    """The ASGI application: a route table over the endpoint functions, the campaign's two
    connections and the worker threads they run on (`state`: campaigns, hooks)."""

    def __init__(self, routes: dict[str, tuple[str, Any]], state: Any):
        self.routes, self.state = routes, state

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        route = self.routes.get(scope["path"])
        if route is None:
            return await _respond(send, 404, _json_bytes(
                {"error": f"not found: {scope['path']}"}), JSON_TYPE)
        method, handler = route
        allowed = (method, "HEAD") if method == "GET" else (method,)
        if scope["method"] not in allowed:
            return await _respond(send, 405, _json_bytes(
                {"error": f"method {scope['method']} not allowed on {scope['path']}; use "
                 f"{method}"}), JSON_TYPE, {"Allow": ", ".join(allowed)})
        try:
            await handler(scope, receive, send)
        except Exception:  # a defect: logged, and the client gets one JSON line
            import traceback

            traceback.print_exc(file=sys.stderr)
            await _respond(send, 500, _json_bytes({"error": "internal error (logged by the "
                                                   "server)"}), JSON_TYPE)


class Checkpoints:
    """The SQLite file's WAL checkpoints on a thread of their own, every `every` seconds (and
    at `close`): the server's writer connection never checkpoints, and the WAL is started
    over by this thread (`SqliteStore.checkpoint`), so no fsync ever runs on the event loop,
    where the small writes are committed. The loop writes only while it holds `lock`, which a
    checkpoint holds from its start to the WAL's restart (else the loop may write the first
    frame of the restarted WAL, and sync it). `count`: checkpoints made."""

    def __init__(self, db: str, every: float = CHECKPOINT_EVERY):
        self.st = stores.open_store(db, busy_timeout=WRITE_WAIT)
        # its own commits never checkpoint either: when a reader kept the restart write from
        # starting the WAL over (the write is then appended), SQLite's automatic checkpoint at
        # its commit copied every frame and left the WAL to be started over, and synced, by the
        # loop's next write (seen under load: strace caught the loop's fdatasync)
        self.st.defer_checkpoints()
        self.every, self.count = every, 0
        self.lock = threading.Lock()
        self._checkpoint()  # a WAL started here, before the loop's first write
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="crowdopt-checkpoint",
                                       daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            self._checkpoint()

    def _checkpoint(self) -> None:
        try:
            with self.lock:
                self.st.checkpoint()
            self.count += 1
        except Exception as exc:  # noqa: BLE001 - a busy file: the next round does it
            print(f"checkpoint: {self.st.failure(exc) or exc}", file=sys.stderr, flush=True)

    def close(self) -> None:
        """Stop the thread after one last checkpoint."""
        self.stop.set()
        self.thread.join(30)
        self._checkpoint()
        self.st.close()


def create_app(db: str, *, webhooks: list[str] | None = None,
               webhook_secret: bytes | None = None, gold: Any = None,
               horizon: float | None = None, caps: dict | None = None,
               owner: str | None = None) -> App:
    """The ASGI app serving campaign `db` (a file or a PostgreSQL URL; `gold`: the gold file
    or data set, for the page; `webhooks`: endpoints to register, and then this server
    delivers every registered endpoint's events, `horizon` seconds at most, as `owner` of its
    claims; `caps`: changes to the caps on /next per role, stored for every server).

    Writes are applied one at a time: with a SQLite file, a small one on the event loop
    itself whenever the connection is free, the others (and any while one waits for another
    process's lock) on one writer thread in arrival order; with PostgreSQL all on the writer
    thread. Reads run on another thread,
    so a long status never holds up a write and the reverse."""
    _require()
    from concurrent.futures import ThreadPoolExecutor
    from types import SimpleNamespace

    from .webhooks import HORIZON, Delivery, register

    writer = Campaign.open(db, busy_timeout=WRITE_WAIT)
    if caps and not writer.readonly:
        writer.set_next_caps(caps)
    # small writes on the loop: a SQLite file whose commits do not fsync (NORMAL), its
    # checkpoints (which do) moved to their own thread
    inline = isinstance(writer.store, store.SqliteStore) and store.sync_mode() == "NORMAL" \
        and not writer.readonly
    checkpoints = None
    if inline:
        writer.store.defer_checkpoints()
        checkpoints = Checkpoints(db)
    reader = Campaign.open(db, readonly=True)
    reader.trust_log = True  # `writer` checks the logged decisions (at its next write)
    # a long-lived reader follows the log in memory (each status costs what changed since);
    # the file's summary is for the one-shot readers (the CLI)
    reader.use_summary = False
    if gold is not None:
        from .io import read_gold_map

        gold = read_gold_map(gold, reader.item_ids, reader.classes)
    writes = ThreadPoolExecutor(1, thread_name_prefix="crowdopt-write")
    reads = ThreadPoolExecutor(1, thread_name_prefix="crowdopt-read")
    tokens = Tokens(reader)
    refreshing: list = []  # the token refresh in flight, shared by the requests that wait
    if webhooks and not writer.readonly:
        register(db, webhooks)  # added to the endpoints events are written for
    hooks = None
    if webhooks:
        hooks = Delivery(db, webhook_secret or b"", horizon=horizon or HORIZON, owner=owner)

    def error(status: int, msg: str, **headers: str) -> tuple:
        return status, _json_bytes({"error": msg}), JSON_TYPE, headers or None

    def queued(at: float, fn, *a):
        """Run a write that was queued at `at` (monotonic), unless it waited over WRITE_WAIT."""
        if time.monotonic() - at > WRITE_WAIT:
            raise Busy("the campaign is busy with other requests")
        return fn(*a)

    if inline:
        writer.store.set_wait(0)  # on the loop: never wait for the lock
    # held by the thread that runs a write on `writer` (the loop or the writer thread): one
    # write at a time on the one connection, and the loop never waits for it
    connection = threading.Lock()

    def waiting(fn, *a):
        """A write on the writer thread: it may wait WRITE_WAIT for other processes."""
        if not inline:
            return fn(*a)
        with connection:
            writer.store.set_wait(WRITE_WAIT)
            try:
                return fn(*a)
            finally:
                writer.store.set_wait(0)

    def small(body: Any) -> bool:
        """Whether a write body asks for little work (<= INLINE_ROWS queries or answers)."""
        if not isinstance(body, dict):
            return True
        n, rows = body.get("n", 1), body.get("answers")
        return (not isinstance(n, int) or n <= INLINE_ROWS) and (
            not isinstance(rows, list) or len(rows) <= INLINE_ROWS)

    async def write_(loop, fn, body, role, request):
        """Run a write: a small one right here on the event loop when the writer thread is
        not running one, no checkpoint is under way and no other process holds the file's
        write lock (a call of a millisecond or two: handing it to a thread would cost more
        than the call, as the two threads then trade the interpreter lock); otherwise on the
        writer thread, in order, waiting at most WRITE_WAIT. Writes queued on the thread do
        not keep the next small ones off the loop: once a checkpoint had sent a few there,
        every later write followed them while any was queued (a quarter of the writes at 4
        clients)."""
        if inline and small(body) and connection.acquire(False):
            try:
                if checkpoints.lock.acquire(False):
                    try:
                        return fn(body, role, request)
                    except Busy:  # another process holds the write lock: nothing was changed
                        pass
                    finally:
                        checkpoints.lock.release()
            finally:
                connection.release()
        job = writes.submit(queued, time.monotonic(), waiting, fn, body, role, request)
        return await asyncio.wrap_future(job)

    def timed(fn, *a) -> tuple[Any, str]:
        """Run a read, and a Server-Timing header value: the thread's wall and CPU
        milliseconds (the CPU figure does not depend on the machine's load)."""
        t0, c0 = time.perf_counter(), time.thread_time()
        out = fn(*a)
        return out, (f"app;dur={1000 * (time.perf_counter() - t0):.2f}, "
                     f"cpu;dur={1000 * (time.thread_time() - c0):.2f}")

    async def fresh_tokens(loop) -> None:
        if not refreshing:
            refreshing.append(loop.run_in_executor(reads, tokens.refresh))
        fut = refreshing[0]
        try:
            await fut
        finally:
            if refreshing and refreshing[0] is fut:
                refreshing.clear()

    async def body_of(receive, request: Request) -> tuple[Any, tuple | None]:
        """The parsed JSON body of a POST, or the error response that refuses it."""
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > MAX_BODY):
            return None, error(413, f"body: expected at most {MAX_BODY} bytes, found {size}")
        chunks, n = [], 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return None, error(400, "body: the client went away")
            chunk = msg.get("body", b"")
            n += len(chunk)
            if n > MAX_BODY:
                return None, error(413, f"body: expected at most {MAX_BODY} bytes, found more")
            chunks.append(chunk)
            if not msg.get("more_body"):
                break
        raw = b"".join(chunks)
        deep = error(422, f"body: expected JSON nested at most {MAX_DEPTH} deep, found deeper")
        try:
            # numbers by the number rule: 1e-400 like 1e400, integers within 2^53 (a 5,000-digit
            # one included), each refused by its place in the body
            body = json_loads(raw or b"{}", "body", max_int=True, parse_int=json_int)
        except RecursionError:
            return None, deep
        except InputError as exc:
            return None, error(422, str(exc))
        except ValueError:  # JSONDecodeError, UnicodeDecodeError
            return None, error(422, "body: expected a JSON object, found invalid JSON")
        if _too_deep(body):
            return None, deep
        return body, None

    def endpoint(path: str, fn, write: bool, html: bool = False):
        async def handle(scope, receive, send) -> None:
            status, out, ctype, headers = await answer(scope, receive)
            await _respond(send, status, out, ctype, headers)

        async def answer(scope, receive) -> tuple:
            request = Request(scope)
            tok = bearer(request.headers.get("authorization", ""))
            if tok is None and html:
                tok = request.query_params.get("token")
            loop = asyncio.get_running_loop()
            if tokens.stale():
                await fresh_tokens(loop)
            role = None if tok is None else tokens.role(tok)
            if role is None:
                return error(401, "unauthorized: send 'Authorization: Bearer TOKEN' (DB.token, "
                             "DB.read-token or a token from `campaign token`)",
                             **{"WWW-Authenticate": "Bearer"})
            if role[0] not in ROLES[path]:
                return error(403, f"forbidden: a {role[0]} token may not use {path}")
            try:
                _check_query(request, path)
            except InputError as exc:
                return error(422, str(exc))
            body = None
            if request.method == "POST":
                body, refused = await body_of(receive, request)
                if refused is not None:
                    return refused
            try:
                timing = None
                if write:
                    out = await write_(loop, fn, body, role, request)
                else:
                    out, timing = await loop.run_in_executor(reads, timed, fn, body, role,
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
                return 200, out.encode("utf-8"), HTML_TYPE, headers
            return 200, _json_bytes(out), JSON_TYPE, headers
        return handle

    def next_(body: Any, role, request) -> dict:
        b = _fields(body, {"n", "worker", "lease", "late_window"})
        n = b.get("n", 1)
        if isinstance(n, int) and not isinstance(n, bool) and n > MAX_N:
            raise InputError("n", f"an integer in [1, {MAX_N}] per request", n)
        worker = _worker_param(b.get("worker"))
        if role[0] == "worker":
            if worker is not None and str(worker) != role[1]:
                raise InputError("worker", f"{role[1]!r} (this token's worker)", worker)
            worker = role[1]
        n, lease, late, capped = ccaps.apply(tokens.caps, role[0], n, b.get("lease"),
                                             b.get("late_window"))
        qs = writer.next(n, worker=worker, lease=lease, late_window=late)
        out = {"queries": [q.to_dict() for q in qs], "count": len(qs)}
        if capped:  # asked for more than the role may: given the cap, and told
            out["capped"] = capped
        return out

    def release(body: Any, role, request) -> dict:
        b = _fields(body, {"worker"})
        worker = _worker_param(b.get("worker"))
        if worker is None:
            raise InputError("worker", "the worker whose hand-outs end", None)
        return writer.release(worker)

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
            total = reader.answer_count()
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

    routes = {"/next": ("POST", endpoint("/next", next_, True)),
              "/record": ("POST", endpoint("/record", record, True)),
              "/release": ("POST", endpoint("/release", release, True)),
              "/status": ("GET", endpoint("/status", status, False)),
              "/export": ("GET", endpoint("/export", export, False)),
              "/": ("GET", endpoint("/", page, False, html=True))}
    return App(routes, SimpleNamespace(campaigns=(writer, reader), hooks=hooks,
                                       checkpoints=checkpoints,
                                       pools=(writes, reads)))


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
          webhook_horizon: float | None = None, caps: dict | None = None) -> int:
    """Run the service until interrupted (uvicorn, one process); returns the exit code.
    Several processes may serve one campaign (a PostgreSQL one on several machines)."""
    _require()
    import uvicorn

    for f, name in ((certfile, "--certfile"), (keyfile, "--keyfile")):
        if f is not None and not Path(f).is_file():
            raise InputError(name, "an existing PEM file", f)
    secret = None
    if webhooks:
        from .webhooks import check_urls, load_secret

        check_urls(webhooks)
        secret = load_secret(webhook_secret_file or stores.sidecar(db, ".webhook-secret"))
    # the campaign and the gold refused before the bind (a wrong path is exit 2, not 7)
    first = Campaign.open(db, readonly=True)
    try:
        if gold is not None:
            from .io import read_gold_map

            read_gold_map(gold, first.item_ids, first.classes)
    finally:
        first.close()
    sock = bind(host, port)
    real_port = sock.getsockname()[1]
    try:
        # the delivery claims are this server's, by host and port: a restart takes them back
        app = create_app(db, webhooks=webhooks, webhook_secret=secret, gold=gold,
                         horizon=webhook_horizon, caps=caps,
                         owner=f"{socket.gethostname()}:{real_port}")
    except BaseException:
        sock.close()
        raise
    # the modules and the campaigns' state so far live as long as the server: out of the
    # garbage collector's full passes, which otherwise visit them all (tens of ms each)
    gc.collect()
    gc.freeze()
    # hand the interpreter lock between threads every 1 ms (default 5 ms): a status read does
    # not sit behind several write requests' time slices
    sys.setswitchinterval(0.001)
    scheme = "https" if certfile else "http"
    where = stores.describe(db)
    if not certfile and not _loopback(host):
        print(f"warning: serving {where} on {host} over plain HTTP: bearer tokens and answers "
              "travel unencrypted; use --certfile/--keyfile or a TLS proxy", file=sys.stderr,
              flush=True)
    print(f"serving {where} on {scheme}://{host}:{real_port} (status page at /, POST /next "
          f"/record /release, GET /status /export; tokens in "
          f"{stores.sidecar(db, '.token')} and {stores.sidecar(db, '.read-token')})", flush=True)
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
        for pool in app.state.pools:
            pool.shutdown(wait=True, cancel_futures=True)
        if app.state.checkpoints is not None:
            app.state.checkpoints.close()
    return 0
