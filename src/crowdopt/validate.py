"""Boundary validation helpers shared by every problem and data reader.

Each helper either returns a clean Python/numpy value or raises `InputError(field, expected,
found)`. They accept JSON-ish input (lists, numbers, array-likes such as numpy arrays and pandas
Series) and reject NaN, infinities, booleans posing as numbers, and wrong shapes.

One rule for every number, wherever it comes from (a JSON value, a number written inside a
string such as `'logistic:0.5,-1,1'`, a CSV cell, a command-line word, a Python argument):
finite where a number is meant, integers of magnitude <= 2^53 (exact as JSON numbers and
floats; a 400-digit or 5,000-digit integer is refused, never an OverflowError), in range.
"""

from __future__ import annotations

import csv
import math
import re
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import InputError


class Shown(str):
    """A description shown as is in an InputError (no quotes: `found null`)."""

    def __repr__(self) -> str:
        return str(self)


def json_kind(v: Any) -> str:
    """What a JSON value is, in JSON's words (null, a boolean, a number, a string, an array,
    an object), for messages about a value of the wrong kind."""
    if v is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (int | float, "a number"), (str, "a string"),
                       (list | tuple, "an array"), (Mapping, "an object")):
        if isinstance(v, kind):
            return f"{name} ({v!r})" if name in ("a boolean", "a number") else name
    return type(v).__name__


def require_mapping(obj: Any, field: str) -> Mapping:
    """The object if it is a JSON object (mapping), else a one-line InputError."""
    if not isinstance(obj, Mapping):
        raise InputError(field, "a JSON object", type(obj).__name__)
    return obj


def require_key(obj: Mapping, key: str, field: str = "") -> Any:
    """obj[key], or a one-line InputError saying the field is required."""
    if key not in obj:
        raise InputError(_join(field, key), "a value (the field is required)", "nothing")
    return obj[key]


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool | np.bool_)


def _as_float(x: Any, field: str) -> float:
    """float(x) of a number; an integer too large for a float is refused, not an OverflowError."""
    try:
        return float(x)
    except OverflowError:
        raise InputError(field, "a finite number", _digits(x)) from None


def _digits(x: Any) -> str:
    """A huge integer as a short text (its repr would be thousands of digits, or raise)."""
    n = int(x).bit_length()
    return f"an integer of about {int(n * 0.30103) + 1} digits"


def real(x: Any, field: str, *, lo: float | None = None, hi: float | None = None,
         lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite real number in [lo, hi] (open ends on request)."""
    if not _is_number(x):
        raise InputError(field, "a number", x)
    v = _as_float(x, field)
    if math.isnan(v) or math.isinf(v):
        raise InputError(field, "a finite number", x)
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise InputError(field, f"a number {'>' if lo_open else '>='} {lo}", x)
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise InputError(field, f"a number {'<' if hi_open else '<='} {hi}", x)
    return v


def probability(x: Any, field: str) -> float:
    """A number in [0, 1]."""
    try:
        return real(x, field, lo=0.0, hi=1.0)
    except InputError:
        raise InputError(field, "a probability in [0, 1]", x) from None


MAX_INT = 2**53  # larger integers are not exact as JSON numbers / floats
MAX_ITEMS = 10_000_000  # entity counts (points, labelers, tasks, workers) a generator accepts


def integer(x: Any, field: str, *, lo: int | None = None, hi: int | None = None) -> int:
    """An integer (a float with an integral value such as 3.0 is accepted)."""
    if not _is_number(x):
        raise InputError(field, "an integer", x)
    if isinstance(x, int | np.integer):
        iv = int(x)
        if abs(iv) > MAX_INT:
            raise InputError(field, "an integer of magnitude <= 2^53",
                             _digits(iv) if abs(iv) > 10**30 else iv)
    else:
        v = float(x)
        if math.isnan(v) or math.isinf(v) or v != math.floor(v):
            raise InputError(field, "an integer", x)
        if abs(v) > MAX_INT:
            raise InputError(field, "an integer of magnitude <= 2^53", x)
        iv = int(v)
    if lo is not None and iv < lo:
        raise InputError(field, f"an integer >= {lo}", x)
    if hi is not None and iv > hi:
        raise InputError(field, f"an integer <= {hi}", x)
    return iv


def json_int(text: str) -> int | float:
    """`json.loads(..., parse_int=json_int)`: an integer literal of over 4,000 digits (past
    Python's int-string limit) becomes +-inf, so the field's own check refuses it by name
    instead of json raising ValueError."""
    return int(text) if len(text) <= 4000 else float(text)


def real_text(text: Any, field: str, *, lo: float | None = None, hi: float | None = None,
              lo_open: bool = False, hi_open: bool = False) -> float:
    """A number written inside a string (a CSV cell, 'logistic:w0,we,wa', '0.9,0.8'): parsed,
    then held to the same rule as `real` (finite, in range), so 'nan', 'inf' and '1e400' are
    refused like the numbers they spell."""
    if _is_number(text):
        return real(text, field, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)
    if not isinstance(text, str):
        raise InputError(field, "a number", text)
    try:
        v = float(text.strip())
    except ValueError:
        raise InputError(field, "a number", text) from None
    if not math.isfinite(v):
        raise InputError(field, "a finite number", text)
    return real(v, field, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)


def integer_text(text: Any, field: str, *, lo: int | None = None, hi: int | None = None) -> int:
    """An integer written inside a string (a CSV cell, a command-line word): the same rule as
    `integer` (magnitude <= 2^53, in range); a 5,000-digit text is refused before int() would
    hit Python's digit limit."""
    if _is_number(text):
        return integer(text, field, lo=lo, hi=hi)
    if not isinstance(text, str):
        raise InputError(field, "an integer", text)
    t = text.strip()
    if len(t) > 40:  # far beyond 2^53 (16 digits); int() of it may be slow or refused
        raise InputError(field, "an integer of magnitude <= 2^53", f"a text of {len(t)} characters")
    try:
        v = int(t)
    except ValueError:
        raise InputError(field, "an integer", text) from None
    return integer(v, field, lo=lo, hi=hi)


NO_LIMIT_S = 31_536_000.0  # a year: a time limit this long or longer is no limit


def time_limit(x: Any, field: str) -> float | None:
    """A time limit in seconds: a finite number > 0, or None (no limit given); a limit of a
    year (NO_LIMIT_S) or more is no limit and becomes None, so no clock arithmetic, sleep or
    solver option downstream ever sees 1e308."""
    if x is None:
        return None
    v = real(x, field, lo=0.0, lo_open=True)
    return None if v >= NO_LIMIT_S else v


def labels_per_task(x: Any, field: str) -> float:
    """A label budget given per task (labels per task on average over a run that answers
    every task): a finite number >= 1, since a smaller budget cannot buy the one label per
    task each answer needs."""
    try:
        return real(x, field, lo=1.0)
    except InputError:
        raise InputError(field, "a number >= 1 (labels per task: each task needs one label)",
                         x) from None


def labels_for_tasks(x: Any, field: str, tasks: int) -> int:
    """A total label budget of a run that labels every one of `tasks` tasks up front: an
    integer >= tasks (one label per task), <= 2^53."""
    v = integer(x, field, lo=1, hi=MAX_INT)
    if v < tasks:
        raise InputError(field, f"an integer >= {tasks} (one label for each of the {tasks} "
                         "tasks)", x)
    return v


def as_list(x: Any) -> Any:
    """A numpy array, pandas Series/Index/DataFrame or other array-like as nested Python lists
    (numpy scalars become Python numbers); anything else unchanged."""
    if isinstance(x, str | bytes | Mapping | list | tuple):
        return x
    if hasattr(x, "to_numpy") and callable(x.to_numpy):  # pandas objects
        try:
            x = x.to_numpy()
        except Exception:  # noqa: BLE001 - not convertible: left to the caller's check
            return x
    if isinstance(x, np.ndarray):
        return x.tolist()
    return x


def sequence(x: Any, field: str, *, min_len: int = 0, length: int | None = None) -> Sequence:
    """x as a list (not a string or mapping) of the required length."""
    x = as_list(x)
    if isinstance(x, str | bytes | Mapping) or not isinstance(x, Sequence):
        raise InputError(field, "a list", type(x).__name__)
    if length is not None and len(x) != length:
        raise InputError(field, f"a list of length {length}", f"length {len(x)}")
    if len(x) < min_len:
        raise InputError(field, f"a list of at least {min_len} item(s)", f"length {len(x)}")
    return x


def real_array(x: Any, field: str, *, lo: float | None = None, hi: float | None = None,
               length: int | None = None, min_len: int = 0) -> np.ndarray:
    """A 1-d float array; every entry checked (the message names the first bad index)."""
    seq = sequence(x, field, length=length, min_len=min_len)
    out = np.empty(len(seq), dtype=float)
    for k, v in enumerate(seq):
        out[k] = real(v, f"{field}[{k}]", lo=lo, hi=hi)
    return out


def probability_array(x: Any, field: str, *, length: int | None = None,
                      min_len: int = 0) -> np.ndarray:
    """A list of probabilities in [0, 1] as a float array."""
    seq = sequence(x, field, length=length, min_len=min_len)
    out = np.empty(len(seq), dtype=float)
    for k, v in enumerate(seq):
        out[k] = probability(v, f"{field}[{k}]")
    return out


def int_array(x: Any, field: str, *, lo: int | None = None, hi: int | None = None,
              length: int | None = None, min_len: int = 0) -> np.ndarray:
    """A list of integers within [lo, hi] as an int64 array."""
    seq = sequence(x, field, length=length, min_len=min_len)
    out = np.empty(len(seq), dtype=np.int64)
    for k, v in enumerate(seq):
        out[k] = integer(v, f"{field}[{k}]", lo=lo, hi=hi)
    return out


def real_matrix(x: Any, field: str, *, lo: float | None = None, hi: float | None = None,
                shape: tuple[int | None, int | None] = (None, None)) -> np.ndarray:
    """A list of equal-length lists of reals within [lo, hi] as a 2-d array."""
    rows = sequence(x, field, length=shape[0])
    if not rows:
        return np.zeros((0, shape[1] or 0))
    width = shape[1]
    out = []
    for r, row in enumerate(rows):
        arr = real_array(row, f"{field}[{r}]", lo=lo, hi=hi, length=width)
        width = len(arr) if width is None else width
        out.append(arr)
    return np.vstack(out)


def choice(x: Any, field: str, options: Sequence[str]) -> str:
    """x if it is one of `options`, else a one-line InputError listing them."""
    if not isinstance(x, str) or x not in options:
        raise InputError(field, "one of " + ", ".join(repr(o) for o in options), x)
    return x


# ----------------------------------------------------------------------------- ids and labels
# One text rule for every id and label, wherever it comes from (an instance file, a label or
# gold table, a solution, a campaign answer, a Python argument): no control character (C0, DEL,
# C1, the line and paragraph separators U+2028/U+2029: a NUL or a newline inside an id breaks
# every file it is written to) and no bidi override or isolate (U+202A-U+202E, U+2066-U+2069:
# they make one id display as another); an id is never blank, an integer id is within 2^53.
FORBIDDEN_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clean_text(text: str, field: str, what: str = "a text") -> str:
    """`text` unchanged if it holds no control character and no bidi override or isolate
    (FORBIDDEN_CHARS), else a one-line InputError naming the first one by code point."""
    m = FORBIDDEN_CHARS.search(text)
    if m:
        raise InputError(field, f"{what} without control characters or bidi overrides",
                         Shown(f"U+{ord(m.group()):04X} at character {m.start()} of {text!r}"))
    return text


def opaque_id(v: Any, field: str) -> str | int:
    """An id as given: a non-blank text without control characters or bidi overrides
    (`clean_text`), or an integer of magnitude <= 2^53 (not a boolean, not a float)."""
    if isinstance(v, str):
        if not v.strip():
            raise InputError(field, "a non-blank id", v)
        return clean_text(v, field, "an id")
    if isinstance(v, int) and not isinstance(v, bool):
        if abs(v) > MAX_INT:
            raise InputError(field, "an integer id of magnitude <= 2^53",
                             _digits(v) if abs(v) > 10**30 else v)
        return v
    raise InputError(field, "a string or integer id", v)


def ids(x: Any, field: str, length: int) -> list:
    """Opaque ids (`opaque_id`: strings or integers), unique, of the given length."""
    seq = sequence(x, field, length=length)
    for k, v in enumerate(seq):
        opaque_id(v, f"{field}[{k}]")
    if len(set(seq)) != len(seq):
        raise InputError(field, "unique ids", "duplicates")
    return list(seq)


def _join(field: str, key: str) -> str:
    return f"{field}.{key}" if field else key


# ----------------------------------------------------------------------------- solutions
def solution_object(d: Any, field: str, required: Sequence[str],
                    optional: Sequence[str] = ()) -> Mapping:
    """The JSON object of a bare solution: a mapping with every `required` key, and no key
    outside `required` + `optional` (a typo or another problem's key is refused by name)."""
    keys = ", ".join(repr(k) for k in (*required, *optional))
    if not isinstance(d, Mapping):
        opt = f" (optional: {', '.join(map(repr, optional))})" if optional else ""
        raise InputError(field, f"a JSON object with {', '.join(map(repr, required))}{opt}",
                         Shown(json_kind(d)))
    for k in required:
        if k not in d:
            raise InputError(_join(field, str(k)), "a value (the field is required)",
                             Shown("nothing"))
    extra = sorted(str(k) for k in d if k not in required and k not in optional)
    if extra:
        raise InputError(_join(field, extra[0]), f"no other key than {keys}",
                         Shown("an unknown key"))
    return d


def solution_entries(x: Any, field: str, names: list | None, n: int, what: str, *,
                     unique: bool, length: int | None = None,
                     allow_null: bool = False) -> np.ndarray:
    """Indices of a solution list. When the instance names its entities (`names`), every entry
    is one of those ids, exact type (the id 7 is not '7', 7.0 or true); else a 0-based
    position, an integer in [0, n). `unique`: an entry given twice is refused; `allow_null`:
    null is -1 (nothing, e.g. an unassigned point). Mixed, boolean, negative, out-of-range and
    repeated entries are one InputError naming the entry."""
    seq = sequence(x, field, length=length)
    lookup = {(type(v), v): k for k, v in enumerate(names)} if names else None
    if lookup is not None:
        shown = ", ".join(repr(v) for v in names[:4]) + (", ..." if len(names) > 4 else "")
        expected = f"a {what} id of the instance ({shown}; exact type)"
    else:
        expected = (f"a {what} position, an integer in [0, {n - 1}] (the instance has no "
                    f"{what} ids)" if n else f"no {what} (the instance has none)")
    out = np.empty(len(seq), dtype=np.int64)
    seen: dict[int, int] = {}
    for k, v in enumerate(seq):
        if v is None and allow_null:
            out[k] = -1
            continue
        if lookup is not None:
            i = lookup.get((type(v), v), -1) if isinstance(v, str | int) else -1
        else:
            i = v if type(v) is int and 0 <= v < n else -1
        if i < 0:
            raise InputError(f"{field}[{k}]", expected + (" or null" if allow_null else ""), v)
        if unique and i in seen:
            raise InputError(f"{field}[{k}]", f"each {what} once",
                             Shown(f"{v!r} again (also at [{seen[i]}])"))
        seen[i] = k
        out[k] = i
    return out


def only_known_fields(d: Mapping, known: Any, what: str) -> None:
    """Reject the first unknown key of an instance document (typos must not be ignored)."""
    extra = sorted(set(d) - set(known))
    if extra:
        raise InputError(extra[0], f"a known field of {what} (" + ", ".join(sorted(known)) + ")",
                         "an unknown field")


SEPARATORS = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "whitespace": " ",
              "space": " "}


def separator(sep: Any, field: str = "sep") -> str | None:
    """A field separator of a delimited file: None (sniff), one character, or a name (tab,
    '\\t', comma, semicolon, whitespace = ' ': runs of blanks); '' or 'ab' is refused (csv
    needs one character)."""
    if sep is None:
        return None
    if not isinstance(sep, str):
        raise InputError(field, "one character or tab, comma, semicolon, whitespace", sep)
    if sep.lower() in SEPARATORS:
        return SEPARATORS[sep.lower()]
    if len(sep) != 1 or sep in "\r\n\"":
        raise InputError(field, "one character (not a quote or line break) or tab, comma, "
                         "semicolon, whitespace", sep)
    return sep


# bidi embeddings, overrides and isolates: they reorder how an id is shown (U+202E makes
# 'txt.exe' look like 'exe.txt')
BIDI_CONTROLS = frozenset(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))


def id_text(s: str, field: str) -> str:
    """An id or label as text: non-empty, without control characters (NUL, line breaks, tab,
    ... : Unicode category Cc) or bidi controls (U+202A-U+202E, U+2066-U+2069); else a
    one-line InputError naming `field` and the first offending character."""
    if not s:
        raise InputError(field, "a non-empty id", repr(s))
    if s.isprintable():  # no character of categories C* or Z* but the space: the common case
        return s
    for ch in s:
        if ch in BIDI_CONTROLS or unicodedata.category(ch) == "Cc":
            raise InputError(field, "an id without control or bidi characters",
                             f"U+{ord(ch):04X} in {s!r}")
    return s


def utf8_text(raw: bytes, field: str, where: str) -> str:
    """Bytes of a file or of stdin as UTF-8 text with a BOM dropped (as Windows editors write
    it): an undecodable byte is an InputError naming `field` and `where`, never a traceback."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(field, "UTF-8 text", f"undecodable byte at {exc.start} in {where}"
                         ) from None


def stdin_text(field: str) -> str:
    """Standard input as UTF-8 text with a BOM dropped, as files are read, whatever the locale
    says: an undecodable byte is an InputError naming `field`, never a UnicodeDecodeError."""
    buf = getattr(sys.stdin, "buffer", None)
    if buf is None:  # a text stream put in place of stdin (embedding, tests)
        text = sys.stdin.read()
        return text[1:] if text.startswith("\ufeff") else text
    return utf8_text(buf.read(), field, "stdin")


def csv_rows(lines: Any, field: str, **fmt: Any) -> list[list[str]]:
    """All rows of CSV text (an iterable of lines or a file-like), fields of any size: csv's
    default 128 KB field limit is lifted while reading (a long free-text cell is data, not an
    error) and any other csv.Error becomes a one-line InputError naming the file."""
    old = csv.field_size_limit(sys.maxsize)
    try:
        return list(csv.reader(lines, **fmt))
    except csv.Error as exc:
        raise InputError(field, "a well-formed CSV file", str(exc)) from None
    finally:
        csv.field_size_limit(old)
