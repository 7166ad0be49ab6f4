"""`crowdopt campaign serve`: a real server on 127.0.0.1 (free port) drives a whole campaign
over HTTP; no token / a wrong token get 401; bad bodies get 422 with the one-line message."""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from crowdopt.campaign import Campaign, TableOracle  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_campaign import binary_table, caps_of  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base: str, path: str, body=None, token: str | None = None, raw: bytes | None = None):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method="GET" if data is None else "POST")
    req.add_header("Content-Type", "application/json")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def oversized(base: str, token: str, size: int) -> int:
    """Status of a POST /record announcing `size` bytes (the body is never sent)."""
    import http.client

    host, port = base.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.putrequest("POST", "/record")
    conn.putheader("Authorization", f"Bearer {token}")
    conn.putheader("Content-Length", str(size))
    conn.endheaders()
    code = conn.getresponse().status
    conn.close()
    return code


@pytest.fixture
def server(tmp_path):
    from crowdopt.cli import main

    table, _ = binary_table(4, K=25)
    db = tmp_path / "h.db"
    items = tmp_path / "items.csv"
    items.write_text("item,max_labels\n" + "".join(f"{i},{c}\n" for i, c in caps_of(table).items()))
    assert main(["campaign", "init", str(db), "--policy", "optkg", "--items", str(items),
                 "--budget", "40", "--seed", "4", "--batching", "fill"]) == 0
    token = Path(str(db) + ".token")  # written by init
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "crowdopt", "campaign", "serve", str(db),
                             "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    tok = token.read_text().strip()
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, proc.communicate()[1]
        try:
            if call(base, "/status", token=tok)[0] == 200:
                break
        except (urllib.error.URLError, ConnectionError):
            pass
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.1)
    yield base, tok, table, db
    proc.terminate()
    proc.wait(timeout=30)


@pytest.mark.slow
def test_whole_campaign_over_http(server):
    base, tok, table, db = server
    oracle, rng = TableOracle(table, seed=4), random.Random(0)
    recorded = 0
    while True:
        code, doc = call(base, "/next", {"n": rng.randint(1, 9), "lease": 120}, tok)
        assert code == 200
        if not doc["queries"]:
            break
        rows = []
        for q in doc["queries"]:
            item, worker, label = oracle.answer(_Q(q))
            rows.append({"item": item, "worker": worker, "label": label})
        code, res = call(base, "/record", {"answers": rows}, tok)
        assert code == 200 and res["recorded"] == len(rows)
        assert call(base, "/record", {"answers": rows}, tok)[1]["duplicates"] == len(rows)
        recorded += len(rows)
    code, st = call(base, "/status", token=tok)
    assert code == 200 and st["answers"] == recorded == 40 and st["done"]
    code, ex = call(base, "/export", token=tok)
    assert code == 200 and len(ex["answers"]) == 40
    assert Campaign.open(db).status()["labels"] == st["labels"]  # the same file


class _Q:
    def __init__(self, d: dict):
        self.item, self.worker, self.round = d["item"], d["worker"], d["round"]


@pytest.mark.slow
def test_http_auth_and_bad_bodies(server):
    base, tok, _, db = server
    for path, body in (("/status", None), ("/next", {"n": 1}), ("/export", None)):
        assert call(base, path, body)[0] == 401  # no token
        assert call(base, path, body, token=tok + "x")[0] == 401
    assert call(base, "/status", token=tok)[0] == 200
    code, q = call(base, "/next", {"n": 1}, tok)
    item = q["queries"][0]["item"]
    bad = [({"n": 0}, "/next", "n: expected an integer >= 1"),
           ({"n": 10**6}, "/next", "n: expected an integer in [1, 1000]"),
           ({"n": 1, "color": 2}, "/next", "body: expected keys among"),
           ({"n": 1, "lease": -5}, "/next", "lease: expected"),
           ([1, 2], "/next", "body: expected a JSON object"),
           ({"answers": "x"}, "/record", "body: expected")]
    for body, path, needle in bad:
        code, doc = call(base, path, body, tok)
        assert code == 422 and needle in doc["error"] and "\n" not in doc["error"], doc
    code, doc = call(base, "/record", raw=b"{not json", token=tok)
    assert code == 422 and "invalid JSON" in doc["error"]
    code, doc = call(base, "/record", raw=b"[" * 100_000 + b"]" * 100_000, token=tok)
    assert code == 422 and "nested" in doc["error"]
    assert oversized(base, tok, 9 * 1024 * 1024) == 413  # refused before the body is read
    # a bad row is rejected alone, with the one-line message of the CLI / Python API
    ok = {"item": item, "worker": "w", "label": "1"}
    rows = [{"item": "nope", "worker": "w", "label": "1"}, {"item": item, "worker": "w"},
            {"item": item, "worker": "w", "label": "7"}, ok]
    code, doc = call(base, "/record", {"answers": rows}, tok)
    assert code == 200 and [r["status"] for r in doc["results"]] == ["rejected"] * 3 + ["stored"]
    for r, needle in zip(doc["results"], ("item: expected an item of the campaign",
                                          "expected keys item", "label: expected one of 0, 1")):
        assert needle in r["reason"] and "\n" not in r["reason"]
    code, doc = call(base, "/record", {"answers": [{**ok, "label": "0"}]}, tok)
    res = Campaign.open(db).record([(item, "w", "0")])
    assert code == 200 and doc["results"] == res["results"]
    assert doc["results"][0]["status"] == "rejected"
