"""Boundary validation helpers shared by every problem and data reader.

Each helper either returns a clean Python/numpy value or raises `InputError(field, expected,
found)`. They accept JSON-ish input (lists, numbers, array-likes such as numpy arrays and pandas
Series) and reject NaN, infinities, booleans posing as numbers, and wrong shapes.

One reader per kind of value, used by the command line, the Python API and the HTTP service
alike (docs/inputs.md states the rules):

- numbers (`real`, `real_text`, `json_loads`): finite where a number is meant, within the
  float range (an overflow and an underflow are refused alike), written as text by one
  grammar (sign, ASCII digits, point, exponent: `1_0` and `nan` are no numbers), in range;
- integers (`integer`, `integer_text`): magnitude <= 2^53 (exact as JSON numbers and floats;
  a 400-digit or 5,000-digit integer is refused, never an OverflowError), a boolean never one;
- text (`clean_text`, `id_text`, `opaque_id`): no Cc, Cf, Zl, Zp character, lone surrogate or
  variation selector, and NFC;
- flags (`flag`, `env_flag`): true/false, 1/0, yes/no.
"""

from __future__ import annotations

import csv
import json
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


class _OutOfRange(float):
    """A number literal of a JSON or TOML document outside the float range, held (as 0.0)
    until `json_loads` names its place: never a value of a parsed document."""

    def __new__(cls, text: str) -> _OutOfRange:
        out = super().__new__(cls, 0.0)
        out.text = text
        return out


def float_hook(text: str) -> float:
    """`parse_float` of json/tomllib by the number rule: a literal that overflows (1e400, read
    as inf) or underflows (1e-400, read as 0.0) becomes a marker `json_loads` refuses."""
    v = float(text)
    return _OutOfRange(text) if number_range_fault(text, v) else v


# a literal that may be out of range: a 3-digit exponent, or a run of 300 digits; a text
# without one is parsed at the json module's full speed (no Python hook per number)
_SUSPECT = re.compile(r"[0-9.][eE][+-]?0*[0-9]{3}|[0-9]{300}")
_SUSPECT_B = re.compile(rb"[0-9.][eE][+-]?0*[0-9]{3}|[0-9]{300}")
_LONG_INT = re.compile(r"[0-9]{16}")
_LONG_INT_B = re.compile(rb"[0-9]{16}")


def json_loads(text: str | bytes, field: str = "", *, max_int: bool = False, **kw: Any) -> Any:
    """`json.loads(text, **kw)` by the number rule: a number that overflows or underflows
    (1e400 and 1e-400 alike) is a one-line InputError naming its place (`field` + its path in
    the document, e.g. `body.answers[0].label`), never inf or 0.0; with `max_int`, so is an
    integer beyond 2^53 (a document whose integers are all ids or counts). json's own errors
    (JSONDecodeError, RecursionError, a hook's) reach the caller unchanged."""
    binary = isinstance(text, bytes | bytearray)
    suspect = (_SUSPECT_B if binary else _SUSPECT).search(text) is not None
    if not suspect and max_int:
        suspect = (_LONG_INT_B if binary else _LONG_INT).search(text) is not None
    if not suspect:
        return json.loads(text, **kw)
    doc = json.loads(text, parse_float=float_hook, **kw)
    refuse_out_of_range(doc, field, max_int=max_int)
    return doc


def refuse_out_of_range(doc: Any, field: str, *, max_int: bool = False) -> None:
    """The first number of a parsed document (`float_hook`) outside the float range, or with
    `max_int` an integer beyond 2^53 (or one too long to read, json_int's inf): an InputError
    naming its path; the document is walked without recursion."""
    stack: list[tuple[Any, str]] = [(doc, field)]
    while stack:
        x, path = stack.pop()
        if isinstance(x, Mapping):
            stack.extend((v, _join(path, str(k))) for k, v in reversed(list(x.items())))
        elif isinstance(x, list | tuple):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(x))))
        elif isinstance(x, _OutOfRange):
            raise InputError(path or "document", "a number within the float range (about "
                             "2.2e-308 to 1.8e308 in magnitude, or 0)",
                             Shown(f"{_short_text(x.text)}, which "
                                   f"{number_range_fault(x.text, float(x.text))}"))
        elif max_int and isinstance(x, int | float) and not isinstance(x, bool) and (
                isinstance(x, int) and abs(x) > MAX_INT or isinstance(x, float)
                and math.isinf(x)):
            raise InputError(path or "document", "an integer of magnitude <= 2^53",
                             _digits(x) if isinstance(x, int) and abs(x) > 10**30 else x)


# ----------------------------------------------------------------------------- number texts
# One grammar for every number written as text (a command-line word, an HTTP query parameter, a
# CSV cell, a number inside a string such as 'logistic:0.5,-1,1'): after trimming surrounding
# white space, an optional sign, ASCII digits with an optional decimal point and an optional
# exponent. Python's float() and int() accept more, each in its own way ('1_0', 'nan',
# 'infinity', full-width digits, '0x10' for neither): none of that is a number here. A number
# that overflows (1e400) or underflows (1e-400: non-zero digits that would read as 0, or as a
# subnormal float that keeps only some of them) is refused alike.
INT_TEXT = re.compile(r"[+-]?[0-9]+")
NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
MAX_TEXT = 40  # characters of an integer text: far beyond 2^53 (16 digits)


def number_range_fault(text: str, v: float) -> str | None:
    """Why the number literal `text`, read as `v`, is outside the float range ('overflows',
    'underflows'), or None."""
    if math.isinf(v):
        return "overflows"
    if v == 0.0:
        digits = re.split("[eE]", text, maxsplit=1)[0]
        return "underflows" if digits.strip("+-0. ") else None
    return "underflows" if abs(v) < sys.float_info.min else None


def spells_number(text: str) -> bool:
    """Whether `text` (trimmed) is a number by the grammar, in range or not."""
    return NUMBER_TEXT.fullmatch(text.strip()) is not None


def text_number(text: str) -> float | None:
    """The float a text spells by the number grammar, None when it spells no number or one
    outside the float range (`spells_number` tells the two apart)."""
    t = text.strip()
    if NUMBER_TEXT.fullmatch(t) is None:
        return None
    v = float(t)
    return None if number_range_fault(t, v) else v


def real_text(text: Any, field: str, *, lo: float | None = None, hi: float | None = None,
              lo_open: bool = False, hi_open: bool = False) -> float:
    """A number written inside a string (a CSV cell, 'logistic:w0,we,wa', '0.9,0.8', a
    command-line word, a query parameter) by the number grammar above, then held to the same
    rule as `real` (finite, in range): 'nan', 'inf', '1_0', '1e400' and '1e-400' are refused."""
    if _is_number(text):
        return real(text, field, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)
    if not isinstance(text, str):
        raise InputError(field, "a number", text)
    t = text.strip()
    if NUMBER_TEXT.fullmatch(t) is None:
        raise InputError(field, "a number (digits, an optional sign, point and exponent)",
                         text)
    v = float(t)
    fault = number_range_fault(t, v)
    if fault:
        raise InputError(field, "a number within the float range (about 2.2e-308 to 1.8e308 "
                         "in magnitude, or 0)", Shown(f"{_short_text(text)}, which {fault}"))
    return real(v, field, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)


def integer_text(text: Any, field: str, *, lo: int | None = None, hi: int | None = None) -> int:
    """An integer written inside a string (a CSV cell, a command-line word, a query parameter):
    an optional sign and ASCII digits ('1_0', '3.0', '1e3', full-width digits are refused),
    then the same rule as `integer` (magnitude <= 2^53, in range); a 5,000-digit text is
    refused before int() would hit Python's digit limit."""
    if _is_number(text):
        return integer(text, field, lo=lo, hi=hi)
    if not isinstance(text, str):
        raise InputError(field, "an integer", text)
    t = text.strip()
    if len(t) > MAX_TEXT and INT_TEXT.fullmatch(t):
        raise InputError(field, "an integer of magnitude <= 2^53", f"a text of {len(t)} characters")
    if INT_TEXT.fullmatch(t) is None:
        raise InputError(field, "an integer (digits and an optional sign)", text)
    return integer(int(t), field, lo=lo, hi=hi)


def _short_text(text: str) -> str:
    return text if len(text) <= 40 else f"a text of {len(text)} characters"


# ----------------------------------------------------------------------------- flags
FLAG_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def flag(x: Any, field: str, *, text: bool = False) -> bool:
    """A yes/no setting: a boolean (a numpy one too); where the setting is written as text (an
    environment variable: `text`), one of the words true/false, 1/0, yes/no (any case,
    trimmed). Anything else ('no' or 0 as a Python argument, 'maybe' or 'on' in the
    environment) is refused naming the value, never read as either."""
    if isinstance(x, bool | np.bool_):
        return bool(x)
    if text and isinstance(x, str) and x.strip().lower() in FLAG_WORDS:
        return FLAG_WORDS[x.strip().lower()]
    raise InputError(field, "a yes/no flag: true/false, 1/0 or yes/no" if text
                     else "True or False", x)


ENV_FLAGS = ("CROWDOPT_OFFLINE", "CROWDOPT_PROGRESS", "CROWDOPT_VERBOSE")  # read by `env_flag`


def env_flag(name: str, default: bool = False) -> bool:
    """The flag in environment variable `name` (`flag`); unset or empty: `default`."""
    import os

    raw = os.environ.get(name, "")
    return default if not raw.strip() else flag(raw, name, text=True)


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


def plain(v: Any) -> Any:
    """A numpy scalar as the Python value it holds (np.int64(12) is 12, np.str_('ana') is
    'ana', np.bool_(True) is True, which every integer check then refuses); anything else
    unchanged."""
    return v.item() if isinstance(v, np.generic) else v


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


# ----------------------------------------------------------------------------- text
# One text rule for every id, label and name, wherever it comes from (an instance file, a label
# or gold table, a solution, a campaign answer, an HTTP body, a Python argument): no character
# of the Unicode categories Cc (controls: NUL, tab, line breaks, DEL, C1), Cf (format
# characters: bidi overrides and isolates, zero-width space and joiners, U+FEFF, soft hyphen),
# Zl and Zp (U+2028, U+2029), Cs (a lone surrogate, which no UTF-8 file or database can hold),
# and no variation selector (U+FE00-U+FE0F, U+E0100-U+E01EF, U+180B-U+180F): each is invisible
# or changes how the text displays, so two ids that print alike would differ. Text must be in
# Unicode NFC (the composed form every keyboard and most files produce): 'cafe' + U+0301 is
# refused, not normalized, so an id is never silently rewritten into another one and two
# spellings of one word are never two classes. An id is never blank; an integer id is within
# 2^53.
REFUSED_CATEGORIES = {"Cc": "a control character", "Cf": "a format character",
                      "Zl": "a line separator", "Zp": "a paragraph separator",
                      "Cs": "a lone surrogate"}
VARIATION_SELECTORS = re.compile("[\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]")
TEXT_RULE = ("without control or bidi/format characters (Unicode Cc, Cf, Zl, Zp), lone "
             "surrogates or variation selectors")


def text_ok(s: str) -> bool:
    """Whether `s` keeps the text rule (the fast test; `clean_text` says why not)."""
    if s.isascii():
        return s.isprintable()  # ASCII: only the controls (Cc) are not printable
    if not s.isprintable() and any(unicodedata.category(ch) in REFUSED_CATEGORIES for ch in s):
        return False
    return VARIATION_SELECTORS.search(s) is None and unicodedata.is_normalized("NFC", s)


def clean_text(text: str, field: str, what: str = "a text") -> str:
    """`text` unchanged if it keeps the text rule (above), else a one-line InputError naming
    the first refused character by code point, or the NFC form the text should have."""
    if text_ok(text):
        return text
    for i, ch in enumerate(text):
        kind = REFUSED_CATEGORIES.get(unicodedata.category(ch))
        if kind is None and VARIATION_SELECTORS.match(ch):
            kind = "a variation selector"
        if kind is not None:
            raise InputError(field, f"{what} {TEXT_RULE}",
                             Shown(f"U+{ord(ch):04X} ({kind}) at character {i} of "
                                   f"{_shown(text)}"))
    nfc = unicodedata.normalize("NFC", text)
    raise InputError(field, f"{what} in Unicode NFC (composed) form",
                     Shown(f"{ascii(_cut(text))}, whose NFC form is {ascii(_cut(nfc))}"))


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _shown(text: str) -> str:
    """repr of a text that may hold a lone surrogate (repr escapes it), cut to 60 chars."""
    return repr(_cut(text))


def opaque_id(v: Any, field: str) -> str | int:
    """An id as given: a non-blank text by the text rule (`clean_text`), or an integer of
    magnitude <= 2^53 (not a boolean, not a float); a numpy scalar is its Python value."""
    v = plain(v)
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
    seq = [opaque_id(v, f"{field}[{k}]")
           for k, v in enumerate(sequence(x, field, length=length))]
    if len(set(seq)) != len(seq):
        raise InputError(field, "unique ids", "duplicates")
    return seq


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
        v = plain(v)  # list(np.array([12, 10])) holds np.int64 values: the ids 12 and 10
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


def id_text(s: str, field: str) -> str:
    """An id or label as text: non-empty and by the text rule (`clean_text`); else a
    one-line InputError naming `field` and the first offending character."""
    if not s:
        raise InputError(field, "a non-empty id", repr(s))
    return clean_text(s, field, "an id")


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
