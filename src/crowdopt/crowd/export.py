"""Long-form CSV exports of what an aggregation learned (one value per row, so that
`pandas.read_csv(path)` reads them in one line and `pivot` gives the matrix back):

    posteriors  task,label,probability                  n_tasks x n_classes rows
    confusion   worker,true_label,label,probability     n_workers x L x L rows
                (P(worker answers `label` | the true class is `true_label`); empty where
                undefined, e.g. a true class the worker never met in the gold)
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from ..files import write_file
from .aggregate import AggregationResult, _one_coin_confusion
from .tables import Gold, LabelTable

POSTERIOR_COLUMNS = ["task", "label", "probability"]
CONFUSION_COLUMNS = ["worker", "true_label", "label", "probability"]


def write_posteriors(path: str | Path, table: LabelTable, posteriors: np.ndarray, *,
                     force: bool = True) -> None:
    """task,label,probability for every task and class (probabilities to 10 digits); an
    existing file is replaced only with `force` (the CLI's --force)."""
    n_t, L = posteriors.shape
    tasks = np.repeat(np.asarray(table.task_ids.tolist(), dtype=object), L)
    labels = np.tile(np.asarray(table.classes.tolist(), dtype=object), n_t)
    _write(path, POSTERIOR_COLUMNS, zip(tasks.tolist(), labels.tolist(),
                                        _num(posteriors.ravel()), strict=True), force,
           "--posteriors")


def write_confusion(path: str | Path, table: LabelTable, confusion: np.ndarray, *,
                    force: bool = True) -> None:
    """worker,true_label,label,probability for every worker, true class and answer; an
    existing file is replaced only with `force` (the CLI's --force)."""
    n_w, L, _ = confusion.shape
    w = np.repeat(np.asarray(table.worker_ids.tolist(), dtype=object), L * L)
    cls = np.asarray(table.classes.tolist(), dtype=object)
    true = np.tile(np.repeat(cls, L), n_w)
    ans = np.tile(cls, n_w * L)
    _write(path, CONFUSION_COLUMNS, zip(w.tolist(), true.tolist(), ans.tolist(),
                                        _num(confusion.ravel()), strict=True), force,
           "--confusion")


def model_confusion(table: LabelTable, res: AggregationResult) -> tuple[np.ndarray, str]:
    """(confusion n_workers x L x L [true, answer], source) of a fitted method: the model's own
    (Dawid-Skene, one-coin, MACE: theta I + (1 - theta) xi, GLAD: one-coin at the worker's
    mean accuracy) or, for methods without a worker model, the posterior-weighted answer
    counts (the Dawid-Skene M-step, no smoothing)."""
    L = table.n_classes
    if res.confusion is not None:
        return res.confusion, "model"
    if res.method == "mace":
        th, xi = res.params["theta"], res.params["strategy"]
        return (th[:, None, None] * np.eye(L)[None] + (1 - th)[:, None, None] * xi[:, None, :],
                "model")
    if res.method == "glad":
        acc = np.nan_to_num(res.skills, nan=1.0 / L)
        return _one_coin_confusion(acc, L), "model (mean accuracy over the worker's tasks)"
    return confusion_from_posteriors(table, res.posteriors), "posterior-weighted counts"


def confusion_from_posteriors(table: LabelTable, posteriors: np.ndarray,
                              smoothing: float = 0.0) -> np.ndarray:
    """C[w,k,l] = (sum over w's answers l on tasks t of P[t,k] + s) / row total; rows with no
    mass are NaN when s = 0."""
    n_w, L = table.n_workers, table.n_classes
    idx = (table.worker * L)[:, None] * L + np.arange(L)[None, :] * L + table.label[:, None]
    counts = np.bincount(idx.ravel(), weights=posteriors[table.task].ravel(),
                         minlength=n_w * L * L).reshape(n_w, L, L) + smoothing
    tot = counts.sum(2, keepdims=True)
    return np.divide(counts, tot, out=np.full_like(counts, np.nan), where=tot > 0)


def gold_confusion(table: LabelTable, gold: Gold) -> np.ndarray:
    """Empirical confusion on the gold tasks: answers l of worker w on tasks of gold class k,
    over all its answers on such tasks (NaN rows where w met no task of class k)."""
    L = table.n_classes
    onehot = np.zeros((table.n_tasks, L))
    onehot[gold.task, gold.label] = 1.0
    return confusion_from_posteriors(table, onehot)


def _num(values: np.ndarray) -> list[str]:
    return ["" if not np.isfinite(v) else f"{v:.10g}" for v in values.tolist()]


def csv_text(header: list[str], rows) -> str:
    """A header and rows as CSV text (csv's quoting, \r\n line ends)."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def _write(path: str | Path, header: list[str], rows, force: bool, field: str) -> None:
    write_file(path, csv_text(header, rows), force=force, field=field)
