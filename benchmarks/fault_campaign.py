"""Campaign faults, measured: the invariants of a paid job under kill -9, ghosts and outages.

Usage: python benchmarks/fault_campaign.py [--quick] [--only fault outage] [--runs R]
       [--seconds S] [--outage S] [--budget B] [--store sqlite|postgresql|URL] [--servers N]

--store: where the campaigns live: a SQLite file (default), `postgresql` (a scratch PostgreSQL
server started for the run: tools/pg_scratch.py) or a `postgresql://host/db` URL (each run
makes a campaign of its own in that database); --servers N: `campaign serve` processes on the
one campaign (a PostgreSQL one: `--store postgresql --servers 3`; a file: on one disk).

1. fault: N `campaign serve` processes on one campaign, 4 honest HTTP clients (client k talks
   to server k mod N; each asks `next` for its own worker, leases of 0.3 s: some answers come
   after the lease (late, paid when the late window is still open), some after the late window
   (refused)), a CLI client (`campaign next` / `campaign record`, every other `record` killed
   with SIGKILL at a random instant and run again), ghost workers (`ghost0..9` through the
   admin token, and a worker token of a worker never handed anything) answering random items,
   and a server killed with SIGKILL and restarted (--kills times, the servers in turn). A
   monitor reads `status` all along. Invariants printed per run:
   - 0 answers stored from a ghost (no hand-out was theirs);
   - every stored or late answer names its own hand-out, handed to its worker, one answer per
     hand-out;
   - spend <= budget in every status read, every record reply and the file at the end;
   - stored = confirmed + late: the file's answers are exactly those a client was told were
     stored or late (or, after a lost reply, duplicate), nothing refused is in it, none twice;
   - the file rebuilt from its log (every decision checked) reports what the summary reports.
2. outage: `campaign serve --webhook URL` while a client records answers; the receiver is down
   for --outage seconds (connection refused) and the server is killed with SIGKILL and
   restarted in the middle of it. Printed: events in the file, received (distinct delivery
   ids), lost (in the file, never received), repeats received (at-least-once), per-endpoint
   order kept, seconds from the receiver's return to the last delivery.

Both print a table and write benchmarks/results/campaign_fault.json / campaign_outage.json.
The test suite runs short versions of both (tests/test_campaign_faults.py).
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from crowdopt.campaign import Campaign  # noqa: E402
from crowdopt.campaign.events import listing  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get(
    "PYTHONPATH", "")}
CMD = [sys.executable, "-m", "crowdopt"]

CLIENT = r"""
import http.client, json, os, random, sys, time
port_file, token, me, stop, lease, budget = sys.argv[1:7]
lease, budget, me = float(lease), int(budget), int(me)
rng = random.Random(me)
worker = f"c{me}"
confirmed, over = {}, 0


def call(path, body, tok=token):
    # until the server answers (it is killed and restarted under us)
    while True:
        try:
            port = int(open(port_file).read())
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("POST", path, json.dumps(body), {"Authorization": f"Bearer {tok}"})
            r = c.getresponse()
            doc = json.loads(r.read())
            c.close()
            if r.status == 503:
                time.sleep(0.05)
                continue
            return r.status, doc
        except (OSError, ValueError, http.client.HTTPException):
            time.sleep(0.05)


while not os.path.exists(stop):
    code, doc = call("/next", {"n": rng.randint(1, 6), "worker": worker, "lease": lease})
    if not doc.get("queries"):
        time.sleep(0.02)
        continue
    u = rng.random()  # a slow crowd now and then: past the lease, sometimes past the window
    time.sleep(1.5 * lease if u < 0.15 else 2.4 * lease if u < 0.25 else rng.random() * 0.02)
    rows = [{"item": q["item"], "worker": worker, "label": str(rng.randint(0, 1))}
            for q in doc["queries"]]
    code, res = call("/record", {"answers": rows})
    assert code == 200, (code, res)
    over += res["spent"] > budget
    for row, r in zip(rows, res["results"]):
        confirmed[(row["item"], row["worker"])] = r["status"]
print(json.dumps({"confirmed": [[k[0], k[1], v] for k, v in confirmed.items()],
                  "over_budget": over}))
"""

GHOST = r"""
import json, os, random, sys, time
port_file, admin, wtok, stop, items, bench = sys.argv[1:7]
sys.path.insert(0, bench)
from fault_campaign import _post
rng = random.Random(99)
got = {"stored": 0, "late": 0, "rejected": 0, "duplicate": 0, "http_errors": 0}


def call(body, tok):
    try:
        port = int(open(port_file).read())
    except (OSError, ValueError):
        return None, None
    return _post(port, tok, "/record", body)


while not os.path.exists(stop):
    picks = [f"i{rng.randrange(int(items))}" for _ in range(10)]
    for body, tok in (({"answers": [{"item": i, "worker": f"ghost{k}", "label": "1"}
                                    for k, i in enumerate(picks)]}, admin),
                      ({"answers": [{"item": i, "worker": "tokenghost", "label": "0"}
                                    for i in picks[:3]]}, wtok)):
        code, doc = call(body, tok)
        if code != 200:
            got["http_errors"] += 1
            continue
        for r in doc["results"]:
            got[r["status"]] += 1
    time.sleep(0.05)
print(json.dumps(got))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`crowdopt campaign serve DB` on a port written to `port_file`, killable and
    restartable."""

    def __init__(self, db: Path, port_file: Path, *extra: str, port: int | None = None):
        self.db, self.port_file, self.extra = db, port_file, extra
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen([*CMD, "campaign", "serve", str(self.db), "--port",
                                      str(self.port), *self.extra], env=ENV,
                                     cwd=self.port_file.parent, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.port_file.write_text(str(self.port))

    def up(self, timeout: float = 120.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the server did not start")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


def _audit(db, budget: int) -> dict:
    """What the store says: answers, their hand-outs, ghosts, spend; and the rebuild check."""
    with Campaign.open(db, readonly=True) as reader:
        # (seq, item, worker, label, late, hand-out, its worker, handed_at, late_until, at)
        rows = reader.store.paid_answers()
    no_handout = sum(r[5] is None for r in rows)
    wrong_worker = sum(r[6] is not None and r[6] != r[2] for r in rows)
    outside = sum(r[5] is not None and not r[7] <= r[9] <= r[8] for r in rows)
    hids = [r[5] for r in rows if r[5] is not None]
    camp = Campaign.open(db)  # the writer's open replays the log: every decision checked
    stored = camp.answers()
    keys = [(i, w) for i, w, _ in stored]
    summary = Campaign.open(db, readonly=True).status()
    camp.use_summary = False
    replayed = camp.status()
    camp.close()
    same = all(summary[k] == replayed[k] for k in ("labels", "spent", "reserved", "late",
                                                   "issued", "workers"))
    return {"answers": len(rows), "late": sum(r[4] for r in rows),
            "ghost answers": sum(w.startswith(("ghost", "tokenghost")) for _, w, _ in stored),
            "without hand-out": no_handout, "other worker's hand-out": wrong_worker,
            "outside its window": outside,
            "hand-outs paid twice": len(hids) - len(set(hids)),
            "duplicate keys": len(keys) - len(set(keys)), "keys": set(keys),
            "spent": summary["spent"], "over budget": summary["spent"] > budget,
            "summary == replay": same}


def campaign_target(tmp: Path, store: str | None, name: str):
    """Where a run's campaign lives: a file in `tmp`, or a campaign of its own in the
    PostgreSQL database of URL `store`."""
    if not store or store == "sqlite":
        return tmp / f"{name}.db"
    sep = "&" if "?" in store else "?"
    return f"{store}{sep}campaign={name.replace('-', '_')}_{os.getpid()}_{random.randrange(10**6)}"


def fault_run(tmp: Path, *, seconds: float = 15.0, seed: int = 0, budget: int = 1500,
              n_items: int = 3000, clients: int = 4, lease: float = 0.3,
              server_kills: int = 2, store: str | None = None, servers: int = 1) -> dict:
    """One fault run (see the module's doc) with `servers` servers on one campaign (in
    `store`: None, a file; a PostgreSQL URL); returns its invariants and counts."""
    rng = random.Random(seed)
    db = campaign_target(tmp, store, f"fault-{seed}")
    camp = Campaign.create(db, policy="optkg", items=[f"i{k}" for k in range(n_items)],
                           budget=budget, seed=seed, batching="fill")
    admin = camp.new_tokens["admin"]
    ghost_token = camp.new_token("worker", worker="tokenghost")
    camp.close()
    port_files = [tmp / f"port-{seed}-{k}" for k in range(servers)]
    srvs = [Server(db, port_files[k]) for k in range(servers)]
    stop = tmp / f"stop-{seed}"
    script, ghost = tmp / "client.py", tmp / "ghost.py"
    script.write_text(CLIENT)
    ghost.write_text(GHOST)
    procs = [subprocess.Popen([sys.executable, str(script), str(port_files[me % servers]), admin,
                               str(me), str(stop), str(lease), str(budget)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for me in range(clients)]
    ghosts = subprocess.Popen([sys.executable, str(ghost), str(port_files[-1]), admin,
                               ghost_token, str(stop), str(n_items),
                               str(Path(__file__).parent)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=ENV)
    box = {"done": False, "kills": 0, "reads": 0, "over": 0}

    def killer() -> None:
        for k in range(server_kills):
            srv = srvs[k % servers]
            for s_ in srvs:
                s_.up()
            time.sleep(seconds / (server_kills + 1) * (0.6 + 0.8 * rng.random()))
            srv.kill()
            box["kills"] += 1
            srv.start()
        for s_ in srvs:
            s_.up()
        time.sleep(seconds / (server_kills + 1))
        box["done"] = True

    def monitor() -> None:
        while not box["done"]:
            try:
                with Campaign.open(db, readonly=True) as reader:
                    st = reader.status(limit=0)
                box["reads"] += 1
                box["over"] += st["spent"] > budget
            except Exception:  # a file being written: read again  # noqa: BLE001
                pass
            time.sleep(0.2)

    threads = [threading.Thread(target=killer), threading.Thread(target=monitor)]
    for t in threads:
        t.start()
    cli_confirmed: dict = {}
    cli_kills = batch = attempts = 0
    while not box["done"]:
        nxt = subprocess.run([*CMD, "campaign", "next", str(db), "--n", "3", "--worker", "cli",
                              "--lease", str(lease), "--json"], capture_output=True,
                             text=True, env=ENV)
        if nxt.returncode != 0:
            continue  # a busy file (exit 6): nothing was handed out
        qs = json.loads(nxt.stdout)["queries"]
        if not qs:
            time.sleep(0.1)
            continue
        batch += 1
        ans = tmp / f"cli-{seed}-{batch}.csv"
        ans.write_text("item,worker,label\n" + "".join(f"{q['item']},cli,1\n" for q in qs))
        while True:
            p = subprocess.Popen([*CMD, "campaign", "record", str(db), str(ans), "--json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=ENV)
            attempts += 1
            if attempts % 2:  # every other run of `record` dies at a random instant (the
                # first within 0.2 s, before any record can finish: a short run on a fast
                # machine still kills one)
                time.sleep(rng.random() * (1.5 if attempts > 1 else 0.2))
                p.send_signal(signal.SIGKILL)
            out, _ = p.communicate()
            cli_kills += p.returncode == -9
            if p.returncode in (0, 2):  # 2: some rows refused (their window closed)
                res = json.loads(out)
                box["over"] += res["spent"] > budget
                for r in res["results"]:
                    cli_confirmed[(r["item"], r["worker"])] = r["status"]
                break
            if p.returncode not in (-9, 6):
                raise RuntimeError(f"campaign record: exit {p.returncode}")
    for t in threads:
        t.join()
    stop.touch()
    confirmed = dict(cli_confirmed)
    over = box["over"]
    for c in procs:
        out, err = c.communicate(timeout=120)
        if c.returncode != 0:
            raise RuntimeError(f"client failed: {err[-2000:]}")
        doc = json.loads(out)
        over += doc["over_budget"]
        confirmed.update({(i, w): s for i, w, s in doc["confirmed"]})
    g_out, g_err = ghosts.communicate(timeout=120)
    if ghosts.returncode != 0:
        raise RuntimeError(f"ghosts failed: {g_err[-2000:]}")
    ghost_res = json.loads(g_out)
    for srv in srvs:
        srv.kill()
    audit = _audit(db, budget)
    statuses = list(confirmed.values())
    paid = {k for k, s in confirmed.items() if s in ("stored", "late", "duplicate")}
    refused = {k for k, s in confirmed.items() if s == "rejected"}
    keys = audit.pop("keys")
    return {
        "run": seed, "store": "sqlite" if isinstance(db, Path) else "postgresql",
        "servers": servers, "seconds": seconds, "budget": budget,
        "server kills": box["kills"],
        "cli kills": cli_kills, "status reads": box["reads"],
        "answers stored": audit["answers"], "confirmed stored": statuses.count("stored"),
        "confirmed late": statuses.count("late"),
        "re-sent (duplicate)": statuses.count("duplicate"),
        "honest refused": len(refused), "ghost rows sent": sum(ghost_res.values()),
        "ghost paid (reply)": ghost_res["stored"] + ghost_res["late"],
        "ghost answers stored": audit["ghost answers"],
        "spend over budget (reads)": over, "final spent": audit["spent"],
        "stored == confirmed": keys == paid and not (keys & refused),
        "without hand-out": audit["without hand-out"],
        "other worker's hand-out": audit["other worker's hand-out"],
        "outside its window": audit["outside its window"],
        "hand-outs paid twice": audit["hand-outs paid twice"],
        "duplicate keys": audit["duplicate keys"],
        "summary == replay": audit["summary == replay"],
    }


def fault_ok(r: dict) -> bool:
    """Every invariant of a fault run holds."""
    return (r["ghost answers stored"] == 0 and r["ghost paid (reply)"] == 0
            and r["spend over budget (reads)"] == 0 and r["final spent"] <= r["budget"]
            and r["stored == confirmed"] and r["without hand-out"] == 0
            and r["other worker's hand-out"] == 0 and r["hand-outs paid twice"] == 0
            and r.get("outside its window", 0) == 0
            and r["duplicate keys"] == 0 and r["summary == replay"])


# ----------------------------------------------------------------------------- outage
class Receiver:
    """A webhook receiver on 127.0.0.1:`port` that can go down (connection refused) and come
    back on the same port; it keeps every delivery id it got, in order."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.got: list[tuple[str, int]] = []  # (delivery id, event time order key)
        self.bodies: list[dict] = []
        self.last = 0.0
        self.srv: http.server.ThreadingHTTPServer | None = None
        self.start()

    def start(self) -> None:
        box = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                doc = json.loads(body)
                box.got.append(self.headers["X-Crowdopt-Delivery"])
                box.bodies.append(doc)
                box.last = time.monotonic()
                self.send_response(200)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), H)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.srv.shutdown()
        self.srv.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"


def _post(port: int, token: str, path: str, body: dict) -> tuple[int | None, dict | None]:
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("POST", path, json.dumps(body), {"Authorization": f"Bearer {token}"})
        r = c.getresponse()
        doc = json.loads(r.read())
        c.close()
        return r.status, doc
    except (OSError, ValueError, http.client.HTTPException):
        return None, None


def outage_run(tmp: Path, *, outage: float = 60.0, before: float = 2.0, after: float = 3.0,
               drain: float | None = None, store: str | None = None) -> dict:
    """A receiver outage of `outage` seconds with a SIGKILL and restart of the server in its
    middle, while answers are recorded; returns what was lost and how long delivery took."""
    db = campaign_target(tmp, store, "outage")
    camp = Campaign.create(db, policy="optkg", items=[f"i{k}" for k in range(20_000)],
                           budget=10**6, seed=0, batching="fill")
    token = camp.new_tokens["admin"]
    camp.close()
    rx = Receiver()
    srv = Server(db, tmp / "outage-port", "--webhook", rx.url)
    srv.up()
    stop = threading.Event()
    sent = {"records": 0}

    def client() -> None:
        k = 0
        while not stop.is_set():
            code, doc = _post(srv.port, token, "/next", {"n": 5})
            if code != 200 or not doc["queries"]:
                time.sleep(0.05)
                continue
            rows = [{"item": q["item"], "worker": f"w{k}-{q['query']}", "label": "1"}
                    for q in doc["queries"]]
            code, res = _post(srv.port, token, "/record", {"answers": rows})
            sent["records"] += code == 200
            k += 1
            time.sleep(0.1)

    th = threading.Thread(target=client)
    th.start()
    time.sleep(before)
    rx.stop()  # the receiver goes down: connection refused
    down_at = time.monotonic()
    time.sleep(outage / 2)
    srv.kill()  # the server dies in the middle of the outage, with events pending
    srv.start()
    srv.up()
    time.sleep(max(0.0, outage - (time.monotonic() - down_at)))
    rx.start()  # back on the same port
    back = time.monotonic()
    time.sleep(after)
    stop.set()
    th.join()
    reader = Campaign.open(db, readonly=True)
    end = time.monotonic() + (drain if drain is not None else 120.0)
    while time.monotonic() < end:
        if not listing(reader.store)["totals"]["pending"]:
            break
        time.sleep(0.2)
    ids = [json.loads(b)["delivery"] for b in reader.store.event_bodies()]
    states = listing(reader.store)["totals"]
    reader.close()
    srv.kill()
    rx.stop()
    got = rx.got
    first_seen = list(dict.fromkeys(got))  # each delivery id at its first arrival
    order = {d: n for n, d in enumerate(ids)}
    return {"outage s": outage, "records": sent["records"], "events": len(ids),
            "received": len(set(got)), "lost": len(set(ids) - set(got)),
            "repeats received": len(got) - len(set(got)),
            "order kept": [order[d] for d in first_seen if d in order] == sorted(
                order[d] for d in first_seen if d in order),
            "failed": states.get("failed", 0), "pending": states.get("pending", 0),
            "s to catch up": round(max(rx.last - back, 0.0), 2)}


# ----------------------------------------------------------------------------- main
def add_args(p: argparse.ArgumentParser) -> None:
    """This script's own options (on the shared parser)."""
    p.add_argument("--only", nargs="+", choices=("fault", "outage"),
                   default=["fault", "outage"], help="the parts to run (default: both)")
    p.add_argument("--runs", type=int, default=3, help="fault runs, seeds 0..R-1 (default 3)")
    p.add_argument("--seconds", type=float, default=20.0, help="length of a fault run")
    p.add_argument("--budget", type=int, default=1000,
                   help="budget of a fault run (default 1000: spent before the run ends)")
    p.add_argument("--outage", type=float, default=60.0,
                   help="seconds the webhook receiver is down (default 60)")
    p.add_argument("--store", default="sqlite",
                   help="sqlite (default), postgresql (a scratch server for the run) or a "
                   "postgresql://host/db URL")
    p.add_argument("--servers", type=int, default=1,
                   help="`campaign serve` processes on the one campaign (default 1)")
    p.add_argument("--kills", type=int, default=None,
                   help="server kills per fault run (default: 2, and 3 with 3 servers)")


def main() -> int:
    from common import parse_args

    args = parse_args(__doc__.splitlines()[0], quick_help="one short fault run, a 10 s outage",
                      extend=add_args)
    tmp = Path(tempfile.mkdtemp(prefix="fault_campaign_"))
    scratch = None
    store = args.store
    if store == "postgresql":
        sys.path.insert(0, str(ROOT / "tools"))
        from pg_scratch import ScratchPostgres

        scratch = ScratchPostgres(durable=True)
        store = scratch.url("crowdopt")
    try:
        return run(args, tmp, None if store == "sqlite" else store)
    finally:
        if scratch is not None:
            scratch.stop()


def run(args: argparse.Namespace, tmp: Path, store: str | None) -> int:
    """The parts of --only, printed; 0 when every invariant held."""
    from common import emit

    ok = True
    if "fault" in args.only:
        runs = 1 if args.quick else args.runs
        kills = args.kills if args.kills is not None else max(2, args.servers)
        rows = [fault_run(tmp, seconds=8.0 if args.quick else args.seconds, seed=args.seed + r,
                          budget=300 if args.quick else args.budget, store=store,
                          servers=args.servers, server_kills=kills) for r in range(runs)]
        for r in rows:
            r["all invariants"] = fault_ok(r)
            ok &= r["all invariants"]
        cols = list(rows[0])
        emit("campaign_fault", rows, cols, args,
             note="ghost answers: rows from ghost0..9 (admin token) and from a worker token of "
                  "a worker never handed anything; honest refused: answers after their "
                  "hand-out's late window (lease 0.3 s + 0.3 s)")
    if "outage" in args.only:
        row = outage_run(tmp, outage=10.0 if args.quick else args.outage, store=store)
        ok &= row["lost"] == 0 and row["order kept"]
        emit("campaign_outage", [row], list(row), args,
             note="receiver down for the outage (connection refused), the server killed "
                  "with SIGKILL and restarted half-way through; lost = events in the file "
                  "never received; repeats: at-least-once deliveries a receiver drops by "
                  "X-Crowdopt-Delivery")
    print("all invariants hold" if ok else "AN INVARIANT FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
