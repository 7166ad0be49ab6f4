"""Opt-KG simulation, replay protocol and CLI (paper 002, Sec. 8)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crowdopt.cli import main
from crowdopt.crowd.tables import from_arrays, gold_from_arrays
from crowdopt.errors import InputError
from crowdopt.sim.optkg_replay import load_table, replay
from crowdopt.sim.optkg_sim import heterogeneous_replication, homogeneous_replication, mean_curves


@pytest.mark.slow
def test_homogeneous_replication_seeded_and_prefix_budgets():
    kw = {"theta_dist": [2, 2], "K": 20, "budgets": [40, 100],
          "policies": ["optkg", "uniform", "kg", "nlu", "cvar", "gittins"]}
    r1 = homogeneous_replication(**kw, seed=5)
    r2 = homogeneous_replication(**kw, seed=5)
    assert r1["accuracy"] == r2["accuracy"]
    # a prefix of the long run equals a run with the short budget (T-independent policies)
    r3 = homogeneous_replication(**{**kw, "budgets": [40]}, seed=5)
    for p in ("optkg", "uniform", "kg", "nlu", "cvar"):
        assert r3["accuracy"][p][0] == r1["accuracy"][p][0]
    assert all(0 <= a <= 1 for v in r1["accuracy"].values() for a in v)
    with pytest.raises(InputError):
        homogeneous_replication(theta_dist=[0, 1], seed=0)
    with pytest.raises(InputError):
        homogeneous_replication(theta_dist=[1, 1], policies=["kos"], seed=0)


def test_heterogeneous_replication_and_mean_curves():
    recs = [heterogeneous_replication(K=10, M=8, budgets=[20, 60], seed=s, worker_prior="true")
            for s in range(3)]
    cur = mean_curves(recs)
    assert cur["budgets"] == [20, 60] and cur["reps"] == 3
    assert set(cur["mean"]) == {"optkg", "uniform", "kg"}
    assert all(0 < s <= 1 for r in recs for v in r["top_worker_share"].values() for s in v)


def _toy_table(seed=0, K=30, per=5):
    rng = np.random.default_rng(seed)
    tasks, workers, labels = [], [], []
    for i in range(K):
        for j in rng.choice(12, per, replace=False):
            tasks.append(f"t{i}")
            workers.append(f"w{j}")
            labels.append(int(rng.random() < 0.5 + 0.4 * (i % 2 == 0) - 0.2))
    table = from_arrays(tasks, workers, labels)
    gold = gold_from_arrays(table, [f"t{i}" for i in range(K)], [int(i % 2 == 0)
                                                                 for i in range(K)])
    return table, gold


@pytest.mark.slow
def test_replay_invariant_all_labels_gives_majority_vote_ties_positive():
    table, gold = _toy_table()
    votes = table.vote_counts()
    mv = (votes[:, 1] >= votes[:, 0]).astype(int)
    truth = gold.truth(table.n_tasks)
    want = float(np.mean(mv == truth))
    for pol in ("optkg", "kg", "uniform", "nlu", "pessimistic", "gittins"):
        res = replay(table, gold, policy=pol, budgets=[table.n_labels], seed=3)
        assert res["accuracy"][0] == pytest.approx(want)
    for pol in ("optkg", "kg", "uniform"):
        res = replay(table, gold, policy=pol, budgets=[50, table.n_labels], seed=1,
                     mode="heterogeneous")
        assert len(res["accuracy"]) == 2
    with pytest.raises(InputError):
        replay(table, gold, policy="optkg", budgets=[table.n_labels + 1])
    with pytest.raises(InputError):
        replay(table, gold, policy="nlu", budgets=[10], mode="heterogeneous")


@pytest.mark.slow
def test_replay_on_rte(data_dir):
    table, gold = load_table("rte")
    assert (table.n_tasks, table.n_labels) == (800, 8000)
    res = replay(table, gold, policy="optkg", budgets=[1600, 3200], seed=0)
    assert 0.7 < res["accuracy"][0] < res["accuracy"][1] < 0.95
    res = replay(table, gold, policy="optkg", budgets=[3200], seed=0, mode="heterogeneous")
    assert 0.85 < res["accuracy"][0] < 0.95
    votes = table.vote_counts()  # replay invariant at T = all labels (digest 6.2.7)
    want = float(np.mean((votes[:, 1] >= votes[:, 0]) == gold.truth(table.n_tasks)))
    for pol in ("optkg", "kg", "uniform", "nlu"):
        assert replay(table, gold, policy=pol, budgets=[8000], seed=2)["accuracy"][0] == want


def test_cli_simulate_replay_json_and_errors(tmp_path, capsys):
    assert main(["simulate", "optkg", "--K", "10", "--budgets", "2K,4K", "--runs", "2",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["budgets"] == [20, 40] and "optkg" in out["accuracy"]
    assert main(["simulate", "optkg", "--model", "heterogeneous", "--K", "5", "--M", "4",
                 "--budgets", "10", "--runs", "1", "--quiet"]) == 0
    capsys.readouterr()
    table, gold = _toy_table()
    lab, gd = tmp_path / "labels.csv", tmp_path / "gold.csv"
    lab.write_text("task,worker,label\n" + "\n".join(f"{t},{w},{c}" for t, w, c in table.rows()))
    gd.write_text("task,label\n" + "\n".join(f"t{i},{int(i % 2 == 0)}" for i in range(30)))
    assert main(["replay", "optkg", str(lab), "--gold", str(gd), "--budget", "60", "--json",
                 "--policy", "kg"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert 0 <= out["accuracy"] <= 1 and out["budget"] == 60
    assert main(["replay", "optkg", str(lab), "--gold", str(gd), "--budget", "9999"]) == 2
    assert main(["replay", "optkg", str(lab), "--budget", "10"]) == 2  # no gold
    assert main(["simulate", "optkg", "--budgets", "x"]) == 2
    assert main(["simulate", "optkg", "--prior", "0,1", "--reps", "1"]) == 2


@pytest.mark.slow
def test_reproduce_report_tiny(tmp_path, monkeypatch, data_dir):
    pytest.importorskip("matplotlib", reason="report plots need the plot extra")
    from crowdopt.experiments import optkg_repro as rp

    tiny = {"K": 10, "mults": [2, 4], "reps": 2, "sim_gittins": False, "replay_mults": [1, 2],
            "replay_reps": 1, "datasets": ["rte"], "dp": [(2, 4)]}
    monkeypatch.setitem(rp.SCALES, "smoke", tiny)
    monkeypatch.setattr(rp, "TABLE4", {1600: (1.09, 25.87)})
    out = rp.reproduce(tmp_path, scale="smoke", show_progress=False,
                       only=["dp", "fig10", "fig11", "replay", "table4"])
    text = (tmp_path / "report.md").read_text()
    assert "92.05" in text and "Table 4" in text
    assert (tmp_path / "rte_heterogeneous.png").exists() and (tmp_path / "fig10a.png").exists()
    assert out["failed_tasks"] == [] and "rte/homogeneous" in out["accuracy"]
    assert abs(out["dp"][0]["DP*"] - 0.78125) < 1e-12
    assert "kos" in out["accuracy"]["fig11a"] and "Opt-KG - KOS at max T" in text
    assert "KOS is not implemented" not in text
    with pytest.raises(InputError):
        rp.reproduce(tmp_path, only=["nothing"])
    tiny["datasets"] = ["rte", "no-such-set"]  # a set it cannot have stops it before any work
    with pytest.raises(InputError, match="no-such-set"):
        rp.reproduce(tmp_path / "again", scale="smoke", show_progress=False, only=["replay"])
    assert not (tmp_path / "again").exists()


def test_kos_baseline_graph_is_simple_and_biregular():
    from crowdopt.policies.kos_baseline import biregular_graph, degrees
    rng = np.random.default_rng(0)
    assert degrees(7, 3, rng).tolist().count(3) == 1 and degrees(7, 3, rng).sum() == 7
    for K, M, T in [(50, 100, 100), (50, 100, 1000), (10, 8, 37), (5, 4, 20)]:
        task, worker = biregular_graph(K, M, T, rng)
        assert len(np.unique(task * M + worker)) == T            # no repeated pair
        for deg, n in ((np.bincount(task, minlength=K), K), (np.bincount(worker, minlength=M), M)):
            assert deg.sum() == T and deg.max() - deg.min() <= 1 and deg.min() == T // n
    with pytest.raises(InputError, match="budget"):
        biregular_graph(3, 2, 7, rng)


def test_kos_in_the_heterogeneous_replication():
    rec = heterogeneous_replication(K=50, M=100, budgets=[100, 1000], seed=3,
                                    policies=["optkg", "kos"])
    assert set(rec["accuracy"]) == {"optkg", "kos"}
    # T = 2K: every worker answers one task, every message is 0, every task is labelled +1
    rng = np.random.default_rng(3)
    theta = rng.beta(1.0, 1.0, size=50)
    assert rec["accuracy"]["kos"][0] == pytest.approx(np.mean(theta >= 0.5))
    assert rec["top_worker_share"]["kos"] == [1 / 100, 10 / 1000]
    assert rec["accuracy"]["kos"][1] > 0.6
    again = heterogeneous_replication(K=50, M=100, budgets=[100, 1000], seed=3,
                                      policies=["kos"])
    assert again["accuracy"]["kos"] == rec["accuracy"]["kos"]   # seeded, order-independent


@pytest.mark.parametrize("budget", ["0", "-5"])
def test_replay_rejects_a_budget_below_one(tmp_path, capsys, budget):
    labels = tmp_path / "l.csv"
    labels.write_text("task,worker,label\n1,a,1\n1,b,0\n2,a,1\n")
    gold = tmp_path / "g.csv"
    gold.write_text("task,label\n1,1\n2,1\n")
    from crowdopt.cli import main

    assert main(["replay", "optkg", str(labels), "--gold", str(gold), "--budget", budget]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--budget" in err[0] and budget in err[0]
