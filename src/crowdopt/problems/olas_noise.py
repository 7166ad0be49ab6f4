"""OLAS noise functions eps(a, e) and predictive entropy (paper 000, Sec. 3.1, 4.1, eq. 1).

A noise function gives the probability that labeler accuracy `a` on a point of entropy `e`
returns a wrong label. The paper's theorems need only: non-increasing in `a`, non-decreasing in
`e`. Every noise function here is vectorized (numpy broadcasting) and can be checked for that
monotonicity on a grid (`check_monotone`), which rejects an invalid one with a clear error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..validate import choice, real, real_text

TINY = 1e-15  # values below are clipped to 0 before a MILP is built (digest 000, section 7.18)


class NoiseFunction:
    """Base: `eps(a, e)` broadcasts; `to_spec()` gives the JSON form; `domain_e` the valid e range."""

    name = "noise"
    max_entropy: float | None = 1.0  # NM1/NM2 are defined for e in [0, 1] only

    def eps(self, a: Any, e: Any) -> np.ndarray:
        """The noise eps(a, e) of accuracy a and entropy e (broadcast)."""
        raise NotImplementedError

    def __call__(self, a: Any, e: Any) -> np.ndarray:
        return self.eps(a, e)

    def matrix(self, a: np.ndarray, e: np.ndarray) -> np.ndarray:
        """eps for every (labeler i, point j): shape (len(a), len(e))."""
        return self.eps(np.asarray(a, float)[:, None], np.asarray(e, float)[None, :])

    def to_spec(self) -> Any:
        """The JSON form that `noise_from_spec` reads back."""
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class LinearNoise(NoiseFunction):
    """Noise Model 1: eps(a, e) = e (1 - a)."""

    name = "linear"

    def eps(self, a: Any, e: Any) -> np.ndarray:
        """eps = e (1 - a)."""
        return np.asarray(e, float) * (1.0 - np.asarray(a, float))

    def to_spec(self) -> str:
        """The JSON form: 'linear'."""
        return "linear"


@dataclass(frozen=True, eq=False)
class SuperellipseNoise(NoiseFunction):
    """Noise Model 2 (digest 000 section 2.5), endpoints defined so that it stays monotone.

    e <= 1/2, p = 2e:      eps = (1 - a^p)^(1/p);     eps(a, 0) = 0 for a > 0, eps(0, 0) = 1.
    e >  1/2, q = 2(1-e):  eps = 1 - (1 - (1-a)^q)^(1/q);  eps(a, 1) = 1 for a < 1, eps(1, 1) = 0.
    Computed through expm1/log so that tiny values underflow cleanly to 0.
    """

    name = "superellipse"

    def eps(self, a: Any, e: Any) -> np.ndarray:
        """Noise Model 2, the superellipse (digest 000 section 2.5)."""
        a, e = np.broadcast_arrays(np.asarray(a, float), np.asarray(e, float))
        out = np.empty(a.shape, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            low = e <= 0.5
            p = 2.0 * e
            # (1 - a^p)^(1/p) = exp(log(-expm1(p ln a)) / p)
            base = -np.expm1(p * np.log(a))
            lo_val = np.exp(np.log(base) / p)
            q = 2.0 * (1.0 - e)
            base2 = -np.expm1(q * np.log1p(-a))
            hi_val = 1.0 - np.exp(np.log(base2) / q)
            out = np.where(low, lo_val, hi_val)
            # endpoints
            out = np.where((e == 0.0) & (a > 0.0), 0.0, out)
            out = np.where((e == 0.0) & (a == 0.0), 1.0, out)
            out = np.where((e == 1.0) & (a < 1.0), 1.0, out)
            out = np.where((e == 1.0) & (a == 1.0), 0.0, out)
            out = np.where((a == 1.0), 0.0, out)
            out = np.where((a == 0.0) & (e > 0.0), 1.0, out)
        out = np.nan_to_num(out, nan=0.0)
        return np.clip(out, 0.0, 1.0)

    def to_spec(self) -> str:
        """The JSON form: 'superellipse'."""
        return "superellipse"


@dataclass(frozen=True, eq=False)
class LogisticNoise(NoiseFunction):
    """Fitted noise (Sec. 3.4): eps(a, e) = 1 - sigmoid(w0 + we*e + wa*a); valid iff we<=0<=wa."""

    w0: float
    we: float
    wa: float
    name = "logistic"
    max_entropy = None  # any e >= 0

    def eps(self, a: Any, e: Any) -> np.ndarray:
        """eps = sigmoid(w0 + we e + wa a)."""
        z = self.w0 + self.we * np.asarray(e, float) + self.wa * np.asarray(a, float)
        # 1 - sigmoid(z) = sigmoid(-z), computed stably
        return np.exp(-np.logaddexp(0.0, z))

    def to_spec(self) -> dict:
        """The JSON form: the logistic weights."""
        return {"type": "logistic", "w0": self.w0, "we": self.we, "wa": self.wa}


class CallableNoise(NoiseFunction):
    """Any user function eps(a, e) (vectorized or not); checked for monotonicity on creation."""

    name = "callable"
    max_entropy = None

    def __init__(self, fn: Callable[[Any, Any], Any], *, check: bool = True, max_entropy: float = 1.0):
        self.fn = fn
        self.max_entropy = max_entropy
        if check:
            check_monotone(self, e_max=max_entropy)

    def eps(self, a: Any, e: Any) -> np.ndarray:
        """The user's function (elementwise when it does not take arrays)."""
        a, e = np.broadcast_arrays(np.asarray(a, float), np.asarray(e, float))
        try:
            out = np.asarray(self.fn(a, e), dtype=float)
            if out.shape != a.shape:
                raise ValueError
        except Exception:
            vec = np.vectorize(lambda x, y: float(self.fn(float(x), float(y))))
            try:
                out = vec(a, e)
            except Exception as exc:  # a user function that fails is bad input, not a crash
                raise InputError("noise", "a function eps(a, e) returning a number",
                                 f"{type(exc).__name__}: {exc}") from None
        return out

    def to_spec(self) -> Any:
        """Refused: a Python function has no JSON form."""
        raise InputError("noise", "a serializable noise model (linear, superellipse, logistic)",
                         "a Python callable")


def check_monotone(noise: NoiseFunction, *, grid: int = 101, e_max: float | None = 1.0,
                   tol: float = 1e-12) -> None:
    """Raise InputError unless eps is in [0,1], non-increasing in a and non-decreasing in e."""
    e_hi = 1.0 if e_max is None else float(e_max)
    a = np.linspace(0.0, 1.0, grid)
    e = np.linspace(0.0, e_hi, grid)
    vals = noise.matrix(a, e)  # rows: a, columns: e
    bad = ~np.isfinite(vals)
    if bad.any():
        raise InputError("noise", "values in [0, 1]",
                         f"{int(bad.sum())} non-finite value(s) on the {grid}x{grid} check grid")
    if vals.min() < -tol or vals.max() > 1 + tol:
        raise InputError("noise", "values in [0, 1]", f"range [{vals.min():.3g}, {vals.max():.3g}]")
    da = np.diff(vals, axis=0)
    if da.max(initial=-np.inf) > tol:
        i, j = np.unravel_index(np.argmax(da), da.shape)
        raise InputError("noise", "eps non-increasing in accuracy",
                         f"eps({a[i]:.3g},{e[j]:.3g})={vals[i, j]:.4g} < eps({a[i + 1]:.3g},{e[j]:.3g})={vals[i + 1, j]:.4g}")
    de = np.diff(vals, axis=1)
    if de.min(initial=np.inf) < -tol:
        i, j = np.unravel_index(np.argmin(de), de.shape)
        raise InputError("noise", "eps non-decreasing in entropy",
                         f"eps({a[i]:.3g},{e[j]:.3g})={vals[i, j]:.4g} > eps({a[i]:.3g},{e[j + 1]:.3g})={vals[i, j + 1]:.4g}")


_NAMES = {"linear": LinearNoise, "nm1": LinearNoise, "superellipse": SuperellipseNoise,
          "nm2": SuperellipseNoise}


def noise_from_spec(spec: Any, field: str = "noise") -> NoiseFunction:
    """'linear' | 'superellipse' (aliases nm1, nm2) | {'type': 'logistic', 'w0', 'we', 'wa'}."""
    if isinstance(spec, NoiseFunction):
        return spec
    if callable(spec):
        return CallableNoise(spec)
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key.startswith("logistic:"):
            parts = key.split(":", 1)[1].split(",")
            if len(parts) != 3:
                raise InputError(field, "'logistic:w0,we,wa'", spec)
            w = [real_text(p, f"{field} ({name} in {spec!r})")
                 for p, name in zip(parts, ("w0", "we", "wa"), strict=True)]
            return _logistic(*w, field=field)
        choice(key, field, sorted(_NAMES))
        return _NAMES[key]()
    if isinstance(spec, Mapping):
        kind = choice(spec.get("type"), f"{field}.type", ["linear", "superellipse", "logistic"])
        if kind != "logistic":
            return _NAMES[kind]()
        w = [real(spec.get(k), f"{field}.{k}") for k in ("w0", "we", "wa")]
        return _logistic(*w, field=field)
    raise InputError(field, "'linear', 'superellipse' or a logistic object", spec)


def _logistic(w0: float, we: float, wa: float, field: str) -> LogisticNoise:
    if we > 0 or wa < 0:
        raise InputError(field, "a monotone logistic model (we <= 0 <= wa)", f"we={we}, wa={wa}")
    return LogisticNoise(float(w0), float(we), float(wa))


def entropy(probs: Any, normalize: str = "none") -> np.ndarray:
    """Predictive entropy per row of a probability matrix (eq. 1, natural log, 0 ln 0 = 0).

    normalize='lnC' divides by ln C so that e is in [0, 1] for any number of classes C.
    """
    P = np.asarray(probs, dtype=float)
    if P.ndim != 2:
        raise InputError("probabilities", "a 2-d matrix (points x classes)", f"{P.ndim}-d")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)
    e = -terms.sum(axis=1)
    choice(normalize, "entropy_normalize", ["none", "lnC"])
    if normalize == "lnC":
        C = P.shape[1]
        e = e / math.log(C) if C > 1 else np.zeros_like(e)
        # e / ln C <= 1 in exact arithmetic; rounding gives 1 + 2^-52 for some C (e.g. 36 uniform
        # classes), which NM1/NM2 would reject as out of range
        e = np.minimum(e, 1.0)
    return np.maximum(e, 0.0)
