"""OLAS active-learning loop (sim/olas_loop.py), UCI presets (sim/uci.py), reproduction grid
(experiments/olas_repro.py) and `crowdopt simulate|reproduce olas`."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from crowdopt.cli import main
from crowdopt.errors import InputError
from crowdopt.experiments.executor import run_tasks
from crowdopt.experiments.olas_repro import (
    PAPER,
    build_tasks,
    qualitative_checks,
    reproduce,
    summarize,
)
from crowdopt.problems.olas_noise import LinearNoise, SuperellipseNoise
from crowdopt.sim.olas_loop import (
    STRATEGIES,
    choose_queries,
    make_classifier,
    make_config,
    make_setup,
    run_replication,
    simulate_labels,
    summarize_replications,
)
from crowdopt.sim.uci import PRESETS, Dataset, load_csv_dataset, load_uci

sklearn = pytest.importorskip("sklearn")


def synthetic(n=160, classes=2, seed=0) -> Dataset:
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_redundant=0,
                               n_classes=classes, n_clusters_per_class=1, random_state=seed)
    return Dataset("synthetic", X, y.astype(np.int64), [str(c) for c in range(classes)],
                   1 if classes == 2 else None)


FAST = {"classifier": "logreg", "cycles": 3, "labelers": 3, "capacity": 4}


# ----------------------------------------------------------------------------- config
@pytest.mark.parametrize("bad", [{"budget": 13}, {"classifier": "svm"}, {"noise_mode": "x"},
                                 {"alpha": 1.5}, {"cycles": 0}, {"acc_min": 0.9, "acc_max": 0.5},
                                 {"entropy_normalize": "log2"}, {"noise": "quadratic"},
                                 {"unknown": 1}, {"init_frac": 1.0}])
def test_config_rejects_bad_values(bad):
    with pytest.raises(InputError):
        make_config(**{**FAST, **bad})


def test_budget_defaults_to_total_capacity():
    assert make_config(**FAST).per_cycle == 12
    assert make_config(**FAST, budget=5).per_cycle == 5


def test_missing_scikit_learn_is_a_clear_input_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(InputError, match="crowdopt\\[al\\]"):
        make_classifier("rf", 0)


def test_more_classes_need_normalized_entropy_for_nm1():
    data = synthetic(classes=3)
    with pytest.raises(InputError, match="entropy_normalize"):
        run_replication(data, ["ES+OLA"], make_config(**FAST, entropy_normalize="none"), 0)
    res = run_replication(data, ["ES+OLA"], make_config(**FAST, entropy_normalize="lnC"), 0)
    assert len(res["methods"]["ES+OLA"]["f1"]) == FAST["cycles"] + 1


# ----------------------------------------------------------------------------- one cycle
def test_strategies_pick_and_assign_as_specified():
    rng = np.random.default_rng(1)
    e = np.round(rng.uniform(0, 0.69, 40), 2)  # ties on purpose
    acc = np.array([0.6, 0.9, 0.75])
    cap = np.array([3, 2, 4])
    noise = LinearNoise()
    for strategy in STRATEGIES:
        q, z = choose_queries(strategy, e, acc, cap, noise, 0.1, 7, np.random.default_rng(0))
        assert len(q) == len(z) <= 7
        assert len(set(q.tolist())) == len(q)
        assert np.all(np.bincount(z, minlength=3) <= cap)
        if strategy.startswith("ES"):  # Model 9: the 7 highest entropies, ties by pool order
            assert q.tolist() == np.argsort(-e, kind="stable")[:7].tolist()
        if strategy.endswith("+OLA"):  # Theorem 1: higher entropy never gets a worse labeler
            rank = {1: 0, 2: 1, 0: 2}
            order = np.argsort(-e[q], kind="stable")
            assert all(rank[int(a)] <= rank[int(b)] for a, b in zip(z[order], z[order][1:]))
        if strategy == "OLAS":  # (10d): every selected pair has eps <= beta
            assert np.all(noise.eps(acc[z], e[q]) <= 0.1 + 1e-12)
        else:
            assert len(q) == 7


def test_olas_with_beta_above_every_eps_is_es_ola():
    """Digest F4: beta >= max eps selects the top-min(u, C) entropies (= ES with B = C)."""
    e = np.random.default_rng(2).uniform(0, 0.69, 30)
    acc, cap = np.array([0.8, 0.6]), np.array([4, 3])
    q, _ = choose_queries("OLAS", e, acc, cap, SuperellipseNoise(), 1.0, 7, None)
    q_es, _ = choose_queries("ES+OLA", e, acc, cap, SuperellipseNoise(), 1.0, 7, None)
    assert sorted(q.tolist()) == sorted(q_es.tolist())


def test_threshold_and_bernoulli_label_simulators():
    rng = np.random.default_rng(0)
    y = np.array([0, 1, 1, 0, 1])
    eps = np.array([0.1, 0.2, 0.3, 0.19999, 0.0])
    labels, wrong = simulate_labels(y, eps, 0.2, "threshold", 2, rng)
    assert wrong.tolist() == [False, True, True, False, False]  # wrong iff eps >= alpha
    assert labels.tolist() == [0, 0, 0, 0, 1]
    labels, wrong = simulate_labels(y, np.array([0, 1, 0, 1, 0.0]), 0.2, "bernoulli", 2, rng)
    assert wrong.tolist() == [False, True, False, True, False]
    y3 = np.arange(300) % 4
    labels, wrong = simulate_labels(y3, np.ones(300), 0.5, "threshold", 4, rng)
    assert wrong.all() and np.all(labels != y3) and labels.min() >= 0 and labels.max() <= 3
    assert len(np.unique(labels[y3 == 0])) == 3  # uniform over the other classes


def test_setup_is_stratified_and_has_every_class_in_the_initial_set():
    data = synthetic(n=100)
    cfg = make_config(**FAST, init_frac=0.02)
    s = make_setup(data, cfg, 5)
    assert len(np.intersect1d(s.train, s.test)) == 0 and len(s.train) + len(s.test) == 100
    assert set(data.y[s.train][s.initial]) == {0, 1}
    assert np.all((s.accuracies >= 0.5) & (s.accuracies <= 0.95))
    s2 = make_setup(data, cfg, 5)
    assert np.array_equal(s.train, s2.train) and np.array_equal(s.accuracies, s2.accuracies)


# ----------------------------------------------------------------------------- the loop
def test_replication_runs_every_strategy_and_olas_buys_no_wrong_label():
    data = synthetic()
    cfg = make_config(**FAST, noise="linear", entropy_normalize="none", beta=0.15, alpha=0.2)
    res = run_replication(data, list(STRATEGIES), cfg, seed=3)
    m = res["methods"]
    assert list(m) == list(STRATEGIES)
    f1_0 = {v["f1"][0] for v in m.values()}
    assert len(f1_0) == 1  # shared split, initial set and classifier seed
    for name, v in m.items():
        assert len(v["f1"]) == cfg.cycles + 1 and len(v["wrong"]) == cfg.cycles
        assert all(0.0 <= f <= 1.0 for f in v["f1"])
        assert all(s <= cfg.per_cycle for s in v["selected"])
        assert v["total_wrong"] <= v["total_selected"]
        if name != "OLAS":
            assert v["total_selected"] == cfg.cycles * cfg.per_cycle
    # threshold simulator with beta < alpha: OLAS never buys a wrong label (digest 5.4, 7.8)
    assert m["OLAS"]["total_wrong"] == 0
    assert max(x for x in m["OLAS"]["max_noise"] if x is not None) <= 0.15 + 1e-12
    again = run_replication(data, ["OLAS", "RS+RLA"], cfg, seed=3)
    assert again["methods"]["RS+RLA"] == m["RS+RLA"]  # seeded: reproducible per strategy


def test_bernoulli_mode_and_pool_exhaustion():
    data = synthetic(n=60)
    cfg = make_config(**{**FAST, "cycles": 6}, noise_mode="bernoulli", noise="superellipse",
                      entropy_normalize="lnC")
    res = run_replication(data, ["RS+RLA"], cfg, seed=0)
    v = res["methods"]["RS+RLA"]
    pool = res["n_train"] - res["n_initial"]
    assert v["total_selected"] == pool  # the pool ran out before the last cycle
    assert v["selected"][-1] == 0


def test_replication_task_through_the_executor(tmp_path):
    csv = tmp_path / "d.csv"
    data = synthetic(n=90)
    rows = ["f1,f2,f3,f4,f5,f6,label"] + [",".join(f"{x:.5f}" for x in xr) + f",{'ab'[yv]}"
                                           for xr, yv in zip(data.X, data.y)]
    csv.write_text("\n".join(rows) + "\n")
    from crowdopt.experiments.executor import Task

    cfg = make_config(**FAST).to_dict()
    tasks = [Task("crowdopt.sim.olas_loop:replication_task",
                  {"dataset": {"csv": str(csv), "target": "label", "pos_label": "b"},
                   "strategies": ["ES+OLA", "OLAS"], "config": cfg}, seed=s) for s in (0, 1)]
    recs = run_tasks(tasks, jobs=1, show_progress=False)
    assert all(r["error"] is None for r in recs)
    rows = summarize_replications([r["result"] for r in recs])
    assert [r["strategy"] for r in rows] == ["ES+OLA", "OLAS"]
    assert rows[0]["reps"] == 2 and len(rows[0]["f1_per_cycle"]) == FAST["cycles"] + 1


# ----------------------------------------------------------------------------- data sets
def test_csv_dataset_reader(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b,y\n1,2,no\n3,4,yes\n5,6,no\n")
    d = load_csv_dataset(p, "y", seed=None)
    assert d.classes == ["no", "yes"] and d.pos_label == 1 and d.X.shape == (3, 2)
    with pytest.raises(InputError, match="--target"):
        load_csv_dataset(p, "z")
    p.write_text("a,b,y\n1,x,no\n3,4,yes\n")
    with pytest.raises(InputError, match="line 2 column b"):
        load_csv_dataset(p, "y")


def test_uci_presets_match_table_1(data_dir):
    expected = {"heart": (270, 13, 120), "ionosphere": (351, 34, 126), "sonar": (208, 60, 111),
                "spambase": (4601, 57, 1813)}
    for name, (n, d, pos) in expected.items():
        ds = load_uci(name, seed=1)
        assert ds.X.shape == (n, d) and int(ds.y.sum()) == pos
    assert [PRESETS[k].budget for k in expected] == [15, 20, 12, 258]
    sonar = load_uci("sonar", seed=None)
    assert sonar.y[:97].sum() == 0  # file order is sorted by class; the seed shuffles it
    assert load_uci("sonar", seed=1).y[:97].sum() > 0


@pytest.mark.slow
def test_loop_on_a_real_uci_set(data_dir):
    from crowdopt.sim.uci import preset_settings

    data = load_uci("sonar", seed=0)
    cfg = make_config(**preset_settings("sonar"), cycles=2, noise="superellipse")
    res = run_replication(data, list(STRATEGIES), cfg, seed=0)
    assert res["n_test"] == 42 and res["budget"] == 12
    assert res["methods"]["OLAS"]["total_wrong"] == 0
    assert res["methods"]["ES+RLA"]["total_wrong"] > 0


# ----------------------------------------------------------------------------- reproduction
def test_paper_tables_and_claims():
    rows = [{"dataset": d, "noise": n, "method": m, "f1_mean": PAPER[n][d][m][0],
             "paper_mean": PAPER[n][d][m][0]} for n in PAPER for d in PAPER[n] for m in STRATEGIES]
    checks = {c["claim"]: c["paper"] for c in qualitative_checks(rows)}
    # digest 000 section 5.3-5.4: OLAS best everywhere, by >= 0.4; ES+RLA worst in 8/8;
    # ES+OLA best baseline in 4/4 (NM1, Sonar tied) + 2/4 (NM2)
    assert checks["OLAS has the best F1"] == "8/8"
    assert checks["OLAS beats the best baseline by >= 0.4"] == "8/8"
    assert checks["ES+RLA is the worst method"] == "8/8"
    assert checks["ES+OLA is the best baseline"] == "6/8"


def test_build_tasks_grid_and_validation():
    tasks = build_tasks(scale="paper", reps=3)
    assert len(tasks) == 4 * 2 * 3 and {t.seed for t in tasks} == {0, 1, 2}
    assert all(t.params["config"]["cycles"] == 10 for t in tasks)
    assert tasks[0].params["config"]["entropy_normalize"] == "none"  # literal eq. 1 (presets)
    assert build_tasks(reps=1, entropy_normalize="lnC")[0].params["config"][
        "entropy_normalize"] == "lnC"
    smoke = build_tasks(scale="smoke")
    assert len(smoke) == 4 * 2 * 2
    with pytest.raises(InputError):
        build_tasks(scale="huge")
    with pytest.raises(InputError):
        build_tasks(datasets=["iris"])


def test_summarize_skips_failed_records():
    res = {"methods": {m: {"final_f1": 0.5, "f1": [0.4, 0.5], "total_wrong": 1,
                           "total_selected": 15} for m in STRATEGIES}}
    recs = [{"params": {"dataset": "heart", "config": {"noise": "linear"}}, "result": res,
             "error": None},
            {"params": {"dataset": "heart", "config": {"noise": "linear"}}, "result": None,
             "error": "boom"}]
    rows = summarize(recs)
    assert len(rows) == 5 and rows[0]["reps"] == 1 and rows[0]["diff"] == pytest.approx(0.5 - 0.344)


@pytest.mark.slow
def test_reproduce_writes_report_and_plot(tmp_path, data_dir):
    res = reproduce(tmp_path, scale="smoke", datasets=["sonar"], noises=["linear"], reps=1,
                    cycles=1, show_progress=False)
    assert res["failed"] == 0 and len(res["rows"]) == 5
    text = (tmp_path / "report.md").read_text()
    assert "0.769 ± 0.054" in text and "Connectionist Bench" in text
    assert "never buys a wrong label" in text  # threshold simulator, beta <= alpha
    assert (tmp_path / "f1_per_cycle_linear.png").stat().st_size > 1000


# ----------------------------------------------------------------------------- CLI
def test_cli_simulate_json(tmp_path, capsys):
    p = tmp_path / "d.csv"
    data = synthetic(n=80)
    p.write_text("x1,x2,x3,x4,x5,x6,y\n" + "\n".join(
        ",".join(f"{v:.4f}" for v in xr) + f",{yv}" for xr, yv in zip(data.X, data.y)) + "\n")
    code = main(["simulate", "olas", "--data", str(p), "--target", "y", "--cycles", "2",
                 "--labelers", "2", "--capacity", "3", "--classifier", "logreg",
                 "--strategies", "OLAS,RS+RLA", "--beta", "0.05,0.3", "--json",
                 "-o", str(tmp_path / "out")])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert "accuracy" in out
    rows = [(r["strategy"], r["beta"]) for r in out["strategies"]]
    assert rows == [("RS+RLA", None), ("OLAS", 0.05), ("OLAS", 0.3)]  # baselines run once
    olas = [r for r in out["strategies"] if r["strategy"] == "OLAS"]
    assert olas[0]["selected_mean"] <= olas[1]["selected_mean"]  # digest F4
    assert (tmp_path / "out" / "results.jsonl").exists()


def test_cli_bad_input_exits_2(capsys):
    assert main(["simulate", "olas"]) == 2
    assert main(["simulate", "olas", "--data", "/nonexistent.csv", "--target", "y"]) == 2
    assert "--data" in capsys.readouterr().err
