"""LS_OL replay: query semantics on a small synthetic table, baselines, and real data sets."""

from __future__ import annotations

import numpy as np
import pytest

from crowdopt.crowd.tables import from_arrays, gold_from_arrays
from crowdopt.errors import InputError
from crowdopt.sim.lsol_replay import (
    AnswerAgreement,
    capped_baselines,
    mv_all_baseline,
    oracle_baseline,
    ranked_prefix_curve,
    replay,
    replay_task,
    sequential_query,
)


def synthetic_table(seed=0, n=300, W=7, sparse=False):
    rng = np.random.default_rng(seed)
    p = np.array([0.95, 0.9, 0.85, 0.6, 0.55, 0.3, 0.5])[:W]
    truth = rng.integers(2, size=n)
    right = rng.random((n, W)) < p
    lab = np.where(right, truth[:, None], 1 - truth[:, None])
    keep = rng.random((n, W)) < 0.6 if sparse else np.ones((n, W), bool)
    t, w = np.nonzero(keep)
    table = from_arrays(t, w, lab[t, w])
    gold = gold_from_arrays(table, np.arange(n), truth)
    return table, gold, p


def test_replay_beats_mv_all_and_spends_fewer_labels():
    table, gold, _ = synthetic_table()
    r = replay(table, gold, G1=2.0, cost_weight=0.01, seed=0)
    assert r["accuracy"] >= r["mv_all"]["accuracy"] - 0.02
    assert r["labels_spent"] < r["mv_all"]["labels"] / 2
    assert r["oracle"]["accuracy"] >= r["mv_all"]["accuracy"]
    assert r["testers"] == r["explore_steps"]  # D2 = 0: no re-assignment in a fixed table
    assert r["curve"][-1]["labels"] == r["labels_spent"]


def test_replay_sparse_table_buys_available_labels():
    table, gold, _ = synthetic_table(1, sparse=True)
    r = replay(table, gold, G1=1.0, cost_weight=0.01, seed=1)
    D = table.dense()
    assert r["labels_spent"] <= int((D >= 0).sum())
    assert r["accuracy"] > 0.8


def test_replay_seeded():
    table, gold, _ = synthetic_table(2)
    a = replay(table, gold, order="shuffle", seed=3)
    b = replay(table, gold, order="shuffle", seed=3)
    assert a == b


def test_baselines_on_a_hand_table():
    D = np.array([[0, 0, 1], [1, 1, 0], [0, 1, -1]])
    truth = np.array([0, 1, 1])
    mv = mv_all_baseline(D, truth, 2)
    assert mv["accuracy"] == pytest.approx((1 + 1 + 0.5) / 3)
    orc = oracle_baseline(D, truth, 2)
    assert orc["k"] == 1 and orc["workers"][0] == 1 and orc["accuracy"] == 1.0


def test_capped_hindsight_sets_respect_the_cap():
    table, gold, p = synthetic_table(1, sparse=True)
    D, truth = table.dense(), gold.truth(table.n_tasks)
    curve = ranked_prefix_curve(D, truth, 2, p)
    assert curve[0]["workers"] == [0]
    assert curve[-1]["accuracy"] == pytest.approx(mv_all_baseline(D, truth, 2)["accuracy"])
    cap = capped_baselines(D, truth, 2, 1.5)
    assert cap["oracle"]["labels_per_task"] <= 1.5 and cap["oracle"]["k"] == 1
    assert cap["labels_only"]["accuracy"] > 0.8  # EM on all labels ranks the 0.95 worker


def test_real_bluebirds_and_possent(data_dir):
    r = replay_task("bluebirds", G1=2.0, cost_weight=0.01, seed=0)
    assert r["workers"] == 39 and r["tasks"] == 108
    assert r["mv_all"]["accuracy"] == pytest.approx(0.7593, abs=1e-4)  # data README
    assert 0.5 < r["accuracy"] <= 1.0
    s = replay_task("sentiment_possent", G1=2.0, cost_weight=0.01, seed=0)
    assert s["mv_all"]["accuracy"] == pytest.approx(0.9335, abs=1e-4)
    assert s["labels_per_task"] < 10 and s["accuracy"] > 0.9


@pytest.mark.slow
def test_em_campaign_makes_the_replays_decisions(tmp_path, monkeypatch):
    import random

    from test_campaign import binary_table, drive, gold_dict, lsol_trace

    from crowdopt.campaign import Campaign, TableOracle

    table, gold = binary_table(3, K=40, W=7, dense=True)
    kw = dict(rule="mv", estimator="em", G1=1.0, cost_weight=0.02, prior=1.0, order="file",
              seed=4)
    acts, res = lsol_trace(monkeypatch, table, gold, **kw)
    camp = Campaign.create(tmp_path / "c.db", policy="lsol",
                           items=[str(t) for t in table.task_ids],
                           workers=[str(w) for w in table.worker_ids], budget=10_000, seed=4,
                           params={"rule": "mv", "estimator": "em", "G1": 1.0, "price": 0.02,
                                   "prior": 1.0})
    drive(camp, TableOracle(table, mode="dense"), random.Random(2), max_n=15)
    by_k: dict = {}
    for q in camp.queries():
        by_k.setdefault(q.decision, []).append(camp.worker_index[q.worker])
    assert [by_k[k] for k in sorted(by_k)] == [a[1] for a in acts]
    st = camp.status(gold=gold_dict(table, gold))
    assert st["accuracy"] == res["accuracy"]


def test_em_replay_on_a_weak_crowd_table():
    table, gold, _ = synthetic_table(4)
    r = replay(table, gold, estimator="em", G1=2.0, cost_weight=0.01, seed=0)
    assert r["accuracy"] >= r["mv_all"]["accuracy"] - 0.02


def test_wmv_with_a_price_on_a_large_crowd_searches_the_strongest_votes():
    rng = np.random.default_rng(5)
    n, W = 80, 45
    p = rng.uniform(0.45, 0.95, W)
    truth = rng.integers(2, size=n)
    lab = np.where(rng.random((n, W)) < p, truth[:, None], 1 - truth[:, None])
    t, w = np.nonzero(rng.random((n, W)) < 0.7)
    table = from_arrays(t, w, lab[t, w])
    gold = gold_from_arrays(table, np.arange(n), truth)
    r = replay(table, gold, rule="wmv", G1=2.0, cost_weight=0.001, seed=0)
    assert 0 < len(r["selected"]) <= 20 and r["accuracy"] > 0.8


def test_sequential_query_buys_in_p_order_until_the_posterior_is_confident():
    row = np.array([1, 0, 1, -1, 1, 1])  # worker 3 did not label the task
    cand = np.flatnonzero(row >= 0)
    p = np.array([0.9, 0.8, 0.7, 0.99, 0.6, 0.55])
    w = np.log(p / (1 - p))
    # order 0, 1, 2, 4, 5: after three labels the scores are (w1, w0 + w2)
    bought, score = sequential_query(row, cand, p, w, 2, 0.8, 3, 5)
    assert bought.tolist() == [0, 1, 2]
    assert score == pytest.approx([w[1], w[0] + w[2]])
    q1 = 1 / (1 + np.exp(w[1] - w[0] - w[2]))
    assert q1 >= 0.8  # the stop: posterior of class 1 reached the confidence
    bought, _ = sequential_query(row, cand, p, w, 2, q1 + 1e-9, 3, 5)
    assert bought.tolist() == [0, 1, 2, 4]  # a hair more confidence needs the next label
    bought, _ = sequential_query(row, cand, p, w, 2, 1.0, 1, 2)
    assert bought.tolist() == [0, 1]  # n_max caps the task


def test_answer_agreement_scores_each_label_against_the_others_vote():
    est = AnswerAgreement(4, prior=1.0)
    # weights 2, 1, 1: without worker 0 the vote is a tie (1 vs 1), so each label scores 1/2;
    # without worker 1 (or 2), worker 0's weight 2 wins for class 1
    est.add(np.array([0, 1, 2]), np.array([1, 0, 1]), np.array([2.0, 1.0, 1.0]), 2)
    est.add(np.array([3]), np.array([1]), np.array([1.0]), 2)  # alone: nothing to compare
    assert est.p_hat().tolist() == pytest.approx([1.5 / 3, 1 / 3, 2 / 3, 0.5])


def test_sequential_replay_stays_in_budget_and_ranks_the_best_worker_first():
    table, gold, p = synthetic_table(6, n=120)
    B = 4.0
    r = replay(table, gold, estimator="answers", exploit="sequential", budget=B,
               order="shuffle", seed=2)
    assert r["labels_spent"] <= B * r["tasks"] + 7  # only a tester's 7 labels may overdraw
    assert r["labels_per_task"] < 7  # fewer than every label
    assert r["accuracy"] >= r["mv_all"]["accuracy"] - 0.01
    assert r["budget"] == B and r["exploit"] == "sequential"
    assert r["selected"][0] == 0  # the 0.95 worker leads the set chosen on the answers
    d = replay(table, gold, estimator="answers", exploit="sequential", order="shuffle", seed=2)
    assert d["budget"] == pytest.approx(7 / 3)  # default: a third of the labels per task
    assert d["labels_spent"] <= 7 / 3 * d["tasks"] + 7


def test_replay_grid_puts_the_default_beside_majority_vote():
    from crowdopt.experiments.lsol_repro import REPLAY, build_tasks, replay_checks, replay_rows
    from crowdopt.sim.lsol_replay import REPLAY_DEFAULTS

    tasks = build_tasks(scale="smoke", parts=["replay"])
    assert sum(t.params.get("exploit") == "sequential" for t in tasks) == 3 * 2
    base = {"mv_all": {"accuracy": 0.8, "labels_per_task": 9.0, "gold_tasks_labelled": 10},
            "oracle": {"k": 1, "accuracy": 0.9, "labels_per_task": 1.0,
                       "gold_tasks_labelled": 10}, "within_third": {}}

    def rec(params, acc, lpt):
        return {"fn": REPLAY, "params": {"dataset": "bluebirds", "order": "shuffle", **params},
                "error": None, "result": {**base, "accuracy": acc, "labels_per_task": lpt,
                                          "testers": 5}}

    records = [rec({"cost_weight": 0.01, "estimator": "pooled"}, 0.7, 2.0),
               rec({"cost_weight": 0.01, **REPLAY_DEFAULTS}, 0.85, 2.9),
               rec({"cost_weight": 0.01, **REPLAY_DEFAULTS}, 0.83, 3.1)]
    rows = replay_rows(records)
    assert [r["method"] for r in rows][:2] == ["LS_OL pooled",
                                                 "LS_OL answers, sequential (default)"]
    assert rows[1]["accuracy"] == pytest.approx(0.84) and rows[1]["runs"] == 2
    checks = {c["estimator"]: c for c in replay_checks(rows)}
    assert checks["answers, sequential (default)"][">= majority vote"]
    assert not checks["pooled"][">= majority vote"]


@pytest.mark.parametrize("extra", [0.0, 0.05, 1.0])
def test_sequential_replay_keeps_its_budget_and_answers_every_task(extra):
    """At the minimum budget (its testers, each a fully labeled task, and one label for each
    other task) and above, a replay spends at most B per task and answers every task from a
    bought label; a budget below the minimum is refused naming it."""
    from crowdopt.policies.lsol import Schedule
    from crowdopt.sim.lsol_replay import min_budget, tester_steps

    table, gold, _ = synthetic_table(0, n=60)
    need = min_budget(60, tester_steps(Schedule(2.0, 0.0), 60), 7)  # a full table: 7 a task
    for seed in range(3):
        r = replay(table, gold, estimator="answers", exploit="sequential", budget=need + extra,
                   order="shuffle", seed=seed)
        assert r["labels_spent"] <= (need + extra) * r["tasks"] + 1e-9
        assert r["gold_tasks_labelled"] == r["gold_tasks"] == 60
    assert need == (9 * 7 + 51) / 60  # 9 testers of 7 labels, one label for the other 51
    with pytest.raises(InputError, match=r"^budget: expected a number >= 1\.9 labels per task"):
        replay(table, gold, estimator="answers", exploit="sequential", budget=need - 0.01)


def test_sequential_replay_with_a_budget_past_every_label_buys_as_without_a_cap():
    table, gold, _ = synthetic_table(0, n=60)
    runs = [replay(table, gold, estimator="answers", exploit="sequential", budget=B,
                   order="shuffle", seed=0) for B in (7.0, 1e308)]  # 7 labels per task
    assert runs[0]["labels_spent"] == runs[1]["labels_spent"]
    assert runs[0]["accuracy"] == runs[1]["accuracy"] and runs[1]["budget"] == 1e308
