"""Worker reliability: from gold questions (Li & Liu, digest 004 Theorem 3) or from EM.

From gold: worker i answered n_i gold tasks, c_i of them correctly;
    w_i = c_i / n_i,   var_i = w_i (1 - w_i) / (n_i - 1)           (eq. 10, unbiased, n_i >= 2)
    G_i = (L w_i - 1)^2 - L^2 var_i                                 (eq. 25, unbiased for (L w - 1)^2)
G is the per-worker score the worker-selection fast path sorts on. From EM: the model's
accuracy (prior-weighted confusion diagonal for Dawid-Skene).

The export is a CSV `worker,n,correct,accuracy,variance,score,source` that the other
problems read back with `read_accuracies` as labeler accuracies (worker id -> accuracy).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..problems.worker_scores import score_unbiased
from ..validate import real, real_text
from .aggregate import (
    AggregationResult,
    break_ties,
    require_table,
    weighted_majority_vote,
    weights_from_accuracy,
)
from .tables import Gold, LabelTable, _read_rows

COLUMNS = ["worker", "n", "correct", "accuracy", "variance", "score", "source"]


@dataclass(frozen=True)
class WorkerReliability:
    """Per-worker reliability estimates, aligned with `worker_ids`.

    n: gold answers (or labels, for EM); correct: correct gold answers (-1 for EM);
    accuracy: NaN when n == 0; variance and score: NaN when n < 2 or not from gold.
    """

    worker_ids: np.ndarray
    n_classes: int
    n: np.ndarray
    correct: np.ndarray
    accuracy: np.ndarray
    variance: np.ndarray
    score: np.ndarray
    source: str

    def to_rows(self) -> list[dict]:
        """One dict per worker with the export columns (NaN -> None)."""
        def num(x: float) -> float | None:
            return None if not np.isfinite(x) else float(x)
        return [{"worker": wid, "n": int(n), "correct": int(c), "accuracy": num(a),
                 "variance": num(v), "score": num(s), "source": self.source}
                for wid, n, c, a, v, s in zip(self.worker_ids.tolist(), self.n, self.correct,
                                              self.accuracy, self.variance, self.score,
                                              strict=True)]

    def accuracies(self) -> dict:
        """worker id -> accuracy for workers with an estimate."""
        return {r["worker"]: r["accuracy"] for r in self.to_rows() if r["accuracy"] is not None}


def from_gold(table: LabelTable, gold: Gold, *, tasks: np.ndarray | None = None
              ) -> WorkerReliability:
    """Counts, accuracy, Theorem 3 variance and score G from the gold tasks (or the subset
    `tasks` of task indices, e.g. a control set separate from the evaluation tasks)."""
    require_table(table)
    if not isinstance(gold, Gold):
        raise InputError("gold", "a crowdopt Gold (gold_from_arrays, read_gold)",
                         type(gold).__name__)
    truth = gold.truth(table.n_tasks)
    if tasks is not None:
        keep = np.zeros(table.n_tasks, dtype=bool)
        keep[np.asarray(tasks, dtype=np.int64)] = True
        truth = np.where(keep, truth, -1)
    has = truth[table.task] >= 0
    right = has & (truth[table.task] == table.label)
    n = np.bincount(table.worker, weights=has, minlength=table.n_workers).astype(np.int64)
    c = np.bincount(table.worker, weights=right, minlength=table.n_workers).astype(np.int64)
    acc, var, score = gold_estimates(c, n, table.n_classes)
    return WorkerReliability(table.worker_ids, table.n_classes, n, c, acc, var, score, "gold")


def gold_estimates(correct: np.ndarray, n: np.ndarray, n_classes: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(w, var, G) of digest 004 eqs. 10 and 25 from correct counts c and gold counts n."""
    c = np.asarray(correct, dtype=float)
    nn = np.asarray(n, dtype=float)
    if np.any(c < 0) or np.any(c > nn):
        raise InputError("correct", "0 <= correct <= n", "a count outside that range")
    if n_classes < 2:
        raise InputError("n_classes", "at least 2", n_classes)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(nn > 0, c / nn, np.nan)
        var = np.where(nn > 1, acc * (1 - acc) / (nn - 1), np.nan)
    score = np.full(acc.shape, np.nan)
    ok = nn > 1
    score[ok] = score_unbiased(acc[ok], nn[ok], n_classes)  # the one Theorem 3 formula
    return acc, var, score


def from_em(table: LabelTable, result: AggregationResult) -> WorkerReliability:
    """The EM (or vote-agreement) skills of an aggregation result as a reliability table."""
    require_table(table)
    if not isinstance(result, AggregationResult):
        raise InputError("result", "an AggregationResult (of an aggregation method)",
                         type(result).__name__)
    n = table.labels_per_worker()
    skills = np.asarray(result.skills, dtype=float)
    if skills.shape != (table.n_workers,):
        raise InputError("result.skills", f"one value per worker ({table.n_workers})",
                         skills.shape)
    acc = np.where(n > 0, skills, np.nan)
    nan = np.full(table.n_workers, np.nan)
    return WorkerReliability(table.worker_ids, table.n_classes, n.astype(np.int64),
                             np.full(table.n_workers, -1, dtype=np.int64), acc, nan, nan.copy(),
                             result.method)


def write_reliability(rel: WorkerReliability, path: str | Path, *, force: bool = True) -> None:
    """Write the export CSV (`COLUMNS`; empty cells for unknown values) through the one safe
    writer; an existing file is replaced only with `force` (the CLI's --force)."""
    from ..files import write_file
    from .export import csv_text

    rows = [[("" if r[k] is None else r[k]) for k in COLUMNS] for r in rel.to_rows()]
    write_file(path, csv_text(list(COLUMNS), rows), force=force)


def read_accuracies(path: str | Path, *, worker_column: str = "worker",
                    accuracy_column: str = "accuracy") -> dict[str, float]:
    """worker id (text) -> accuracy in [0, 1] from an exported reliability table (or any CSV
    with those two columns); rows with an empty accuracy are skipped."""
    rows, head = _read_rows(path, sep=None, header=True, skip_rows=0, field="reliability")
    lower = [h.lower() for h in head]
    idx = {}
    for role, name in (("worker", worker_column), ("accuracy", accuracy_column)):
        if name.lower() not in lower:
            raise InputError(f"{Path(path).name}: column {name}", "a column of that name",
                             ",".join(head))
        idx[role] = lower.index(name.lower())
    out: dict[str, float] = {}
    for i, r in enumerate(rows):
        if len(r) <= max(idx.values()) or r[idx["accuracy"]] == "":
            continue
        field = f"{Path(path).name}: row {i + 2} accuracy"
        a = real_text(r[idx["accuracy"]], field)  # the number grammar ('1_0' is no number)
        if not 0.0 <= a <= 1.0:
            raise InputError(field, "a value in [0, 1]", a)
        out[r[idx["worker"]]] = a
    if not out:
        raise InputError(Path(path).name, "at least one worker accuracy", "none")
    return out


def accuracy_vector(table: LabelTable, accuracies: dict) -> np.ndarray:
    """Accuracies aligned with table.worker_ids (matched by text; NaN for unknown workers).
    `accuracies`: a dict or pandas Series worker -> finite number."""
    if not hasattr(accuracies, "items") or not callable(accuracies.items):
        raise InputError("weights / accuracies", "a dict or pandas Series worker -> number",
                         type(accuracies).__name__)
    by_text = {str(k): real(v, f"weights / accuracies[{k!r}]") for k, v in accuracies.items()}
    return np.array([by_text.get(str(w), np.nan) for w in table.worker_ids.tolist()])


def cross_fitted_weighted_vote(table: LabelTable, gold: Gold, *, scheme: str = "log-odds",
                               folds: int = 2, ties: str = "random", seed: int = 0,
                               clip: float = 0.01) -> AggregationResult:
    """Weighted majority vote whose worker accuracies come from gold of OTHER tasks.

    Gold tasks are split into `folds` random folds (seeded); each fold's tasks are voted with
    accuracies estimated on the remaining folds (digest 004 §1.4: weights must not come
    from the items being aggregated). Tasks without gold use accuracies from all gold.
    Workers without held-out gold answers get the mean accuracy (`weights_from_accuracy`).
    """
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise InputError("folds", "an integer >= 2", folds)
    if gold.n < folds:
        raise InputError("gold", f"at least {folds} gold tasks for {folds} folds", gold.n)
    rng = np.random.default_rng(seed)
    fold_of = np.full(table.n_tasks, -1)
    fold_of[gold.task] = rng.permutation(gold.n) % folds
    post = np.zeros((table.n_tasks, table.n_classes))
    scores = np.zeros_like(post)
    for f in range(-1, folds):
        control = gold.task[fold_of[gold.task] != f]
        acc = from_gold(table, gold, tasks=control).accuracy
        w = weights_from_accuracy(acc, table.n_classes, scheme, clip=clip)
        r = weighted_majority_vote(table, w, ties="first")
        sel = fold_of == f
        post[sel] = r.posteriors[sel]
        scores[sel] = table.vote_counts(w)[sel]
    labels = break_ties(scores, ties=ties, seed=seed)
    skills = from_gold(table, gold).accuracy
    return AggregationResult(f"wmv-{scheme}", labels, post, skills)
