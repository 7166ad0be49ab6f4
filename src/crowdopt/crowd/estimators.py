"""crowd-kit-style estimator classes over crowdopt's vectorized aggregators.

    from crowdopt.crowd import DawidSkene
    labels = DawidSkene(n_iter=100).fit_predict(df)     # df: columns task, worker, label

Each class is a thin wrapper: `fit` turns the data into a `LabelTable` (a pandas DataFrame with
columns task, worker, label, ids opaque: ints, strings, mixed; or a LabelTable), calls the one
function of `crowdopt.crowd` that implements the method, and exposes the result with
crowd-kit's attribute names:

    labels_   pandas Series indexed by task (name 'agg_label')
    probas_   DataFrame task x class of posterior probabilities (rows sum to 1)
    skills_   Series indexed by worker (probability of a correct answer, see each method)
    errors_   DataFrame of confusion matrices, crowd-kit's layout: rows (worker, observed
              label), columns the true label (Dawid-Skene, one-coin, MACE, GLAD's mean)
    priors_   Series of class priors (EM methods)
    log_likelihood_  final marginal log-likelihood of the labels (EM methods)
    objective_       trace of the quantity the method increases (`result_.objective_name`)
    n_iter_, converged_, result_ (the `AggregationResult`), table_ (the `LabelTable`)

`fit(data, true_labels=None)`: `true_labels` (a Series or dict task -> label) clamps those
tasks to their gold class in the EM methods (Dawid-Skene, one-coin, GLAD, MACE; crowd-kit's
DawidSkene does the same) and gives WeightedMajorityVote its worker accuracies; other methods
refuse it. Parameter names follow crowd-kit where it has one (`n_iter`, `tol`); `tol` here is
a RELATIVE rise of the objective (crowd-kit: an absolute change of its per-label ELBO).
pandas is needed only for the DataFrame in/out (`pip install crowdopt[pandas]`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..errors import InputError
from . import aggregate as agg
from .export import model_confusion
from .runner import run_method
from .tables import LabelTable, _pandas, from_dataframe, gold_from_arrays

__all__ = ["EBCC", "DawidSkene", "GLAD", "KOS", "MACE", "MMSR", "MajorityVote",
           "OneCoinDawidSkene", "Wawa", "WeightedMajorityVote", "ZeroBasedSkill", "as_table"]


def as_table(data, *, duplicates: str = "error") -> LabelTable:
    """A LabelTable from a LabelTable or a pandas DataFrame with task, worker, label columns;
    anything else is a one-line InputError naming what was expected."""
    if isinstance(data, LabelTable):
        return data
    if hasattr(data, "columns") and hasattr(data, "__getitem__") and hasattr(data, "iloc"):
        return from_dataframe(data, duplicates=duplicates)
    raise InputError("data", "a pandas DataFrame with columns task, worker, label, or a "
                     "crowdopt LabelTable", type(data).__name__)


# Function argument -> estimator parameter, for error messages (crowd-kit's names).
_PARAMETER_NAMES = {"max_iter": "n_iter", "--init gold": "init", "subtypes": "n_subtypes", "restarts": "n_restarts",
                    "lr_steps": "lr_steps_to_reduce",
                    "lr_init / lr_factor": "lr_init / lr_reduce_factor",
                    "theta_prior / strategy_prior": "alpha / beta / strategy_prior"}


class _Aggregator:
    """Shared fit / predict plumbing; subclasses set `_method` and `_options()`."""

    _method = ""
    _uses_gold = False

    def __init__(self, *, duplicates: str = "error", ties: str = "random", seed: int = 0):
        self.duplicates = duplicates
        self.ties = ties
        self.seed = seed

    # -- what subclasses provide --------------------------------------------------------------
    def _options(self) -> dict:
        return {}

    # -- public API ---------------------------------------------------------------------------
    def fit(self, data, true_labels=None) -> _Aggregator:
        """Fit on `data` (DataFrame task, worker, label or LabelTable); returns self."""
        table = as_table(data, duplicates=self.duplicates)
        gold = self._gold(table, true_labels)
        opts = {"ties": self.ties, "seed": self.seed, **self._options()}
        if gold is not None:  # crowd-kit's rule: gold tasks are clamped (EM) unless gold starts it
            opts.update(gold=gold, use_gold=opts.get("init") != "gold")
        try:
            res = self._run(table, opts)
        except InputError as exc:  # name the estimator's parameter, not the function's
            name = _PARAMETER_NAMES.get(exc.field)
            if name is None:
                raise
            raise InputError(name, exc.expected, exc.found, note=exc.note) from None
        self._set(table, res)
        return self

    def fit_predict(self, data, true_labels=None):
        """Fit and return the labels: a pandas Series indexed by task."""
        return self.fit(data, true_labels).labels_

    def fit_predict_proba(self, data, true_labels=None):
        """Fit and return the posteriors: a DataFrame task x class."""
        return self.fit(data, true_labels).probas_

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({opts})"

    # -- internals ----------------------------------------------------------------------------
    def _params(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.endswith("_")}

    def _run(self, table: LabelTable, opts: dict) -> agg.AggregationResult:
        """The fit: the one aggregation door with this estimator's options."""
        return run_method(table, self._method, **opts)

    def _gold(self, table: LabelTable, true_labels):
        if true_labels is None:
            return None
        if not self._uses_gold:
            raise InputError("true_labels", "a method that uses gold (DawidSkene, "
                             "OneCoinDawidSkene, GLAD, MACE, WeightedMajorityVote)",
                             type(self).__name__)
        items = true_labels.items() if hasattr(true_labels, "items") else None
        if items is None:
            raise InputError("true_labels", "a pandas Series or dict task -> label",
                             type(true_labels).__name__)
        pairs = list(items)
        known = set(table.task_ids.tolist())
        pairs = [(t, v) for t, v in pairs if t in known]
        if not pairs:
            raise InputError("true_labels", "labels for tasks of the data", "none matched")
        return gold_from_arrays(table, [p[0] for p in pairs], [p[1] for p in pairs])

    def _set(self, table: LabelTable, res: agg.AggregationResult) -> None:
        pd = _pandas()
        for name in _LAZY:  # a refit recomputes them
            self.__dict__.pop(name, None)
        self.table_ = table
        self.result_ = res
        self.labels_ = pd.Series(self._classes()[res.labels], index=self._tasks(),
                                 name="agg_label")
        self.log_likelihood_ = res.log_likelihood[-1] if res.log_likelihood else None
        self.objective_ = list(res.objective)
        self.n_iter_ = res.iterations
        self.converged_ = res.converged

    # The other fitted frames are built on first access (fit_predict needs only labels_):
    # on 20k tasks the posterior frame and the per-worker errors cost as much as the vote.
    @functools.cached_property
    def probas_(self):
        """Posteriors: DataFrame task x class."""
        return _pandas().DataFrame(self._fitted("probas_").posteriors, index=self._tasks(),
                                   columns=self._classes())

    @functools.cached_property
    def skills_(self):
        """Per-worker skill: Series indexed by worker (see each method)."""
        return _pandas().Series(self._fitted("skills_").skills, index=self._workers(),
                                name="skill")

    @functools.cached_property
    def priors_(self):
        """Class priors (EM methods), else None."""
        res = self._fitted("priors_")
        return None if res.priors is None else _pandas().Series(
            res.priors, index=self._classes(), name="prior")

    @functools.cached_property
    def errors_(self):
        """Per-worker confusion in crowd-kit's layout (models with one), else None."""
        res = self._fitted("errors_")
        if res.confusion is None and res.method not in ("mace", "glad"):
            return None
        return _errors_frame(model_confusion(self.table_, res)[0], self._workers(),
                             self._classes())

    def _fitted(self, attr: str) -> agg.AggregationResult:
        """The fit's result; reading a fitted attribute before `fit` is a one-line error."""
        res = self.__dict__.get("result_")
        if res is None:
            raise AttributeError(f"{attr}: {type(self).__name__} is not fitted; call "
                                 f"fit(data) first")
        return res

    def _tasks(self):
        return _pandas().Index(self.table_.task_ids, name="task", dtype=object, copy=False)

    def _workers(self):
        return _pandas().Index(self.table_.worker_ids, name="worker", dtype=object, copy=False)

    def _classes(self):
        return _pandas().Index(self.table_.classes.tolist(), name="label")


# the frames built on first access, dropped by every fit
_LAZY = tuple(n for n, v in vars(_Aggregator).items() if isinstance(v, functools.cached_property))


def _errors_frame(conf: np.ndarray, workers, classes):
    """crowd-kit's errors_ layout: index (worker, observed label), columns true label."""
    pd = _pandas()
    n_w, L, _ = conf.shape
    idx = pd.MultiIndex.from_product([workers, classes], names=["worker", "label"])
    data = conf.transpose(0, 2, 1).reshape(n_w * L, L)  # [w, observed] x true
    return pd.DataFrame(data, index=idx, columns=pd.Index(classes, name="true_label"))


class MajorityVote(_Aggregator):
    """Majority vote (ties: `ties`, seeded). skills_ = mean posterior of the worker's answers."""

    _method = "mv"


class Wawa(_Aggregator):
    """Worker Agreement With Aggregate (`crowdopt.crowd.agreement.wawa`)."""

    _method = "wawa"


class ZeroBasedSkill(_Aggregator):
    """Zero-Based Skill (`crowdopt.crowd.agreement.zero_based_skill`)."""

    _method = "zbs"

    def __init__(self, n_iter: int = 1000, tol: float = agg.EM_TOL, lr_init: float = 1.0,
                 lr_steps_to_reduce: int = 20, lr_reduce_factor: float = 0.5, **kw):
        super().__init__(**kw)
        self.n_iter, self.tol = n_iter, tol
        self.lr_init, self.lr_steps_to_reduce = lr_init, lr_steps_to_reduce
        self.lr_reduce_factor = lr_reduce_factor

    def _options(self) -> dict:
        return {"max_iter": self.n_iter, "tol": self.tol}

    def _run(self, table, opts):
        return run_method(table, self._method, **opts, fit_options={
            "lr_init": self.lr_init, "lr_steps": self.lr_steps_to_reduce,
            "lr_factor": self.lr_reduce_factor})


class _EMAggregator(_Aggregator):
    _uses_gold = True

    def __init__(self, n_iter: int = agg.EM_MAX_ITER, tol: float = agg.EM_TOL, *,
                 smoothing: float = agg.DS_SMOOTHING, priors: str = "learn", init: str = "mv",
                 **kw):
        super().__init__(**kw)
        self.n_iter, self.tol, self.smoothing = n_iter, tol, smoothing
        self.priors, self.init = priors, init

    def _options(self) -> dict:
        return {"max_iter": self.n_iter, "tol": self.tol, "smoothing": self.smoothing,
                "priors": self.priors, "init": self.init}



class DawidSkene(_EMAggregator):
    """Dawid-Skene MAP EM (`crowdopt.crowd.aggregate.dawid_skene`)."""

    _method = "dawid-skene"


class OneCoinDawidSkene(_EMAggregator):
    """One-coin EM (`crowdopt.crowd.aggregate.one_coin_em`); class priors uniform by default
    (crowd-kit learns them: `priors='learn'`)."""

    _method = "one-coin"

    def __init__(self, n_iter: int = agg.EM_MAX_ITER, tol: float = agg.EM_TOL, *,
                 priors: str = "uniform", **kw):
        super().__init__(n_iter, tol, priors=priors, **kw)


class MACE(_EMAggregator):
    """MACE by variational Bayes (or MAP EM) with restarts (`crowdopt.crowd.competence.mace`).
    `method='vb'|'map'` as in crowd-kit; alpha, beta: the Beta prior on competence; the
    Dirichlet prior on spam strategies is `strategy_prior` (VB) or 1 + `smoothing` (MAP)."""

    _method = "mace"

    def __init__(self, n_iter: int = 1000, tol: float = agg.EM_TOL, *, n_restarts: int = 10,
                 method: str = "vb", alpha: float = 0.5, beta: float = 0.5,
                 strategy_prior: float = 10.0, smoothing: float = 0.01, priors: str = "learn",
                 **kw):
        super().__init__(n_iter, tol, smoothing=smoothing, priors=priors, **kw)
        if method not in ("vb", "map"):
            raise InputError("method", "'vb' or 'map'", method)
        self.n_restarts, self.method = n_restarts, method
        self.alpha, self.beta, self.strategy_prior = alpha, beta, strategy_prior

    def _run(self, table, opts):
        opts = {k: v for k, v in opts.items() if k != "smoothing"}
        return run_method(table, self._method, restarts=self.n_restarts, **opts, fit_options={
            "variational": self.method == "vb", "theta_prior": (self.alpha, self.beta),
            "strategy_prior": self.strategy_prior, "smoothing": self.smoothing})


class GLAD(_EMAggregator):
    """GLAD generalized EM (`crowdopt.crowd.difficulty.glad`)."""

    _method = "glad"

    def __init__(self, n_iter: int = 1000, tol: float = agg.EM_TOL, *, priors: str = "uniform",
                 **kw):
        super().__init__(n_iter, tol, priors=priors, **kw)

    def _options(self) -> dict:
        return {"max_iter": self.n_iter, "tol": self.tol, "priors": self.priors,
                "init": self.init}


class KOS(_Aggregator):
    """KOS message passing (`crowdopt.crowd.messages.kos`; binary, one-vs-rest beyond)."""

    _method = "kos"

    def __init__(self, n_iter: int = 200, tol: float = 1e-6, **kw):
        super().__init__(**kw)
        self.n_iter, self.tol = n_iter, tol

    def _options(self) -> dict:
        return {"max_iter": self.n_iter, "tol": self.tol}


class MMSR(_Aggregator):
    """M-MSR robust rank-one skills and their log-odds vote (`crowdopt.crowd.rank_one.mmsr`)."""

    _method = "mmsr"

    def __init__(self, n_iter: int = 1000, tol: float = 1e-8, **kw):
        super().__init__(**kw)
        self.n_iter, self.tol = n_iter, tol

    def _options(self) -> dict:
        return {"max_iter": self.n_iter, "tol": self.tol}


class EBCC(_Aggregator):
    """EBCC: Dawid-Skene with class subtypes for correlated workers, by variational Bayes
    (`crowdopt.crowd.subtypes.ebcc`; the authors' defaults). Seeded start."""

    _method = "ebcc"

    def __init__(self, n_iter: int = 1000, tol: float = agg.EM_TOL, *, n_subtypes: int = 10,
                 concentration: float = 0.1, class_prior: float = 1.0,
                 confusion_prior: tuple[float, float] = (4.0, 1.0), **kw):
        super().__init__(**kw)
        self.n_iter, self.tol, self.n_subtypes = n_iter, tol, n_subtypes
        self.concentration, self.class_prior = concentration, class_prior
        self.confusion_prior = confusion_prior

    def _options(self) -> dict:
        return {"subtypes": self.n_subtypes, "concentration": self.concentration,
                "class_prior": self.class_prior, "confusion_prior": self.confusion_prior,
                "max_iter": self.n_iter, "tol": self.tol}


class WeightedMajorityVote(_Aggregator):
    """Weighted majority vote. `weights`: per-worker weights (Series / dict worker -> weight,
    used as given); or `accuracies` (worker -> accuracy in [0, 1]) turned into weights by
    `weighting` ('log-odds' or 'linear', digest 004); or, with neither, accuracies estimated
    from `true_labels` by 2-fold cross-fitting (digest 004 sec. 1.4). Workers without a
    weight get the mean weight (accuracies: the mean accuracy)."""

    _method = "wmv"
    _uses_gold = True

    def __init__(self, weights: Any = None, *, accuracies: Any = None,
                 weighting: str = "log-odds", folds: int = 2, **kw):
        super().__init__(**kw)
        self.weights, self.accuracies = weights, accuracies
        self.weighting, self.folds = weighting, folds

    def _run(self, table, opts):
        if self.weights is not None and self.accuracies is not None:
            raise InputError("WeightedMajorityVote", "weights or accuracies", "both")
        if self.weights is None and self.accuracies is None and opts.get("gold") is None:
            raise InputError("WeightedMajorityVote", "weights, accuracies or true_labels",
                             "none of them")
        opts = {k: v for k, v in opts.items() if k != "use_gold"}  # gold gives accuracies
        return run_method(table, self._method, weights=self.weights,
                          accuracies=self.accuracies, weighting=self.weighting,
                          folds=self.folds, **opts)
