"""The HTTP service of a campaign (optional extra `serve`: Starlette + uvicorn).

Endpoints (JSON in, JSON out; every request needs `Authorization: Bearer TOKEN`, the token
`campaign init` wrote to DB.token; otherwise 401):

- POST /next    {"n": 1, "worker": null, "lease": 600}  -> {"queries": [...], "count": k}
- POST /record  {"answers": [{"item", "worker", "label"}, ...]}  -> {"rows", "recorded",
  "duplicates"}; all or nothing, idempotent
- GET  /status  -> the `campaign status --json` document
- GET  /export  -> {"answers": [{"item", "worker", "label"}, ...]}

A bad body gets 422 with the one-line message the CLI prints ({"error": "..."}). Requests are
served one at a time by one Campaign object; other processes (CLI, Python) may use the file
at the same time.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from ..errors import CrowdoptError, InputError
from .core import Campaign

INSTALL = "pip install 'crowdopt[serve]'"


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


def create_app(db: str):
    """The ASGI app serving campaign file `db`."""
    _require()
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    camp = Campaign.open(db)
    expected = f"Bearer {camp.token}".encode()

    def error(status: int, msg: str, **headers: str) -> JSONResponse:
        return JSONResponse({"error": msg}, status_code=status, headers=headers or None)

    def endpoint(fn):
        async def run(request: Request):
            got = request.headers.get("authorization", "").encode()
            if not hmac.compare_digest(got, expected):
                return error(401, "unauthorized: send 'Authorization: Bearer TOKEN' (the token "
                             "campaign init wrote to DB.token)", **{"WWW-Authenticate": "Bearer"})
            body = None
            if request.method == "POST":
                raw = await request.body()
                try:
                    body = json.loads(raw or b"{}")
                except (json.JSONDecodeError, UnicodeDecodeError):
                    return error(422, "body: expected a JSON object, found invalid JSON")
            try:
                return JSONResponse(fn(body))
            except InputError as exc:
                return error(422, str(exc))
            except CrowdoptError as exc:
                return error(500, str(exc))
        return run

    def next_(body: Any) -> dict:
        b = _fields(body, {"n", "worker", "lease"})
        qs = camp.next(b.get("n", 1), worker=b.get("worker"), lease=b.get("lease"))
        return {"queries": [q.to_dict() for q in qs], "count": len(qs)}

    def record(body: Any) -> dict:
        rows = body.get("answers") if isinstance(body, dict) else None
        if isinstance(body, dict):
            _fields(body, {"answers"})
        if not isinstance(rows, list):
            raise InputError("body", '{"answers": [{"item", "worker", "label"}, ...]}',
                             type(rows).__name__)
        return camp.record(rows)

    def status(_: Any) -> dict:
        return camp.status()

    def export(_: Any) -> dict:
        return {"answers": [{"item": i, "worker": w, "label": y} for i, w, y in camp.answers()]}

    return Starlette(routes=[
        Route("/next", endpoint(next_), methods=["POST"]),
        Route("/record", endpoint(record), methods=["POST"]),
        Route("/status", endpoint(status), methods=["GET"]),
        Route("/export", endpoint(export), methods=["GET"]),
    ])


def serve(db: str, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Run the service until interrupted (uvicorn, one process)."""
    _require()
    import uvicorn

    app = create_app(db)
    print(f"serving {db} on http://{host}:{port} (POST /next /record, GET /status /export; "
          f"bearer token in {db}.token)", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
