"""GLAD: labels, abilities and difficulties (Whitehill, Ruvolo, Wu, Bergsma & Movellan, NIPS 2009).

Model (paper eq. 1, with the K-class form of its Sec. 3 and of crowd-kit): worker w with
ability alpha_w in R answers task t of inverse difficulty beta_t = exp(b_t) > 0 correctly with
probability sigma(alpha_w beta_t), else picks one of the K - 1 wrong classes uniformly:

    P(l | y_t = k) = sigma(z)            if l = k,   z = alpha_w * exp(b_t)
                   = (1 - sigma(z))/(K-1) otherwise.

Priors (the paper's Gaussian priors, Sec. 3): alpha_w ~ N(mu_a, sd_a^2), b_t ~ N(mu_b, sd_b^2)
(defaults 1, 1 as in the authors' code and crowd-kit). EM (paper Sec. 3, eqs. 3-5):

    E-step  T[t,k] ~ pi_k prod_{(w,l) in t} P(l | k)
    M-step  maximise Q = sum_e [p_e log sigma(z_e) + (1 - p_e) log((1 - sigma(z_e))/(K-1))]
                         + log N(alpha) + log N(b),      p_e = T[t_e, l_e]

with dQ/dalpha_w = sum_e beta_t (p_e - sigma(z_e)) - (alpha_w - mu_a)/sd_a^2 and
dQ/db_t = sum_e z_e (p_e - sigma(z_e)) - (b_t - mu_b)/sd_b^2 (paper eqs. 4-5). Q separates over
workers for fixed b and over tasks for fixed alpha, so the M-step is block coordinate ascent:
one safeguarded Newton (alpha, Q concave) or Fisher-scoring (b) step for every worker at once,
then for every task at once, each step halved until its own term does not decrease. Q never
decreases, so this generalized EM never decreases the objective

    F = sum_t log sum_k pi_k prod_{(w,l) in t} P(l | k) + log N(alpha) + log N(b)

(up to a constant), whose trace is `objective`. All per-label work is `np.bincount`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
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

GLAD_MAX_ITER = 1000
_HALVINGS = 30


def glad(table: LabelTable, *, gold: Gold | None = None, init: str = "mv",
         priors: str = "uniform", alpha_prior: tuple[float, float] = (1.0, 1.0),
         beta_prior: tuple[float, float] = (1.0, 1.0), tol: float = EM_TOL,
         max_iter: int = GLAD_MAX_ITER, ties: str = "random", seed: int = 0
         ) -> AggregationResult:
    """GLAD EM (module docstring). `alpha_prior` / `beta_prior`: (mean, sd) of the Gaussian
    priors on alpha_w and on b_t = log beta_t. `priors`: class prior 'uniform' (fixed, as in
    the paper) or 'learn' (pi_k = mean_t T[t,k]). Start, gold clamping and stopping as in
    `dawid_skene`: an M-step from majority-vote posteriors, stop when the objective rises by
    at most `tol * |F|`. `skills` = the worker's mean P(correct) over its tasks; `params`
    holds `alpha` (per worker) and `beta` (= exp(b), per task).
    """
    _check_ties(ties, seed)
    _require_rows(table)
    check_iteration_args(tol, max_iter)
    mu_a, sd_a = _gauss(alpha_prior, "alpha_prior")
    mu_b, sd_b = _gauss(beta_prior, "beta_prior")
    n_t, n_w, K = table.n_tasks, table.n_workers, table.n_classes
    fixed = prior_rule(priors, None, K)
    clamp = _gold_clamp(gold, n_t, K) if init == "mv" else None
    t, w, lab = table.task, table.worker, table.label
    log_km1 = np.log(K - 1) if K > 1 else 0.0
    alpha = np.full(n_w, mu_a)
    b = np.full(n_t, mu_b)
    post = start_posteriors(table, init, gold)  # n_t x K
    if clamp is not None:
        post[clamp[0]] = clamp[1]
    pi = post.mean(0) if fixed is None else fixed
    objs: list[float] = []
    lls: list[float] = []
    it, converged = 0, False
    while it < max_iter:
        p = post[t, lab]
        alpha = _ascend(alpha, w, n_w, np.exp(b)[t], p, mu_a, sd_a, log_km1, log_scale=False)
        b = _ascend(b, t, n_t, alpha[w], p, mu_b, sd_b, log_km1, log_scale=True)
        if fixed is None:
            pi = post.mean(0)
        z = alpha[w] * np.exp(b)[t]
        post, ll = _e_step(z, t, lab, n_t, K, pi, log_km1, clamp)
        it += 1
        lls.append(ll)
        objs.append(ll - 0.5 * np.sum(((alpha - mu_a) / sd_a) ** 2)
                    - 0.5 * np.sum(((b - mu_b) / sd_b) ** 2))
        if len(objs) > 1 and relative_rise(objs[-1], objs[-2]) <= tol:
            converged = True
            break
    z = alpha[w] * np.exp(b)[t]
    if it == 0:
        post, _ = _e_step(z, t, lab, n_t, K, pi, log_km1, clamp)
    correct = 1.0 / (1.0 + np.exp(-z))
    n = table.labels_per_worker()
    skills = np.divide(np.bincount(w, weights=correct, minlength=n_w), n,
                       out=np.full(n_w, np.nan), where=n > 0)
    labels = break_ties(post, ties=ties, seed=seed)
    return AggregationResult("glad", labels, post, skills, it, converged, None, pi, lls, objs,
                             "log-likelihood + log prior (GLAD, generalized EM)",
                             {"alpha": alpha, "beta": np.exp(b)})


def _gauss(pair, name: str) -> tuple[float, float]:
    try:
        mu, sd = (float(x) for x in pair)
    except (TypeError, ValueError):
        raise InputError(name, "(mean, sd) with sd > 0", pair) from None
    if not (np.isfinite(mu) and np.isfinite(sd) and sd > 0):
        raise InputError(name, "(mean, sd) with sd > 0", pair)
    return mu, sd


def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -z)


def _label_terms(z: np.ndarray, p: np.ndarray, log_km1: float) -> np.ndarray:
    """Per-label Q terms p log sigma(z) + (1 - p) (log(1 - sigma(z)) - log(K - 1))."""
    return p * _log_sigmoid(z) + (1.0 - p) * (_log_sigmoid(-z) - log_km1)


def _ascend(x: np.ndarray, owner: np.ndarray, n: int, coef: np.ndarray, p: np.ndarray,
            mu: float, sd: float, log_km1: float, *, log_scale: bool) -> np.ndarray:
    """One safeguarded second-order ascent step on every coordinate of x at once.

    Coordinate i owns the labels with owner == i; its term is the sum of `_label_terms` over
    them minus (x_i - mu)^2 / (2 sd^2). Per label z = coef * x[owner] (alpha: coef = beta_t; z
    is linear in x, so the Fisher information below is the exact negative curvature: a Newton
    step) or z = coef * exp(x[owner]) with `log_scale` (b: coef = alpha_w, dz/db = z; Fisher
    scoring). A coordinate's step is halved until its term does not decrease (at most 30
    times, else it keeps its value), so the M-step objective Q never decreases.
    """
    def zfun(v: np.ndarray) -> np.ndarray:
        return coef * (np.exp(v[owner]) if log_scale else v[owner])

    var = sd * sd
    z = zfun(x)
    s = 1.0 / (1.0 + np.exp(-z))
    dz = z if log_scale else coef
    grad = np.bincount(owner, weights=dz * (p - s), minlength=n) - (x - mu) / var
    fisher = np.bincount(owner, weights=s * (1 - s) * dz * dz, minlength=n) + 1.0 / var
    step = np.clip(grad / fisher, -5.0, 5.0)
    old = np.bincount(owner, weights=_label_terms(z, p, log_km1), minlength=n) \
        - 0.5 * (x - mu) ** 2 / var
    out = x.copy()
    todo = np.flatnonzero(step != 0)
    for _ in range(_HALVINGS):
        if todo.size == 0:
            break
        cand = out.copy()
        cand[todo] = x[todo] + step[todo]
        zc = zfun(cand)
        new = np.bincount(owner, weights=_label_terms(zc, p, log_km1), minlength=n) \
            - 0.5 * (cand - mu) ** 2 / var
        ok = new[todo] >= old[todo]
        out[todo[ok]] = cand[todo[ok]]
        todo = todo[~ok]
        step[todo] *= 0.5
    return out


def _e_step(z: np.ndarray, t: np.ndarray, lab: np.ndarray, n_t: int, K: int, pi: np.ndarray,
            log_km1: float, clamp) -> tuple[np.ndarray, float]:
    """Posteriors n_t x K and the log-likelihood: score[t,k] = log pi_k + sum_e
    (log(1 - sigma(z_e)) - log(K-1)) + sum_{e: l_e = k} (z_e + log(K-1))."""
    base = np.bincount(t, weights=_log_sigmoid(-z) - log_km1, minlength=n_t)
    hit = np.bincount(t * K + lab, weights=z + log_km1, minlength=n_t * K).reshape(n_t, K)
    with np.errstate(divide="ignore"):
        logpi = np.maximum(np.log(pi), -1e200)
    score = np.ascontiguousarray((hit + base[:, None] + logpi[None, :]).T)
    post, ll = normalize_scores(score, clamp)
    return np.ascontiguousarray(post.T), ll
