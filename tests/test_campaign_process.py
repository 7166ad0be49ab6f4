"""Several real processes call next/record on one campaign file at the same time.

Consistent means: every query is handed to exactly one process (while its lease runs), every
answer is stored once, the budget is never exceeded, and the file's log is one the policy
reproduces when rebuilt from scratch (`Campaign.open` checks every decision). With exact
batching the result is moreover the one-at-a-time replay, decision for decision, whatever the
interleaving of the processes was."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crowdopt.campaign import Campaign

sys.path.insert(0, str(Path(__file__).parent))
from test_campaign import binary_table, caps_of, replay_trace  # noqa: E402

WORKER = r"""
import json, os, random, sys, time
sys.path.insert(0, sys.argv[1])
from test_campaign import binary_table
from crowdopt.campaign import Campaign, TableOracle

db, me, seed = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
table, _ = binary_table(seed, K=60)
oracle = TableOracle(table, seed=seed)
camp = Campaign.open(db)
rng = random.Random(me)
got, idle = [], 0
open(f"{db}.ready{me}", "w").close()
while not os.path.exists(f"{db}.go"):  # start together
    time.sleep(0.005)
while True:
    qs = camp.next(rng.randint(1, 8))
    if not qs:
        if camp.status()["done"]:
            break
        idle += 1
        time.sleep(0.002)  # another process holds the queries the policy waits for
        continue
    got += [q.id for q in qs]
    time.sleep(rng.random() * 0.003)  # the crowd answers while the others go on
    answers = [oracle.answer(q) for q in qs]
    rng.shuffle(answers)
    cut = rng.randint(0, len(answers))
    camp.record(answers[:cut])
    camp.record(answers[cut:])
    if rng.random() < 0.3:
        camp.record(answers)  # a retried request: no effect
print(json.dumps({"got": got, "idle": idle}))
"""


def run_processes(tmp_path, db, seed, n_proc=3) -> list[dict]:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    tests = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    procs = [subprocess.Popen([sys.executable, str(script), tests, str(db), str(me), str(seed)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for me in range(n_proc)]
    deadline = time.monotonic() + 120
    while not all(Path(f"{db}.ready{me}").exists() for me in range(n_proc)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    Path(f"{db}.go").touch()
    out = []
    for p in procs:
        so, se = p.communicate(timeout=300)
        assert p.returncode == 0, se
        out.append(json.loads(so))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("batching", ["exact", "fill"])
def test_concurrent_processes_stay_consistent(tmp_path, monkeypatch, batching):
    seed, budget = 8, 200
    table, gold = binary_table(seed, K=60)
    db = tmp_path / "c.db"
    Campaign.create(db, policy="optkg", items=caps_of(table), budget=budget, seed=seed,
                    batching=batching).close()
    results = run_processes(tmp_path, db, seed)
    handed = [qid for r in results for qid in r["got"]]
    assert sum(1 for r in results if r["got"]) >= 2  # the processes really shared the work
    camp = Campaign.open(db)  # rebuilds the policy from the log: checks every decision
    qs = camp.queries()
    assert sorted(handed) == [q.id for q in qs]  # each query handed to exactly one process
    assert len(qs) == budget
    n_handed = camp.conn.execute("SELECT count(*), min(handed), max(handed) FROM queries"
                                 ).fetchone()
    assert n_handed == (budget, 1, 1)
    st = camp.status()
    assert st["answers"] == budget and st["done"]
    assert len(set(camp.answers())) == budget
    if batching == "exact":
        trace, acc = replay_trace(monkeypatch, table, gold, budget=budget, seed=seed)
        assert [camp.item_index[q.item] for q in qs] == trace


def test_two_campaign_objects_in_one_process_interleave(tmp_path):
    """The same guarantees without processes (fast): a and b alternate on one file."""
    table, _ = binary_table(2, K=30)
    from crowdopt.campaign import TableOracle

    db = tmp_path / "t.db"
    a = Campaign.create(db, policy="optkg", items=caps_of(table), budget=80, seed=2)
    b = Campaign.open(db)
    oracle, rng = TableOracle(table, seed=2), random.Random(0)
    seen: list[int] = []
    for _ in range(400):
        me = rng.choice([a, b])
        qs = me.next(rng.randint(1, 5))
        seen += [q.id for q in qs]
        (rng.choice([a, b])).record([oracle.answer(q) for q in qs])
    assert len(seen) == len(set(seen)) == 80
    assert a.status()["labels"] == b.status()["labels"]
    assert a.status()["done"]


HTTP_CLIENT = r"""
import http.client, json, os, random, sys, time
port_file, token, me, stop = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rng = random.Random(me)
confirmed, sent = {}, 0


def call(path, body):
    # retry until the server answers (it is killed and restarted under us)
    while True:
        try:
            port = int(open(port_file).read())
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("POST", path, json.dumps(body), {"Authorization": f"Bearer {token}"})
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
    code, doc = call("/next", {"n": rng.randint(1, 6), "lease": 0.3})
    if not doc.get("queries"):
        time.sleep(0.02)
        continue
    # a slow crowd now and then: the lease runs out and the query goes to someone else
    time.sleep(0.6 if rng.random() < 0.25 else rng.random() * 0.02)
    rows = [{"item": q["item"], "worker": f"c{me}-{q['query']}", "label": str(rng.randint(0, 1))}
            for q in doc["queries"]]
    code, res = call("/record", {"answers": rows})
    assert code == 200, (code, res)
    for row, r in zip(rows, res["results"]):
        confirmed[(row["item"], row["worker"])] = r["status"]
print(json.dumps({"confirmed": [[k[0], k[1], v] for k, v in confirmed.items()]}))
"""


@pytest.mark.slow
def test_kill_9_of_server_and_cli_under_4_clients_with_expiring_leases(tmp_path):
    """The fault run: 4 HTTP clients whose leases expire (late answers), a CLI client, the
    server and the CLI killed with SIGKILL at random instants. Every confirmed answer is in
    the file exactly once: stored == confirmed stored + late, no duplicate, no valid row
    refused."""
    import signal
    import socket

    db = tmp_path / "f.db"
    camp = Campaign.create(db, policy="optkg", items=[f"i{k}" for k in range(300)],
                           budget=100_000, seed=1, batching="fill")
    token = camp.new_tokens["admin"]
    camp.close()
    port_file = tmp_path / "port"
    rng = random.Random(5)

    def serve():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        p = subprocess.Popen([sys.executable, "-m", "crowdopt", "campaign", "serve", str(db),
                              "--port", str(port)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        port_file.write_text(str(port))
        return p

    script = tmp_path / "client.py"
    script.write_text(HTTP_CLIENT)
    srv = serve()
    stop = tmp_path / "stop"
    clients = [subprocess.Popen([sys.executable, str(script), str(port_file), token, str(me),
                                 str(stop)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for me in range(4)]
    cli_confirmed: dict = {}
    kills = {"server": 0, "cli": 0}
    batch = attempts = 0
    box = {"srv": srv, "done": False}

    def up() -> None:  # until the (re)started server answers
        while True:
            try:
                port = int(port_file.read_text())
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return
            except (OSError, ValueError):
                time.sleep(0.1)

    def killer():  # the server dies mid-request, twice, and is restarted
        for _ in range(2):
            up()
            time.sleep(3 + rng.random() * 2)
            box["srv"].send_signal(signal.SIGKILL)
            box["srv"].wait()
            kills["server"] += 1
            box["srv"] = serve()
        up()
        time.sleep(4)
        box["done"] = True

    import threading

    k = threading.Thread(target=killer)
    k.start()
    while not box["done"]:
        # the CLI path: next, then record, killed now and then and simply run again
        nxt = subprocess.run([sys.executable, "-m", "crowdopt", "campaign", "next", str(db),
                              "--n", "3", "--lease", "0.3", "--json"], capture_output=True,
                             text=True)
        if nxt.returncode != 0:
            continue  # a busy file (exit 6): nothing was handed out
        qs = json.loads(nxt.stdout)["queries"]
        if not qs:
            continue
        batch += 1
        ans = tmp_path / f"cli{batch}.csv"
        ans.write_text("item,worker,label\n" + "".join(
            f"{q['item']},cli-{q['query']},1\n" for q in qs))
        while True:
            p = subprocess.Popen([sys.executable, "-m", "crowdopt", "campaign", "record",
                                  str(db), str(ans), "--json"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            attempts += 1
            if attempts % 2:  # every other run of `record` dies at a random instant
                time.sleep(rng.random() * 1.5)
                p.send_signal(signal.SIGKILL)
            out, _ = p.communicate()
            kills["cli"] += p.returncode == -9
            if p.returncode == 0:
                for r in json.loads(out)["results"]:
                    cli_confirmed[(r["item"], r["worker"])] = r["status"]
                break
            assert p.returncode in (-9, 6), out  # killed or busy: run it again
    k.join()
    stop.touch()
    confirmed = dict(cli_confirmed)
    for c in clients:
        out, err = c.communicate(timeout=120)
        assert c.returncode == 0, err[-2000:]
        confirmed.update({(i, w): s for i, w, s in json.loads(out)["confirmed"]})
    box["srv"].send_signal(signal.SIGKILL)
    box["srv"].wait()
    statuses = list(confirmed.values())
    assert "rejected" not in statuses  # no valid row refused
    assert kills["server"] >= 1 and statuses.count("late") >= 1
    camp = Campaign.open(db)  # rebuilt from the log: every decision checked
    stored = camp.answers()
    keys = [(i, w) for i, w, _ in stored]
    assert len(keys) == len(set(keys))  # no answer twice
    assert set(keys) == set(confirmed)  # every confirmed answer, nothing else
    st = camp.status()
    assert st["answers"] == len(confirmed) == statuses.count("stored") + statuses.count(
        "late") + statuses.count("duplicate")  # a duplicate: a re-send after a lost reply
    assert st["late"] >= statuses.count("late")
    print(f"fault run: {kills['server']} server and {kills['cli']} CLI kills; {st['answers']} "
          f"answers stored = {statuses.count('stored')} confirmed stored + "
          f"{statuses.count('late')} late + {statuses.count('duplicate')} re-sent; "
          "0 duplicated, 0 refused")
