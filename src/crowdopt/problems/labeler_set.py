"""`labeler-set`: choose the labeler set S with the best vote accuracy (paper 001, eq. 4).

Maximize pi(S) - lambda * C(S) over non-empty S, subject to an optional budget C(S) <= B and an
optional size cap |S| <= K (digest section 3, P1 / P1-lambda / P1B / P1K for majority vote,
P2 for weighted majority vote with log-odds weights). pi(S) is the exact vote accuracy of
problems/vote_accuracy.py, C(S) = sum of the chosen labelers' costs (eq. 3).
This module holds the typed instance, its validation, the ONE evaluator and the generator.
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
    integer,
    only_known_fields,
    real,
    real_array,
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
    predicted_time_guard,
)
from .vote_accuracy import WMV_MAX, log_odds, pi_mv, pi_wmv

RULES = ("mv", "wmv")
COST_TOL = 1e-9  # budget slack for float sums, relative to the budget (any unit of cost)


def over_budget(cost: Any, budget: float) -> Any:
    """cost > budget beyond the float slack of a sum (relative: the same in any unit)."""
    return np.asarray(cost) > budget + COST_TOL * abs(budget)


@dataclass(frozen=True, eq=False)
class LabelerSetInstance(ProblemInstance):
    """Eq. 4: labeler qualities p_i, the vote rule, optional costs (weight lambda, budget)
    and size cap."""

    problem: ClassVar[str] = "labeler-set"

    qualities: np.ndarray  # p_i, shape (M,)
    costs: np.ndarray | None = None  # c_i >= 0, shape (M,), or None (no costs)
    cost_weight: float = 0.0  # lambda in pi(S) - lambda C(S)
    budget: float | None = None  # C(S) <= budget
    max_size: int | None = None  # |S| <= max_size
    rule: str = "mv"
    wmv_eps: float = 0.0  # WMV tie tolerance (Sec. 4.1)
    labeler_ids: list | None = None

    @classmethod
    def from_arrays(cls, qualities: Any, *, costs: Any = None, cost_weight: Any = 0.0,
                    budget: Any = None, max_size: Any = None, rule: Any = "mv",
                    wmv_eps: Any = 0.0, labeler_ids: Any = None) -> LabelerSetInstance:
        """Eq. 4 from plain data, validated like an instance file.

        Args:
            qualities: each labeler's quality p_i in [0, 1] ((0, 1) for rule 'wmv').
            costs: each labeler's cost c_i >= 0; None = no costs.
            cost_weight: lambda: the objective is pi(S) - lambda C(S).
            budget: a budget C(S) <= B on the subset's cost; None = none.
            max_size: a size cap |S| <= K; None = none.
            rule: the vote the subset's labels are aggregated by: 'mv' (majority) or 'wmv'
                (weighted by the log-odds of quality).
            wmv_eps: the tie tolerance of 'wmv' (Sec. 4.1): a weighted margin within it counts
                as a tie (half right).
            labeler_ids: the labelers' ids (strings or integers); None = 0-based positions.

        Returns:
            The instance.

        Raises:
            InputError: a bad value (one line naming the field).
        """
        return make_instance(qualities, costs, cost_weight, budget, max_size, rule, wmv_eps,
                             labeler_ids)

    @property
    def n_labelers(self) -> int:
        """Number of labelers."""
        return len(self.qualities)

    @property
    def cost_vector(self) -> np.ndarray:
        """Costs of the labelers (zeros without costs)."""
        return self.costs if self.costs is not None else np.zeros(self.n_labelers)

    @property
    def weights(self) -> np.ndarray:
        """WMV weights: the log-odds of the qualities (eq. 15)."""
        return log_odds(self.qualities)

    @property
    def uniform_costs(self) -> bool:
        """No costs or all costs equal: the structure theorems make top-k exact (digest P1)."""
        c = self.cost_vector
        return bool(len(c) == 0 or np.ptp(c) <= 1e-12)


@dataclass(frozen=True, eq=False)
class LabelerSetSolution:
    selected: np.ndarray  # sorted labeler indices, shape (|S|,)


def make_instance(qualities: Any, costs: Any = None, cost_weight: Any = 0.0, budget: Any = None,
                  max_size: Any = None, rule: Any = "mv", wmv_eps: Any = 0.0,
                  labeler_ids: Any = None) -> LabelerSetInstance:
    """Validated instance from plain values."""
    rule = choice(rule, "rule", RULES)
    seq = sequence(qualities, "qualities", min_len=1)
    if rule == "wmv":
        p = real_array(seq, "qualities", lo=0.0, hi=1.0)
        bad = np.flatnonzero((p <= 0.0) | (p >= 1.0))
        if len(bad):
            raise InputError(f"qualities[{bad[0]}]", "a probability in (0, 1) for rule wmv",
                             float(p[bad[0]]))
        if len(p) > WMV_MAX:
            raise InputError("qualities", f"at most {WMV_MAX} labelers for rule wmv",
                             f"{len(p)} labelers")
    else:
        p = real_array(seq, "qualities", lo=0.0, hi=1.0)
    c = real_array(costs, "costs", lo=0.0, length=len(p)) if costs is not None else None
    lam = real(cost_weight, "cost_weight", lo=0.0)
    if lam > 0 and c is None:
        raise InputError("costs", "a list of costs when cost_weight > 0", None)
    b = real(budget, "budget", lo=0.0) if budget is not None else None
    if b is not None and c is None:
        raise InputError("costs", "a list of costs when a budget is given", None)
    k = integer(max_size, "max_size", lo=1) if max_size is not None else None
    eps = real(wmv_eps, "wmv_eps", lo=0.0)
    lid = ids(labeler_ids, "labeler_ids", len(p)) if labeler_ids is not None else None
    return LabelerSetInstance(p, c, lam, b, k, rule, eps, lid)


_FIELDS = {"qualities", "costs", "cost_weight", "budget", "max_size", "rule", "wmv_eps",
           "labeler_ids", "name"}


def from_dict(d: dict) -> LabelerSetInstance:
    """The instance of an instance file's fields, validated."""
    only_known_fields(d, _FIELDS, "labeler-set")
    if "qualities" not in d:
        raise InputError("qualities", "a list (the field is required)", "nothing")
    return make_instance(d["qualities"], d.get("costs"), d.get("cost_weight", 0.0),
                         d.get("budget"), d.get("max_size"), d.get("rule", "mv"),
                         d.get("wmv_eps", 0.0), d.get("labeler_ids"))


def to_dict(inst: LabelerSetInstance) -> dict:
    """The instance file's fields of an instance."""
    out: dict[str, Any] = {"rule": inst.rule, "qualities": inst.qualities.tolist()}
    if inst.costs is not None:
        out["costs"] = inst.costs.tolist()
    if inst.cost_weight:
        out["cost_weight"] = inst.cost_weight
    if inst.budget is not None:
        out["budget"] = inst.budget
    if inst.max_size is not None:
        out["max_size"] = inst.max_size
    if inst.wmv_eps:
        out["wmv_eps"] = inst.wmv_eps
    if inst.labeler_ids is not None:
        out["labeler_ids"] = inst.labeler_ids
    return out


def set_accuracy(inst: LabelerSetInstance, selected: np.ndarray) -> float:
    """pi(S) of the instance's vote rule (eq. 2, or Sec. 4.1 for WMV)."""
    s = np.asarray(selected, dtype=np.int64)
    if inst.rule == "mv":
        return pi_mv(inst.qualities[s])
    return pi_wmv(inst.qualities[s], inst.weights[s], inst.wmv_eps)


def evaluate(inst: LabelerSetInstance, sol: LabelerSetSolution) -> Evaluation:
    """Objective pi(S) - lambda C(S); feasible iff S is a non-empty set of labelers within the
    budget and the size cap."""
    s = np.asarray(sol.selected)
    M = inst.n_labelers
    if s.ndim != 1 or (len(s) and (s.min() < 0 or s.max() >= M)):
        return Evaluation(-math.inf, False, math.inf, ["selected holds an unknown labeler index"])
    if len(np.unique(s)) != len(s):
        return Evaluation(-math.inf, False, math.inf, ["selected lists a labeler twice"])
    violations: list[str] = []
    worst = 0.0
    if len(s) == 0:
        violations.append("the selected set is empty")
        worst = 1.0
    cost = float(inst.cost_vector[s].sum())
    if inst.budget is not None and over_budget(cost, inst.budget):
        violations.append(f"cost {cost:.6g} exceeds the budget {inst.budget:.6g}")
        worst = max(worst, cost - inst.budget)
    if inst.max_size is not None and len(s) > inst.max_size:
        violations.append(f"{len(s)} labelers exceed max_size {inst.max_size}")
        worst = max(worst, float(len(s) - inst.max_size))
    acc = set_accuracy(inst, s)
    objective = acc - inst.cost_weight * cost
    return Evaluation(objective, not violations, worst, violations,
                      {"accuracy": acc, "cost": cost, "size": int(len(s))})


def solution_from_dict(inst: LabelerSetInstance, d: dict) -> LabelerSetSolution:
    """The one reader of a labeler-set solution: {'selected': [labelers, each once]},
    labeler ids (exact type) when the instance names its labelers, else 0-based positions
    (`crowdopt schema solution-labeler-set`)."""
    d = solution_object(d, "solution", ("selected",))
    out = solution_entries(d["selected"], "solution.selected", inst.labeler_ids,
                           inst.n_labelers, "labeler", unique=True)
    return LabelerSetSolution(np.sort(out))


def solution_to_dict(inst: LabelerSetInstance, sol: LabelerSetSolution) -> dict:
    """The JSON form of a solution (what `solution_from_dict` reads): labeler ids where given."""
    s = [int(i) for i in sol.selected]
    if inst.labeler_ids is not None:
        return {"selected": [inst.labeler_ids[i] for i in s]}
    return {"selected": s}


GENERATOR_PARAMS = {
    "labelers": 7,
    "p_low": 0.3,  # qualities ~ U(p_low, p_high) (digest 7.4: not the paper's a_min)
    "p_high": 1.0,
    "rule": "mv",
    "costs": "none",  # none | uniform | random (U(cost_low, cost_high) per labeler)
    "cost_low": 0.0,
    "cost_high": 0.1,
    "cost_weight": 1.0,  # lambda, used when costs != none
    "budget": -1.0,  # >= 0: a budget on C(S)
    "max_size": 0,  # >= 1: a size cap
    "decimals": -1,  # >= 0 rounds qualities and costs (creates ties)
}
# one line per parameter: `crowdopt generate labeler-set --show-params` and the problem's page
GENERATOR_HELP = {
    "labelers": "labelers (M)",
    "p_low": "each labeler's quality ~ U(p_low, p_high)",
    "p_high": "the largest quality",
    "rule": "mv | wmv: the vote the subset's labels are aggregated by (majority, or weighted "
            "by the log-odds of quality)",
    "costs": "none | uniform | random: no costs, one cost for all ~ U(cost_low, cost_high), or "
             "one per labeler",
    "cost_low": "the smallest cost",
    "cost_high": "the largest cost",
    "cost_weight": "lambda: the objective is accuracy - lambda * C(S) (with costs)",
    "budget": ">= 0: a budget on the subset's cost C(S) (with costs); -1: none",
    "max_size": ">= 1: at most this many labelers; 0: no cap",
    "decimals": ">= 0: qualities and costs rounded to that many decimals (ties); -1: not",
}


def generate(seed: int = 0, **params: Any) -> LabelerSetInstance:
    """Random instance: p ~ U(p_low, p_high); costs none, uniform or random."""
    q = {**GENERATOR_PARAMS, **params}
    m = integer(q["labelers"], "labelers", lo=1, hi=MAX_ITEMS)
    lo = real(q["p_low"], "p_low", lo=0.0, hi=1.0)
    hi = real(q["p_high"], "p_high", lo=lo, hi=1.0)
    rule = choice(q["rule"], "rule", RULES)
    kind = choice(q["costs"], "costs", ("none", "uniform", "random"))
    clo = real(q["cost_low"], "cost_low", lo=0.0)
    chi = real(q["cost_high"], "cost_high", lo=clo)
    lam = real(q["cost_weight"], "cost_weight", lo=0.0)
    budget = real(q["budget"], "budget")
    kmax = integer(q["max_size"], "max_size", lo=0)
    dec = integer(q["decimals"], "decimals", lo=-1, hi=12)
    rng = np.random.default_rng(seed)
    p = rng.uniform(lo, hi, m)
    if rule == "wmv":
        p = np.clip(p, 1e-3, 1 - 1e-3)
    costs = None
    if kind == "uniform":
        costs = np.full(m, rng.uniform(clo, chi))
    elif kind == "random":
        costs = rng.uniform(clo, chi, m)
    if dec >= 0:
        p = np.round(p, dec)
        if rule == "wmv":
            p = np.clip(p, 10.0 ** -dec, 1 - 10.0 ** -dec) if dec > 0 else np.full(m, 0.5)
        costs = np.round(costs, dec) if costs is not None else None
    return make_instance(p, costs, lam if costs is not None else 0.0,
                         budget if (budget >= 0 and costs is not None) else None,
                         kmax if kmax >= 1 else None, rule)


def example() -> LabelerSetInstance:
    """The demo: Table 1's five labelers plus two spammers, unit-ish costs, lambda = 1."""
    p = [0.763, 0.781, 0.625, 0.783, 0.727, 0.45, 0.35]
    c = [0.02, 0.03, 0.01, 0.05, 0.02, 0.01, 0.01]
    return make_instance(p, c, cost_weight=1.0, labeler_ids=[f"L{i + 1}" for i in range(7)])


def size(inst: LabelerSetInstance) -> str:
    """The instance's size line."""
    extra = []
    if inst.costs is not None:
        extra.append("costs")
    if inst.budget is not None:
        extra.append("budget")
    if inst.max_size is not None:
        extra.append(f"K={inst.max_size}")
    return f"M={inst.n_labelers} {inst.rule}" + ("" if not extra else " " + "+".join(extra))


# The catalogue entry; its methods live in solvers/labeler_set.py and load on first use.
_SOLVERS = "crowdopt.solvers.labeler_set:"

SPEC = ProblemSpec.from_module(
    sys.modules[__name__],
    name="labeler-set",
    title="Best labeler set for majority / weighted majority vote",
    paper="001 (Liu & Liu, SIGMETRICS 2015), eq. 4, Thms 1, 2, 4",
    sense="max",
    methods=(
        Method("top-k", "fast", Lazy(_SOLVERS + "_fast"),
               "best top-k by quality (odd k for MV): Thms 1-2 / 4, exact without costs"),
        Method("local-search", "fast", Lazy(_SOLVERS + "_local"),
               "top-k then add/drop/swap moves (heuristic for heterogeneous costs)",
               applicable=Lazy(_SOLVERS + "_local_size")),
        Method("milp", "exact", Lazy(_SOLVERS + "solve_milp"),
               "vote-margin MILP (MV) or pattern MILP (WMV), HiGHS, gap 0",
               applicable=Lazy(_SOLVERS + "_milp_size"), time_limit=MILP_DEFAULT_TIME,
               time_guard=predicted_time_guard("labeler-set", "milp")),
        Method("enumeration", "exact", Lazy(_SOLVERS + "solve_enumeration"),
               "all 2^M - 1 non-empty sets",
               time_guard=predicted_time_guard("labeler-set", "enumeration")),
    ),
)
