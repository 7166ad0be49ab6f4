"""LS_OL learner invariants (digest 6.4 item 5) and statistical shape tests (item 6), seeded."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crowdopt.errors import InputError
from crowdopt.policies.lsol import LSOL, DisagreementFilter, Schedule
from crowdopt.sim.lsol_sim import (
    TABLE1_P,
    optimal_set,
    simulate_context_run,
    simulate_run,
    theory_schedule_constants,
)

P7 = np.array([0.9, 0.85, 0.8, 0.55, 0.45, 0.35, 0.6])  # digest 5.2 prototype, S* = top-3


def drive(learner, p, T, seed=0, check=None):
    """Per-step loop with binary truth; `check(t, action, learner)` before each observe."""
    rng = np.random.default_rng(seed)
    truth = []
    for t in range(1, T + 1):
        a = learner.select(t)
        if check:
            check(t, a, learner)
        if a.kind == "explore_new":
            truth.append(int(rng.integers(2)))
        y = truth[a.tester] if a.kind != "exploit" else int(rng.integers(2))
        right = rng.random(len(a.labelers)) < p[a.labelers]
        learner.observe(a, np.where(right, y, 1 - y))
    return learner


def test_exploration_order_and_counts():
    p = np.array(TABLE1_P)
    sched = Schedule(1.5, 1.0)
    seen = {"explore": 0}

    def check(t, a, lr):
        N = lr.N[: lr.n]
        if a.kind == "exploit":
            assert lr.n > sched.d1(t) and (N > sched.d2(t)).all()
        else:
            seen["explore"] += 1
        if a.kind == "explore_new":  # re-labelling comes before new testers
            assert (N > sched.d2(t)).all()
        if a.kind == "explore_reassign":
            assert N[a.tester] <= sched.d2(t)

    T = 3000
    lr = drive(LSOL(5, schedule=sched, seed=1), p, T, check=check)
    bound = (math.floor(sched.d1(T)) + 1) * (math.floor(sched.d2(T)) + 1)
    assert 0 < seen["explore"] <= bound
    assert lr.n <= math.floor(sched.d1(T)) + 1


def test_pooled_estimates_converge():
    p = np.array(TABLE1_P)
    lr = drive(LSOL(5, estimator="pooled", schedule=Schedule(10, 5), seed=2), p, 5000)
    assert np.abs(lr.p_hat() - p).max() < 0.05
    first = drive(LSOL(5, estimator="first", schedule=Schedule(10, 5), seed=2), p, 5000)
    assert np.abs(first.p_hat() - p).max() < 0.2


@pytest.mark.parametrize("estimator,em_labels", [
    ("first", "testers"), ("em", "testers"),
    pytest.param("em", "all", marks=pytest.mark.slow)])
def test_seeded_and_block_mode_identical(estimator, em_labels):
    kw = {"estimator": estimator, "em_labels": em_labels}
    a = simulate_run(P7, 4000, seed=4, **kw)
    b = simulate_run(P7, 4000, seed=4, **kw)
    c = simulate_run(P7, 4000, seed=4, block=False, **kw)
    assert a == b
    assert a["regret"] == c["regret"] and a["selected"] == c["selected"]
    assert a["explore_steps"] == c["explore_steps"] and a["p_hat"] == c["p_hat"]
    assert simulate_run(P7, 4000, seed=5, **kw)["p_hat"] != a["p_hat"]


def test_regret_shape_and_pooled_beats_first():
    r = [simulate_run(P7, 20000, estimator="pooled", seed=s) for s in range(6)]
    reg = np.mean([x["regret"] for x in r], axis=0)
    grid = np.array(r[0]["checkpoints"])
    avg = reg / grid
    assert avg[-1] < avg[np.searchsorted(grid, 1000)] < avg[np.searchsorted(grid, 100)]
    first = np.mean([simulate_run(P7, 20000, estimator="first", seed=s)["final_regret"]
                     for s in range(6)])
    assert reg[-1] < first
    assert np.mean([x["wrong_exploit_steps"] for x in r]) < 0.2 * 20000


def test_lsol_beats_full_crowd_with_spammers():
    p = np.array([0.9, 0.85, 0.8, 0.3, 0.25, 0.35, 0.2])
    res = [simulate_run(p, 3000, estimator="pooled", seed=s) for s in range(5)]
    assert np.mean([x["avg_reward"] for x in res]) > res[0]["pi_full_mv"] + 0.1


def test_wmv_not_worse_than_mv_on_average():
    rng = np.random.default_rng(0)
    mv, wmv = [], []
    for s in range(12):
        p = np.clip(rng.uniform(0, 1, 10), 1e-3, 1 - 1e-3)
        mv.append(simulate_run(p, 2000, rule="mv", seed=s)["avg_reward"])
        wmv.append(simulate_run(p, 2000, rule="wmv", seed=s)["avg_reward"])
    assert np.mean(wmv) >= np.mean(mv) - 0.005


def test_filter_removes_planted_spammer_first():
    p = np.array([0.85, 0.8, 0.9, 0.75, 0.2])
    first = []
    for s in range(20):
        lr = drive(LSOL(5, schedule=Schedule(2, 2), filter=DisagreementFilter(), seed=s), p, 400,
                   seed=s)
        if lr.filter.removed:
            first.append(lr.filter.removed[0][0])
    assert len(first) >= 19 and sum(f == 4 for f in first) >= 19
    lr = drive(LSOL(5, filter=DisagreementFilter(), seed=0), p, 400)
    assert not lr.active[4] and 4 not in lr.selection()[0]


def test_filter_keeps_minimum():
    p = np.array([0.3, 0.3, 0.3, 0.9])
    lr = drive(LSOL(4, filter=DisagreementFilter(keep_min=3, n_min=5), seed=0), p, 2000)
    assert lr.active.sum() >= 3


def test_kary_and_missing_labels():
    lr = LSOL(3, n_classes=4, seed=0)
    a = lr.select(1)
    assert a.kind == "explore_new"
    out = lr.observe(a, np.array([2, 2, -1]))
    assert out == 2
    assert lr.denom_sum.tolist() == [1.0, 1.0, 0.0]
    assert lr.p_hat().tolist() == [1.0, 1.0, 0.5]
    with pytest.raises(InputError):
        lr.observe(a, np.array([1, 2]))


def test_exploitation_set_is_top_k_odd_of_estimates():
    lr = drive(LSOL(7, estimator="pooled", schedule=Schedule(4, 3), seed=3), P7, 3000)
    s, _ = lr.selection()
    assert len(s) % 2 == 1
    ph = lr.p_hat()
    assert ph[s].min() >= np.delete(ph, s).max()
    assert sorted(s.tolist()) == sorted(optimal_set(P7)[0].tolist())


@pytest.mark.slow
def test_task_types_finite_and_continuous():
    lr = LSOL(3, contexts="finite", schedule=Schedule(1, 1), seed=0)
    p = {"a": np.array([0.9, 0.8, 0.2]), "b": np.array([0.2, 0.8, 0.9])}
    rng = np.random.default_rng(0)
    truth = []
    for t in range(1, 1500):
        w = "a" if t % 2 else "b"
        act = lr.select(t, w)
        if act.kind == "explore_new":
            truth.append((int(rng.integers(2)), w))
        y, wk = truth[act.tester] if act.kind != "exploit" else (0, w)
        right = rng.random(len(act.labelers)) < p[wk][act.labelers]
        lr.observe(act, np.where(right, y, 1 - y))
    ga, gb = lr._group_of(1, "a"), lr._group_of(1, "b")
    assert lr.p_hat(ga)[0] > 0.7 > lr.p_hat(gb)[0]
    with pytest.raises(InputError):
        lr.select(10)
    res = [simulate_context_run("continuous", 5, 3000, G1=0.5, G2=0.5, seed=s) for s in range(2)]
    for r in res:
        g = np.array(r["checkpoints"])
        avg = np.array(r["regret"]) / g
        assert avg[-1] < avg[np.searchsorted(g, 300)]


def test_continuous_groups_rebin():
    lr = LSOL(3, contexts="continuous", intervals=lambda t: 1 if t < 10 else 4, seed=0)
    lr.ctx[:3] = [0.1, 0.3, 0.9]
    lr.n = 3
    assert lr._group_mask(lr._group_of(5, 0.5)).tolist() == [True, True, True]
    assert lr._group_mask(lr._group_of(20, 0.3)).tolist() == [False, True, False]


def test_schedule_first_time_and_exploit_until():
    s = Schedule(2.0, 3.0)
    for n in (0, 1, 5, 13.7):
        t = s.first_time(2.0, n, 1)
        assert s.d1(t) >= n and (t == 1 or s.d1(t - 1) < n)
    pf = Schedule(1, 1, "param_free", eta=0.2)
    assert pf.d1(100) == pytest.approx(math.log(100) ** 1.4)
    assert Schedule(1, 1, z=0.5).d1(100) == pytest.approx(10 * math.log(100))


def test_bad_arguments():
    with pytest.raises(InputError):
        LSOL(3, estimator="mean")
    with pytest.raises(InputError):
        LSOL(0)
    with pytest.raises(InputError):
        simulate_run([0.5, 1.5], 10)


def test_theory_constants_table1():
    c = theory_schedule_constants(TABLE1_P, alpha_frac=0.5)
    assert c["mu"] == 80
    assert c["G2"] == pytest.approx(6.8, abs=0.05)
    assert c["G1"] > 1e10
