"""CL-TAP exact models: worked examples, brute force == compact MILP == extended MILP >= CBP
(digest 003 P6, P15, P17-P20)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from test_cltap_bounds import _random

from crowdopt.models.cltap import build_compact, build_extended, feasible_workplans
from crowdopt.problems import cltap as P
from crowdopt.registry import RunOptions
from crowdopt.solvers.cltap import brute_force, solve_milp
from crowdopt.solvers.cltap_cbp import cbp
from crowdopt.solvers.highs import HighsOptions, Status, solve_model


def _opt_extended(inst, tight=True):
    cols = feasible_workplans(inst, tight=tight)
    m = build_extended(inst, cols, relax=False)
    res = solve_model(m, HighsOptions(known_feasible=True))
    assert res.status is Status.OPTIMAL
    return res.objective


def _cbp_value(inst):
    return P.evaluate(inst, cbp(inst)).objective


@pytest.mark.parametrize("make,value,lp,n_h", [
    (P.example, 0.569373, 1.072798, 14), (P.example2, 1.630778, 1.899188, 105)])
def test_worked_examples(make, value, lp, n_h):  # P17, digest 5.4
    inst = make()
    cbp_value = _cbp_value(inst)
    assert cbp_value == pytest.approx(value, abs=1e-6)
    assert round(cbp_value, 4) == {0.569373: 0.5694, 1.630778: 1.6308}[value]  # the paper's
    out = solve_milp(inst)
    assert out.status == "optimal"
    assert P.evaluate(inst, out.solution).objective == pytest.approx(value, abs=1e-6)
    assert out.bound == pytest.approx(value, abs=1e-6)
    assert brute_force(inst)[0] == pytest.approx(cbp_value, abs=1e-9)  # CBP is optimal here
    assert _opt_extended(inst) == pytest.approx(value, abs=1e-6)
    assert len(feasible_workplans(inst)) == n_h
    relax = solve_model(build_compact(inst, relax=True))
    assert relax.objective == pytest.approx(lp, abs=1e-6)


def test_worked_example_plans():  # the CBP workplans of digest 3.1
    z1 = cbp(P.example()).task_of
    assert z1.tolist() == [[2, 1, 0], [1, 2, -1]]
    z2 = cbp(P.example2()).task_of
    assert z2.tolist() == [[0, -1, -1], [2, -1, -1], [2, -1, -1], [1, 2, -1]]
    assert P.evaluate(P.example(), cbp(P.example(), avg_on="phi")).objective == \
        pytest.approx(0.569373, abs=1e-6)


def _tiny(rng):
    return _random(rng, t_min=1, t_max=4, a_max=3, ties=(0.5, 0.6, 0.75, 0.9))


def test_oracle_chain_on_tiny_instances():  # P6 and CBP <= OPT
    rng = np.random.default_rng(11)
    for _ in range(25):
        inst = _tiny(rng)
        opt = brute_force(inst)[0]
        out = solve_milp(inst)
        assert out.status == "optimal"
        assert P.evaluate(inst, out.solution).objective == pytest.approx(opt, abs=1e-7)
        assert _opt_extended(inst) == pytest.approx(opt, abs=1e-7)
        assert _cbp_value(inst) <= opt + 1e-9


def test_decreasing_prefix_rule_can_be_dropped():  # P15
    rng = np.random.default_rng(12)
    for _ in range(3):
        p = -np.sort(-rng.uniform(0.5, 0.95, (3, 4)), axis=1)
        inst = P.make_instance(p, 4, int(rng.integers(4, 10)))
        full = solve_model(build_compact(inst), HighsOptions(known_feasible=True)).objective
        free = solve_model(build_compact(inst, drop_prefix=True),
                           HighsOptions(known_feasible=True)).objective
        assert full == pytest.approx(free, abs=1e-7)


def test_budget_below_tasks_gives_zero_and_budget_is_monotone():  # P18
    rng = np.random.default_rng(13)
    p = rng.uniform(0.6, 0.95, (3, 4))
    values = [brute_force(P.make_instance(p, 4, b))[0] for b in range(0, 10)]
    assert values[:4] == [0.0] * 4
    assert all(x <= y + 1e-12 for x, y in zip(values, values[1:]))


def test_symmetry_breaking_rows_keep_the_optimum():
    inst = P.generate(3, t=4, a=3, trend="inc")
    plain = solve_milp(inst)
    sym = solve_milp(inst, symmetry_break=True)
    assert plain.bound == pytest.approx(sym.bound, abs=1e-7)


def _inverse_weight(w):
    return brentq(lambda p: float(P.weight(p)) - w, 0.5, 1 - 1e-15)


def test_cbp_counterexample():  # P20: machine covering, weights 3,3,2,2,2 on 2 tasks
    inst = P.make_instance([[_inverse_weight(w)] for w in (3, 3, 2, 2, 2)], 2, 5)
    assert _cbp_value(inst) == pytest.approx(5.0)
    assert brute_force(inst)[0] == pytest.approx(6.0)
    assert solve_milp(inst, RunOptions()).bound == pytest.approx(6.0)


def test_cheap_upper_bound_is_remembered_by_the_data_not_the_object():
    """certify's bound methods share the cheap bound of one instance; a copy with another
    budget (same weights) is another instance, and gets its own bound."""
    from crowdopt.solvers import cltap_exact as E

    inst = P.generate(3, t=12, a=3, trend="inc")
    first = E.cheap_upper_bound(inst)
    same = P.make_instance(inst.p.copy(), inst.t, inst.b)
    assert E.cheap_upper_bound(same) == first
    other = P.make_instance(inst.p.copy(), inst.t, inst.t - 1)
    assert E.cheap_upper_bound(other) != first  # b < t: the zero optimum, not inst's bound
    assert E.cheap_upper_bound(other)[0] == 0.0 < first[0]
