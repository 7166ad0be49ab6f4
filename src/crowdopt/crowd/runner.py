"""`run_method`: the one door to aggregation, which the CLI (`aggregate`, `estimate`), the
estimator classes and campaigns go through.

It takes a method by its CLI name or `auto` (chosen on held-out labels, `crowd/auto.py`), the
method's options (an option the method does not take is refused in one line; auto passes each
candidate only the options it takes), and the gold table of the run: scored against, used by
the weighted vote to estimate accuracies (cross-fitted), as the EM start with `init='gold'`, or
clamped with `use_gold`. The weighted vote has ONE rule for its weights: given `weights` (used
as given), `accuracies` (turned into weights by `weighting`, digest 004 eqs. 1-3), or else
accuracies from gold by cross-fitting (digest 004 sec. 1.4).

It returns an `AggregationReport`: the `AggregationResult` (labels, posteriors, skills, ...)
plus what was run on what, whose `to_dict()` is the `crowdopt aggregate --json` document.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import InputError
from .aggregate import (
    AggregationResult,
    accuracy,
    require_table,
    weighted_majority_vote,
    weights_from_accuracy,
)
from .auto import AUTO_CANDIDATES, AutoChoice, choose_method
from .methods import DEFAULT_METHOD, check_options, method_info, taken_options
from .names import AUTO  # noqa: F401 (re-exported)
from .reliability import accuracy_vector, cross_fitted_weighted_vote
from .tables import Gold, LabelTable

WMV_CLIP = 0.01  # accuracies are clipped to [clip, 1 - clip] before log-odds weights


@dataclasses.dataclass(frozen=True)
class AggregationReport(AggregationResult):
    """An `AggregationResult` and the run behind it: the method run (`name`; auto's choice
    in `choice`), the table, the gold it was scored against, seed, tie rule, time, and the
    files the caller wrote (`with_files`). `to_dict()` is `crowdopt aggregate --json`."""

    name: str = ""
    table: LabelTable | None = dataclasses.field(default=None, repr=False, compare=False)
    source: str | None = None
    seed: int = 0
    ties: str = "random"
    time_s: float = 0.0
    choice: AutoChoice | None = None
    gold: Gold | None = dataclasses.field(default=None, repr=False, compare=False)
    gold_clamped: bool = False
    gold_init: bool = False
    files: tuple[tuple[str, str], ...] = ()

    def with_files(self, **files: str | None) -> AggregationReport:
        """The report with the files written from it (`output`, `posteriors`) named."""
        named = tuple((k, str(v)) for k, v in files.items() if v)
        return dataclasses.replace(self, files=self.files + named)

    def to_dict(self) -> dict:
        """The `crowdopt aggregate --json` document."""
        tb = self.table
        out: dict[str, Any] = {
            "labels": self.source, "method": self.name, "n_tasks": tb.n_tasks,
            "n_workers": tb.n_workers, "n_labels": tb.n_labels, "n_classes": tb.n_classes,
            "classes": tb.classes.tolist(), "iterations": self.iterations,
            "converged": self.converged, "time_s": self.time_s, "seed": self.seed,
            "ties": self.ties, **objective_summary(self)}
        if self.choice is not None:
            out["auto"] = self.choice.to_dict()
        if self.gold is not None:
            out.update(gold_tasks=self.gold.n, accuracy=accuracy(self, self.gold),
                       accuracy_tie_broken=accuracy(self, self.gold, ties="labels"),
                       gold_clamped=self.gold_clamped, gold_init=self.gold_init)
        out.update(self.files)
        return out


def objective_summary(res: AggregationResult) -> dict:
    """The objective the method increases: name, final value, whether its trace never
    decreased (relative rounding 1e-12), and the trace; None for a method without one."""
    if not res.objective:
        return {"objective": None}
    o = np.asarray(res.objective, dtype=float)
    d = np.diff(o)
    mono = bool(np.all(d >= -1e-12 * np.maximum(np.abs(o[1:]), 1.0)))
    return {"objective": {"name": res.objective_name, "final": float(o[-1]),
                          "non_decreasing": mono, "trace": o.tolist()}}


def run_method(table: LabelTable, method: str = DEFAULT_METHOD, *, gold: Gold | None = None,
               use_gold: bool = False, weights: Any = None, accuracies: Any = None,
               weighting: str = "log-odds", folds: int = 2, clip: float = WMV_CLIP,
               ties: str = "random", seed: int = 0, candidates: tuple = AUTO_CANDIDATES,
               source: str | None = None, fit_options: Mapping[str, Any] | None = None,
               **options: Any) -> AggregationReport:
    """Aggregate `table` with `method` and report it.

    Args:
        table: the label table (`from_arrays`, `from_dataframe`, `load_table`, ...).
        method: a name of `METHODS` (majority-vote, dawid-skene, glad, mace, ebcc, ...), or
            'auto' (chosen by held-out likelihood among `candidates`).
        gold: the run's gold table: scored against (`accuracy` in the report); with
            init='gold' the EM starts from it; wmv estimates its accuracies from it
            (cross-fitted in `folds` folds) when given neither weights nor accuracies.
        use_gold: the EM clamps the gold tasks to their gold labels.
        weights: (wmv only) per worker, a mapping worker id -> weight or a vector in the
            table's worker order; workers without one get the mean weight.
        accuracies: (wmv only) per worker, as weights; made weights by `weighting`.
        weighting: how accuracies become weights: 'log-odds' or 'linear'.
        folds: the folds of wmv's cross-fitted accuracies from gold.
        clip: accuracies are clipped to [clip, 1 - clip] before weighting.
        ties: how a tied vote is broken ('random', ...).
        seed: the seed of random tie breaks and restarts.
        candidates: the methods 'auto' chooses among.
        source: the name of the labels, for the report.
        fit_options: keyword arguments of the method's function that have no CLI flag (the
            estimator classes' extra parameters).
        **options: the method's options by name (smoothing, priors, tol, max_iter, init,
            restarts, subtypes, ...; None = its default).

    Returns:
        The `AggregationReport`: labels, posteriors, worker skills, accuracy against gold,
            time and the fit's convergence.

    Raises:
        InputError: an unknown method, or an option it does not take (one line).
    """
    t0 = time.perf_counter()
    require_table(table)
    if method != AUTO:
        method_info(method)
    opts = {k: v for k, v in options.items() if v is not None}
    init_gold = opts.get("init") == "gold"
    if use_gold and gold is None:
        raise InputError("--use-gold", "a gold table (--gold or dataset:NAME)", "none")
    if use_gold and init_gold:
        raise InputError("--use-gold", "either --use-gold (clamp) or --init gold (start)",
                         "both")
    if init_gold and gold is None:
        raise InputError("--init gold", "a gold table (--gold or dataset:NAME)", "none")
    if use_gold or init_gold:
        opts["gold"] = gold
    for given in (weights, accuracies):
        if given is not None and method != "wmv":
            raise InputError("--weights", "--method wmv", method)
    choice = None
    if method == AUTO:
        choice = choose_method(table, seed=seed, candidates=candidates,
                               options={m: taken_options(m, opts) for m in candidates})
        method = choice.method
        opts = taken_options(method, opts)
    if method == "wmv":
        check_options("wmv", {k: v for k, v in opts.items() if k != "gold"})
        res = weighted_vote(table, weights=weights, accuracies=accuracies, gold=gold,
                            weighting=weighting, folds=folds, clip=clip, ties=ties, seed=seed)
    else:
        check_options(method, opts)  # fit_options are the function's own, passed as given
        res = method_info(method).func(table, ties=ties, seed=seed, **opts,
                                       **(fit_options or {}))
    fields = {f.name: getattr(res, f.name) for f in dataclasses.fields(AggregationResult)}
    return AggregationReport(**fields, name=method, table=table, source=source, seed=seed,
                             ties=ties, time_s=time.perf_counter() - t0, choice=choice,
                             gold=gold, gold_clamped=bool(use_gold), gold_init=init_gold)


def weighted_vote(table: LabelTable, *, weights: Any = None, accuracies: Any = None,
                  gold: Gold | None = None, weighting: str = "log-odds", folds: int = 2,
                  clip: float = WMV_CLIP, ties: str = "random", seed: int = 0
                  ) -> AggregationResult:
    """The weighted majority vote's one rule (digest 004 eq. 1): weights as given, else from
    accuracies (log-odds or linear, eqs. 2-3), else from gold by cross-fitting (sec. 1.4)."""
    if weights is not None and accuracies is not None:
        raise InputError("wmv", "weights or accuracies", "both")
    if weights is not None:
        w = per_worker(table, weights, "weights")
        if not np.any(np.isfinite(w)):
            raise InputError("weights", "a weight for at least one worker of the data",
                             "none matched")
        w = np.where(np.isfinite(w), w, np.nanmean(w))
        return weighted_majority_vote(table, w, ties=ties, seed=seed)
    if accuracies is not None:
        acc = per_worker(table, accuracies, "accuracies")
        w = weights_from_accuracy(acc, table.n_classes, weighting, clip=clip)
        return weighted_majority_vote(table, w, ties=ties, seed=seed)
    if gold is not None:
        return cross_fitted_weighted_vote(table, gold, scheme=weighting, folds=folds,
                                          ties=ties, seed=seed, clip=clip)
    raise InputError("--method wmv", "--weights FILE or gold to estimate weights from",
                     "neither")


def per_worker(table: LabelTable, values: Any, field: str) -> np.ndarray:
    """A per-worker vector in the table's worker order from a mapping worker id -> value
    (matched by text; NaN for workers it lacks) or a vector of n_workers numbers."""
    if isinstance(values, Mapping) or hasattr(values, "items"):
        return accuracy_vector(table, values)
    v = np.asarray(values, dtype=float)
    if v.shape != (table.n_workers,):
        raise InputError(field, f"a mapping worker -> value or {table.n_workers} numbers",
                         f"shape {v.shape}")
    return v
