"""The admin's caps on what a token of each role may ask of `POST /next`: `n` (queries per
request), `lease` and `late_window` (seconds). A request asking for more gets the cap, and
its reply says so (`capped`): a worker token can no longer hold the whole budget for years.
Set at `campaign init` and changed by `campaign serve` (`--cap ROLE.FIELD=VALUE`), kept in the
campaign's store so that every server applies the same ones."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import InputError

MAX_N = 1000  # queries per /next request, whoever asks (larger: refused)
MAX_SECONDS = 1e9  # the longest lease or late window (past it the clock overflows)
ROLES = ("admin", "worker")
FIELDS = ("n", "lease", "late_window")
DEFAULT: dict[str, dict[str, float]] = {
    "admin": {"n": MAX_N, "lease": MAX_SECONDS, "late_window": MAX_SECONDS},
    "worker": {"n": 10, "lease": 3600.0, "late_window": 3600.0},
}
DEFAULT_LEASE = 600.0  # core.DEFAULT_LEASE (a request that names no lease)


def _value(role: str, field: str, v: Any) -> float:
    name = f"cap {role}.{field}"
    if field == "n":
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_N:
            raise InputError(name, f"an integer in [1, {MAX_N}]", v)
        return int(v)
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or not (
            (0 < v if field == "lease" else 0 <= v) and v <= MAX_SECONDS):
        raise InputError(name, "a number of seconds in " + ("(0, 1e9]" if field == "lease"
                                                            else "[0, 1e9]"), v)
    return float(v)


def merge(base: Mapping[str, Mapping[str, Any]], changes: Mapping[str, Any]
          ) -> dict[str, dict[str, float]]:
    """`base` with `changes` ({role: {field: value}}) applied, each change checked."""
    if not isinstance(changes, Mapping):
        raise InputError("caps", "a mapping {role: {field: value}}", changes)
    out = {r: dict(base.get(r, DEFAULT[r])) for r in ROLES}
    for role, fields in changes.items():
        if role not in ROLES:
            raise InputError("cap role", f"one of {', '.join(ROLES)}", role)
        if not isinstance(fields, Mapping):
            raise InputError(f"cap {role}", "a mapping {field: value}", fields)
        for field, v in fields.items():
            if field not in FIELDS:
                raise InputError(f"cap {role}", f"a field among {', '.join(FIELDS)}", field)
            out[role][field] = _value(role, field, v)
    return out


def parse(specs: list[str] | None) -> dict[str, dict[str, float]]:
    """Changes from command-line `ROLE.FIELD=VALUE` specs (e.g. `worker.n=5`)."""
    changes: dict[str, dict[str, float]] = {}
    for spec in specs or []:
        key, eq, text = spec.partition("=")
        role, dot, field = key.strip().partition(".")
        if not eq or not dot:
            raise InputError("--cap", "ROLE.FIELD=VALUE (e.g. worker.n=5, worker.lease=600)",
                             spec)
        try:
            v: Any = int(text) if field.strip() == "n" else float(text)
        except ValueError:
            v = text
        changes.setdefault(role.strip(), {})[field.strip()] = v
    merge(DEFAULT, changes)  # checked here, with the flag's name in the message
    return changes


def apply(caps: Mapping[str, Mapping[str, float]], role: str, n: Any, lease: Any,
          late_window: Any) -> tuple[Any, Any, Any, dict]:
    """(n, lease, late_window) of a /next request of `role` within its caps, and what was
    capped ({field: {"asked", "cap"}}). A value of the wrong type is left for `next` to
    refuse; a lease not given is the default (600 s), a late window not given the lease."""
    cap = caps.get(role)
    if cap is None:
        return n, lease, late_window, {}
    capped: dict[str, dict] = {}

    def number(v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)

    if isinstance(n, int) and not isinstance(n, bool) and n > cap["n"]:
        capped["n"] = {"asked": n, "cap": int(cap["n"])}
        n = int(cap["n"])
    asked = DEFAULT_LEASE if lease is None else lease
    if number(asked) and asked > cap["lease"]:
        capped["lease"] = {"asked": asked, "cap": cap["lease"]}
        lease = cap["lease"]
    else:
        lease = asked if lease is None and number(asked) else lease
    asked = lease if late_window is None else late_window
    if number(asked) and asked > cap["late_window"]:
        capped["late_window"] = {"asked": asked, "cap": cap["late_window"]}
        late_window = cap["late_window"]
    return n, lease, late_window, capped
