"""KOS: the message-passing estimator of Karger, Oh & Shah (Operations Research 62(1), 2014).

Binary labels A_e = +1 (class index 1, the positive class) or -1 on the edges e = (t, w) of the
task-worker graph. With task messages x_{t->w} and worker messages y_{w->t} (paper Sec. 2.3,
Algorithm "Iterative inference", digest 002 A12):

    x_{t->w} = sum_{w' in N(t) \\ w} A_{tw'} y_{w'->t}
    y_{w->t} = sum_{t' in N(w) \\ t} A_{t'w} x_{t'->w}
    estimate  x_t = sum_{w in N(t)} A_{tw} y_{w->t};   label +1 if x_t > 0, -1 if x_t < 0

started from y ~ N(1, 1) (seeded): the positive start stands for the assumption that workers
are better than random on average, without which a labelling and its mirror image explain
the answers equally well. The messages need not keep that orientation (on small or irregular
graphs they can settle on the mirror image: Opt-KG's Fig. 11 setting, K = 50 and M = 100,
does so for some seeds), so at the end the estimate is oriented to it: when the worker scores
y_w (below) sum to a negative number, every sign is flipped. On edge arrays this is x_e = S_t - A_e y_e with
S_t = sum_{e in t} A_e y_e (one `np.bincount`), and likewise for y, so an iteration costs two
bincounts over the labels. The messages are rescaled to unit root-mean-square after each
iteration (digest A12: to avoid overflow; the signs, hence the estimate, do not change).

KOS is message passing, not the optimisation of an objective: `objective` is empty, and
`converged` means that the rescaled worker messages moved by at most `tol` (max absolute
change) in the last iteration, i.e. they reached the fixed direction of the (non-backtracking)
iteration, before `max_iter`. The paper runs a fixed k_max (10-20); so does `max_iter=k`
with `tol=0`. Ties (x_t = 0, e.g. a task whose workers answered nothing else) follow `ties`
('positive' sends them to class 1, the digest's rule for Opt-KG's Fig. 11 baseline).

Posteriors are not probabilities a model gives: KOS yields only a decision, so the rows are
one-hot (0.5/0.5 for ties). Worker `skills` are the normalised worker scores
y_w = sum_{t in N(w)} A_tw x_{t->w} mapped to [0, 1] by (1 + y_w / max|y|) / 2 (a ranking,
not an accuracy).

More than two classes (our extension, not in the paper): one binary KOS per class (that class
+1, the rest -1), each task score standardised by its run's standard deviation, label = the
class with the largest standardised score.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .aggregate import (
    AggregationResult,
    _require_rows,
    break_ties,
    check_iteration_args,
    check_seed,
)
from .rows import row_max, row_sum
from .tables import LabelTable

KOS_TOL = 1e-6
KOS_MAX_ITER = 200
KOS_TIES = ("random", "first", "positive")


def kos(table: LabelTable, *, tol: float = KOS_TOL, max_iter: int = KOS_MAX_ITER,
        ties: str = "random", seed: int = 0) -> AggregationResult:
    """KOS iterative inference (module docstring) on a label table."""
    if ties not in KOS_TIES:
        raise InputError("ties", f"one of {list(KOS_TIES)}", ties)
    check_seed(seed)
    _require_rows(table)
    check_iteration_args(tol, max_iter)
    if max_iter < 1:
        raise InputError("max_iter", "an integer >= 1", max_iter)
    n_t, n_w, L = table.n_tasks, table.n_workers, table.n_classes
    if L < 2:
        raise InputError("labels", "at least two classes for KOS", L)
    rng = np.random.default_rng(seed)
    init = rng.normal(1.0, 1.0, size=table.n_labels)
    classes = [1] if L == 2 else list(range(L))
    scores = np.zeros((n_t, len(classes)))
    worker_scores = np.zeros((n_w, len(classes)))
    iters, conv = [], []
    for c, k in enumerate(classes):
        a = np.where(table.label == k, 1.0, -1.0)
        x, yw, it, ok = kos_scores(table.task, table.worker, a, n_t, n_w, init=init, tol=tol,
                                   max_iter=max_iter)
        scores[:, c], worker_scores[:, c] = x, yw
        iters.append(it)
        conv.append(ok)
    if L == 2:
        full = np.stack([-scores[:, 0], scores[:, 0]], axis=1)
        ws = worker_scores[:, 0]
    else:
        sd = scores.std(0)
        full = scores / np.where(sd > 0, sd, 1.0)
        ws = worker_scores[np.arange(n_w), np.argmax(np.abs(worker_scores), 1)]
    if ties == "positive" and L == 2:
        labels = (scores[:, 0] >= 0).astype(np.int64)
    else:
        labels = break_ties(full, ties="first" if ties == "positive" else ties, seed=seed)
    top = full >= row_max(full)[:, None]
    post = top / row_sum(top)[:, None]
    m = np.max(np.abs(ws))
    skills = 0.5 * (1 + ws / m) if m > 0 else np.full(n_w, 0.5)
    skills = np.where(table.labels_per_worker() > 0, skills, np.nan)
    return AggregationResult("kos", labels, post, skills, int(max(iters)), bool(all(conv)),
                             objective_name="none (message passing)",
                             params={"task_scores": full})


def kos_scores(task: np.ndarray, worker: np.ndarray, a: np.ndarray, n_t: int, n_w: int, *,
               init: np.ndarray, tol: float = KOS_TOL, max_iter: int = KOS_MAX_ITER,
               orient: bool = True) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """Binary KOS on edge arrays (task, worker, A = +-1, initial worker messages `init`):
    (task scores x_t, worker scores y_w, iterations, converged). Shared by `kos` and the
    Opt-KG Fig. 11 baseline. `orient`: flip both when the worker scores sum to < 0."""
    y = np.asarray(init, dtype=float).copy()
    y = _unit(y)
    it, converged = 0, False
    while it < max_iter:
        st = np.bincount(task, weights=a * y, minlength=n_t)
        x = st[task] - a * y
        sw = np.bincount(worker, weights=a * x, minlength=n_w)
        y_new = _unit(sw[worker] - a * x)
        it += 1
        delta = float(np.max(np.abs(y_new - y))) if y.size else 0.0
        y = y_new
        if delta <= tol:
            converged = True
            break
    x_t = np.bincount(task, weights=a * y, minlength=n_t)
    st = x_t[task] - a * y
    y_w = np.bincount(worker, weights=a * st, minlength=n_w)
    if orient and y_w.sum() < 0:  # workers better than random on average (module docstring)
        x_t, y_w = -x_t, -y_w
    return x_t, y_w, it, converged


def _unit(v: np.ndarray) -> np.ndarray:
    rms = float(np.sqrt(np.mean(v * v))) if v.size else 0.0
    return v / rms if rms > 0 else v
