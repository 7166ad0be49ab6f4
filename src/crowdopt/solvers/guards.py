"""Time guards of the exact methods: a prediction of a method's CPU seconds from the instance's
size figures (rows, columns, nonzeros of its model and the shape parameters that matter), fitted
by benchmarks/bench_guards.py over several instance shapes per method.

log(seconds) = c0 + sum_i c_i * feature_i, least squares in log space; the coefficients live in
crowdopt/data/guards.json (`bench_guards.py --write` rewrites it, `--check` compares). A method
whose predicted time exceeds its limit (`GUARD_LIMIT_S`, the default MILP limit) is refused
with the prediction in the message, so `exact` falls through to the next method; `force=True`
(`--force`) runs it anyway under the time limit. Memory guards (a table too large to hold) are
not here: they stay in each solver's `applicable` and refuse whatever `force` says.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

from ..problems.catalogue import MILP_DEFAULT_TIME

GUARD_FILE = "guards.json"
GUARD_LIMIT_S = MILP_DEFAULT_TIME  # a method predicted to need more is refused (unless forced)
# Memory of a Pyomo-built MILP (model + compile + HiGHS), peak RSS growth per nonzero with a 3 s
# limit (force): cltap milp-compact 0.197 KB (t=100, a=30, K=100), olas-assign milp-epigraph
# 0.226 (N=20,000, M=17), olas-select milp-compact 0.208 (u=20,000, M=17), milp-literal 0.207
# (M=12, u=200). A memory guard refuses past MEMORY_MAX_GB whatever --force says.
KB_PER_NNZ = 0.25
MEMORY_MAX_GB = 8.0


# ----------------------------------------------------------------------------- size figures
# Each returns the model's size figures (rows, cols, nnz as the formulation builds them; nominal
# where presolve or the emitter drops entries) and the shape parameters of the instance.
def _olas_assign_epigraph(inst: Any) -> dict[str, float]:
    """Model 2 (2a)-(2d): z[labeler, point] binaries + eta; epigraph and once rows per point,
    capacity rows per labeler."""
    M, N = inst.n_labelers, inst.n_points
    return {"rows": 2 * N + M, "cols": M * N + 1, "nnz": 3 * M * N + N, "M": M, "N": N}


def _olas_select_literal(inst: Any) -> dict[str, float]:
    """Model 10 with pairwise (10e): u*M pair binaries, M(M-1)/2 * u(u-1)/2 nominal rows; sel =
    the most points a solution can select (capacity, budget), which sets how hard it is."""
    M, u = inst.n_labelers, inst.n_points
    rows = M * (M - 1) // 2 * (u * (u - 1) // 2) + u + 3 * M
    return {"rows": rows, "cols": u * M + M, "nnz": 2 * rows + u * M, "M": M, "u": u,
            "sel": inst.max_selected}


def _olas_select_compact(inst: Any) -> dict[str, float]:
    """The compact w-formulation: u*M pair binaries, u rank variables, two rows per pair."""
    M, u = inst.n_labelers, inst.n_points
    return {"rows": 2 * u * M + u + M, "cols": u * M + u, "nnz": 7 * u * M + 2 * u,
            "M": M, "u": u, "sel": inst.max_selected}


def _labeler_set_milp(inst: Any) -> dict[str, float]:
    """P1 (MV): margin DP with ~M^2 q/z columns and ~4 M^2 rows; P2 (WMV): two binaries and
    three rows per vote pattern (2^M of them), M terms per row."""
    M = inst.n_labelers
    if inst.rule == "mv":
        return {"rows": 5 * M * M, "cols": 2 * M * M + 4 * M, "nnz": 16 * M * M, "M": M}
    P = 2 ** M
    return {"rows": 3 * P, "cols": 2 * P + M, "nnz": 2 * P * (M + 2), "M": M}


def _labeler_set_enumeration(inst: Any) -> dict[str, float]:
    """Every subset of the M labelers, each scored by an O(M) recursion: 2^M * M work."""
    M = inst.n_labelers
    return {"rows": 0, "cols": 0, "nnz": 0, "sets": 2 ** M, "M": M}


def _worker_select_a(inst: Any) -> dict[str, float]:
    """Formulation A: y[k] and z[worker, k] (M*B + B binaries); card, link (and budget) rows."""
    M, B = inst.n_workers, inst.cap
    costs = bool(inst.has_costs)
    rows = 1 + B + M * B + (B if costs else 0)
    nnz = B + (M * B + B) + 2 * M * B + ((M * B + B) if costs else 0)
    return {"rows": rows, "cols": M * B + B, "nnz": nnz, "M": M, "B": B, "costs": int(costs)}


def _worker_select_compact(inst: Any) -> dict[str, float]:
    """The compact McCormick model: z, v per worker, y[k], r; three rows per worker."""
    M, B = inst.n_workers, inst.cap
    costs = bool(inst.has_costs)
    return {"rows": 3 + 3 * M + int(costs), "cols": B + 2 * M + 1,
            "nnz": 3 * B + 8 * M + (M if costs else 0), "M": M, "B": B, "costs": int(costs)}


def _cltap_compact(inst: Any) -> dict[str, float]:
    """The compact CL-TAP MILP: t*a*K assignment binaries; rising = the share of annotators'
    consecutive labels whose accuracy rises, learning = 1 past a quarter (a crowd that learns,
    monotone or not, proves far more slowly: bench_guards.py)."""
    n = inst.t * inst.a * inst.K
    steps = inst.p[:, 1:] - inst.p[:, :-1]
    rising = float((steps > 0).mean()) if steps.size else 0.0
    return {"rows": inst.t + inst.a * inst.K + inst.t * inst.a, "cols": n, "nnz": 3 * n,
            "t": inst.t, "a": inst.a, "K": inst.K, "b": inst.b, "bt": inst.b / inst.t,
            "rising": rising,
            "learning": int(rising > 0.25)}


def _cltap_heads(inst: Any) -> dict[str, float]:
    """The head-cover CL-TAP model: a K heads, a(a-1)/2 K^2 links (label pairs of two
    annotators), a K prefix columns; rising and learning as in the compact model (a crowd
    whose curves fall or stay flat is mostly proven by its start or in a few steps, a learning
    one needs the search: two fits, bench_guards.py)."""
    links = inst.a * (inst.a - 1) // 2 * inst.K ** 2
    fig = _cltap_compact(inst)
    return {"rows": 2 * links + 3 * inst.a * inst.K, "cols": links + 2 * inst.a * inst.K,
            "nnz": 4 * links + 4 * inst.a * inst.K, "links": links, "t": inst.t, "a": inst.a,
            "K": inst.K, "bt": fig["bt"], "rising": fig["rising"], "learning": fig["learning"]}


# (problem, algorithm) -> a key function (the variant of the method a fit is kept for: a vote
# rule; uniform costs or none, where the MV MILP proves far more slowly: 9-12 s at M = 13
# against 0.3 s with varying costs, bench_guards.py; costs or not) and the size figures
FIGURES: dict[tuple[str, str], tuple[Callable[[Any], str], Callable[[Any], dict]]] = {
    ("olas-assign", "milp-epigraph"): (lambda i: "", _olas_assign_epigraph),
    ("olas-select", "milp-literal"): (lambda i: "", _olas_select_literal),
    ("olas-select", "milp-compact"): (lambda i: "", _olas_select_compact),
    ("labeler-set", "milp"): (lambda i: i.rule + ("-uniform" if i.uniform_costs else ""),
                              _labeler_set_milp),
    ("labeler-set", "enumeration"): (lambda i: i.rule, _labeler_set_enumeration),
    ("worker-select", "milp-a"): (lambda i: "costs" if i.has_costs else "",
                                  _worker_select_a),
    ("worker-select", "milp-compact"): (lambda i: "", _worker_select_compact),
    ("cltap", "milp-compact"): (lambda i: "", _cltap_compact),
    ("cltap", "head-cover"): (lambda i: "learning" if _cltap_compact(i)["learning"] else "",
                              _cltap_heads),
}


def guard_key(problem: str, algorithm: str, inst: Any) -> str:
    """'problem/algorithm' or 'problem/algorithm/variant': the fit an instance is predicted by."""
    variant = FIGURES[(problem, algorithm)][0](inst)
    return f"{problem}/{algorithm}" + (f"/{variant}" if variant else "")


def figures(problem: str, algorithm: str, inst: Any) -> dict[str, float]:
    """The size figures of the method's model on this instance (no model is built)."""
    return FIGURES[(problem, algorithm)][1](inst)


def feature(name: str, fig: dict[str, float]) -> float:
    """One regressor: 'log:X' = ln X (X >= 1), else the figure itself."""
    if name.startswith("log:"):
        return math.log(max(float(fig[name[4:]]), 1.0))
    return float(fig[name])


# ----------------------------------------------------------------------------- prediction
@cache
def coefficients() -> dict[str, dict]:
    """The committed fit: key -> {"features": [...], "coef": [c0, c1, ...], ...}."""
    text = resources.files("crowdopt").joinpath("data", GUARD_FILE).read_text("utf-8")
    return json.loads(text)["fits"]


def predict_from(fit: dict, fig: dict[str, float]) -> float:
    """Predicted CPU seconds of one fit at these size figures."""
    c = fit["coef"]
    z = c[0] + sum(ci * feature(f, fig) for ci, f in zip(c[1:], fit["features"], strict=True))
    return math.exp(min(z, 700.0))


def predict(problem: str, algorithm: str, inst: Any) -> float | None:
    """Predicted CPU seconds of the method on this instance (None: no fit for it)."""
    fit = coefficients().get(guard_key(problem, algorithm, inst))
    if fit is None:
        return None
    return predict_from(fit, figures(problem, algorithm, inst))


def memory_guard(problem: str, algorithm: str, inst: Any) -> str | None:
    """None if the method's Pyomo model fits in MEMORY_MAX_GB (KB_PER_NNZ per nonzero), else
    why not, starting 'memory:' (--force does not lift it)."""
    nnz = figures(problem, algorithm, inst)["nnz"]
    gb = nnz * KB_PER_NNZ / 2 ** 20
    if gb <= MEMORY_MAX_GB:
        return None
    return (f"memory: the model has {nnz:,.0f} nonzeros, ~{gb:.3g} GB > {MEMORY_MAX_GB:g} GB "
            f"at {KB_PER_NNZ:g} KB each")


def time_guard(problem: str, algorithm: str, inst: Any) -> str | None:
    """None if the method is predicted to finish within GUARD_LIMIT_S, else why not."""
    t = predict(problem, algorithm, inst)
    if t is None or t <= GUARD_LIMIT_S:
        return None
    fig = figures(problem, algorithm, inst)
    shown = ", ".join(f"{k} {v:,.0f}" if v >= 1 else f"{k} {v:.2g}" for k, v in fig.items() if v)
    return (f"predicted {t:.3g} s > {GUARD_LIMIT_S:g} s ({shown}; fitted by "
            "bench_guards.py); --force runs it anyway under the time limit")
