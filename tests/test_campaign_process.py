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

db, me, seed, sig = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
table, _ = binary_table(seed, K=60)
oracle = TableOracle(table, seed=seed)
camp = Campaign.open(db)
rng = random.Random(me)
got, idle = [], 0
open(f"{sig}.ready{me}", "w").close()
while not os.path.exists(f"{sig}.go"):  # start together
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
    sig = tmp_path / "sig"  # the start signal's files
    procs = [subprocess.Popen([sys.executable, str(script), tests, str(db), str(me), str(seed),
                               str(sig)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for me in range(n_proc)]
    deadline = time.monotonic() + 120
    while not all(Path(f"{sig}.ready{me}").exists() for me in range(n_proc)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    Path(f"{sig}.go").touch()
    out = []
    for p in procs:
        so, se = p.communicate(timeout=300)
        assert p.returncode == 0, se
        out.append(json.loads(so))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("campaign_at,batching", [
    ("sqlite", "exact"), ("sqlite", "fill"),
    pytest.param("postgresql", "fill", marks=[pytest.mark.postgres, pytest.mark.soak])],
    indirect=["campaign_at"])
def test_concurrent_processes_stay_consistent(tmp_path, monkeypatch, campaign_at, batching):
    seed, budget = 8, 200
    table, gold = binary_table(seed, K=60)
    db = campaign_at("c.db")
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
