"""Crowd label tables: (task, worker, label) rows encoded once as integer numpy arrays.

The long `task, worker, label` table (the crowd-kit convention) is the input of every
aggregation and reliability estimate. Ids are opaque (str, int, mixed); labels any hashable.
Readers cope with the real files' pitfalls: BOM, CRLF and bare-CR line endings, header name
variants (`question`/`id`/`q`, `answer`/`response`), headerless files, repeated
(worker, task) rows (policy `duplicates`), and gold tables repeated once per label row.

Encoding: task and worker ids are numbered in order of first appearance; classes are sorted
when they are mutually comparable (else first appearance); ids read from files stay strings.

The label rule, one for every route (files, `from_arrays`, `from_dataframe`, gold): a label is
a text or a number (a boolean, or any other kind of value, is refused). When every label of the
column is a number (a Python number, or a text that parses as a finite one after trimming),
labels compare as numbers: '1', ' 1', '1.0', '01', 1 and 1.0 are the one class 1 (integral
values become Python ints, so classes sort numerically). Otherwise every label compares as
text after trimming (' yes' is 'yes'; a number among texts becomes its text, 1 is '1'), and
two labels that spell the same number differently ('1' and '1.0' beside 'yes') are refused:
they are never two classes, nor silently one. A blank label, and a control character (NUL,
line breaks, ...), format character (bidi overrides, zero-width space, U+FEFF), line or
paragraph separator, lone surrogate or variation selector in a label or id, and a text not in
Unicode NFC, are refused (`validate.clean_text`). A number label follows the number grammar of
`validate` ('1_0' and 'nan' are text) and is within 2^53 in magnitude, neither overflowing nor
underflowing ('1e400' and '1e-400' alike are refused in a column of numbers). An id is a text,
an integer within 2^53, or another value that is not a number (a date): a boolean, 1.5 or 1.0
is no id. Every row is checked, not only the first of a group of equal values (1 and True are
equal in Python, and so are 1 and 1.0 and 1+0j).

Missing values are refused, the same way everywhere: a file cell that is empty or one of
MISSING_MARKERS (NA, N/A, NaN, None, null, any case) in a task, worker or label column, and a
None/NaN/pd.NA value given from Python, is a one-line InputError naming the first such row and
counting them (a missing label is never a class of its own, nor silently dropped).
"""

from __future__ import annotations

import decimal
import io
import math
import numbers
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..files import read_input
from ..validate import (
    INT_TEXT,
    MAX_INT,
    MAX_TEXT,
    Shown,
    as_list,
    clean_text,
    csv_rows,
    flag,
    separator,
    spells_number,
    text_number,
    text_ok,
)

DUPLICATE_POLICIES = ("error", "first", "last", "all")
MISSING_MARKERS = ("", "na", "n/a", "nan", "none", "null")  # cell texts (lower-cased) = missing

# Header aliases (lower-cased) for the three columns of a label table and the two of gold.
# `orig_id` comes first: in the Snow et al. / CrowdTruth files (rte, temp) `task` is a text
# column (the task type), not the item id.
TASK_ALIASES = ("orig_id", "task", "question", "item", "id", "q", "task_id", "taskid",
                "item_id", "itemid", "object")
WORKER_ALIASES = ("worker", "worker_id", "workerid", "!amt_worker_ids", "annotator",
                  "performer", "labeler", "user")
LABEL_ALIASES = ("label", "answer", "response", "workerlabel", "worker_label", "value")
GOLD_LABEL_ALIASES = ("label", "truth", "gold", "true_label", "goldlabel", "gold_label",
                      "answer", "value")


# ----------------------------------------------------------------------------- data objects
@dataclass(frozen=True)
class LabelTable:
    """Label rows as integer codes into the id vocabularies `task_ids`, `worker_ids`, `classes`.

    `task[r]`, `worker[r]`, `label[r]` describe row r. Vocabularies are kept by `subset`, so
    indices (and any `Gold` built on the table) stay valid; some tasks may then have no rows.
    """

    task_ids: np.ndarray
    worker_ids: np.ndarray
    classes: np.ndarray
    task: np.ndarray
    worker: np.ndarray
    label: np.ndarray

    @property
    def n_tasks(self) -> int:
        """Number of tasks."""
        return len(self.task_ids)

    @property
    def n_workers(self) -> int:
        """Number of workers."""
        return len(self.worker_ids)

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return len(self.classes)

    @property
    def n_labels(self) -> int:
        """Number of label rows."""
        return len(self.task)

    def __repr__(self) -> str:
        return (f"LabelTable(n_tasks={self.n_tasks}, n_workers={self.n_workers}, "
                f"n_classes={self.n_classes}, n_labels={self.n_labels})")

    # -- derived arrays -------------------------------------------------------------------
    def vote_counts(self, weights: np.ndarray | None = None) -> np.ndarray:
        """n_tasks x n_classes matrix of (optionally per-worker weighted) votes."""
        w = None if weights is None else np.asarray(weights, dtype=float)[self.worker]
        flat = np.bincount(self.task * self.n_classes + self.label, weights=w,
                           minlength=self.n_tasks * self.n_classes)
        return flat.reshape(self.n_tasks, self.n_classes)

    def labels_per_task(self) -> np.ndarray:
        """Label count of every task."""
        return np.bincount(self.task, minlength=self.n_tasks)

    def labels_per_worker(self) -> np.ndarray:
        """Label count of every worker."""
        return np.bincount(self.worker, minlength=self.n_workers)

    def duplicate_count(self) -> int:
        """Rows beyond the first for each (worker, task) pair."""
        if not _pairs_repeat(self.task, self.worker, self.n_workers):
            return 0
        key = self.task * self.n_workers + self.worker
        return int(self.n_labels - len(np.unique(key)))

    def dense(self) -> np.ndarray:
        """n_tasks x n_workers matrix of class indices, -1 where the worker gave no label."""
        if self.duplicate_count():
            raise InputError("labels", "at most one label per (worker, task) for a dense matrix",
                             f"{self.duplicate_count()} repeated rows")
        m = np.full((self.n_tasks, self.n_workers), -1, dtype=np.int64)
        m[self.task, self.worker] = self.label
        return m

    # -- lookups --------------------------------------------------------------------------
    def task_index(self, ids: Iterable[Hashable]) -> np.ndarray:
        """Task indices of external task ids (InputError on an unknown id)."""
        return _lookup(self.task_ids, ids, "task")

    def worker_index(self, ids: Iterable[Hashable]) -> np.ndarray:
        """Worker indices of external worker ids (InputError on an unknown id)."""
        return _lookup(self.worker_ids, ids, "worker")

    def class_index(self, values: Iterable[Hashable]) -> np.ndarray:
        """Class indices of label values (InputError on a value not among `classes`)."""
        return _lookup(self.classes, values, "label")

    # -- derived tables -------------------------------------------------------------------
    def subset(self, rows: np.ndarray | None = None, *, workers: Iterable[int] | None = None,
               tasks: Iterable[int] | None = None) -> LabelTable:
        """Rows selected by a boolean mask / index array and/or worker and task index sets.

        Vocabularies (task_ids, worker_ids, classes) are kept, so indices stay valid.
        """
        keep = np.ones(self.n_labels, dtype=bool)
        if rows is not None:
            r = np.asarray(rows)
            if r.dtype == bool:
                if r.shape != (self.n_labels,):
                    raise InputError("rows", f"a boolean mask of length {self.n_labels}",
                                     f"shape {r.shape}")
                keep &= r
            else:
                m = np.zeros(self.n_labels, dtype=bool)
                m[_index_array(r, self.n_labels, "rows")] = True
                keep &= m
        if workers is not None:
            sel = np.zeros(self.n_workers, dtype=bool)
            sel[_index_array(workers, self.n_workers, "workers")] = True
            keep &= sel[self.worker]
        if tasks is not None:
            sel = np.zeros(self.n_tasks, dtype=bool)
            sel[_index_array(tasks, self.n_tasks, "tasks")] = True
            keep &= sel[self.task]
        return LabelTable(self.task_ids, self.worker_ids, self.classes,
                          self.task[keep], self.worker[keep], self.label[keep])

    def rows(self) -> list[tuple[Any, Any, Any]]:
        """The table as (task id, worker id, label value) tuples (for export / debugging)."""
        return list(zip(self.task_ids[self.task].tolist(), self.worker_ids[self.worker].tolist(),
                        self.classes[self.label].tolist(), strict=True))

    def to_dataframe(self):
        """pandas DataFrame with columns task, worker, label (pandas is optional)."""
        pd = _pandas()
        return pd.DataFrame({"task": self.task_ids[self.task], "worker":
                             self.worker_ids[self.worker], "label": self.classes[self.label]})


@dataclass(frozen=True)
class Gold:
    """Gold labels: `task` indices (into table.task_ids) and `label` class indices."""

    task: np.ndarray
    label: np.ndarray

    @property
    def n(self) -> int:
        """Number of gold tasks."""
        return len(self.task)

    def truth(self, n_tasks: int) -> np.ndarray:
        """Length-n_tasks array of gold class indices, -1 where a task has no gold."""
        t = np.full(n_tasks, -1, dtype=np.int64)
        t[self.task] = self.label
        return t

    def subset(self, tasks: Iterable[int]) -> Gold:
        """Gold restricted to the given task indices."""
        sel = np.isin(self.task, np.fromiter(tasks, dtype=np.int64))
        return Gold(self.task[sel], self.label[sel])


# ----------------------------------------------------------------------------- constructors
def from_arrays(tasks: Sequence[Hashable], workers: Sequence[Hashable],
                labels: Sequence[Hashable], *, classes: Sequence[Hashable] | None = None,
                duplicates: str = "error") -> LabelTable:
    """LabelTable from three equal-length sequences of ids and label values.

    `classes` fixes the class vocabulary and order (e.g. to include a class nobody chose);
    by default the distinct labels, sorted when comparable. `duplicates`: what to do with
    repeated (worker, task) rows: 'error' (default, message with the count), 'first', 'last'
    (keep that row), 'all' (keep every row; aggregators then count each).
    """
    if duplicates not in DUPLICATE_POLICIES:
        raise InputError("duplicates", f"one of {list(DUPLICATE_POLICIES)}", duplicates)
    tasks, workers, labels = (_plain_list(x, name) for x, name in
                              ((tasks, "tasks"), (workers, "workers"), (labels, "labels")))
    if not (len(tasks) == len(workers) == len(labels)):
        raise InputError("labels", "task, worker and label sequences of equal length",
                         f"lengths {len(tasks)}, {len(workers)}, {len(labels)}")
    if not tasks:
        raise InputError("labels", "at least one (task, worker, label) row", "no rows")
    return _table(tasks, workers, labels, classes, duplicates)


def _table(tasks: list, workers: list, labels: list, classes: Sequence[Hashable] | None,
           duplicates: str, *, numbers: bool = True, where: str = "") -> LabelTable:
    """`from_arrays` on plain lists; `numbers`: the number reading of the label rule applies
    (off: labels compare as text); `where`: the source named in messages (a file name)."""
    for name, seq in (("task", tasks), ("worker", workers), ("label", labels)):
        _check_values(seq, name)
    t_ids, t = _encode(tasks)
    w_ids, w = _encode(workers)
    _check_ids(t_ids, t, where + "task")
    _check_ids(w_ids, w, where + "worker")
    raw, lab = _encode(labels)
    if classes is None:
        c_vals, lab = _merge(lab, label_classes(raw.tolist(), lab, where + "label",
                                                numbers=numbers))
        order = _sort_order(c_vals)
        if order is not None:
            inv = np.empty_like(order)
            inv[order] = np.arange(len(order))
            c_vals, lab = c_vals[order], inv[lab]
    else:
        given = _plain_list(classes, "classes")
        if len(given) == 0:
            raise InputError("classes", "at least one class", "[]")
        canon = label_classes(raw.tolist() + given, lab, where + "label",
                              numbers=numbers)
        c_vals = _object_array(canon[len(raw):])
        if len(set(c_vals.tolist())) < len(c_vals):
            raise InputError("classes", "distinct classes (by the label rule: '1' and 1.0 are "
                             "one class)", given)
        lab = _lookup(c_vals, canon[: len(raw)], "label")[lab]
    keep = _dedupe(t, w, len(w_ids), duplicates, t_ids, w_ids)
    if keep is not None:
        t, w, lab = t[keep], w[keep], lab[keep]
    return LabelTable(t_ids, w_ids, c_vals, t, w, lab)


def from_dataframe(df, *, columns: Mapping[str, str] | None = None,
                   duplicates: str = "error") -> LabelTable:
    """LabelTable from a pandas DataFrame with columns task, worker, label (or `columns`).

    Same encoding as `from_arrays` (ids by first appearance, classes sorted when comparable);
    a pandas DataFrame is encoded column by column in compiled code (`_factorize`: pyarrow,
    pandas.factorize or counting), any other object with `columns` and column `tolist()`
    through `from_arrays`."""
    if not hasattr(df, "columns"):
        raise InputError("df", "a pandas DataFrame", type(df).__name__)
    if duplicates not in DUPLICATE_POLICIES:
        raise InputError("duplicates", f"one of {list(DUPLICATE_POLICIES)}", duplicates)
    cols = {"task": "task", "worker": "worker", "label": "label", **(columns or {})}
    names = list(df.columns)
    for role, name in cols.items():
        if name not in names:
            raise InputError(f"columns.{role}", f"a DataFrame column {name!r}",
                             list(map(str, names)))
        if names.count(name) > 1:  # df[name] would be a DataFrame, not a column
            raise InputError(f"columns.{role}", f"one DataFrame column named {name!r}",
                             f"{names.count(name)} columns named {name!r}")
    if not hasattr(df, "iloc"):  # a DataFrame-like object without pandas
        return from_arrays(df[cols["task"]].tolist(), df[cols["worker"]].tolist(),
                           df[cols["label"]].tolist(), duplicates=duplicates)
    if len(df) == 0:
        raise InputError("labels", "at least one (task, worker, label) row", "no rows")
    pd = _pandas()
    for role in ("task", "worker", "label"):
        _check_kinds(df[cols[role]], role, pd)
    (t, t_ids), (w, w_ids) = (_factorize(df[cols[r]], r, pd) for r in ("task", "worker"))
    _check_ids(t_ids, t, "task")
    _check_ids(w_ids, w, "worker")
    lab, raw = _factorize(df[cols["label"]], "label", pd, classes=True)
    c_vals, lab = _merge(lab, label_classes(raw.tolist(), lab, "label"))
    order = _sort_order(c_vals)
    if order is not None and np.any(order[1:] < order[:-1]):
        inv = np.empty_like(order)
        inv[order] = np.arange(len(order))
        c_vals, lab = c_vals[order], inv[lab]
    keep = _dedupe(t, w, len(w_ids), duplicates, t_ids, w_ids)
    if keep is not None:
        t, w, lab = t[keep], w[keep], lab[keep]
    return LabelTable(t_ids, w_ids, c_vals, t, w, lab)


def to_dataframe(table: LabelTable):
    """pandas DataFrame with columns task, worker, label (the inverse of `from_dataframe`)."""
    if not isinstance(table, LabelTable):
        raise InputError("table", "a crowdopt LabelTable", type(table).__name__)
    return table.to_dataframe()


def gold_from_arrays(table: LabelTable, tasks: Sequence[Hashable],
                     labels: Sequence[Hashable], *, unknown_tasks: str = "error") -> Gold:
    """Gold from task ids and label values, matched to `table` (ids compared as given).

    A gold label that is not one of the table's classes is an InputError; a gold task the
    table does not have is an InputError unless `unknown_tasks='drop'`. Repeated gold rows
    must agree.
    """
    tasks, labels = _plain_list(tasks, "tasks"), _plain_list(labels, "labels")
    if len(tasks) != len(labels):
        raise InputError("gold", "task and label sequences of equal length",
                         f"lengths {len(tasks)}, {len(labels)}")
    _check_values(labels, "gold label")
    return _make_gold(table, tasks, gold_classes(table, labels, "gold label"), unknown_tasks,
                      by_str=False)


# ----------------------------------------------------------------------------- file readers
def read_labels(path: str | Path, *, columns: Mapping[str, str | int] | None = None,
                sep: str | None = None, duplicates: str = "error", header: bool = True,
                skip_rows: int = 0, int_labels: bool = True) -> LabelTable:
    """Read a label table (CSV/TSV/whitespace) into a LabelTable.

    `columns` maps role -> header name (or 0-based position), roles task, worker, label; by
    default the header is matched against common aliases (`question`, `id`, `answer`, ...),
    and a headerless file is read as task, worker, label in that order. `sep` None sniffs
    tab, comma, else whitespace; `skip_rows` skips leading lines (e.g. a count line).
    Labels follow the label rule (module docstring): numbers when every cell is one, else
    trimmed text; `int_labels=False` keeps them text even when all are numbers.
    """
    if duplicates not in DUPLICATE_POLICIES:
        raise InputError("duplicates", f"one of {list(DUPLICATE_POLICIES)}", duplicates)
    header, int_labels = flag(header, "header"), flag(int_labels, "int_labels")
    rows, head = _read_rows(path, sep=sep, header=header, skip_rows=skip_rows, field="labels")
    idx = _resolve_columns(head, columns, {"task": TASK_ALIASES, "worker": WORKER_ALIASES,
                                           "label": LABEL_ALIASES}, path)
    cols = _columns(rows, idx, path, header + skip_rows)
    _refuse_missing(cols, path, header + skip_rows)
    return _table(cols["task"], cols["worker"], cols["label"], None, duplicates,
                  numbers=bool(int_labels), where=f"{Path(path).name}: ")


def read_gold(path: str | Path, table: LabelTable, *,
              columns: Mapping[str, str | int] | None = None, sep: str | None = None,
              header: bool = True, skip_rows: int = 0, unknown_tasks: str = "error") -> Gold:
    """Read a gold table (task, label) matched to `table`.

    Task ids and label values are matched by their text (so a table built from ints matches
    a gold file). A gold label that is not among the table's classes, or a gold task the
    table lacks (unless `unknown_tasks='drop'`), is an InputError; repeated rows must agree
    (files that repeat gold on every label row are fine).
    """
    header = flag(header, "header")
    rows, head = _read_rows(path, sep=sep, header=header, skip_rows=skip_rows, field="gold")
    idx = _resolve_columns(head, columns, {"task": TASK_ALIASES, "label": GOLD_LABEL_ALIASES},
                           path)
    cols = _columns(rows, idx, path, header + skip_rows)
    _refuse_missing(cols, path, header + skip_rows)
    labels = gold_classes(table, cols["label"], f"{Path(path).name}: label")
    return _make_gold(table, cols["task"], labels, unknown_tasks, by_str=True,
                      source=Path(path).name)


# ----------------------------------------------------------------------------- internals
def _pandas():
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise InputError("pandas", "pandas installed (pip install crowdopt[pandas])",
                         "not installed") from exc
    return pd


def _plain_list(x: Any, field: str) -> list:
    """A Python list of Python scalars from a list, tuple, numpy array or pandas Series/Index
    (numpy scalars become Python ones, so classes and ids print and compare as given)."""
    x = as_list(x)
    if isinstance(x, str | bytes | Mapping) or not isinstance(x, Iterable):
        raise InputError(field, "a sequence of values (list, numpy array, pandas Series)",
                         type(x).__name__)
    return list(x)


def _object_array(values: list) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


def _object_values(values) -> np.ndarray:
    """Object array of Python scalars from a pandas Index / array (np.int64 -> int, arrow
    strings -> str) without a Python-level loop over Arrow elements."""
    arr = np.asarray(values.to_numpy(dtype=object) if hasattr(values, "to_numpy") else values,
                     dtype=object)
    if arr.size and isinstance(arr[0], np.generic):
        arr = _object_array(arr.tolist())
    return arr


def _factorize(col, role: str, pd, *, classes: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """int64 codes (ids numbered by first appearance) and the object array of distinct values
    of one DataFrame column, in compiled code; a missing value is a one-line InputError.

    Arrow-backed strings (pandas 3's default `str` with pyarrow) are encoded by pyarrow's
    dictionary_encode, ~3x faster than hashing the same values as Python objects; Python
    strings as a plain object array (~2.5x faster than pandas' StringArray). `classes`: an
    integer label column is encoded by counting (its classes come out sorted, as they end up).
    """
    dt = col.dtype
    if classes and isinstance(dt, np.dtype) and (dt.kind == "i" or dt.kind == "u" and
                                                  dt.itemsize < 8):
        v = col.to_numpy().astype(np.int64, copy=False)
        lo, hi = int(v.min()), int(v.max())
        if hi - lo < max(1024, 4 * len(v)):  # a bincount over the range costs ~ one pass
            v = v - lo if lo else v
            present = np.bincount(v, minlength=hi - lo + 1) > 0
            code_of = np.cumsum(present) - 1
            return code_of[v], _object_array((np.flatnonzero(present) + lo).tolist())
    if isinstance(dt, pd.StringDtype) and dt.storage == "pyarrow" or \
            getattr(dt, "pyarrow_dtype", None) is not None:
        import pyarrow as pa
        arr = col.array.__arrow_array__()
        kind = arr.type  # strings and integers; other Arrow types go through pandas below
        if arr.null_count == 0 and (pa.types.is_string(kind) or pa.types.is_large_string(kind)
                                    or pa.types.is_integer(kind)):
            if getattr(arr, "num_chunks", 1) != 1:
                arr = arr.combine_chunks()
            enc = arr.dictionary_encode()
            enc = enc.chunk(0) if hasattr(enc, "chunk") else enc
            return (enc.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False),
                    enc.dictionary.to_numpy(zero_copy_only=False).astype(object, copy=False))
    elif isinstance(dt, np.dtype) and dt.kind == "O" or (
            isinstance(dt, pd.StringDtype) and dt.storage == "python"):
        col = col.to_numpy(dtype=object)
    code, uniq = pd.factorize(col, sort=False)
    if np.any(code < 0):
        i = int(np.flatnonzero(code < 0)[0])
        raise InputError(f"{role}[{i}]", f"a {role} value", "a missing value (NaN/None)")
    kind = getattr(getattr(uniq, "dtype", None), "kind", "")
    if kind == "f" or kind == "O" and classes:  # an infinite id or class JSON cannot write
        inf = np.array([isinstance(u, float | np.floating) and math.isinf(u) for u in uniq]
                       if kind == "O" else np.isinf(uniq), dtype=bool)
        if inf.any():
            i = int(np.flatnonzero(inf[code])[0])
            raise InputError(f"{role}[{i}]", "a finite number", float(uniq[code[i]]))
    return code.astype(np.int64, copy=False), _object_values(uniq)


def _pairs_repeat(t: np.ndarray, w: np.ndarray, n_workers: int) -> bool:
    """Whether any (task, worker) pair occurs twice: one sort of the pair keys (25x faster
    than np.unique). Label files list rows grouped by task or by worker, so the keys come in
    long sorted runs, which numpy's stable sort (timsort) merges 1.2-7.4x faster than its
    default sort on 26 of the 27 shared sets (trec2010_relevance: 1.0 vs 3.6 ms;
    bench_aggregation Table 5). Rows in no such order (both columns descend at over a
    quarter of the rows, as in a shuffled table) take the default sort."""
    n = len(t)
    shuffled = min(np.count_nonzero(t[1:] < t[:-1]), np.count_nonzero(w[1:] < w[:-1])) * 4 > n
    key = np.sort(t * n_workers + w, kind=None if shuffled else "stable")
    return bool(np.any(key[1:] == key[:-1]))


_MISSING = ("NAType", "NaTType")  # pandas' pd.NA and pd.NaT, without importing pandas


def _is_nan(v) -> bool:
    """A scalar unequal to itself: float, numpy float and NaT, Decimal NaN."""
    try:
        ne = v != v
    except Exception:  # noqa: BLE001 - a value that cannot compare is not NaN
        return False
    return isinstance(ne, bool | np.bool_) and bool(ne)


ID_KINDS = "a text or integer id (not a boolean, and not a float such as 1.0 or 1.5)"


def _not_an_id(v: Any) -> bool:
    """A value the id rule refuses by its kind: a boolean, or a number that is not an integer
    (1.0, 1.5, Decimal, complex; True would be the id 1 and 1.0 the id 1 in Python)."""
    return isinstance(v, bool | np.bool_) or (isinstance(v, numbers.Number | decimal.Decimal)
                                              and not isinstance(v, numbers.Integral))


def _check_values(seq: list, name: str) -> None:
    """Every value of a column (not only the first of each group of equal ones): not missing,
    finite, hashable, and of a kind the id rule (`task`, `worker`) or label rule allows."""
    if set(map(type, seq)) <= {str, int}:  # the common case (file columns): nothing to check
        return
    ids = name in ("task", "worker")
    for i, v in enumerate(seq):
        if v is None or type(v).__name__ in _MISSING or _is_nan(v):
            raise InputError(f"{name}[{i}]", f"a {name} value", v)
        if isinstance(v, float | np.floating) and math.isinf(v):  # a class JSON cannot write
            raise InputError(f"{name}[{i}]", "a finite number", v)
        if not isinstance(v, Hashable):
            raise InputError(f"{name}[{i}]", "a hashable value", type(v).__name__)
        if ids and _not_an_id(v):
            raise InputError(f"{name}[{i}]", ID_KINDS, v)
        if not ids and not (isinstance(v, str) or _is_label_number(v)):
            raise InputError(f"{name}[{i}]", "a text or a number label", v)


def _check_kinds(col, role: str, pd) -> None:
    """`_check_values` on a DataFrame column of Python objects (a typed column holds one kind
    of value, which the check of its distinct values covers); pandas' compiled scan first,
    so an object column of texts or of integers alone costs no Python loop."""
    if isinstance(col.dtype, np.dtype) and col.dtype.kind == "O" and \
            pd.api.types.infer_dtype(col, skipna=False) not in ("string", "integer", "empty"):
        _check_values(col.to_numpy(dtype=object).tolist(), role)


def _encode(values: list) -> tuple[np.ndarray, np.ndarray]:
    """Ids in order of first appearance and the int64 code of each value."""
    index: dict = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64,
                        count=len(values))
    return _object_array(list(index)), codes


def _sort_order(values: np.ndarray) -> np.ndarray | None:
    try:
        return np.array(sorted(range(len(values)), key=lambda i: values[i]), dtype=np.int64)
    except TypeError:
        return None


def _lookup(vocab: np.ndarray, values: Iterable[Hashable], field: str) -> np.ndarray:
    pos = {v: i for i, v in enumerate(vocab.tolist())}
    out = []
    for v in values:
        try:
            out.append(pos[v])
        except (KeyError, TypeError):
            raise InputError(field, f"a known {field} ({len(pos)} known)", v) from None
    return np.asarray(out, dtype=np.int64)


def _index_array(x: Iterable[int], n: int, field: str) -> np.ndarray:
    arr = np.asarray(list(x) if not isinstance(x, np.ndarray) else x)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        raise InputError(field, "integer indices", arr.dtype)
    if arr.min() < 0 or arr.max() >= n:
        raise InputError(field, f"indices in [0, {n})", f"range [{arr.min()}, {arr.max()}]")
    return arr.astype(np.int64)


def _dedupe(t: np.ndarray, w: np.ndarray, n_workers: int, policy: str, t_ids: np.ndarray,
            w_ids: np.ndarray) -> np.ndarray | None:
    """Row indices to keep under the duplicates policy (None = keep all)."""
    if policy == "all":
        return None
    if not _pairs_repeat(t, w, n_workers):  # the common case: one sort, no np.unique
        return None
    key = t * n_workers + w
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    n_extra = len(key) - len(first)
    if policy == "error":
        r = int(np.flatnonzero(counts > 1)[0])
        ex = int(first[r])
        raise InputError("labels", "at most one label per (worker, task)",
                         f"{n_extra} repeated rows, e.g. worker {w_ids[w[ex]]!r} task "
                         f"{t_ids[t[ex]]!r}",
                         note="set the duplicates option to 'first', 'last' or 'all'")
    if policy == "first":
        return np.sort(first)
    _, last_rev = np.unique(key[::-1], return_index=True)
    return np.sort(len(key) - 1 - last_rev)


def _make_gold(table: LabelTable, tasks: list, labels: list, unknown_tasks: str, *,
               by_str: bool, source: str = "gold") -> Gold:
    if unknown_tasks not in ("error", "drop"):
        raise InputError("unknown_tasks", "'error' or 'drop'", unknown_tasks)
    if not tasks:
        raise InputError(source, "at least one gold row", "no rows")
    key = str if by_str else (lambda v: v)
    t_pos = {key(v): i for i, v in enumerate(table.task_ids.tolist())}
    c_pos = {key(v): i for i, v in enumerate(table.classes.tolist())}
    if len(t_pos) < table.n_tasks or len(c_pos) < table.n_classes:
        raise InputError(f"{source}: ids", "task ids and labels whose text forms differ",
                         "two ids with the same text (e.g. 1 and '1')",
                         note="build gold with gold_from_arrays")
    seen: dict[int, int] = {}
    for tv, lv in zip(tasks, labels, strict=True):
        ti = t_pos.get(key(tv))
        if ti is None:
            if unknown_tasks == "drop":
                continue
            raise InputError(f"{source}: task", "a task that appears in the label table", tv,
                             note="use unknown_tasks='drop' to ignore such rows")
        ci = c_pos.get(key(lv))
        if ci is None:
            raise InputError(f"{source}: label", f"one of the label classes "
                             f"{table.classes.tolist()[:10]}", lv)
        prev = seen.setdefault(ti, ci)
        if prev != ci:
            raise InputError(f"{source}: task {tv!r}", "one gold label per task",
                             f"{table.classes[prev]!r} and {lv!r}")
    if not seen:
        raise InputError(source, "at least one gold task present in the label table",
                         "none matched")
    order = sorted(seen)
    return Gold(np.asarray(order, dtype=np.int64),
                np.asarray([seen[i] for i in order], dtype=np.int64))


def _read_text(path: str | Path, field: str) -> str:
    raw = read_input(path, field)  # missing, a folder, a device, unreadable: one line
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _sniff_sep(line: str) -> str | None:
    if "\t" in line:
        return "\t"
    if "," in line:
        return ","
    if ";" in line:
        return ";"
    return None  # whitespace


def _read_rows(path: str | Path, *, sep: str | None, header: bool, skip_rows: int,
               field: str) -> tuple[list[list[str]], list[str] | None]:
    """Non-empty rows of a delimited file (any line ending, BOM stripped) and its header."""
    sep = separator(sep)
    text = _read_text(path, field)
    lines_probe = [ln for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
                   if ln.strip()]
    if len(lines_probe) <= skip_rows:
        raise InputError(f"{field} file {Path(path).name}", "at least one row", "an empty file")
    if sep is None:
        sep = _sniff_sep(lines_probe[skip_rows])
    if sep is None or sep in ("whitespace", " "):
        rows = [ln.split() for ln in lines_probe]
    else:
        rows = [r for r in csv_rows(io.StringIO(text, newline=""), f"{field} file "
                                    f"{Path(path).name}", delimiter=sep)
                if any(c.strip() for c in r)]
    rows = rows[skip_rows:]
    head = None
    if header:
        head, rows = [c.strip() for c in rows[0]], rows[1:]
    elif rows and _looks_like_header(rows[0]):
        raise InputError(f"{field} file {Path(path).name}", "no header row (--no-header)",
                         f"a first row of column names {[c.strip() for c in rows[0]]}",
                         note="drop --no-header")
    if not rows:
        raise InputError(f"{field} file {Path(path).name}", "at least one data row",
                         "only a header" if header else "no rows")
    return rows, head


def _looks_like_header(row: list[str]) -> bool:
    """A first row whose cells are known column names (task/worker/label aliases): a header,
    never data, so --no-header on such a file is refused rather than read as a label row."""
    known = set(TASK_ALIASES) | set(WORKER_ALIASES) | set(LABEL_ALIASES) | set(GOLD_LABEL_ALIASES)
    cells = [c.strip().lower() for c in row if c.strip()]
    return len(cells) >= 2 and sum(c in known for c in cells) >= 2


def _resolve_columns(head: list[str] | None, columns: Mapping[str, str | int] | None,
                     aliases: dict[str, tuple[str, ...]], path: str | Path) -> dict[str, int]:
    """Column position of each role, from `columns`, header aliases or the default order."""
    columns = dict(columns or {})
    for role in columns:
        if role not in aliases:
            raise InputError("columns", f"keys among {list(aliases)}", role)
    out: dict[str, int] = {}
    lower = [h.lower() for h in head] if head is not None else None
    for pos, role in enumerate(aliases):
        spec = columns.get(role)
        if isinstance(spec, int) and not isinstance(spec, bool):
            out[role] = spec
        elif isinstance(spec, str):
            if lower is None:
                raise InputError(f"columns.{role}", "a column position (file has no header)",
                                 spec)
            if spec.lower() not in lower:
                raise InputError(f"columns.{role}", f"a column of {Path(path).name}",
                                 spec, note=f"header is {head}")
            out[role] = lower.index(spec.lower())
        elif spec is not None:
            raise InputError(f"columns.{role}", "a column name or position", spec)
        elif lower is None:
            out[role] = pos
        else:
            hit = next((lower.index(a) for a in aliases[role] if a in lower), None)
            if hit is None:
                raise InputError(f"{Path(path).name}: column {role}",
                                 f"a header naming it ({', '.join(aliases[role][:4])}, ...)",
                                 ",".join(head), note="pass columns={...}")
            out[role] = hit
    return out


def _columns(rows: list[list[str]], idx: dict[str, int], path: str | Path,
             offset: int) -> dict[str, list[str]]:
    need = max(idx.values()) + 1
    for i, r in enumerate(rows):
        if len(r) < need:
            raise InputError(f"{Path(path).name}: line {i + 1 + offset}",
                             f"at least {need} fields", len(r))
    return {role: [r[j].strip() for r in rows] for role, j in idx.items()}


def _refuse_missing(cols: dict[str, list[str]], path: str | Path, offset: int) -> None:
    """The missing-value rule of label and gold files (module docstring): refuse, by row."""
    for role, values in cols.items():
        bad = [i for i, v in enumerate(values) if v.lower() in MISSING_MARKERS]
        if bad:
            raise InputError(f"{Path(path).name}: row {bad[0] + 1 + offset}", f"a {role} value",
                             values[bad[0]], note=f"{len(bad)} row(s) with a missing {role} "
                             "(empty, NA, N/A, NaN, None, null); remove them")


def _label_number(text: str) -> int | float | None:
    """The number a label text spells by the number grammar (`validate.text_number`),
    integral values as int; None if it spells none, or one outside the label range
    (`_out_of_range` tells the two apart)."""
    v = text_number(text)
    if v is None:
        return None
    if not v.is_integer():
        return v
    t = text.strip()
    if INT_TEXT.fullmatch(t):  # '9007199254740993' is read exactly, then held to 2^53
        exact = int(t) if len(t) <= MAX_TEXT else MAX_INT + 1
    else:
        exact = int(v) if abs(v) <= MAX_INT else MAX_INT + 1
    return exact if abs(exact) <= MAX_INT else None


def _is_label_number(v: Any) -> bool:
    """A number a label may be: int, float, Decimal, Fraction (not a boolean, not complex)."""
    return isinstance(v, numbers.Real | decimal.Decimal) and not isinstance(v, bool)


def _as_number(v: Any) -> int | float | None:
    """The number a label value is (a Python or numpy number, or a text spelling one), None
    for a text that is not a number."""
    if isinstance(v, str):
        return _label_number(v)
    if isinstance(v, float) and v.is_integer() and abs(v) <= 2**53:
        return int(v)
    return v


def _out_of_range(text: str) -> bool:
    """A text that spells a number outside the label range: one that overflows or underflows
    a float ('1e400', '1e-400'), an integral value beyond 2^53, or a non-finite one ('inf',
    'nan')."""
    if spells_number(text):
        return _label_number(text) is None
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return False


def _first_row(codes: np.ndarray, k: int) -> int:
    hit = np.flatnonzero(codes == k)
    return int(hit[0]) if len(hit) else k


def label_classes(values: list, codes: np.ndarray, field: str = "label", *,
                  numbers: bool = True) -> list:
    """The class of each distinct label value by the label rule (module docstring): numbers
    when every value is one (and `numbers`), else trimmed texts; `codes` (each row's index
    into `values`) lets a message name the first row with a refused value."""
    texts: list = []
    for k, v in enumerate(values):
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, str):
            t = v.strip()
            if not t:
                raise InputError(f"{field}[{_first_row(codes, k)}]", "a label (not blank)", v)
            if not text_ok(t):
                clean_text(t, f"{field}[{_first_row(codes, k)}]", "a label")
            texts.append(t)
        elif _is_label_number(v):
            if abs(v) > MAX_INT:
                raise InputError(f"{field}[{_first_row(codes, k)}]", "a number label of "
                                 "magnitude <= 2^53", v)
            texts.append(v)
        else:
            raise InputError(f"{field}[{_first_row(codes, k)}]", "a text or a number label", v)
    nums = [_as_number(v) for v in texts]
    if numbers and all(n is not None for n in nums):
        return nums
    rest = [v for v, n in zip(texts, nums, strict=True) if n is None]
    if numbers and len(rest) < len(texts) and all(_out_of_range(v) for v in rest):
        raise InputError(field, "a number within the float range and of magnitude <= 2^53 "
                         "(the other labels are numbers)", rest[0])
    out = [v if isinstance(v, str) else repr(v) if isinstance(v, float) else str(v)
           for v in texts]
    spelled: dict = {}
    for v in out:
        n = _label_number(v)
        if n is not None and spelled.setdefault(n, v) != v:
            raise InputError(field, "one spelling per number in a label column that is not all "
                             "numbers", Shown(f"{spelled[n]!r} and {v!r}"),
                             note="write one form, or make every label a number")
    return out


def gold_classes(table: LabelTable, labels: list, field: str) -> list:
    """Gold label values read by the table's label rule: numbers where the table's classes are
    numbers ('1.0' is the class 1), else trimmed texts (1 is '1')."""
    numeric = table.n_classes > 0 and all(_is_label_number(c) for c in table.classes.tolist())
    out = []
    for i, v in enumerate(labels):
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, str):
            t = clean_text(v.strip(), f"{field}[{i}]", "a label")
            n = _label_number(t)
            out.append(n if numeric and n is not None else t)
        elif _is_label_number(v):
            out.append(_as_number(v) if numeric else repr(v) if isinstance(v, float) else str(v))
        else:
            raise InputError(f"{field}[{i}]", "a text or a number label", v)
    return out


def _merge(codes: np.ndarray, canon: list) -> tuple[np.ndarray, np.ndarray]:
    """Vocabulary and codes after distinct raw values that are one class merge."""
    index: dict = {}
    new = np.fromiter((index.setdefault(c, len(index)) for c in canon), dtype=np.int64,
                      count=len(canon))
    return _object_array(list(index)), (new[codes] if len(index) < len(canon) else codes)


def _check_ids(vocab: np.ndarray, codes: np.ndarray, field: str) -> None:
    """The id rule on the distinct ids of a column: a text id is not blank and holds no control
    character or bidi override; an integer id is within 2^53; a boolean is no id."""
    for k, v in enumerate(vocab.tolist()):
        if isinstance(v, str):
            if not v.strip():
                raise InputError(f"{field}[{_first_row(codes, k)}]", "a non-blank id", v)
            if not text_ok(v):
                clean_text(v, f"{field}[{_first_row(codes, k)}]", "an id")
        elif _not_an_id(v):
            raise InputError(f"{field}[{_first_row(codes, k)}]", ID_KINDS, v)
        elif isinstance(v, int) and abs(v) > MAX_INT:
            raise InputError(f"{field}[{_first_row(codes, k)}]",
                             "an integer id of magnitude <= 2^53", v)
