"""The added aggregators (Wawa, ZBS, GLAD, MACE, KOS, M-MSR) and the MAP-EM objective:
hand-computed cases, per-label reference implementations of each update, planted truths,
objective traces, the method registry and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crowdopt.crowd import run_method
from crowdopt.crowd.aggregate import accuracy, dawid_skene, one_coin_em
from crowdopt.crowd.agreement import wawa, zero_based_skill
from crowdopt.crowd.competence import mace
from crowdopt.crowd.difficulty import glad
from crowdopt.crowd.messages import kos, kos_scores
from crowdopt.crowd.methods import METHODS
from crowdopt.crowd.rank_one import covariance, mmsr
from crowdopt.crowd.tables import from_arrays, gold_from_arrays
from crowdopt.errors import InputError


@pytest.fixture
def tiny():
    # t1: a, a, b (w1 w2 w3);  t2: b (w1), a (w2) -> an MV tie
    return from_arrays(["t1", "t1", "t1", "t2", "t2"], ["w1", "w2", "w3", "w1", "w2"],
                       ["a", "a", "b", "b", "a"])


def planted(seed, n_t=120, n_w=8, L=2, acc=None, density=0.8, adversaries=0):
    """Random one-coin data with known truth; the first `adversaries` workers always lie."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(L, size=n_t)
    acc = rng.uniform(0.6, 0.9, n_w) if acc is None else np.asarray(acc, float)
    rows = ([], [], [])
    for t in range(n_t):
        for w in range(n_w):
            if rng.random() > density and w != n_w - 1:
                continue
            if w < adversaries:
                lab = (truth[t] + 1 + rng.integers(L - 1)) % L
            elif rng.random() < acc[w]:
                lab = truth[t]
            else:
                lab = (truth[t] + 1 + rng.integers(L - 1)) % L
            rows[0].append(f"t{t}"), rows[1].append(f"w{w}"), rows[2].append(int(lab))
    tb = from_arrays(*rows, classes=range(L))
    gold = gold_from_arrays(tb, [f"t{t}" for t in range(n_t)], truth.tolist())
    return tb, gold


def nondecreasing(trace, rel=1e-12):
    o = np.asarray(trace, float)
    return bool(np.all(np.diff(o) >= -rel * np.maximum(np.abs(o[1:]), 1.0)))


# ----------------------------------------------------------------------------- Wawa, ZBS
def test_wawa_hand_values(tiny):
    r = wawa(tiny)
    # MV: t1 a (2:1), t2 tie; agreement w1 (1 + 1/2)/2, w2 (1 + 1/2)/2, w3 0
    np.testing.assert_allclose(r.skills, [0.75, 0.75, 0.0])
    np.testing.assert_allclose(r.posteriors, [[1.0, 0.0], [0.5, 0.5]])
    assert r.labels[0] == 0 and r.iterations == 0


def test_wawa_first_tie_rule_follows_through(tiny):
    # ties='first' (crowd-kit's rule): the tied t2 votes a, so w1 agrees 1/2, w2 1, w3 0;
    # the weighted vote then gives t2: a 1.0 vs b 0.5
    r = wawa(tiny, ties="first")
    np.testing.assert_allclose(r.skills, [0.5, 1.0, 0.0])
    np.testing.assert_allclose(r.posteriors, [[1.0, 0.0], [2 / 3, 1 / 3]])
    assert r.labels.tolist() == [0, 0]


def test_zbs_hand_values_and_objective(tiny):
    r = zero_based_skill(tiny)
    np.testing.assert_allclose(r.skills, [0.75, 0.75, 0.0])
    # G = sum_e s_w y[t, l_e] - 1/2 sum_w n_w s_w^2 = 2 * 0.75 * 1.5 - 1/2 * 2 * 2 * 0.5625
    assert r.objective[-1] == pytest.approx(2.25 - 1.125)
    assert r.converged and r.iterations == 2 and nondecreasing(r.objective)


def test_zbs_first_tie_rule(tiny):
    r = zero_based_skill(tiny, ties="first")
    np.testing.assert_allclose(r.skills, [0.5, 1.0, 0.0])
    # G = (0.5 + 1 + 1) - 1/2 (2 * 0.25 + 2 * 1)
    assert r.objective[-1] == pytest.approx(2.5 - 1.25)
    assert r.converged and r.labels.tolist() == [0, 0] and nondecreasing(r.objective)


def test_zbs_with_learning_rate_schedule_is_monotone():
    tb, gold = planted(3, L=3, density=0.5)
    r = zero_based_skill(tb, lr_init=0.3, lr_steps=2, lr_factor=0.7, tol=1e-10)
    assert nondecreasing(r.objective) and r.converged and r.iterations > 3
    assert accuracy(r, gold) >= accuracy(wawa(tb), gold) - 0.05


# ----------------------------------------------------------------------------- MAP EM objective
def _ds_objective(tb, conf, priors, s):
    """sum_t log sum_k pi_k prod C[w,k,l] + s sum log C, one label at a time."""
    total = 0.0
    for t in range(tb.n_tasks):
        p = np.array(priors, float)
        for e in np.flatnonzero(tb.task == t):
            p = p * conf[tb.worker[e], :, tb.label[e]]
        total += math.log(p.sum())
    return total + s * float(np.sum(np.log(conf)))


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 1.0])
def test_dawid_skene_objective_is_the_map_objective(smoothing):
    tb, _ = planted(1, L=3, n_t=40, n_w=5)
    r = dawid_skene(tb, smoothing=smoothing, tol=0.0, max_iter=15)
    assert r.objective[-1] == pytest.approx(_ds_objective(tb, r.confusion, r.priors, smoothing),
                                            rel=1e-10)
    assert nondecreasing(r.objective) and len(r.objective) == 15
    # the data term alone is `log_likelihood`
    assert r.log_likelihood[-1] == pytest.approx(_ds_objective(tb, r.confusion, r.priors, 0.0))


def test_one_coin_objective_and_gold_clamped_objective():
    tb, gold = planted(2, L=3, n_t=30, n_w=4)
    r = one_coin_em(tb, smoothing=0.5, tol=0.0, max_iter=10)
    a = r.skills
    prior = 0.5 * float(np.sum(np.log(a) + np.log(1 - a)))
    ref = _ds_objective(tb, r.confusion, r.priors, 0.0) + prior
    assert r.objective[-1] == pytest.approx(ref, rel=1e-10) and nondecreasing(r.objective)
    g = gold.subset(range(10))
    c = dawid_skene(tb, gold=g, smoothing=0.1, tol=0.0, max_iter=8)
    # clamped tasks contribute log pi_g prod C[w, g, l]
    ref = 0.1 * float(np.sum(np.log(c.confusion)))
    truth = g.truth(tb.n_tasks)
    for t in range(tb.n_tasks):
        p = np.array(c.priors)
        for e in np.flatnonzero(tb.task == t):
            p = p * c.confusion[tb.worker[e], :, tb.label[e]]
        ref += math.log(p[truth[t]] if truth[t] >= 0 else p.sum())
    assert c.objective[-1] == pytest.approx(ref, rel=1e-10) and nondecreasing(c.objective)


def test_em_stops_on_relative_objective_rise():
    tb, _ = planted(4, L=3, n_t=80)
    r = dawid_skene(tb, tol=1e-4)
    o = r.objective
    assert r.converged and (o[-1] - o[-2]) <= 1e-4 * abs(o[-1])
    assert all((o[k] - o[k - 1]) > 1e-4 * abs(o[k]) for k in range(1, len(o) - 1))


def test_init_gold_starts_from_gold_without_clamping():
    tb, gold = planted(5, L=2, n_t=60, adversaries=0)
    r = dawid_skene(tb, gold=gold, init="gold", max_iter=1, tol=0.0)
    # one M-step from the gold one-hot rows: worker confusions are the gold answer rates
    truth = gold.truth(tb.n_tasks)
    w0 = tb.worker == 0
    right = np.mean(tb.label[w0] == truth[tb.task[w0]])
    n0 = w0.sum()
    assert r.skills[0] == pytest.approx(r.priors @ np.diag(r.confusion[0]), rel=1e-12)
    assert 0 < right and n0 > 0
    clamped = dawid_skene(tb, gold=gold, max_iter=5)
    assert accuracy(clamped, gold) == 1.0
    with pytest.raises(InputError, match="init"):
        dawid_skene(tb, init="gold")


# ----------------------------------------------------------------------------- GLAD
def _glad_objective(tb, alpha, beta, pi, mu=(1.0, 1.0), sd=(1.0, 1.0)):
    K = tb.n_classes
    total = 0.0
    for t in range(tb.n_tasks):
        p = np.array(pi, float)
        for e in np.flatnonzero(tb.task == t):
            s = 1 / (1 + math.exp(-alpha[tb.worker[e]] * beta[t]))
            p = p * np.where(np.arange(K) == tb.label[e], s, (1 - s) / (K - 1))
        total += math.log(p.sum())
    b = np.log(beta)
    return total - 0.5 * np.sum(((alpha - mu[0]) / sd[0]) ** 2) \
        - 0.5 * np.sum(((b - mu[1]) / sd[1]) ** 2)


@pytest.mark.parametrize("L", [2, 3])
def test_glad_objective_trace_and_stationary_point(L):
    tb, gold = planted(6, L=L, n_t=50, n_w=6)
    r = glad(tb, tol=1e-12, max_iter=3000)
    alpha, beta = r.params["alpha"], r.params["beta"]
    F = _glad_objective(tb, alpha, beta, r.priors)
    assert r.objective[-1] == pytest.approx(F, rel=1e-9)
    assert nondecreasing(r.objective) and r.converged
    # a local maximum: no coordinate step of 1e-3 improves F
    for i in (0, 3):
        for d in (1e-3, -1e-3):
            a2 = alpha.copy()
            a2[i] += d
            assert _glad_objective(tb, a2, beta, r.priors) <= F + 1e-9
            b2 = beta.copy()
            b2[i] *= math.exp(d)
            assert _glad_objective(tb, alpha, b2, r.priors) <= F + 1e-9
    assert accuracy(r, gold) >= accuracy(run_method(tb, "mv"), gold)


def test_glad_learns_an_adversary_as_negative_ability():
    tb, gold = planted(7, n_t=150, n_w=7, acc=[0.0, 0.8, 0.75, 0.7, 0.8, 0.7, 0.75],
                       adversaries=1)
    r = glad(tb)
    alpha = r.params["alpha"][tb.worker_index([f"w{w}" for w in range(7)])]
    assert alpha[0] < 0 < min(alpha[1:])
    assert accuracy(r, gold) >= 0.95


# ----------------------------------------------------------------------------- MACE
def _mace_objective(tb, theta, xi, pi, s):
    L = tb.n_classes
    total = 0.0
    for t in range(tb.n_tasks):
        p = np.array(pi, float)
        for e in np.flatnonzero(tb.task == t):
            w, lab = tb.worker[e], tb.label[e]
            p = p * (theta[w] * (np.arange(L) == lab) + (1 - theta[w]) * xi[w, lab])
        total += math.log(p.sum())
    return total + s * (np.sum(np.log(theta)) + np.sum(np.log1p(-theta)) + np.sum(np.log(xi)))


def _spammer_data():
    rng = np.random.default_rng(8)
    n_t = 100
    truth = rng.integers(3, size=n_t)
    rows = ([], [], [])
    for t in range(n_t):
        for w in range(5):
            if w == 0:
                lab = 2  # a spammer who always answers class 2
            else:
                lab = truth[t] if rng.random() < 0.75 else rng.integers(3)
            rows[0].append(t), rows[1].append(w), rows[2].append(int(lab))
    tb = from_arrays(*rows, classes=range(3))
    return tb, gold_from_arrays(tb, list(range(n_t)), truth.tolist())


def test_mace_map_objective_and_spammer_detection():
    tb, gold = _spammer_data()
    r = mace(tb, variational=False, smoothing=0.5, restarts=3, seed=1)
    th, xi = r.params["theta"], r.params["strategy"]
    assert r.objective[-1] == pytest.approx(_mace_objective(tb, th, xi, r.priors, 0.5),
                                            rel=1e-9)
    assert nondecreasing(r.objective) and r.converged
    assert th[0] < 0.2 and xi[0, 2] > 0.9 and min(th[1:]) > 0.5
    assert accuracy(r, gold) >= accuracy(dawid_skene(tb, smoothing=0.0), gold) - 0.02
    assert max(r.params["start_objectives"]) == r.objective[-1]
    assert len(r.params["start_objectives"]) == 4


def test_mace_variational_elbo_and_spammer_detection():
    from scipy.special import betaln, digamma, gammaln
    tb, gold = _spammer_data()
    a, b, c = 0.5, 0.5, 10.0
    r = mace(tb, restarts=2, seed=1, theta_prior=(a, b), strategy_prior=c, tol=1e-12)
    assert nondecreasing(r.objective) and r.converged
    th, xi = r.params["theta"], r.params["strategy"]
    assert th[0] < 0.2 and xi[0, 2] > 0.8 and min(th[1:]) > 0.5
    assert accuracy(r, gold) >= 0.95
    # the ELBO at the returned q: recover q's parameters from its means and the counts
    n = tb.labels_per_worker()
    ka = th * (n + a + b)              # a + know
    kb = (n + a + b) - ka              # b + spam
    cc = xi * (kb - b + 3 * c)[:, None]
    kappa = np.exp(digamma(ka) - digamma(ka + kb))
    sigma = np.exp(digamma(kb) - digamma(ka + kb))
    xit = np.exp(digamma(cc) - digamma(cc.sum(1, keepdims=True)))
    logz = 0.0
    for t in range(tb.n_tasks):
        p = np.array(r.priors, float)
        for e in np.flatnonzero(tb.task == t):
            w, lab = tb.worker[e], tb.label[e]
            p = p * (kappa[w] * (np.arange(3) == lab) + sigma[w] * xit[w, lab])
        logz += math.log(p.sum())
    kl_b = (betaln(a, b) - betaln(ka, kb) + (ka - a) * digamma(ka) + (kb - b) * digamma(kb)
            - (ka + kb - a - b) * digamma(ka + kb)).sum()
    s1 = cc.sum(1)
    kl_d = (gammaln(s1) - gammaln(cc).sum(1) - gammaln(3 * c) + 3 * gammaln(c)
            + ((cc - c) * (digamma(cc) - digamma(s1)[:, None])).sum(1)).sum()
    # the trace's last value is the ELBO one E-step later; at convergence they agree
    assert r.objective[-1] == pytest.approx(logz - kl_b - kl_d, rel=1e-8)


def test_mace_restarts_are_seeded():
    tb, _ = planted(9, L=3, n_t=40)
    a, b = mace(tb, seed=4, restarts=2), mace(tb, seed=4, restarts=2)
    np.testing.assert_array_equal(a.posteriors, b.posteriors)


# ----------------------------------------------------------------------------- KOS
def _kos_reference(task, worker, a, y0, iterations):
    """The message equations edge by edge (Karger, Oh & Shah Sec. 2.3)."""
    E = len(task)
    y = np.asarray(y0, float) / math.sqrt(np.mean(np.square(y0)))
    for _ in range(iterations):
        x = np.array([sum(a[f] * y[f] for f in range(E) if task[f] == task[e] and f != e)
                      for e in range(E)])
        y = np.array([sum(a[f] * x[f] for f in range(E) if worker[f] == worker[e] and f != e)
                      for e in range(E)])
        y = y / math.sqrt(np.mean(y * y))
    return np.array([sum(a[e] * y[e] for e in range(E) if task[e] == t)
                     for t in range(max(task) + 1)])


def test_kos_messages_match_the_edge_by_edge_equations():
    tb, _ = planted(10, n_t=25, n_w=6, density=0.6)
    a = np.where(tb.label == 1, 1.0, -1.0)
    y0 = np.random.default_rng(0).normal(1, 1, tb.n_labels)
    for k in (1, 2, 5):
        x, yw, it, _ = kos_scores(tb.task, tb.worker, a, tb.n_tasks, tb.n_workers, init=y0,
                                  tol=0.0, max_iter=k, orient=False)
        np.testing.assert_allclose(x, _kos_reference(tb.task, tb.worker, a, y0, k), atol=1e-9)
        assert it == k
        xo, ywo, _, _ = kos_scores(tb.task, tb.worker, a, tb.n_tasks, tb.n_workers, init=y0,
                                   tol=0.0, max_iter=k)
        sign = 1.0 if yw.sum() >= 0 else -1.0        # oriented: worker scores sum >= 0
        np.testing.assert_allclose(xo, sign * x)
        assert ywo.sum() >= 0


def test_kos_recovers_a_regular_spammer_hammer_instance():
    rng = np.random.default_rng(11)
    n_t, n_w, deg = 400, 400, 9
    truth = rng.integers(2, size=n_t)
    hammer = rng.random(n_w) < 0.5
    rows = ([], [], [])
    perm = np.concatenate([rng.permutation(n_w) for _ in range(deg)])
    for e, w in enumerate(perm):
        t = e % n_t
        lab = truth[t] if hammer[w] else rng.integers(2)
        rows[0].append(t), rows[1].append(int(w)), rows[2].append(int(lab))
    tb = from_arrays(*rows, classes=[0, 1], duplicates="all")
    gold = gold_from_arrays(tb, list(range(n_t)), truth.tolist())
    r = kos(tb, seed=1)
    assert r.converged and r.objective == []
    assert accuracy(r, gold) >= 0.98 > accuracy(run_method(tb, "mv"), gold)
    assert set(np.unique(r.posteriors)) <= {0.0, 0.5, 1.0}


def test_kos_ties_and_multiclass():
    # one task, two workers who disagree and answer nothing else: every message is 0
    tb = from_arrays(["t", "t"], ["u", "v"], [0, 1])
    assert kos(tb, ties="positive").labels.tolist() == [1]
    assert kos(tb, ties="first").labels.tolist() == [0]
    tb3, gold3 = planted(12, L=3, n_t=150, n_w=10, acc=np.full(10, 0.85))
    r = kos(tb3)
    assert r.posteriors.shape == (150, 3) and accuracy(r, gold3) >= 0.9


# ----------------------------------------------------------------------------- M-MSR
def test_mmsr_covariance_matches_pairwise_counts():
    tb, _ = planted(13, L=3, n_t=30, n_w=5, density=0.7)
    C, common = covariance(tb)
    dense = tb.dense()
    for i in range(5):
        for j in range(5):
            both = (dense[:, i] >= 0) & (dense[:, j] >= 0)
            if i == j or not both.any():
                assert common[i, j] == 0 and C[i, j] == 0
                continue
            agree = np.mean(dense[both, i] == dense[both, j])
            assert common[i, j] == both.sum()
            assert C[i, j] == pytest.approx((3 * agree - 1) / 2)


def test_mmsr_recovers_skills_and_an_adversary():
    acc = [0.1, 0.9, 0.85, 0.8, 0.75, 0.7, 0.9, 0.8]
    tb, gold = planted(14, n_t=600, n_w=8, acc=acc, density=1.0)
    r = mmsr(tb)
    order = tb.worker_index([f"w{w}" for w in range(8)])
    np.testing.assert_allclose(r.skills[order], acc, atol=0.06)
    assert r.params["s"][order[0]] < 0 and r.converged
    assert accuracy(r, gold) >= accuracy(run_method(tb, "mv"), gold)


@pytest.mark.parametrize("seed", range(60))
def test_mmsr_pair_update_equals_the_dense_one(seed):
    """The per-pair trimmed mean (sparse graphs) trims the same entries as the dense update,
    ties at the cut included (integer-valued entries make many): the same values up to the
    order of the additions (an entry trimmed differently would move a mean by >= 1e-3)."""
    from crowdopt.crowd.rank_one import _Pairs, _trimmed_update
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 25))
    obs = rng.random((n, n)) < rng.uniform(0.05, 1.0)
    np.fill_diagonal(obs, False)
    if seed % 2:
        obs |= obs.T
    X = np.where(obs, rng.integers(0, 4, (n, n)) / 3.0, 0.0)
    u, v = rng.integers(0, 4, n) / 2.0, rng.integers(1, 4, n) / 2.0
    for F in range(5):
        np.testing.assert_allclose(_Pairs(X, obs).trimmed_update(u, v, F, 0.1),
                                   _trimmed_update(X, obs, u, v, F, 0.1), rtol=1e-13, atol=0)
        np.testing.assert_allclose(_Pairs(X.T, obs.T).trimmed_update(v, u, F, 0.1),
                                   _trimmed_update(X.T, obs.T, v, u, F, 0.1), rtol=1e-13,
                                   atol=0)


@pytest.mark.parametrize("seed", range(4))
def test_mmsr_same_result_on_either_path(seed, monkeypatch):
    import crowdopt.crowd.rank_one as ro
    tb, _ = planted(30 + seed, L=2 + seed % 2, n_t=80, n_w=12, density=0.4)
    out, calls = [], []
    pair_update = ro._Pairs.trimmed_update

    def counted(self, *a):
        calls.append(1)
        return pair_update(self, *a)

    monkeypatch.setattr(ro._Pairs, "trimmed_update", counted)
    for factor in (0.0, float("inf")):  # dense path, then per-pair path
        monkeypatch.setattr(ro, "SPARSE_FACTOR", factor)
        n_before = len(calls)
        out.append(mmsr(tb, seed=seed))
        assert (len(calls) > n_before) == (factor > 0)  # the path asked for is the one taken
    a, b = out
    assert a.iterations == b.iterations
    np.testing.assert_allclose(a.params["s"], b.params["s"], rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(a.labels, b.labels)


# ----------------------------------------------------------------------------- every method
@pytest.mark.parametrize("method", [m for m in METHODS if m != "wmv"])
def test_every_method_on_planted_data(method):
    tb, gold = planted(15, L=3, n_t=100, n_w=7)
    r = run_method(tb, method, seed=2)
    np.testing.assert_allclose(r.posteriors.sum(1), 1.0)
    assert r.labels.shape == (tb.n_tasks,) and r.skills.shape == (tb.n_workers,)
    assert accuracy(r, gold) >= 0.8, method
    assert isinstance(r.iterations, int) and isinstance(r.converged, bool)
    if METHODS[method].iterative:
        assert r.converged and r.iterations >= 1
    if METHODS[method].objective and METHODS[method].iterative:
        assert len(r.objective) >= r.iterations and nondecreasing(r.objective)
        assert r.objective_name


@pytest.mark.parametrize("method", ["zbs", "one-coin", "dawid-skene", "glad", "mace", "kos",
                                    "mmsr", "ebcc"])
def test_iteration_cap_reports_not_converged(method):
    tb, _ = planted(16, L=3, n_t=60)
    r = run_method(tb, method, max_iter=1, tol=0.0)
    assert r.iterations == 1 and not r.converged


def test_run_method_refuses_options_a_method_does_not_take(tiny):
    with pytest.raises(InputError, match="--smoothing: expected a method that uses it") as e:
        run_method(tiny, "mv", smoothing=0.1)
    assert "dawid-skene" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(InputError, match="method"):
        run_method(tiny, "nope")
    with pytest.raises(InputError, match="--restarts"):
        run_method(tiny, "glad", restarts=3)
    with pytest.raises(InputError, match=r"^options: expected options of mv \(seed, ties\), "
                       "found 'subtype'$"):
        run_method(tiny, "mv", subtype=3)


@pytest.mark.parametrize("method", [m for m in METHODS if m != "wmv"])
@pytest.mark.parametrize("seed", [-1, None, 2.5, "a", True])
def test_every_method_refuses_a_bad_seed(tiny, method, seed):
    # numpy would raise a traceback (or, for None, draw an unrepeatable seed)
    with pytest.raises(InputError, match="^seed: expected an integer >= 0") as e:
        METHODS[method].func(tiny, seed=seed)  # run_method reads None as "the default"
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("call,match", [
    (lambda tb: glad(tb, alpha_prior=(1, 0)), "alpha_prior"),
    (lambda tb: glad(tb, priors="guess"), "priors"),
    (lambda tb: mace(tb, restarts=-1), "restarts"),
    (lambda tb: mace(tb, smoothing=-1), "smoothing"),
    (lambda tb: kos(tb, max_iter=0), "max_iter"),
    (lambda tb: kos(tb, ties="coin"), "ties"),
    (lambda tb: zero_based_skill(tb, lr_init=3.0), "lr_init"),
    (lambda tb: mmsr(tb, tol=-1.0), "tol"),
    (lambda tb: dawid_skene(tb, init="random"), "init"),
    (lambda tb: one_coin_em(tb, max_iter=1.5), "max_iter"),
])
def test_bad_options_one_line(tiny, call, match):
    with pytest.raises(InputError, match=match) as e:
        call(tiny)
    assert "\n" not in str(e.value)


# ----------------------------------------------------------------------------- auto
def test_holdout_mask_keeps_a_label_per_task():
    from crowdopt.crowd.auto import holdout_mask
    tb, _ = planted(17, n_t=200, density=0.3)
    rng = np.random.default_rng(0)
    mask = holdout_mask(tb, 0.1, rng)
    assert abs(mask.sum() - round(0.1 * tb.n_labels)) <= 1
    kept = np.bincount(tb.task[~mask], minlength=tb.n_tasks)
    assert np.all(kept >= 1)
    big = holdout_mask(tb, 0.9, rng)   # more than can be hidden: every task keeps one
    assert np.all(np.bincount(tb.task[~big], minlength=tb.n_tasks) >= 1)


def test_auto_avoids_majority_vote_when_adversaries_mislead_it():
    from crowdopt.crowd.auto import choose_method, heldout_score, holdout_mask
    acc = [0.0, 0.0, 0.95, 0.9, 0.6, 0.6, 0.6]
    tb, gold = planted(18, n_t=300, n_w=7, acc=acc, adversaries=2, density=0.9)
    choice = choose_method(tb, seed=1)
    assert choice.method not in ("mv", "wawa", "zbs")
    picked = run_method(tb, choice.method)
    assert accuracy(picked, gold) > accuracy(run_method(tb, "mv"), gold) + 0.1
    d = choice.to_dict()
    assert d["picked"] == choice.method and "held-out" in d["reason"]
    # the score is the mean log predictive probability of the hidden labels
    mask = holdout_mask(tb, 0.1, np.random.default_rng(1))
    r = run_method(tb.subset(~mask), "dawid-skene", seed=1)
    assert heldout_score(tb, mask, r) == pytest.approx(choice.scores["dawid-skene"])


def test_auto_sets_aside_label_switched_solutions():
    from crowdopt.crowd.auto import choose_method
    # the held-out score cannot tell a labelling from its mirror image: Dawid-Skene started
    # from inverted gold converges to the mirror image, which the chance-agreement guard skips
    tb, gold = planted(19, n_t=200, n_w=6, acc=np.full(6, 0.8))
    flipped = gold_from_arrays(tb, tb.task_ids[gold.task].tolist(), (1 - gold.label).tolist())
    mirror = run_method(tb, "dawid-skene", init="gold", gold=flipped)
    assert accuracy(mirror, gold) < 0.1
    choice = choose_method(tb, candidates=("mv", "dawid-skene"), seed=1,
                           options={"dawid-skene": {"init": "gold", "gold": flipped}})
    assert choice.method == "mv" and list(choice.scores) == ["mv"]
    assert choice.skipped["dawid-skene"].startswith("label-switched")
    assert choice.baseline == "mv" and "the only method scored" in choice.reason()


def test_auto_keeps_the_default_unless_another_beats_it_by_z_standard_errors():
    from crowdopt.crowd.auto import choose_method, heldout_loglik, holdout_mask, pick
    acc = [0.0, 0.0, 0.95, 0.9, 0.6, 0.6, 0.6]
    tb, _ = planted(18, n_t=300, n_w=7, acc=acc, adversaries=2, density=0.9)
    cands = ("mv", "wawa", "dawid-skene", "glad")
    # gains are paired per-label differences against the default, with their standard error
    c = choose_method(tb, candidates=cands, seed=1, default="mv")
    mask = holdout_mask(tb, 0.1, np.random.default_rng(1))
    ll = {m: heldout_loglik(tb, mask, run_method(tb.subset(~mask), m, seed=1)) for m in cands}
    for m in ("wawa", "dawid-skene", "glad"):
        d = ll[m] - ll["mv"]
        assert c.gains[m][0] == pytest.approx(d.mean())
        assert c.gains[m][1] == pytest.approx(d.std(ddof=1) / np.sqrt(len(d)))
    # majority vote is misled by the two liars: a model-based method beats it clearly
    assert c.baseline == "mv" and c.method in ("dawid-skene", "glad")
    g, se = c.gains[c.method]
    assert g > 2 * se and g == max(v[0] for v in c.gains.values())
    assert f"beats mv's by {g:.4f}" in c.reason()
    # no gain can clear an enormous z: the default stays, and says so
    keep = choose_method(tb, candidates=cands, seed=1, default="mv", z=1e9)
    assert keep.method == "mv" and keep.gains == c.gains
    assert keep.reason().startswith("picked mv (the default): no method beats")
    assert keep.to_dict()["gains"]["glad"] == {"gain": c.gains["glad"][0],
                                               "std_error": c.gains["glad"][1]}
    assert pick(c.gains, c.baseline, c.z) == c.method        # the one rule, also for studies
    # z = 0 is "highest score wins"
    top = choose_method(tb, candidates=cands, seed=1, z=0)
    assert top.method == max(top.scores, key=top.scores.get)


def test_auto_does_not_switch_on_one_hidden_label():
    import json

    from crowdopt.crowd.auto import choose_method
    # 6 labels: 10 % hides one, which gives a gain but no standard error
    tb = from_arrays(["t1", "t1", "t1", "t2", "t2", "t2"], ["a", "b", "c", "a", "b", "c"],
                     ["cat", "cat", "dog", "dog", "dog", "dog"])
    c = choose_method(tb)
    assert c.held_out_labels == 1 and c.method == "dawid-skene"
    assert any(g != 0 for g, _ in c.gains.values())
    assert all(np.isnan(se) for _, se in c.gains.values())
    assert "no standard error from one label" in c.reason() and "1 hidden label " in c.reason()
    d = json.loads(json.dumps(c.to_dict(), allow_nan=False))   # strict JSON: null, not NaN
    assert all(g["std_error"] is None for g in d["gains"].values())


def test_auto_skips_methods_that_cannot_run_and_rejects_bad_arguments():
    from crowdopt.crowd.auto import choose_method
    tb = from_arrays(["t1", "t1", "t2", "t2"], ["u", "v", "u", "v"], [0, 0, 1, 1])
    with pytest.raises(InputError, match="holdout"):
        choose_method(tb, holdout=0.0)
    with pytest.raises(InputError, match="candidates"):
        choose_method(tb, candidates=("wmv",))
    with pytest.raises(InputError, match="default"):
        choose_method(tb, candidates=("mv", "wawa"))          # the default is not a candidate
    with pytest.raises(InputError, match="z"):
        choose_method(tb, z=-1.0)
    for bad in (None, "mv", [["mv"]]):                        # not a list of method names
        with pytest.raises(InputError, match="candidates"):
            choose_method(tb, candidates=bad)
    single = from_arrays(["t1", "t2"], ["u", "u"], [0, 1])
    with pytest.raises(InputError, match="at least two labels"):
        choose_method(single)
