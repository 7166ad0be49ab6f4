"""Per-worker scores of the worker-selection problem (paper 004, Lemma 2 and Theorem 3).

A worker's reliability w_i is estimated from n_i gold (control) questions as w_hat = c_i / n_i
(eq. 10). The selection objective sums a per-worker score G over the chosen set:

- unbiased (eqs. 8, 10, 25): G = (L w_hat - 1)^2 - L^2 w_hat (1 - w_hat) / (n - 1), so that
  E G = (L w - 1)^2 for c ~ Binomial(n, w) (Theorem 3); it needs n >= 2 (digest E4);
- plugin (eq. 9): G = (L w_hat - 1)^2, biased upward by L^2 var(w_hat).

The aggregation weights of WMV (eq. 1) live here too because they are functions of w_hat alone:
linear f = L w_hat - 1 (eq. 2, L times the paper's w - 1/L) and log-odds
f = logit(w_hat) - logit(1/L) with w_hat clipped to [eps, 1 - eps] (digest E8, eps = 1/(2n)).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError

ESTIMATORS = ("unbiased", "plugin")


def _as_n(n: Any, size: int) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(n, dtype=float), (size,))
    return arr


def score_unbiased(w_hat: Any, n: Any, classes: int) -> np.ndarray:
    """Theorem 3's unbiased G (eq. 25); n is a count of gold questions per worker (>= 2)."""
    w = np.asarray(w_hat, dtype=float)
    nn = _as_n(n, w.size).reshape(w.shape)
    if np.any(nn < 2):
        raise InputError("n", "at least 2 gold questions per worker for the unbiased score",
                         float(nn.min()), note="digest 004 E4; use estimator 'plugin'")
    L = float(classes)
    return (L * w - 1.0) ** 2 - L * L * w * (1.0 - w) / (nn - 1.0)


def score_plugin(w_hat: Any, classes: int) -> np.ndarray:
    """The plugin score (L w_hat - 1)^2 of eq. (9)."""
    w = np.asarray(w_hat, dtype=float)
    return (float(classes) * w - 1.0) ** 2


def scores(w_hat: Any, n: Any, classes: int, estimator: str = "unbiased") -> np.ndarray:
    """G for every worker with the named estimator ('unbiased' or 'plugin')."""
    if estimator == "unbiased":
        return score_unbiased(w_hat, n, classes)
    if estimator == "plugin":
        return score_plugin(w_hat, classes)
    raise InputError("estimator", "one of " + ", ".join(ESTIMATORS), estimator)


def gold_counts(worker: np.ndarray, correct: np.ndarray, n_workers: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """(c_i, n_i): correct answers and answered gold questions per worker (eq. 10 inputs).

    `worker` is the worker index of each answer on a gold item, `correct` whether it matched
    the gold label.
    """
    w = np.asarray(worker, dtype=np.int64)
    ok = np.asarray(correct, dtype=bool)
    n_i = np.bincount(w, minlength=n_workers)
    c_i = np.bincount(w, weights=ok.astype(float), minlength=n_workers).astype(np.int64)
    return c_i, n_i


def estimate_from_table(task: np.ndarray, worker: np.ndarray, label: np.ndarray,
                        gold_task: np.ndarray, gold_label: np.ndarray, n_tasks: int,
                        n_workers: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """w_hat, c, n per worker from answer rows (task, worker, label) on the given gold items.

    Rows on tasks without gold are ignored; a worker with no gold answer gets w_hat = nan.
    """
    truth = np.full(n_tasks, -1, dtype=np.int64)
    truth[np.asarray(gold_task, dtype=np.int64)] = np.asarray(gold_label, dtype=np.int64)
    t = np.asarray(task, dtype=np.int64)
    on_gold = truth[t] >= 0
    c, n = gold_counts(np.asarray(worker)[on_gold],
                       np.asarray(label)[on_gold] == truth[t[on_gold]], n_workers)
    with np.errstate(invalid="ignore", divide="ignore"):
        w_hat = np.where(n > 0, c / np.maximum(n, 1), np.nan)
    return w_hat, c, n


def weight_linear(w_hat: Any, classes: int) -> np.ndarray:
    """WMV-linear weight L w_hat - 1 (eq. 2)."""
    return float(classes) * np.asarray(w_hat, dtype=float) - 1.0


def weight_log(w_hat: Any, classes: int, eps: float) -> np.ndarray:
    """WMV log-odds weight logit(w_hat) - logit(1/L) (eq. 1), w_hat clipped to [eps, 1-eps]."""
    w = np.clip(np.asarray(w_hat, dtype=float), eps, 1.0 - eps)
    L = float(classes)
    return np.log(w / (1.0 - w)) - np.log((1.0 / L) / (1.0 - 1.0 / L))
