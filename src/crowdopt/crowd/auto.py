"""Choosing an aggregation method without gold: held-out label likelihood.

A random `holdout` fraction of the labels (seeded; never a task's last label) is hidden; every
candidate method is fitted on the rest, and scored by how well its task posteriors P predict
the hidden labels:

    score(m) = mean over hidden labels (t, w, l) of log sum_k P_m[t,k] C_m[w,k,l],

where C_m[w] is worker w's confusion matrix estimated from the visible labels and P_m (the
Dawid-Skene M-step with one pseudo-count per cell, the same for every method, so that methods
without a worker model are scored alike). The method with the highest mean score over
`repeats` draws is picked; the final labels come from it fitted on all labels.

The score cannot tell a labelling from the same labelling with the classes permuted (the
confusion matrices permute with it), so a candidate whose labels agree with fewer than 1/L of
the visible answers (workers worse than chance on average: a label-switched solution, e.g.
KOS's messages settling on the opposite sign) is set aside, as is a method that fails on the
data (e.g. too few classes); both are reported under `skipped`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from .aggregate import AggregationResult
from .export import confusion_from_posteriors
from .methods import METHODS, UNSUPERVISED, run_method
from .tables import LabelTable

AUTO_CANDIDATES = UNSUPERVISED  # every method that needs nothing but the labels
AUTO_HOLDOUT = 0.1
AUTO_REPEATS = 1
CRITERION = ("mean log-likelihood of held-out labels under the method's task posteriors and "
             "per-worker confusion matrices fitted on the other labels")


@dataclass(frozen=True)
class AutoChoice:
    """What `--method auto` picked and why."""

    method: str
    scores: dict[str, float]
    holdout: float
    held_out_labels: int
    repeats: int
    seed: int
    skipped: dict[str, str] = field(default_factory=dict)

    def ranking(self) -> list[tuple[str, float]]:
        return sorted(self.scores.items(), key=lambda kv: -kv[1])

    def reason(self) -> str:
        r = self.ranking()
        runner = f"; next {r[1][0]} {r[1][1]:.4f}" if len(r) > 1 else ""
        return (f"picked {self.method}: highest held-out log-likelihood per label "
                f"({r[0][1]:.4f}{runner}) on {self.held_out_labels} hidden labels "
                f"({self.holdout:.0%}, {self.repeats} draw(s), seed {self.seed})")

    def to_dict(self) -> dict:
        return {"picked": self.method, "criterion": CRITERION, "reason": self.reason(),
                "scores": self.scores, "holdout": self.holdout,
                "held_out_labels": self.held_out_labels, "repeats": self.repeats,
                "seed": self.seed, "skipped": self.skipped}


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


def heldout_score(table: LabelTable, mask: np.ndarray, res: AggregationResult) -> float:
    """Mean log predictive probability of the rows in `mask` (module docstring)."""
    train = table.subset(~mask)
    conf = confusion_from_posteriors(train, res.posteriors, smoothing=1.0)
    t, w, lab = table.task[mask], table.worker[mask], table.label[mask]
    p = np.einsum("ek,ek->e", res.posteriors[t], conf[w, :, lab])
    return float(np.mean(np.log(np.maximum(p, 1e-300))))


def choose_method(table: LabelTable, *, candidates=AUTO_CANDIDATES, holdout: float = AUTO_HOLDOUT,
                  repeats: int = AUTO_REPEATS, seed: int = 0, options: dict | None = None
                  ) -> AutoChoice:
    """Score every candidate on held-out labels (module docstring) and pick the best.
    `options`: per-method keyword options {method: {...}} passed to `aggregate`."""
    if not 0 < holdout < 1:
        raise InputError("holdout", "a fraction in (0, 1)", holdout)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise InputError("repeats", "an integer >= 1", repeats)
    for m in candidates:
        if m not in METHODS or not METHODS[m].unsupervised:
            raise InputError("candidates", "unsupervised method names", m)
    rng = np.random.default_rng(seed)
    masks = [holdout_mask(table, holdout, rng) for _ in range(repeats)]
    if not any(m.any() for m in masks):
        raise InputError("labels", "tasks with at least two labels to hold one out", "none")
    scores: dict[str, list[float]] = {m: [] for m in candidates}
    skipped: dict[str, str] = {}
    for mask in masks:
        train = table.subset(~mask)
        for m in candidates:
            if m in skipped:
                continue
            try:
                res = run_method(train, m, seed=seed, **(options or {}).get(m, {}))
            except InputError as exc:
                skipped[m] = str(exc)
                continue
            agree = float(np.mean(res.posteriors[train.task, train.label]))
            if agree < 1.0 / table.n_classes:
                skipped[m] = (f"label-switched: its labels agree with {agree:.3f} of the "
                              f"answers, less than chance 1/{table.n_classes}")
                continue
            scores[m].append(heldout_score(table, mask, res))
    mean = {m: float(np.mean(v)) for m, v in scores.items() if v and m not in skipped}
    if not mean:
        raise InputError("--method auto", "at least one method that runs on these labels",
                         "none")
    best = max(mean, key=lambda m: (mean[m], -list(candidates).index(m)))
    return AutoChoice(best, mean, holdout, int(masks[0].sum()), repeats, seed, skipped)
