"""Boundary validation helpers shared by every problem and data reader.

Each helper either returns a clean Python/numpy value or raises `InputError(field, expected,
found)`. They accept JSON-ish input (lists, numbers) and reject NaN, infinities, booleans posing
as numbers, and wrong shapes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import InputError


def require_mapping(obj: Any, field: str) -> Mapping:
    if not isinstance(obj, Mapping):
        raise InputError(field, "a JSON object", type(obj).__name__)
    return obj


def require_key(obj: Mapping, key: str, field: str = "") -> Any:
    if key not in obj:
        raise InputError(_join(field, key), "a value (the field is required)", "nothing")
    return obj[key]


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool | np.bool_)


def real(x: Any, field: str, *, lo: float | None = None, hi: float | None = None,
         lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite real number in [lo, hi] (open ends on request)."""
    if not _is_number(x):
        raise InputError(field, "a number", x)
    v = float(x)
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
    v = float(x)
    if math.isnan(v) or math.isinf(v) or v != math.floor(v):
        raise InputError(field, "an integer", x)
    iv = int(v)
    if abs(iv) > MAX_INT:
        raise InputError(field, "an integer of magnitude <= 2^53", x)
    if lo is not None and iv < lo:
        raise InputError(field, f"an integer >= {lo}", x)
    if hi is not None and iv > hi:
        raise InputError(field, f"an integer <= {hi}", x)
    return iv


def sequence(x: Any, field: str, *, min_len: int = 0, length: int | None = None) -> Sequence:
    if isinstance(x, np.ndarray):
        x = x.tolist()
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
    seq = sequence(x, field, length=length, min_len=min_len)
    out = np.empty(len(seq), dtype=float)
    for k, v in enumerate(seq):
        out[k] = probability(v, f"{field}[{k}]")
    return out


def int_array(x: Any, field: str, *, lo: int | None = None, hi: int | None = None,
              length: int | None = None, min_len: int = 0) -> np.ndarray:
    seq = sequence(x, field, length=length, min_len=min_len)
    out = np.empty(len(seq), dtype=np.int64)
    for k, v in enumerate(seq):
        out[k] = integer(v, f"{field}[{k}]", lo=lo, hi=hi)
    return out


def real_matrix(x: Any, field: str, *, lo: float | None = None, hi: float | None = None,
                shape: tuple[int | None, int | None] = (None, None)) -> np.ndarray:
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
    if not isinstance(x, str) or x not in options:
        raise InputError(field, "one of " + ", ".join(repr(o) for o in options), x)
    return x


def ids(x: Any, field: str, length: int) -> list:
    """Opaque ids (strings or integers), unique, of the given length."""
    seq = sequence(x, field, length=length)
    for k, v in enumerate(seq):
        if not isinstance(v, str | int) or isinstance(v, bool):
            raise InputError(f"{field}[{k}]", "a string or integer id", v)
    if len(set(seq)) != len(seq):
        raise InputError(field, "unique ids", "duplicates")
    return list(seq)


def _join(field: str, key: str) -> str:
    return f"{field}.{key}" if field else key


def id_indices(seq: Any, names: list | None, n: int, field: str, what: str) -> np.ndarray:
    """Indices of a solution list whose entries are ids (when the instance names them) or
    0-based indices < n; InputError names the first entry that is neither."""
    lookup = {v: k for k, v in enumerate(names)} if names else None
    out = np.empty(len(seq), dtype=np.int64)
    for k, v in enumerate(seq):
        if lookup is not None and not isinstance(v, list | dict) and v in lookup:
            out[k] = lookup[v]
        elif isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n:
            out[k] = v
        else:
            raise InputError(f"{field}[{k}]", what, v)
    return out


def only_known_fields(d: Mapping, known: Any, what: str) -> None:
    """Reject the first unknown key of an instance document (typos must not be ignored)."""
    extra = sorted(set(d) - set(known))
    if extra:
        raise InputError(extra[0], f"a known field of {what} (" + ", ".join(sorted(known)) + ")",
                         "an unknown field")
