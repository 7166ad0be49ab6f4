"""The HiGHS adapter: statuses, bounds, duals, time limits, columns, presolve re-checks."""

from __future__ import annotations

import re

import highspy
import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp

from crowdopt.solvers.highs import HighsModel, HighsOptions, Status, solve_model


def knapsack(n: int = 8, seed: int = 0) -> pyo.ConcreteModel:
    rng = np.random.default_rng(seed)
    w = [int(v) for v in rng.integers(3, 20, n)]
    v = [int(x) for x in rng.integers(1, 30, n)]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(w[i] * m.x[i] for i in range(n)) <= sum(w) // 2)
    m.obj = pyo.Objective(expr=sum(v[i] * m.x[i] for i in range(n)), sense=pyo.maximize)
    m._w, m._v = w, v
    return m


def brute_knapsack(m) -> float:
    n = len(m._w)
    best = 0
    for mask in range(1 << n):
        pick = [(mask >> i) & 1 for i in range(n)]
        if sum(p * w for p, w in zip(pick, m._w)) <= sum(m._w) // 2:
            best = max(best, sum(p * v for p, v in zip(pick, m._v)))
    return best


@pytest.mark.parametrize("seed", range(5))
def test_mip_optimal_matches_brute_force_with_zero_gap(seed):
    m = knapsack(10, seed)
    r = solve_model(m)
    assert r.status is Status.OPTIMAL and r.is_mip and r.sense == "max"
    assert r.objective == pytest.approx(brute_knapsack(m))
    assert r.bound == pytest.approx(r.objective) and r.abs_gap <= 1e-9
    chosen = [i for i, v in r.values(m.x).items() if v > 0.5]
    assert sum(m._v[i] for i in chosen) == pytest.approx(r.objective)
    assert r.max_violation <= 1e-9


def test_lp_duals_are_objective_sensitivities():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeReals)
    m.y = pyo.Var(domain=pyo.NonNegativeReals)
    m.a = pyo.Constraint(expr=m.x <= 3)
    m.b = pyo.Constraint(expr=m.x + m.y <= 5)
    m.r = pyo.Constraint(expr=pyo.inequality(-10, m.y - m.x, 10))  # range row: two HiGHS rows
    m.o = pyo.Objective(expr=m.x + 0.5 * m.y + 7, sense=pyo.maximize)
    r = solve_model(m)
    assert r.status is Status.OPTIMAL and not r.is_mip
    assert r.objective == pytest.approx(3 + 1 + 7)
    assert r.bound == pytest.approx(r.objective)
    assert r.dual(m.a) == pytest.approx(0.5) and r.dual(m.b) == pytest.approx(0.5)
    assert r.dual(m.r) == pytest.approx(0.0)
    assert r.value(m.x) == pytest.approx(3) and r.value(m.y) == pytest.approx(2)


def test_infeasible_and_unbounded_are_statuses_not_exceptions():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x >= 2)
    m.o = pyo.Objective(expr=m.x)
    r = solve_model(m)
    assert r.status is Status.INFEASIBLE and r.objective is None and r.x is None
    u = pyo.ConcreteModel()
    u.x = pyo.Var(domain=pyo.Reals)
    u.c = pyo.Constraint(expr=u.x >= 0)
    u.o = pyo.Objective(expr=u.x, sense=pyo.maximize)
    ru = solve_model(u)
    assert ru.status in (Status.UNBOUNDED, Status.ERROR)  # HiGHS may say unbounded-or-infeasible
    assert ru.status is not Status.OPTIMAL


def test_known_feasible_model_reported_infeasible_is_an_error():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x >= 2)
    m.o = pyo.Objective(expr=m.x)
    r = solve_model(m, known_feasible=True)
    assert r.status is Status.ERROR and r.retried_without_presolve
    assert "feasible-by-construction" in r.message


def test_presolve_false_infeasible_report_is_rechecked(monkeypatch):
    """Simulate the HiGHS 1.14-1.15 presolve bug: first run says infeasible, re-run without
    presolve finds the optimum; the adapter keeps the latter and says so."""
    m = knapsack(6, 1)
    model = HighsModel.from_pyomo(m)
    real_run = HighsModel._run
    calls = []

    def fake_run(self, time_limit=None):
        calls.append(self.h.getOptionValue("presolve")[1])
        if len(calls) == 1:
            return highspy.HighsModelStatus.kInfeasible
        return real_run(self, time_limit)

    monkeypatch.setattr(HighsModel, "_run", fake_run)
    with pytest.warns(RuntimeWarning, match="presolve"):
        r = model.solve()
    assert calls == ["on", "off"]
    assert r.status is Status.OPTIMAL and r.retried_without_presolve and r.presolve_disagreed
    assert r.objective == pytest.approx(brute_knapsack(m))


def test_time_limit_returns_incumbent_and_bound():
    # a hard-ish random MILP with a tiny time limit
    rng = np.random.default_rng(3)
    n, k = 60, 30
    A = rng.integers(1, 50, (k, n))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.c = pyo.Constraint(range(k), rule=lambda m, r: sum(int(A[r, j]) * m.x[j] for j in range(n)) <= int(A[r].sum() // 3))
    m.o = pyo.Objective(expr=sum(int(v) * m.x[j] for j, v in enumerate(rng.integers(1, 100, n))), sense=pyo.maximize)
    r = solve_model(m, time_limit=0.05)
    assert r.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    if r.status is Status.TIME_LIMIT:
        assert r.bound is not None
        if r.objective is not None:
            assert r.bound >= r.objective - 1e-6  # max problem: dual bound above incumbent


def test_add_columns_warm_start_matches_full_model():
    # min sum x s.t. x0 + x1 >= 1, x1 + x2 >= 1 ; then add a column covering both rows at cost 1
    A = sp.csc_array(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
    lp = HighsModel.from_arrays(c=[1.0, 3.0, 1.0], A=A, row_lo=[1, 1], row_hi=[np.inf, np.inf],
                                col_lo=[0, 0, 0], col_hi=[np.inf] * 3,
                                options=HighsOptions(lp_solver="simplex"))
    r1 = lp.solve()
    assert r1.status is Status.OPTIMAL and r1.objective == pytest.approx(2.0)
    idx = lp.add_columns([1.0], 0.0, np.inf, sp.csc_array(np.array([[1.0], [1.0]])))
    assert list(idx) == [3]
    r2 = lp.solve()
    assert r2.objective == pytest.approx(1.0) and r2.x[3] == pytest.approx(1.0)
    assert r2.row_duals is not None and r2.row_duals.sum() == pytest.approx(1.0)


def test_empty_and_constant_models():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=2.0)
    m.x.fix()
    m.o = pyo.Objective(expr=3 * m.x + 1)
    r = solve_model(m)
    assert r.status is Status.OPTIMAL and r.objective == pytest.approx(7.0)



def test_a_model_highs_refuses_is_an_error_not_an_empty_optimum():
    """A coefficient past HiGHS's 1e15 limit: passModel refuses the model and leaves it empty;
    solving that claimed 'optimal' with objective 0 and no point (then an IndexError)."""
    A = sp.csc_array(np.array([[1e20, 1.0]]))
    hm = HighsModel.from_arrays([-1.0, -1.0], A, [-np.inf], [4.0], [0, 0], [1, 1],
                                options=HighsOptions(scale=False))
    r = hm.solve()
    assert r.status is Status.ERROR and r.x is None and r.bound is None
    assert "refused" in r.message


def test_rows_spanning_300_decades_reach_highs_within_its_limits():
    """A row with entries 1 and 1e-300 was centred at 1e-150 and sent to HiGHS at 1e150
    (refused); rows are scaled so that their largest entry is at most 2^40."""
    # max x0 + x1  s.t.  x0 + 1e-300 x2 <= 0.5,  x1 - x2 <= 0,  0 <= x <= 1, x2 integer
    A = sp.csc_array(np.array([[1.0, 0.0, 1e-300], [0.0, 1.0, -1.0]]))
    hm = HighsModel.from_arrays([1.0, 1.0, 0.0], A, [-np.inf, -np.inf], [0.5, 0.0], [0, 0, 0],
                                [1, 1, 1], integrality=[0, 0, 1], sense="max")
    r = hm.solve()
    assert r.status is Status.OPTIMAL and r.objective == pytest.approx(1.5)
    assert np.abs(hm._A.data).max() <= 2.0**40


def test_rows_added_to_a_scaled_model_stay_within_highs_limits():
    """add_rows centres a new row as the first load does: a row with entries 1 and 1e-300
    reached HiGHS at 1e150 and the solve ended in an error instead of the optimum."""
    A = sp.csc_array(np.array([[1.0, 0.0, 1e-300], [0.0, 1.0, -1.0]]))
    hm = HighsModel.from_arrays([1.0, 1.0, 0.0], A, [-np.inf, -np.inf], [0.5, 0.0], [0, 0, 0],
                                [1, 1, 1], integrality=[0, 0, 1], sense="max")
    hm.add_rows([-np.inf], [0.25], sp.csr_array(np.array([[0.0, 1.0, 1e-300]])))
    r = hm.solve()
    assert r.status is Status.OPTIMAL and r.objective == pytest.approx(0.75)
    assert np.abs(hm._A.data).max() <= 2.0**40

def test_live_model_rows_costs_integrality_and_start():
    """add_rows / set_objective / set_integrality / set_start act on the live Highs object."""
    # max 5x0 + 4x1 + 3x2  s.t.  2x0 + 3x1 + x2 <= 4.5, 0 <= x <= 1
    A = sp.csc_array(np.array([[2.0, 3.0, 1.0]]))
    hm = HighsModel.from_arrays([5, 4, 3], A, [-np.inf], [4.5], [0, 0, 0], [1, 1, 1],
                                sense="max", options=HighsOptions(lp_solver="simplex"))
    lp = hm.solve()
    assert not lp.is_mip and lp.objective == pytest.approx(8 + 4 * 0.5)  # fractional x1
    hm.set_integrality([0, 1, 2], True)
    r = hm.solve()
    assert r.is_mip and r.objective == pytest.approx(8.0) and r.nodes >= 0
    # second pass: keep the value >= 8 - 1e-9 and minimize the number of items
    hm.add_rows([8 - 1e-9], [np.inf], sp.csr_array(np.array([[5.0, 4.0, 3.0]])))
    hm.set_objective([1, 1, 1], sense="min")
    hm.set_start(r.x)
    r2 = hm.solve()
    assert r2.status is Status.OPTIMAL and r2.sense == "min" and r2.objective == pytest.approx(2)
    assert r2.max_violation <= 1e-9 and hm.num_row == 2


def test_row_wise_arrays_and_capture_replay():
    """CSR arrays go to HiGHS row-wise; capture() records the calls and replays them raw."""
    from crowdopt.solvers.highs import capture

    A = sp.csr_array(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
    with capture() as cap:
        hm = HighsModel.from_arrays([1.0, 3.0, 1.0], A, [1, 1], [np.inf, np.inf], [0, 0, 0],
                                    [np.inf] * 3)
        r = hm.solve()
    assert r.objective == pytest.approx(2.0) and hm._A.format == "csr"
    assert len(cap.calls) == 1 and cap.highs_s > 0 and cap.adapter_s >= cap.highs_s
    seq = cap.replay_calls()[0]
    names = [n for n, _ in seq]
    assert names.count("passModel") == 1 and names.count("run") == 1
    assert names.count("getSolution") == 1  # one read per run, however often crowdopt read it
    assert cap.replay() > 0


@pytest.mark.parametrize("verbose", [False, True])
def test_nothing_reaches_stdout_and_the_log_goes_to_stderr(capfd, verbose):
    """highspy 1.16 prints a banner on fd 1 inside Highs(); HiGHS logs are C-level writes to
    fd 1. The adapter sends both away from stdout: the log to stderr when asked for."""
    print("before", flush=True)
    r = solve_model(knapsack(8, 1), HighsOptions(verbose=verbose))
    print("after", flush=True)
    out, err = capfd.readouterr()
    assert r.status is Status.OPTIMAL
    assert out == "before\nafter\n"  # nothing in between, order kept
    assert ("MIP" in err) == verbose  # the solver log, only when asked for


def test_version_comes_from_the_highs_object_that_ran():
    r = solve_model(knapsack(6, 2))
    assert re.fullmatch(r"\d+\.\d+\.\d+", r.highs_version)
    assert r.summary()["highs_version"] == r.highs_version


def test_a_model_solved_again_gets_its_whole_time_limit_each_run():
    """HiGHS compares its time_limit with the object's run time over all its runs: a model
    whose past runs took longer than the limit given to the next one stopped at once with
    'time limit' (the node LPs of config-branch at t = 1000, a = 100 did); each run now has
    the limit it is given (a small LP solved a few hundred times, then once more by the
    interior point method under a limit below the runs so far)."""
    rng = np.random.default_rng(0)
    m = HighsModel.from_arrays(rng.random(40), rng.random((30, 40)), np.full(30, -np.inf),
                               np.ones(30), np.zeros(40), np.ones(40), None, "max",
                               options=HighsOptions(time_limit=None))
    i = 0
    while m.h.getRunTime() < 0.1:
        m.set_col_bounds(np.array([i % 40]), np.zeros(1), np.array([0.5 + 0.5 * (i % 2)]))
        assert str(m.solve().status) == "optimal"
        i += 1
    m.options = m.options.replace(time_limit=0.05, lp_solver="ipm")
    m.set_col_bounds(np.arange(20), np.zeros(20), np.full(20, 0.3))
    assert str(m.solve().status) == "optimal"


def _typical_one_row_at_a_time(m: HighsModel) -> np.ndarray:
    """The reference of `HighsModel._typical`: each unboxed column with a cost takes the bound
    each of its rows implies when every other column of the row is boxed, row by row."""
    lo, hi = m._col_lo, m._col_hi
    boxed = np.isfinite(lo) & np.isfinite(hi)
    typ = np.where(boxed, np.maximum(np.abs(np.where(boxed, lo, 0.0)),
                                     np.abs(np.where(boxed, hi, 0.0))), 1.0)
    A = sp.csr_array(m._A).toarray()
    for j in np.flatnonzero(~boxed & (m._cost != 0)):
        up, down = hi[j], lo[j]
        for r in range(A.shape[0]):
            a = A[r, j]
            others = [k for k in np.flatnonzero(A[r]) if k != j]
            if a == 0 or not all(boxed[k] for k in others):
                continue
            least = sum(min(A[r, k] * lo[k], A[r, k] * hi[k]) for k in others)
            most = sum(max(A[r, k] * lo[k], A[r, k] * hi[k]) for k in others)
            over = (m._row_hi[r] - least) / a if np.isfinite(m._row_hi[r]) else np.inf * a
            under = (m._row_lo[r] - most) / a if np.isfinite(m._row_lo[r]) else -np.inf * a
            top, bottom = (over, under) if a > 0 else (under, over)
            up, down = min(up, top), max(down, bottom)
        reach = [abs(b) for b in (up, down) if np.isfinite(b)]
        if reach and max(reach) > 0:
            typ[j] = max(reach)
    return typ * m._cs


def test_typical_magnitudes_equal_the_row_by_row_reading():
    """The typical magnitude of each column (the objective's scale and the certificate's
    floor rest on it), computed for all rows at once, equals the row-by-row reading on random
    models with unboxed columns, one-sided and free rows, zero costs and negative entries."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        m_rows, n = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        A = sp.random_array((m_rows, n), density=0.6, rng=rng, format="csc")
        A.data = rng.choice([-2.0, -1.0, 0.5, 1.0, 3.0], size=A.data.size)
        lo = np.where(rng.random(n) < 0.3, -np.inf, rng.choice([-1.0, 0.0], size=n))
        hi = np.where(rng.random(n) < 0.3, np.inf, rng.choice([1.0, 2.0, 5.0], size=n))
        rlo = np.where(rng.random(m_rows) < 0.5, -np.inf, rng.choice([-3.0, 0.0, 1.0], m_rows))
        rhi = np.maximum(np.where(rng.random(m_rows) < 0.5, np.inf,
                                  rng.choice([0.0, 2.0, 4.0], m_rows)), rlo)
        model = HighsModel(c=rng.choice([0.0, 1.0, -1.0, 2.0], size=n), A=A, row_lo=rlo,
                           row_hi=rhi, col_lo=lo, col_hi=hi,
                           integrality=np.zeros(n, dtype=np.uint8))
        np.testing.assert_allclose(model._typical(), _typical_one_row_at_a_time(model),
                                   rtol=1e-12)
