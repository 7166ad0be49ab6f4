"""The operator's controls of a campaign: webhook endpoints registered and removed explicitly
(a plain `serve` leaves the others' alone), caps on /next per role (a worker token asking for
more gets the cap and is told), `campaign release` and POST /release, `init` refusing a budget
below the policy's first decision, security headers on every response, a status page that fits
a 390 px phone with cards that say what they count, and no fsync on the server's event loop.
Most run the ASGI app in this process; the phone layout runs in headless Chromium."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import html
import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

from crowdopt.campaign import Campaign, core, http  # noqa: E402
from crowdopt.campaign.webhooks import register, unregister  # noqa: E402
from crowdopt.cli import main  # noqa: E402
from crowdopt.errors import InputError  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from campaign_db import STORES  # noqa: E402


def asgi(app, method: str, path: str, body=None, token: str | None = None,
         raw: bytes | None = None, length: int | None = None):
    """One request to the ASGI app in this process: (status, headers, body bytes)."""
    async def run():
        data = raw if raw is not None else b"" if body is None else json.dumps(body).encode()
        where, _, qs = path.partition("?")
        hs = [(b"content-length", str(len(data) if length is None else length).encode())]
        if token is not None:
            hs.append((b"authorization", f"Bearer {token}".encode()))
        scope = {"type": "http", "method": method, "path": where,
                 "query_string": qs.encode(), "headers": hs}
        sent, msgs = [], [{"type": "http.request", "body": data, "more_body": False}]

        async def receive():
            return msgs.pop(0) if msgs else {"type": "http.disconnect"}

        async def send(m):
            sent.append(m)
        await app(scope, receive, send)
        head = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
        return sent[0]["status"], head, b"".join(m.get("body", b"") for m in sent[1:])
    return asyncio.run(run())


def close(app) -> None:
    for pool in app.state.pools:
        pool.shutdown(wait=True)
    if app.state.checkpoints is not None:
        app.state.checkpoints.close()
    if app.state.hooks is not None:
        app.state.hooks.close()
    for c in app.state.campaigns:
        c.close()


@pytest.fixture
def served(campaign_at):
    """An Opt-KG campaign of budget 50 (its tokens, a worker token of w1 and w2) and its app."""
    db = campaign_at("ops.db")
    camp = Campaign.create(db, policy="optkg", items=[f"i{k}" for k in range(60)], budget=50,
                           seed=0, batching="fill")
    toks = {"admin": camp.new_tokens["admin"], "read": camp.new_tokens["read"],
            "w1": camp.new_token("worker", worker="w1"),
            "w2": camp.new_token("worker", worker="w2")}
    camp.close()
    app = http.create_app(str(db))
    yield db, app, toks
    close(app)


# ----------------------------------------------------------------------------- caps, release
@pytest.mark.parametrize("campaign_at", STORES, indirect=True)
def test_a_worker_token_gets_the_caps_and_is_told_and_release_frees_its_hand_outs(served):
    db, app, toks = served
    t0 = time.time()
    code, _, body = asgi(app, "POST", "/next", {"n": 1000, "lease": 1e9, "late_window": 1e9},
                         toks["w1"])
    doc = json.loads(body)
    assert code == 200 and doc["count"] == 10  # not the whole budget of 50
    assert doc["capped"] == {"n": {"asked": 1000, "cap": 10},
                             "lease": {"asked": 1e9, "cap": 3600.0},
                             "late_window": {"asked": 1e9, "cap": 3600.0}}
    assert all(q["lease_until"] <= t0 + 3600 + 60 for q in doc["queries"])
    st = json.loads(asgi(app, "GET", "/status?limit=0", token=toks["admin"])[2])
    assert (st["reserved"], st["left"]) == (10, 40)
    # within the caps: nothing capped, nothing said
    ok = json.loads(asgi(app, "POST", "/next", {"n": 2, "lease": 60}, toks["w2"])[2])
    assert ok["count"] == 2 and "capped" not in ok
    # the admin's caps are its own (default: up to 1000 queries, 1e9 s)
    big = json.loads(asgi(app, "POST", "/next", {"n": 30, "lease": 1e5}, toks["admin"])[2])
    assert big["count"] == 30 and "capped" not in big
    # release: w1's hand-outs end, its queries go back in line, its answers are not paid
    assert asgi(app, "POST", "/release", {"worker": "w1"}, toks["w1"])[0] == 403  # admin only
    code, _, body = asgi(app, "POST", "/release", {"worker": "w1"}, toks["admin"])
    assert code == 200 and json.loads(body) == {"worker": "w1", "handouts": 10, "queries": 10}
    st = json.loads(asgi(app, "GET", "/status?limit=0", token=toks["admin"])[2])
    # the queries stay open (one label reserved each, for whoever gets them next); nothing
    # more is held for w1: its hand-outs can no longer bring a paid answer
    assert (st["reserved"], st["left"], st["late_windows_open"]) == (42, 8, 0)
    assert st["open"]["expired"] == 10
    again = json.loads(asgi(app, "POST", "/next", {"n": 10}, toks["w2"])[2])
    assert sorted(q["query"] for q in again["queries"]) == sorted(q["query"]
                                                                   for q in doc["queries"])
    late = [{"item": q["item"], "worker": "w1", "label": "1"} for q in doc["queries"]]
    res = json.loads(asgi(app, "POST", "/record", {"answers": late}, toks["w1"])[2])
    assert res["rejected"] == 10 and res["recorded"] == 0
    assert all("handed out to w2 only" in r["reason"] for r in res["results"])


def test_caps_are_set_by_the_admin_checked_and_shared_through_the_store(tmp_path, capsys):
    items = tmp_path / "items.csv"
    items.write_text("item\n" + "".join(f"i{k}\n" for k in range(20)))
    db = tmp_path / "c.db"
    assert main(["campaign", "init", str(db), "--policy", "optkg", "--items", str(items),
                 "--budget", "20", "--cap", "worker.n=3", "--cap", "worker.lease=30",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["caps"]["worker"] == {"n": 3, "lease": 30.0, "late_window": 3600.0}
    for bad, needle in (("worker.n=0", "cap worker.n: expected an integer in [1, 1000]"),
                        ("reader.n=3", "cap role: expected one of admin, worker"),
                        ("worker.speed=3", "expected a field among n, lease, late_window"),
                        ("worker.lease=-1", "seconds in (0, 1e9]"), ("n3", "ROLE.FIELD=VALUE")):
        assert main(["campaign", "init", str(tmp_path / "x.db"), "--policy", "optkg",
                     "--items", str(items), "--budget", "5", "--cap", bad]) == 2
        err = capsys.readouterr().err
        assert needle in err and len(err.strip().splitlines()) == 1, err
    camp = Campaign.open(db)
    tok = camp.new_token("worker", worker="w")
    app = http.create_app(str(db), caps={"worker": {"late_window": 5}})  # as serve --cap
    try:
        doc = json.loads(asgi(app, "POST", "/next", {"n": 9}, tok)[2])
        assert doc["count"] == 3 and doc["capped"] == {
            "n": {"asked": 9, "cap": 3}, "lease": {"asked": 600.0, "cap": 30.0},
            "late_window": {"asked": 30.0, "cap": 5.0}}
    finally:
        close(app)
    assert Campaign.open(db, readonly=True).next_caps()["worker"]["late_window"] == 5.0


def test_release_from_the_command_line(tmp_path, capsys):
    db = tmp_path / "r.db"
    camp = Campaign.create(db, policy="optkg", items=["a", "b", "c"], budget=3)
    camp.next(2, worker="ann", lease=1e6)
    assert camp.status()["left"] == 1
    assert main(["campaign", "release", str(db), "--worker", "ann", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"worker": "ann", "handouts": 2, "queries": 2}
    st = camp.status()
    assert (st["reserved"], st["left"], st["open"]["expired"]) == (2, 1, 2)
    assert len(camp.next(3, worker="bob")) == 3  # the two released ones first, then one new
    assert main(["campaign", "release", str(db), "--worker", "ann"]) == 0
    assert "released 0 hand-outs" in capsys.readouterr().out


# ----------------------------------------------------------------------------- init's budget
def test_init_refuses_a_budget_below_the_first_decision_naming_the_minimum(tmp_path):
    kw = dict(policy="lsol", items=["t1", "t2"], workers=["u", "v", "x"], seed=0)
    with pytest.raises(InputError, match=r"--budget: expected an integer >= 3 .*found 2"):
        Campaign.create(tmp_path / "l.db", budget=2, **kw)
    assert not (tmp_path / "l.db").exists()
    camp = Campaign.create(tmp_path / "l.db", budget=3, **kw)
    assert len(camp.next(5)) == 3 and not camp.status()["done"]


@pytest.mark.slow
def test_init_on_rte_lsol_names_164(tmp_path, capsys, data_dir):
    argv = ["campaign", "init", str(tmp_path / "r.db"), "--policy", "lsol", "--items",
            "dataset:rte", "--workers", "dataset:rte"]
    assert main([*argv, "--budget", "163"]) == 2
    err = capsys.readouterr().err
    assert "--budget: expected an integer >= 164" in err and "found 163" in err
    assert main([*argv, "--budget", "164"]) == 0
    st = Campaign.open(tmp_path / "r.db").status()
    assert not st["done"] and st["left"] == 164


# ----------------------------------------------------------------------------- webhooks
@pytest.mark.parametrize("campaign_at", STORES, indirect=True)
def test_a_server_without_webhook_changes_no_endpoint(campaign_at):
    db = campaign_at("w.db")
    camp = Campaign.create(db, policy="optkg", items=["a", "b", "c", "d"], budget=4, seed=0)
    register(db, ["http://127.0.0.1:9/a"])  # server A's (`serve --webhook`)
    close(http.create_app(str(db)))  # B: a plain serve (a read-only dashboard, say)
    camp.record([(q.item, "u", 1) for q in camp.next(1)])  # recorded after B started
    listing = Campaign.open(db, readonly=True)
    from crowdopt.campaign.events import listing as events

    doc = events(listing.store)
    assert [(e["url"], e["active"]) for e in doc["endpoints"]] == [("http://127.0.0.1:9/a",
                                                                    True)]
    assert doc["totals"]["pending"] == 2  # the answers event and the 25 % threshold
    register(db, ["http://127.0.0.1:9/b"])
    assert unregister(db, ["http://127.0.0.1:9/a", "http://127.0.0.1:9/never"]) == \
        ["http://127.0.0.1:9/a"]
    camp.record([(q.item, "u", 1) for q in camp.next(1)])
    doc = events(listing.store)
    by = {e["url"]: e for e in doc["endpoints"]}
    assert by["http://127.0.0.1:9/a"]["active"] is False and by["http://127.0.0.1:9/a"][
        "pending"] == 2  # removed: no new event, the old ones stay listed
    assert by["http://127.0.0.1:9/b"]["pending"] == 2
    with pytest.raises(InputError, match="--webhook"):
        register(db, ["ftp://x"])


@pytest.mark.slow
def test_a_plain_serve_leaves_the_webhooks_of_another_server_alone(tmp_path):
    from test_campaign_http import _Receiver, call, start

    rx = _Receiver(fail=0)
    db = tmp_path / "two.db"
    camp = Campaign.create(db, policy="optkg", items=[f"i{k}" for k in range(8)], budget=8)
    Path(str(db) + ".token").write_text(camp.new_tokens["admin"])
    camp.close()
    a, base_a = start(db, "--webhook", rx.url)
    b, base_b = start(db)  # no --webhook: before, every endpoint went inactive here
    tok = Path(str(db) + ".token").read_text()
    try:
        for base in (base_a, base_b, base_b):
            q = call(base, "/next", {"n": 1}, tok)[1]["queries"][0]
            call(base, "/record", {"answers": [{"item": q["item"], "worker": "u",
                                                "label": "1"}]}, tok)
        b.send_signal(signal.SIGKILL)  # B goes; an answer through the CLI afterwards
        b.wait()
        qs = Campaign.open(db).next(1)
        (tmp_path / "a.csv").write_text(f"item,worker,label\n{qs[0].item},v,0\n")
        assert main(["campaign", "record", str(db), str(tmp_path / "a.csv")]) == 0
        deadline = time.monotonic() + 30
        while sum(b'"answers"' in body for _, body in rx.got) < 4 and \
                time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        for p in (a, b):
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=30)
    kinds = [json.loads(body)["event"] for _, body in rx.got]
    assert kinds.count("answers") == 4 and kinds.count("budget") == 2  # 25 and 50 %


# ----------------------------------------------------------------------------- headers
def test_every_response_carries_the_security_headers(tmp_path):
    import sqlite3

    db = tmp_path / "h.db"
    camp = Campaign.create(db, policy="optkg", items=["a", "b"], budget=2)
    admin, read = camp.new_tokens["admin"], camp.new_tokens["read"]
    camp.close()
    app = http.create_app(str(db))
    try:
        cases = [("GET", "/status", None, admin, None, 200),
                 ("GET", f"/?token={read}", None, None, None, 200),
                 ("GET", "/export", None, None, None, 401),
                 ("POST", "/next", {"n": 1}, read, None, 403),
                 ("GET", "/nope", None, admin, None, 404),
                 ("GET", "/next", None, admin, None, 405),
                 ("POST", "/record", None, admin, 9 * 2**20, 413),
                 ("POST", "/next", {"n": 0}, admin, None, 422)]
        seen = []
        for method, path, body, tok, length, want in cases:
            code, head, out = asgi(app, method, path, body, tok, length=length)
            assert code == want, (path, code, out)
            seen.append(head)
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock: 503
        code, head, _ = asgi(app, "POST", "/next", {"n": 1}, admin)
        other.execute("ROLLBACK")
        other.close()
        assert code == 503
        seen.append(head)
        for head in seen:
            csp = head["content-security-policy"]
            assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
            assert "script-src" not in csp  # no script may run (default-src 'none')
            assert head["x-content-type-options"] == "nosniff"
            assert head["referrer-policy"] == "no-referrer"
            assert head["cache-control"] == "no-store"
        # the page's one style sheet is the one the policy allows (by its hash)
        page = asgi(app, "GET", f"/?token={read}")[2].decode()
        style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
        digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
        assert f"style-src 'sha256-{digest}'" in seen[1]["content-security-policy"]
        assert "<script" not in page and " style=" not in page
    finally:
        close(app)


# ----------------------------------------------------------------------------- the page
def browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


MEASURE = """<!doctype html><html><body style="margin:0">
<iframe id="f" style="width:390px;height:844px;border:0" src="page.html"></iframe><script>
window.onload = () => {
  const d = document.getElementById('f').contentDocument, w = d.defaultView;
  const box = e => e.getBoundingClientRect();
  const out = {width: w.innerWidth, scroll: d.documentElement.scrollWidth,
               cards: [...d.querySelectorAll('.card')].map(c => box(c).right),
               plots: [...d.querySelectorAll('.plot')].map(p => {
                 const s = box(p.querySelector('svg')), c = box(p);
                 return [s.left, s.right, c.left, c.right, s.height]; }),
               grid: w.getComputedStyle(d.querySelector('.cards')).display};
  document.body.setAttribute('data-m', JSON.stringify(out));
};
</script></body></html>"""


@pytest.mark.slow
@pytest.mark.skipif(browser() is None, reason="no headless browser: install Debian's chromium "
                    "package (apt-get install chromium) to test the status page")
def test_the_page_fits_a_390_px_phone_and_its_cards_say_what_they_count(tmp_path, monkeypatch):
    from crowdopt.campaign.page import render_page

    clock = [1000.0]
    monkeypatch.setattr(core, "_now", lambda: clock[0])
    camp = Campaign.create(tmp_path / "p.db", policy="optkg",
                           items=[f"a-very-long-item-name-{k:03d}" for k in range(120)],
                           budget=100, seed=0, batching="fill", name="A campaign with a name "
                           "much longer than a phone is wide, to see it wrap")
    qs = camp.next(40, lease=10)
    camp.record([(q.item, f"worker-with-a-long-id-{k}", k % 2)
                 for k, q in enumerate(qs[:30])])
    clock[0] += 15  # 10 leases ran out: their queries wait to be handed out again
    camp.next(3, lease=100)
    clock[0] += 50
    st = camp.status(limit=50)
    assert st["open"]["expired"] == 7 and st["open"]["leased"] == 3
    page = render_page(st, camp.answer_times(), now=clock[0])
    # the cards say what they count
    cards = dict(re.findall(r'<div class="v" id="(\w+)">[^<]*</div><div class="k">([^<]*)<',
                            page))
    assert html.unescape(cards["expired"]) == ("queries whose lease ran out, waiting to be "
                                               "handed out again")
    assert "queries out on a running lease" in cards["leased"]
    # the rate is over a stated window: 30 answers in the 65 s since the first one
    assert st["rate_window_seconds"] == 65.0 and st["answers_in_window"] == 30
    assert st["answers_per_minute"] == pytest.approx(60 * 30 / 65)
    assert html.unescape(cards["rate"]) == ("answers per minute over the last 1m 05s "
                                            "(30 answers; the last 1m 05s ago)")
    (tmp_path / "page.html").write_text(page)
    (tmp_path / "measure.html").write_text(MEASURE)
    r = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu",
                        "--allow-file-access-from-files", "--virtual-time-budget=5000",
                        "--dump-dom", (tmp_path / "measure.html").as_uri()],
                       capture_output=True, text=True, timeout=120)
    m = json.loads(html.unescape(re.search(r'data-m="([^"]*)"', r.stdout).group(1)))
    assert m["width"] == 390 and m["grid"] == "grid"
    assert m["scroll"] <= 390, m  # nothing wider than the screen
    assert max(m["cards"]) <= 390
    assert len(m["plots"]) == 2
    for s_left, s_right, c_left, c_right, height in m["plots"]:
        assert c_left - 0.5 <= s_left and s_right <= c_right + 0.5 and c_right <= 390
        assert height > 50  # drawn, scaled down with its width


# ----------------------------------------------------------------------------- the event loop
def test_the_server_writer_never_checkpoints_its_checkpoints_have_their_own_thread(tmp_path):
    db = tmp_path / "c.db"
    camp = Campaign.create(db, policy="optkg", items=[f"i{k}" for k in range(50)], budget=50)
    tok = camp.new_tokens["admin"]
    camp.close()
    app = http.create_app(str(db))
    try:
        writer = app.state.campaigns[0]
        assert writer.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        assert app.state.checkpoints.thread.name == "crowdopt-checkpoint"
        for _ in range(5):
            qs = json.loads(asgi(app, "POST", "/next", {"n": 2}, tok)[2])["queries"]
            asgi(app, "POST", "/record", {"answers": [
                {"item": q["item"], "worker": f"w{q['query']}", "label": "1"} for q in qs]},
                tok)
        deadline = time.monotonic() + 30
        while app.state.checkpoints.count == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert app.state.checkpoints.count > 0
    finally:
        close(app)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("strace") is None, reason="no strace(1) to watch the "
                    "server's fsync calls (apt-get install strace)")
def test_no_fsync_runs_on_the_event_loop_thread(tmp_path):
    """strace the server while small writes (the ones run on the event loop) fill several
    WAL checkpoints' worth of pages: every fsync/fdatasync is made by another thread."""
    from test_campaign_http import call, start

    db = tmp_path / "s.db"
    camp = Campaign.create(db, policy="optkg", items=[f"i{k}" for k in range(3000)],
                           budget=3000, batching="fill")
    Path(str(db) + ".token").write_text(camp.new_tokens["admin"])
    camp.close()
    proc, base = start(db)
    tok = Path(str(db) + ".token").read_text()
    trace = tmp_path / "strace.txt"
    st = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=fsync,fdatasync", "-o",
                           str(trace), "-p", str(proc.pid)], stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        if st.poll() is not None:
            pytest.skip(f"strace cannot attach here: {st.stderr.read().strip()}")
        for k in range(250):
            qs = call(base, "/next", {"n": 8}, tok)[1]["queries"]
            call(base, "/record", {"answers": [{"item": q["item"], "worker": f"w{k}",
                                                "label": "1"} for q in qs]}, tok)
        time.sleep(2.5)  # a checkpoint round of the checkpoint thread
    finally:
        st.send_signal(signal.SIGINT)  # detached before the server stops (its last
        st.wait(timeout=30)  # checkpoint and closing the file are no request's)
        proc.terminate()
        proc.wait(timeout=30)
    lines = [x for x in trace.read_text().splitlines() if "sync(" in x]
    tids = [int(x.split()[0]) for x in lines]
    assert tids, "no fsync seen at all: the test would prove nothing"
    assert proc.pid not in tids, f"fsync on the event loop thread: {lines[:3]}"
