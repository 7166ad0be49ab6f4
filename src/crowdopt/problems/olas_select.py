"""OLAS Model 10 (paper 000, Sec. 3.3, eqs. 10a-10i): select query points and assign labelers.

From a pool of u points with entropies e_j and M labelers (accuracy a_i, capacity c_i), select
points and give each selected point one labeler, maximizing the total entropy of the selection
(10a), each point at most once (10b), labeler i at most c_i points (10c), and every selected
pair with noise eps(a_i, e_j) <= beta (10d); optionally at most B points in total (the per-cycle
budget, digest 000 section 7.9). The policy block (10e)-(10h) only picks the canonical (Theorem 1)
assignment of the selected set and never changes the optimum (digest F1), so the evaluator checks
(10b)-(10d) and the budget; `policy_violations` checks (10e)-(10h) separately.

This module holds the typed instance, validation, the ONE shared `allowed` predicate (10d as
variable fixing, digest section 7.4), the ONE evaluator and the random generator.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError
from ..validate import (
    ids,
    int_array,
    integer,
    only_known_fields,
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
    ProblemSpec,
    predicted_memory_guard,
    predicted_time_guard,
)
from .olas_assign import (
    POOL_HELP,
    POOL_PARAMS,
    OlasAssignInstance,
    OlasPool,
    assign_sorted,
    draw_pool,
)
from .olas_noise import noise_from_spec

ALLOWED_TOL = 1e-12  # the one tolerance of (10d): eps_ij <= beta + ALLOWED_TOL (digest 7.4)


@dataclass(frozen=True, eq=False)
class OlasSelectInstance(OlasPool):
    """The pool (entropies in the caller's order), the noise bound beta of (10d), and an
    optional cap B on the number of selected points."""

    beta: float = 0.2
    budget: int | None = None

    problem: ClassVar[str] = "olas-select"

    @classmethod
    def from_arrays(cls, accuracies: Any, capacities: Any, entropies: Any, *,
                    beta: Any = 0.2, budget: Any = None, noise: Any = "linear",
                    labeler_ids: Any = None, point_ids: Any = None) -> OlasSelectInstance:
        """Model 10 (eqs. 10a-10i) from plain data, validated like an instance file.

        Args:
            accuracies: each labeler's accuracy in [0, 1].
            capacities: each labeler's capacity, an integer >= 0.
            entropies: each pool point's entropy >= 0.
            beta: the noise bound of (10d): the chosen points' total noise is at most beta.
            budget: a cap B on the number of points selected; None = no cap.
            noise: the noise model ('linear', 'superellipse', a spec dict or a
                NoiseFunction); it must be monotone on these values.
            labeler_ids: the labelers' ids (strings or integers); None = 0-based positions.
            point_ids: the points' ids, as labeler_ids.

        Returns:
            The instance.

        Raises:
            InputError: a bad value (one line naming the field).
        """
        return make_instance(accuracies, capacities, entropies, noise, beta, budget,
                             labeler_ids, point_ids)

    @property
    def max_selected(self) -> int:
        """Most points any solution can select: min(u, total capacity, B)."""
        cap = min(self.n_points, self.total_capacity)
        return cap if self.budget is None else min(cap, self.budget)


@dataclass(frozen=True, eq=False)
class OlasSelectSolution:
    selected: np.ndarray  # pool indices of the selected points (int64), shape (n,)
    assignment: np.ndarray  # labeler index of each selected point (int64), shape (n,)


def allowed(inst: OlasSelectInstance) -> np.ndarray:
    """THE shared (10d) predicate, shape (M, u): eps_ij <= beta + 1e-12.

    The fast path, every exact model (variable fixing) and the evaluator (on its pairs) use this
    one predicate, so a pair with eps exactly at beta is treated the same everywhere.
    """
    return inst._cached("allowed", lambda: inst.eps_matrix() <= inst.beta + ALLOWED_TOL)


def sorted_allowed(inst: OlasSelectInstance) -> np.ndarray:
    """`allowed` with labelers by accuracy (desc.) and points by entropy (desc.)."""
    return allowed(inst)[inst.labeler_order()][:, inst.point_order()]


def kappa(inst: OlasSelectInstance) -> np.ndarray:
    """kappa_j = number of labelers allowed for the j-th point in entropy order (digest F2).

    By monotonicity the allowed labelers of a point are the best kappa_j ones, and kappa is
    non-decreasing along the entropy order.
    """
    return sorted_allowed(inst).sum(axis=0)


def _sorted_rows(inst: OlasSelectInstance):
    """Per labeler in accuracy order (descending): (its index, eps over the points in entropy
    order). One row at a time: memory O(u), never the M x u matrix."""
    e_sorted = inst.entropies[inst.point_order()]
    for i in inst.labeler_order():
        yield int(i), np.asarray(inst.noise.eps(inst.accuracies[i], e_sorted), float)


def first_allowed(inst: OlasSelectInstance) -> np.ndarray:
    """Per labeler in accuracy order, the position (in entropy order) of the first point it may
    take under (10d), u if none: by the staircase, it may take every point from there on."""
    def make() -> np.ndarray:
        u = inst.n_points
        out = np.full(inst.n_labelers, u, dtype=np.int64)
        for k, (_, row) in enumerate(_sorted_rows(inst)):
            ok = row <= inst.beta + ALLOWED_TOL
            if ok.any():
                out[k] = int(ok.argmax())
        return out
    return inst._cached("first_allowed", make)


def _check_noise_and_staircase(inst: OlasSelectInstance) -> None:
    """eps in [0, 1] on the instance, then allowed[i, j] a staircase in sorted order (what the
    theorems need); one labeler row at a time (memory O(u))."""
    ol, op = inst.labeler_order(), inst.point_order()
    prev = None
    lo, hi, bad = math.inf, -math.inf, False
    stair: str | None = None
    for k, (_, row) in enumerate(_sorted_rows(inst)):
        if row.size:
            bad = bad or not np.all(np.isfinite(row))
            lo, hi = min(lo, float(np.nanmin(row))), max(hi, float(np.nanmax(row)))
        ok = row <= inst.beta + ALLOWED_TOL
        down = np.flatnonzero(ok[:-1] & ~ok[1:])  # allowed, but not for a lower-entropy point
        worse = np.flatnonzero(ok & ~prev) if prev is not None else down[:0]
        if stair is None and len(down):
            j = int(down[0])
            stair = (f"labeler {int(ol[k])} may take point {int(op[j])} but not the "
                     f"lower-entropy point {int(op[j + 1])}")
        elif stair is None and len(worse):  # allowed for a worse labeler, not a better one
            j = int(worse[0])
            stair = (f"labeler {int(ol[k])} may take point {int(op[j])} but the more accurate "
                     f"labeler {int(ol[k - 1])} may not")
        prev = ok
    if bad or (inst.n_points and (lo < 0.0 or hi > 1.0 + 1e-12)):
        raise InputError("noise", "values in [0, 1] on the instance",
                         f"range [{lo:.4g}, {hi:.4g}]")
    if stair is not None:
        raise InputError("noise", "eps non-increasing in accuracy and non-decreasing in entropy",
                         stair)


def make_instance(accuracies: Any, capacities: Any, entropies: Any, noise: Any = "linear",
                  beta: Any = 0.2, budget: Any = None, labeler_ids: Any = None,
                  point_ids: Any = None) -> OlasSelectInstance:
    """Validated Model-10 instance from plain values (lists, arrays, noise name or function).

    capacities are integers >= 0 (a labeler with capacity 0 takes nothing); budget None = no cap.
    Raises InputError if the noise function is not monotone on this instance's (a, e) values.
    """
    a = probability_array(accuracies, "accuracies", min_len=1)
    c = int_array(capacities, "capacities", lo=0, length=len(a))
    nf = noise_from_spec(noise)
    e = real_array(entropies, "entropies", lo=0.0, hi=nf.max_entropy)
    b = real(beta, "beta", lo=0.0)
    B = None if budget is None else integer(budget, "budget", lo=0)
    lid = ids(labeler_ids, "labeler_ids", len(a)) if labeler_ids is not None else None
    pid = ids(point_ids, "point_ids", len(e)) if point_ids is not None else None
    inst = OlasSelectInstance(a, c, e, nf, labeler_ids=lid, point_ids=pid, beta=b, budget=B)
    _check_noise_and_staircase(inst)
    return inst


_FIELDS = ("accuracies", "capacities", "entropies", "noise", "beta", "budget", "labeler_ids",
           "point_ids", "name")


def from_dict(d: dict) -> OlasSelectInstance:
    """The instance of an instance file's fields, validated."""
    only_known_fields(d, _FIELDS, "olas-select")
    for key in ("accuracies", "capacities", "entropies", "beta"):
        if key not in d:
            raise InputError(key, "a value (the field is required)", "nothing")
    return make_instance(d["accuracies"], d["capacities"], d["entropies"], d.get("noise", "linear"),
                         d["beta"], d.get("budget"), d.get("labeler_ids"), d.get("point_ids"))


def to_dict(inst: OlasSelectInstance) -> dict:
    """The instance file's fields of an instance."""
    out: dict[str, Any] = {"beta": inst.beta, **inst.pool_dict()}
    if inst.budget is not None:
        out["budget"] = inst.budget
    return out


def evaluate(inst: OlasSelectInstance, sol: OlasSelectSolution) -> Evaluation:
    """Objective (10a) = total entropy of the selected points; feasibility of (10b)-(10d) + B."""
    sel = np.asarray(sol.selected)
    lab = np.asarray(sol.assignment)
    if sel.ndim != 1 or lab.shape != sel.shape:
        return Evaluation(-math.inf, False, math.inf,
                          [f"selected {sel.shape} and assignment {lab.shape} must be equal 1-d"])
    if sel.size and (not np.issubdtype(sel.dtype, np.integer)
                     or not np.issubdtype(lab.dtype, np.integer)):
        return Evaluation(-math.inf, False, math.inf, ["indices must be integers"])
    sel = sel.astype(np.int64)
    lab = lab.astype(np.int64)
    violations: list[str] = []
    worst = 0.0
    in_range = (sel >= 0) & (sel < inst.n_points) & (lab >= 0) & (lab < inst.n_labelers)
    if not in_range.all():
        violations.append(f"{int((~in_range).sum())} pair(s) with a point or labeler out of range")
        worst = max(worst, float((~in_range).sum()))
    sel_ok, lab_ok = sel[in_range], lab[in_range]
    dup = len(sel_ok) - len(np.unique(sel_ok))
    if dup:
        violations.append(f"{dup} point(s) selected more than once (10b)")
        worst = max(worst, float(dup))
    loads = np.bincount(lab_ok, minlength=inst.n_labelers)
    over = loads - inst.capacities
    if (over > 0).any():
        i = int(np.argmax(over))
        violations.append(f"labeler {i} has {int(loads[i])} points, capacity "
                          f"{int(inst.capacities[i])} (10c)")
        worst = max(worst, float(over.max()))
    # one eps per selected pair (the `allowed` predicate on it): memory O(selected)
    noise = np.asarray(inst.noise.eps(inst.accuracies[lab_ok], inst.entropies[sel_ok]), float)
    ok = noise <= inst.beta + ALLOWED_TOL
    if not ok.all():
        k = int(np.argmax(~ok))
        violations.append(f"{int((~ok).sum())} pair(s) with noise above beta, e.g. labeler "
                          f"{int(lab_ok[k])} on point {int(sel_ok[k])}: eps={noise[k]:.6g} > "
                          f"beta={inst.beta:.6g} (10d)")
        worst = max(worst, float((noise - inst.beta).max()))
    if inst.budget is not None and len(sel) > inst.budget:
        violations.append(f"{len(sel)} points selected, budget {inst.budget}")
        worst = max(worst, float(len(sel) - inst.budget))
    objective = float(inst.entropies[sel_ok].sum())
    extra = {"selected": int(len(sel)), "max_noise": float(noise.max()) if noise.size else 0.0}
    return Evaluation(objective, not violations, worst, violations, extra)


def policy_violations(inst: OlasSelectInstance, sol: OlasSelectSolution) -> list[str]:
    """Which of the policy constraints (10e)-(10h) the solution breaks (sorted index order).

    (10e) no crossing: along the entropy order the labeler rank of selected points never
    decreases; (10f)-(10h): labelers are used in accuracy order, all full but the last used one.
    """
    out: list[str] = []
    rank_l = np.empty(inst.n_labelers, np.int64)
    rank_l[inst.labeler_order()] = np.arange(inst.n_labelers)
    rank_p = np.empty(inst.n_points, np.int64)
    rank_p[inst.point_order()] = np.arange(inst.n_points)
    sel = np.asarray(sol.selected, np.int64)
    lab = np.asarray(sol.assignment, np.int64)
    by_pos = np.argsort(rank_p[sel], kind="stable")
    ranks = rank_l[lab[by_pos]]
    if np.any(np.diff(ranks) < 0):
        out.append("(10e) a lower-entropy point goes to a more accurate labeler")
    loads = np.bincount(rank_l[lab], minlength=inst.n_labelers)
    caps = inst.capacities[inst.labeler_order()]
    for i in range(inst.n_labelers - 1):
        if loads[i] < caps[i] and loads[i + 1] > 0:
            out.append(f"(10h) labeler rank {i} has spare capacity but rank {i + 1} is used")
            break
    return out


def solution_from_dict(inst: OlasSelectInstance, d: dict) -> OlasSelectSolution:
    """The one reader of an olas-select solution: {'selected': [points], 'assignment':
    [the labeler of each selected point]} (same lengths; a point at most once), ids (exact
    type) where the instance names points / labelers, else 0-based positions
    (`crowdopt schema solution-olas-select`)."""
    d = solution_object(d, "solution", ("selected", "assignment"))
    sel = solution_entries(d["selected"], "solution.selected", inst.point_ids, inst.n_points,
                           "point", unique=True)
    lab = solution_entries(d["assignment"], "solution.assignment", inst.labeler_ids,
                           inst.n_labelers, "labeler", unique=False, length=len(sel))
    return OlasSelectSolution(sel, lab)


def solution_to_dict(inst: OlasSelectInstance, sol: OlasSelectSolution) -> dict:
    """The JSON form of a solution (what `solution_from_dict` reads): ids where given."""
    sel = [int(j) for j in sol.selected]
    lab = [int(i) for i in sol.assignment]
    return {
        "selected": [inst.point_ids[j] for j in sel] if inst.point_ids is not None else sel,
        "assignment": [inst.labeler_ids[i] for i in lab] if inst.labeler_ids is not None
        else lab,
    }


GENERATOR_PARAMS = {
    **POOL_PARAMS,
    "points": 30,
    "beta": 0.1,
    "budget": -1,  # < 0: no cap
}
GENERATOR_HELP = {
    **POOL_HELP,
    "points": "pool points the learner may query (u)",
    "capacity_max": "the largest capacity",
    "beta": "the noise bound: the chosen points' total noise stays at most beta",
    "budget": "at most this many points are chosen (B); -1: no cap",
}


def generate(seed: int = 0, **params: Any) -> OlasSelectInstance:
    """Random Model 10 instance: the OLAS pool (digest 000 section 4), beta and a cap B."""
    p = {**GENERATOR_PARAMS, **params}
    _, a, c, e = draw_pool(seed, p, GENERATOR_PARAMS)
    beta = real(p["beta"], "beta", lo=0)
    budget = integer(p["budget"], "budget")
    return make_instance(a, c, e, p["noise"], beta, None if budget < 0 else budget)


def example() -> OlasSelectInstance:
    """The demo instance: a pool of 60 points, 5 labelers, Noise Model 2, beta = 0.05 (seeded)."""
    return generate(7, points=60, labelers=5, noise="superellipse", beta=0.05, entropy_max=1.0)


def size(inst: OlasSelectInstance) -> str:
    """The instance's size line."""
    b = "" if inst.budget is None else f" B={inst.budget}"
    return f"u={inst.n_points} M={inst.n_labelers} beta={inst.beta:g}{b}"


def assign_theorem1(inst: OlasSelectInstance, selected: np.ndarray) -> OlasSelectSolution:
    """Theorem 1 assignment of a selected set (k-th highest entropy -> k-th capacity slot).

    For any selection that admits an assignment with all pairs allowed, this one is allowed too
    (bottleneck optimality of Theorem 1) and satisfies (10e)-(10h). `selected` is returned in
    entropy order (ties by pool order).
    """
    sel = np.sort(np.asarray(selected, dtype=np.int64))
    sub = OlasAssignInstance(inst.accuracies, inst.capacities, inst.entropies[sel], inst.noise)
    z = assign_sorted(sub).assignment
    order = np.argsort(-inst.entropies[sel], kind="stable")
    return OlasSelectSolution(sel[order], z[order])


# The catalogue entry; its methods live in solvers/olas_select.py and load on first use.
_SOLVERS = "crowdopt.solvers.olas_select:"

SPEC = ProblemSpec.from_module(
    sys.modules[__name__],
    name="olas-select",
    title="OLAS Model 10: joint query selection and labeler assignment under a noise bound",
    paper="000 (Ahadi et al.), Sec. 3.3, Theorem 2, Algorithm 1",
    sense="max",
    methods=(
        Method("greedy", "fast", Lazy(_SOLVERS + "_fast"),
               "corrected Algorithm 1 (Theorem 2): one scan of the entropy-sorted pool, cap B"),
        Method("lp-prefix", "exact", Lazy(_SOLVERS + "solve_prefix_lp"),
               "Hall prefix LP, O(u + M) rows, totally unimodular (integrality checked)"),
        Method("milp-compact", "exact", Lazy(_SOLVERS + "solve_compact"),
               "compact MILP, (10e) as a monotone rank variable, HiGHS, gap 0",
               applicable=predicted_memory_guard("olas-select", "milp-compact"),
               time_limit=MILP_DEFAULT_TIME,
               time_guard=predicted_time_guard("olas-select", "milp-compact")),
        Method("milp-literal", "exact", Lazy(_SOLVERS + "solve_literal"),
               "the paper's MILP (10a)-(10i) with pairwise (10e), HiGHS, gap 0 (small pools)",
               applicable=predicted_memory_guard("olas-select", "milp-literal"),
               time_limit=MILP_DEFAULT_TIME,
               time_guard=predicted_time_guard("olas-select", "milp-literal")),
        Method("lp-bmatching", "exact", Lazy(_SOLVERS + "solve_bmatching_lp"),
               "b-matching LP (10a)-(10d), totally unimodular (integrality checked)"),
    ),
)
