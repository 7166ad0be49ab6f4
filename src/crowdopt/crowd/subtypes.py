"""EBCC: Enhanced Bayesian Classifier Combination (Li, Rubinstein & Cohn, ICML 2019,
"Exploiting Worker Correlation for Label Aggregation in Crowdsourcing").

Workers who err together (the same misreading of an item) break Dawid-Skene's assumption that
answers are independent given the true class. EBCC keeps the independence but splits every
true class k into M subtypes: given the class AND the subtype, answers are independent, so
correlated answers are explained by a shared subtype. The model (as in the authors' code):

    tau ~ Dirichlet(alpha)                          class proportions
    pi_k ~ Dirichlet(a_pi / M, ..., a_pi / M)       subtype weights of class k (a small a_pi
                                                    leaves most of the M subtypes empty)
    v_wkm ~ Dirichlet(beta_k), beta_kl = a_v [l = k] + b_v [l != k]   answers of w on (k, m)
    y_t ~ tau,  g_t ~ pi_{y_t},  x_tw ~ v_{w, y_t, g_t}

Mean-field variational Bayes with q(y_t, g_t) joint over the K = L M (class, subtype) cells;
the updates, with R[t, (k,m)] = q(y_t = k, g_t = m) and n[w,(k,m),l] = sum_{t: w answered l}
R[t,(k,m)] (one sparse product, as in `dawid_skene`):

    q(v_wkm) = Dirichlet(beta_k + n[w,(k,m),.])
    q(pi_k)  = Dirichlet(a_pi / M + N_k.),          N_km = sum_t R[t,(k,m)]
    q(tau)   = Dirichlet(alpha + sum_m N_km)
    R[t,(k,m)] ~ exp(E log tau_k + E log pi_km + sum_{(w,l) in t} E log v_wkm[l])

Every update is an exact coordinate step, so the evidence lower bound never decreases; right
after the R update it is

    ELBO = sum_t log sum_(k,m) exp(score[t,(k,m)]) - KL(q(v) || p(v)) - KL(q(pi) || p(pi))
           - KL(q(tau) || p(tau)),

whose trace is `objective`. Defaults are those of the authors' code (M = 10, a_pi = 0.1,
alpha = 1, a_v = 4, b_v = 1), and so is the start: majority-vote fractions, each class's share
split over its subtypes by a seeded Dirichlet(1) draw. The stopping rule is crowdopt's (a
relative ELBO rise of at most `tol`), not theirs (posteriors within 1e-3). The class posterior
of a task sums R over its subtypes.
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammaln

from ..errors import InputError
from ..validate import MAX_INT, integer, real, sequence
from .aggregate import (
    EM_TOL,
    AggregationResult,
    _check_ties,
    _require_rows,
    break_ties,
    check_iteration_args,
    count_matrix,
    normalize_scores,
    relative_rise,
    start_posteriors,
)
from .tables import LabelTable

EBCC_MAX_ITER = 1000
EBCC_SUBTYPES = 10
EBCC_CONCENTRATION = 0.1         # a_pi
EBCC_CLASS_PRIOR = 1.0           # alpha
EBCC_CONFUSION_PRIOR = (4.0, 1.0)  # (a_v, b_v)
EBCC_MAX_CELLS = 50_000_000      # n_workers * L * L * M: the size of q(v)
PRIOR_MIN, PRIOR_MAX = 1e-6, 1e6


def ebcc(table: LabelTable, *, subtypes: int = EBCC_SUBTYPES,
         concentration: float = EBCC_CONCENTRATION, class_prior: float = EBCC_CLASS_PRIOR,
         confusion_prior: tuple[float, float] = EBCC_CONFUSION_PRIOR, tol: float = EM_TOL,
         max_iter: int = EBCC_MAX_ITER, ties: str = "random", seed: int = 0
         ) -> AggregationResult:
    """EBCC by variational Bayes (module docstring). `subtypes` M, `concentration` a_pi,
    `class_prior` alpha, `confusion_prior` (a_v, b_v). Stops when the ELBO rises by at most
    `tol * |ELBO|` in an iteration, or after `max_iter` iterations (`converged` False).

    `confusion` is each worker's class-level confusion E[sum_m pi_km v_wkm] [true, answer];
    `skills` = sum_k E[tau_k] confusion[w,k,k] (NaN for a worker without answers);
    `priors` = E[tau]; `params` holds `subtype_weights` (E[pi], L x M, rows sum to 1) and
    `subtype_posteriors` (n_tasks x L x M).
    """
    _check_ties(ties, seed)
    _require_rows(table)
    check_iteration_args(tol, max_iter)
    M = integer(subtypes, "subtypes", lo=1, hi=MAX_INT)
    # priors in [1e-6, 1e6]: beyond, the KL terms lose their digits and the ELBO (and the
    # stopping rule on it) means nothing
    a_pi = real(concentration, "concentration", lo=PRIOR_MIN, hi=PRIOR_MAX)
    alpha = real(class_prior, "class_prior", lo=PRIOR_MIN, hi=PRIOR_MAX)
    a_v, b_v = (real(x, "confusion_prior", lo=PRIOR_MIN, hi=PRIOR_MAX)
                for x in sequence(confusion_prior, "confusion_prior", length=2))
    if a_v < b_v:  # a prior that favours wrong answers fits the classes swapped
        raise InputError("confusion_prior", "(a_v, b_v) with a_v >= b_v", confusion_prior)
    n_t, n_w, L = table.n_tasks, table.n_workers, table.n_classes
    if n_w * L * L * M > EBCC_MAX_CELLS:
        raise InputError("subtypes", f"at most {max(EBCC_MAX_CELLS // (n_w * L * L), 1)} for "
                         f"{n_w} workers and {L} classes (memory)", M)
    K = L * M
    N = count_matrix(table)
    NT = N.T.tocsr()
    beta = np.repeat(np.eye(L) * (a_v - b_v) + b_v, M, axis=0)  # K x L, row k*M + m
    rng = np.random.default_rng(seed)
    split = rng.dirichlet(np.ones(M), size=(n_t, L))  # n_t x L x M
    start = start_posteriors(table, "mv", None)  # n_t x L
    # cell-major R[(k,m), t] (C order), as `dawid_skene` keeps its posteriors class-major
    R = np.ascontiguousarray((start[:, :, None] * split).reshape(n_t, K).T)
    objs: list[float] = []
    it, converged = 0, False
    while it < max_iter:
        post = _Posterior(NT, R, beta, a_pi, alpha, n_w, L, M)
        R, lz = normalize_scores(post.scores(N))
        it += 1
        objs.append(lz - post.kl())
        if len(objs) > 1 and relative_rise(objs[-1], objs[-2]) <= tol:
            converged = True
            break
    if it == 0:  # max_iter == 0: the parameters of the start
        post = _Posterior(NT, R, beta, a_pi, alpha, n_w, L, M)
    cells = np.ascontiguousarray(R.T).reshape(n_t, L, M)
    posteriors = cells.sum(2)
    conf, priors, weights = post.means()
    skills = np.where(table.labels_per_worker() > 0, np.einsum("k,wkk->w", priors, conf),
                      np.nan)  # as MACE and GLAD: no answers, no skill
    labels = break_ties(posteriors, ties=ties, seed=seed)
    return AggregationResult("ebcc", labels, posteriors, skills, it, converged, conf, priors,
                             [], objs, "evidence lower bound (EBCC, variational Bayes)",
                             {"subtype_weights": weights, "subtype_posteriors": cells})


class _Posterior:
    """q(v), q(pi), q(tau) from the cell posteriors R (one coordinate step, module docstring)."""

    def __init__(self, NT, R: np.ndarray, beta: np.ndarray, a_pi: float, alpha: float,
                 n_w: int, L: int, M: int) -> None:
        K = L * M
        self.L, self.M, self.beta, self.a_pi, self.alpha = L, M, beta, a_pi, alpha
        # n[w, (k,m), l]: the sparse product gives rows (w, l), columns (k, m)
        self.mu = np.asarray(NT @ R.T).reshape(n_w, L, K).transpose(0, 2, 1) + beta
        self.mu0 = self.mu.sum(2)
        self.elog_v = digamma(self.mu) - digamma(self.mu0)[:, :, None]  # E log v_wkm[l]
        n_km = R.sum(1).reshape(L, M)
        self.eta = a_pi / M + n_km  # q(pi_k) = Dirichlet(eta_k)
        self.nu = alpha + n_km.sum(1)

    def scores(self, N) -> np.ndarray:
        """Cell-major scores[(k,m), t] = E log tau_k + E log pi_km + sum E log v_wkm[l]."""
        n_w, K, L = self.mu.shape
        elog_pi = digamma(self.eta) - digamma(self.eta.sum(1, keepdims=True))
        elog_tau = digamma(self.nu) - digamma(self.nu.sum())
        logc = self.elog_v.transpose(0, 2, 1).reshape(n_w * L, K)  # row w*L + l, column (k, m)
        score = np.ascontiguousarray(np.asarray(N @ logc).T)
        score += (elog_pi + elog_tau[:, None]).reshape(K)[:, None]
        return score

    def kl(self) -> float:
        """KL(q(v)||p(v)) + KL(q(pi)||p(pi)) + KL(q(tau)||p(tau))."""
        n_w = self.mu.shape[0]
        b = self.beta
        kl_v = (np.sum(gammaln(self.mu0)) - np.sum(gammaln(self.mu))
                + n_w * (np.sum(gammaln(b)) - np.sum(gammaln(b.sum(1))))
                + np.sum((self.mu - b) * self.elog_v))  # the Dirichlet KL, digammas shared
        prior_pi = np.full(self.eta.shape, self.a_pi / self.M)
        return (float(kl_v) + _kl_dirichlet(self.eta, prior_pi)
                + _kl_dirichlet(self.nu, np.full(self.L, self.alpha)))

    def means(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(class-level confusion n_w x L x L, E[tau], E[pi] L x M)."""
        n_w, K, L = self.mu.shape
        v = self.mu / self.mu.sum(2, keepdims=True)
        weights = self.eta / self.eta.sum(1, keepdims=True)  # E[pi_km]
        conf = np.einsum("km,wkml->wkl", weights, v.reshape(n_w, L, self.M, L))
        return conf, self.nu / self.nu.sum(), weights


def _kl_dirichlet(a: np.ndarray, b: np.ndarray) -> float:
    """sum over leading axes of KL(Dirichlet(a) || Dirichlet(b)) along the last axis."""
    a0, b0 = a.sum(-1), b.sum(-1)
    per = (gammaln(a0) - gammaln(b0) - np.sum(gammaln(a) - gammaln(b), -1)
           + np.sum((a - b) * (digamma(a) - digamma(a0)[..., None]), -1))
    return float(np.sum(per))
