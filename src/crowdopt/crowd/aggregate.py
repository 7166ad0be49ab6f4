"""Label aggregation: majority vote, weighted majority vote, one-coin EM, Dawid-Skene EM.

Every aggregator takes a `LabelTable` and returns an `AggregationResult` (labels, posteriors
n_tasks x n_classes, per-worker skills, iterations, convergence, the objective trace). All work
on the table's integer arrays: votes are `np.bincount` sums and the EM steps are two sparse
products with the (task) x (worker, label) count matrix N, so there is no per-label Python loop:

    E-step  log P(y_t = k | labels) = log pi_k + sum_{(w,l)} N[t,(w,l)] log C[w,k,l]
    M-step  C[w,k,l] = (sum_t T[t,k] N[t,(w,l)] + s) / (sum_l' ... + L s)
            pi_k = mean_t T[t,k]                      (Dawid & Skene 1979, eqs. 2.3-2.5)

The smoothing s is a symmetric Dirichlet(1 + s) prior on every confusion row, so the EM is a
MAP EM: the quantity each iteration increases is the log posterior of the parameters,

    F = sum_t log sum_k pi_k prod_{(w,l) in t} C[w,k,l]  +  s sum_{w,k,l} log C[w,k,l],

(up to a constant; gold-clamped tasks contribute log pi_g prod C[w,g,l] at their gold class g).
`AggregationResult.objective` is the trace of F (non-decreasing up to rounding), and EM stops
when F rises by at most `tol * |F|` in one iteration. `log_likelihood` is the trace of the
first term alone, which a MAP EM need not increase.

Tie-breaking (documented contract): a task's label is a class whose score is within 1e-12 of
the task's best score. `ties='random'` (default) picks uniformly among the tied classes with
`numpy.random.default_rng(seed)` drawing one number per (task, class) in task-index order;
`ties='first'` takes the lowest class index. `accuracy(result, gold, ties='split')` counts a
tie among m classes containing the gold class as 1/m (expected accuracy of random
tie-breaking), the convention of the data README's MV figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..errors import InputError
from ..validate import MAX_INT, as_list, integer, real
from .rows import row_max, row_sum
from .tables import Gold, LabelTable

METHODS = ("mv", "wmv", "one-coin", "dawid-skene")
TIE_POLICIES = ("random", "first")
WEIGHTINGS = ("given", "log-odds", "linear")
TIE_ATOL = 1e-12


@dataclass(frozen=True)
class AggregationResult:
    """Aggregated labels and what the method learned.

    labels: int64 class index per task. posteriors: n_tasks x n_classes (rows sum to 1).
    skills: per-worker probability of a correct answer (MV/WMV: mean posterior of the
    worker's answers; EM: model accuracy). confusion: n_workers x L x L [true, given] (EM).
    priors: class prevalence. iterations: EM cycles run (0 for votes). converged: the stopping
    rule was met before the iteration cap. objective: trace of the quantity the method
    increases (one value per iteration; `objective_name` says what it is); log_likelihood:
    trace of the marginal log-likelihood of the labels (EM models). params: method-specific
    fitted parameters (e.g. GLAD's alpha and beta, MACE's spamming probabilities).
    """

    method: str
    labels: np.ndarray
    posteriors: np.ndarray
    skills: np.ndarray
    iterations: int = 0
    converged: bool = True
    confusion: np.ndarray | None = None
    priors: np.ndarray | None = None
    log_likelihood: list[float] = field(default_factory=list)
    objective: list[float] = field(default_factory=list)
    objective_name: str = ""
    params: dict = field(default_factory=dict)

    def label_values(self, table: LabelTable) -> np.ndarray:
        """The aggregated labels as the table's class values."""
        return table.classes[self.labels]

    def tied(self) -> np.ndarray:
        """n_tasks x n_classes mask of the classes tied for the best score."""
        return _top_mask(self.posteriors)


# ----------------------------------------------------------------------------- votes
def majority_vote(table: LabelTable, *, ties: str = "random", seed: int = 0
                  ) -> AggregationResult:
    """Plain majority vote; posteriors are vote fractions (uniform for unlabelled tasks)."""
    return _vote(table, None, "mv", ties, seed)


def weighted_majority_vote(table: LabelTable, weights: np.ndarray, *, ties: str = "random",
                           seed: int = 0) -> AggregationResult:
    """Weighted majority vote (digest 004 eq. 1): argmax_k sum_i weight_i 1[Z_ij = k].

    `weights` has one finite real per worker (negative weights flip a worker's votes).
    Posteriors are softmax of the weighted scores, which for log-odds weights is the one-coin
    Bayes posterior under a uniform class prior.
    """
    w = _worker_vector(weights, require_table(table).n_workers, "weights")
    return _vote(table, w, "wmv", ties, seed)


def weights_from_accuracy(accuracy: np.ndarray, n_classes: int, scheme: str = "log-odds", *,
                          clip: float = 0.01) -> np.ndarray:
    """Per-worker WMV weights from estimated accuracies w (digest 004 §1.2).

    'log-odds': logit(w) - logit(1/L) (Bayes-optimal under the one-coin model, eq. 3), with w
    clipped to [clip, 1-clip] so perfect workers get a finite weight. 'linear': L*w - 1
    (WMV-linear, eq. 2). 'given': the numbers are used as weights. NaN accuracies (workers
    without gold) get the weight of the mean known accuracy.
    """
    if scheme not in WEIGHTINGS:
        raise InputError("weighting", f"one of {list(WEIGHTINGS)}", scheme)
    a = _floats(accuracy, "accuracy", "one number per worker")
    if scheme == "given":
        if not np.all(np.isfinite(a)):
            raise InputError("weights", "finite numbers", "NaN or infinity")
        return a.copy()
    known = np.isfinite(a)
    if not known.any():
        raise InputError("accuracy", "at least one worker with a known accuracy", "none")
    if np.any((a[known] < 0) | (a[known] > 1)):
        raise InputError("accuracy", "probabilities in [0, 1]", a[known].min())
    a = np.where(known, a, a[known].mean())
    if scheme == "linear":
        return n_classes * a - 1.0
    c = np.clip(a, clip, 1.0 - clip)
    return np.log(c / (1 - c)) - np.log((1.0 / n_classes) / (1 - 1.0 / n_classes))


def _vote(table: LabelTable, w: np.ndarray | None, method: str, ties: str, seed: int
          ) -> AggregationResult:
    _check_ties(ties, seed)
    _require_rows(table)
    scores = table.vote_counts(w).astype(float)
    if w is None:
        tot = row_sum(scores)[:, None]
        post = np.divide(scores, tot, out=np.full_like(scores, 1.0 / table.n_classes),
                         where=tot > 0)
    else:
        post = _softmax(scores)
    labels = break_ties(scores, ties=ties, seed=seed)
    return AggregationResult(method, labels, post, _agreement_skills(table, post))


# ----------------------------------------------------------------------------- EM
EM_TOL = 1e-6
EM_MAX_ITER = 1000
DS_SMOOTHING = 0.1
PRIOR_RULES = ("learn", "uniform", "fixed")
INITS = ("mv", "gold")


def dawid_skene(table: LabelTable, *, gold: Gold | None = None, init: str = "mv",
                init_confusion: np.ndarray | None = None, init_priors: np.ndarray | None = None,
                priors: str = "learn", tol: float = EM_TOL, max_iter: int = EM_MAX_ITER,
                smoothing: float = DS_SMOOTHING, ties: str = "random", seed: int = 0
                ) -> AggregationResult:
    """Dawid-Skene EM with a full confusion matrix per worker (Dawid & Skene 1979).

    E-step (eq. 2.5): T[t,k] proportional to pi_k prod_{(w,l) in t} C[w,k,l].
    M-step (eqs. 2.3-2.4): C[w,k,l] = (n[w,k,l] + s) / (n[w,k,.] + L s), n[w,k,l] =
    sum over w's labels l on tasks t of T[t,k]; pi_k = mean_t T[t,k] (`priors='learn'`) or
    fixed (`'uniform'`, or `init_priors`). s = `smoothing` is a Dirichlet(1 + s) prior on each
    confusion row, so this is MAP EM and the objective F (module docstring) never decreases.

    Start: with `init_confusion` (L x L or n_workers x L x L, rows = true class) an E-step from
    it (and `init_priors`, default uniform); otherwise an M-step from majority-vote posteriors
    (`init='mv'`), with gold tasks set to their gold class (`init='gold'`, needs `gold`; the
    gold is used only to start, not clamped). Passing `gold` with `init='mv'` clamps gold
    tasks to their gold class in every E-step. Stops when F rises by at most `tol * |F|` in an
    iteration, or after `max_iter` iterations (`converged` False). With `init_confusion` and
    max_iter=0 the posteriors are the exact Bayes posteriors.
    """
    return _em(table, "dawid-skene", gold, init, init_confusion, init_priors, priors, tol,
               max_iter, smoothing, ties, seed)


def one_coin_em(table: LabelTable, *, gold: Gold | None = None, init: str = "mv",
                init_accuracy: np.ndarray | None = None, init_priors: np.ndarray | None = None,
                priors: str = "uniform", tol: float = EM_TOL, max_iter: int = EM_MAX_ITER,
                smoothing: float = DS_SMOOTHING, ties: str = "random", seed: int = 0
                ) -> AggregationResult:
    """One-coin EM: each worker is right with probability a_w, else picks a wrong class
    uniformly (digest 004 eq. 3; the one-coin Dawid-Skene model).

    M-step: a_w = (expected correct answers + s) / (answers + 2 s), the MAP estimate under a
    Beta(1 + s, 1 + s) prior, so F = log-likelihood + s sum_w (log a_w + log(1 - a_w)) never
    decreases. Same start, clamping and stopping rules as `dawid_skene`.

    Class priors default to 'uniform' (fixed), as in ZenCrowd: with learned priors the one-coin
    likelihood on trec2010_relevance climbs to a degenerate fit that puts every task in one
    class (accuracy 0.19 vs 0.48), and over the 25 shared sets with gold the mean accuracy is
    0.726 learned vs 0.768 uniform; learned priors (crowd-kit's choice) do better on the three
    zencrowd sets (0.85, 0.79, 0.90 vs 0.83, 0.77, 0.86). benchmarks/bench_aggregation.py.
    """
    init_c = None
    if init_accuracy is not None:
        acc = _worker_vector(init_accuracy, require_table(table).n_workers, "init_accuracy")
        if np.any((acc <= 0) | (acc >= 1)):
            raise InputError("init_accuracy", "accuracies in (0, 1)", acc.min())
        init_c = _one_coin_confusion(acc, table.n_classes)
    return _em(table, "one-coin", gold, init, init_c, init_priors, priors, tol, max_iter,
               smoothing, ties, seed)


def count_matrix(table: LabelTable) -> sp.csr_matrix:
    """Sparse n_tasks x (n_workers * L) matrix N[t, w*L + l] = rows (t, w, l)."""
    data = np.ones(table.n_labels)
    col = table.worker * table.n_classes + table.label
    return sp.csr_matrix((data, (table.task, col)),
                         shape=(table.n_tasks, table.n_workers * table.n_classes))


MAX_ITER_CAP = 1_000_000  # iterations of one run: past it a non-converging method would hang


def check_iteration_args(tol: float, max_iter: int, smoothing: Any = ...) -> None:
    """The one validation of the stopping and smoothing arguments of every iterative method
    (validate.py's rule: finite numbers, integers in range)."""
    real(tol, "tol", lo=0.0)
    if isinstance(max_iter, float):  # 3.0 is not an iteration count
        raise InputError("max_iter", "an integer >= 0", max_iter)
    integer(max_iter, "max_iter", lo=0, hi=MAX_ITER_CAP)
    if smoothing is not ...:  # methods with a smoothing pass it (None is not a number)
        real(smoothing, "smoothing", lo=0.0)


def relative_rise(new: float, old: float) -> float:
    """(new - old) / |new|: the stopping statistic of every objective-based method."""
    return (new - old) / max(abs(new), 1e-300)


def start_posteriors(table: LabelTable, init: str, gold: Gold | None) -> np.ndarray:
    """n_tasks x L start of the EM methods: majority-vote fractions, with gold tasks one-hot
    when init='gold'."""
    if not isinstance(init, str) or init not in INITS:
        raise InputError("init", f"one of {list(INITS)}", init)
    require_gold(gold)
    post = _vote(table, None, "mv", "first", 0).posteriors
    if init == "gold":
        if gold is None or gold.n == 0:
            raise InputError("init", "gold labels for init='gold'", "none")
        clamp = _gold_clamp(gold, table.n_tasks, table.n_classes)
        post[clamp[0]] = clamp[1]
    return post


def prior_rule(priors: str, init_priors, n_c: int) -> np.ndarray | None:
    """Fixed class priors (uniform or `init_priors`) or None for learned ones."""
    if priors not in PRIOR_RULES:
        raise InputError("priors", "'learn' or 'uniform'", priors)
    if priors == "learn":
        return None
    return (np.full(n_c, 1.0 / n_c) if init_priors is None
            else _prob_vector(init_priors, n_c, "init_priors"))


def _em(table: LabelTable, method: str, gold: Gold | None, init: str, init_confusion,
        init_priors, priors_arg: str, tol: float, max_iter: int, smoothing: float, ties: str,
        seed: int) -> AggregationResult:
    _check_ties(ties, seed)
    _require_rows(table)
    n_t, n_w, n_c = table.n_tasks, table.n_workers, table.n_classes
    check_iteration_args(tol, max_iter, smoothing)
    fixed = prior_rule(priors_arg, init_priors, n_c)
    if init not in INITS:
        raise InputError("init", f"one of {list(INITS)}", init)
    clamp = _gold_clamp(gold, n_t, n_c) if init == "mv" else None
    N = count_matrix(table)
    NT = N.T.tocsr()
    per_worker = table.labels_per_worker().astype(float)
    # Inside the loop posteriors are kept class-major (L x n_tasks, C order): numpy's
    # reductions over a short last axis are ~100x slower than over a long contiguous one.
    lls: list[float] = []
    objs: list[float] = []
    if init_confusion is not None:
        conf = _confusion_arg(init_confusion, n_w, n_c)
        priors = (np.full(n_c, 1.0 / n_c) if init_priors is None
                  else _prob_vector(init_priors, n_c, "init_priors"))
        post, ll = _e_step(N, conf, priors, clamp)
        lls.append(ll)
        objs.append(ll + _log_prior(method, conf, smoothing))
    else:
        if init_priors is not None and fixed is None:
            raise InputError("init_priors", "an initial confusion or priors='uniform'",
                             "priors alone")
        post = np.ascontiguousarray(start_posteriors(table, init, gold).T)
        if clamp is not None:
            post[:, clamp[0]] = clamp[1].T
        conf = None
    it, converged = 0, max_iter == 0 and init_confusion is not None
    while it < max_iter:
        conf, priors = _m_step(NT, post, n_w, n_c, smoothing, method, per_worker, fixed)
        post, ll = _e_step(N, conf, priors, clamp)
        it += 1
        lls.append(ll)
        objs.append(ll + _log_prior(method, conf, smoothing))
        if len(objs) > 1 and relative_rise(objs[-1], objs[-2]) <= tol:
            converged = True
            break
    if conf is None:  # max_iter == 0 without an initial confusion: estimates from the start
        conf, priors = _m_step(NT, post, n_w, n_c, smoothing, method, per_worker, fixed)
    skills = np.einsum("k,wkk->w", priors, conf)
    post = np.ascontiguousarray(post.T)
    labels = break_ties(post, ties=ties, seed=seed)
    return AggregationResult(method, labels, post, skills, it, converged, conf, priors, lls,
                             objs, "log-likelihood + log prior (MAP EM)")


def _log_prior(method: str, conf: np.ndarray, smoothing: float) -> float:
    """log of the Dirichlet(1 + s) (Dawid-Skene) or Beta(1 + s, 1 + s) (one-coin) prior density
    of the parameters, up to a constant."""
    if smoothing == 0:
        return 0.0
    with np.errstate(divide="ignore"):
        if method == "one-coin":
            acc = conf[:, 0, 0]
            return float(smoothing * np.sum(np.log(acc) + np.log1p(-acc)))
        return float(smoothing * np.sum(np.log(conf)))


def _m_step(NT: sp.csr_matrix, post: np.ndarray, n_w: int, n_c: int, smoothing: float,
            method: str, per_worker: np.ndarray, fixed_priors: np.ndarray | None
            ) -> tuple[np.ndarray, np.ndarray]:
    """Confusion matrices and class priors from class-major posteriors post[k, t]
    (Dawid & Skene eqs. 2.3-2.4)."""
    counts = np.asarray(NT @ post.T).reshape(n_w, n_c, n_c).transpose(0, 2, 1)  # [w, k, l]
    priors = post.mean(1) if fixed_priors is None else fixed_priors
    if method == "one-coin":
        correct = np.trace(counts, axis1=1, axis2=2)
        acc = (correct + smoothing) / (per_worker + 2 * smoothing)
        acc = np.where(per_worker + 2 * smoothing > 0, acc, 0.5)
        return _one_coin_confusion(acc, n_c), priors
    counts = counts + smoothing
    tot = counts.sum(2, keepdims=True)
    conf = np.divide(counts, tot, out=np.full_like(counts, 1.0 / n_c), where=tot > 0)
    return conf, priors


def _e_step(N: sp.csr_matrix, conf: np.ndarray, priors: np.ndarray,
            clamp: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, float]:
    """Class-major posteriors post[k, t] = P(y_t = k | labels) and the log-likelihood of the
    labels (of the labels and the gold classes of clamped tasks)."""
    n_w, n_c, _ = conf.shape
    with np.errstate(divide="ignore"):
        logc = np.log(conf).transpose(0, 2, 1).reshape(n_w * n_c, n_c)  # row w*L+l, col k
        logp = np.log(priors)
    logc = np.maximum(logc, -1e200)  # 0 * log 0 = 0 in the sparse product
    score = np.ascontiguousarray(np.asarray(N @ logc).T)
    score += np.maximum(logp, -1e200)[:, None]
    return normalize_scores(score, clamp)


def normalize_scores(score: np.ndarray, clamp: tuple[np.ndarray, np.ndarray] | None = None
                     ) -> tuple[np.ndarray, float]:
    """Class-major log scores score[k, t] -> posteriors (in place) and sum_t log sum_k
    exp(score[k, t]); clamped tasks contribute their gold-class score and get one-hot rows."""
    gold_part = 0.0
    if clamp is not None:
        gold_part = float(np.sum(score[clamp[1].argmax(1), clamp[0]]))
    mx = score.max(0)
    score -= mx
    e = np.exp(score, out=score)
    s = e.sum(0)
    per_task = np.log(s) + mx
    e /= s
    if clamp is not None:
        per_task[clamp[0]] = 0.0
        e[:, clamp[0]] = clamp[1].T
    return e, float(np.sum(per_task)) + gold_part


def _one_coin_confusion(acc: np.ndarray, n_c: int) -> np.ndarray:
    off = (1.0 - acc) / max(n_c - 1, 1)
    conf = np.repeat(off[:, None, None], n_c, 1).repeat(n_c, 2)
    idx = np.arange(n_c)
    conf[:, idx, idx] = acc[:, None]
    return conf


def require_gold(gold: Any) -> Gold | None:
    """None or a Gold (gold_from_arrays, read_gold); anything else is a one-line InputError."""
    if gold is not None and not isinstance(gold, Gold):
        raise InputError("gold", "a crowdopt Gold (gold_from_arrays, read_gold) or None",
                         type(gold).__name__)
    return gold


def _gold_clamp(gold: Gold | None, n_t: int, n_c: int):
    if require_gold(gold) is None:
        return None
    t, lab = np.asarray(gold.task), np.asarray(gold.label)
    if t.size and (t.min() < 0 or t.max() >= n_t):
        raise InputError("gold.task", f"task indices in [0, {n_t})", int(t.max()))
    if lab.size and (lab.min() < 0 or lab.max() >= n_c):
        raise InputError("gold.label", f"class indices in [0, {n_c})", int(lab.max()))
    onehot = np.zeros((len(t), n_c))
    onehot[np.arange(len(t)), lab] = 1.0
    return t, onehot


def _floats(x: Any, name: str, expected: str) -> np.ndarray:
    """A float array of an array-like argument (InputError, not ValueError/OverflowError)."""
    try:
        return np.asarray(as_list(x), dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InputError(name, expected, type(x).__name__) from None


def _confusion_arg(c, n_w: int, n_c: int) -> np.ndarray:
    a = _floats(c, "init_confusion", "confusion matrices (numbers)")
    if a.shape == (n_c, n_c):
        a = np.broadcast_to(a, (n_w, n_c, n_c)).copy()
    if a.shape != (n_w, n_c, n_c):
        raise InputError("init_confusion", f"shape ({n_c}, {n_c}) or ({n_w}, {n_c}, {n_c})",
                         a.shape)
    if not np.all(np.isfinite(a)) or np.any(a < 0) or not np.allclose(a.sum(2), 1.0):
        raise InputError("init_confusion", "rows of probabilities summing to 1",
                         "other values")
    return a


def _prob_vector(p, n: int, name: str) -> np.ndarray:
    a = _floats(p, name, f"{n} probabilities summing to 1")
    if a.shape != (n,) or not np.all(np.isfinite(a)) or np.any(a < 0) or \
            not np.isclose(a.sum(), 1.0):
        raise InputError(name, f"{n} probabilities summing to 1", p)
    return a


# ----------------------------------------------------------------------------- helpers
def break_ties(scores: np.ndarray, *, ties: str = "random", seed: int = 0) -> np.ndarray:
    """Row-wise argmax with the documented tie rule (see module docstring)."""
    _check_ties(ties, seed)
    top = _top_mask(scores)
    labels = np.argmax(top, axis=1).astype(np.int64)
    if ties == "first":
        return labels
    noise = np.random.default_rng(seed).random(scores.shape)  # drawn whole: same stream
    tied = np.flatnonzero(row_sum(top) > 1)  # = argmax(where(top, noise, -1)) on every row
    if tied.size:
        labels[tied] = np.argmax(np.where(top[tied], noise[tied], -1.0), axis=1)
    return labels


def accuracy(result: AggregationResult, gold: Gold, *, ties: str = "split") -> float:
    """Accuracy on gold tasks: 'split' counts an m-way tie holding the gold class as 1/m;
    'labels' scores the result's (tie-broken) labels."""
    if not isinstance(result, AggregationResult):
        raise InputError("result", "an AggregationResult", type(result).__name__)
    if not isinstance(gold, Gold):
        raise InputError("gold", "a crowdopt Gold (gold_from_arrays, read_gold)",
                         type(gold).__name__)
    if gold.n == 0:
        raise InputError("gold", "at least one gold task", "none")
    if ties == "labels":
        return float(np.mean(result.labels[gold.task] == gold.label))
    if ties != "split":
        raise InputError("ties", "'split' or 'labels'", ties)
    top = _top_mask(result.posteriors[gold.task])
    return float(np.mean(top[np.arange(gold.n), gold.label] / row_sum(top)))


def _top_mask(scores: np.ndarray) -> np.ndarray:
    return scores >= (row_max(scores) - TIE_ATOL)[:, None]


def _softmax(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores - row_max(scores)[:, None])
    return e / row_sum(e)[:, None]


def _agreement_skills(table: LabelTable, post: np.ndarray) -> np.ndarray:
    """Mean of post[t, l] over each worker's answers (t, l): its agreement with posteriors or
    vote rows (MV's and EM's skills, Wawa's and ZBS's a_w); NaN for workers without rows."""
    own = post.ravel().take(table.task * post.shape[1] + table.label)  # 2x a 2-d gather
    agree = np.bincount(table.worker, weights=own, minlength=table.n_workers)
    n = table.labels_per_worker()
    return np.divide(agree, n, out=np.full(table.n_workers, np.nan), where=n > 0)


def _worker_vector(x, n_w: int, name: str) -> np.ndarray:
    a = _floats(x, name, f"one number per worker ({n_w})")
    if a.shape != (n_w,):
        raise InputError(name, f"one number per worker ({n_w})", f"shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise InputError(name, "finite numbers", "NaN or infinity")
    return a


def _check_ties(ties: str, seed) -> None:
    """The tie rule and the seed (of the tie-break and of random starts) every method takes."""
    if ties not in TIE_POLICIES:
        raise InputError("ties", f"one of {list(TIE_POLICIES)}", ties)
    check_seed(seed)


def check_seed(seed) -> None:
    """A seed is an integer >= 0 (numpy's rule; None would make a run unrepeatable)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError("seed", "an integer >= 0", seed)
    integer(seed, "seed", hi=MAX_INT)


def require_table(table: Any, field: str = "table") -> LabelTable:
    """`table` is a LabelTable (from_arrays, from_dataframe, read_labels, load_table); anything
    else is a one-line InputError, never an AttributeError from inside a method."""
    if not isinstance(table, LabelTable):
        raise InputError(field, "a crowdopt LabelTable (crowd.from_arrays, from_dataframe, "
                         "read_labels)", type(table).__name__)
    return table


def _require_rows(table: LabelTable) -> None:
    require_table(table)
    if table.n_labels == 0:
        raise InputError("labels", "at least one label row", "an empty table")
