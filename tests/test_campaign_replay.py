"""Live campaigns on real tables equal the replays, label for label, also when the driver is
killed with SIGKILL at a random SQL statement (inside a transaction or between two) and
restarted: Opt-KG on rte (3,200 labels, batches of 50), heterogeneous Opt-KG on rte (in a
SQLite file and in PostgreSQL), LS_OL on bluebirds. The driver runs in a subprocess; the
store's statement hook (`CampaignStore.trace`) kills it."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import crowdopt.sim.lsol_replay as lrp
from crowdopt.campaign import Campaign
from crowdopt.crowd.datasets import load_table

sys.path.insert(0, str(Path(__file__).parent))
from campaign_db import STORES_SOAK  # noqa: E402
from test_campaign import gold_dict, lsol_trace, replay_accuracy, replay_trace  # noqa: E402

DRIVER = r"""
import os, random, signal, sys
from crowdopt.campaign import Campaign, TableOracle
from crowdopt.crowd.datasets import load_table

db, dataset, mode, seed, batch, kill_at = sys.argv[1:7]
camp = Campaign.open(db)
if int(kill_at):
    count = [0]
    def trace(_stmt):
        count[0] += 1
        if count[0] == int(kill_at):
            os.kill(os.getpid(), signal.SIGKILL)
    if hasattr(camp.conn, "set_trace_callback"):  # SQLite: every statement it runs
        camp.conn.set_trace_callback(trace)
    else:
        camp.store.trace = trace
oracle = TableOracle(load_table(dataset)[0], seed=int(seed), mode=mode)
rng = random.Random(int(kill_at))
while True:
    qs = camp.queries(open_only=True)  # handed out before a crash and not answered yet
    if not qs:
        qs = camp.next(int(batch))
    if not qs:
        break
    answers = [oracle.answer(q) for q in qs]
    rng.shuffle(answers)  # the platform returns them in any order, in two requests
    cut = rng.randint(0, len(answers))
    camp.record(answers[:cut])
    camp.record(answers[cut:])
print(camp.status()["answers"])
"""


def run_driver(tmp_path, db, dataset, mode, seed, batch, kills: list[int]) -> None:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    for kill_at in [*kills, 0]:
        r = subprocess.run([sys.executable, str(script), str(db), dataset, mode, str(seed),
                            str(batch), str(kill_at)], capture_output=True, text=True,
                           timeout=300, env=env)
        if kill_at:
            assert r.returncode == -9, r.stderr  # killed mid-run (not finished before)
            check_file(db)
        else:
            assert r.returncode == 0, r.stderr


def check_file(db) -> None:
    """After a crash: the file is intact and every answer closed exactly its query."""
    sql = ("SELECT count(*) FROM queries q LEFT JOIN answers a ON a.query = q.id "
           "WHERE (q.open = 0) != (a.query IS NOT NULL)")
    if isinstance(db, str) and db.startswith("postgresql://"):
        camp = Campaign.open(db, readonly=True)
        assert camp.conn.execute(sql).fetchone()[0] == 0
        camp.close()
        return
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute(sql).fetchone()[0] == 0
    con.close()


@pytest.mark.slow
def test_rte_optkg_campaign_equals_replay_through_kills(tmp_path, monkeypatch, data_dir):
    table, gold = load_table("rte")
    seed, budget = 0, 3200
    trace, acc = replay_trace(monkeypatch, table, gold, budget=budget, seed=seed)
    db = tmp_path / "rte.db"
    Campaign.create(db, policy="optkg", items="dataset:rte", budget=budget, seed=seed).close()
    kills = sorted(random.Random(16).sample(range(50, 12_000), 2))
    run_driver(tmp_path, db, "rte", "homogeneous", seed, 50, kills)
    camp = Campaign.open(db)
    assert [camp.item_index[q.item] for q in camp.queries()] == trace  # label for label
    st = camp.status(gold=gold_dict(table, gold))
    assert st["answers"] == budget == st["spent"] and st["done"]
    assert st["accuracy"] == acc


@pytest.mark.slow
@pytest.mark.parametrize("campaign_at", STORES_SOAK, indirect=True)
def test_rte_heterogeneous_campaign_equals_replay_through_a_kill(tmp_path, monkeypatch,
                                                                 data_dir, campaign_at):
    table, gold = load_table("rte")
    seed, budget = 3, 300
    trace, acc = replay_trace(monkeypatch, table, gold, budget=budget, seed=seed,
                              mode="heterogeneous")
    db = campaign_at("het.db")
    Campaign.create(db, policy="optkg-het", items="dataset:rte", workers="dataset:rte",
                    pairs="dataset:rte", budget=budget, seed=seed).close()
    run_driver(tmp_path, db, "rte", "heterogeneous", seed, 50, [random.Random(3).randint(50, 1200)])
    camp = Campaign.open(db)
    got = [(camp.item_index[q.item], camp.worker_index[q.worker]) for q in camp.queries()]
    assert got == trace
    st = camp.status(gold=gold_dict(table, gold))
    assert st["answers"] == budget and replay_accuracy(camp, gold_dict(table, gold)) == acc


@pytest.mark.slow
def test_bluebirds_lsol_campaign_equals_replay_through_a_kill(tmp_path, monkeypatch, data_dir):
    table, gold = load_table("bluebirds")
    acts, res = lsol_trace(monkeypatch, table, gold, rule="mv", G1=2.0, cost_weight=0.01,
                           prior=1.0, order="file", seed=5)
    db = tmp_path / "bb.db"
    Campaign.create(db, policy="lsol", items="dataset:bluebirds", workers="dataset:bluebirds",
                    budget=10_000, seed=5,
                    params={"rule": "mv", "G1": 2.0, "price": 0.01, "prior": 1.0}).close()
    run_driver(tmp_path, db, "bluebirds", "dense", 0, 60, [random.Random(5).randint(20, 150)])
    camp = Campaign.open(db)
    by_k: dict = {}
    for q in camp.queries():
        by_k.setdefault(q.decision, []).append(camp.worker_index[q.worker])
    assert [by_k[k] for k in sorted(by_k)] == [a[1] for a in acts]
    st = camp.status(gold=gold_dict(table, gold))
    assert st["answers"] == res["labels_spent"] and st["accuracy"] == res["accuracy"]
    assert st["lsol"]["selected"] == res["selected"]
    assert st["lsol"]["testers"] == res["testers"]
    assert lrp.LSOL.__name__ == "LSOL"  # the monkeypatch was undone
