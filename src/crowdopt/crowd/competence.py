"""MACE: Multi-Annotator Competence Estimation (Hovy, Berg-Kirkpatrick, Vaswani & Hovy, NAACL 2013).

Generative story (paper Sec. 2, Fig. 1): the true class y_t ~ pi (uniform in the paper); worker
w is competent on a label with probability theta_w, and then answers y_t; otherwise it spams,
drawing its answer from its own strategy xi_w (a distribution over the L classes):

    P(l | y_t = k) = theta_w [l = k] + (1 - theta_w) xi_w[l].

Priors (paper Sec. 2.2): theta_w ~ Beta(a, b), xi_w ~ Dirichlet(c). Two fits, both iterating
the same expected counts of the spam indicator S_e (paper Sec. 2.1):

    E-step  T[t,k] ~ pi_k prod_{(w,l) in t} (kappa_w [l = k] + sigma_w xi~_w[l])
            r_e = P(S_e = 0 | data) = T[t_e, l_e] kappa_w / (kappa_w + sigma_w xi~_w[l_e])
            know_w = sum_{e in w} r_e,  spam_w[l] = sum_{e in w, l_e = l} (1 - r_e)

* `variational=True` (default; the paper's variational Bayes, as the MACE tool and crowd-kit):
  q(theta_w) = Beta(a + know_w, b + sum_l spam_w[l]), q(xi_w) = Dirichlet(c + spam_w), and the
  E-step uses the geometric means kappa = exp(E log theta), sigma = exp(E log(1 - theta)),
  xi~ = exp(E log xi) (digamma differences). Each step increases the evidence lower bound
      ELBO = sum_t log sum_k pi_k prod_e (kappa [l = k] + sigma xi~[l])
             - sum_w KL(q(theta_w) || Beta(a, b)) - sum_w KL(q(xi_w) || Dirichlet(c))
  (Beal 2003, conjugate-exponential VB-EM). Defaults a = b = 0.5, c = 10 (crowd-kit's).
* `variational=False`: MAP EM, kappa = theta, sigma = 1 - theta, xi~ = xi with
      theta_w = (know_w + a - 1) / (n_w + a + b - 2),  xi_w[l] ~ spam_w[l] + c - 1,
  which increases the log-likelihood + log prior (a = b = c = 1 + `smoothing`).

The trace of the increased quantity is `objective`. Like the paper's tool (10 restarts of 50
iterations), every start (`restarts` random ones, seeded, plus the one from majority vote)
runs for at most 50 iterations, and the start with the largest objective then runs on to
convergence (so the trace of the kept start is non-decreasing from its first iteration to the
last). All per-label work is `np.bincount`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaln, digamma, gammaln

from ..errors import InputError
from ..validate import as_list, real
from .aggregate import (
    EM_TOL,
    AggregationResult,
    _check_ties,
    _gold_clamp,
    _require_rows,
    break_ties,
    check_iteration_args,
    normalize_scores,
    prior_rule,
    relative_rise,
    start_posteriors,
)
from .tables import Gold, LabelTable

MACE_MAX_ITER = 1000
MACE_RESTARTS = 10
MACE_BURN_IN = 50
MACE_THETA_PRIOR = (0.5, 0.5)
MACE_STRATEGY_PRIOR = 10.0
MACE_SMOOTHING = 0.01


MAX_RESTARTS = 1000  # random starts of one run


def mace(table: LabelTable, *, gold: Gold | None = None, init: str = "mv",
         priors: str = "learn", variational: bool = True,
         theta_prior: tuple[float, float] = MACE_THETA_PRIOR,
         strategy_prior: float = MACE_STRATEGY_PRIOR, smoothing: float = MACE_SMOOTHING,
         restarts: int = MACE_RESTARTS, tol: float = EM_TOL, max_iter: int = MACE_MAX_ITER,
         ties: str = "random", seed: int = 0) -> AggregationResult:
    """MACE by variational Bayes (default) or MAP EM, with restarts (module docstring).

    `theta_prior` (a, b) and `strategy_prior` c are the VB priors; the MAP fit uses
    a = b = c = 1 + `smoothing` instead. `priors`: class prior 'learn' (default: pi_k = mean_t
    T[t,k]; on product, 88 % negatives, the paper's 'uniform' converges to 0.85 accuracy
    against 0.93) or 'uniform'. `restarts`: random starts (competence ~ U(0.5, 1), strategy ~ Dirichlet(1), drawn
    from `seed`) besides the majority-vote start; 0 runs that start only. Gold and `init` as in
    `dawid_skene`. `skills` = E[theta] (the probability of a competent answer); `params`
    holds `theta`, `strategy` (E[xi], n_workers x L) and the final objective of every start.
    """
    _check_ties(ties, seed)
    _require_rows(table)
    check_iteration_args(tol, max_iter, smoothing)
    if isinstance(restarts, bool) or not isinstance(restarts, int | np.integer) or \
            not 0 <= restarts <= MAX_RESTARTS:
        raise InputError("restarts", f"an integer in [0, {MAX_RESTARTS}]", restarts)
    try:
        a0, b0 = (real(x, "theta_prior") for x in as_list(theta_prior))
    except (TypeError, ValueError):
        raise InputError("theta_prior", "two positive numbers (a, b)", theta_prior) from None
    c0 = real(strategy_prior, "strategy_prior")
    if variational and not (a0 > 0 and b0 > 0 and c0 > 0 and np.isfinite(a0 + b0 + c0)):
        raise InputError("theta_prior / strategy_prior", "positive numbers",
                         (theta_prior, strategy_prior))
    if not variational:
        a0 = b0 = c0 = 1.0 + smoothing
    n_t, n_w, L = table.n_tasks, table.n_workers, table.n_classes
    fixed = prior_rule(priors, None, L)
    clamp = _gold_clamp(gold, n_t, L) if init == "mv" else None
    post0 = start_posteriors(table, init, gold)
    if clamp is not None:
        post0[clamp[0]] = clamp[1]
    fit = _Fit(table, a0, b0, c0, variational, clamp)
    rng = np.random.default_rng(seed)
    n = fit.n
    best, finals = None, []
    burn = min(MACE_BURN_IN, max_iter) if restarts else max_iter
    for r in range(restarts + 1):
        if r == 0:
            pi = post0.mean(0) if fixed is None else fixed
            know, spam = fit.counts(post0, None)
        else:
            th = rng.uniform(0.5, 1.0, size=n_w)
            know = n * th
            spam = (n * (1 - th))[:, None] * rng.dirichlet(np.ones(L), size=n_w)
            pi = np.full(L, 1.0 / L) if fixed is None else fixed
        run = fit.run(know, spam, pi, fixed, tol, burn)
        finals.append(run["objective"][-1])
        if best is None or finals[-1] > best["objective"][-1]:
            best = run
    if not best["converged"] and best["iterations"] < max_iter:  # continue the best start
        more = fit.run(best["know"], best["spam"], best["pi"], fixed, tol,
                       max_iter - best["iterations"], post=best["post"], wts=best["wts"])
        best = {**more, "iterations": best["iterations"] + more["iterations"],
                "ll": best["ll"] + more["ll"][1:],
                "objective": best["objective"] + more["objective"][1:]}
    labels = break_ties(best["post"], ties=ties, seed=seed)
    theta, xi = fit.point(best["know"], best["spam"])
    skills = np.where(n > 0, theta, np.nan)
    name = ("evidence lower bound (MACE, variational Bayes)" if variational
            else "log-likelihood + log prior (MACE, MAP EM)")
    return AggregationResult("mace", labels, best["post"], skills, best["iterations"],
                             best["converged"], None, best["pi"], best["ll"], best["objective"],
                             name, {"theta": theta, "strategy": xi, "start_objectives": finals})


class _Fit:
    """The fixed data and priors of one MACE fit; parameters are (know, spam) counts."""

    def __init__(self, table: LabelTable, a0: float, b0: float, c0: float, variational: bool,
                 clamp) -> None:
        self.table, self.a0, self.b0, self.c0 = table, a0, b0, c0
        self.vb, self.clamp = variational, clamp
        self.n = table.labels_per_worker().astype(float)
        L = table.n_classes
        self.tl = table.task * L + table.label     # flat (task, label) index per answer
        self.wl = table.worker * L + table.label   # flat (worker, label) index per answer

    def weights(self, know: np.ndarray, spam: np.ndarray):
        """(kappa, sigma, xi~) of the E-step from the counts (module docstring)."""
        a, b, c = self.a0, self.b0, self.c0
        ka, kb = know + a, spam.sum(1) + b
        cc = spam + c
        if self.vb:
            tot = digamma(ka + kb)
            return (np.exp(digamma(ka) - tot), np.exp(digamma(kb) - tot),
                    np.exp(digamma(cc) - digamma(cc.sum(1, keepdims=True))))
        theta = np.divide(ka - 1, ka + kb - 2, out=np.full_like(ka, 0.5), where=ka + kb > 2)
        xi = np.divide(cc - 1, (cc - 1).sum(1, keepdims=True),
                       out=np.full_like(cc, 1.0 / cc.shape[1]),
                       where=(cc - 1).sum(1, keepdims=True) > 0)
        return theta, 1.0 - theta, xi

    def point(self, know: np.ndarray, spam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """E[theta], E[xi] (VB) or the MAP values."""
        if not self.vb:
            theta, _, xi = self.weights(know, spam)
            return theta, xi
        ka, kb, cc = know + self.a0, spam.sum(1) + self.b0, spam + self.c0
        return ka / (ka + kb), cc / cc.sum(1, keepdims=True)

    def penalty(self, know: np.ndarray, spam: np.ndarray) -> float:
        """VB: sum of the KL divergences of q from the priors; MAP: minus the log prior."""
        a, b, c = self.a0, self.b0, self.c0
        if not self.vb:
            theta, _, xi = self.weights(know, spam)
            with np.errstate(divide="ignore"):
                lp = (a - 1) * np.sum(np.log(theta)) + (b - 1) * np.sum(np.log1p(-theta)) \
                    + (c - 1) * np.sum(np.log(xi))
            return -float(lp) if (a, b, c) != (1.0, 1.0, 1.0) else 0.0
        ka, kb, cc = know + a, spam.sum(1) + b, spam + c
        L = cc.shape[1]
        kl_beta = (betaln(a, b) - betaln(ka, kb) + (ka - a) * digamma(ka)
                   + (kb - b) * digamma(kb) - (ka + kb - a - b) * digamma(ka + kb))
        s1 = cc.sum(1)
        kl_dir = (gammaln(s1) - gammaln(cc).sum(1) - gammaln(L * c) + L * gammaln(c)
                  + ((cc - c) * (digamma(cc) - digamma(s1)[:, None])).sum(1))
        return float(np.sum(kl_beta) + np.sum(kl_dir))

    def e_step(self, know, spam, pi) -> tuple[np.ndarray, float, tuple]:
        t, w = self.table.task, self.table.worker
        n_t, L = self.table.n_tasks, self.table.n_classes
        kappa, sigma, xi = self.weights(know, spam)
        sp = (sigma[:, None] * xi).ravel()[self.wl]
        log_spam = np.log(np.maximum(sp, 1e-300))  # P(l | k != l) = 0 as exp(-690)
        log_hit = np.log(kappa[w] + sp)
        with np.errstate(divide="ignore"):
            logpi = np.maximum(np.log(pi), -1e200)
        base = np.bincount(t, weights=log_spam, minlength=n_t)
        hit = np.bincount(self.tl, weights=log_hit - log_spam, minlength=n_t * L)
        score = np.ascontiguousarray((hit.reshape(n_t, L) + base[:, None] + logpi[None, :]).T)
        post, ll = normalize_scores(score, self.clamp)
        return np.ascontiguousarray(post.T), ll, (kappa, sp)

    def counts(self, post, weights) -> tuple[np.ndarray, np.ndarray]:
        """Expected (know, spam) counts. With weights None (the majority-vote start) every
        answer counts as competent with probability T[t, l]."""
        w = self.table.worker
        n_w, L = self.table.n_workers, self.table.n_classes
        p = post.ravel()[self.tl]
        if weights is None:
            r = p
        else:
            kappa, sp = weights
            r = p * kappa[w] / (kappa[w] + sp)
        know = np.bincount(w, weights=r, minlength=n_w)
        spam = np.bincount(self.wl, weights=1.0 - r, minlength=n_w * L).reshape(n_w, L)
        return know, spam

    def run(self, know, spam, pi, fixed, tol, max_iter, post=None, wts=None) -> dict:
        """Iterate from (know, spam, pi) (or from a previous run's E-step `post`, `wts`)."""
        lls: list[float] = []
        objs: list[float] = []
        if post is None:
            post, ll, wts = self.e_step(know, spam, pi)
        else:
            ll = self.loglik(know, spam, pi)
        lls.append(ll)
        objs.append(ll - self.penalty(know, spam))
        it, converged = 0, False
        while it < max_iter:
            know, spam = self.counts(post, wts)
            if fixed is None:
                pi = post.mean(0)
            post, ll, wts = self.e_step(know, spam, pi)
            it += 1
            lls.append(ll)
            objs.append(ll - self.penalty(know, spam))
            if relative_rise(objs[-1], objs[-2]) <= tol:
                converged = True
                break
        return {"post": post, "know": know, "spam": spam, "pi": pi, "iterations": it,
                "converged": converged, "ll": lls, "objective": objs, "wts": wts}

    def loglik(self, know, spam, pi) -> float:
        return self.e_step(know, spam, pi)[1]
