"""LS_OL's one-coin EM estimator: EM steps, orientation, the spectral start's covariance, the
learner on a weak-consensus crowd, and the per-run diagnostics."""

from __future__ import annotations

import numpy as np
import pytest

from crowdopt.crowd.rank_one import covariance
from crowdopt.crowd.tables import from_arrays
from crowdopt.errors import InputError
from crowdopt.policies import lsol_em
from crowdopt.policies.lsol import LSOL, Schedule
from crowdopt.sim.lsol_sim import TABLE1_P, kendall_tau, run_task, simulate_run

WEAK = np.array([0.97, 0.9, 0.85, 0.6, 0.45, 0.4, 0.35, 0.3, 0.2, 0.19])  # pi(M) = 0.555


def make_counts(p, n_testers, repeats, K=2, seed=0):
    """counts[k, i, l] of `repeats` iid assignments per tester (one-coin labelers)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(K, size=n_testers)
    counts = np.zeros((n_testers, len(p), K))
    for k in range(n_testers):
        for _ in range(repeats):
            right = rng.random(len(p)) < p
            wrong = (truth[k] + rng.integers(1, K, size=len(p))) % K
            lab = np.where(right, truth[k], wrong)
            counts[k, np.arange(len(p)), lab] += 1
    return counts, truth


def test_em_never_lowers_the_objective_and_recovers_p():
    counts, _ = make_counts(WEAK, 30, 15, seed=1)
    a = np.full(len(WEAK), 0.6)
    prev = lsol_em.objective(counts, a)
    for _ in range(15):
        a, _ = lsol_em.one_coin_map(counts, a, max_iter=1)
        cur = lsol_em.objective(counts, a)
        assert cur >= prev - 1e-9
        prev = cur
    a = lsol_em.estimate(counts, None, 30 * 15)
    assert np.abs(a - WEAK).max() < 0.1


def test_orientation_is_mean_accuracy_above_half():
    counts, _ = make_counts(WEAK, 20, 10, seed=2)
    a = lsol_em.estimate(counts, None, 200)
    flipped = lsol_em.one_coin_map(counts, 1.0 - a)[0]
    assert np.allclose(lsol_em.orient(flipped, counts), a, atol=1e-4)
    assert lsol_em.objective(counts, a) == pytest.approx(lsol_em.objective(counts, 1 - a))
    k3 = np.zeros((2, 3, 3))
    assert lsol_em.orient(np.array([0.1, 0.2, 0.3]), k3).tolist() == [0.1, 0.2, 0.3]


def test_orientation_is_the_posterior_one_unweighted_by_label_counts():
    counts = np.zeros((100, 2, 2))
    counts[:, 0, 0] = 1  # labeler 0: 100 labels; labeler 1: one label
    counts[0, 1, 0] = 1
    a = np.array([0.3, 0.8])  # label-weighted mean < 1/2, mean over labelers > 1/2
    assert lsol_em.orient(a, counts).tolist() == [0.3, 0.8]
    assert np.allclose(lsol_em.orient(1 - a, counts), a)
    sure, _ = make_counts(np.array([0.9, 0.85, 0.8]), 20, 10, seed=5)
    est = lsol_em.estimate(sure, None, 200)
    assert lsol_em.orientation_confidence(est, sure) > 0.999
    assert 0.5 <= lsol_em.orientation_confidence(np.array([0.52, 0.49]), counts) < 0.6


def test_orientation_diagnostics_on_a_reversed_draw():
    r = run_task(5, 2000, population="uniform_good", rules=("mv",), estimator="em",
                 n_checkpoints=5, seed=26)["mv"]  # mean p = 0.507: learned reversed
    assert r["kendall_tau"] < 0 and r["final_pi"] < 0.3
    assert r["final_pi_truth_oriented"] == r["final_pi_truth_labels"] == r["u_star"]
    assert 0.1 < r["wrong_orientation_least"] < 0.5
    assert r["final_pi_reversed"] < r["final_pi_ceiling"] < r["u_star"]
    assert 1 - r["orientation_confidence"] > 0.3  # the learner knows it may be reversed
    t1 = simulate_run(TABLE1_P, 500, estimator="first", seed=0)
    assert t1["wrong_orientation_least"] < 1e-4  # mean p = 0.736, few first labels
    assert t1["final_pi_ceiling"] == pytest.approx(t1["u_star"], abs=1e-4)


def test_tester_covariance_matches_rank_one_covariance():
    counts, _ = make_counts(np.array([0.9, 0.7, 0.4, 0.8]), 12, 1, K=3, seed=3)
    k, i, lab = np.nonzero(counts)
    C, common = covariance(from_arrays(k, i, lab, classes=[0, 1, 2]))
    C2, common2 = lsol_em.tester_covariance(counts)
    assert np.array_equal(common, common2) and np.allclose(C, C2)


def test_spectral_start_orders_a_weak_crowd():
    counts, _ = make_counts(WEAK, 15, 15, seed=4)
    a = lsol_em.spectral_start(counts, 15 * 15)
    assert np.corrcoef(a, WEAK)[0, 1] > 0.9


@pytest.mark.slow
def test_em_learner_finds_s_star_where_the_majority_is_weak():
    em = [simulate_run(WEAK, 2000, estimator="em", seed=s) for s in range(3)]
    assert all(r["final_is_opt"] and r["kendall_tau"] > 0.8 for r in em)
    pooled = simulate_run(WEAK, 2000, estimator="pooled", seed=2)
    assert not pooled["final_is_opt"] and pooled["kendall_tau"] < 0


def test_diagnostics_add_up():
    r = simulate_run(TABLE1_P, 1000, estimator="em", seed=1)
    assert r["explore_loss"] + r["exploit_loss"] == pytest.approx(r["u_star"] - r["avg_reward"])
    assert 0.85 < r["final_pi"] <= r["u_star"] + 1e-12
    assert -1 <= r["kendall_tau"] <= 1 and r["exploit_reward"] > r["avg_reward"]


def test_em_with_task_types_and_kary_labels():
    lr = LSOL(3, n_classes=4, estimator="em", seed=0)
    a = lr.select(1)
    lr.observe(a, np.array([2, 2, -1]))
    ph = lr.p_hat()
    assert ph.shape == (3,) and ph[2] == 0.5 and ph[0] > 0.5
    lr = LSOL(3, contexts="finite", estimator="em", schedule=Schedule(1, 1), seed=0)
    a = lr.select(1, "x")
    lr.observe(a, np.array([1, 1, 0]))
    assert lr.p_hat(lr._group_of(1, "x"))[0] > 0.5
    assert lr.p_hat(lr._group_of(1, "y")).tolist() == [0.5] * 3


def test_kendall_tau_b_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    for _ in range(20):
        x, y = rng.integers(0, 4, 7).astype(float), rng.random(7)
        assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
    assert kendall_tau(np.ones(3), np.arange(3.0)) == 0.0


def _rows(counts):
    """Each row of counts once per label vector (tasks x M, -1 = no label), for one label
    per labeler and task."""
    return np.where(counts.sum(axis=2) > 0, counts.argmax(axis=2), -1)


def test_em_with_multiplicities_equals_em_on_the_rows_repeated():
    counts, _ = make_counts(WEAK, 40, 1, seed=6)
    keys, inverse, mult = np.unique(_rows(counts), axis=0, return_inverse=True,
                                    return_counts=True)
    unique = counts[[int(np.flatnonzero(inverse.ravel() == j)[0]) for j in range(len(keys))]]
    a0 = np.full(len(WEAK), 0.6)
    a, _ = lsol_em.one_coin_map(counts, a0)
    b, _ = lsol_em.one_coin_map(unique, a0, mult=mult)
    assert np.allclose(a, b, atol=1e-12)
    assert lsol_em.objective(counts, a) == pytest.approx(lsol_em.objective(unique, a, mult=mult))


def test_fit_on_every_label_equals_the_fit_on_the_same_labels_fed_at_once():
    p = np.array([0.9, 0.8, 0.7, 0.4, 0.3])
    env = np.random.default_rng(7)
    lr = LSOL(5, estimator="em", em_labels="all", schedule=Schedule(1, 1), seed=3)
    truth, fed = [], []
    for t in range(1, 400):
        a = lr.select(t)
        if a.kind == "explore_new":
            truth.append(int(env.integers(2)))
        y = truth[a.tester] if a.kind != "exploit" else int(env.integers(2))
        lab = np.where(env.random(len(a.labelers)) < p[a.labelers], y, 1 - y)
        if a.kind == "exploit":
            row = np.full(5, -1)
            row[a.labelers] = lab
            fed.append(row)
            if t % 2:  # one step through observe, the next as a block of one
                lr.observe(a, lab)
            else:
                lr.observe_exploit(a.labelers, lab[None, :])
                lr.steps["exploit"] += 1
        else:
            lr.observe(a, lab)
    assert lr.steps["exploit"] > 200
    fit, mult = lr.fit_counts()
    tester = lr.label_counts()
    ex = np.zeros((len(fed), 5, 2))
    for k, row in enumerate(fed):
        ex[k, np.flatnonzero(row >= 0), row[row >= 0]] = 1
    # the same labels: the testers' rows, then every exploitation row as often as it came
    assert np.array_equal(fit[: len(tester)], tester) and np.all(mult[: len(tester)] == 1)
    got = sorted(map(tuple, np.repeat(_rows(fit[len(tester):]), mult[len(tester):].astype(int),
                                      axis=0)))
    assert got == sorted(map(tuple, fed))
    # and the learner's warm-started estimate is the estimate of all of them at once
    lr.version += 1  # force a refit from the previous estimate
    warm = lr.p_hat()
    cold = lsol_em.estimate(np.concatenate([tester.astype(float), ex]), None,
                            int(lr.N[: lr.n].sum()), max_iter=5000)
    assert np.allclose(warm, cold, atol=1e-4)
    assert not np.allclose(warm, LSOL(5, estimator="em").p_hat())


def test_exploitation_labels_orient_a_fit_the_testers_leave_reversed():
    p = np.array([0.95, 0.9, 0.2, 0.1, 0.45, 0.55])  # mean 0.525
    testers, _ = make_counts(p, 6, 1, seed=4)  # six testers, one label each
    only = lsol_em.estimate(testers, None, 6)
    assert kendall_tau(only, p) < 0  # the tester labels alone orient it wrong
    extra, _ = make_counts(p, 3000, 1, seed=21)  # all six labelers on 3000 exploited tasks
    both = lsol_em.estimate(testers, None, 6, extra=extra)
    assert kendall_tau(both, p) > 0.8
    assert (lsol_em.orientation_confidence(both, np.concatenate([testers, extra]))
            > lsol_em.orientation_confidence(only, testers))


def test_em_labels_all_needs_em_and_no_task_types():
    with pytest.raises(InputError):
        LSOL(5, estimator="pooled", em_labels="all")
    with pytest.raises(InputError):
        LSOL(5, estimator="em", em_labels="all", contexts="finite")
    lr = LSOL(3, estimator="em")
    lr.observe_exploit(np.array([0, 1]), np.array([[1, 0]]))  # kept only with em_labels all
    assert len(lr.fit_counts()[0]) == 0


def test_table2_rows_say_which_labels_they_count():
    from crowdopt.experiments import lsol_repro as rp

    EM_ALL, SIM, table2_rows = rp.EM_ALL, rp.SIM, rp.table2_rows
    tasks = [t for t in rp.build_tasks("smoke", ["table2"], estimators=["em"],
                                       em_labels=["testers", "all"], T=300)
             if t.params["M"] == 5 and t.seed < 2]
    assert {t.params.get("em_labels") for t in tasks} == {None, "all"}
    records = [{"fn": SIM, "params": t.params, "error": None,
                "result": run_task(**t.params, seed=t.seed)} for t in tasks]
    rows = {r["row"]: r for r in table2_rows(records)}
    for col in ("em", EM_ALL):
        assert rows["least reversed share, all labels bought"][col] \
            <= rows["least reversed share, tester labels"][col] + 1e-15
        assert rows["ceiling on final set pi(S_T), all labels bought"][col] \
            >= rows["ceiling on final set pi(S_T), tester labels"][col] - 1e-15
    checks = rp.table2_checks(table2_rows(records), EM_ALL)
    assert checks[0]["ceiling (orientation limit, all labels bought)"] is not None
