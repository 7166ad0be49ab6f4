"""Allocation policies of paper 002: behaviour (Props. 4.1, 4.3, Thm 4.2), incremental
bookkeeping against a full-rescan reference, reductions, extensions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special

from crowdopt.errors import InputError
from crowdopt.policies import beta_posterior as bp
from crowdopt.policies.allocation import (
    ContextualPolicy,
    DirichletPolicy,
    TieArgmax,
    WorkerPolicy,
    make_policy,
    run_policy,
)


def _labels(theta, seed, n=4000):
    u = np.random.default_rng(seed).random((len(theta), n))
    used = np.zeros(len(theta), dtype=int)

    def oracle(i):
        v = 1 if u[i, used[i]] < theta[i] else -1
        used[i] += 1
        return v
    return oracle


def test_prop41_deterministic_kg_locks_on_instance_one():
    pol = make_policy("kg-det", 5, prior=[(1, 1), (2, 1), (3, 3), (1, 2), (2, 2)])
    oracle = _labels(np.full(5, 0.5), 0)
    seq = []
    for _ in range(30):
        i = pol.next()
        seq.append(i + 1)
        pol.observe(i, oracle(i))
    assert seq[:3] == [1, 5, 3] and set(seq[3:]) == {1}
    pol = make_policy("kg-det", 3, prior=[(2, 1), (1, 3), (4, 2)])  # E empty: instance 1
    assert all(pol.next() == 0 for _ in range(1) for _ in [pol.observe(0, 1)] * 5)


def test_prop43_pessimistic_kg_locks_on_after_one_round():
    for tie in ("first", "random"):
        pol = make_policy("pessimistic", 6, tie=tie, seed=3)
        oracle = _labels(np.linspace(0.1, 0.9, 6), 1)
        seq = []
        for _ in range(40):
            i = pol.next()
            seq.append(i)
            pol.observe(i, oracle(i))
        assert sorted(seq[:6]) == list(range(6))
        assert len(set(seq[7:])) == 1  # locked on one instance


def _assert_counts_grow(pol, oracle, marks):
    """Run to each budget in `marks`; every item's label count must grow between marks."""
    prev = np.zeros(len(pol.a))
    for T in marks:
        while pol.t < T:
            i = pol.next()
            pol.observe(i, oracle(i))
        counts = pol.a + pol.b - 2
        assert np.all(counts > prev)
        prev = counts
    return counts


@pytest.mark.slow
def test_thm42_optkg_label_counts_grow_and_ambiguous_item_gets_most():
    theta = np.array([0.3, 0.6, 0.45, 0.7, 0.2])
    counts = _assert_counts_grow(make_policy("optkg", 5, seed=0), _labels(theta, 5, 4000),
                                 (500, 1500, 3000))
    assert np.argmax(counts) == 2
    wins = 0
    for s in range(15):
        pol = make_policy("optkg", 5, seed=s)
        est = run_policy(pol, _labels(theta, 100 + s), 3000)[3000]
        wins += bool(np.all(est == (theta >= 0.5)))
    assert wins >= 13


def test_cvar_half_keeps_labeling_every_instance():
    theta = np.array([0.3, 0.6, 0.45, 0.7, 0.2])
    _assert_counts_grow(make_policy("cvar", 5, alpha=0.5, seed=1), _labels(theta, 8, 3000),
                        (300, 1000, 2500))


def _reference_run(index, K, prior, oracle, T, excluded=()):
    """Full-rescan argmax with 'first' ties: the behaviour the bucket heap must reproduce."""
    a = np.full(K, float(prior[0]))
    b = np.full(K, float(prior[1]))
    out = []
    for _ in range(T):
        keys = bp.tie_keys(index(a, b)).astype(float)
        keys[list(excluded)] = -np.inf
        i = int(np.flatnonzero(keys == keys.max())[0])
        out.append(i)
        if oracle(i) > 0:
            a[i] += 1
        else:
            b[i] += 1
    return out


@pytest.mark.parametrize("name,index", [("optkg", bp.optkg_index), ("kg", bp.kg_index),
                                        ("nlu", bp.nlu_index),
                                        ("pessimistic", bp.pessimistic_index),
                                        ("cvar", lambda a, b: bp.cvar_index(a, b, 0.5))])
def test_incremental_bookkeeping_equals_full_rescan(name, index):
    rng = np.random.default_rng(9)
    theta = rng.random(12)
    ref = _reference_run(index, 12, (1, 1), _labels(theta, 4), 300, excluded=(3,))
    pol = make_policy(name + "-det", 12)
    pol.exclude(3)
    oracle = _labels(theta, 4)
    got = []
    for _ in range(300):
        i = pol.next()
        got.append(i)
        pol.observe(i, oracle(i))
    assert got == ref


def test_random_ties_are_uniform():
    first = np.bincount([make_policy("optkg", 4, seed=s).next() for s in range(4000)],
                        minlength=4)
    assert np.all(np.abs(first / 4000 - 0.25) < 0.03)
    arg = TieArgmax(5, "random", np.random.default_rng(0))
    for i, k in enumerate([3, 7, 7, 1, 7]):
        arg.set(i, k)
    arg.remove(2)
    picks = {arg.top() for _ in range(200)}
    assert picks == {1, 4}
    arg.set(4, 0)
    arg.remove(1)
    assert arg.top() == 0


def test_uniform_and_replay_exclusion():
    pol = make_policy("uniform", 3, seed=1)
    pol.exclude(0)
    assert {pol.next() for _ in range(100)} == {1, 2}
    pol.exclude(1)
    pol.exclude(2)
    with pytest.raises(InputError):
        pol.next()


def test_gittins_policies_run_and_finite_gittins_uses_horizon():
    pol = make_policy("gittins", 4, budget=20, seed=0)
    est = run_policy(pol, _labels(np.array([0.2, 0.45, 0.6, 0.9]), 2), 20)[20]
    assert est.shape == (4,)
    pol = make_policy("gittins-finite-det", 3, budget=1)
    pol.a[:] = [2, 3, 1]
    pol.b[:] = [1, 3, 1]
    assert pol.next() == 2  # one label left: the KG index, R(1,1) = 1/4 is the largest
    with pytest.raises(InputError):
        make_policy("gittins", 3)


def test_heterogeneous_reduces_to_homogeneous_with_perfect_worker():
    # (random ties draw from differently ordered tie sets in the pair array and the buckets,
    # so the pair policy is compared with deterministic ties; Dirichlet C = 2 with both)
    theta = np.array([0.3, 0.6, 0.45, 0.7, 0.2])
    for tie in ("first", "random"):
        hom = make_policy("optkg", 5, tie=tie, seed=7)
        het = WorkerPolicy(5, 1, "optkg", worker_prior=(1e8, 1e-8), tie="first", seed=7)
        mc = DirichletPolicy(5, 2, "optkg", tie=tie, seed=7)
        oracle = _labels(theta, 3)
        for _ in range(200):
            i = hom.next()
            assert mc.next() == i
            if tie == "first":
                assert het.next() == (i, 0)
            y = oracle(i)
            hom.observe(i, y)
            het.observe((i, 0), y)
            mc.observe(i, 0 if y > 0 else 1)
        assert np.allclose(het.a, hom.a, rtol=1e-9) and np.allclose(mc.alpha[:, 0], hom.a)


def test_heterogeneous_pair_decomposition_and_restricted_pairs():
    rng = np.random.default_rng(4)
    pol = WorkerPolicy(6, 5, "optkg", worker_prior=(4, 1), seed=0)
    pol.c[:] = rng.uniform(1, 9, 5)
    pol.d[:] = rng.uniform(0.5, 4, 5)
    pol.a[:] = rng.uniform(1, 5, 6)
    pol.b[:] = rng.uniform(1, 5, 6)
    pol._rescore(np.arange(30))
    i, j = pol.next()
    r = pol.c / (pol.c + pol.d)
    jstar = int(np.argmax(np.abs(r - 0.5)))
    scores = pol._scores(np.arange(30)).reshape(6, 5)
    assert abs(scores[i, j] - scores.max()) < 1e-12
    assert abs(scores[:, jstar].max() - scores.max()) < 1e-12  # digest A10 decomposition
    pairs = [(0, 1), (1, 0), (2, 2)]
    pol = WorkerPolicy(3, 3, "kg", pairs=pairs, seed=0)
    seen = set()
    for _ in range(3):
        act = pol.next()
        seen.add(act)
        pol.observe(act, 1)
        pol.exclude(act)
    assert seen == set(pairs)
    with pytest.raises(InputError):
        pol.next()
    with pytest.raises(InputError):
        pol.observe((0, 0), 1)


@pytest.mark.slow
def test_dirichlet_policy_updates_and_estimate():
    pol = DirichletPolicy(3, 3, "optkg", seed=0)
    for _ in range(30):
        i = pol.next()
        pol.observe(i, i)  # instance i always gets class i
    assert pol.estimate().tolist() == [0, 1, 2]
    with pytest.raises(InputError):
        pol.observe(0, 3)


def test_contextual_scalar_map_equals_full_map_and_precision_identity():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(8, 3))
    pol = ContextualPolicy(X, "optkg", sigma2=2.0, seed=0)
    for t, (i, y) in enumerate([(0, 1), (3, -1), (5, 1), (0, -1)]):
        mu0, S0 = pol.mu.copy(), pol.Sigma.copy()
        x = X[i]
        P0 = np.linalg.inv(S0)

        def nlp(w, y=y, x=x, mu0=mu0, P0=P0):
            s = special.log_expit(w @ x) if y > 0 else special.log_expit(-(w @ x))
            return -s + 0.5 * (w - mu0) @ P0 @ (w - mu0)
        w_map = optimize.minimize(nlp, mu0, method="BFGS", options={"gtol": 1e-10}).x
        pol.observe(i, y)
        assert np.allclose(pol.mu, w_map, atol=1e-6), t
        v = special.expit(w_map @ x) * (1 - special.expit(w_map @ x))
        assert np.allclose(pol.Sigma @ (P0 + v * np.outer(x, x)), np.eye(3), atol=1e-8)
        assert np.allclose(pol.G, X @ pol.Sigma @ X.T, atol=1e-10)
    w = rng.normal(size=(200_000, 3)) @ np.linalg.cholesky(pol.Sigma).T + pol.mu
    mc = (w @ X.T >= 0).mean(0)
    assert np.allclose(pol.prob_positive(), mc, atol=5e-3)
    i = pol.next()
    assert 0 <= i < 8


def test_bad_input():
    with pytest.raises(InputError):
        make_policy("optkg", 0)
    with pytest.raises(InputError):
        make_policy("optkg", 3, prior=(0, 1))
    with pytest.raises(InputError):
        make_policy("best", 3)
    with pytest.raises(InputError):
        make_policy("optkg", 3, tie="last")
    with pytest.raises(InputError):
        make_policy("optkg", 3).observe(0, "maybe")
    with pytest.raises(InputError):
        WorkerPolicy(2, 2, "nlu")
    with pytest.raises(InputError):
        WorkerPolicy(2, 2, pairs=[(0, 5)])
    with pytest.raises(InputError):
        ContextualPolicy(np.ones(3))
