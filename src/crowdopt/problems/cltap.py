"""CL-TAP (paper 003, Catallo et al., Sec. 3.3): workload-dependent offline task assignment.

t identical binary tasks, a annotators whose accuracy p[j, k] depends on the iteration k (her
k-th label overall), budget b labels. Maximize the bottleneck linear correctness min_i c'(W_i),
c'(W) = sum_{(j,k) in W} w(p_jk) with w(p) = (2p-1) ln(p/(1-p)) (eq. 10, Prop. 3), subject to
the budget (13), one label per (task, annotator) (14), one task per annotator-iteration (15) and
the prefix rule (16). This module holds the instance, its validation, the ONE evaluator, the
exact expected accuracy of the logit-weighted vote (Props. 1-2, tie = 1/2, digest A1) and the
synthetic generator of Sec. 6.2.1 (digest 3.6, numerically stable form).

A solution is `task_of[j, k]`: the task annotator j labels at her iteration k (0-based), or -1.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError
from ..validate import (
    MAX_ITEMS,
    NO_LIMIT_S,
    choice,
    integer,
    only_known_fields,
    real,
    real_matrix,
    real_text,
    sequence,
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

Workplan = tuple[tuple[int, int], ...]  # ((annotator, iteration), ...), 0-based (Sec. 5)

P_MAX = 0.999  # digest A3: p is clipped to [1 - p_max, p_max] (w(0.999) = 6.89)


def logit(p: Any) -> np.ndarray:
    """log(p / (1 - p)), elementwise."""
    p = np.asarray(p, dtype=float)
    return np.log(p) - np.log1p(-p)


def weight(p: Any) -> np.ndarray:
    """w(p) = (2p-1) logit(p) = KL(Bern(p) || Bern(1-p)) >= 0: one label's term of c' (eq. 10)."""
    p = np.asarray(p, dtype=float)
    return (2.0 * p - 1.0) * logit(p)


@dataclass(frozen=True, eq=False)
class CltapInstance(ProblemInstance):
    """CL-TAP (Sec. 3.3): t identical tasks, budget b, accuracies p[j, k] of annotator j at her
    k-th label. Annotators and tasks are 0-based indices (tasks are interchangeable)."""

    problem: ClassVar[str] = "cltap"

    t: int  # tasks
    b: int  # budget (labels)
    p: np.ndarray  # accuracies, shape (a, K), K <= t iterations per annotator
    p_max: float = P_MAX
    meta: dict = field(default_factory=dict)
    _phi: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def from_arrays(cls, p: Any, t: Any, b: Any, *, p_max: Any = P_MAX,
                    meta: dict | None = None) -> CltapInstance:
        """CL-TAP (eqs. 11-17) from plain data, validated like an instance file.

        Args:
            p: the a x K accuracy matrix: row j = annotator j, column k = her (k+1)-th label,
                K <= t.
            t: the number of tasks.
            b: the budget in labels.
            p_max: p is clipped to [1 - p_max, p_max] (a label's weight grows without bound
                as p -> 1).
            meta: free-form data kept with the instance (e.g. how it was generated).

        Returns:
            The instance.

        Raises:
            InputError: a bad value (one line naming the field).
        """
        return make_instance(p, t, b, p_max, meta)

    @property
    def a(self) -> int:
        """Number of annotators."""
        return int(self.p.shape[0])

    @property
    def K(self) -> int:
        """Number of iterations (labels an annotator can give)."""
        return int(self.p.shape[1])

    @property
    def phi(self) -> np.ndarray:
        """phi[j, k] = w(p[j, k]), the linear-correctness weight of each annotator-iteration."""
        if self._phi is None:
            object.__setattr__(self, "_phi", weight(self.p))
        return self._phi

    @property
    def logits(self) -> np.ndarray:
        """logit(p) of every annotator and iteration."""
        return logit(self.p)

    @property
    def capacity(self) -> int:
        """Labels that can actually be placed: min(b, a K)."""
        return min(self.b, self.a * self.K)


@dataclass(frozen=True, eq=False)
class CltapSolution:
    task_of: np.ndarray  # shape (a, K): task of annotator j at iteration k, -1 = unused

    def workplans(self, t: int) -> list[list[tuple[int, int]]]:
        """W_i as lists of (annotator, iteration), 0-based."""
        out: list[list[tuple[int, int]]] = [[] for _ in range(t)]
        for j, k in zip(*np.nonzero(self.task_of >= 0)):
            out[int(self.task_of[j, k])].append((int(j), int(k)))
        return out

    @property
    def labels(self) -> int:
        """Number of labels assigned."""
        return int((self.task_of >= 0).sum())


def empty_solution(inst: CltapInstance) -> CltapSolution:
    """The solution that assigns no label (every slot -1)."""
    return CltapSolution(np.full((inst.a, inst.K), -1, dtype=np.int64))


# the local searches' own length (RunOptions.search_s overrides it): time limits (per method or
# overall) only cut it and never stretch it (a limit of 1e308 s once became the search's length)
LS_DEFAULT_TIME = 2.0
SEARCH_TIME_ENV = "CROWDOPT_SEARCH_TIME"


def default_search_time() -> float:
    """The local searches' length when a run does not set one: $CROWDOPT_SEARCH_TIME seconds
    when set (short searches for a batch or a test suite), else LS_DEFAULT_TIME."""
    raw = os.environ.get(SEARCH_TIME_ENV, "").strip()
    if not raw:
        return LS_DEFAULT_TIME
    return real_text(raw, SEARCH_TIME_ENV, lo=0.0, lo_open=True, hi=NO_LIMIT_S)


MAX_TASKS = 10_000_000  # the fast paths keep O(t) arrays; beyond this memory, not time, ends


def make_instance(p: Any, t: Any, b: Any, p_max: Any = P_MAX, meta: dict | None = None
                  ) -> CltapInstance:
    """Validated instance: p is an a x K matrix in (0, 1), clipped to [1-p_max, p_max]; K <= t."""
    pm = real(p_max, "p_max", lo=0.5, hi=1.0, lo_open=True, hi_open=True)
    arr = real_matrix(p, "p", lo=0.0, hi=1.0) if not isinstance(p, np.ndarray) else np.asarray(p, float)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InputError("p", "a non-empty a x K matrix of accuracies", f"shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or arr.min() < 0 or arr.max() > 1:
        raise InputError("p", "accuracies in [0, 1]", "a value outside [0, 1]")
    tt = integer(t, "t", lo=1, hi=MAX_TASKS)
    if arr.shape[1] > tt:
        raise InputError("p", f"at most t = {tt} iterations per annotator (K <= t)",
                         f"K = {arr.shape[1]}")
    bb = integer(b, "b", lo=0)
    clipped = np.clip(arr, 1.0 - pm, pm)
    m = dict(meta or {})
    n_clip = int((clipped != arr).sum())
    if n_clip:
        m["clipped"] = n_clip
    return CltapInstance(tt, bb, clipped, pm, m)


def from_dict(d: dict) -> CltapInstance:
    """The instance of an instance file's fields, validated."""
    known = {"t", "b", "p", "p_max", "meta", "name"}
    only_known_fields(d, known, "cltap")
    for key in ("t", "b", "p"):
        if key not in d:
            raise InputError(key, "a value (the field is required)", "nothing")
    meta = d.get("meta", {})
    if not isinstance(meta, dict):
        raise InputError("meta", "a JSON object", type(meta).__name__)
    return make_instance(d["p"], d["t"], d["b"], d.get("p_max", P_MAX), meta)


def to_dict(inst: CltapInstance) -> dict:
    """The instance file's fields of an instance."""
    return {"t": inst.t, "b": inst.b, "p_max": inst.p_max, "p": inst.p.tolist(),
            "meta": inst.meta}


# ----------------------------------------------------------------------------- evaluation
def linear_correctness(inst: CltapInstance, workplan: Any) -> float:
    """c'(W) = sum_{(j,k) in W} w(p_jk) of one workplan [(annotator, iteration), ...] (eq. 10)."""
    return float(sum(inst.phi[j, k] for j, k in workplan))


def task_correctness(inst: CltapInstance, sol: CltapSolution) -> np.ndarray:
    """c'(W_i) for every task (eq. 10), from the solution alone."""
    used = sol.task_of >= 0
    return np.bincount(sol.task_of[used], weights=inst.phi[used], minlength=inst.t)[: inst.t]


def violations(inst: CltapInstance, sol: CltapSolution) -> tuple[list[str], float]:
    """Feasibility of (13)-(16) (shape and task range first); messages + worst violation."""
    z = np.asarray(sol.task_of)
    if z.shape != (inst.a, inst.K):
        return [f"task_of has shape {z.shape}, expected ({inst.a}, {inst.K})"], float("inf")
    out: list[str] = []
    worst = 0.0
    bad = (z < -1) | (z >= inst.t)
    if bad.any():
        j, k = np.argwhere(bad)[0]
        out.append(f"annotator {j} iteration {k}: task {int(z[j, k])} out of range")
        worst = max(worst, float(bad.sum()))
    used = z >= 0
    n = int(used.sum())
    if n > inst.b:
        out.append(f"{n} labels exceed the budget b = {inst.b} (13)")
        worst = max(worst, float(n - inst.b))
    gaps = used[:, 1:] & ~used[:, :-1]  # (16): u_jk <= u_j,k-1
    if gaps.any():
        j, k = np.argwhere(gaps)[0]
        out.append(f"annotator {j} labels at iteration {k + 1} but not at {k} (prefix rule 16)")
        worst = max(worst, float(gaps.sum()))
    for j in range(inst.a):  # (14): one label per (task, annotator)
        tasks = z[j][used[j] & ~bad[j]]
        if len(tasks) != len(np.unique(tasks)):
            vals, counts = np.unique(tasks, return_counts=True)
            out.append(f"annotator {j} labels task {int(vals[counts > 1][0])} twice (14)")
            worst = max(worst, float((counts - 1).sum()))
            break
    return out, worst


def evaluate(inst: CltapInstance, sol: CltapSolution) -> Evaluation:
    """Objective (11) = min_i c'(W_i); feasibility of (13)-(16). Extra: labels used, sum c'."""
    viol, worst = violations(inst, sol)
    if viol and worst == float("inf"):
        return Evaluation(-float("inf"), False, worst, viol)
    z = np.where((sol.task_of >= 0) & (sol.task_of < inst.t), sol.task_of, -1)
    c = task_correctness(inst, CltapSolution(z))
    return Evaluation(float(c.min()), not viol, worst, viol,
                      {"labels": int((z >= 0).sum()), "sum_correctness": float(c.sum())})


def workplan_accuracy(logits: Any, p: Any) -> float:
    """Exact Pr(correct) of the logit-weighted vote on one workplan (Props. 1-2), tie = 1/2.

    Dynamic programme over the distribution of S = sum l z given y = +1 (equal sums merged, so
    it is exact and never worse than the 2^|W| enumeration of eq. 6); digest A1: a tie S = 0
    counts 1/2, the expected accuracy of "y = +1 iff mu >= 1/2" under balanced labels.
    """
    dist = {0.0: 1.0}
    for lj, pj in zip(np.asarray(logits, float).tolist(), np.asarray(p, float).tolist()):
        nxt: dict[float, float] = {}
        for s, pr in dist.items():
            for v, q in ((round(s + lj, 9), pr * pj), (round(s - lj, 9), pr * (1.0 - pj))):
                nxt[v] = nxt.get(v, 0.0) + q
        dist = nxt
    pos = sum(q for s, q in dist.items() if s > 1e-9)
    tie = sum(q for s, q in dist.items() if abs(s) <= 1e-9)
    return pos + 0.5 * tie


def expected_accuracy(inst: CltapInstance, sol: CltapSolution) -> np.ndarray:
    """E[p-hat_i] for every task (eq. 5 with tie = 1/2); an empty workplan gives 1/2."""
    L = inst.logits
    cache: dict[tuple, float] = {}
    out = np.empty(inst.t)
    for i, wp in enumerate(sol.workplans(inst.t)):
        key = tuple(sorted((float(L[j, k]), float(inst.p[j, k])) for j, k in wp))
        if key not in cache:
            cache[key] = workplan_accuracy([x[0] for x in key], [x[1] for x in key])
        out[i] = cache[key]
    return out


def classification_error(inst: CltapInstance, sol: CltapSolution) -> float:
    """Exact expected classification error (eq. 29): mean over tasks of 1 - E[p-hat_i]."""
    return float(np.mean(1.0 - expected_accuracy(inst, sol)))


def simulate_error(inst: CltapInstance, sol: CltapSolution, seed: int = 0) -> float:
    """One simulated round of eq. 29: balanced true labels, y-hat = +1 iff S >= 0 (digest 3.5)."""
    rng = np.random.default_rng(seed)
    y = np.ones(inst.t)
    y[: inst.t // 2] = -1
    rng.shuffle(y)
    used = sol.task_of >= 0
    jj, kk = np.nonzero(used)
    tasks = sol.task_of[used]
    correct = rng.random(len(tasks)) < inst.p[jj, kk]
    z = np.where(correct, y[tasks], -y[tasks])
    s = np.bincount(tasks, weights=inst.logits[jj, kk] * z, minlength=inst.t)
    yhat = np.where(s >= 0, 1.0, -1.0)
    return float(np.mean(yhat != y))


def solution_from_dict(inst: CltapInstance, d: dict) -> CltapSolution:
    """The one reader of a CL-TAP solution: {'task_of': one row per annotator (a rows), row j
    the tasks annotator j labels at her iterations 1, 2, ... in order (at most K, each task
    once)}. Tasks are interchangeable and have no ids: 0-based positions in [0, t). A shorter
    row leaves the later iterations unused (the prefix rule 16)
    (`crowdopt schema solution-cltap`)."""
    d = solution_object(d, "solution", ("task_of",))
    rows = sequence(d["task_of"], "solution.task_of", length=inst.a)
    z = np.full((inst.a, inst.K), -1, dtype=np.int64)
    for j, row in enumerate(rows):
        tasks = solution_entries(row, f"solution.task_of[{j}]", None, inst.t, "task",
                                 unique=True)
        if len(tasks) > inst.K:
            raise InputError(f"solution.task_of[{j}]", f"at most K = {inst.K} iterations",
                             f"length {len(tasks)}")
        z[j, : len(tasks)] = tasks
    return CltapSolution(z)


def solution_to_dict(inst: CltapInstance, sol: CltapSolution) -> dict:
    """The JSON form of a solution (trailing empty slots dropped)."""
    rows = []
    for j in range(inst.a):
        row = [int(v) for v in sol.task_of[j]]
        while row and row[-1] < 0:
            row.pop()
        rows.append(row)
    return {"task_of": rows}


# ----------------------------------------------------------------------------- generator
GENERATOR_PARAMS = {
    "t": 10,  # with a = 7: OPT >= 0.17 on seeds 0-4, a*t*K = 700 binaries (exact in <= 2 s)
    "a": 7,
    "budget_factor": 2.0,  # b = round(budget_factor * t) unless b >= 0 is given
    "b": -1,
    "K": 0,  # iterations per annotator; 0 = t
    # dec | inc | nonmono. With a = 7 dec proves in milliseconds (inc: seconds, the compact
    # MILP past 30 s on seed 1); with a <= 4, dec leaves OPT near 0: pass trend=inc there
    "trend": "dec",
    "crowd": "naive",  # naive | expert
    "tau": "mixed",  # mixed or a number (0.25, 0.5, 1, 10, 100)
    "horizon_factor": 2.0,  # t-bar lies in [1, horizon_factor * t] (the per-t reading)
    "horizon": 0,  # > 0: t-bar lies in [1, horizon] for every t (the fixed-horizon reading,
    #               a population made once, e.g. horizon = 2000 as if at t = 1000)
    "p_max": P_MAX,
}
# one line per parameter: `crowdopt generate cltap --show-params` and the problem's page
GENERATOR_HELP = {
    "t": "tasks",
    "a": "annotators",
    "budget_factor": "the budget is b = round(budget_factor * t) labels (unless b is given)",
    "b": "the budget in labels; -1: from budget_factor",
    "K": "labels (iterations) each annotator can give, at most t; 0: t",
    "trend": "dec | inc | nonmono: accuracy falls with the workload to 0.5 (fatigue), rises "
             "toward 1 (learning), or rises then falls (Sec. 6.2.1). With dec and few "
             "annotators (a <= 4) labels soon weigh nothing and the optimum is often 0 or "
             "near it: use inc there",
    "crowd": "naive | expert: first-label accuracy ~ Beta(mean 0.7 with dec, else 0.6; "
             "sd 0.14), or Beta(0.9, 0.03)",
    "tau": "mixed | a number > 0: the curves' exponent (mixed: 0.25, 0.5, 1, 10, 100 for five "
           "groups of annotators)",
    "horizon_factor": "where a curve ends, t-bar, lies in [1, horizon_factor * t]",
    "horizon": "> 0: t-bar lies in [1, horizon] for every t (a population made once); "
               "0: from horizon_factor",
    "p_max": "accuracies are clipped to [0.5, p_max] (a label's weight grows without bound as "
             "p -> 1)",
}
_TAUS = (0.25, 0.5, 1.0, 10.0, 100.0)


def beta_params(mean: float, sd: float) -> tuple[float, float]:
    """Beta(alpha, beta) with the given mean and sd (digest 3.6 table)."""
    v = mean * (1 - mean) / sd**2 - 1
    return mean * v, (1 - mean) * v


def power_curve(p1: np.ndarray, p_end: float, tbar: np.ndarray, tau: np.ndarray, K: int
                ) -> np.ndarray:
    """p_jk = p_j1 + (p_end - p_j1)(k^tau - 1)/(tbar^tau - 1) (eq. 30), overflow-free form.

    The ratio is computed as (e^{tau(ln k - ln tbar)} - e^{-tau ln tbar}) / (1 - e^{-tau ln tbar})
    (digest 3.6); t-bar ~ 1 gives p_end from k = 2 on.
    """
    k = np.arange(1, K + 1, dtype=float)[None, :]
    lt = np.log(np.maximum(tbar, 1.0))[:, None]
    tau = np.asarray(tau, float)[:, None]
    den = -np.expm1(-tau * lt)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        ratio = (np.exp(tau * (np.log(k) - lt)) - np.exp(-tau * lt)) / den
    flat = (den[:, 0] < 1e-12)
    ratio[flat] = np.where(k[0] >= 2, 1.0, 0.0)
    return p1[:, None] + (p_end - p1[:, None]) * ratio


def generate(seed: int = 0, **params: Any) -> CltapInstance:
    """Synthetic instance of Sec. 6.2.1 (digest 3.6): power-law curves, Beta-drawn p_j1, t-bar.

    dec: p_j1 ~ Beta(mean 0.7, sd 0.14) falling to 0.5 at t-bar (mean 0.15 horizon);
    inc: p_j1 ~ Beta(0.6, 0.14) rising to 1 at t-bar (mean 0.85 horizon); expert p_j1 ~ Beta(0.9,
    0.03); nonmono: increasing up to a uniform turning iteration, then decreasing (digest 3.6).
    tau 'mixed' = 5 groups floor(5j/a). Every p is clipped to [0.5, p_max] (digest A3/A4, G2).
    """
    p = {**GENERATOR_PARAMS, **params}
    t = integer(p["t"], "t", lo=1, hi=MAX_TASKS)
    a = integer(p["a"], "a", lo=1, hi=MAX_ITEMS)
    K = integer(p["K"], "K", lo=0, hi=t) or t
    if a * K > 50_000_000:
        raise InputError("a x K", "at most 5e7 accuracy entries", f"{a} x {K}")
    bf = real(p["budget_factor"], "budget_factor", lo=0.0)
    b = integer(p["b"], "b", lo=-1)
    b = int(round(bf * t)) if b < 0 else b
    trend = choice(p["trend"], "trend", ("dec", "inc", "nonmono"))
    crowd = choice(p["crowd"], "crowd", ("naive", "expert"))
    hf = real(p["horizon_factor"], "horizon_factor", lo=0.0, lo_open=True)
    hz = real(p["horizon"], "horizon", lo=0.0)
    pm = real(p["p_max"], "p_max", lo=0.5, hi=1.0, lo_open=True, hi_open=True)
    if p["tau"] == "mixed":
        tau = np.array([_TAUS[(5 * j) // a] for j in range(a)])
    else:
        tau = np.full(a, real(p["tau"], "tau", lo=0.0, lo_open=True))
    rng = np.random.default_rng(seed)
    m1 = 0.9 if crowd == "expert" else (0.7 if trend == "dec" else 0.6)
    s1 = 0.03 if crowd == "expert" else 0.14
    p1 = np.clip(rng.beta(*beta_params(m1, s1), size=a), 0.5, pm)
    horizon = hz if hz > 0 else hf * t
    if trend == "nonmono":
        turn = rng.integers(1, t + 1, size=a)
        u1 = rng.beta(*beta_params(0.85, 0.14), size=a)
        up = np.clip(power_curve(p1, 1.0, 1 + u1 * (2 * turn - 1), tau, K), 0.5, pm)
        top = up[np.arange(a), np.minimum(turn, K) - 1]
        u2 = rng.beta(*beta_params(0.15, 0.14), size=a)
        rest = np.maximum(horizon - turn, 1.0)
        down = power_curve(top, 0.5, 1 + u2 * (rest - 1), tau, K)
        P = up.copy()
        for j in range(a):
            n = K - int(turn[j])
            if n > 0:
                P[j, turn[j]:] = down[j, 1:n + 1]
    else:
        u = rng.beta(*beta_params(0.15 if trend == "dec" else 0.85, 0.14), size=a)
        tbar = 1 + u * (horizon - 1)
        P = power_curve(p1, 0.5 if trend == "dec" else 1.0, tbar, tau, K)
    P = np.clip(P, 0.5, pm)
    meta = {"generator": {"trend": trend, "crowd": crowd, "tau": p["tau"], "t": t, "a": a,
                          "K": K, "b": b, "horizon_factor": hf, "horizon": horizon,
                          "p_max": pm}, "seed": seed}
    return make_instance(P, t, b, pm, meta)


def example() -> CltapInstance:
    """Example 1 of the paper (Sec. 4.2): a = 2, t = 3, b = 5, increasing; OPT = CBP = 0.5694."""
    return make_instance([[0.68, 0.75, 0.8], [0.55, 0.7, 0.9]], 3, 5,
                         meta={"name": "paper example 1"})


def example2() -> CltapInstance:
    """Example 2 of the paper: a = 4, t = 3, b = 5, decreasing; OPT = CBP = 1.6308."""
    return make_instance([[0.90, 0.70, 0.55], [0.80, 0.75, 0.68], [0.79, 0.76, 0.69],
                          [0.89, 0.78, 0.67]], 3, 5, meta={"name": "paper example 2"})


def size(inst: CltapInstance) -> str:
    """The instance's size line."""
    return f"t={inst.t} a={inst.a} K={inst.K} b={inst.b}"


# The catalogue entry; its methods live in solvers/cltap.py and load on first use.
_SOLVERS = "crowdopt.solvers.cltap:"

SPEC = ProblemSpec.from_module(
    sys.modules[__name__],
    name="cltap",
    title="CL-TAP: workload-dependent task assignment, max-min linear correctness",
    paper="003 (Catallo et al.), Sec. 3.3-5",
    sense="max",
    methods=(
        Method("cbp", "fast", Lazy(_SOLVERS + "_cbp"),
               "correctness-based policy (Algorithm 1, digest 3.1)"),
        Method("cbp+ls", "fast", Lazy(_SOLVERS + "_cbp_ls"),
               "CBP then the Sec. 4.3 local search (its own budget: --search-time, default "
               "2 s; a time limit only cuts it)"),
        Method("cbp-phi", "fast", Lazy(_SOLVERS + "_cbp_phi"),
               "CBP ranking runs by average weight phi (digest B2)"),
        Method("alloc-lpt", "fast", Lazy(_SOLVERS + "_alloc_lpt"),
               "covering-bound allocation of prefix lengths, labels placed heaviest first on "
               "the neediest task (LPT)"),
        Method("layered", "fast", Lazy(_SOLVERS + "_layered"),
               "layers of annotators' prefixes at a target found by bisection: a whole row, "
               "partial rows paired to leave few tasks short, one finishing row"),
        Method("best-of", "fast", Lazy(_SOLVERS + "_fast"),
               "best of all constructions, then local search until its budget (--search-time, "
               "default 2 s; a time limit only cuts it) or a bound proves it optimal"),
        Method("ta", "fast", Lazy(_SOLVERS + "_baseline", ("ta",)),
               "top annotators baseline (digest 3.7)"),
        Method("pa", "fast", Lazy(_SOLVERS + "_baseline", ("pa",)),
               "primal approximation baseline (approximation)"),
        Method("rgl", "fast", Lazy(_SOLVERS + "_baseline", ("rgl",)),
               "random regular graph baseline (seeded)"),
        Method("rnd", "fast", Lazy(_SOLVERS + "_baseline", ("rnd",)), "random baseline (seeded)"),
        Method("head-cover", "exact", Lazy("crowdopt.solvers.cltap_exact:solve_head_cover"),
               "search on the bottleneck value in the head-cover MILP (tasks named by their "
               "first annotator's label, no task symmetry), eta fixed per step, HiGHS; the "
               "default exact method; default limit 120 s, returns incumbent and the last "
               "refuted value",
               applicable=Lazy(_SOLVERS + "_head_cover_memory"), time_limit=MILP_DEFAULT_TIME,
               time_guard=Lazy(_SOLVERS + "_head_cover_time")),
        Method("milp-compact", "exact", Lazy(_SOLVERS + "solve_milp"),
               "compact MILP (11)-(17), HiGHS, gap 0 (default limit 120 s)",
               applicable=predicted_memory_guard("cltap", "milp-compact"),
               time_limit=MILP_DEFAULT_TIME,
               time_guard=predicted_time_guard("cltap", "milp-compact")),
        Method("brute-force", "exact", Lazy(_SOLVERS + "_brute"),
               "exhaustive enumeration (t <= 4, a <= 3)",
               applicable=Lazy(_SOLVERS + "_brute_size")),
        Method("lp-closed-form", "bound", Lazy(_SOLVERS + "_closed_form"),
               "LP relaxation of (11)-(17) in closed form (concave-hull greedy, digest 3.4)"),
        Method("column-generation", "bound", Lazy(_SOLVERS + "_colgen"),
               "column generation on (18)-(24), best Lagrangian bound (default limit 30 s)",
               applicable=Lazy(_SOLVERS + "_colgen_size")),
        Method("covering", "bound", Lazy(_SOLVERS + "_covering"),
               "truncated machine-covering bound, G by its LP relaxation (concave-hull greedy)"),
        Method("covering-dp", "bound", Lazy(_SOLVERS + "_covering_dp"),
               "truncated machine-covering bound, G by the exact multiple-choice knapsack DP",
               applicable=Lazy(_SOLVERS + "_covering_dp_size")),
        Method("pairing", "bound", Lazy(_SOLVERS + "_pairing"),
               "covering + a Hall condition on two-label tasks (small labels need large "
               "partners)"),
        Method("first-labels", "bound", Lazy(_SOLVERS + "_first_labels"),
               "covering + the tasks of one annotator's first labels (rising curves: her "
               "weakest labels need the others' best, one label per task and annotator)"),
        Method("counting", "bound", Lazy(_SOLVERS + "_counting"),
               "labels-per-task counting bound (singles, pairs, 3+ labels)"),
        Method("config-lp", "bound", Lazy(_SOLVERS + "_config_lp"),
               "configuration LP over truncated rounded-up weights (one label per task and "
               "annotator, prefix rows), column generation + Farley bound (default limit 10 s)",
               applicable=Lazy(_SOLVERS + "_config_lp_size")),
        Method("config-branch", "bound", Lazy(_SOLVERS + "_config_branch"),
               "configuration LP as an arc flow (every cover at once) in a branch and bound on "
               "the annotators' prefix lengths; price certificates checked by a knapsack DP, "
               "any stop valid; returns the best plan it meets (default limit 60 s, 400 node "
               "LPs: --max-rounds)",
               applicable=Lazy(_SOLVERS + "_config_branch_size"), time_limit=60.0),
    ),
)
