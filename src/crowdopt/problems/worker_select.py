"""Worker selection (paper 004, Li & Liu, eqs. 7 and 11): pick a small set of good workers.

Maximize F_hat(S) = sum_{i in S} G_i / sqrt(|S|) subject to 1 <= |S| <= K (eq. 11; the empty set
is excluded, digest 2.1). G_i is a per-worker score (problems/worker_scores.py: the unbiased
Theorem 3 score or the plugin one). Extension (digest 2.6, not in the paper): integer costs c_i
and a money budget C, sum_{i in S} c_i <= C.

This module holds the typed instance, its validation, the ONE evaluator (objective, feasibility,
and the Theorem 1 error bound at the objective), the shared tie tolerance and the generator.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError
from ..validate import (
    MAX_ITEMS,
    choice,
    ids,
    int_array,
    integer,
    only_known_fields,
    plain,
    probability_array,
    real,
    real_array,
    solution_entries,
    solution_object,
)
from .catalogue import (
    MILP_DEFAULT_TIME,
    Evaluation,
    Lazy,
    Method,
    ProblemInstance,
    ProblemSpec,
    predicted_memory_guard,
    predicted_time_guard,
)
from .worker_scores import ESTIMATORS, scores

BOUND_CONSTANTS = ("paper", "rigorous")


def tie_tol(best: float) -> float:
    """The one tie tolerance (digest 2.5) shared by Algorithm 1, the DP and the MILP 2nd pass:
    relative to |F*| only (the digest's floor max(1, |F*|) made every set a tie once scores
    are below 1e-9, so the chosen set changed with the unit of the scores)."""
    return 1e-9 * abs(best) + 1e-300


@dataclass(frozen=True, eq=False)
class WorkerSelectInstance(ProblemInstance):
    """Eq. 11: scores G_i, K, the number of classes L; optional costs and budget (digest 2.6)."""

    problem: ClassVar[str] = "worker-select"

    scores: np.ndarray  # G_i, shape (M,); may be negative
    classes: int  # L >= 2
    max_workers: int  # K >= 1
    w_hat: np.ndarray | None = None  # estimated reliabilities (when G was computed from them)
    n: np.ndarray | None = None  # gold questions per worker, shape (M,)
    estimator: str | None = None  # 'unbiased' | 'plugin' | None (scores given directly)
    costs: np.ndarray | None = None  # integer costs >= 0 (extension, digest 2.6)
    budget: int | None = None
    worker_ids: list | None = None

    @classmethod
    def from_arrays(cls, max_workers: Any, *, scores: Any = None, w_hat: Any = None,
                    n: Any = None, classes: Any = 2, estimator: Any = "unbiased",
                    costs: Any = None, budget: Any = None,
                    worker_ids: Any = None) -> WorkerSelectInstance:
        """Eq. 11 from plain data: the cap K = max_workers and either the scores G_i
        (`scores`) or estimated reliabilities `w_hat` with `n` gold questions (one integer or
        one per worker), from which G_i is computed by `estimator` (Theorem 3 'unbiased' or
        'plugin'); optional integer costs with a budget, optional worker ids. Validated like
        an instance file (one-line InputError)."""
        return make_instance(max_workers=max_workers, classes=classes, scores_=scores,
                             w_hat=w_hat, n=n, estimator=estimator, costs=costs,
                             budget=budget, worker_ids=worker_ids)

    @property
    def n_workers(self) -> int:
        """Number of workers."""
        return len(self.scores)

    @property
    def cap(self) -> int:
        """B = min(K, M): the largest admissible |S|."""
        return min(self.max_workers, self.n_workers)

    @property
    def has_costs(self) -> bool:
        """Whether the instance has costs and a budget."""
        return self.costs is not None


@dataclass(frozen=True, eq=False)
class WorkerSelectSolution:
    selected: np.ndarray  # worker indices, sorted ascending


def make_instance(*, max_workers: Any, classes: Any = 2, scores_: Any = None, w_hat: Any = None,
                  n: Any = None, estimator: Any = "unbiased", costs: Any = None,
                  budget: Any = None, worker_ids: Any = None) -> WorkerSelectInstance:
    """Validated instance: either `scores_` (G given) or `w_hat` + `n` (+ estimator)."""
    L = integer(classes, "classes", lo=2)
    K = integer(max_workers, "max_workers", lo=1)
    if (scores_ is None) == (w_hat is None):
        raise InputError("scores / w_hat", "exactly one of them", "both" if scores_ is not None
                         else "neither")
    est = None
    w = nn = None
    if scores_ is not None:
        x = real_array(scores_, "scores", min_len=1)
    else:
        est = choice(estimator, "estimator", ESTIMATORS)
        w = probability_array(w_hat, "w_hat", min_len=1)
        if n is None:
            raise InputError("n", "the number of gold questions (an integer or one per worker)",
                             "nothing")
        lo = 2 if est == "unbiased" else 1
        if isinstance(n, list | tuple | np.ndarray):
            nn = int_array(n, "n", lo=lo, length=len(w))
        else:
            nn = np.full(len(w), integer(n, "n", lo=lo), dtype=np.int64)
        x = scores(w, nn, L, est)
    M = len(x)
    c = C = None
    if (costs is None) != (budget is None):
        raise InputError("costs / budget", "both or neither", "only costs" if costs is not None
                         else "only budget")
    if costs is not None:
        c = int_array(costs, "costs", lo=0, length=M)
        C = integer(budget, "budget", lo=0)
    wid = ids(worker_ids, "worker_ids", M) if worker_ids is not None else None
    return WorkerSelectInstance(x, L, K, w, nn, est, c, C, wid)


_FIELDS = {"scores", "w_hat", "n", "estimator", "classes", "max_workers", "costs", "budget",
           "worker_ids", "name"}


def from_dict(d: dict) -> WorkerSelectInstance:
    """The instance of an instance file's fields, validated."""
    only_known_fields(d, _FIELDS, "worker-select")
    if "max_workers" not in d:
        raise InputError("max_workers", "an integer K >= 1 (the field is required)", "nothing")
    return make_instance(max_workers=d["max_workers"], classes=d.get("classes", 2),
                         scores_=d.get("scores"), w_hat=d.get("w_hat"), n=d.get("n"),
                         estimator=d.get("estimator", "unbiased"), costs=d.get("costs"),
                         budget=d.get("budget"), worker_ids=d.get("worker_ids"))


def to_dict(inst: WorkerSelectInstance) -> dict:
    """The instance file's fields of an instance."""
    out: dict[str, Any] = {"classes": inst.classes, "max_workers": inst.max_workers}
    if inst.w_hat is not None:
        out["estimator"] = inst.estimator
        out["w_hat"] = inst.w_hat.tolist()
        n = inst.n.tolist()
        out["n"] = n[0] if len(set(n)) == 1 else n
    else:
        out["scores"] = inst.scores.tolist()
    if inst.costs is not None:
        out["costs"] = inst.costs.tolist()
        out["budget"] = inst.budget
    if inst.worker_ids is not None:
        out["worker_ids"] = inst.worker_ids
    return out


# ----------------------------------------------------------------------------- the evaluator
def set_value(x: np.ndarray, selected: np.ndarray) -> float:
    """F_hat(S) = sum_{i in S} x_i / sqrt(|S|) (eq. 7); S must be non-empty."""
    return float(np.sum(x[selected]) / math.sqrt(len(selected)))


def error_bound(F: float, classes: int, constant: str = "paper") -> float:
    """Theorem 1 (eq. 4) at score F, taken at max(F, 0) and capped at 1 (digest E2).

    'paper': exp(-2F^2 / (L^2 (L-1)^2) + ln(L-1)) as stated; 'rigorous': the corrected
    Hoeffding range of digest E1, exp(-F^2 / (2 (L-1)^4) + ln(L-1)). They agree at L = 2.
    """
    f = max(float(F), 0.0)
    L = float(classes)
    if constant == "paper":
        e = -2.0 * f * f / (L * L * (L - 1) ** 2)
    elif constant == "rigorous":
        e = -f * f / (2.0 * (L - 1) ** 4)
    else:
        raise InputError("constant", "one of " + ", ".join(BOUND_CONSTANTS), constant)
    return min(1.0, math.exp(e + math.log(L - 1)))


def ci_halfwidth(n: int, classes: int, alpha: float = 1.0) -> float:
    """Theorem 3: F(S) lies within n (L-1)^2 alpha / (n-1) of F_hat(S) w.p. >= 1 - 2e^{-2 alpha^2}
    (for a fixed S; the selected S* carries a winner's-curse bias, digest E3)."""
    return n * (classes - 1) ** 2 * alpha / (n - 1)


def evaluate(inst: WorkerSelectInstance, sol: WorkerSelectSolution) -> Evaluation:
    """Objective F_hat(S) (eq. 7); feasibility 1 <= |S| <= K (eq. 11), sum c <= C (extension)."""
    s = np.asarray(sol.selected)
    if s.ndim != 1 or (s.size and not np.issubdtype(s.dtype, np.integer)):
        return Evaluation(-math.inf, False, math.inf, ["selected must be a list of worker indices"])
    violations: list[str] = []
    worst = 0.0
    bad = (s < 0) | (s >= inst.n_workers)
    if bad.any():
        return Evaluation(-math.inf, False, math.inf,
                          [f"{int(bad.sum())} selected index(es) out of range 0..{inst.n_workers - 1}"])
    if len(np.unique(s)) != len(s):
        violations.append("a worker is selected twice")
        worst = max(worst, float(len(s) - len(np.unique(s))))
        s = np.unique(s)
    k = len(s)
    if k == 0:
        return Evaluation(-math.inf, False, 1.0, ["empty set: F_hat is undefined, |S| >= 1 (eq. 11)"])
    if k > inst.max_workers:
        violations.append(f"|S| = {k} exceeds the cap K = {inst.max_workers} (eq. 11)")
        worst = max(worst, float(k - inst.max_workers))
    spent = None
    if inst.costs is not None:
        spent = int(inst.costs[s].sum())
        if spent > inst.budget:
            violations.append(f"cost {spent} exceeds the budget {inst.budget}")
            worst = max(worst, float(spent - inst.budget))
    F = set_value(inst.scores, s)
    extra: dict[str, Any] = {
        "size": k,
        "cost": spent,
        "error_bound": error_bound(F, inst.classes, "paper"),
        "error_bound_rigorous": error_bound(F, inst.classes, "rigorous"),
    }
    if inst.n is not None and len(set(inst.n.tolist())) == 1 and int(inst.n[0]) >= 2:
        extra["ci_halfwidth_alpha1"] = ci_halfwidth(int(inst.n[0]), inst.classes, 1.0)
    return Evaluation(F, not violations, worst, violations, extra)


def solution_from_dict(inst: WorkerSelectInstance, d: dict) -> WorkerSelectSolution:
    """The one reader of a worker-select solution: {'selected': [workers, each once],
    'size': optional, = len(selected)}, worker ids (exact type) when the instance names its
    workers, else 0-based positions (`crowdopt schema solution-worker-select`)."""
    d = solution_object(d, "solution", ("selected",), ("size",))
    out = solution_entries(d["selected"], "solution.selected", inst.worker_ids, inst.n_workers,
                           "worker", unique=True)
    if "size" in d and (type(plain(d["size"])) is not int or d["size"] != len(out)):
        raise InputError("solution.size", f"{len(out)} (the number of selected workers) or "
                         "no size", d["size"])
    return WorkerSelectSolution(np.sort(out))


def solution_to_dict(inst: WorkerSelectInstance, sol: WorkerSelectSolution) -> dict:
    """The JSON form of a solution (what `solution_from_dict` reads): worker ids where given."""
    sel = [int(i) for i in sol.selected]
    out: dict[str, Any] = {"size": len(sel)}
    out["selected"] = [inst.worker_ids[i] for i in sel] if inst.worker_ids is not None else sel
    return out


# ----------------------------------------------------------------------------- generator
GENERATOR_PARAMS = {
    "workers": 12,
    "max_workers": 6,
    "classes": 2,
    "gold": 10,  # n, gold questions per worker
    "beta_a": 2.3,  # true reliability w ~ Beta(beta_a, beta_b) (paper Fig. 1)
    "beta_b": 2.0,
    "estimator": "unbiased",
    "cost_max": 0,  # > 0: integer costs uniform on 1..cost_max (extension)
    "budget_share": 0.25,  # budget = max(min cost, round(share * sum of costs))
}


def generate(seed: int = 0, **params: Any) -> WorkerSelectInstance:
    """One-coin workers: w ~ Beta(a, b), c ~ Binomial(n, w), w_hat = c/n (G has ties)."""
    p = {**GENERATOR_PARAMS, **params}
    M = integer(p["workers"], "workers", lo=1, hi=MAX_ITEMS)
    K = integer(p["max_workers"], "max_workers", lo=1)
    L = integer(p["classes"], "classes", lo=2)
    n = integer(p["gold"], "gold", lo=1)
    a = real(p["beta_a"], "beta_a", lo=0.0, lo_open=True)
    b = real(p["beta_b"], "beta_b", lo=0.0, lo_open=True)
    cmax = integer(p["cost_max"], "cost_max", lo=0)
    share = real(p["budget_share"], "budget_share", lo=0.0, hi=1.0)
    rng = np.random.default_rng(seed)
    w = rng.beta(a, b, M)
    c = rng.binomial(n, w)
    costs = budget = None
    if cmax > 0:
        costs = rng.integers(1, cmax + 1, M)
        budget = max(int(costs.min()), int(round(share * costs.sum())))
    return make_instance(max_workers=K, classes=L, w_hat=c / n, n=n, estimator=p["estimator"],
                         costs=costs, budget=budget)


def example() -> WorkerSelectInstance:
    """The demo instance: the paper's Fig. 1 pool (31 workers, n = 10, K = 31), seeded."""
    return generate(4, workers=31, max_workers=31)


def size(inst: WorkerSelectInstance) -> str:
    """The instance's size line."""
    s = f"M={inst.n_workers} K={inst.max_workers}"
    if inst.costs is not None:
        s += f" C={inst.budget}"
    return s


# The catalogue entry; its methods live in solvers/worker_select.py and load on first use.
_SOLVERS = "crowdopt.solvers.worker_select:"

SPEC = ProblemSpec.from_module(
    sys.modules[__name__],
    name="worker-select",
    title="Worker selection: max sum G / sqrt|S|, |S| <= K (optional costs and budget)",
    paper="004 (Li & Liu), eq. 11, Algorithm 1, Theorem 4",
    sense="max",
    methods=(
        Method("sort-scan", "fast", Lazy(_SOLVERS + "_fast"),
               "Algorithm 1 (sort by G, scan every prefix, smallest best k); "
               "with costs the exact integer-cost DP"),
        Method("milp-a", "exact", Lazy(_SOLVERS + "solve_formulation_a"),
               "formulation A (per-cardinality selectors), HiGHS gap 0, then min |S| among optima",
               applicable=Lazy(_SOLVERS + "_a_size"), time_limit=MILP_DEFAULT_TIME,
               time_guard=predicted_time_guard("worker-select", "milp-a")),
        Method("milp-compact", "exact", Lazy(_SOLVERS + "solve_compact"),
               "compact McCormick model, HiGHS gap 0, then min |S| (small instances)",
               applicable=predicted_memory_guard("worker-select", "milp-compact"),
               time_limit=MILP_DEFAULT_TIME,
               time_guard=predicted_time_guard("worker-select", "milp-compact")),
        Method("cost-dp", "exact", Lazy(_SOLVERS + "solve_dp"),
               "integer-cost DP over (worker, size, spend)",
               applicable=Lazy(_SOLVERS + "_dp_size")),
    ),
)
