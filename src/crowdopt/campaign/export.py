"""Campaign exports: answers or labels as CSV (formula-like cells escaped), JSONL or Label
Studio JSON tasks; files are written by the one safe writer (`crowdopt.files`): regular files
only, a new file or --force, temp file + rename."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from typing import Any

from ..errors import InputError

FORMATS = ("csv", "jsonl", "label-studio")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def csv_cell(v: Any) -> str:
    """A cell a spreadsheet shows as text: a leading = + - @ TAB or CR starts a formula in
    Excel / LibreOffice, so such a cell gets a leading ' (plain numbers such as -1 are kept)."""
    s = "" if v is None else str(v)
    if s and s[0] in "=+-@\t\r" and not _NUMBER.match(s):
        return "'" + s
    return s


def export_rows(camp, what: str) -> tuple[list[str], list[list[Any]]]:
    """(header, rows) of the answers (late ones included) or of the labels (items with at
    least one answer only: an unanswered item has no label)."""
    if what == "answers":
        return ["task", "worker", "label"], [list(r) for r in camp.answers()]
    if what == "labels":
        st = camp.status()
        return ["task", "label", "confidence", "answers"], [
            [r["item"], r["label"], r["confidence"], r["answers"]]
            for r in st["labels"] if r["label"] is not None and r["answers"] > 0]
    raise InputError("--what", "answers or labels", what)


def _label_studio(header: list[str], rows: list[list[Any]], what: str, meta: dict) -> list:
    """Label Studio's JSON import: one task per item (`data.item`); answers become
    annotations (one per worker, `completed_by` in `meta`), labels become predictions with
    their confidence as `score`."""
    def choice(label: Any) -> list[dict]:
        return [{"from_name": "label", "to_name": "item", "type": "choices",
                 "value": {"choices": [str(label)]}}]

    tasks: dict[str, dict] = {}
    for r in rows:
        t = tasks.setdefault(str(r[0]), {"data": {"item": str(r[0])}})
        if what == "answers":
            t.setdefault("annotations", []).append(
                {"result": choice(r[2]), "meta": {"worker": str(r[1])}})
        else:
            t["predictions"] = [{"model_version": f"crowdopt-{meta.get('policy', '')}",
                                 "score": r[2], "result": choice(r[1])}]
            t["data"]["answers"] = r[3]
    return list(tasks.values())


def render(fmt: str, header: list[str], rows: list[list[Any]], *, what: str,
           meta: dict | None = None) -> str:
    """Rows as the text of an export format (csv, jsonl or Label Studio JSON)."""
    meta = meta or {}
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header)
        w.writerows([[csv_cell(f"{c:.6g}" if isinstance(c, float) else c) for c in r]
                     for r in rows])
        return buf.getvalue()
    if fmt == "jsonl":
        return "".join(json.dumps(dict(zip(header, r))) + "\n" for r in rows)
    if fmt == "label-studio":
        return json.dumps(_label_studio(header, rows, what, meta), indent=1) + "\n"
    raise InputError("--format", ", ".join(FORMATS), fmt)


def write_export(output: str | None, fmt: str, header: list[str], rows: list[list[Any]], *,
                 what: str, meta: dict | None = None, force: bool = False) -> int:
    """Write to `output` (None or '-': stdout) through `files.write_file` (a FIFO, device,
    directory or socket refused; an existing file only with `force`). Returns the number of
    rows."""
    from ..files import check_target, write_file

    if output not in (None, "-"):
        check_target(output, force=force)  # before the rendering work
    text = render(fmt, header, rows, what=what, meta=meta)
    if output in (None, "-"):
        sys.stdout.write(text)
        return len(rows)
    write_file(output, text, force=force)
    return len(rows)
