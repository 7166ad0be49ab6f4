"""Campaign inputs: items, workers, pairs and answers (CSV files, data-set names or Python
values), class labels and policy parameters, validated with one-line `InputError`s."""

from __future__ import annotations

import io
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..crowd.tables import TASK_ALIASES, WORKER_ALIASES
from ..errors import InputError
from ..policies.allocation import HETEROGENEOUS, HOMOGENEOUS, parse_policy
from ..policies.lsol import ESTIMATORS
from ..validate import MAX_INT, csv_rows, id_text, integer, real_text, stdin_text

ITEM_ALIASES = ("item", *[a for a in TASK_ALIASES if a != "item"])
LABEL_ALIASES = ("label", "answer", "response", "value")


# ----------------------------------------------------------------------------- CSV
def read_csv(source: str | os.PathLike, field: str) -> tuple[list[str], list[list[str]], str]:
    """Header (lower-cased) and rows of a CSV/TSV file ('-' = stdin); BOM and CRLF handled."""
    name = "stdin" if str(source) == "-" else Path(source).name
    if str(source) == "-":
        text = stdin_text(field)
    else:
        p = Path(source)
        if not p.is_file():
            raise InputError(field, "an existing CSV file", str(source))
        raw = p.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InputError(field, "a UTF-8 text file", name) from None
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise InputError(f"{field} {name}", "a header line and rows", "an empty file")
    sep = "\t" if "\t" in lines[0] else ","
    rows = csv_rows(io.StringIO("\n".join(lines)), f"{field} {name}", delimiter=sep)
    head = [h.strip().lower() for h in rows[0]]
    return head, [[c.strip() for c in r] for r in rows[1:]], name


def _column(head: list[str], aliases: Sequence[str], field: str, name: str,
            required: bool = True) -> int | None:
    for a in aliases:
        if a in head:
            return head.index(a)
    if required:
        raise InputError(f"{name}: column {field}", f"a header naming it ({', '.join(aliases[:3])})",
                         ",".join(head))
    return None


def _cell(row: list[str], j: int, where: str, field: str) -> str:
    if j >= len(row) or row[j] == "":
        raise InputError(f"{where}: {field}", "a non-empty value", row[j] if j < len(row) else None)
    return id_text(row[j], f"{where}: {field}")


def text_id(x: Any, field: str) -> str:
    """An id (item, worker, label, name) as the campaign keeps it: its text, trimmed; empty
    text, control characters and bidi overrides are refused (`validate.id_text`)."""
    if type(x) is str:  # the common case first (a record of 100k rows reads 300k ids)
        return id_text(x.strip(), field)
    if x is None or isinstance(x, float) and math.isnan(x):
        raise InputError(field, "an id", x)
    if isinstance(x, np.generic):
        x = x.item()
    # an integer id is its digits; a boolean, a float (1.0 beside 1) or an integer beyond
    # 2^53 (not exact in JSON) would be two ids that print alike or one id read two ways
    if not isinstance(x, int) or isinstance(x, bool) or abs(x) > MAX_INT:
        raise InputError(field, "a text or an integer id of magnitude <= 2^53",
                         x if not isinstance(x, int) or abs(x) < 10**30 else "a huge integer")
    return id_text(str(x), field)


def _unique(ids: list[str], field: str) -> None:
    seen: set[str] = set()
    for s in ids:
        if s in seen:
            raise InputError(field, "unique ids", s, note="listed twice")
        seen.add(s)


def _dataset(source: Any):
    if isinstance(source, str) and source.startswith("dataset:"):
        from ..crowd.datasets import load_table

        return load_table(source.split(":", 1)[1])[0]
    return None


# ----------------------------------------------------------------------------- items / workers
def read_items(items: Any) -> list[tuple[str, int | None]]:
    """(id, max_labels or None) per item, in order (the order LS_OL's arrivals follow):
    from a CSV, 'dataset:NAME', a list of ids, or a mapping id -> max_labels."""
    table = _dataset(items)
    if table is not None:  # the data set's tasks; cap = its labels per task (replay semantics)
        counts = table.labels_per_task().tolist()
        out = [(text_id(t, "items"), int(c)) for t, c in zip(table.task_ids.tolist(), counts)]
    elif isinstance(items, str | os.PathLike):
        head, rows, name = read_csv(items, "--items")
        j = _column(head, ITEM_ALIASES, "item", name)
        m = _column(head, ("max_labels",), "max_labels", name, required=False)
        out = []
        for r, row in enumerate(rows, start=2):
            where = f"{name} line {r}"
            cap = None
            if m is not None and m < len(row) and row[m] != "":
                try:
                    cap = int(row[m])
                except ValueError:
                    cap = -1
                if cap < 0:
                    raise InputError(f"{where}: max_labels", "an integer >= 0", row[m])
            out.append((_cell(row, j, where, "item"), cap))
    elif isinstance(items, Mapping):  # id -> max_labels (None: no cap)
        out = [(text_id(k, "items"), _cap(v, f"items[{k!r}]")) for k, v in items.items()]
    elif isinstance(items, Sequence) and not isinstance(items, bytes):
        out = [(text_id(x, f"items[{i}]"), None) for i, x in enumerate(items)]
    else:
        raise InputError("items", "a CSV file, dataset:NAME or a list of ids", type(items).__name__)
    if not out:
        raise InputError("items", "at least one item", 0)
    _unique([o[0] for o in out], "items")
    return out


def _cap(v: Any, field: str) -> int | None:
    if v is None:
        return None
    return integer(v, f"{field}: max_labels", lo=0)


def _curve(text: Any, where: str) -> list[float]:
    field = f"{where}: accuracy"
    if isinstance(text, int | float | np.number) and not isinstance(text, bool):
        vals = [real_text(text, field)]
    elif isinstance(text, str):
        vals = [real_text(x, field) for x in text.replace(";", " ").split()]
    elif isinstance(text, Sequence):
        vals = [real_text(x, field) for x in text]
    else:
        raise InputError(f"{where}: accuracy", "a number or a list of numbers", text)
    if not vals or not all(math.isfinite(v) and 0.0 < v < 1.0 for v in vals):
        raise InputError(f"{where}: accuracy", "numbers in (0, 1)", text)
    return vals


def read_workers(workers: Any, need_accuracy: bool = False) -> list[tuple[str, Any]]:
    """(id, accuracy curve or None) per worker, in order; [] when None."""
    if workers is None:
        return []
    table = _dataset(workers)
    if table is not None:
        out = [(text_id(w, "workers"), None) for w in table.worker_ids.tolist()]
    elif isinstance(workers, str | os.PathLike):
        head, rows, name = read_csv(workers, "--workers")
        j = _column(head, WORKER_ALIASES, "worker", name)
        a = _column(head, ("accuracy", "p"), "accuracy", name, required=need_accuracy)
        out = []
        for r, row in enumerate(rows, start=2):
            where = f"{name} line {r}"
            wid = _cell(row, j, where, "worker")
            out.append((wid, None if a is None else _curve(_cell(row, a, where, "accuracy"),
                                                           where)))
    elif isinstance(workers, Mapping):
        out = [(text_id(k, "workers"), _curve(v, f"workers[{k!r}]"))
               for k, v in workers.items()]
    elif isinstance(workers, Sequence) and not isinstance(workers, bytes):
        out = [(text_id(x, f"workers[{i}]"), None) for i, x in enumerate(workers)]
    else:
        raise InputError("workers", "a CSV file, dataset:NAME or a list of ids",
                         type(workers).__name__)
    if not out:
        raise InputError("workers", "at least one worker", 0)
    _unique([o[0] for o in out], "workers")
    if need_accuracy and any(o[1] is None for o in out):
        raise InputError("workers", "an accuracy curve per worker (column accuracy)", None)
    return out


def accuracy_matrix(worker_rows: Sequence[tuple[str, Any]], n_items: int) -> np.ndarray:
    """The a x K matrix of CL-TAP accuracies: lists of one length K; a single number is a flat
    curve (of length K, or of n_items when every curve is a single number)."""
    curves = [r[1] for r in worker_rows]
    longest = max(len(c) for c in curves)
    K = n_items if longest == 1 else longest
    if K > n_items:
        raise InputError("workers: accuracy", f"at most {n_items} iterations (one per item)", K)
    rows = []
    for (wid, c) in worker_rows:
        if len(c) == 1:
            c = c * K
        if len(c) != K:
            raise InputError(f"workers: accuracy of {wid!r}", f"{K} values (one per iteration)",
                             len(c))
        rows.append(c)
    return np.array(rows, dtype=float)


def read_pairs(pairs: Any, item_ids: list[str], worker_ids: list[str]) -> np.ndarray:
    """(item index, worker index) rows of the allowed pairs (optkg-het)."""
    ii = {s: i for i, s in enumerate(item_ids)}
    ww = {s: j for j, s in enumerate(worker_ids)}
    table = _dataset(pairs)
    if table is not None:
        raw = [(str(table.task_ids[t]), str(table.worker_ids[w]), f"row {r + 1}")
               for r, (t, w) in enumerate(zip(table.task.tolist(), table.worker.tolist()))]
    elif isinstance(pairs, str | os.PathLike):
        head, rows, name = read_csv(pairs, "--pairs")
        a = _column(head, ITEM_ALIASES, "item", name)
        b = _column(head, WORKER_ALIASES, "worker", name)
        raw = []
        for r, row in enumerate(rows, start=2):
            where = f"{name} line {r}"
            raw.append((_cell(row, a, where, "item"), _cell(row, b, where, "worker"), where))
    else:
        raw = [(text_id(p[0], "pairs"), text_id(p[1], "pairs"), f"pairs[{r}]")
               for r, p in enumerate(pairs)]
    out = []
    for it, w, where in raw:
        if it not in ii:
            raise InputError(f"{where}: item", "an item of the campaign", it)
        if w not in ww:
            raise InputError(f"{where}: worker", "a worker of the campaign", w)
        out.append((ii[it], ww[w]))
    if not out:
        raise InputError("pairs", "at least one (item, worker) pair", 0)
    return np.unique(np.array(out, dtype=np.int64), axis=0)


# ----------------------------------------------------------------------------- answers
def read_answers(source: str | os.PathLike) -> list[dict]:
    """Rows of an answers CSV (columns item, worker, label; aliases task, question, ...). A
    row with an empty or missing cell is kept with its reason (`_error`): `record` rejects
    that row alone."""
    head, rows, name = read_csv(source, "answers")
    a = _column(head, ITEM_ALIASES, "item", name)
    b = _column(head, WORKER_ALIASES, "worker", name)
    c = _column(head, LABEL_ALIASES, "label", name)
    out = []
    for r, row in enumerate(rows, start=2):
        where = f"{name} line {r}"
        rec: dict = {"_where": where}
        for key, j in (("item", a), ("worker", b), ("label", c)):
            v = row[j] if j < len(row) else ""
            if v == "" and "_error" not in rec:
                rec["_error"] = f"{where}: {key}: expected a non-empty value, found " + (
                    "''" if j < len(row) else "None")
            rec[key] = v
        out.append(rec)
    return out


def answer_rows(rows: Any) -> list[tuple[str, str | None, str | None, str | None, str | None]]:
    """(where, item, worker, label, error) per answer row (tuples or mappings): a malformed
    row gets its one-line reason in `error` (and None texts) instead of failing the batch."""
    if isinstance(rows, Mapping) or isinstance(rows, str | bytes) or rows is None:
        raise InputError("answers", "a list of (item, worker, label) rows", type(rows).__name__)
    try:
        it = iter(rows)
    except TypeError:
        raise InputError("answers", "a list of (item, worker, label) rows",
                         type(rows).__name__) from None
    out: list[tuple[str, str | None, str | None, str | None, str | None]] = []
    for r, row in enumerate(it):
        where = f"answers[{r}]"
        t = type(row)
        if t is dict and len(row) == 3 and "item" in row and "worker" in row and "label" in row:
            a, b, c = row["item"], row["worker"], row["label"]  # a JSON row (HTTP)
        elif (t is tuple or t is list) and len(row) == 3:  # the common case, checked cheaply
            a, b, c = row
        else:
            a = b = c = None
        if a is not None:
            if type(c) is int:  # a class index-like label (0/1) as Python code writes it
                c = str(c)
            if type(a) is str and type(b) is str and type(c) is str:
                a, b, c = a.strip(), b.strip(), c.strip()
                if a and b and c and a.isprintable() and b.isprintable() and c.isprintable():
                    out.append((where, a, b, c, None))
                    continue
        try:
            if t is dict or isinstance(row, Mapping):
                where = str(row.get("_where", where))
                if row.get("_error"):
                    raise InputError(where, "a complete row", None, note=str(row["_error"]))
                missing = [k for k in ("item", "worker", "label") if k not in row]
                if missing:
                    raise InputError(f"{where}", "keys item, worker, label", sorted(map(str, row)))
                vals = (row["item"], row["worker"], row["label"])
            elif isinstance(row, Sequence) and not isinstance(row, str | bytes) and len(row) == 3:
                vals = tuple(row)
            else:
                raise InputError(where, "an (item, worker, label) row", row)
            for v in vals:
                if isinstance(v, dict | list | tuple | set):
                    raise InputError(where, "item, worker and label as text or numbers", v)
            out.append((where, text_id(vals[0], f"{where}: item"),
                        text_id(vals[1], f"{where}: worker"),
                        text_id(vals[2], f"{where}: label"), None))
        except InputError as exc:
            msg = exc.note if isinstance(row, Mapping) and row.get("_error") else str(exc)
            out.append((where, None, None, None, msg))
    return out


# ----------------------------------------------------------------------------- parameters
def parse_classes(labels: Any, policy: str) -> list[str]:
    """The class values of --labels (two for the binary policies, 2+ for lsol)."""
    if labels is None:
        labels = ["0", "1"]
    elif isinstance(labels, str):
        labels = [x for x in labels.split(",")]
    vals = [text_id(x, "--labels") for x in labels]
    _unique(vals, "--labels")
    if policy == "lsol":
        if len(vals) < 2:
            raise InputError("--labels", "at least 2 class values", ",".join(vals))
    elif len(vals) != 2:
        raise InputError("--labels", f"2 class values (negative,positive) for {policy}",
                         ",".join(vals))
    return vals


def _pair(x: Any, field: str) -> list[float]:
    if isinstance(x, str):
        x = x.split(",")
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if not isinstance(x, Sequence):
        raise InputError(field, "two numbers a,b > 0", x)
    vals = [real_text(v, field) for v in x]
    if len(vals) != 2 or not all(math.isfinite(v) and v > 0 for v in vals):
        raise InputError(field, "two numbers a,b > 0", x)
    return vals


def _num(x: Any, field: str, lo: float, hi: float = math.inf) -> float:
    v = real_text(x, field)
    if not lo <= v <= hi:
        raise InputError(field, f"a number in [{lo}, {hi}]", x)
    return v


DEFAULTS = {
    "optkg": {"rule": "optkg", "prior": [1.0, 1.0], "alpha": 0.5},
    "optkg-het": {"rule": "optkg", "prior": [1.0, 1.0], "worker_prior": [4.0, 1.0]},
    "lsol": {"rule": "mv", "estimator": "first", "G1": 2.0, "price": 0.01, "prior": 1.0,
             "filter": False, "delta_rank": 0.1},
    "cltap": {"p_max": 0.999},
}


def policy_params(policy: str, params: dict, n_classes: int) -> dict:
    """The policy's parameters with defaults, validated (JSON-ready)."""
    base = DEFAULTS[policy]
    unknown = sorted(set(params) - set(base))
    if unknown:
        raise InputError(f"{policy} option", "one of " + ", ".join(sorted(base)), unknown[0])
    p = {**base, **{k: v for k, v in params.items() if v is not None}}
    if policy in ("optkg", "optkg-het"):
        allowed = HOMOGENEOUS if policy == "optkg" else HETEROGENEOUS
        name, _ = parse_policy(p["rule"])
        if name not in allowed:
            raise InputError("--rule", f"one of {', '.join(allowed)} (optionally -det)", p["rule"])
        p["prior"] = _pair(p["prior"], "--prior")
        if policy == "optkg":
            p["alpha"] = _num(p["alpha"], "--alpha", 0.0, 1.0)
        else:
            p["worker_prior"] = _pair(p["worker_prior"], "--worker-prior")
    elif policy == "lsol":
        if p["rule"] not in ("mv", "wmv"):
            raise InputError("--rule", "mv or wmv for lsol", p["rule"])
        if p["estimator"] not in ESTIMATORS:
            raise InputError("--estimator", " or ".join(ESTIMATORS), p["estimator"])
        p["G1"] = _num(p["G1"], "--G1", 0.0)
        p["price"] = _num(p["price"], "--price", 0.0)
        p["prior"] = _num(p["prior"], "--prior", 0.0)
        p["delta_rank"] = _num(p["delta_rank"], "--delta-rank", 0.0, 1.0)
        p["filter"] = bool(p["filter"])
        p["n_classes"] = n_classes
    else:
        p["p_max"] = _num(p["p_max"], "--p-max", 0.5, 1.0)
        if not 0.5 < p["p_max"] < 1.0:
            raise InputError("--p-max", "a number in (0.5, 1)", p["p_max"])
    return p


def read_gold_map(source: Any, item_ids: Sequence[str], classes: Sequence[str]
                  ) -> dict[str, str]:
    """item -> gold label of the campaign's items, from a gold CSV (item,label), a data set
    (NAME, dataset:NAME) or a mapping. Items outside the campaign are dropped; a gold label
    that is not one of the campaign's classes is refused, by the rule of `aggregate --gold`
    (`crowd.tables.read_gold`)."""
    from ..crowd.tables import LabelTable, gold_from_arrays, read_gold

    none = np.zeros(0, dtype=np.int64)
    table = LabelTable(np.asarray(list(item_ids), dtype=object), np.zeros(0, dtype=object),
                       np.asarray(list(classes), dtype=object), none, none, none)
    if isinstance(source, Mapping):
        gold = gold_from_arrays(table, [str(k) for k in source],
                                [str(v) for v in source.values()], unknown_tasks="drop")
    else:
        from ..crowd.datasets import dataset_name, load_table

        name = dataset_name(str(source))
        if name is not None:
            data, g = load_table(name)
            gold = gold_from_arrays(table, [str(data.task_ids[t]) for t in g.task.tolist()],
                                    [str(data.classes[y]) for y in g.label.tolist()],
                                    unknown_tasks="drop")
        else:
            if str(source) != "-" and not Path(source).is_file():
                raise InputError("--gold", "an existing gold CSV or a data set name",
                                 str(source))
            gold = read_gold(source, table, unknown_tasks="drop")
    return {str(item_ids[t]): str(classes[y])
            for t, y in zip(gold.task.tolist(), gold.label.tolist())}
