"""`crowdopt campaign serve`: a real server on 127.0.0.1 (free port) drives a whole campaign
over HTTP; no token / a wrong token get 401, a token of the wrong role 403; bad bodies get 422
with the one-line message, oversized ones 413; webhooks reach a receiver on 127.0.0.1, signed
and retried; the status page loads in headless Chromium with the figures of `status --json`."""

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

pytest.importorskip("uvicorn")

from crowdopt.campaign import Campaign, TableOracle  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from campaign_db import STORES, STORES_SOAK, is_pg, sidecar  # noqa: E402
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


def start(db: Path, *extra: str):
    """A `campaign serve` process on a free port; returns (process, base URL)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "crowdopt", "campaign", "serve", str(db),
                             "--host", "127.0.0.1", "--port", str(port), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    tok = sidecar(db, ".token", Path.cwd()).read_text().strip()
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, proc.communicate()[1]
        try:
            if call(base, "/status", token=tok)[0] == 200:
                return proc, base
        except (urllib.error.URLError, ConnectionError):
            pass
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.1)


@pytest.fixture
def server(tmp_path, campaign_at, monkeypatch):
    """A campaign served by `campaign serve` (a file; with `campaign_at` parametrized, a
    PostgreSQL campaign too: its token files in the current folder, here tmp_path)."""
    from crowdopt.cli import main

    monkeypatch.chdir(tmp_path)
    table, _ = binary_table(4, K=25)
    db = campaign_at("h.db")
    items = tmp_path / "items.csv"
    items.write_text("item,max_labels\n" + "".join(f"{i},{c}\n" for i, c in caps_of(table).items()))
    assert main(["campaign", "init", str(db), "--policy", "optkg", "--items", str(items),
                 "--budget", "40", "--seed", "4", "--batching", "fill"]) == 0
    tok = sidecar(db, ".token", tmp_path).read_text().strip()  # written by init
    proc, base = start(db)
    yield base, tok, table, db
    proc.terminate()
    proc.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.parametrize("campaign_at", STORES, indirect=True)
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


def cli(*argv: str) -> tuple[int, str]:
    r = subprocess.run([sys.executable, "-m", "crowdopt", *argv], capture_output=True,
                       text=True, timeout=120)
    return r.returncode, r.stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize("campaign_at", STORES_SOAK, indirect=True)
def test_tokens_roles_worker_tokens_and_rotation(server, tmp_path):
    base, tok, _, db = server
    read_file = sidecar(db, ".read-token", tmp_path)
    read = read_file.read_text().strip()
    assert call(base, "/status", token=read)[0] == 200
    assert call(base, "/export", token=read)[0] == 200
    assert call(base, "/next", {"n": 1}, read)[0] == 403  # read-only
    assert call(base, "/record", {"answers": []}, read)[0] == 403
    code, wtok = cli("campaign", "token", str(db), "--role", "worker", "--worker", "w1")
    assert code == 0 and len(wtok) > 20
    time.sleep(1.2)  # a new token is known to the server within its 1 s refresh
    assert call(base, "/status", token=wtok)[0] == 403
    code, doc = call(base, "/next", {"n": 2, "worker": "w2"}, wtok)
    assert code == 422 and "this token's worker" in doc["error"]
    code, doc = call(base, "/next", {"n": 2}, wtok)
    assert code == 200 and doc["count"] == 2
    rows = [{"item": q["item"], "worker": w, "label": "1"}
            for q, w in zip(doc["queries"], ("w2", "w1"))]
    code, res = call(base, "/record", {"answers": rows}, wtok)
    assert [r["status"] for r in res["results"]] == ["rejected", "stored"]
    assert "answers only as that worker" in res["results"][0]["reason"]
    # rotation: the old read token stops working (within the server's 1 s refresh)
    code, out = cli("campaign", "token", str(db), "--role", "read", "--json")
    assert code == 0 and json.loads(out)["token_file"].endswith(".read-token")
    new = read_file.read_text().strip()
    assert new != read and read_file.stat().st_mode & 0o777 == 0o600
    time.sleep(1.2)
    assert call(base, "/status", token=read)[0] == 401
    assert call(base, "/status", token=new)[0] == 200
    # nothing of a token is in the store but its hash
    if not is_pg(db):
        assert all(t.encode() not in Path(db).read_bytes() for t in (tok, read, new, wtok))
    roles = Campaign.open(db, readonly=True).token_roles()
    assert all(t not in str(roles) for t in (tok, read, new, wtok)) and len(roles) == 3


@pytest.mark.slow
def test_status_and_export_are_paged(server):
    base, tok, _, _ = server
    code, st = call(base, "/status?offset=5&limit=3", token=tok)
    assert code == 200 and len(st["labels"]) == 3 and st["page"]["labels_total"] == 25
    code, full = call(base, "/status?limit=100", token=tok)
    assert st["labels"] == full["labels"][5:8]
    assert call(base, "/status?limit=-1", token=tok)[0] == 422
    code, ex = call(base, "/export?limit=1", token=tok)
    assert code == 200 and ex["limit"] == 1 and len(ex["answers"]) <= 1
    req = urllib.request.Request(base + "/status?limit=1",
                                 headers={"Authorization": f"Bearer {tok}"})
    with urllib.request.urlopen(req, timeout=30) as r:  # the server's own time per read
        assert r.headers["Server-Timing"].startswith("app;dur=")
        assert "cpu;dur=" in r.headers["Server-Timing"]


def test_serve_exit_codes_for_an_address_it_cannot_bind(tmp_path):
    from crowdopt.cli import main

    db = tmp_path / "b.db"
    Campaign.create(db, policy="optkg", items=["a"], budget=1).close()
    assert main(["campaign", "serve", str(db), "--host", "no-such-host.invalid"]) == 7
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["campaign", "serve", str(db), "--port", str(port)]) == 7


class _Receiver:
    """A webhook receiver on 127.0.0.1: refuses the first `fail` posts with 500."""

    def __init__(self, fail: int):
        import http.server
        import threading

        got, box = [], {"fail": fail}

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if box["fail"] > 0:
                    box["fail"] -= 1
                    self.send_response(500)
                else:
                    got.append((dict(self.headers), body))
                    self.send_response(200)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.got = got
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}/hook"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()


@pytest.mark.parametrize("campaign_at", STORES, indirect=True)
def test_webhooks_are_signed_retried_and_announce_thresholds_and_completion(campaign_at):
    import hashlib
    import hmac

    from crowdopt.campaign.webhooks import Delivery, register

    rx = _Receiver(fail=2)
    db = campaign_at("w.db")
    camp = Campaign.create(db, policy="optkg", items=["a", "b"], budget=4, seed=0)
    register(db, [rx.url])
    for _ in range(4):
        qs = camp.next(1)
        camp.record([(q.item, f"u{q.id}", 1) for q in qs])  # events written with the answers
    hooks = Delivery(db, b"key", backoff=0.05, poll=0.05)
    deadline = time.monotonic() + 30
    while hooks.pending() and time.monotonic() < deadline:
        time.sleep(0.05)
    hooks.close()
    events = [json.loads(b) for _, b in rx.got]
    kinds = [e["event"] for e in events]
    assert kinds.count("answers") == 4 and kinds[-1] == "done"
    assert [e["fraction"] for e in events if e["event"] == "budget"] == [0.25, 0.5, 0.75, 1.0]
    assert [e["time"] for e in events] == sorted(e["time"] for e in events)  # in order
    for headers, body in rx.got:  # every delivery signed with the key
        want = "sha256=" + hmac.new(b"key", body, hashlib.sha256).hexdigest()
        assert headers["X-Crowdopt-Signature"] == want
        assert headers["X-Crowdopt-Delivery"] == json.loads(body)["delivery"]
    assert len({e["delivery"] for e in events}) == len(events)
    assert hooks.failed == 0  # the two refusals were retried
    # the name, never the folder (or the database's address)
    assert all(e["campaign"] == Campaign.open(db, readonly=True).name for e in events)
    assert is_pg(db) or events[0]["campaign"] == "w.db"


def browser() -> str | None:
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def dump_dom(url: str) -> str:
    exe = browser()
    r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                        "--virtual-time-budget=3000", url], capture_output=True, text=True,
                       timeout=120)
    return r.stdout


@pytest.mark.slow
@pytest.mark.skipif(browser() is None, reason="no headless browser: install Debian's chromium "
                    "package (apt-get install chromium) to test the status page")
def test_status_page_in_headless_chromium(server):
    import re

    base, tok, table, db = server
    oracle = TableOracle(table, seed=4)
    for _ in range(3):
        code, doc = call(base, "/next", {"n": 4}, tok)
        rows = [dict(zip(("item", "worker", "label"), oracle.answer(_Q(q))))
                for q in doc["queries"]]
        call(base, "/record", {"answers": rows}, tok)
    read = Path(str(db) + ".read-token").read_text().strip()
    dom = dump_dom(f"{base}/?token={read}")
    code, st = cli("campaign", "status", str(db), "--json")
    st = json.loads(st)

    def shown(key: str) -> str:
        m = re.search(rf'id="{key}"[^>]*>([^<]*)<', dom)
        assert m, (key, dom[:500])
        return m.group(1)

    assert int(shown("spent")) == st["spent"] > 0
    assert int(shown("left")) == st["left"] and int(shown("budget")) == st["budget"]
    assert int(shown("reserved")) == st["reserved"]
    assert st["spent"] + st["reserved"] + st["left"] == st["budget"]
    # a read token sees the campaign's name, never the server's file path
    assert shown("name") == "h.db" and str(db) not in dom and str(db.parent) not in dom
    assert int(shown("labelled")) == st["labelled"]
    assert int(shown("leased")) == st["open"]["leased"]
    assert shown("estimate") == f"{st['mean_confidence']:.3f}"
    assert "<svg" in dom and 'id="confidence-plot"' in dom and 'id="workers"' in dom
    refused = dump_dom(f"{base}/")
    assert "unauthorized" in refused and 'id="spent"' not in refused
    assert "unauthorized" in dump_dom(f"{base}/?token={read}x")


@pytest.mark.slow
def test_serve_sends_signed_webhooks_and_warns_on_a_public_address_without_tls(tmp_path):
    import hashlib
    import hmac

    rx = _Receiver(fail=1)
    db = tmp_path / "p.db"
    camp = Campaign.create(db, policy="optkg", items=["a", "b", "c"], budget=3)
    Path(str(db) + ".token").write_text(camp.new_tokens["admin"])
    camp.close()
    proc, base = start(db, "--webhook", rx.url)  # on 127.0.0.1: no warning
    tok = Path(str(db) + ".token").read_text()
    for _ in range(3):
        q = call(base, "/next", {"n": 1}, tok)[1]["queries"]
        call(base, "/record", {"answers": [{"item": q[0]["item"], "worker": "u",
                                            "label": "1"}]}, tok)
    deadline = time.monotonic() + 30
    while not any(b"done" in body for _, body in rx.got) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    assert "warning" not in err
    key = Path(str(db) + ".webhook-secret").read_text().strip().encode()
    assert Path(str(db) + ".webhook-secret").stat().st_mode & 0o777 == 0o600
    kinds = [json.loads(b)["event"] for _, b in rx.got]
    assert kinds.count("answers") == 3 and "done" in kinds and "budget" in kinds
    for headers, body in rx.got:
        assert headers["X-Crowdopt-Signature"] == \
            "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
    public = subprocess.Popen([sys.executable, "-m", "crowdopt", "campaign", "serve", str(db),
                               "--host", "0.0.0.0", "--port", str(free_port())],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    line = ""
    while "serving" not in line and time.monotonic() < deadline:
        line = public.stdout.readline()
    public.terminate()
    _, err = public.communicate(timeout=30)
    assert "plain HTTP" in err and "--certfile" in err


@pytest.mark.slow
def test_serve_speaks_tls_with_certfile_and_keyfile(tmp_path):
    import shutil
    import ssl

    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed: cannot make a test certificate")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(tmp_path / "k.pem"),
                    "-out", str(tmp_path / "c.pem")], check=True, capture_output=True)
    db = tmp_path / "t.db"
    camp = Campaign.create(db, policy="optkg", items=["a"], budget=1)
    tok = camp.new_tokens["admin"]
    camp.close()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "crowdopt", "campaign", "serve", str(db),
                             "--port", str(port), "--certfile", str(tmp_path / "c.pem"),
                             "--keyfile", str(tmp_path / "k.pem")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    ctx = ssl.create_default_context(cafile=str(tmp_path / "c.pem"))
    ctx.check_hostname = False
    deadline = time.monotonic() + 60
    while True:
        try:
            req = urllib.request.Request(f"https://127.0.0.1:{port}/status",
                                         headers={"Authorization": f"Bearer {tok}"})
            with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
                assert r.status == 200 and json.loads(r.read())["budget"] == 1
                break
        except (urllib.error.URLError, ConnectionError):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
    proc.terminate()
    out, _ = proc.communicate(timeout=30)
    assert "https://" in out


@pytest.mark.slow
def test_a_held_write_lock_gives_503_with_retry_after_and_reads_go_on(server):
    import sqlite3
    import threading

    base, tok, _, db = server
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    other.execute("UPDATE campaign SET seq = seq")
    # writes queued behind the lock (small ones, which otherwise run on the event loop, and
    # a large one) all give up in bounded time; a read made meanwhile answers at once: the
    # event loop never waits for the lock
    got: list = []

    def write(body):
        t0 = time.monotonic()
        req = urllib.request.Request(base + "/next", data=json.dumps(body).encode(),
                                     method="POST", headers={"Authorization": f"Bearer {tok}"})
        try:
            urllib.request.urlopen(req, timeout=60)
            got.append((200, None, 0.0))
        except urllib.error.HTTPError as e:
            got.append((e.code, e.headers["Retry-After"], time.monotonic() - t0))

    ts = [threading.Thread(target=write, args=({"n": n},)) for n in (1, 2, 500, 1)]
    for t in ts:
        t.start()
        time.sleep(0.05)
    t1 = time.monotonic()
    assert call(base, "/status?limit=1", token=tok)[0] == 200  # readers never wait
    assert time.monotonic() - t1 < 1.0
    for t in ts:
        t.join(60)
    assert [g[0] for g in got] == [503] * 4 and all(g[1] for g in got), got
    assert max(g[2] for g in got) < 30  # bounded waits, not SQLite's 60 s
    other.execute("ROLLBACK")
    other.close()
    # then both routes write again, in order, and the server's state is the file's
    assert call(base, "/next", {"n": 1}, tok)[0] == 200
    assert call(base, "/next", {"n": 100}, tok)[0] == 200
    code, st = call(base, "/status", token=tok)
    assert code == 200 and st["open"] == Campaign.open(db, readonly=True).status()["open"]


@pytest.mark.slow
def test_unknown_paths_and_methods_get_one_json_line(server):
    base, tok, _, _ = server
    code, doc = call(base, "/nope", token=tok)
    assert code == 404 and doc["error"] == "not found: /nope"
    code, doc = call(base, "/status", {"x": 1}, tok)  # a POST to a GET endpoint
    assert code == 405 and "use GET" in doc["error"]
    code, doc = call(base, "/next", token=tok)  # a GET to a POST endpoint
    assert code == 405 and "use POST" in doc["error"]


@pytest.mark.slow
def test_auth_scheme_is_case_insensitive_and_a_read_token_sees_the_name(server):
    base, tok, _, db = server
    read = Path(str(db) + ".read-token").read_text().strip()
    for scheme in ("bearer", "BEARER", "Bearer"):
        req = urllib.request.Request(base + "/status?limit=1",
                                     headers={"Authorization": f"{scheme} {tok}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200
    assert call(base, "/status", token=tok)[1]["campaign"] == str(db)  # the admin: the path
    doc = call(base, "/status", token=read)[1]
    assert doc["campaign"] == doc["name"] == "h.db"


@pytest.mark.slow
@pytest.mark.skipif(browser() is None, reason="no headless browser: install Debian's chromium "
                    "package (apt-get install chromium) to test the status page")
def test_the_page_pages_its_worker_table_by_links(tmp_path):
    import re

    db = tmp_path / "many.db"
    camp = Campaign.create(db, policy="optkg", items=[f"i{k}" for k in range(130)],
                           budget=130, seed=0, batching="fill", name="Big job")
    read = camp.new_tokens["read"]
    Path(str(db) + ".token").write_text(camp.new_tokens["admin"])
    camp.record([(q.item, f"w{n:03d}", 1) for n, q in enumerate(camp.next(130))])
    camp.close()
    proc, base = start(db)
    try:
        dom = dump_dom(f"{base}/?token={read}")
        assert re.search(r'id="name"[^>]*>Big job<', dom) and str(tmp_path) not in dom
        rows = re.findall(r"<tr><td>(w\d+)</td>", dom)
        assert rows == [f"w{n:03d}" for n in range(50)]
        assert "workers 1-50 of 130" in dom and 'id="prev-workers"' not in dom
        nxt = re.search(r'id="next-workers" href="([^"]+)"', dom).group(1).replace("&amp;", "&")
        assert nxt == f"/?offset=50&token={read}"
        dom2 = dump_dom(base + nxt)  # the link works as is: the token travels with it
        assert re.findall(r"<tr><td>(w\d+)</td>", dom2)[:2] == ["w050", "w051"]
        assert 'id="prev-workers"' in dom2 and "workers 51-100 of 130" in dom2
        last = dump_dom(f"{base}/?offset=100&token={read}")
        assert "workers 101-130 of 130" in last and 'id="next-workers"' not in last
    finally:
        proc.terminate()
        proc.wait(timeout=30)
