"""CL-TAP head-cover search: equal to brute force and to the compact MILP, its feasibility model
decides "every task reaches theta" exactly, a time limit keeps a valid bound."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_cltap_bound_validity import tiny_instances

from crowdopt.api import solve
from crowdopt.models.cltap import build_heads, decode_heads
from crowdopt.problems import cltap as P
from crowdopt.registry import RunOptions
from crowdopt.solvers.cltap import _head_cover_size, _milp_size, brute_force, solve_milp
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
    big = P.generate(0, t=40, a=3, trend="inc")  # past milp-compact's guard, not head-cover's
    assert _milp_size(big) is not None and _head_cover_size(big) is None
