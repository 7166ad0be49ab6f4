"""CL-TAP bounds: closed form == compact LP == column generation (b >= t), pricing DP == pricing
MILP, Lagrangian bounds, RMP duals (digest 003 P7-P14)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from crowdopt.models.cltap import build_compact, build_extended, feasible_workplans
from crowdopt.problems import cltap as P
from crowdopt.solvers import cltap_colgen as CG
from crowdopt.solvers.cltap import brute_force
from crowdopt.solvers.highs import HighsOptions, solve_model


def _lp(inst):
    return solve_model(build_compact(inst, relax=True)).objective


def _random(rng, t_max=5, a_max=4, b_lo_t=False, t_min=2, ties=(0.5, 0.6, 0.8, 0.9)):
    """A random tiny instance: ties and the p = 1/2 boundary, decreasing, increasing, any p."""
    t = int(rng.integers(t_min, t_max + 1))
    a = int(rng.integers(1, a_max + 1))
    K = int(rng.integers(1, t + 1))
    kind = rng.integers(4)
    if kind == 0:
        p = rng.choice(list(ties), size=(a, K))
    elif kind == 1:
        p = -np.sort(-rng.uniform(0.5, 0.95, (a, K)), axis=1)
    elif kind == 2:
        p = np.sort(rng.uniform(0.5, 0.95, (a, K)), axis=1)
    else:
        p = rng.uniform(0.5, 0.95, (a, K))
    lo = t if b_lo_t else 0
    b = int(rng.integers(lo, max(lo, a * K) + 2))
    return P.make_instance(p, t, b)


def test_closed_form_equals_compact_lp():  # P7
    rng = np.random.default_rng(21)
    for _ in range(20):
        inst = _random(rng, t_max=6)
        assert CG.closed_form_bound(inst) == pytest.approx(_lp(inst), abs=1e-7)
    for seed, trend in ((0, "dec"), (1, "inc"), (2, "nonmono")):
        inst = P.generate(seed, t=30, a=4, trend=trend)
        assert CG.closed_form_bound(inst) == pytest.approx(_lp(inst), abs=1e-7)


def test_closed_form_nonincreasing_is_top_b_over_t():
    inst = P.generate(5, t=40, a=6, trend="dec")
    top = np.sort(inst.phi.ravel())[::-1][: inst.b].sum() / inst.t
    assert CG.closed_form_bound(inst) == pytest.approx(top, abs=1e-12)


@pytest.mark.parametrize("aggregated,engine", [(False, "highspy"), (True, "highspy"),
                                               (False, "pyomo")])
def test_column_generation_equals_lp_when_budget_covers_tasks(aggregated, engine):  # P10
    rng = np.random.default_rng(22 + aggregated)
    for _ in range(6 if engine == "highspy" else 3):
        inst = _random(rng, b_lo_t=True)
        res = CG.column_generation(inst, aggregated=aggregated, engine=engine)
        assert res.converged
        assert res.bound == pytest.approx(CG.closed_form_bound(inst), abs=1e-6)
        assert res.bound == pytest.approx(_lp(inst), abs=1e-6)
        assert res.bound >= brute_force(inst)[0] - 1e-7 if inst.t <= 4 and inst.a <= 3 else True


def test_column_generation_equals_full_extended_lp():  # P11 (any b, incl. b < t)
    rng = np.random.default_rng(23)
    for _ in range(8):
        inst = _random(rng, t_max=4, a_max=3)
        cols = feasible_workplans(inst)
        full = solve_model(build_extended(inst, cols, relax=True)).objective if cols else 0.0
        for agg, seeded, pool in ((False, True, 1), (True, True, 1), (False, False, 1),
                                  (True, False, 5)):
            res = CG.column_generation(inst, aggregated=agg, seed_closed_form=seeded, pool=pool,
                                       smoothing=0.5 if pool > 1 else 0.0)
            assert res.converged
            assert res.bound == pytest.approx(full, abs=1e-6)


def test_loose_extended_lp_equals_compact_lp():  # P9 (Dantzig-Wolfe)
    rng = np.random.default_rng(24)
    for _ in range(6):
        inst = _random(rng, t_max=4, a_max=3)
        cols = feasible_workplans(inst, tight=False)
        loose = solve_model(build_extended(inst, cols, relax=True)).objective if cols else 0.0
        assert loose == pytest.approx(_lp(inst), abs=1e-6)


def test_generator_instances_colgen_matches_closed_form():
    for seed, trend in ((0, "inc"), (1, "dec"), (2, "nonmono")):
        inst = P.generate(seed, t=20, a=4, trend=trend)
        res = CG.column_generation(inst, aggregated=True, smoothing=0.5)
        assert res.converged and res.bound == pytest.approx(CG.closed_form_bound(inst), abs=1e-6)


def test_lagrangian_bound_valid_every_round():  # P13
    inst = P.generate(4, t=20, a=4, trend="inc")
    res = CG.column_generation(inst, aggregated=False)
    final = CG.closed_form_bound(inst)
    assert res.converged
    for r in res.rounds:
        assert r.lagrangian >= final - 1e-7 and r.rmp <= final + 1e-7
    early = CG.column_generation(inst, aggregated=False, max_rounds=1)
    assert not early.converged and early.bound >= final - 1e-7


def test_master_duals():  # P14: sum alpha = 1, strong duality, all duals >= 0
    inst = P.generate(6, t=6, a=3, trend="inc")
    master = CG._Master(inst, False, "highspy", HighsOptions(lp_solver="simplex"))
    cols = feasible_workplans(inst)[:40]
    master.add([(i, w) for w in cols for i in range(inst.t)])
    z, y = master.solve()
    alpha, pi, delta = master.prices(y)
    assert alpha.sum() == pytest.approx(1.0, abs=1e-9)
    assert np.all(y >= 0)
    assert master.fixed_part(y) + delta.sum() == pytest.approx(z, abs=1e-9)


def test_pricing_dp_equals_milp():  # P12, including negative pi
    rng = np.random.default_rng(25)
    for _ in range(12):
        a, K = int(rng.integers(1, 5)), int(rng.integers(1, 6))
        r = rng.normal(0.2, 1.0, (a, K))
        if rng.random() < 0.3:
            r = np.round(r, 1)  # ties
        b = int(rng.integers(0, a * K + 3))
        for tight in (True, False):
            v_dp, w_dp = CG.price_dp(r, b, tight)
            v_milp, _ = CG.price_milp(r, b, tight)
            assert v_dp == pytest.approx(v_milp, abs=1e-7)
            assert v_dp == pytest.approx(sum(r[j, k] for j, k in w_dp), abs=1e-9)
            assert len({j for j, _ in w_dp}) == len(w_dp)
            assert sum((k + 1) if tight else 1 for _, k in w_dp) <= b


def test_average_integer_bound_between_opt_and_lp():  # P8
    rng = np.random.default_rng(26)
    for _ in range(10):
        inst = _random(rng, t_max=4, a_max=3)
        avg = CG.average_integer_bound(inst)
        assert brute_force(inst)[0] - 1e-9 <= avg <= CG.closed_form_bound(inst) + 1e-9


def test_mckp_pool_gives_distinct_runners_up():
    rng = np.random.default_rng(27)
    for _ in range(10):
        r = rng.normal(0.3, 1.0, (4, 5))
        b = int(rng.integers(1, 15))
        pool = CG.mckp_pool(r, b, 6)
        assert pool[0][0] == pytest.approx(CG.price_dp(r, b)[0])
        values = [v for v, _ in pool]
        assert values == sorted(values, reverse=True)
        assert len({w for _, w in pool}) == len(pool)
        for v, w in pool:
            assert v == pytest.approx(sum(r[j, k] for j, k in w))
            assert sum(k + 1 for _, k in w) <= b


def test_closed_form_columns_reach_the_lp_in_the_master():
    inst = P.generate(8, t=40, a=5, trend="inc")
    cols = CG.closed_form_columns(inst)
    assert all(sum(k + 1 for _, k in w) <= inst.b for w in cols)
    res = CG.column_generation(inst, aggregated=True, initial=[], max_rounds=1)
    assert res.rmp == pytest.approx(CG.closed_form_bound(inst), abs=1e-7)
    for n in CG._closed_form(inst)[1:]:
        assert P.evaluate(inst, CG.spread_assignment(inst, n)).feasible or n.sum() > inst.b


def test_column_generation_stops_at_its_time_limit_with_a_valid_bound():
    """The master LP gets only the time that is left; a stopped run keeps its best valid bound."""
    from crowdopt.problems.cltap import evaluate, generate
    from crowdopt.solvers.cltap_cbp import cbp

    inst = generate(5, t=200, a=20, trend="inc", budget_factor=2)
    res = CG.column_generation(inst, aggregated=True, time_limit=0.3, smoothing=0.5, pool=5)
    assert res.status in ("time_limit", "optimal", "stalled")
    lb = evaluate(inst, cbp(inst)).objective
    assert lb <= res.bound + 1e-9


def test_mckp_table_equals_enumeration():
    """The knapsack DP's value and its choice at every capacity against enumeration over one
    item (or none) per group, on ties, zeros, negative profits and capacities past the heaviest
    items; the choice is the lightest of the best items, as the item-by-item DP made it."""
    rng = np.random.default_rng(29)
    for _ in range(400):
        a, K = int(rng.integers(1, 4)), int(rng.integers(1, 6))
        r = rng.choice([rng.normal(0.2, 1.0, (a, K)), np.round(rng.normal(0.3, 1.0, (a, K)), 0),
                        np.zeros((a, K))])
        cap = int(rng.integers(0, a * K + 3))
        F, arg, c = CG._mckp_table(r, cap)
        for cc in range(c + 1):
            best = 0.0
            for pick in itertools.product(*[[None] + list(range(K)) for _ in range(a)]):
                w = sum(k + 1 for k in pick if k is not None)
                if w <= cc:
                    best = max(best, sum(r[j, k] for j, k in enumerate(pick) if k is not None))
            assert F[cc] == pytest.approx(best, abs=1e-12)
        items = CG._backtrack(arg, c)
        assert sum(r[j, k] for j, k in items) == pytest.approx(F[c], abs=1e-12)
        assert sum(k + 1 for _, k in items) <= c
