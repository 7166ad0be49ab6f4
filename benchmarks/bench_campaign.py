"""Live campaign throughput and latency: answers/s per path, record cost per row, /status p99.

Usage: python benchmarks/bench_campaign.py [--quick] [--repeat R] [--only PART ...]
       [--pg URL] [--previous REV]
(PART: python, cli, http (the paths of 1.), record (2.), status (3.), finished (4.), stores
(5.), parsers (6.); default all)

1. Answers per second of the next -> answers -> record loop through each path, Opt-KG with
   batching 'fill' (full batches), the file on disk (WAL, synchronous=NORMAL):
   - Python API, next(50) (and batching 'exact' next(50), next(1): decisions equal the replay);
   - CLI, one `campaign next --n N --json` and one `campaign record ANSWERS.csv --json` process
     per batch, N = 50, 500, 5000 (the process start-up is in the cost: that is the path);
   - HTTP, `campaign serve` in its own process, C = 1, 4, 8 client processes each looping
     POST /next {"n": 10} then POST /record (keep-alive connections), for a fixed time; and
     C = 4 with a webhook receiver (`--webhook`: every record writes its events to the
     outbox, the server's delivery pool POSTs them to a receiver in this process).
   Every path runs with the hand-outs (a paid answer each), the budget reservations and the
   status summary written by each record.
   Wall-clock answers/s, and CPU seconds per 1,000 answers (all processes of the path).
2. record cost per row: one `record` of R = 1k, 10k, 100k answers to R open queries, CPU time
   of the call / R, and its ratio to the 1k row (flat = linear in the batch), in a campaign of
   R items and in one of 100k items (there the batch alone grows, not the per-item state).
3. GET /status (a 100-row page) latency while 4 HTTP writer processes run: p50 / p99 over the
   requests of one reader (wall time: on a loaded machine it includes waiting for a core),
   with the server's own time per request from its Server-Timing header (wall, and the CPU
   time of the thread that computed the document); --repeat runs, each with the load average.
4. `crowdopt campaign status` (text and --json) of a finished campaign of 100k items and 100k
   answers: CPU of the whole command in a child process, and of Python start-up alone; and,
   in this process, its phases: opening the file, the whole document, the text report's
   document, the JSON encoding.
5. stores: answers/s of the HTTP loop (POST /next {"n": 10} then /record, keep-alive) at 1, 4
   and 8 client processes, and the p99 latency of GET /status (a 100-row page, every 20 ms)
   meanwhile, for: a SQLite file and this server; the same with today's server (the code of
   --previous REV, default 567d063, read from git, on a file it made itself); PostgreSQL with
   1 and with 3 servers on one campaign (clients spread over them). Each on a quiet machine
   and under a CPU load of 2 busy-loop processes (`busy 2`). PostgreSQL: --pg URL, else a
   scratch server (tools/pg_scratch.py, its default settings: fsync and synchronous commits
   on). `cpu busy %`: the machine's processors busy during the row (all processes: servers,
   database, clients, the load; from /proc/stat), so a row that adds servers on a machine
   already busy shows it. The summary lines compare the targets: SQLite at 4 clients quiet,
   this server against today's under the load, and PostgreSQL's 3 servers against its 1.
6. parsers: the stores part's SQLite row (this server, 4 clients, quiet) with uvicorn's HTTP
   parser in C (httptools) and in Python (h11), --repeat pairs, and the ratio per pair.
Writes benchmarks/results/campaign.json, campaign_record.json, campaign_status.json,
campaign_finished.json, campaign_stores.json, campaign_parsers.json.
"""

from __future__ import annotations

import argparse
import csv
import gc
import http.client
import json
import multiprocessing as mp
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import emit, parse_args

from crowdopt.campaign import Campaign

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get(
    "PYTHONPATH", "")}


def items(k: int) -> list[str]:
    return [f"item{i}" for i in range(k)]


def label(item: str, rnd: int) -> int:
    """A fixed answer per (item, round): item i's theta is (i mod 97) / 97."""
    i = int(item[4:])
    return int(((i * 7919 + rnd * 104729) % 1000) / 1000 < (i % 97) / 97)


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# ----------------------------------------------------------------------------- Python
def python_path(tmp: Path, batching: str, n: int, budget: int, k: int) -> dict:
    db = tmp / f"py-{batching}-{n}-{time.perf_counter_ns()}.db"
    camp = Campaign.create(db, policy="optkg", items=items(k), budget=budget, seed=0,
                           batching=batching)
    answers = 0
    t0, c0 = time.perf_counter(), self_cpu()
    while qs := camp.next(n):
        camp.record([(q.item, f"w{q.decision}", label(q.item, q.round)) for q in qs])
        answers += len(qs)
    secs, cpu = time.perf_counter() - t0, self_cpu() - c0
    camp.close()
    return {"path": "python", "config": f"{batching} next({n})", "answers": answers,
            "seconds": secs, "cpu": cpu}


# ----------------------------------------------------------------------------- CLI
def cli(*argv: str) -> str:
    r = subprocess.run([sys.executable, "-m", "crowdopt", *argv], capture_output=True,
                       text=True, env=ENV, timeout=600)
    if r.returncode not in (0,):
        raise RuntimeError(f"crowdopt {' '.join(argv[:2])}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def cli_path(tmp: Path, n: int, batches: int) -> dict:
    k = max(2 * n, 1000)
    db = tmp / f"cli-{n}-{time.perf_counter_ns()}.db"
    Campaign.create(db, policy="optkg", items=items(k), budget=n * batches, seed=0,
                    batching="fill").close()
    ans = tmp / f"ans-{n}.csv"
    answers = 0
    t0, c0 = time.perf_counter(), children_cpu()
    for _ in range(batches):
        qs = json.loads(cli("campaign", "next", str(db), "--n", str(n), "--json"))["queries"]
        with open(ans, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["item", "worker", "label"])
            w.writerows([q["item"], f"w{q['decision']}", label(q["item"], q["round"])]
                        for q in qs)
        res = json.loads(cli("campaign", "record", str(db), str(ans), "--json"))
        answers += res["stored"]
    secs, cpu = time.perf_counter() - t0, children_cpu() - c0
    return {"path": "cli", "config": f"batch {n}", "answers": answers, "seconds": secs,
            "cpu": cpu}


# ----------------------------------------------------------------------------- HTTP
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served_campaign(db: Path, k: int) -> Path:
    """An Opt-KG 'fill' campaign on k items with an open budget, its admin token in DB.token."""
    camp = Campaign.create(db, policy="optkg", items=items(k), budget=10**7, seed=0,
                           batching="fill")
    Path(str(db) + ".token").write_text(camp.new_tokens["admin"] + "\n")
    camp.close()
    return db


class Receiver:
    """A webhook receiver on 127.0.0.1 in this process (HTTP/1.1, kept-alive connections):
    counts the events it gets."""

    def __init__(self):
        import http.server
        import threading

        box = self
        self.got = 0

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a production receiver

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                box.got += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}/hook"
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.srv.shutdown()
        self.srv.server_close()


class Server:
    """`crowdopt campaign serve DB` in its own process on a free port."""

    def __init__(self, db: Path, *extra: str):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "-m", "crowdopt", "campaign", "serve",
                                      str(db), "--port", str(self.port), *extra], env=ENV,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.token = Path(str(db) + ".token").read_text().strip()
        deadline = time.monotonic() + 120
        while True:
            try:
                if request(self.port, self.token, "GET", "/status?limit=1")[0] == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {self.proc.stderr.read()}")
            time.sleep(0.1)

    def cpu(self) -> float:
        """CPU seconds of the server process so far (Linux /proc)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def request(port: int, token: str, method: str, path: str, body=None, conn=None):
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    data = None if body is None else json.dumps(body).encode()
    conn.request(method, path, body=data, headers={"Authorization": f"Bearer {token}",
                                                   "Content-Type": "application/json"})
    r = conn.getresponse()
    out = (r.status, json.loads(r.read()))
    if own:
        conn.close()
    return out


def http_client(port: int, token: str, n: int, until: float, me: int, q: mp.Queue) -> None:
    """Loop next(n) -> record until `until` (time.time()); report answers and CPU."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    answers = busy = 0
    c0 = self_cpu()
    while time.time() < until:
        code, doc = request(port, token, "POST", "/next", {"n": n}, conn)
        if code == 503:
            busy += 1
            continue
        if not doc.get("queries"):
            break
        rows = [{"item": x["item"], "worker": f"c{me}-{x['decision']}",
                 "label": str(label(x["item"], x["round"]))} for x in doc["queries"]]
        while True:
            code, res = request(port, token, "POST", "/record", {"answers": rows}, conn)
            if code != 503:
                break
            busy += 1
        answers += res["stored"]
    q.put({"answers": answers, "busy": busy, "cpu": self_cpu() - c0})


def writers(srv: Server, clients: int, secs: float, n: int) -> tuple[list, mp.Queue, float]:
    """`clients` processes looping next(n)/record against `srv` from 0.5 s from now for
    `secs` seconds; returns them, their result queue and the start time."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    start = time.time() + 0.5
    procs = [ctx.Process(target=_delayed, args=(start, srv.port, srv.token, n, start + secs,
                                                c, q)) for c in range(clients)]
    for p in procs:
        p.start()
    return procs, q, start


def results(procs: list, q: mp.Queue, secs: float) -> list[dict]:
    got = [q.get(timeout=secs + 120) for _ in procs]
    for p in procs:
        p.join()
    return got


def http_path(tmp: Path, clients: int, secs: float, n: int = 10, webhook: bool = False
              ) -> dict:
    db = served_campaign(tmp / f"http-{clients}-{time.perf_counter_ns()}.db", 50_000)
    rx = Receiver() if webhook else None
    srv = Server(db, *(["--webhook", rx.url] if rx else []))
    try:
        s0 = srv.cpu()
        procs, q, _ = writers(srv, clients, secs, n)
        got = results(procs, q, secs)
        server_cpu = srv.cpu() - s0
    finally:
        srv.stop()
        if rx is not None:
            rx.stop()
    answers = sum(g["answers"] for g in got)
    row = {"path": "http", "config": f"{clients} clients, n={n}" + (", webhook" if rx else ""),
           "answers": answers, "seconds": secs, "cpu": server_cpu + sum(g["cpu"] for g in got),
           "server cpu s per 1k answers": 1000 * server_cpu / max(answers, 1),
           "503": sum(g["busy"] for g in got)}
    if rx is not None:
        row["events delivered"] = rx.got
    return row


def _delayed(start, port, token, n, until, me, q):
    time.sleep(max(0.0, start - time.time()))
    http_client(port, token, n, until, me, q)


# ----------------------------------------------------------------------------- record cost
def record_cost(tmp: Path, rows: int, k: int | None = None) -> dict:
    """CPU time of one record() of `rows` answers to open queries of a campaign of k items
    (default: as many as rows)."""
    db = tmp / f"rec-{rows}-{time.perf_counter_ns()}.db"
    camp = Campaign.create(db, policy="optkg", items=items(k or rows), budget=rows, seed=0,
                           batching="fill")
    qs = []
    while len(qs) < rows:
        qs += camp.next(min(10_000, rows - len(qs)))
    answers = [(q.item, f"w{q.decision}", label(q.item, q.round)) for q in qs]
    del qs
    # the set-up's garbage-collector debt (100k Query objects, earlier parts' leftovers) is
    # paid before the clock starts: otherwise the collector's full passes during the call
    # scan it, a cost of what ran before, not of record
    gc.collect()
    c0 = self_cpu()
    res = camp.record(answers)
    cpu = self_cpu() - c0
    camp.close()
    assert res["stored"] == rows, res
    return {"rows": rows, "cpu s": cpu, "us per row": 1e6 * cpu / rows}


# ----------------------------------------------------------------------------- /status p99
def status_latency(tmp: Path, secs: float, n_writers: int = 4) -> dict:
    db = served_campaign(tmp / f"st-{time.perf_counter_ns()}.db", 20_000)
    srv = Server(db)
    try:
        procs, q, start = writers(srv, n_writers, secs, 10)
        until = start + secs
        time.sleep(max(0.0, start - time.time()) + 1.0)  # the writers are running
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
        lat, app, cpu = [], [], []
        while time.time() < until - 0.5:
            t0 = time.perf_counter()
            conn.request("GET", "/status", headers={"Authorization": f"Bearer {srv.token}"})
            r = conn.getresponse()
            st = json.loads(r.read())
            lat.append(time.perf_counter() - t0)
            assert r.status == 200
            head = r.getheader("Server-Timing")  # (a server older than the header: none)
            timing = dict(x.strip().split(";dur=") for x in head.split(",")) if head else {}
            app.append(float(timing.get("app", "nan")))
            cpu.append(float(timing.get("cpu", "nan")))
            time.sleep(0.02)
        got = results(procs, q, secs)
    finally:
        srv.stop()
    ms = np.array(lat) * 1000
    return {"writers": n_writers, "requests": len(lat), "answers during": sum(
        g["answers"] for g in got), "answers at end": st["answers"],
        "p50 ms": float(np.percentile(ms, 50)), "p99 ms": float(np.percentile(ms, 99)),
        "max ms": float(ms.max()), "server p99 ms": float(np.percentile(app, 99)),
        "server cpu p50 ms": float(np.percentile(cpu, 50)),
        "server cpu p99 ms": float(np.percentile(cpu, 99))}


PARTS = ("python", "cli", "http", "record", "status", "finished", "stores", "parsers")
PREVIOUS = "567d063"  # today's server, before the store interface


def add_parts(p: argparse.ArgumentParser) -> None:
    """This benchmark's own options (on the shared parser of `common.parse_args`)."""
    p.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS),
                   help="the parts to run (default: all)")
    p.add_argument("--pg", default=None, metavar="URL",
                   help="stores: a postgresql://host/db database to use (default: a scratch "
                   "server started for the run)")
    p.add_argument("--previous", default=PREVIOUS, metavar="REV",
                   help=f"stores: the git revision of today's server (default {PREVIOUS})")


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], quick_help="small sizes (< 60 s)",
                      repeat_help="timing repetitions (best kept)", extend=add_parts)
    tmp = Path(tempfile.mkdtemp(prefix="bench_campaign_"))
    try:
        if {"python", "cli", "http"} & set(args.only):
            run_paths(tmp, args)
        if "record" in args.only:
            run_record(tmp, args)
        if "status" in args.only:
            run_status(tmp, args)
        if "finished" in args.only:
            run_finished(tmp, args)
        if "stores" in args.only:
            run_stores(tmp, args)
        if "parsers" in args.only:
            run_parsers(tmp, args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_paths(tmp: Path, args: argparse.Namespace) -> None:
    """Part 1: answers/s of each path (of those in --only)."""
    quick = args.quick
    python_path(tmp, "fill", 50, 200, 100)  # first calls: imports, SQLite, caches
    rows = []
    budget, k = (800, 200) if quick else (3200, 800)
    if "python" in args.only:
        for batching, n in (("fill", 50), ("exact", 50), ("exact", 1)):
            runs = [python_path(tmp, batching, n, budget, k) for _ in range(args.repeat)]
            rows.append(min(runs, key=lambda r: r["seconds"]))
    if "cli" in args.only:
        for n in ((50, 500) if quick else (50, 500, 5000)):
            rows.append(cli_path(tmp, n, 2 if quick else 3))
    secs = 3.0 if quick else 10.0
    if "http" in args.only:
        for c in ((1, 4) if quick else (1, 4, 8)):
            rows.append(http_path(tmp, c, secs))
        rows.append(http_path(tmp, 4, secs, webhook=True))
    for r in rows:
        r["answers/s"] = r["answers"] / r["seconds"]
        r["cpu s per 1k answers"] = 1000 * r["cpu"] / max(r["answers"], 1)
    emit("campaign", rows, ["path", "config", "answers", "seconds", "answers/s",
                            "cpu s per 1k answers", "server cpu s per 1k answers", "503",
                            "events delivered"],
         args,
         note="Opt-KG; Python: best of --repeat runs; CLI: two processes per batch "
              "(start-up included); HTTP: one server process, client processes for "
              f"{secs:.0f} s; wall-clock figures depend on the machine's load")


def run_record(tmp: Path, args: argparse.Namespace) -> None:
    """Part 2: record cost per row."""
    sizes = (1000, 10_000) if args.quick else (1000, 10_000, 100_000)
    runs: dict[int, list[dict]] = {r: [] for r in sizes} | {-r: [] for r in sizes}
    # at least 3 runs: one run's CPU time varies by 1.5x on a shared machine (its caches)
    for _ in range(max(args.repeat, 3)):  # sizes in turn: drift hits every size alike
        for r in sizes:
            runs[r].append(record_cost(tmp, r))
            if r < sizes[-1]:  # the same batch in a campaign of the largest size
                runs[-r].append(record_cost(tmp, r, sizes[-1]))
    rec = [min(runs[r], key=lambda x: x["cpu s"]) for r in sizes]
    big = sizes[-1]
    for r in rec:
        r["ratio to 1k"] = r["us per row"] / rec[0]["us per row"]
        r["median us per row"] = float(np.median([x["us per row"] for x in runs[r["rows"]]]))
        same = runs[-r["rows"]] if r["rows"] < big else runs[big]
        r[f"us per row, {big} items"] = min(x["us per row"] for x in same)
    for r in rec:
        r[f"ratio, {big} items"] = r[f"us per row, {big} items"] / rec[0][f"us per row, {big} items"]
    emit("campaign_record", rec, ["rows", "cpu s", "us per row", "ratio to 1k",
                                  "median us per row", f"us per row, {big} items",
                                  f"ratio, {big} items"], args,
         note="one record() of R answers to R open queries (Opt-KG, fill); CPU time; "
              "us per row: best of max(--repeat, 3) runs per size, sizes run in turn, in a "
              f"campaign of R items, and (last two columns) of {big} items: the batch alone "
              "grows (the per-item state no longer grows with it, nor the caches it misses)")


def run_status(tmp: Path, args: argparse.Namespace) -> None:
    """Part 3: /status latency under writers, --repeat runs, each with the machine's load."""
    st = []
    for r in range(args.repeat):
        load0 = os.getloadavg()[0]
        row = status_latency(tmp, 5.0 if args.quick else 15.0)
        st.append({"run": r + 1, "load before": load0, "load after": os.getloadavg()[0],
                   **row})
    p99 = sorted(x["p99 ms"] for x in st)
    emit("campaign_status", st, ["run", "load before", "load after", "requests",
                                 "answers during", "p50 ms", "p99 ms", "max ms",
                                 "server p99 ms", "server cpu p50 ms", "server cpu p99 ms"],
         args,
         note="GET /status (100-row page) every 20 ms while 4 writer processes loop "
              f"next(10)/record over HTTP; p50/p99/max: wall-clock latency at the client; "
              "server: the worker thread's wall and CPU time (Server-Timing header; the CPU "
              f"figure does not depend on the load); median p99 of {len(p99)} runs: "
              f"{p99[len(p99) // 2]:.1f} ms; 1-minute load average of this "
              f"{os.cpu_count()}-core machine before/after each run (the benchmark itself "
              "adds ~5)")


def finished_campaign(db: Path, k: int, workers: int | None = None) -> Path:
    """A campaign of k items whose whole budget (k answers, one per item) is answered, by k
    workers (one answer each) or by `workers` workers."""
    camp = Campaign.create(db, policy="optkg", items=items(k), budget=k, seed=0,
                           batching="fill")
    qs = []
    while len(qs) < k:
        qs += camp.next(min(10_000, k - len(qs)))
    res = camp.record([(q.item, f"w{q.decision % (workers or k)}", label(q.item, q.round))
                       for q in qs])
    assert res["stored"] == k, res
    camp.close()
    return db


def status_phases(db: Path, repeat: int) -> list[dict]:
    """Where the status of finished campaign `db` spends its CPU, in this process (imports
    done): opening the file, the whole document (every label and worker: `--json`), the text
    report's document (10 rows and the top-10 lists), and encoding the whole one as JSON."""
    from crowdopt.cli import json_text

    def best(fn) -> tuple[float, object]:
        runs = []
        for _ in range(repeat):
            gc.collect()
            c0 = time.process_time()
            out = fn()
            runs.append(time.process_time() - c0)
        return min(runs), out

    t_open, camp = best(lambda: Campaign.open(db, readonly=True))
    t_whole, doc = best(lambda: Campaign.open(db, readonly=True).status())
    t_text, _ = best(lambda: Campaign.open(db, readonly=True).status(limit=10, top=10))
    t_json, text = best(lambda: json_text(doc))
    camp.close()
    return [{"command": f"  in-process: {what}", "items": doc["items"],
             "answers": doc["answers"], "workers": doc["workers_known"], "best cpu s": t,
             "stdout bytes": size}
            for what, t, size in (("Campaign.open", t_open, None),
                                  ("open + status() (whole document)", t_whole, None),
                                  ("open + status(limit=10, top=10) (text)", t_text, None),
                                  ("JSON encoding of the whole document", t_json, len(text)))]


def run_finished(tmp: Path, args: argparse.Namespace) -> None:
    """Part 4: `crowdopt campaign status` (text and --json) of a finished campaign: the CPU of
    the whole command (start-up and imports included), best and median of --repeat runs."""
    k = 10_000 if args.quick else 100_000
    exe = [sys.executable, "-m", "crowdopt"]
    rows = []
    for workers, extra in ((k, []), (k, ["--json"]), (1000, []), (1000, ["--json"]), (k, None)):
        db = tmp / f"finished-{workers}.db"
        if extra is not None and not db.exists():
            finished_campaign(db, k, workers)
        cmd = ([sys.executable, "-c", "import crowdopt.cli"] if extra is None
               else exe + ["campaign", "status", str(db), *extra])
        cpu, wall = [], []
        for _ in range(max(args.repeat, 3)):
            c0, t0 = children_cpu(), time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            wall.append(time.perf_counter() - t0)
            cpu.append(children_cpu() - c0)
            assert proc.returncode == 0, proc.stderr
            if extra == ["--json"]:
                doc = json.loads(proc.stdout)
                assert doc["spent"] == k, {x: doc.get(x) for x in ("spent", "budget")}
        what = ("start-up alone (import crowdopt.cli)" if extra is None
                else "campaign status" + (" --json" if extra else ""))
        rows.append({"command": what, "items": k, "answers": k,
                     "workers": workers if extra is not None else None,
                     "best cpu s": min(cpu), "median cpu s": float(np.median(cpu)),
                     "median wall s": float(np.median(wall)),
                     "stdout bytes": len(proc.stdout)})
    rows += status_phases(tmp / f"finished-{k}.db", max(args.repeat, 3))
    emit("campaign_finished", rows, ["command", "items", "answers", "workers", "best cpu s",
                                     "median cpu s", "median wall s", "stdout bytes"], args,
         note=f"a finished Opt-KG campaign of {k:,} items and {k:,} answers from {k:,} or "
              "1,000 workers; CPU (user + "
              "system) of the whole command in a child process, Python start-up and imports "
              "included (start-up alone: its own row); the in-process rows split the "
              "one with a worker per answer into its phases (best CPU); "
              f"{max(args.repeat, 3)} runs each")



# ----------------------------------------------------------------------------- 5. stores
def previous_src(tmp: Path, rev: str) -> Path:
    """The `src` folder of revision `rev` of this repository (read with git archive)."""
    out = tmp / f"previous-{rev}"
    out.mkdir()
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True,
                         check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=tar, check=True)
    return out / "src"


def make_campaign(target, k: int, src: Path | None = None) -> str:
    """An Opt-KG 'fill' campaign on k items with an open budget, made by the code in `src`
    (default: this one); returns its admin token."""
    code = ("import sys; from crowdopt.campaign import Campaign; "
            f"c = Campaign.create({str(target)!r}, policy='optkg', "
            f"items=[f'item{{i}}' for i in range({k})], budget=10**7, seed=0, "
            "batching='fill'); print(c.new_tokens['admin'])")
    env = {**ENV, "PYTHONPATH": str(src or ROOT / "src")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"campaign init failed: {r.stderr}")
    return r.stdout.strip()


class Served:
    """`n` `campaign serve` processes on campaign `target` (code from `src`: default this)."""

    def __init__(self, target, token: str, n: int, src: Path | None, cwd: Path):
        env = {**ENV, "PYTHONPATH": str(src or ROOT / "src")}
        self.token, self.ports, self.procs = token, [], []
        for _ in range(n):
            port = free_port()
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "crowdopt", "campaign", "serve", str(target), "--port",
                 str(port)], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE))
            self.ports.append(port)
        deadline = time.monotonic() + 120
        for port, proc in zip(self.ports, self.procs):
            while True:
                try:
                    if request(port, token, "GET", "/status?limit=1")[0] == 200:
                        break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"server did not start: {proc.stderr.read()}")
                time.sleep(0.1)

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait(timeout=60)


def _busy() -> None:
    while True:
        pass


def cpu_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of all processors since boot (/proc/stat; (0, 0) elsewhere)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return 0, 0
    idle = v[3] + (v[4] if len(v) > 4 else 0)  # idle + iowait
    return sum(v) - idle, sum(v)


def store_run(served: Served, clients: int, secs: float, n: int = 10) -> dict:
    """`clients` processes looping next(n)/record (client c on server c mod servers) for
    `secs` s while this process reads GET /status every 20 ms from the first server."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    start = time.time() + 0.5
    procs = [ctx.Process(target=_delayed, args=(start, served.ports[c % len(served.ports)],
                                                served.token, n, start + secs, c, q))
             for c in range(clients)]
    for p in procs:
        p.start()
    time.sleep(max(0.0, start - time.time()) + min(1.0, secs / 4))
    busy0, total0 = cpu_ticks()
    conn = http.client.HTTPConnection("127.0.0.1", served.ports[0], timeout=60)
    lat = []
    while time.time() < start + secs - 0.3:
        t0 = time.perf_counter()
        conn.request("GET", "/status", headers={"Authorization": f"Bearer {served.token}"})
        r = conn.getresponse()
        r.read()
        lat.append(time.perf_counter() - t0)
        time.sleep(0.02)
    busy1, total1 = cpu_ticks()
    got = results(procs, q, secs)
    answers = sum(g["answers"] for g in got)
    return {"answers/s": answers / secs, "503": sum(g["busy"] for g in got),
            "status p99 ms": float(np.percentile(np.array(lat) * 1000, 99)) if lat else None,
            "status reads": len(lat),
            "cpu busy %": (100.0 * (busy1 - busy0) / (total1 - total0)
                           if total1 > total0 else None)}


def run_stores(tmp: Path, args: argparse.Namespace) -> None:
    """Part 5: both stores, 1 and 3 servers, this server and today's, quiet and busy."""
    scratch = None
    pg = args.pg
    if pg is None:
        sys.path.insert(0, str(ROOT / "tools"))
        from pg_scratch import ScratchPostgres, missing

        if missing():
            print(f"stores: PostgreSQL skipped: {missing()}", file=sys.stderr)
        else:
            scratch = ScratchPostgres(durable=True)
            pg = scratch.url("crowdopt")
    prev = previous_src(tmp, args.previous)
    secs = 3.0 if args.quick else 10.0
    counts = (4,) if args.quick else (1, 4, 8)
    setups = [("sqlite", 1, "this"), ("sqlite", 1, f"today ({args.previous})")]
    if pg:
        setups += [("postgresql", 1, "this"), ("postgresql", 3, "this")]
    rows = []
    try:
        for load in ("quiet", "busy 2"):
            hogs = [mp.get_context("fork").Process(target=_busy, daemon=True)
                    for _ in range(2 if load != "quiet" else 0)]
            for h in hogs:
                h.start()
            try:
                for store, servers, server in setups:
                    for c in counts:
                        src = prev if server != "this" else None
                        name = f"s{len(rows)}_{time.perf_counter_ns() % 10**9}"
                        target = (tmp / f"{name}.db" if store == "sqlite" else
                                  f"{pg}{'&' if '?' in pg else '?'}campaign={name}")
                        token = make_campaign(target, 50_000, src)
                        served = Served(target, token, servers, src, tmp)
                        try:
                            got = store_run(served, c, secs)
                        finally:
                            served.stop()
                        rows.append({"store": store, "servers": servers, "server": server,
                                     "load": load, "clients": c, **got})
            finally:
                for h in hogs:
                    h.terminate()
    finally:
        if scratch is not None:
            scratch.stop()

    def rate(store, servers, server, load, c=4):
        for r in rows:
            if (r["store"], r["servers"], r["server"], r["load"], r["clients"]) == (
                    store, servers, server, load, c):
                return r["answers/s"]
        return None

    notes = []
    q4 = rate("sqlite", 1, "this", "quiet")
    notes.append(f"SQLite, 4 clients, quiet: {q4:.0f} answers/s (this server)")
    b_this = rate("sqlite", 1, "this", "busy 2")
    b_prev = rate("sqlite", 1, setups[1][2], "busy 2")
    notes.append(f"SQLite, 4 clients, 2 busy loops: this server {b_this:.0f}, today's "
                 f"{b_prev:.0f} answers/s (ratio {b_this / max(b_prev, 1e-9):.2f})")
    if pg:
        one, three = rate("postgresql", 1, "this", "quiet"), rate("postgresql", 3, "this",
                                                                   "quiet")
        notes.append(f"PostgreSQL, 4 clients, quiet: 3 servers {three:.0f}, 1 server "
                     f"{one:.0f} answers/s (ratio {three / max(one, 1e-9):.2f})")
    emit("campaign_stores", rows, ["store", "servers", "server", "load", "clients",
                                   "answers/s", "503", "status p99 ms", "status reads",
                                   "cpu busy %"], args,
         note="HTTP loop POST /next {n: 10} then /record per client process (keep-alive), "
              f"{secs:.0f} s per row, Opt-KG fill on 50,000 items; status p99: GET /status "
              "(100-row page) every 20 ms from the first server meanwhile; busy 2: two "
              "busy-loop processes running; " + "; ".join(notes))



# ----------------------------------------------------------------------------- 6. parsers
def run_parsers(tmp: Path, args: argparse.Namespace) -> None:
    """Part 6: this server on a SQLite file, 4 clients, quiet, with uvicorn's HTTP parser in C
    (httptools, the `serve` extra) and in Python (h11: httptools hidden from the server by a
    module of that name that fails to import), in pairs that alternate which runs first."""
    hide = tmp / "no-httptools"
    hide.mkdir()
    (hide / "httptools.py").write_text('raise ImportError("hidden by bench_campaign")\n')
    srcs = {"httptools": None, "h11": Path(f"{hide}{os.pathsep}{ROOT / 'src'}")}
    secs = 3.0 if args.quick else 10.0
    rows, ratios = [], []
    for rep in range(args.repeat):
        got = {}
        for parser in (("httptools", "h11") if rep % 2 == 0 else ("h11", "httptools")):
            target = tmp / f"parser-{parser}-{rep}.db"
            token = make_campaign(target, 50_000)
            served = Served(target, token, 1, srcs[parser], tmp)
            try:
                got[parser] = store_run(served, 4, secs)
            finally:
                served.stop()
            rows.append({"pair": rep, "parser": parser, **got[parser]})
        ratios.append(got["httptools"]["answers/s"] / max(got["h11"]["answers/s"], 1e-9))
    emit("campaign_parsers", rows, ["pair", "parser", "answers/s", "status p99 ms",
                                    "cpu busy %"], args,
         note=f"SQLite, this server, 4 clients, quiet, {secs:.0f} s per row; httptools / h11 "
              f"answers/s per pair: {', '.join(f'{r:.2f}' for r in ratios)} (median "
              f"{float(np.median(ratios)):.2f})")


if __name__ == "__main__":
    main()
