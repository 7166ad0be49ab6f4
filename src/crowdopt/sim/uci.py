"""Classification data sets for the OLAS active-learning experiments (paper 000, Sec. 4.1).

The four UCI sets of Table 1 are read from `uci/<name>/` of a data folder (never bundled;
fetched and verified on first use, see `crowdopt.datapath`), with
the settings of Table 2 as presets (budget B, labelers M, capacity c; digest 000 section 5.2).
Labels are encoded 0/1 with 1 = the F1 positive class of digest 7.13 (Heart: presence `2`,
Ionosphere: bad `b`, Sonar: mine `M`, Spambase: spam `1`). Rows are shuffled with a seed, which
matters: Sonar and Spambase are sorted by class. `load_csv_dataset` reads a user CSV with a
target column.
"""

from __future__ import annotations

import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..datapath import data_file
from ..errors import InputError
from ..files import read_input
from ..validate import choice, clean_text, csv_rows, real_text, text_number, utf8_text


@dataclass(frozen=True)
class UciPreset:
    """Table 2 settings of one data set plus how to read its raw file."""

    name: str
    title: str
    path: tuple[str, ...]
    delimiter: str | None  # None = any whitespace
    positive: str  # raw label of the F1 positive class
    budget: int  # B per cycle
    labelers: int  # M
    capacity: int  # c_i, the same for all labelers


PRESETS: dict[str, UciPreset] = {
    "heart": UciPreset("heart", "Statlog (Heart)", ("uci", "heart", "heart.dat"), None, "2",
                       15, 5, 3),
    "ionosphere": UciPreset("ionosphere", "Ionosphere", ("uci", "ionosphere", "ionosphere.data"),
                            ",", "b", 20, 5, 4),
    "sonar": UciPreset("sonar", "Connectionist Bench", ("uci", "sonar", "sonar.all-data"), ",",
                       "M", 12, 4, 3),
    "spambase": UciPreset("spambase", "Spambase", ("uci", "spambase", "spambase.data"), ",", "1",
                          258, 17, 16),
}


@dataclass(frozen=True, eq=False)
class Dataset:
    """Features X (n x d floats), integer labels y in 0..C-1, class names, F1 positive class."""

    name: str
    X: np.ndarray
    y: np.ndarray
    classes: list[str]
    pos_label: int | None  # index into classes for binary F1; None = macro F1

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return len(self.classes)


def _text(path: Path, field: str) -> io.StringIO:
    """A data file's text as UTF-8 with a BOM dropped (a BOM glued to the first column's name
    hid it; another encoding was a UnicodeDecodeError traceback)."""
    return io.StringIO(utf8_text(read_input(path, field), field, path.name), newline="")


def _rows(path: Path, delimiter: str | None) -> list[list[str]]:
    with _text(path, str(path)) as fh:
        if delimiter is None:
            return [line.split() for line in fh if line.strip()]
        return [[c.strip() for c in row] for row in csv_rows(fh, str(path), delimiter=delimiter)
                if any(c.strip() for c in row)]


_NOT_NUMBER = re.compile(r"[^0-9eE+\-.]")  # a character no number of the grammar holds


def _features(rows: list[list[str]], field: str, first_line: int = 1,
              names: list[str] | None = None) -> np.ndarray:
    """The feature cells as a float matrix, each by the number grammar (`validate.real_text`:
    '1_0', 'nan', '1e-400' are refused naming the line and column). numpy reads the matrix;
    only a table with a character no number holds, or with cells read as 0 or as a subnormal,
    is checked cell by cell."""
    try:
        X = np.array(rows, dtype=float)
        suspect = _NOT_NUMBER.search("".join("".join(r) for r in rows)) is not None
    except ValueError:  # a text numpy cannot read, or rows of different lengths
        X, suspect = None, True
    if not suspect:
        tiny = np.abs(X) < sys.float_info.min  # 0 or subnormal: '0', or '1e-400' underflowing
        suspect = any(text_number(rows[r][c]) is None for r, c in zip(*np.nonzero(tiny)))
    if suspect:
        for r, row in enumerate(rows):
            for c, v in enumerate(row):
                col = names[c] if names else c + 1
                real_text(v, f"{field} line {r + first_line} column {col}")
        if X is None:
            raise InputError(field, "a table of equal-length rows",
                             f"rows of {len(rows[0])} and "
                             f"{next(len(r) for r in rows if len(r) != len(rows[0]))} cells")
    if X.ndim != 2 or X.shape[0] == 0:
        raise InputError(field, "a non-empty table of equal-length rows", f"shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise InputError(field, "finite feature values", "NaN or infinity")
    return X


def _shuffle(X: np.ndarray, y: np.ndarray, seed: int | None) -> tuple[np.ndarray, np.ndarray]:
    if seed is None:
        return X, y
    perm = np.random.default_rng(seed).permutation(len(y))
    return X[perm], y[perm]


def load_uci(name: str, seed: int | None = 0) -> Dataset:
    """One of the four Table-1 sets (`uci/NAME/` of a data folder), shuffled with `seed` (None:
    file order)."""
    choice(name, "dataset", sorted(PRESETS))
    pre = PRESETS[name]
    rows = _rows(data_file(*pre.path), pre.delimiter)
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise InputError(str(Path(*pre.path)), "rows of equal length", sorted(widths))
    labels = [r[-1] for r in rows]
    X = _features([r[:-1] for r in rows], str(Path(*pre.path)))
    negative = sorted(set(labels) - {pre.positive})
    if len(negative) != 1 or pre.positive not in labels:
        raise InputError(str(Path(*pre.path)), f"two classes including {pre.positive!r}",
                         sorted(set(labels)))
    y = np.array([1 if v == pre.positive else 0 for v in labels], dtype=np.int64)
    X, y = _shuffle(X, y, seed)
    return Dataset(name, X, y, [negative[0], pre.positive], 1)


def load_csv_dataset(path: str | Path, target: str, *, pos_label: str | None = None,
                     seed: int | None = 0) -> Dataset:
    """A CSV with a header, numeric feature columns and a `target` column (any labels).

    Binary: F1 of `pos_label` (default: the minority class). More classes: macro F1.
    """
    p = Path(path)
    with _text(p, "--data") as fh:  # missing, a folder, unreadable: one line naming it
        rows = [r for r in csv_rows(fh, "--data") if any(c.strip() for c in r)]
    if len(rows) < 2:
        raise InputError(str(p), "a header row and at least one data row", f"{len(rows)} row(s)")
    header = [h.strip() for h in rows[0]]
    if target not in header:
        raise InputError("--target", "a column of " + str(p), target)
    k = header.index(target)
    body = rows[1:]
    bad = [r for r, row in enumerate(body) if len(row) != len(header)]
    if bad:
        raise InputError(f"{p} row {bad[0] + 2}", f"{len(header)} columns",
                         f"{len(body[bad[0]])} columns")
    labels = [row[k].strip() for row in body]
    X = _features([[c for j, c in enumerate(row) if j != k] for row in body], str(p),
                  first_line=2, names=[h for j, h in enumerate(header) if j != k])
    classes = sorted(set(labels))
    for c in classes:  # the text rule of every label
        clean_text(c, f"{p} column {target}", "a label")
    if len(classes) < 2:
        raise InputError("--target", "a column with at least two classes", classes)
    index = {c: i for i, c in enumerate(classes)}
    y = np.array([index[v] for v in labels], dtype=np.int64)
    pos: int | None = None
    if len(classes) == 2:
        if pos_label is None:
            counts = np.bincount(y, minlength=2)
            pos = int(np.argmin(counts))  # minority class; ties -> first class
        else:
            choice(str(pos_label), "--pos-label", classes)
            pos = index[str(pos_label)]
    X, y = _shuffle(X, y, seed)
    return Dataset(p.stem, X, y, classes, pos)


def preset_settings(name: str) -> dict[str, Any]:
    """Table 2 loop settings of a preset (budget, labelers, capacity) + paper-literal entropy."""
    pre = PRESETS[choice(name, "--preset", sorted(PRESETS))]
    return {"budget": pre.budget, "labelers": pre.labelers, "capacity": pre.capacity,
            "entropy_normalize": "none"}


_CACHE: dict[str, Dataset] = {}


def load_dataset(spec: Any) -> Dataset:
    """A preset name ('heart', ...) or {'csv': path, 'target': col, 'pos_label': label|None},
    in file order (the loop's seeded split randomizes the order); cached per process."""
    import json

    key = json.dumps(spec, sort_keys=True)
    if key not in _CACHE:
        if isinstance(spec, str):
            _CACHE[key] = load_uci(spec, seed=None)
        elif isinstance(spec, dict) and "csv" in spec and "target" in spec:
            _CACHE[key] = load_csv_dataset(spec["csv"], spec["target"],
                                           pos_label=spec.get("pos_label"), seed=None)
        else:
            raise InputError("dataset", "a preset name or {'csv': path, 'target': column}", spec)
    return _CACHE[key]
