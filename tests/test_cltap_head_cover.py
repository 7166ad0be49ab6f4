"""CL-TAP head-cover search: equal to brute force and to the compact MILP, its feasibility model
decides "every task reaches theta" exactly, a time limit keeps a valid bound, every assignment
is a point of the model, and `build_model` gives the model the search runs on."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_cltap_bound_validity import tiny_instances

from crowdopt.api import solve
from crowdopt.models.cltap import build_heads, decode_heads
from crowdopt.problems import cltap as P
from crowdopt.registry import RunOptions
from crowdopt.solvers.cltap import brute_force, solve_milp
from crowdopt.solvers.cltap_exact import solve_head_cover
from crowdopt.solvers.highs import HighsOptions, Status, solve_model


def _feasible(inst, theta):
    m = build_heads(inst, theta, need=theta)
    m.eta.fix(theta)
    res = solve_model(m, HighsOptions(confirm_infeasible=False))
    assert res.status in (Status.OPTIMAL, Status.INFEASIBLE)
    if res.status is Status.INFEASIBLE:
        return None
    return P.evaluate(inst, decode_heads(inst, m, res))


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=tiny_instances())
def test_head_cover_equals_brute_force(inst):
    opt = brute_force(inst)[0]
    out = solve_head_cover(inst)
    assert out.status.value == "optimal"
    ev = P.evaluate(inst, out.solution)
    assert ev.feasible
    assert ev.objective == pytest.approx(opt, abs=1e-7)
    assert opt - 1e-9 <= out.bound <= opt + 1e-7 * (1 + opt)
    if opt > 0:  # the model decides OPT >= theta exactly, on both sides of OPT
        at = _feasible(inst, opt * (1 - 1e-9))
        assert at is not None and at.feasible and at.objective >= opt - 1e-7
        assert _feasible(inst, opt * (1 + 1e-6) + 1e-9) is None


@pytest.mark.slow
@pytest.mark.parametrize("trend", ["dec", "inc", "nonmono"])
def test_head_cover_equals_compact_milp(trend):
    for seed in range(2):
        inst = P.generate(seed, t=8, a=3, trend=trend)
        ref = solve_milp(inst, RunOptions(time_limit=60))
        assert ref.status.value == "optimal"
        opt = P.evaluate(inst, ref.solution).objective
        out = solve_head_cover(inst)
        assert out.status.value == "optimal"
        assert P.evaluate(inst, out.solution).objective == pytest.approx(opt, abs=1e-7)
        assert out.bound >= opt - 1e-9


@pytest.mark.slow
def test_head_cover_on_tiny_instances():
    rng = np.random.default_rng(3)
    for _ in range(4):
        inst = P.generate(int(rng.integers(1000)), t=3, a=3, trend=str(rng.choice(["inc", "nonmono"])))
        out = solve_head_cover(inst)
        assert out.status.value == "optimal"
        assert P.evaluate(inst, out.solution).objective == pytest.approx(brute_force(inst)[0],
                                                                         abs=1e-7)


@pytest.mark.slow
def test_flat_curves_and_equal_weight_runs():
    """Flat curves: runs of equal weights get the ordering rows; still exact."""
    rng = np.random.default_rng(5)
    for _ in range(4):
        a, t = 3, 4
        p = np.repeat(rng.choice([0.5, 0.7, 0.8, 0.9], size=(a, 1)), t, axis=1)
        inst = P.make_instance(p, t, int(rng.integers(t, 3 * t)))
        opt = brute_force(inst)[0]
        out = solve_head_cover(inst)
        assert P.evaluate(inst, out.solution).objective == pytest.approx(opt, abs=1e-7)


@pytest.mark.slow
def test_max_min_model():
    """Without a fixed eta the model is the max-min problem itself (theta = a valid bound)."""
    inst = P.generate(2, t=4, a=3, trend="inc")
    opt = brute_force(inst)[0]
    res = solve_model(build_heads(inst), HighsOptions(known_feasible=True))
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(opt, abs=1e-7)


def test_time_limit_returns_incumbent_and_valid_bound():
    inst = P.generate(1, t=4, a=3, trend="nonmono")
    opt = brute_force(inst)[0]
    out = solve_head_cover(inst, RunOptions(time_limit=0.05))
    assert out.status.value in ("optimal", "time_limit")
    ev = P.evaluate(inst, out.solution)
    assert ev.feasible and ev.objective <= opt + 1e-9
    assert out.bound >= opt - 1e-9


def test_certified_through_the_registry():
    inst = P.generate(0, t=6, a=3, trend="inc")
    res = solve(inst, "head-cover", time_limit=30.0)
    assert res.certificate.certified and res.certificate.proven_optimal
    big = P.generate(0, t=55, a=3, trend="inc")  # past milp-compact's guard, not head-cover's
    assert P.SPEC.method("milp-compact").refuses(big) is not None
    assert P.SPEC.method("head-cover").refuses(big) is None


def _random_assignment(inst, rng):
    """A random feasible assignment: prefix lengths within the budget, distinct tasks."""
    z = P.empty_solution(inst).task_of
    left = inst.b
    for j in rng.permutation(inst.a):
        n = int(rng.integers(0, min(inst.K, left) + 1))
        left -= n
        z[j, :n] = rng.permutation(inst.t)[:n]
    return P.CltapSolution(z)


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=tiny_instances(), seed=st.integers(0, 1000))
def test_every_assignment_is_a_point_of_the_model(inst, seed):
    """The search's incumbents are points of the loaded model: the encoding of any feasible
    assignment (equal-weight runs reordered) satisfies every row, bound and integrality, with
    eta = its min c' (0 when a task has no positive label)."""
    from crowdopt.models.cltap import heads_extras
    from crowdopt.models.cltap_heads import encode_heads
    from crowdopt.solvers.highs import HighsModel, compile_pyomo

    m = build_heads(inst)
    hm = HighsModel.from_compiled(compile_pyomo(m))
    cols = heads_extras(inst, m, hm._columns)
    rng = np.random.default_rng(seed)
    for sol in (_random_assignment(inst, rng), brute_force(inst)[1]):
        value = P.evaluate(inst, sol).objective
        x = encode_heads(inst, cols, sol, value, hm.num_col)
        assert x is not None
        assert hm._violation(x / hm._cs) <= 1e-9
        assert x[cols["eta"]] == pytest.approx(value) or x[cols["e"]] == 1.0


@pytest.mark.slow
def test_build_model_is_what_solve_runs(monkeypatch):
    """build_model(inst, "head-cover") is the max-min head-cover model; solve_model runs the
    same search on it and certifies the same optimum."""
    import crowdopt
    from crowdopt.solvers import highs

    inst = P.generate(3, t=6, a=3, trend="inc")
    m = crowdopt.build_model(inst, "head-cover")
    assert m.name == "cltap_heads"
    a = solve(inst, "head-cover")
    runs = []
    real = highs.HighsModel.solve
    monkeypatch.setattr(highs.HighsModel, "solve", lambda self: runs.append(1) or real(self))
    b = crowdopt.solve_model(inst, m)
    assert a.certificate.proven_optimal and b.certificate.certified
    assert b.objective == pytest.approx(a.objective, abs=1e-12)
    # settled by the start (plan and bound), as `solve` is: no HiGHS run on the loaded model
    assert b.details["steps"] == [] and runs == []


@pytest.mark.slow
def test_extended_model_that_cuts_off_the_start():
    """A user's row (annotator 0 gives no label) cuts off the best-of start: the model is
    solved as it stands and its optimum is that of the instance without annotator 0."""
    import crowdopt

    inst = P.generate(1, t=3, a=3, trend="inc")
    m = crowdopt.build_model(inst, "head-cover")
    m.no_first = pyo.Constraint(expr=m.u[0, 0] == 0)
    res = crowdopt.solve_model(inst, m, time_limit=30)
    p = inst.p.copy()
    p[0] = 0.5
    without = P.make_instance(p, inst.t, inst.b)
    assert res.certificate.certified
    assert res.objective == pytest.approx(brute_force(without)[0], abs=1e-9)
    assert res.objective <= brute_force(inst)[0] + 1e-12


@pytest.mark.slow
def test_optimum_far_below_one_label_per_annotator():
    """OPT = 0.0046 (decreasing curves): the model is truncated at the cheap bound, so the last
    test (1e-8 above the incumbent) is decided beyond HiGHS's tolerance and proves it."""
    inst = P.generate(0, t=5, a=3, trend="dec")
    out = solve_head_cover(inst, RunOptions(time_limit=30.0))
    assert out.status.value == "optimal"
    value = P.evaluate(inst, out.solution).objective
    assert 0 < value <= out.bound <= value * (1 + 1e-7)


def test_head_cover_time_guard_is_fitted():
    """A learning crowd is predicted from its size (bench_guards.py): refused past the fitted
    frontier unless forced; where CBP meets the cheap bound the start proves it at any size (no
    time guard, only the memory guard); other crowds are refused past 10,000 links."""
    m = P.SPEC.method("head-cover")
    assert "predicted" in m.refuses(P.generate(0, t=200, a=5, trend="inc"))
    assert m.refuses(P.generate(0, t=200, a=5, trend="inc"), force=True) is None
    flat = P.generate(0, t=320, a=3, trend="dec", tau=100.0, horizon=1e6)
    assert m.refuses(flat) is None
    assert "links" in m.refuses(P.generate(1, t=45, a=7))
    assert "memory" in m.refuses(P.generate(0, t=1000, a=100, trend="dec"), force=True)
