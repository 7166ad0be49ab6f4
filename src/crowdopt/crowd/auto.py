"""Choosing an aggregation method without gold: held-out label likelihood.

A random `holdout` fraction of the labels (seeded; never a task's last label) is hidden; every
candidate method is fitted on the rest, and scored by how well its task posteriors P predict
each hidden label e = (t, w, l):

    ll_m(e) = log sum_k P_m[t,k] C_m[w,k,l],   score(m) = mean_e ll_m(e),

where C_m[w] is worker w's confusion matrix estimated from the visible labels and P_m (the
Dawid-Skene M-step with one pseudo-count per cell, the same for every method, so that methods
without a worker model are scored alike).

The pick is the `default` method (Dawid-Skene, what `aggregate` runs without --method) unless
another beats it by more than `z` standard errors of the paired difference
d_m(e) = ll_m(e) - ll_default(e) (mean d / (sd d / sqrt n) > z); among those, the largest mean
gain wins. Differences in held-out likelihood within noise say little about accuracy: on the
25 shared sets with gold, over three hold-out seeds, taking the highest score outright (z = 0)
averaged 0.772-0.782 accuracy, below Dawid-Skene alone (0.783); z = 2 averages 0.783-0.784,
level with Dawid-Skene, and hits the gold-best method on 8-10 sets instead of 6-7
(`benchmarks/study_auto_rule.py`).

The score cannot tell a labelling from the same labelling with the classes permuted (the
confusion matrices permute with it), so a candidate whose labels agree with fewer than 1/L of
the visible answers (workers worse than chance on average: a label-switched solution, e.g.
KOS's messages settling on the opposite sign) is set aside, as is a method that fails on the
data (e.g. too few classes); both are reported under `skipped`. If the default itself is set
aside, the highest-scoring method is the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..validate import real, sequence
from .aggregate import AggregationResult, check_seed, require_table
from .export import confusion_from_posteriors
from .methods import DEFAULT_METHOD, METHODS, UNSUPERVISED, fit_method
from .names import AUTO_Z
from .tables import LabelTable

AUTO_CANDIDATES = UNSUPERVISED  # every method that needs nothing but the labels
AUTO_HOLDOUT = 0.1
AUTO_REPEATS = 1
CRITERION = ("mean log-likelihood of held-out labels under the method's task posteriors and "
             "per-worker confusion matrices fitted on the other labels; the default method "
             "unless another beats it by more than z standard errors of the paired difference")


@dataclass(frozen=True)
class AutoChoice:
    """What `--method auto` picked and why."""

    method: str
    scores: dict[str, float]     # mean held-out log-likelihood per label
    baseline: str                # the default, or the best score if the default was set aside
    gains: dict[str, tuple[float, float]]   # other method -> (mean paired gain, its std error)
    z: float
    holdout: float
    held_out_labels: int
    repeats: int
    seed: int
    skipped: dict[str, str] = field(default_factory=dict)
    default: str = DEFAULT_METHOD

    def reason(self) -> str:
        """One line: what auto picked and why."""
        on = (f"on {self.held_out_labels} hidden label{'s' * (self.held_out_labels != 1)} "
              f"({self.holdout:.0%}, {self.repeats} draw(s), seed {self.seed})")
        if self.method != self.baseline:
            g, se = self.gains[self.method]
            return (f"picked {self.method}: its held-out log-likelihood per label beats "
                    f"{self.baseline}'s by {g:.4f} +- {se:.4f} (over {self.z:g} standard "
                    f"errors) {on}")
        if not self.gains:
            return f"picked {self.method}: the only method scored {on}"
        near = max(self.gains, key=lambda m: self.gains[m][0])
        g, se = self.gains[near]
        err = f"+- {se:.4f}" if np.isfinite(se) else "with no standard error from one label"
        role = ("the default" if self.method == self.default else
                f"the best score; the default {self.default} was set aside")
        return (f"picked {self.method} ({role}): no method beats its held-out log-likelihood "
                f"per label ({self.scores[self.method]:.4f}) by over {self.z:g} standard "
                f"errors (closest: {near} {g:+.4f} {err}) {on}")

    def to_dict(self) -> dict:
        """The choice as JSON (the `auto` part of `aggregate --json`)."""
        return {"picked": self.method, "criterion": CRITERION, "reason": self.reason(),
                "scores": self.scores, "default": self.default, "baseline": self.baseline,
                "z": self.z,
                "gains": {m: {"gain": g, "std_error": se if np.isfinite(se) else None}
                          for m, (g, se) in self.gains.items()},
                "holdout": self.holdout, "held_out_labels": self.held_out_labels,
                "repeats": self.repeats, "seed": self.seed, "skipped": self.skipped}


def holdout_mask(table: LabelTable, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Boolean mask of about `fraction` of the rows, never all rows of a task."""
    n = table.n_labels
    key = rng.random(n)
    order = np.lexsort((key, table.task))
    per_task = table.labels_per_task()
    start = np.concatenate([[0], np.cumsum(per_task)[:-1]])
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - start[table.task[order]]
    eligible = rank < per_task[table.task] - 1
    want = int(round(fraction * n))
    idx = np.flatnonzero(eligible)
    pick = idx[np.argsort(key[idx], kind="stable")[:want]]
    mask = np.zeros(n, dtype=bool)
    mask[pick] = True
    return mask


def heldout_loglik(table: LabelTable, mask: np.ndarray, res: AggregationResult) -> np.ndarray:
    """Log predictive probability ll_m(e) of every row in `mask` (module docstring)."""
    train = table.subset(~mask)
    conf = confusion_from_posteriors(train, res.posteriors, smoothing=1.0)
    t, w, lab = table.task[mask], table.worker[mask], table.label[mask]
    p = np.einsum("ek,ek->e", res.posteriors[t], conf[w, :, lab])
    return np.log(np.maximum(p, 1e-300))


def heldout_score(table: LabelTable, mask: np.ndarray, res: AggregationResult) -> float:
    """Mean log predictive probability of the rows in `mask`: score(m)."""
    return float(np.mean(heldout_loglik(table, mask, res)))


def choose_method(table: LabelTable, *, candidates=AUTO_CANDIDATES, holdout: float = AUTO_HOLDOUT,
                  repeats: int = AUTO_REPEATS, seed: int = 0, options: dict | None = None,
                  default: str = DEFAULT_METHOD, z: float = AUTO_Z) -> AutoChoice:
    """Score every candidate on held-out labels and keep `default` unless another beats it by
    over `z` standard errors (module docstring; z=0 picks the highest score). `options`:
    per-method keyword options {method: {...}} passed to `aggregate`."""
    require_table(table)
    holdout = real(holdout, "holdout")
    if not 0 < holdout < 1:
        raise InputError("holdout", "a fraction in (0, 1)", holdout)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or not 1 <= repeats <= 1000:
        raise InputError("repeats", "an integer in [1, 1000]", repeats)
    check_seed(seed)
    if options is not None and not (isinstance(options, dict) and all(
            isinstance(v, dict) for v in options.values())):
        raise InputError("options", "a dict {method: {option: value}}", options)
    z = real(z, "z", lo=0.0)
    candidates = tuple(sequence(candidates, "candidates", min_len=1))
    for m in candidates:
        if not isinstance(m, str) or m not in METHODS or not METHODS[m].unsupervised:
            raise InputError("candidates", "unsupervised method names", m)
    if default not in candidates:
        raise InputError("default", f"one of the candidates ({', '.join(candidates)})", default)
    rng = np.random.default_rng(seed)
    masks = [holdout_mask(table, holdout, rng) for _ in range(repeats)]
    if not any(m.any() for m in masks):
        raise InputError("labels", "tasks with at least two labels to hold one out", "none")
    ll: dict[str, list[np.ndarray]] = {m: [] for m in candidates}
    skipped: dict[str, str] = {}
    for mask in masks:
        train = table.subset(~mask)
        for m in candidates:
            if m in skipped:
                continue
            try:
                res = fit_method(train, m, seed=seed, **(options or {}).get(m, {}))
            except InputError as exc:
                skipped[m] = str(exc)
                continue
            agree = float(np.mean(res.posteriors[train.task, train.label]))
            if agree < 1.0 / table.n_classes:
                skipped[m] = (f"label-switched: its labels agree with {agree:.3f} of the "
                              f"answers, less than chance 1/{table.n_classes}")
                continue
            ll[m].append(heldout_loglik(table, mask, res))
    per = {m: np.concatenate(v) for m, v in ll.items() if v and m not in skipped}
    if not per:
        raise InputError("--method auto", "at least one method that runs on these labels",
                         "none")
    mean = {m: float(np.mean(v)) for m, v in per.items()}   # in candidate order
    base = default if default in per else max(mean, key=mean.get)   # first of equal scores
    gains = {m: _paired_gain(per[m], per[base]) for m in per if m != base}
    return AutoChoice(pick(gains, base, z), mean, base, gains, z, holdout,
                      int(masks[0].sum()), repeats, seed, skipped, default)


def pick(gains: dict[str, tuple[float, float]], baseline: str, z: float) -> str:
    """The rule: the method with the largest mean gain among those beating `baseline` by over
    `z` standard errors (a NaN error never does), else `baseline`; equal gains keep the
    first in `gains`' order."""
    beat = {m: g for m, (g, se) in gains.items() if g > z * se and g > 0}
    return max(beat, key=beat.get) if beat else baseline


def _paired_gain(ll: np.ndarray, base: np.ndarray) -> tuple[float, float]:
    """Mean of the per-label difference and its standard error sd / sqrt n (NaN for a single
    hidden label: no error estimate, so no switch)."""
    d = ll - base
    se = float(np.std(d, ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")
    return float(np.mean(d)), se
