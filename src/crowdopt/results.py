"""What the Python API returns: `Result` (one method run), `Comparison` (methods side by side)
and `Certificate` (lower, upper, gap, ratio and the checks behind them), all frozen.

Their `to_dict()` is exactly the CLI's `--json` document (DESIGN rule 8), made of JSON types
only: numpy scalars become Python numbers and booleans (true/false, never strings), statuses
their word, non-finite numbers null. `jsonable` is that one conversion. Nothing here imports a
solver, so fast paths return these objects without loading Pyomo or HiGHS.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import PurePath
from typing import Any

import numpy as np

from .status import Status

SCHEMA_VERSION = 1


def jsonable(obj: Any, strict: bool = False) -> Any:
    """`obj` as JSON types only (dict, list, str, int, float, bool, None), recursively.

    numpy scalars and arrays become Python values (numpy booleans true/false, never the
    string "False"), enums their value, dataclasses dicts of their fields, paths their text,
    non-finite floats None (strict JSON has no Infinity/NaN); anything else its `str`, or a
    TypeError when `strict` (what the CLI uses: an unknown type in a document is a bug to
    fix at its source, not text to guess from). `json.dumps(jsonable(x), allow_nan=False)`
    always works.
    """
    if obj is None or isinstance(obj, str) and not isinstance(obj, Enum):
        return obj
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, Enum):
        return jsonable(obj.value, strict)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, dict):
        return {(k if isinstance(k, str) else str(jsonable(k, strict))): jsonable(v, strict)
                for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [jsonable(v, strict) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist(), strict)
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return jsonable(obj.to_dict(), strict)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name), strict) for f in dataclasses.fields(obj)
                if f.repr}
    if isinstance(obj, PurePath):
        return str(obj)
    if strict:
        raise TypeError(f"no JSON form for {type(obj).__name__}: {obj!r:.80}")
    return str(obj)


def fmt(v: Any, digits: int = 6) -> str:
    """A number for people: 6 significant digits, '-' for None."""
    if v is None:
        return "-"
    if isinstance(v, bool | np.bool_):
        return str(bool(v)).lower()
    if isinstance(v, float | np.floating):
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v != 0 and (abs(v) < 1e-4 or abs(v) >= 1e7):
            return f"{v:.{digits - 2}e}"
        return f"{v:.{digits}g}"
    return str(v)


def fmt_time(seconds: float | None) -> str:
    """Seconds as a short human reading (us, ms, s)."""
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


class _ByKey:
    """Read access by JSON key (`cert["gap"]`, `cert.get("ratio")`): what code written for the
    dict certificates of crowdopt 0.1 needs. The fields are the API; this is a courtesy."""

    def __getitem__(self, key: str) -> Any:
        if key in self._keys():
            return getattr(self, key)
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in self._keys() else default

    def __contains__(self, key: object) -> bool:
        return key in self._keys()

    def _keys(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(self))  # type: ignore[arg-type]


@dataclass(frozen=True, kw_only=True)
class Certificate(_ByKey):
    """The quality claim of one solution: the objective recomputed by the problem's evaluator,
    a bound with its source, lower/upper/gap/ratio, feasibility and the checks that failed.

    `certified` means a feasible solution with a finite objective (and finite bounds) on which
    no check failed; `proven_optimal` that it is certified and the bound meets the objective
    within the relative tolerance written in `tolerances` (a bound on the wrong side of the
    objective is a failure). Without a solution nothing is certified, and nothing failed
    either (`failures` is empty). `solution` is the JSON form (with the
    instance's ids) of the solution certified by `crowdopt.certify`, else None. The claim
    fields are plain Python values from the start; `details` (the method's own record) is
    converted to JSON types by `to_dict()`.
    """

    problem: str
    sense: str
    method: str
    algorithm: str
    status: Status
    objective: float | None = None
    reported_objective: float | None = None
    primal_source: str | None = None
    bound: float | None = None
    bound_source: str | None = None
    lower: float | None = None
    upper: float | None = None
    gap: float | None = None
    rel_gap: float | None = None
    ratio: float | None = None
    proven_optimal: bool = False
    feasible: bool | None = None
    max_violation: float | None = None
    certified: bool = True
    failures: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    times: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    details: dict[str, Any] = field(default_factory=dict, repr=False)
    versions: dict[str, str] = field(default_factory=dict, repr=False)
    problem_size: str | None = None
    instance: str | None = None
    solution: dict | None = field(default=None, repr=False)
    tolerances: dict[str, float] = field(default_factory=dict, repr=False)
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))
        object.__setattr__(self, "failures", tuple(self.failures))
        object.__setattr__(self, "notes", tuple(self.notes))

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (`crowdopt certify --json`, and each method's `certificate`)."""
        out: dict[str, Any] = {"schema_version": self.schema_version}
        for f in dataclasses.fields(self):
            if f.name != "schema_version":
                out[f.name] = getattr(self, f.name)
        return jsonable(out)

    def to_json(self, indent: int | None = 1) -> str:
        """The certificate as JSON text (`crowdopt certify --json`)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def replace(self, **changes: Any) -> Certificate:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    @property
    def verdict(self) -> str:
        """One line for people: NOT certified / proven optimal / the ratio (n/a over a near-zero
        bound), with a warning when the ratio is below `LOOSE_RATIO`."""
        return verdict_text(self.certified, self.failures, self.proven_optimal, self.ratio,
                            self.upper if self.sense != "min" else self.lower, self.status,
                            _uncertified_why(self.certified, self.feasible, self.notes))

    def __str__(self) -> str:
        head = f"{self.problem} certificate ({self.primal_source or self.algorithm})"
        body = (f"lower {fmt(self.lower)}, upper {fmt(self.upper)}, gap {fmt(self.gap)}, "
                f"ratio {fmt(self.ratio)}")
        if self.bound_source:
            body += f", bound from {self.bound_source}"
        return f"{head}: {body}; {self.verdict}"


LOOSE_RATIO = 0.5  # below this ratio the verdict warns that the bound is probably loose
NEAR_ZERO = 1e-9  # a bound this close to 0 gives no meaningful ratio


def verdict_text(certified: bool, failures: Any, proven_optimal: bool, ratio: float | None,
                 bound_side: float | None, status: Any = None, why: str | None = None) -> str:
    """The verdict line of a certificate (also from its JSON dict: `verdict_of`).

    lower == upper (within 1e-7, also 0 == 0) reads 'proven optimal'; a ratio over a bound
    within NEAR_ZERO of 0 reads 'n/a', never a percentage; a ratio below LOOSE_RATIO carries a
    one-line warning that the bound, not the solution, is probably what is weak."""
    if failures:
        return "NOT certified: " + "; ".join(list(failures)[:2])
    if not certified:
        if why:  # a feasible solution about which nothing is claimed, and the reason
            return f"no certificate: {why}"
        return f"no certificate: no feasible solution (status {status or 'unknown'})"
    if proven_optimal:
        if bound_side is not None and bound_side == 0.0:
            return "certified, proven optimal (optimum 0: fewer useful labels than needed)"
        return "certified, proven optimal"
    if ratio is None:
        return "certified, ratio n/a"
    if bound_side is not None and abs(bound_side) <= NEAR_ZERO:
        return "certified, ratio n/a (bound near zero)"
    out = f"certified, ratio {ratio:.4g}"
    if ratio < LOOSE_RATIO:
        out += (f" -- warning: ratio below {LOOSE_RATIO}: the bound is probably loose "
                "(the optimum may be much nearer the solution)")
    return out


def verdict_of(cert: dict) -> str:
    """`verdict_text` of a certificate's JSON form."""
    side = cert.get("lower") if cert.get("sense") == "min" else cert.get("upper")
    return verdict_text(cert["certified"], cert.get("failures", ()), cert["proven_optimal"],
                        cert.get("ratio"), side, cert.get("status"),
                        _uncertified_why(cert["certified"], cert.get("feasible"),
                                         cert.get("notes", ())))


def _uncertified_why(certified: bool, feasible: Any, notes: Any) -> str | None:
    """Why a feasible solution carries no certificate (the first note), else None."""
    return notes[0] if not certified and feasible and notes else None


def _solution_shape(solution: Any) -> str:
    if solution is None:
        return "none"
    if dataclasses.is_dataclass(solution):
        parts = []
        for f in dataclasses.fields(solution):
            v = getattr(solution, f.name)
            shape = getattr(v, "shape", None)
            parts.append(f"{f.name}{list(shape) if shape is not None else ''}")
        return f"{type(solution).__name__}(" + ", ".join(parts) + ")"
    return type(solution).__name__


@dataclass(frozen=True, kw_only=True)
class Result:
    """One method run on one instance (`crowdopt.solve`): status, objective (recomputed by the
    problem's evaluator), the method's own bound, gap, time, the typed solution and its
    certificate. `str(result)` is one line; `summary()` a few; `to_dict()` the CLI's JSON."""

    problem: str
    method: str  # fast | exact | bound | model (a user's Pyomo model, `crowdopt.solve_model`)
    algorithm: str
    status: Status
    objective: float | None = None
    bound: float | None = None
    bound_source: str | None = None
    gap: float | None = None
    time_s: float = 0.0
    message: str = ""
    solution: Any = field(default=None, repr=False, compare=False)
    certificate: Certificate | None = field(default=None, repr=False, compare=False)
    evaluation: Any = field(default=None, repr=False, compare=False)
    details: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    instance: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))

    # ------------------------------------------------------------------ derived
    @property
    def proven_optimal(self) -> bool:
        """Whether the certificate proves the solution optimal."""
        return bool(self.certificate is not None and self.certificate.proven_optimal)

    @property
    def certified(self) -> bool:
        """A feasible, finite solution on which no check failed (no solution: False)."""
        return self.certificate is not None and self.certificate.certified

    @property
    def failed(self) -> bool:
        """Did a check of the certificate fail (not: was there nothing to certify)?"""
        return self.certificate is not None and bool(self.certificate.failures)

    @property
    def ratio(self) -> float | None:
        """The certificate's ratio lower/upper, if any."""
        return self.certificate.ratio if self.certificate is not None else None

    @property
    def sense(self) -> str | None:
        """The problem's sense ('min' or 'max'), if certified."""
        return self.certificate.sense if self.certificate is not None else None

    def solution_dict(self) -> dict | None:
        """The solution's JSON form, with the instance's ids (what `--solution FILE` reads)."""
        if self.solution is None or self.instance is None:
            return None
        return jsonable(self.instance.spec.solution_to_dict(self.instance, self.solution))

    @property
    def size(self) -> str | None:
        """The instance's size line (e.g. 'u=60 M=5 beta=0.05')."""
        if self.instance is None:
            return None
        return self.instance.spec.size(self.instance)

    def replace(self, **changes: Any) -> Result:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------------ output
    def to_dict(self, solution: bool = True) -> dict[str, Any]:
        """The JSON document of `crowdopt solve --json` (each row of `compare` without the
        solution)."""
        out: dict[str, Any] = {
            "problem": self.problem,
            "size": self.size,
            "method": self.method,
            "algorithm": self.algorithm,
            "status": self.status,
            "objective": self.objective,
            "bound": self.bound,
            "bound_source": self.bound_source,
            "gap": self.gap,
            "time_s": self.time_s,
            "message": self.message,
            "certificate": self.certificate.to_dict() if self.certificate is not None else None,
        }
        if solution:
            out["solution"] = self.solution_dict()
        return jsonable(out)

    def to_json(self, indent: int | None = 1, solution: bool = True) -> str:
        """The result as JSON text (`crowdopt solve --json`)."""
        return json.dumps(self.to_dict(solution), indent=indent, allow_nan=False)

    def __str__(self) -> str:
        head = f"{self.problem} {self.method}/{self.algorithm}: {self.status}"
        if self.status in (Status.SKIPPED, Status.ERROR) or (
                self.objective is None and self.message):
            return f"{head}: {self.message}" if self.message else head
        parts = [head]
        if self.objective is not None:
            sense = f" ({self.sense})" if self.sense else ""
            parts.append(f"objective {fmt(self.objective)}{sense}")
        parts.append(f"bound {fmt(self.bound)}" if self.bound is not None else "no bound")
        if self.gap is not None:
            parts.append(f"gap {fmt(self.gap)}" + (" (proven optimal)" if self.proven_optimal
                                                    else ""))
        if self.failed:
            parts.append("NOT certified")
        parts.append(fmt_time(self.time_s))
        return ", ".join(parts)

    def summary(self) -> str:
        """A few lines for people: what ran, the numbers, the certificate's verdict."""
        c = self.certificate
        rows = [("problem", f"{self.problem} ({self.size or '?'})"),
                ("method", f"{self.method} / {self.algorithm}"),
                ("status", str(self.status)),
                ("objective", fmt(self.objective) + (f" ({self.sense})" if self.sense else "")),
                ("bound", fmt(self.bound) + (f" ({self.bound_source})" if self.bound_source
                                             else "")),
                ("gap", fmt(self.gap) + (f" (ratio {fmt(self.ratio)})"
                                         if self.ratio is not None else "")),
                ("time", fmt_time(self.time_s)),
                ("solution", _solution_shape(self.solution))]
        if c is not None:
            verdict = ("proven optimal" if c.proven_optimal else "certified" if c.certified
                       else "NOT certified: " + "; ".join(c.failures) if c.failures
                       else f"none (no feasible solution, status {self.status})")
            rows.append(("certificate", verdict))
            rows += [("note", n) for n in c.notes]
        if self.message:
            rows.append(("message", self.message))
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


@dataclass(frozen=True, kw_only=True)
class Comparison(Sequence):
    """Every method run side by side on one instance (`crowdopt.compare`); each result's gap
    and certificate are measured against the best bound of the run. A sequence of `Result`s.

    warmup_s: one-off costs (imports, first HiGHS solve, the instance's cached matrices) paid
    once before any method was timed, so the first method timed carries none of them.
    """

    problem: str
    size: str | None
    results: tuple[Result, ...]
    bound: float | None = None
    bound_source: str | None = None
    warmup_s: float = 0.0

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, k: Any) -> Any:
        return self.results[k]

    def __iter__(self) -> Iterator[Result]:
        return iter(self.results)

    def by_algorithm(self) -> dict[str, Result]:
        """The results by algorithm name."""
        return {r.algorithm: r for r in self.results}

    @property
    def best(self) -> Result | None:
        """The best certified feasible result (ties: the first, i.e. fast paths first)."""
        best = None
        for r in self.results:
            if r.objective is None or r.evaluation is None or not r.evaluation.feasible:
                continue
            sense = r.sense or "min"
            if best is None or (r.objective < best.objective if sense == "min"
                                else r.objective > best.objective):
                best = r
        return best

    @property
    def proven(self) -> bool:
        """Does the run's best bound close the gap of its best solution?"""
        b = self.best
        return b is not None and b.gap == 0.0 and b.certified

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of `crowdopt compare --json`; `best` names the best certified
        feasible result and carries its solution (what `certify --solution` reads)."""
        best = self.best
        return jsonable({"problem": self.problem, "size": self.size, "bound": self.bound,
                         "bound_source": self.bound_source, "warmup_s": self.warmup_s,
                         "best": None if best is None else {
                             "algorithm": best.algorithm, "objective": best.objective,
                             "solution": best.solution_dict()},
                         "results": [r.to_dict(solution=False) for r in self.results]})

    def to_json(self, indent: int | None = 1) -> str:
        """The comparison as JSON text (`crowdopt compare --json`)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def table(self) -> str:
        """The comparison as a plain-text table."""
        rows = [[r.method, r.algorithm, str(r.status), fmt(r.objective), fmt(r.bound),
                 fmt(r.gap), fmt(r.ratio), fmt(r.time_s)] for r in self.results]
        head = ["method", "algorithm", "status", "objective", "bound", "gap", "ratio", "time_s"]
        widths = [max([len(h)] + [len(row[k]) for row in rows]) for k, h in enumerate(head)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)),
                 "  ".join("-" * w for w in widths)]
        lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in rows]
        return "\n".join(lines)

    def __str__(self) -> str:
        return f"{self.problem} ({self.size})\n{self.table()}"
