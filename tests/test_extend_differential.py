"""`crowdopt.solve_model` on models a user changed, held against an independent route
(tests/extend_oracle.py: Pyomo writes MPS, a fresh highspy object solves it; brute force where
the model is tiny): every (problem, exact method), every kind of modification, small random
instances drawn by Hypothesis. Same status, equal objectives within a relative 1e-7, never a
proof where the independent route finds better. The sample here runs in `make test`; the
campaign (>= 500 modified solves) in `make soak`. Dropping the snapshot check (every model
taken as built) is caught: `test_dropping_the_snapshot_check_is_caught`."""

from __future__ import annotations

import hypothesis
import pyomo.environ as pyo
import pytest
from extend_oracle import MODIFICATIONS, independent, model_objective, run_case, small_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crowdopt
from crowdopt import Status
from crowdopt.problems.cltap import make_instance as make_cltap
from crowdopt.registry import get_problem, problem_names

PAIRS = [(p, m) for p in sorted(problem_names()) for m in get_problem(p).builders()]
KINDS = sorted(MODIFICATIONS)


def test_every_exact_model_and_enough_kinds_are_covered():
    assert len(PAIRS) == 10 and len(KINDS) >= 10


def campaign(pairs: list, examples: int, derandomize: bool, seed: int | None = None) -> list:
    """Run `examples` Hypothesis examples per (problem, method): each draws an instance and,
    for every kind of modification, its choices; returns the cases. `seed`: Hypothesis's
    seed where not derandomized (benchmarks/bench_extend_routes.py)."""
    cases: list = []
    for problem, method in pairs:
        check = _examples(problem, method, cases, examples, derandomize)
        (check if seed is None or derandomize else hypothesis.seed(seed)(check))()
    return cases


def _examples(problem: str, method: str, cases: list, examples: int, derandomize: bool):
    @settings(max_examples=examples, deadline=None, derandomize=derandomize,
              database=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data):
        def pick(options):
            return data.draw(st.sampled_from(options))

        inst = small_instance(problem, pick, data.draw(st.integers(0, 10**6)))
        if get_problem(problem).method(method).applicable(inst):
            return
        for kind in KINDS:
            cases.append(run_case(problem, method, inst, kind, pick))

    return check


def assert_clean(cases: list, at_least: int) -> None:
    bad = [c for c in cases if not c.verdict.agree or c.verdict.false_proof]
    assert len(cases) >= at_least
    assert not bad, "\n".join(f"{c.problem} {c.method} {c.kind}: {c.verdict.why}"
                              for c in bad[:10])


def test_modified_models_agree_with_the_independent_route():
    """The sample of `make test`: one instance per (problem, method), every modification
    (about 150 solves; `make soak` draws 12 per pair)."""
    assert_clean(campaign(PAIRS, 1, derandomize=True), at_least=8 * len(KINDS))


@pytest.mark.soak
def test_modified_models_agree_with_the_independent_route_campaign():
    """At least 500 modified solves (about 1,800), 0 disagreements, 0 false proofs."""
    assert_clean(campaign(PAIRS, 12, derandomize=False), at_least=500)


def test_dropping_the_snapshot_check_is_caught(monkeypatch):
    """The mutation: every model taken as build_model returned it (the snapshot check
    dropped), so the formulation's passes run whatever the user changed. On CL-TAP's
    head-cover model the sample then fails: the search ignores a new objective or sense."""
    from crowdopt.models import snapshot

    monkeypatch.setattr(snapshot, "compare",
                        lambda snap, model: snapshot.Change(snapshot.UNCHANGED, "mutated"))
    cases = campaign([("cltap", "head-cover")], 2, derandomize=True)
    with pytest.raises(AssertionError, match="head-cover"):
        assert_clean(cases, at_least=1)
    inst = crowdopt.generate("cltap", 509, t=5, a=3, trend="inc")
    assert not run_case("cltap", "head-cover", inst, "objective_expression",
                        lambda xs: xs[0]).verdict.agree


# ----------------------------------------------------------------------------- the defects
def _eta_plus_bonus(inst, var):
    """head-cover's model with its objective replaced by max eta + 0.3 var(m) (over an
    Expression), solved by `solve_model` and by the independent route."""
    m = crowdopt.build_model(inst, "head-cover")
    m.obj.deactivate()
    m.bonus = pyo.Expression(expr=m.eta + 0.3 * var(m))
    m.obj2 = pyo.Objective(expr=m.bonus, sense=pyo.maximize)
    return crowdopt.solve_model(inst, m), independent(m)


def test_a_new_objective_on_head_cover_is_solved_not_searched():
    """The head-cover search assumes max eta: with the objective over an Expression adding
    0.3 u[...] it claimed 0.98076, proven, where the model's optimum is higher. The changed
    model now gets one plain solve (details say why) and agrees with the MPS route."""
    inst = crowdopt.generate("cltap", 509, t=5, a=3, trend="inc")
    r, ans = _eta_plus_bonus(inst, lambda m: m.u[0, 0])
    assert r.status is Status.OPTIMAL
    assert model_objective(r) == pytest.approx(ans.objective, rel=1e-7)
    assert r.details["passes"].startswith("one HiGHS solve")
    assert "objective" in r.details["change"] and "head-cover" in r.details["passes_why"]
    assert not r.certificate.proven_optimal  # its objective is not the problem's


def test_a_head_just_short_of_theta_keeps_eta_in_a_new_objective():
    """One label of weight 0.0093 and theta 1e-12 above it (the covering bound's margin): the
    cover row holds 1e-12 on g beside 107 on eta, and the adapter's scaling put eta's cost
    at 1.5e-8 beside g's 0.3, so HiGHS answered 0.3 for the objective eta + 0.3 g where the
    model's optimum is 0.3093 (the net refuted it: feasible, not proven). A column whose cost
    is near the largest now keeps its scaled cost near the largest scaled one."""
    inst = make_cltap([[0.534080472059846]], 1, 2)
    r, ans = _eta_plus_bonus(inst, lambda m: m.g[0, 0])
    assert r.status is Status.OPTIMAL
    assert model_objective(r) == pytest.approx(ans.objective, rel=1e-7)
    assert ans.objective == pytest.approx(0.3 + float(inst.phi[0, 0]), rel=1e-9)


def test_a_fixed_variable_in_a_new_objective_stays_fixed():
    """olas-select milp-literal fixes y of disallowed pairs; an objective mentioning one of
    them made it a free column (Pyomo's column_order mapped it to another y): a point
    selected twice. It stays at its value now, as the MPS route keeps it."""
    inst = crowdopt.generate("olas-select", 3, points=8, labelers=3, beta=0.05)
    m = crowdopt.build_model(inst, "milp-literal")
    fixed = [k for k, v in m.y.items() if v.fixed]
    assert fixed
    m.obj.deactivate()
    m.obj2 = pyo.Objective(expr=m.obj.expr + 5 * m.y[fixed[0]], sense=pyo.maximize)
    r = crowdopt.solve_model(inst, m)
    assert r.evaluation.feasible and r.details["model"]["proven"]
    assert model_objective(r) == pytest.approx(independent(m).objective, rel=1e-9)


def _olas():
    return crowdopt.generate("olas-select", 3, points=8, labelers=3, beta=0.05)


def _compact(change):
    def make():
        inst = _olas()
        m = crowdopt.build_model(inst, "milp-compact")
        change(m)
        return inst, m
    return make


def _fix5(m):
    next(iter(m.y.values())).fix(5)


def _tag(m):
    m.crowdopt_build = 5


def _nonlinear(m):
    ys = list(m.y.values())
    m.nl = pyo.Constraint(expr=ys[0] * ys[1] <= 0.5)


def _second_objective(m):
    m.o2 = pyo.Objective(expr=m.obj.expr)


def _no_objective(m):
    m.obj.deactivate()


def _deleted_var(m):
    m.del_component(m.w)


def _deleted_policy_var(m):
    m.del_component(m.z)  # (10f)-(10h) still use it


def _deleted_decoded_var(m):
    m.del_component(m.y)


def _reshaped(m):
    m.del_component(m.y)
    m.y = pyo.Var(domain=pyo.Binary)


def _foreign_model():
    m = pyo.ConcreteModel(name="mine")
    m.x = pyo.Var(bounds=(0, 1))
    m.o = pyo.Objective(expr=m.x, sense=pyo.maximize)
    return _olas(), m


BROKEN = {
    "a variable rows still use deleted": (_compact(_deleted_var), "model.w"),
    "the decoded variable deleted": (_compact(_deleted_decoded_var), "model.y"),
    "a variable the policy rows use deleted": (_compact(_deleted_policy_var), "model.z"),
    "the decoded variable reshaped": (_compact(_reshaped), "model.y"),
    "a binary fixed to 5": (_compact(_fix5), "model.y"),
    "a nonlinear row": (_compact(_nonlinear), "model.nl"),
    "two active objectives": (_compact(_second_objective), "obj, o2"),
    "no active objective": (_compact(_no_objective), "none"),
    "the record overwritten": (_compact(_tag), "model.crowdopt_build"),
    "a model build_model did not make, without y or s": (_foreign_model,
                                                          "its decoder reads them"),
    "an empty ConcreteModel": (lambda: (_olas(), pyo.ConcreteModel()), "one active objective"),
    "a model of another instance": (
        lambda: (_olas(), crowdopt.build_model(crowdopt.generate("olas-select", 4))),
        "another instance"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_model_the_adapter_cannot_pass_is_one_input_error(name):
    make, needle = BROKEN[name]
    inst, m = make()
    with pytest.raises(crowdopt.InputError) as err:
        crowdopt.solve_model(inst, m)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_every_row_deactivated_is_solved_and_not_certified():
    """A relaxation, not a broken model: solved, its point fails the problem's evaluator."""
    inst = _olas()
    for method in inst.spec.builders():
        m = crowdopt.build_model(inst, method)
        for c in list(m.component_objects(pyo.Constraint, active=True)):
            c.deactivate()
        r = crowdopt.solve_model(inst, m)
        assert r.status is Status.OPTIMAL and not r.certificate.certified, method


def test_a_row_that_cannot_hold_with_its_variables_fixed_is_infeasible():
    inst = _olas()
    m = crowdopt.build_model(inst, "milp-compact")
    y = [v for v in m.y.values()][:1]
    y[0].fix(1)
    m.never = pyo.Constraint(expr=y[0] <= 0)
    r = crowdopt.solve_model(inst, m)
    assert r.status is Status.INFEASIBLE and "no feasible point" in r.message


# ----------------------------------------------------------------------------- the adapter
def test_the_compile_keeps_fixed_variables_fixed_and_columns_in_declaration_order():
    """Pyomo 6.10's compiler with column_order=True mapped a fixed entry that the objective
    mentions to another entry's column (free, 0..1). Compiled now: the fixed value is a
    constant (offset, row bounds), the columns are the free entries in declaration order."""
    from crowdopt.solvers.highs import compile_pyomo

    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], domain=pyo.Binary)
    m.e = pyo.Var(bounds=(0, 5))
    m.x[1].fix(1)
    m.c = pyo.Constraint(expr=m.x[1] + m.x[2] + m.x[3] <= 2)
    m.o = pyo.Objective(expr=3 * m.e + m.x[1] + 2 * m.x[2] + m.x[3], sense=pyo.maximize)
    f = compile_pyomo(m)
    assert [v.name for v in f.columns] == ["x[2]", "x[3]", "e"]
    assert list(f.c) == [2.0, 1.0, 3.0] and f.offset == 1.0
    assert list(f.row_hi) == [1.0]


def _tiny_weights(seed: int, t: int, a: int, K: int, trend: str, shrink: float):
    from crowdopt import CltapInstance

    base = crowdopt.generate("cltap", seed, t=t, a=a, K=K, trend=trend)
    return CltapInstance.from_arrays(0.5 + (base.p - 0.5) * shrink, base.t, base.b)


@pytest.mark.parametrize("shrink", [1e-4, 1e-6, 3e-8])
def test_a_plain_solve_at_tiny_weights_is_exact(shrink):
    """CL-TAP weights ~1e-9 (coin-flip accuracies) and a user's bound eta <= theta: eta then
    lives in [0, 1e-9], where HiGHS's absolute tolerances stopped a plain solve 15-25 % below
    the optimum with its bound 'meeting' it (proven). The adapter scales such a boxed column
    by its box: the plain solve, the search and the registered route all reach brute force."""
    from crowdopt.solvers.cltap import brute_force

    for seed, (t, a, K, trend) in enumerate([(2, 3, 2, "inc"), (3, 3, 3, "dec"),
                                             (3, 2, 2, "inc"), (2, 3, 1, "dec")]):
        inst = _tiny_weights(seed, t, a, K, trend, shrink)
        opt = brute_force(inst)[0]
        m = crowdopt.build_model(inst, "head-cover")
        m.eta.setub(float(m.theta))  # valid (eta <= theta holds); a change: one plain solve
        plain = crowdopt.solve_model(inst, m)
        assert plain.details["passes"].startswith("one HiGHS solve")
        for r in (plain, crowdopt.solve_model(inst, crowdopt.build_model(inst)),
                  crowdopt.solve(inst, "head-cover")):
            assert r.objective == pytest.approx(opt, rel=1e-7, abs=0), (seed, r)


def test_a_rounding_noise_coefficient_steers_no_scale():
    """The head-cover row of a head weighing theta holds 1 - phi/theta = 1.1e-16 beside eta's
    146: it pulled the row's scale to 2^40 and the free eta's to 2^-34, and a plain solve
    answered 0.3 where the model's optimum is 0.3049 (make soak found it). Entries 2^-50
    below their row's largest (rounding noise) now steer no scale."""
    inst = crowdopt.load({"problem": "cltap", "schema_version": 1, "t": 2, "b": 4,
                          "p": [[0.5155306139817771], [0.5248216233473728],
                                [0.550044384364436]]})
    m = crowdopt.build_model(inst, "head-cover")
    m.obj.deactivate()
    m.bonus = pyo.Expression(expr=m.eta + 0.3 * m.g[1, 0])
    m.obj2 = pyo.Objective(expr=m.bonus, sense=pyo.maximize)
    r = crowdopt.solve_model(inst, m)
    assert model_objective(r) == pytest.approx(independent(m).objective, rel=1e-9)
    assert model_objective(r) == pytest.approx(0.3 + inst.phi[1, 0], rel=1e-9)
