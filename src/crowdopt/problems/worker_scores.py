"""Per-worker scores of the worker-selection problem (paper 004, Lemma 2 and Theorem 3).

A worker's reliability w_i is estimated from n_i gold (control) questions as w_hat = c_i / n_i
(eq. 10). The selection objective sums a per-worker score G over the chosen set:

- unbiased (eqs. 8, 10, 25): G = (L w_hat - 1)^2 - L^2 w_hat (1 - w_hat) / (n - 1), so that
  E G = (L w - 1)^2 for c ~ Binomial(n, w) (Theorem 3); it needs n >= 2 (digest E4);
- plugin (eq. 9): G = (L w_hat - 1)^2, biased upward by L^2 var(w_hat).

Counting c_i and n_i from a label table is the crowd layer's job (crowd/reliability.py,
`from_gold`); the WMV weights are crowd/aggregate.py's `weights_from_accuracy`.
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
