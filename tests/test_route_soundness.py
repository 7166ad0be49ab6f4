"""Soundness at the seams: every (problem, exact method, route) on small random instances drawn
where routes once disagreed: coefficients over wide ranges (weights and costs from 1e-12 to
1e12 relative), rows on the objective variable from either side, a user's objective with a wide
range, unchanged models on the user route. Every claim is held against witnesses no crowdopt
route produced: exhaustive enumeration of the problem's plans on the registered and unchanged
routes, and on a user's model the points a fresh HiGHS finds on its MPS file under three
objective scalings (re-checked and valued on the read arrays) and brute force where the model
is a small pure-integer one (tests/extend_oracle.py).

Two rules, counted over every case: no proof where a witness is better (a false proof), and no
reported bound that a witness crosses. `make test` runs a sample; `make soak` at least 2,000
cases (`CROWDOPT_SOAK=1`)."""

from __future__ import annotations

import itertools
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyomo.environ as pyo
import pytest

import crowdopt
from crowdopt import CltapInstance, LabelerSetInstance, WorkerSelectInstance
from crowdopt.problems import cltap as C
from crowdopt.problems.labeler_set import LabelerSetSolution
from crowdopt.problems.olas_assign import OlasAssignSolution
from crowdopt.problems.olas_select import OlasSelectSolution
from crowdopt.problems.worker_select import WorkerSelectSolution
from crowdopt.registry import get_problem

sys.path.insert(0, str(Path(__file__).parent))
from cltap_oracle import optimum as cltap_optimum  # noqa: E402
from extend_oracle import witnesses  # noqa: E402
from test_cltap_soundness import inverse_weight  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
REL = 1e-7
PROBLEMS = ("olas-assign", "olas-select", "labeler-set", "worker-select", "cltap")
REGISTERED = ("solve", "compare", "certify")  # routes on the problem as given
MODEL_ROUTES = ("model-unchanged", "model-rows", "model-objective")
# a formulation with an array emitter: rows added without walking the model keep its registered
# part unbuilt, solved emitted + additions compiled (the mixed route)
MIXED = "model-mixed"


# ----------------------------------------------------------------------------- instances
def draw_instance(problem: str, rng: np.random.Generator) -> object:
    """A small instance (enumerable) whose weights or costs span a wide range."""
    seed = int(rng.integers(10**6))
    mag = float(10.0 ** rng.choice([0, 0, -4, -8, -12, 4, 8, 12]))
    if problem == "olas-assign":
        return crowdopt.generate(problem, seed, points=int(rng.integers(1, 6)),
                                 labelers=int(rng.integers(1, 4)),
                                 entropy_max=0.693147 * min(mag, 1.0))
    if problem == "olas-select":
        return crowdopt.generate(problem, seed, points=int(rng.integers(1, 6)),
                                 labelers=int(rng.integers(1, 3)),
                                 beta=float(rng.choice([0.02, 0.1, 0.3])),
                                 budget=int(rng.choice([-1, 1, 3])),
                                 entropy_max=0.693147 * min(mag, 1.0))
    if problem == "labeler-set":
        M = int(rng.integers(1, 8))
        q = rng.uniform(0.55, 0.95, M)
        c = rng.uniform(0.5, 1.5, M) * float(10.0 ** rng.choice([0, -6, 6]))
        if M > 1 and rng.random() < 0.6:
            c[rng.integers(M)] *= float(10.0 ** rng.choice([4, 8, 12, -12]))
        return LabelerSetInstance.from_arrays(q, costs=c, cost_weight=float(
            10.0 ** rng.choice([-3, -6, 0])), rule=str(rng.choice(["mv", "wmv"])) if M <= 5
            else "mv")
    if problem == "worker-select":
        M = int(rng.integers(1, 8))
        w = rng.uniform(0.45, 0.95, M)
        kw = {}
        if rng.random() < 0.6:
            costs = rng.integers(1, 10, M) * int(10 ** rng.choice([0, 6, 12]))
            kw = {"costs": costs.tolist(), "budget": int(costs.sum() * rng.uniform(0.2, 0.8))}
        return WorkerSelectInstance.from_arrays(int(rng.integers(1, M + 2)), w_hat=w.tolist(),
                                                n=int(rng.integers(5, 30)), **kw)
    t = int(rng.integers(1, 4))
    base = C.generate(seed, t=t, a=int(rng.integers(1, 4)), K=int(rng.integers(1, t + 1)),
                      trend=str(rng.choice(["dec", "inc", "nonmono"])))
    phi = base.phi * min(mag, 1.0)
    if rng.random() < 0.3 and base.a > 1:  # one annotator far below the others
        phi[rng.integers(base.a)] *= 1e-8
    return CltapInstance.from_arrays(inverse_weight(phi), base.t, base.b)


# ----------------------------------------------------------------------------- the truth
def _plans(problem: str, inst: object) -> list:
    """Every plan of a tiny instance (the evaluator sorts out the infeasible ones)."""
    if problem == "olas-assign":
        return [OlasAssignSolution(np.array(z, np.int64))
                for z in itertools.product(range(inst.n_labelers), repeat=inst.n_points)]
    if problem == "olas-select":
        out = []
        for z in itertools.product(range(-1, inst.n_labelers), repeat=inst.n_points):
            sel = [j for j in range(inst.n_points) if z[j] >= 0]
            out.append(OlasSelectSolution(np.array(sel, np.int64),
                                          np.array([z[j] for j in sel], np.int64)))
        return out
    n = inst.n_labelers if problem == "labeler-set" else inst.n_workers
    cls = LabelerSetSolution if problem == "labeler-set" else WorkerSelectSolution
    return [cls(np.array(s, np.int64)) for r in range(1, n + 1)
            for s in itertools.combinations(range(n), r)]


def optimum(problem: str, inst: object) -> float | None:
    """The problem's optimum by exhaustive enumeration (None: no feasible plan)."""
    if problem == "cltap":
        return cltap_optimum(inst.phi, inst.t, inst.b)
    spec = get_problem(problem)
    best = None
    for plan in _plans(problem, inst):
        ev = spec.evaluate(inst, plan)
        if ev.feasible and (best is None or (ev.objective > best if spec.sense == "max"
                                             else ev.objective < best)):
            best = ev.objective
    return best


# ----------------------------------------------------------------------------- user models
def objective_rows(m: pyo.ConcreteModel, value: float, rng: np.random.Generator) -> str:
    """Rows on the objective variable from either side: eta where the model has one, else a
    new variable equal to the objective; a new binary w gates some integer variables and the
    row eta >= c V w (from below) or eta <= c V (from above)."""
    obj = next(m.component_data_objects(pyo.Objective, active=True))
    if m.component("eta") is not None:
        v = m.eta
    else:
        m.user_t = pyo.Var()
        m.user_def = pyo.Constraint(expr=m.user_t == obj.expr)
        v = m.user_t
    ints = [x for x in m.component_data_objects(pyo.Var) if x.is_integer() and not x.fixed
            and x.lb != x.ub]
    c = float(rng.choice([0.5, 0.9, 0.99, 1.0, 1.01]))
    side = str(rng.choice(["below", "above"]))
    if side == "below" and ints:
        m.user_w = pyo.Var(domain=pyo.Binary)
        gated = [ints[int(k)] for k in rng.choice(len(ints), min(3, len(ints)), replace=False)]
        m.user_gate = pyo.Constraint(range(len(gated)), rule=lambda m, i: gated[i] <= m.user_w)
        m.user_low = pyo.Constraint(expr=v >= c * value * m.user_w)
        return f"gate of {len(gated)} and objective >= {c} V w"
    m.user_high = pyo.Constraint(expr=v <= c * value)
    return f"objective <= {c} V"


def decision_rows(m: pyo.ConcreteModel, value: float, rng: np.random.Generator) -> str:
    """Rows over the decision variable's entries (named from its index set, so the model is not
    walked: the mixed route), a new binary gating some of them, and a cap on their count."""
    var = next(getattr(m, n) for n in ("s", "y", "z") if getattr(m, n, None) is not None)
    keys = list(var.index_set())
    k = min(len(keys), int(rng.integers(1, 5)))
    pick = [keys[int(i)] for i in rng.choice(len(keys), k, replace=False)]
    m.user_w = pyo.Var(domain=pyo.Binary)
    m.user_gate = pyo.Constraint(range(k), rule=lambda m, i: var[pick[i]] <= m.user_w)
    cap = int(rng.integers(0, k + 1))
    m.user_cap = pyo.Constraint(expr=sum(var[p] for p in pick) <= cap + m.user_w)
    m.user_off = pyo.Constraint(expr=m.user_w <= int(rng.integers(0, 2)))
    return f"{k} entries gated by w, at most {cap} + w of them"


def wide_objective(m: pyo.ConcreteModel, value: float, rng: np.random.Generator) -> str:
    """The objective x 10^k plus a term 10^j x (a variable), k and j far apart."""
    obj = next(m.component_data_objects(pyo.Objective, active=True))
    pool = [x for x in m.component_data_objects(pyo.Var) if not x.fixed and x.lb != x.ub]
    k, j = int(rng.choice([-8, -4, 0, 4, 8])), int(rng.choice([-12, -6, 0, 6, 12]))
    sign = float(rng.choice([-1.0, 1.0]))
    obj.deactivate()
    if not pool:  # every variable fixed: the scaled objective alone
        m.user_objective = pyo.Objective(expr=10.0 ** k * obj.expr, sense=obj.sense)
        return f"objective x 1e{k}"
    v = pool[int(rng.integers(len(pool)))]
    m.user_objective = pyo.Objective(expr=10.0 ** k * obj.expr + sign * 10.0 ** j * v,
                                     sense=obj.sense)
    return f"objective x 1e{k} {'+' if sign > 0 else '-'} 1e{j} {v.name}"


# ----------------------------------------------------------------------------- one case
@dataclass
class Case:
    problem: str
    route: str
    method: str
    what: str
    claims: list  # (proven, value, bound, sense, the solver noise the claim admits)
    witness: list
    scale: float


def _floor(cert) -> float:
    """The solver noise a certificate admits on its numbers (`tolerances.solver_abs`)."""
    return float((cert.tolerances or {}).get("solver_abs", 0.0)) if cert is not None else 0.0


def _claims_of_result(r: crowdopt.Result, sense: str) -> list:
    return [(r.proven_optimal, r.objective, r.bound, sense, _floor(r.certificate))]


def run_case(problem: str, route: str, method: str, inst: object,
             rng: np.random.Generator) -> Case | None:
    """Run one route on one instance; the claims it makes and the witnesses against them."""
    spec = get_problem(problem)
    truth = optimum(problem, inst)
    if route in REGISTERED or route == "model-unchanged":
        wit = [] if truth is None else [truth]
        if route == "solve":
            claims = _claims_of_result(crowdopt.solve(inst, method, time_limit=30), spec.sense)
        elif route == "compare":
            cmp = crowdopt.compare(inst, time_limit=30, warmup=False, search_time=0.05)
            claims = [c for r in cmp for c in _claims_of_result(r, spec.sense)]
            claims.append((False, None, cmp.bound, spec.sense,
                           max((c[4] for c in claims), default=0.0)))
        elif route == "certify":
            cert = crowdopt.certify(inst, time_limit=30, search_time=0.05)
            claims = [(cert.proven_optimal, cert.objective, cert.bound, spec.sense,
                       max([_floor(cert)] + [float(x["certificate"]["tolerances"]["solver_abs"])
                                            for x in cert.details["runs"]
                                            if x.get("certificate")]))]
        else:
            r = crowdopt.solve_model(inst, crowdopt.build_model(inst, method), time_limit=30)
            claims = _claims_of_result(r, spec.sense)
        return Case(problem, route, method, "", claims, wit, abs(truth or 1.0))
    base = crowdopt.solve(inst, method, time_limit=30)
    if base.objective is None or not math.isfinite(base.objective):
        return None
    m = crowdopt.build_model(inst, method)
    change = {"model-rows": objective_rows, MIXED: decision_rows}.get(route, wide_objective)
    what = change(m, float(base.objective), rng)
    if route == MIXED:  # solved first: the witnesses' MPS writer walks (builds) the model
        r = crowdopt.solve_model(inst, m, time_limit=30)
        assert r.details["route"] == "mixed", r.details["route"]
        wit, scale = witnesses(m)
    else:
        wit, scale = witnesses(m)
        r = crowdopt.solve_model(inst, m, time_limit=30)
    sense = "max" if next(m.component_data_objects(pyo.Objective, active=True)).sense == \
        pyo.maximize else "min"
    own = r.details.get("model", {})
    floor = float(r.details.get("objective_unit") or 0.0) * 1e-8
    claims = [(bool(own.get("proven")), own.get("objective"), own.get("bound"), sense, floor)]
    if r.proven_optimal:  # a claim on the problem's objective too
        claims.append((True, r.objective, r.certificate.bound, spec.sense, _floor(r.certificate)))
    return Case(problem, route, method, what, claims, wit, scale)


def _beyond(sense: str, a: float, b: float, tol: float) -> bool:
    """Whether a is better than b by more than tol."""
    return a > b + tol if sense == "max" else a < b - tol


def violations(case: Case) -> list[str]:
    """False proofs and crossed bounds of a case."""
    out = []
    for proven, value, bound, sense, floor in case.claims:
        for w in case.witness:
            tol = (REL * max(abs(w), abs(value or 0.0), abs(bound or 0.0)) + floor
                   + 1e-12 * case.scale)
            if proven and value is not None and _beyond(sense, w, value, tol):
                out.append(f"false proof: {value!r} proven, witness {w!r}")
            if bound is not None and _beyond(sense, w, bound, tol):
                out.append(f"bound {bound!r} crossed by witness {w!r}")
    return out


def pairs() -> list[tuple[str, str, str]]:
    """Every (problem, route, method): the registered routes once per problem (method
    'exact'), the model routes per exact method with a model."""
    out = []
    from crowdopt.api import _formulations

    for p in PROBLEMS:
        out += [(p, route, "exact") for route in REGISTERED]
        out += [(p, route, m) for m in get_problem(p).builders() for route in MODEL_ROUTES]
        spec = get_problem(p)
        out += [(p, MIXED, m) for m, f in _formulations(spec).items() if f.emit is not None]
    return out


def campaign(per_pair: int, seed: int) -> list[Case]:
    cases = []
    for k, (problem, route, method) in enumerate(pairs()):
        rng = np.random.default_rng([seed, k])
        done = tries = 0
        while done < per_pair and tries < 4 * per_pair:
            tries += 1
            inst = draw_instance(problem, rng)
            if method != "exact" and get_problem(problem).method(method).applicable(inst):
                continue
            case = run_case(problem, route, method, inst, rng)
            if case is not None:
                cases.append(case)
                done += 1
    return cases


def assert_sound(cases: list[Case], at_least: int) -> None:
    assert len(cases) >= at_least, len(cases)
    bad = [(c, v) for c in cases for v in violations(c)]
    assert not bad, "\n".join(f"{c.problem} {c.route} {c.method} [{c.what}]: {v}"
                              for c, v in bad[:10])


def test_every_route_is_sound_on_the_sample():
    """`make test`'s sample: one case per (problem, route, method), 48 cases."""
    cases = campaign(1, seed=0)
    assert len({(c.problem, c.route, c.method) for c in cases}) == len(pairs())
    assert_sound(cases, at_least=len(pairs()))


@pytest.mark.soak
def test_every_route_is_sound_on_the_soak_set():
    """At least 2,000 cases: 45 per (problem, route, method), 0 false proofs, 0 crossed
    bounds (CROWDOPT_SEAMS_PER_PAIR sets another count)."""
    n = int(os.environ.get("CROWDOPT_SEAMS_PER_PAIR", "45"))
    assert_sound(campaign(n, seed=1), at_least=n * len(pairs()))
