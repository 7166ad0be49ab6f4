"""Quality estimates for LS_OL that do not trust the majority on each tester (digest 7.8).

The paper's estimator (Fig. 1 step 2.3) scores labeler i by its agreement with each tester's
majority-of-majorities; when the crowd's majority is often wrong (pi(M) near 1/2) that
consensus is wrong on many testers and the learned order can be flipped. Here the testers'
true labels are latent: the one-coin model (labeler i right with probability a_i, otherwise a
uniformly drawn wrong class) is fitted by MAP EM on every label the testers received. A
tester's repeated assignments share one true label, so the data are counts
c[k, i, l] = labels l given by i on tester k (a label table cannot hold them: it has one label
per task and worker). With uniform class priors

    E-step: log q[k, l] = sum_i c[k, i, l] w_i + const_k,   w_i = log(a_i (K - 1) / (1 - a_i))
    M-step: a_i = (sum_{k,l} q[k, l] c[k, i, l] + s) / (n_i + 2 s)   (Beta(1 + s, 1 + s) MAP)

each O(testers x M x K), i.e. linear in the tester labels. Optionally the labels bought on
exploitation steps enter too (the set is chosen from past labels only, so their missingness is
ignorable): one row per distinct label vector with its multiplicity `mult`, the row's terms of
both steps weighted by it. The learner warm-starts EM from its previous estimate. The first
start is spectral: the rank-one fit of the labelers' agreement covariance (M-MSR,
crowd/rank_one.py), which recovers the order without a consensus.
For binary labels the fit is identifiable only up to a global flip (a -> 1 - a, truth ->
1 - truth have the same likelihood); the orientation of larger posterior probability under the
paper's assumption (A1) p_bar > 1/2 (not the stronger "majority right", a_min > 1/2) is kept,
re-decided at every fit. When the draw's mean accuracy is within the estimate's error of 1/2,
no estimator can orient it reliably from these labels (`orientation_confidence`).
"""

from __future__ import annotations

import math

import numpy as np

EM_SMOOTHING = 1.0  # s: Beta(2, 2) prior on each a_i
EM_TOL = 1e-6  # stop when no a_i moves by more than this
EM_MAX_ITER = 50  # per call; warm starts need a few
A_CLIP = 1e-6  # a_i kept inside (0, 1) for the log-odds


def weights(a: np.ndarray, K: int) -> np.ndarray:
    """One-coin log-odds w_i = log(a_i (K-1) / (1 - a_i)) (the MAP vote weights)."""
    a = np.clip(a, A_CLIP, 1.0 - A_CLIP)
    return np.log(a * (K - 1) / (1.0 - a))


def posteriors(counts: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E-step: q[k, l] = P(tester k's label is l | counts, a) and the log-normalizers
    (log sum_l exp of the unnormalized log posterior, for the objective)."""
    K = counts.shape[2]
    s = np.einsum("kil,i->kl", counts, weights(a, K))
    top = s.max(axis=1, keepdims=True)
    e = np.exp(s - top)
    z = e.sum(axis=1, keepdims=True)
    return e / z, (top + np.log(z))[:, 0]


def _mult(counts: np.ndarray, mult: np.ndarray | None) -> np.ndarray:
    """How many times each row of `counts` counts (one each without `mult`): repeated label
    vectors of the exploitation steps are stored once with their count."""
    return np.ones(len(counts)) if mult is None else np.asarray(mult, dtype=float)


def labels_per_labeler(counts: np.ndarray, mult: np.ndarray | None = None) -> np.ndarray:
    """n_i: labels of each labeler over the rows, each row counted `mult` times."""
    return _mult(counts, mult) @ counts.sum(axis=2)


def objective(counts: np.ndarray, a: np.ndarray, smoothing: float = EM_SMOOTHING,
              mult: np.ndarray | None = None) -> float:
    """Log posterior of a (up to a constant): sum_k mult_k log sum_l P(c_k | y = l, a) / K
    plus the Beta(1 + s, 1 + s) log prior; EM never lowers it."""
    K = counts.shape[2]
    m = _mult(counts, mult)
    ac = np.clip(a, A_CLIP, 1.0 - A_CLIP)
    n = counts.sum(axis=2)  # (tasks, M)
    _, lz = posteriors(counts, ac)
    base = n @ np.log((1.0 - ac) / (K - 1))  # every label wrong, per task
    return float(m @ (lz + base - np.log(K))
                 + smoothing * np.sum(np.log(ac) + np.log(1.0 - ac)))


def one_coin_map(counts: np.ndarray, a0: np.ndarray, *, smoothing: float = EM_SMOOTHING,
                 max_iter: int = EM_MAX_ITER, tol: float = EM_TOL,
                 mult: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """MAP EM for the one-coin accuracies a from counts (tasks x M x K; row k stands for
    mult[k] tasks with the same labels, 1 by default), started at a0; labelers without labels
    keep their start. Returns (a, iterations)."""
    m = _mult(counts, mult)
    n_i = labels_per_labeler(counts, m)
    a = np.asarray(a0, dtype=float).copy()
    it = 0
    while it < max_iter:
        it += 1
        q, _ = posteriors(counts, a)
        right = np.einsum("kil,kl,k->i", counts, q, m)
        new = np.where(n_i > 0, (right + smoothing) / (n_i + 2.0 * smoothing), a)
        done = np.max(np.abs(new - a), initial=0.0) <= tol
        a = new
        if done:
            break
    return a, it


def orient(a: np.ndarray, counts: np.ndarray, mult: np.ndarray | None = None) -> np.ndarray:
    """Binary labels: the global flip a -> 1 - a fits equally well, so only the generator's
    constraint mean p > 1/2 (assumption A1) orients the fit. The orientation of larger
    posterior probability is kept (`orientation_confidence`): the one whose mean accuracy over
    the labelers with labels is at least 1/2 (labelers without labels sit at the prior mean
    1/2). Decided afresh at every fit, from all labels fitted. K > 2: unchanged."""
    if counts.shape[2] != 2:
        return a
    seen = labels_per_labeler(counts, mult) > 0
    return 1.0 - a if float(np.sum(a[seen] - 0.5)) < 0 else a


def orientation_confidence(a: np.ndarray, counts: np.ndarray,
                           smoothing: float = EM_SMOOTHING,
                           mult: np.ndarray | None = None) -> float:
    """Posterior probability that the binary fit's orientation is the right one: the
    likelihood is flip-symmetric, so P(orientation | labels) is the posterior mass of
    sum_i (a_i - 1/2) > 0 around each mode; with a_i ~ N(a_hat_i, a_hat_i (1 - a_hat_i) /
    (n_i + 2 s + 1)) (the Beta posterior's variance; 1/12 without labels) that is
    Phi(|sum_i (a_hat_i - 1/2)| / sqrt(sum_i var_i)). 1 for K > 2 (no flip symmetry)."""
    if counts.shape[2] != 2:
        return 1.0
    n = labels_per_labeler(counts, mult)
    a = np.clip(np.asarray(a, dtype=float), A_CLIP, 1.0 - A_CLIP)
    var = np.where(n > 0, a * (1.0 - a) / (n + 2.0 * smoothing + 1.0), 1.0 / 12.0)
    z = abs(float(np.sum(a - 0.5))) / math.sqrt(float(var.sum()))
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def tester_covariance(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Agreement covariance of the labelers over pairs of labels on the same tester (such
    pairs agree with probability a_i a_j + (1 - a_i)(1 - a_j)/(K - 1), whichever assignment
    they come from) and the number of such pairs, in crowd.rank_one.covariance's form."""
    K = counts.shape[2]
    n = counts.sum(axis=2)
    common = n.T @ n
    agree = np.einsum("kil,kjl->ij", counts, counts)
    np.fill_diagonal(common, 0)
    obs = common > 0
    C = np.zeros_like(common, dtype=float)
    C[obs] = (K * agree[obs] / common[obs] - 1.0) / (K - 1)
    return C, common


def spectral_start(counts: np.ndarray, n_tasks: int, seed: int = 0) -> np.ndarray:
    """One-coin accuracies from the rank-one fit of the tester covariance (M-MSR); labelers
    without a co-labeler get 1/K."""
    K = counts.shape[2]
    from ..crowd.rank_one import skills_from_covariance  # SciPy sparse: only when fitting

    C, common = tester_covariance(counts)
    s, *_ = skills_from_covariance(C, common, counts.sum(axis=(0, 2)), max(n_tasks, 1), K,
                                   max_iter=200, seed=seed)
    return s * (K - 1) / K + 1.0 / K


def majority_start(counts: np.ndarray, smoothing: float = EM_SMOOTHING) -> np.ndarray:
    """One M-step from each tester's label shares (the soft majority vote)."""
    share = counts.sum(axis=1)
    share = share / np.maximum(share.sum(axis=1, keepdims=True), 1e-300)
    right = np.einsum("kil,kl->i", counts, share)
    return (right + smoothing) / (counts.sum(axis=(0, 2)) + 2.0 * smoothing)


def estimate(counts: np.ndarray, start: np.ndarray | None, n_tasks: int, *,
             smoothing: float = EM_SMOOTHING, max_iter: int = EM_MAX_ITER,
             seed: int = 0, extra: np.ndarray | None = None,
             extra_mult: np.ndarray | None = None) -> np.ndarray:
    """The learner's EM estimate: warm start from `start` (the previous estimate), or the
    spectral start when there is none; oriented (A1); 1/2 for a labeler without labels (the
    prior mean, as the agreement estimators). A start with every a_i = 1/K (no
    information yet) is EM's fixed point, so it is replaced: spectral, else majority (both
    from the tester counts). `extra` (rows x M x K, multiplicities `extra_mult`): further
    labeled tasks, the exploitation steps', fitted with the testers."""
    K = counts.shape[2]
    if start is None or np.allclose(start, 1.0 / K):
        start = spectral_start(counts, n_tasks, seed)
    if np.allclose(start, 1.0 / K):
        start = majority_start(counts, smoothing)
    mult = None
    if extra is not None and len(extra):
        mult = np.concatenate([np.ones(len(counts)), _mult(extra, extra_mult)])
        counts = np.concatenate([counts, extra])
    a, _ = one_coin_map(counts, start, smoothing=smoothing, max_iter=max_iter, mult=mult)
    a = np.where(labels_per_labeler(counts, mult) > 0, a, 0.5)  # no label yet: 1/2
    return orient(a, counts, mult)
