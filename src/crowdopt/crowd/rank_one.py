"""M-MSR: worker skills by robust rank-one matrix completion (Ma & Olshevsky, NeurIPS 2020).

Under the one-coin model with L classes (worker w right with probability p_w, else a uniform
wrong class), the worker-by-worker agreement covariance

    C_ij = (L * agree_ij / common_ij - 1) / (L - 1),   i != j sharing at least one task,

has expectation s_i s_j with s_w = (L p_w - 1) / (L - 1) (paper Sec. 3): a rank-one matrix
observed off the diagonal where workers overlap. M-MSR (paper Algorithm 1, "Matrix
Mean-Subsequence-Reduced") fits |C| ~ u v^T by alternating trimmed means,

    v_j <- mean of {|C_ij| / u_i : i observed in column j} without its F largest values above
           v_j and its F smallest below v_j (fewer when fewer lie on that side)
    u_i <- the same on row i with v,

which ignores up to F adversarial entries per row and column (F = floor(d/2) - 1, d the
fewest co-workers of any worker, at least 0), rescaling u and v to equal norms after each
round (u v^T is unchanged; without it the scale drifts to 0 and infinity on sparse sets such
as product) and dividing by max(u_i, 1/sqrt(n_tasks)) (the paper's resolution of s; a worker
whose agreement with its few co-workers is exactly chance would otherwise send its partners'
entries to infinity). Then |s| = u sqrt(|v| / |u|); the signs are
found from all +1 (workers better than random, the usual identifiability assumption) by
flipping a worker whose co-workers' evidence sum_j common_ij C_ij sign_j |s_j| is negative,
until stable (the paper's sign step recovers the same signs of s_i s_j = C_ij);
s is clipped to [-1/(L-1) + 1/sqrt(n_tasks), 1 - 1/sqrt(n_tasks)] (paper Sec. 4), and the
labels are the weighted vote with the one-coin log-odds weights log(p_w (L-1) / (1 - p_w))
(posteriors: its softmax, the one-coin posterior under a uniform class prior).

Robustness (what crowd-kit 1.4.2's MMSR lacks): agreements come from sparse products (no
dense worker x task matrix, no per-pair loop), the sign step is one symmetric eigenvector
(a few matrix-vector products, not a dense graph over all worker pairs, which runs out of
memory on trec2011_all), F is
never negative, a column without entries keeps its value, and workers without co-workers get
s = 0 (weight 0). M-MSR is not the ascent of an objective: `objective` is empty and
`converged` means ||u v^T - previous||_F <= tol ||u v^T||_F before `max_iter`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from .aggregate import (
    AggregationResult,
    _check_ties,
    _require_rows,
    _softmax,
    break_ties,
    check_iteration_args,
)
from .tables import LabelTable

MMSR_TOL = 1e-6
MMSR_MAX_ITER = 1000


def mmsr(table: LabelTable, *, tol: float = MMSR_TOL, max_iter: int = MMSR_MAX_ITER,
         ties: str = "random", seed: int = 0) -> AggregationResult:
    """M-MSR skills and the log-odds weighted vote (module docstring). `skills` are the
    one-coin accuracies p_w; `params` holds s (`s`), the covariance entries used (`pairs`)
    and the trimming parameter `F`."""
    _check_ties(ties, seed)
    _require_rows(table)
    check_iteration_args(tol, max_iter)
    L, n_t = table.n_classes, table.n_tasks
    if L < 2:
        raise InputError("labels", "at least two classes for M-MSR", L)
    C, common = covariance(table)
    s, F, it, converged = skills_from_covariance(C, common, table.labels_per_worker(), n_t, L,
                                                 tol=tol, max_iter=max_iter, seed=seed)
    p = s * (L - 1) / L + 1.0 / L
    weights = np.log(p * (L - 1) / (1.0 - p))
    scores = table.vote_counts(weights)
    labels = break_ties(scores, ties=ties, seed=seed)
    n = table.labels_per_worker()
    return AggregationResult("mmsr", labels, _softmax(scores), np.where(n > 0, p, np.nan), it,
                             converged, objective_name="none (trimmed-mean iteration)",
                             params={"s": s, "F": F, "pairs": int((common > 0).sum() // 2)})


def skills_from_covariance(C: np.ndarray, common: np.ndarray, n_labels: np.ndarray, n_tasks: int,
                           L: int, *, tol: float = MMSR_TOL, max_iter: int = MMSR_MAX_ITER,
                           seed: int = 0) -> tuple[np.ndarray, int, int, bool]:
    """M-MSR's skills s (module docstring) from the agreement covariance C and the shared
    counts `common` (as `covariance` returns them; any source of the same statistics, such as
    repeated tester labels, will do); `n_labels` per worker orients the signs. Returns
    (s, F, iterations, converged)."""
    n_w = len(C)
    obs = common > 0
    deg = obs.sum(0)
    F = max(0, int(deg[deg > 0].min()) // 2 - 1) if np.any(deg > 0) else 0
    X = np.abs(C)
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.5, 1.0, n_w)
    v = rng.uniform(0.5, 1.0, n_w)
    floor = 1.0 / np.sqrt(n_tasks)
    if sparse_pays(int(obs.sum()), n_w, F):
        cols, rows = _Pairs(X, obs), _Pairs(X.T, obs.T)

        def v_step(u, v):
            return cols.trimmed_update(u, v, F, floor)

        def u_step(v, u):
            return rows.trimmed_update(v, u, F, floor)
    else:
        def v_step(u, v):
            return _trimmed_update(X, obs, u, v, F, floor)

        def u_step(v, u):
            return _trimmed_update(X.T, obs.T, v, u, F, floor)
    it, converged = 0, False
    while it < max_iter:
        u0, v0 = u, v
        v = v_step(u, v)
        u = u_step(v, u)
        nu, nv = np.linalg.norm(u), np.linalg.norm(v)
        if nu > 0 and nv > 0:  # u v^T is what is fitted: keep |u| = |v| (no drift to 0/inf)
            u, v = u * np.sqrt(nv / nu), v * np.sqrt(nu / nv)
        it += 1
        # ||u v^T - u0 v0^T||_F^2 without forming the matrices
        cur2 = float((u @ u) * (v @ v))
        change2 = cur2 + float((u0 @ u0) * (v0 @ v0)) - 2.0 * float((u @ u0) * (v @ v0))
        if np.sqrt(max(change2, 0.0)) <= tol * max(np.sqrt(cur2), 1e-300):
            converged = True
            break
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    s_abs = u * np.sqrt(nv / nu) if nu > 0 and nv > 0 else np.zeros(n_w)
    s = s_abs * _signs(C, common, s_abs, n_labels)
    s = np.where(deg > 0, s, 0.0)
    eps = 1.0 / np.sqrt(n_tasks)
    return np.clip(s, -1.0 / (L - 1) + eps, 1.0 - eps), F, it, converged


def covariance(table: LabelTable) -> tuple[np.ndarray, np.ndarray]:
    """Dense n_workers x n_workers C (module docstring) and the number of tasks each pair
    shares (0 on the diagonal), from sparse (task x worker) products, one per class."""
    n_t, n_w, L = table.n_tasks, table.n_workers, table.n_classes
    ones = np.ones(table.n_labels)
    S = sp.csr_matrix((ones, (table.task, table.worker)), shape=(n_t, n_w))
    common = (S.T @ S).toarray()
    agree = np.zeros((n_w, n_w))
    for k in range(L):
        sel = table.label == k
        M = sp.csr_matrix((ones[sel], (table.task[sel], table.worker[sel])), shape=(n_t, n_w))
        agree += (M.T @ M).toarray()
    np.fill_diagonal(common, 0)
    obs = common > 0
    C = np.zeros((n_w, n_w))
    C[obs] = (L * agree[obs] / common[obs] - 1.0) / (L - 1)
    return C, common


def _trimmed_update(X: np.ndarray, obs: np.ndarray, u: np.ndarray, v: np.ndarray, F: int,
                    floor: float) -> np.ndarray:
    """v_j <- trimmed mean over observed i of X[i, j] / max(u[i], floor) (module docstring),
    all j."""
    R = np.where(obs, X / np.maximum(u, floor)[:, None], np.inf)
    if F > 0:
        n = R.shape[0]
        below = (obs & (R < v[None, :])).sum(0)
        above = (obs & (R > v[None, :])).sum(0)
        keep = obs & ~_drop_extremes(R, np.minimum(F, below), F, n)
        Rn = np.where(obs, -R, np.inf)
        keep &= ~_drop_extremes(Rn, np.minimum(F, above), F, n)
    else:
        keep = obs
    cnt = keep.sum(0)
    tot = np.where(keep, R, 0.0).sum(0)
    return np.where(cnt > 0, tot / np.maximum(cnt, 1), v)


def _drop_extremes(R: np.ndarray, k: np.ndarray, F: int, n: int) -> np.ndarray:
    """Mask of the k[j] smallest entries of each column j of R (k <= F; +inf = absent), ties
    at the cut resolved by row order: np.partition finds the F smallest of each column in
    O(n) instead of a full sort."""
    kk = min(F, n) - 1
    small = np.sort(np.partition(R, kk, axis=0)[: kk + 1], axis=0)  # F smallest, sorted
    cols = np.arange(R.shape[1])
    thr = np.where(k > 0, small[np.maximum(k - 1, 0), cols], -np.inf)
    drop = R < thr[None, :]
    eq = (R == thr[None, :]) & (k > 0)[None, :]
    need = k - drop.sum(0)
    tie = np.flatnonzero(eq.sum(0) > need)  # columns where not every tied entry goes
    drop[:, tie] |= eq[:, tie] & (np.cumsum(eq[:, tie], axis=0) <= need[tie][None, :])
    drop |= eq & np.isin(np.arange(R.shape[1]), tie, invert=True)[None, :]
    return drop


SPARSE_FACTOR = 6.0


def sparse_pays(n_pairs: int, n_w: int, F: int) -> bool:
    """The per-pair update (2F + 2 passes over the observed pairs) beats the dense one
    (a few passes over all n_w^2 cells) when (2F + 2) n_pairs <= 6 n_w^2: measured on the 27
    shared sets (trec2011: 1.27 s -> 0.12 s; bluebirds, F = 18 on a complete graph: dense)."""
    return (2 * F + 2) * n_pairs <= SPARSE_FACTOR * n_w * n_w


class _Pairs:
    """The observed entries of X in column order (column j, then row i: the dense version's
    row order), for the per-pair trimmed update; same results as `_trimmed_update`."""

    def __init__(self, X: np.ndarray, obs: np.ndarray):
        self.col, self.row = np.nonzero(obs.T)
        self.x = X[self.row, self.col]
        self.n = X.shape[1]
        self.starts = np.flatnonzero(np.r_[True, self.col[1:] != self.col[:-1]]) \
            if len(self.col) else np.zeros(0, dtype=np.int64)

    def trimmed_update(self, u: np.ndarray, v: np.ndarray, F: int, floor: float
                       ) -> np.ndarray:
        """`_trimmed_update(X, obs, u, v, F, floor)` over the observed pairs only."""
        col, n = self.col, self.n
        R = self.x / np.maximum(u, floor)[self.row]
        if F > 0 and len(R):
            vj = v[col]
            below = np.bincount(col, weights=R < vj, minlength=n).astype(np.int64)
            above = np.bincount(col, weights=R > vj, minlength=n).astype(np.int64)
            keep = ~(self._smallest(R, np.minimum(F, below), F)
                     | self._smallest(-R, np.minimum(F, above), F))
            cnt = np.bincount(col, weights=keep, minlength=n)
            tot = np.bincount(col, weights=np.where(keep, R, 0.0), minlength=n)
        else:
            cnt = np.bincount(col, minlength=n).astype(float)
            tot = np.bincount(col, weights=R, minlength=n)
        return np.where(cnt > 0, tot / np.maximum(cnt, 1), v)

    def _smallest(self, vals: np.ndarray, k: np.ndarray, F: int) -> np.ndarray:
        """Mask of the k[j] smallest values of each column j, ties by row order (as
        `_drop_extremes`): k <= F rounds, each taking every column's first minimum."""
        col, starts = self.col, self.starts
        drop = np.zeros(len(vals), dtype=bool)
        seg_col = col[starts]
        for r in range(F):
            active = (k > r)[col] & ~drop
            if not active.any():
                break
            masked = np.where(active, vals, np.inf)
            m = np.full(self.n, np.inf)
            m[seg_col] = np.minimum.reduceat(masked, starts)
            cand = np.flatnonzero(active & (masked == m[col]))
            drop[cand[np.r_[True, col[cand[1:]] != col[cand[:-1]]]]] = True
        return drop


def _signs(C: np.ndarray, common: np.ndarray, s_abs: np.ndarray, n: np.ndarray
           ) -> np.ndarray:
    """+-1 per worker: from all +1 (workers better than random), flip a worker whose
    evidence sum_j common_ij C_ij sign_j |s_j| (C_ij ~ s_i s_j, weighted by the tasks the pair
    shares) is negative, until no sign changes (at most 100 rounds); finally orient the signs
    so that the label-weighted mean skill is positive."""
    W = common * C
    sign = np.ones(len(C))
    for _ in range(100):
        new = np.where(W @ (sign * s_abs) < 0, -1.0, 1.0)
        if np.array_equal(new, sign):
            break
        sign = new
    if np.sum(n * sign * s_abs) < 0:
        sign = -sign
    return sign
