"""OLAS Model 2 (paper 000, Sec. 3.2, eqs. 2a-2d): assign N query points to M labelers.

Minimize the worst label noise max_j eps(a_i(j), e_j) subject to every point labeled exactly once
(2b) and labeler i taking at most c_i points (2c). Feasible iff N <= sum(c).
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
    ids,
    int_array,
    only_known_fields,
    probability_array,
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
from .olas_noise import NoiseFunction, noise_from_spec


@dataclass(frozen=True, eq=False)
class OlasPool(ProblemInstance):
    """What both OLAS models share: labelers (accuracy a_i, capacity c_i), points (entropy
    e_j), the noise function, and the sorted orders of Theorems 1-2 (cached, read-only)."""

    accuracies: np.ndarray  # a_i, shape (M,)
    capacities: np.ndarray  # c_i >= 0 integers, shape (M,)
    entropies: np.ndarray  # e_j >= 0, shape (N,)
    noise: NoiseFunction
    labeler_ids: list | None = None
    point_ids: list | None = None

    def pool_dict(self) -> dict[str, Any]:
        """The JSON fields of the pool (the instance files of both models start with these)."""
        out: dict[str, Any] = {
            "noise": self.noise.to_spec(),
            "accuracies": self.accuracies.tolist(),
            "capacities": self.capacities.tolist(),
            "entropies": self.entropies.tolist(),
        }
        if self.labeler_ids is not None:
            out["labeler_ids"] = self.labeler_ids
        if self.point_ids is not None:
            out["point_ids"] = self.point_ids
        return out

    @property
    def n_labelers(self) -> int:
        """Number of labelers M."""
        return len(self.accuracies)

    @property
    def n_points(self) -> int:
        """Number of points."""
        return len(self.entropies)

    @property
    def total_capacity(self) -> int:
        """Sum of the capacities."""
        return int(self.capacities.sum())

    def _cached(self, key: str, make: Any) -> np.ndarray:
        cache = self.__dict__.setdefault("_cache", {})
        if key not in cache:
            value = make()
            value.setflags(write=False)
            cache[key] = value
        return cache[key]

    def eps_matrix(self) -> np.ndarray:
        """eps(a_i, e_j) for every (labeler, point), shape (M, N); computed once."""
        return self._cached("eps", lambda: self.noise.matrix(self.accuracies, self.entropies))

    def labeler_order(self) -> np.ndarray:
        """Labelers by accuracy, descending; ties keep the input order (stable)."""
        return self._cached("order_l", lambda: np.argsort(-self.accuracies, kind="stable"))

    def point_order(self) -> np.ndarray:
        """Points by entropy, descending; ties keep the input order (digest 000, 7.17)."""
        return self._cached("order_p", lambda: np.argsort(-self.entropies, kind="stable"))


@dataclass(frozen=True, eq=False)
class OlasAssignInstance(OlasPool):
    """Model 2: assign every point (query set) to a labeler."""

    problem: ClassVar[str] = "olas-assign"

    @classmethod
    def from_arrays(cls, accuracies: Any, capacities: Any, entropies: Any, *,
                    noise: Any = "linear", labeler_ids: Any = None,
                    point_ids: Any = None) -> OlasAssignInstance:
        """Model 2 (eqs. 2a-2d) from plain data, validated like an instance file.

        Args:
            accuracies: each labeler's accuracy a_i in [0, 1].
            capacities: each labeler's capacity c_i, an integer >= 0.
            entropies: each point's entropy e_j >= 0 (the classifier's uncertainty).
            noise: the noise model eps(a, e): a name ('linear', 'superellipse'), a spec dict
                or a NoiseFunction.
            labeler_ids: the labelers' ids (strings or integers) that solutions and models
                use; None = 0-based positions.
            point_ids: the points' ids, as labeler_ids.

        Returns:
            The instance.

        Raises:
            InputError: a bad value (one line naming the field).
        """
        return make_instance(accuracies, capacities, entropies, noise, labeler_ids, point_ids)

    @property
    def feasible(self) -> bool:
        """Whether every point fits: N <= sum of the capacities."""
        return self.n_points <= self.total_capacity


@dataclass(frozen=True, eq=False)
class OlasAssignSolution:
    assignment: np.ndarray  # labeler index of each point (-1 = unassigned), shape (N,)


def make_instance(accuracies: Any, capacities: Any, entropies: Any, noise: Any = "linear",
                  labeler_ids: Any = None, point_ids: Any = None) -> OlasAssignInstance:
    """Validated instance from plain values (lists, arrays, noise name or NoiseFunction)."""
    a = probability_array(accuracies, "accuracies", min_len=1)
    c = int_array(capacities, "capacities", lo=0, length=len(a))
    nf = noise_from_spec(noise)
    e = real_array(entropies, "entropies", lo=0.0, hi=nf.max_entropy)
    lid = ids(labeler_ids, "labeler_ids", len(a)) if labeler_ids is not None else None
    pid = ids(point_ids, "point_ids", len(e)) if point_ids is not None else None
    return OlasAssignInstance(a, c, e, nf, lid, pid)


def from_dict(d: dict) -> OlasAssignInstance:
    """The instance of an instance file's fields, validated."""
    known = {"accuracies", "capacities", "entropies", "noise", "labeler_ids", "point_ids", "name"}
    only_known_fields(d, known, "olas-assign")
    for key in ("accuracies", "capacities", "entropies"):
        if key not in d:
            raise InputError(key, "a list (the field is required)", "nothing")
    return make_instance(d["accuracies"], d["capacities"], d["entropies"], d.get("noise", "linear"),
                         d.get("labeler_ids"), d.get("point_ids"))


def to_dict(inst: OlasAssignInstance) -> dict:
    """The instance file's fields of an instance."""
    return inst.pool_dict()


def evaluate(inst: OlasAssignInstance, sol: OlasAssignSolution) -> Evaluation:
    """Objective (2a) = max over assigned points of eps; feasibility of (2b)-(2c)."""
    z = np.asarray(sol.assignment)
    violations: list[str] = []
    worst = 0.0
    if z.shape != (inst.n_points,):
        return Evaluation(math.inf, False, math.inf, [f"assignment has shape {z.shape}, expected ({inst.n_points},)"])
    bad = (z < 0) | (z >= inst.n_labelers)
    if bad.any():
        violations.append(f"{int(bad.sum())} point(s) not assigned to a labeler (2b)")
        worst = max(worst, float(bad.sum()))
    ok = ~bad
    loads = np.bincount(z[ok], minlength=inst.n_labelers)
    over = loads - inst.capacities
    if (over > 0).any():
        i = int(np.argmax(over))
        violations.append(f"labeler {i} has {int(loads[i])} points, capacity {int(inst.capacities[i])} (2c)")
        worst = max(worst, float(over.max()))
    if ok.any():  # one eps per assigned point: no labeler-by-point matrix (memory O(N))
        noise = inst.noise.eps(inst.accuracies[z[ok]], inst.entropies[ok])
        objective = float(noise.max())
    else:
        objective = 0.0
    return Evaluation(objective, not violations, worst, violations)


def solution_from_dict(inst: OlasAssignInstance, d: dict) -> OlasAssignSolution:
    """The one reader of an olas-assign solution: {'assignment': [the labeler of each point,
    in the instance's point order]}, labeler ids (exact type) when the instance names its
    labelers, else 0-based positions; null = the point is not assigned
    (`crowdopt schema solution-olas-assign`)."""
    d = solution_object(d, "solution", ("assignment",))
    return OlasAssignSolution(solution_entries(
        d["assignment"], "solution.assignment", inst.labeler_ids, inst.n_labelers, "labeler",
        unique=False, length=inst.n_points, allow_null=True))


def solution_to_dict(inst: OlasAssignInstance, sol: OlasAssignSolution) -> dict:
    """The JSON form of a solution (what `solution_from_dict` reads): labeler ids where given."""
    names = inst.labeler_ids
    return {"assignment": [None if i < 0 else names[i] if names is not None else i
                           for i in (int(v) for v in sol.assignment)]}


POOL_PARAMS = {
    "points": 15,
    "labelers": 5,
    "capacity_min": 1,
    "capacity_max": 4,
    "acc_min": 0.5,
    "acc_max": 0.95,
    "entropy_max": round(math.log(2), 6),
    "noise": "linear",
    "decimals": -1,  # >= 0 rounds a and e to create ties
}
GENERATOR_PARAMS = POOL_PARAMS
# one line per parameter: `crowdopt generate olas-assign --show-params` and the problem's page
POOL_HELP = {
    "points": "pool points to label (N)",
    "labelers": "labelers (M)",
    "capacity_min": "each labeler's capacity ~ U{capacity_min .. capacity_max}",
    "capacity_max": "the largest capacity (raised at random until the labelers can take every "
                    "point, in olas-assign)",
    "acc_min": "each labeler's accuracy ~ U(acc_min, acc_max)",
    "acc_max": "the largest accuracy",
    "entropy_max": "each point's predictive entropy ~ U(0, entropy_max) (ln 2: two classes)",
    "noise": "linear | nm1 | nm2 | superellipse: the noise eps(a, e) of accuracy a on a point "
             "of entropy e (Sec. 4.1): Noise Model 1 (linear, alias nm1) or 2 (superellipse, "
             "alias nm2)",
    "decimals": ">= 0: accuracies and entropies rounded to that many decimals (ties); -1: not",
}
GENERATOR_HELP = POOL_HELP


def draw_pool(seed: int, p: dict, known: dict) -> tuple[np.random.Generator, np.ndarray,
                                                         np.ndarray, np.ndarray]:
    """The random labeler pool of both OLAS generators (digest 000 section 4), validated:
    (rng, a ~ U(acc_min, acc_max), c ~ U{capacity_min..capacity_max}, e ~ U(0, entropy_max))."""
    from ..validate import MAX_ITEMS, integer, real

    unknown = sorted(set(p) - set(known))
    if unknown:
        raise InputError(unknown[0], "a generator parameter (" + ", ".join(known) + ")",
                         "an unknown name")
    n = integer(p["points"], "points", lo=1, hi=MAX_ITEMS)
    m = integer(p["labelers"], "labelers", lo=1, hi=MAX_ITEMS)
    cmin = integer(p["capacity_min"], "capacity_min", lo=0)
    cmax = integer(p["capacity_max"], "capacity_max", lo=cmin)
    amin = real(p["acc_min"], "acc_min", lo=0, hi=1)
    amax = real(p["acc_max"], "acc_max", lo=amin, hi=1)
    emax = real(p["entropy_max"], "entropy_max", lo=0, hi=1)
    dec = integer(p["decimals"], "decimals", lo=-1, hi=12)
    rng = np.random.default_rng(seed)
    a = rng.uniform(amin, amax, m)
    e = rng.uniform(0.0, emax, n)
    if dec >= 0:
        a, e = np.round(a, dec), np.round(e, dec)
    c = rng.integers(cmin, cmax + 1, m)
    return rng, a, c, e


def generate(seed: int = 0, **params: Any) -> OlasAssignInstance:
    """Random Model 2 instance: the OLAS pool, with capacities raised until sum(c) >= N."""
    p = {**GENERATOR_PARAMS, **params}
    rng, a, c, e = draw_pool(seed, p, GENERATOR_PARAMS)
    while c.sum() < len(e):  # make the instance feasible: N <= total capacity
        c[rng.integers(len(c))] += 1
    return make_instance(a, c, e, p["noise"])


def example() -> OlasAssignInstance:
    """The demo instance: 40 points, 6 labelers, Noise Model 2 (seeded)."""
    return generate(7, points=40, labelers=6, noise="superellipse")


def size(inst: OlasAssignInstance) -> str:
    """The instance's size line."""
    return f"N={inst.n_points} M={inst.n_labelers}"


def assign_sorted(inst: OlasAssignInstance) -> OlasAssignSolution:
    """Theorem 1 (eqs. 5, 8): k-th highest-entropy point gets the k-th capacity slot."""
    if not inst.feasible:
        raise ValueError("assign_sorted: more points than total capacity")
    order_l, order_p = inst.labeler_order(), inst.point_order()
    # only the first N slots are used: cap each labeler's run at N (capacities may be huge)
    slots = np.repeat(order_l, np.minimum(inst.capacities[order_l], inst.n_points))
    z = np.empty(inst.n_points, dtype=np.int64)
    z[order_p] = slots[: inst.n_points]
    return OlasAssignSolution(z)


# The catalogue entry; its methods live in solvers/olas_assign.py and load on first use.
_SOLVERS = "crowdopt.solvers.olas_assign:"

SPEC = ProblemSpec.from_module(
    sys.modules[__name__],
    name="olas-assign",
    title="OLAS Model 2: min-max noise labeler assignment",
    paper="000 (Ahadi et al.), Sec. 3.2, Theorem 1",
    sense="min",
    methods=(
        Method("sorted", "fast", Lazy(_SOLVERS + "_fast"),
               "Theorem 1: entropy-sorted points fill accuracy-sorted labelers"),
        # `exact` = the first applicable exact method: the polynomial threshold search
        # (milliseconds at N = 20,000); the MILP stays as a named cross-check
        Method("threshold", "exact", Lazy(_SOLVERS + "solve_threshold"),
               "bottleneck threshold search with the nested Hall condition (polynomial)"),
        Method("milp-epigraph", "exact", Lazy(_SOLVERS + "solve_milp"),
               "epigraph MILP (2a)-(2d), HiGHS, gap 0 (cross-check; default limit 120 s)",
               applicable=predicted_memory_guard("olas-assign", "milp-epigraph"),
               time_limit=MILP_DEFAULT_TIME,
               time_guard=predicted_time_guard("olas-assign", "milp-epigraph")),
    ),
)
