"""EBCC (crowdopt.crowd.subtypes): the ELBO and the updates against a per-label reference
built from the model's definition, hand cases, correlated workers, seeding and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import digamma, gammaln

from crowdopt.crowd.aggregate import accuracy, dawid_skene, start_posteriors
from crowdopt.crowd.subtypes import ebcc
from crowdopt.crowd.tables import from_arrays, gold_from_arrays
from crowdopt.errors import InputError


def random_table(seed, n_t=12, n_w=4, L=3, density=0.7):
    rng = np.random.default_rng(seed)
    rows = ([], [], [])
    for t in range(n_t):
        for w in range(n_w):
            if rng.random() < density or w == 0:
                rows[0].append(t), rows[1].append(w), rows[2].append(int(rng.integers(L)))
    return from_arrays(*rows, classes=range(L))


def log_dirichlet_norm(a):
    """log of the Dirichlet normalizer 1 / B(a)."""
    return gammaln(np.sum(a)) - np.sum(gammaln(a))


def conjugate_update(tb, R_prev, M, a_pi, alpha, a_v, b_v):
    """q(v), q(pi), q(tau) parameters (mu, eta, nu) from R_prev, one label at a time."""
    L = tb.n_classes
    beta = np.full((L, L), b_v) + np.eye(L) * (a_v - b_v)
    mu = np.zeros((tb.n_workers, L, M, L))
    for t, w, lab in zip(tb.task, tb.worker, tb.label, strict=True):
        mu[w, :, :, lab] += R_prev[t]
    mu += beta[None, :, None, :]
    n_km = R_prev.sum(0)
    return mu, a_pi / M + n_km, alpha + n_km.sum(1)


def elbo_at(tb, params, R, M, a_pi, alpha, a_v, b_v):
    """The ELBO E_q[log p(x, y, g, v, pi, tau)] - E_q[log q], term by term from the model's
    definition, at q(v), q(pi), q(tau) = Dirichlet(params) and q(y, g) = R; and the q(y, g)
    that maximizes it for these parameters (normalized exp of the expected log joint)."""
    mu, eta, nu = params
    n_t, n_w, L = tb.n_tasks, tb.n_workers, tb.n_classes
    beta = np.full((L, L), b_v) + np.eye(L) * (a_v - b_v)
    elog_v = digamma(mu) - digamma(mu.sum(-1, keepdims=True))
    elog_pi = digamma(eta) - digamma(eta.sum(1))[:, None]
    elog_tau = digamma(nu) - digamma(nu.sum())
    joint = np.zeros((n_t, L, M))   # E log p(x_t, y_t = k, g_t = m | parameters)
    joint += elog_tau[None, :, None] + elog_pi[None]
    for t, w, lab in zip(tb.task, tb.worker, tb.label, strict=True):
        joint[t] += elog_v[w, :, :, lab]
    q_best = np.exp(joint - joint.reshape(n_t, -1).max(1)[:, None, None])
    q_best /= q_best.reshape(n_t, -1).sum(1)[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy_z = -np.sum(np.where(R > 0, R * np.log(R), 0.0))
    elbo = float(np.sum(R * joint)) + entropy_z
    # + E log p(param) - E log q(param) for v, pi, tau
    for w in range(n_w):
        for k in range(L):
            for m in range(M):
                a = mu[w, k, m]
                elbo += log_dirichlet_norm(beta[k]) + np.sum((beta[k] - 1) * elog_v[w, k, m])
                elbo -= log_dirichlet_norm(a) + np.sum((a - 1) * elog_v[w, k, m])
    for k in range(L):
        prior = np.full(M, a_pi / M)
        elbo += log_dirichlet_norm(prior) + np.sum((prior - 1) * elog_pi[k])
        elbo -= log_dirichlet_norm(eta[k]) + np.sum((eta[k] - 1) * elog_pi[k])
    elbo += log_dirichlet_norm(np.full(L, alpha)) + np.sum((alpha - 1) * elog_tau)
    elbo -= log_dirichlet_norm(nu) + np.sum((nu - 1) * elog_tau)
    return elbo, q_best


def _states(tb, seed, opts, n):
    """(R before, R after) the n-th iteration of `ebcc`, and its result."""
    M = opts["subtypes"]
    if n == 1:  # the start: majority-vote fractions split by the seeded draw
        split = np.random.default_rng(seed).dirichlet(np.ones(M), size=(tb.n_tasks, tb.n_classes))
        R_prev = start_posteriors(tb, "mv", None)[:, :, None] * split
    else:
        R_prev = ebcc(tb, max_iter=n - 1, tol=0.0, seed=seed, **opts).params["subtype_posteriors"]
    after = ebcc(tb, max_iter=n, tol=0.0, seed=seed, **opts)
    return R_prev, after.params["subtype_posteriors"], after


def _opts(seed):
    return {"subtypes": 1 + seed % 3, "concentration": 0.1 + seed / 10,
            "class_prior": 1.0 + seed % 2, "confusion_prior": (4.0 - seed / 3, 1.0)}


def _prior_args(opts):
    return (opts["subtypes"], opts["concentration"], opts["class_prior"],
            *opts["confusion_prior"])


@pytest.mark.parametrize("seed", range(6))
def test_elbo_and_updates_match_the_per_label_reference(seed):
    tb = random_table(seed, L=2 + seed % 3)
    opts = _opts(seed)
    for n in (1, 3):
        R_prev, R, after = _states(tb, seed, opts, n)
        params = conjugate_update(tb, R_prev, *_prior_args(opts))
        elbo, q_best = elbo_at(tb, params, R, *_prior_args(opts))
        np.testing.assert_allclose(R, q_best, rtol=1e-9, atol=1e-12)
        assert after.objective[-1] == pytest.approx(elbo, rel=1e-10, abs=1e-9)
        np.testing.assert_allclose(after.posteriors, R.sum(2))


@pytest.mark.parametrize("seed", range(3))
def test_each_update_maximizes_the_elbo(seed):
    """The conjugate update is the best q(params) for R_prev, and the E-step the best q(y, g)
    for those parameters: random nearby alternatives never score higher (an independent check
    of the update formulas that the test above takes from the model)."""
    tb = random_table(seed, L=2 + seed % 2)
    opts = {**_opts(seed), "subtypes": 2}
    R_prev, R, _ = _states(tb, seed, opts, 2)
    params = conjugate_update(tb, R_prev, *_prior_args(opts))
    at_update = elbo_at(tb, params, R_prev, *_prior_args(opts))[0]
    at_estep = elbo_at(tb, params, R, *_prior_args(opts))[0]
    rng = np.random.default_rng(seed)
    for _ in range(15):
        moved = [p * np.exp(1e-3 * rng.standard_normal(p.shape)) for p in params]
        assert elbo_at(tb, moved, R_prev, *_prior_args(opts))[0] <= at_update + 1e-10
        other = rng.dirichlet(np.ones(R.shape[1] * R.shape[2]), size=R.shape[0]).reshape(R.shape)
        mixed = 0.99 * R + 0.01 * other
        assert elbo_at(tb, params, mixed, *_prior_args(opts))[0] <= at_estep + 1e-10


def test_unanimous_workers_and_a_lone_dissenter():
    # t1..t4 unanimous among 3 workers; t5: two say 1, one says 0
    task = ["t1"] * 3 + ["t2"] * 3 + ["t3"] * 3 + ["t4"] * 3 + ["t5"] * 3
    worker = ["a", "b", "c"] * 5
    label = [0] * 3 + [1] * 3 + [0] * 3 + [1] * 3 + [1, 1, 0]
    tb = from_arrays(task, worker, label, classes=[0, 1])
    r = ebcc(tb)
    assert r.labels.tolist() == [0, 1, 0, 1, 1]
    assert r.converged and np.all(np.diff(r.objective) >= -1e-12 * np.abs(r.objective[1:]))
    assert np.all(r.posteriors.max(1) > 0.8)
    np.testing.assert_allclose(r.posteriors.sum(1), 1.0)
    np.testing.assert_allclose(r.confusion.sum(2), 1.0)
    np.testing.assert_allclose(r.priors.sum(), 1.0)
    assert r.skills[2] < r.skills[0]   # c dissents once


def subtyped(seed, n_t=400, n_w=8, hi=0.95, lo=0.45):
    """Binary truth and two kinds of task: on kind 0 the first half of the workers is right
    with probability `hi` and the second half with `lo`, on kind 1 the other way round.
    Each half errs together on its bad kind (a worker correlation EBCC's subtypes model)."""
    rng = np.random.default_rng(seed)
    truth, kind = rng.integers(2, size=n_t), rng.integers(2, size=n_t)
    rows = ([], [], [])
    for t in range(n_t):
        for w in range(n_w):
            acc = hi if (w < n_w // 2) == (kind[t] == 0) else lo
            lab = truth[t] if rng.random() < acc else 1 - truth[t]
            rows[0].append(t), rows[1].append(w), rows[2].append(int(lab))
    tb = from_arrays(*rows, classes=[0, 1])
    return tb, gold_from_arrays(tb, list(range(n_t)), truth.tolist())


@pytest.mark.parametrize("seed", range(3))
def test_subtypes_recover_what_one_confusion_per_worker_cannot(seed):
    # averaged over both kinds every worker is right 70 % of the time, but on each kind half
    # the workers is worse than chance; Dawid-Skene (one confusion per worker) settles near
    # chance (0.54 over 6 seeds), EBCC learns the kinds as subtypes (0.91)
    tb, gold = subtyped(seed)
    e, d = accuracy(ebcc(tb), gold), accuracy(dawid_skene(tb), gold)
    assert e >= 0.85 and e >= d + 0.2, (e, d)


def test_seeded_start():
    tb = random_table(3, n_t=40, n_w=6, L=3)
    a, b = ebcc(tb, seed=5), ebcc(tb, seed=5)
    np.testing.assert_array_equal(a.posteriors, b.posteriors)
    assert a.objective == b.objective
    c = ebcc(tb, seed=6)
    assert not np.allclose(a.params["subtype_posteriors"], c.params["subtype_posteriors"])


def test_iteration_cap_and_zero_iterations():
    tb = random_table(1, n_t=30, n_w=5)
    r = ebcc(tb, max_iter=2, tol=0.0)
    assert r.iterations == 2 and not r.converged and len(r.objective) == 2
    z = ebcc(tb, max_iter=0)
    assert z.iterations == 0 and not z.converged and z.objective == []
    np.testing.assert_allclose(z.posteriors.sum(1), 1.0)


@pytest.mark.parametrize("kw,field", [
    ({"subtypes": 0}, "subtypes"), ({"subtypes": 2.5}, "subtypes"),
    ({"subtypes": 10**9}, "subtypes"), ({"subtypes": 10**30}, "subtypes"),
    ({"concentration": -1.0}, "concentration"), ({"concentration": 1e12}, "concentration"),
    ({"class_prior": float("nan")}, "class_prior"),
    ({"confusion_prior": (4.0,)}, "confusion_prior"), ({"confusion_prior": 4.0}, "confusion_prior"),
    ({"confusion_prior": (4.0, 0.0)}, "confusion_prior"),
    ({"confusion_prior": (1.0, 4.0)}, "confusion_prior"),  # favours wrong answers
    ({"tol": -1.0}, "tol"), ({"ties": "coin"}, "ties"), ({"seed": -1}, "seed"),
    ({"seed": None}, "seed"), ({"seed": 1.5}, "seed"),
])
def test_bad_options_one_line(kw, field):
    tb = random_table(0)
    with pytest.raises(InputError, match=field) as e:
        ebcc(tb, **kw)
    assert "\n" not in str(e.value)


def test_worker_without_answers_has_no_skill():
    tb = random_table(2, n_t=20, n_w=5)
    sub = tb.subset(tb.worker != 3)   # worker 3 stays in the table with no answers
    r = ebcc(sub)
    assert sub.labels_per_worker()[3] == 0 and np.isnan(r.skills[3])
    assert np.all(np.isfinite(np.delete(r.skills, 3)))
    np.testing.assert_allclose(r.params["subtype_weights"].sum(1), 1.0)


def test_model_options_through_the_registry():
    from crowdopt.crowd import run_method
    tb = random_table(4, n_t=30, n_w=5)
    a = run_method(tb, "ebcc", subtypes=3, concentration=0.5, seed=2)
    b = ebcc(tb, subtypes=3, concentration=0.5, seed=2)
    np.testing.assert_array_equal(a.posteriors, b.posteriors)
    assert a.params["subtype_posteriors"].shape == (tb.n_tasks, tb.n_classes, 3)
